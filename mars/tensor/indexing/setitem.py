"""``t[index] = value``: a new tensor in which the indexed chunks are rewritten.

The tensor the user holds is pointed at the new data; expressions built from
the old data are unaffected. Chunks the index does not touch are reused as
they are (same keys, no copy). Supported: basic indexes (with a scalar, numpy
or mars value broadcast to the indexed shape), integer arrays from numpy on
consecutive axes (scalar or numpy values), and a boolean mask over leading
axes with a scalar value.
"""

from __future__ import annotations

import itertools
from typing import Any, Generator

import numpy as np

from ...core.operator import Tiled
from ..arithmetic.core import where_
from ..base.reshape import known_sizes, rechunked
from ..base.shape import broadcast_to, reshape
from ..core import Tensor, TensorData, TensorOperator, is_tensor, tensor_data
from ..datasource.core import astensor
from .basic import _plans
from .fancy_set import fancy_set
from .getitem import _expand_bools, getitem
from .index import BoolArray, IntArray, parse_index


class TensorSetChunk(TensorOperator):
    """One touched chunk: a copy with ``x[index] = value`` (value a parameter or the 2nd input)."""

    params = ("index", "value")

    def execute(self, x: np.ndarray, *value: np.ndarray) -> np.ndarray:
        out = x.copy()
        out[self.index] = value[0] if value else self.value
        return out


class TensorSetItem(TensorOperator):
    """Basic-index assignment; ``value`` is a numpy value, or None when it is the 2nd input."""

    params = ("index", "value")

    @classmethod
    def tile(cls, op: TensorSetItem) -> Generator[Any, Any, Tiled]:
        x = op.inputs[0]
        yield from known_sizes([x])
        plans = _plans(op.index, x)
        value = op.value
        if len(op.inputs) > 1:  # a tensor value, cut like the touched region
            kept = [plan for plan in plans if plan[0][2] is not None]  # ints drop their axis
            value = yield from rechunked(op.inputs[1], tuple(tuple(p[2] for p in plan) for plan in kept))
        touched = {}
        for picks_index in itertools.product(*(range(len(p)) for p in plans)):
            picks = [plan[i] for plan, i in zip(plans, picks_index)]
            if any(p[2] == 0 for p in picks):
                continue
            src = tuple(p[0] for p in picks)
            local = tuple(p[1] for p in picks)
            touched[src] = (local, picks_index)
        chunks = [_set_chunk(c, touched.get(c.index), value, plans) for c in x.chunks]
        return Tiled(chunks, x.nsplits)


def _set_chunk(chunk: Any, hit: Any, value: Any, plans: list) -> Any:
    if hit is None:
        return chunk
    local, picks_index = hit
    meta = dict(index=chunk.index, shape=chunk.shape, dtype=chunk.dtype, order=chunk.order)
    if isinstance(value, TensorData):
        at = tuple(i for plan, i in zip(plans, picks_index) if plan[0][2] is not None)
        return TensorSetChunk(index=local, value=None).new_chunk([chunk, value.chunk_at(at)], **meta)
    if isinstance(value, np.ndarray) and value.ndim:
        sizes = [[1 if p[2] is None else p[2] for p in plan] for plan in plans]  # an int keeps a 1-dim here
        region = tuple(slice(sum(s[:i]), sum(s[:i + 1])) for s, i in zip(sizes, picks_index))
        part = value[region].reshape(tuple(p[2] for p, i in zip(plans, picks_index) for p in [p[i]] if p[2] is not None))
        return TensorSetChunk(index=local, value=part).new_chunk([chunk], **meta)
    return TensorSetChunk(index=local, value=value).new_chunk([chunk], **meta)


def _cast_value(value: Any, dtype: np.dtype) -> Any:
    """The value as numpy would store it (errors for values numpy refuses)."""
    if is_tensor(value):
        return tensor_data(value)
    array = np.asarray(value)
    np.empty((), dtype=dtype)[...] = array.reshape(-1)[0] if array.size else 0  # numpy's casting errors
    return array.astype(dtype) if array.ndim else array.astype(dtype)[()]


def _basic_set(t: Tensor, entries: list, value: Any) -> TensorData:
    data = tensor_data(t)
    plain = [e for e in entries if e is not None]  # new axes add nothing to assign into
    target_shape = tuple(getitem(t, tuple(plain)).shape)
    value = _cast_value(value, data.dtype)
    inputs = [data]
    if isinstance(value, TensorData):
        if value.dtype != data.dtype:
            value = tensor_data(astensor(Tensor(value)).astype(data.dtype))
        squeezed = tuple(s for s in target_shape)
        value = tensor_data(broadcast_to(Tensor(value), squeezed)) if tuple(value.shape) != squeezed else value
        inputs.append(value)
        value = None
    elif np.ndim(value):
        try:
            value = np.broadcast_to(value, target_shape)
        except ValueError:
            raise ValueError(f"could not broadcast input array from shape {np.shape(value)} "
                             f"into shape {target_shape}") from None
        value = _with_picked_dims(value, plain, target_shape)
    op = TensorSetItem(index=tuple(plain), value=value)
    return op.new_tileable(inputs, shape=data.shape, dtype=data.dtype, order=data.order)


def _with_picked_dims(value: np.ndarray, plain: list, target_shape: tuple) -> np.ndarray:
    """A value over the target shape, with size-1 dims put back where ints index (to slice per chunk)."""
    shape, it = [], iter(target_shape)
    for e in plain:
        shape.append(1 if isinstance(e, int) else next(it))
    return np.ascontiguousarray(value).reshape(shape)


def setitem(t: Tensor, index: Any, value: Any) -> None:
    """``t[index] = value``: rebinds ``t`` to a new tensor with the assignment applied."""
    data = tensor_data(t)
    entries = parse_index(data.shape, index)
    bools = [i for i, e in enumerate(entries) if isinstance(e, BoolArray)]
    if bools == [0] and np.ndim(value) == 0 and not is_tensor(value):
        mask = entries[0].value
        m = tensor_data(astensor(mask)) if isinstance(mask, np.ndarray) else mask
        full = reshape(Tensor(m), tuple(m.shape) + (1,) * (data.ndim - m.ndim))
        t.data = where_(full, _cast_value(value, data.dtype), Tensor(data)).astype(data.dtype, copy=False).data
        return
    if bools:
        entries = _expand_bools(entries)
    if any(isinstance(e, IntArray) for e in entries):
        t.data = fancy_set(t, entries, _cast_value(value, data.dtype))
        return
    t.data = _basic_set(t, entries, value)


def _install() -> None:
    Tensor.__setitem__ = setitem  # type: ignore[method-assign]


_install()

__all__: list[str] = []
