"""``t[index]`` and the index functions built on it (take, nonzero, argwhere, ...).

The index is split as numpy defines it: basic entries (ints, slices, None)
are applied first, then the advanced ones (integer arrays on consecutive
axes, or one boolean mask over leading axes), then numpy's rule for
advanced indices separated by basic ones (their dimensions go first).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...core.operator import Tiled
from ..base.shape import moveaxis, ravel, reshape
from ..base.join import stack
from ..base.reshape import known_sizes, rechunked
from ..core import Tensor, TensorData, TensorOperator, tensor_data
from ..datasource.core import astensor
from .basic import basic_index
from .fancy import bool_index, fancy_index
from .index import BoolArray, IntArray, parse_index

__all__ = ["take", "nonzero", "flatnonzero", "argwhere", "compress"]


def _expand_bools(entries: list) -> list:
    """numpy masks among other advanced indices are their ``nonzero()`` integer arrays."""
    result = []
    for e in entries:
        if isinstance(e, BoolArray) and isinstance(e.value, np.ndarray):
            result.extend(IntArray(a.astype(np.intp)) for a in np.nonzero(e.value))
        elif isinstance(e, BoolArray):
            raise NotImplementedError("a mars boolean tensor index must be the only advanced index, "
                                      "over the leading axes (as in t[mask] or t[mask, :])")
        else:
            result.append(e)
    return result


def getitem(t: Tensor, index: Any) -> Tensor:
    """``t[index]`` with numpy's semantics (basic, integer-array and boolean indexing)."""
    data = tensor_data(t)
    entries = parse_index(data.shape, index)
    bools = [i for i, e in enumerate(entries) if isinstance(e, BoolArray)]
    if bools == [0] and entries[0].value.ndim == 0 and all(_full(e, s) for e, s in zip(entries[1:], data.shape)):
        # a 0-d mask adds a leading axis of length 1 (true) or 0 (false), as numpy does
        return bool_index(reshape(t, (1,) + tuple(data.shape)), reshape(astensor(entries[0].value), (1,)))
    if bools == [0] and entries[0].value.ndim >= 1:
        k = entries[0].value.ndim
        if all(_full(e, data.shape[k + j]) for j, e in enumerate(entries[1:])):
            return bool_index(t, entries[0].value)
    if bools:
        entries = _expand_bools(entries)
    advanced = [i for i, e in enumerate(entries) if isinstance(e, IntArray)]
    if not advanced:
        return basic_index(t, entries)
    return _advanced(t, entries, advanced)


def _full(e: Any, size: Any) -> bool:
    """A slice that keeps the whole axis."""
    if not isinstance(e, slice):
        return False
    if e == slice(None):
        return True
    return e.step in (None, 1) and e.start in (None, 0) and (e.stop is None or (e.stop >= size))


def _advanced(t: Tensor, entries: list, advanced: list[int]) -> Tensor:
    # ints next to arrays are advanced too (numpy broadcasts them as 0-d arrays)
    groups = [i for i, e in enumerate(entries) if isinstance(e, (IntArray, int))]
    spans_gap = groups != list(range(groups[0], groups[-1] + 1))
    basic_entries = [slice(None) if isinstance(e, IntArray) else e for e in entries]
    step = basic_index(t, basic_entries)
    # where the array axes sit once ints are gone and new axes are in
    axes, pos = [], 0
    for e in entries:
        if isinstance(e, int):
            continue
        if isinstance(e, IntArray):
            axes.append(pos)
        pos += 1
    if axes != list(range(axes[0], axes[0] + len(axes))):
        raise NotImplementedError("integer array indices separated by slices or new axes are not supported; "
                                  "index in two steps")
    result = fancy_index(step, axes[0], [entries[i].value for i in advanced])
    if spans_gap and axes[0] != 0:
        nb = result.ndim - (step.ndim - len(axes))
        result = moveaxis(result, list(range(axes[0], axes[0] + nb)), list(range(nb)))
    return result


def take(a: Any, indices: Any, axis: int | None = None) -> Tensor:
    """``np.take``: elements of ``a`` (flattened when ``axis`` is None) at ``indices``."""
    t = astensor(a)
    if axis is None:
        t, axis = ravel(t), 0
    axis = int(axis)
    if not -t.ndim <= axis < t.ndim:
        raise np.exceptions.AxisError(axis, t.ndim)
    axis %= t.ndim
    return t[(slice(None),) * axis + (indices,)]


class TensorNonzero(TensorOperator):
    """Coordinates of the non-zero elements, one output per axis, in C order."""

    params = ()

    @classmethod
    def tile(cls, op: TensorNonzero) -> Any:
        x = op.inputs[0]
        yield from known_sizes([x])
        x = yield from rechunked(x, (x.nsplits[0],) + tuple((int(s),) for s in x.shape[1:]))
        starts = np.concatenate([[0], np.cumsum(x.nsplits[0])[:-1]])
        outs = [[] for _ in range(x.ndim)]
        for i, chunk in enumerate(x.chunks):
            chunk_op = TensorNonzeroChunk(offset=int(starts[i]))
            pieces = chunk_op.new_chunks([chunk], [dict(index=(i,), shape=(math.nan,), dtype=np.intp, order="C")
                                                   for _ in range(x.ndim)])
            for d, p in enumerate(pieces):
                outs[d].append(p)
        nsplits = ((math.nan,) * len(x.chunks),)
        return [Tiled(c, nsplits) for c in outs]


class TensorNonzeroChunk(TensorOperator):
    params = ("offset",)

    def execute(self, x: np.ndarray) -> Any:
        coords = np.nonzero(x)
        coords = (coords[0] + self.offset,) + tuple(coords[1:])
        return coords if len(coords) > 1 else coords[0]


def nonzero(a: Any) -> tuple[Tensor, ...]:
    """``np.nonzero``: a tuple of index tensors, one per axis (lengths known after running)."""
    data = tensor_data(astensor(a))
    if data.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() instead.")
    kws = [dict(shape=(math.nan,), dtype=np.intp) for _ in range(data.ndim)]
    return tuple(TensorNonzero().new_tensors([data], kws))


def flatnonzero(a: Any) -> Tensor:
    return nonzero(ravel(astensor(a)))[0]


def argwhere(a: Any) -> Tensor:
    """``np.argwhere``: one row of coordinates per non-zero element."""
    t = astensor(a)
    if t.ndim == 0:
        return stack(nonzero(t.reshape(1)), axis=1)[:, :0]
    return stack(nonzero(t), axis=1)


def compress(condition: Any, a: Any, axis: int | None = None) -> Tensor:
    """``np.compress``: the slices of ``a`` along ``axis`` where ``condition`` is true."""
    t = astensor(a)
    if axis is None:
        t, axis = ravel(t), 0
    cond = np.asarray(condition) if not isinstance(condition, (Tensor, TensorData)) else condition
    if isinstance(cond, np.ndarray):
        if cond.ndim != 1:
            raise ValueError("condition must be a 1-d array")
        if cond.shape[0] > t.shape[axis]:
            raise IndexError(f"index {cond.shape[0] - 1} is out of bounds for axis {axis} with size {t.shape[axis]}")
        return take(t, np.nonzero(cond)[0], axis=axis)
    return take(t, nonzero(cond)[0], axis=axis)


def _install() -> None:
    Tensor.__getitem__ = getitem  # type: ignore[method-assign]
    Tensor.nonzero = nonzero  # type: ignore[attr-defined]


_install()
