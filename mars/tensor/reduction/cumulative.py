"""Cumulative sums and products: ``cumsum``, ``cumprod``, ``nancumsum``, ``nancumprod``.

Tiling, along the axis, for each line of chunks ``x_0, x_1, ...``:

- ``c_i = cumsum(x_i)`` for every chunk, in parallel;
- a *carry* chain of small slices: ``k_1 = last(c_0)``, ``k_i = k_{i-1} + last(c_{i-1})``;
- ``out_i = c_i + k_i`` (``out_0 = c_0``).

So the chunk ops grow as O(n), only the tiny carries run one after another,
and the heavy work stays parallel. Products use ``*`` in place of ``+``.

``axis=None`` flattens in C order: the input is re-cut into runs of whole
rows (every other axis in one chunk), so each chunk, raveled, is a contiguous
piece of the flat result; the chunk op ravels its input itself.
"""

from __future__ import annotations

import math
from typing import Any, Generator

import numpy as np

from ...core.entity import has_unknown
from ...core.operator import Tiled
from ...core.tiling import recursive_tile
from ..core import Tensor, TensorOperator, tensor_data
from ..datasource.core import astensor
from ..rechunk import rechunk
from .core import normalize_axis

__all__ = ["cumsum", "cumprod", "nancumsum", "nancumprod"]

_FUNCS = {"cumsum": np.cumsum, "cumprod": np.cumprod, "nancumsum": np.nancumsum, "nancumprod": np.nancumprod}
_COMBINE = {"cumsum": np.add, "cumprod": np.multiply, "nancumsum": np.add, "nancumprod": np.multiply}


class CumulativeChunk(TensorOperator):
    """One chunk's own cumulative result (raveled first when ``flatten``)."""

    params = ("func", "axis", "dtype", "flatten")
    fusible = True

    @property
    def blockwise(self) -> bool:
        # rows i:j of a cumsum along a later axis depend only on rows i:j
        return not self.flatten and self.axis != 0

    def execute(self, x: np.ndarray) -> np.ndarray:
        if self.flatten:
            x = np.ravel(x)
        return _FUNCS[self.func](x, axis=self.axis, dtype=self.dtype)


class CumulativeCarry(TensorOperator):
    """What the previous chunks add up to: ``carry (+) last slice of the previous chunk's result``."""

    params = ("func", "axis")

    def execute(self, *inputs: np.ndarray) -> np.ndarray:
        combine = _COMBINE[self.func]
        *carry, previous = inputs
        if previous.shape[self.axis] == 0:  # an empty chunk adds nothing
            shape = tuple(1 if d == self.axis else s for d, s in enumerate(previous.shape))
            last = np.full(shape, combine.identity, dtype=previous.dtype)
        else:
            last = np.take(previous, [-1], axis=self.axis)
        return combine(carry[0], last) if carry else last


class CumulativeApply(TensorOperator):
    """A chunk's final result: its own cumulative result combined with the carry."""

    params = ("func",)
    fusible = True
    blockwise = True  # the carry has one row along the axis; it is never sliced

    def execute(self, own: np.ndarray, carry: np.ndarray) -> np.ndarray:
        return _COMBINE[self.func](own, carry)


class TensorCumulative(TensorOperator):
    """A cumulative ``func`` along ``axis``; ``axis=None`` runs over the flattened tensor."""

    params = ("func", "axis", "dtype")

    @classmethod
    def tile(cls, op: TensorCumulative) -> Generator[Any, Any, Tiled]:
        inp = op.inputs[0]
        flatten = op.axis is None
        if flatten:
            inp = yield from _whole_rows(inp)
        if inp.ndim == 0:
            return Tiled(_scan_line(op, inp.chunks, 0, True), ((1,),))
        axis = 0 if flatten else op.axis
        grid = inp.chunk_shape
        chunks: dict[tuple, Any] = {}
        others = [n for d, n in enumerate(grid) if d != axis]
        for rest in np.ndindex(*others):
            line = [inp.chunk_at(rest[:axis] + (i,) + rest[axis:]) for i in range(grid[axis])]
            for chunk in _scan_line(op, line, axis, flatten):
                chunks[chunk.index] = chunk
        ordered = [chunks[index] for index in np.ndindex(*(grid[:1] if flatten else grid))]
        return Tiled(ordered, _out_nsplits(inp, flatten))


def _scan_line(op: TensorCumulative, line: list, axis: int, flatten: bool) -> list:
    """Output chunks of one line of input chunks along ``axis``."""
    out, result = op.outputs[0], []
    carry = previous = None
    for chunk in line:
        shape = (math.prod(chunk.shape),) if flatten else chunk.shape
        index = (chunk.index[:1] or (0,)) if flatten else chunk.index
        meta = dict(index=index, shape=shape, dtype=out.dtype, order="C")
        own = CumulativeChunk(func=op.func, axis=axis, dtype=out.dtype, flatten=flatten).new_chunk([chunk], **meta)
        if previous is None:
            result.append(own)
        else:
            carry_shape = tuple(1 if d == axis else s for d, s in enumerate(shape))
            inputs = [previous] if carry is None else [carry, previous]
            carry_meta = dict(meta, shape=carry_shape)
            carry = CumulativeCarry(func=op.func, axis=axis).new_chunk(inputs, **carry_meta)
            result.append(CumulativeApply(func=op.func).new_chunk([own, carry], **meta))
        previous = own
    return result


def _out_nsplits(inp: Any, flatten: bool) -> tuple:
    if not flatten:
        return inp.nsplits
    row = math.prod(inp.shape[1:])
    return (tuple(n * row for n in inp.nsplits[0]),)


def _whole_rows(inp: Any) -> Generator[Any, Any, Any]:
    """``inp`` re-cut so every axis but the first is one chunk (about as many elements per
    chunk as its largest chunk now), so raveled chunks are runs of the flat tensor."""
    if inp.ndim == 0:
        return inp
    if has_unknown(inp.shape) or any(has_unknown(s) for s in inp.nsplits):
        yield inp.chunks
        inp.refresh_shape()
    if len(inp.nsplits) == 1 or all(len(s) == 1 for s in inp.nsplits[1:]):
        return inp
    row = math.prod(inp.shape[1:])
    largest = max(math.prod(c.shape) for c in inp.chunks)
    per_chunk = max(1, largest // max(row, 1))
    cut = yield from recursive_tile(rechunk(inp, (per_chunk,) + (-1,) * (inp.ndim - 1)))
    return tensor_data(cut)


def _cumulative(func: str, a: Any, axis: Any, dtype: Any) -> Tensor:
    data = tensor_data(astensor(a))
    if axis is not None:
        if isinstance(axis, (tuple, list)) or isinstance(axis, bool):
            raise TypeError(f"'{type(axis).__name__}' object cannot be interpreted as an integer")
        # numpy treats a 0-d input as 1-d here: axis 0 or -1 is the only axis
        axis = normalize_axis(axis, max(data.ndim, 1))[0]
    with np.errstate(all="ignore"):
        out_dtype = _FUNCS[func](np.ones((1,), dtype=data.dtype), dtype=dtype).dtype
    if axis is None or data.ndim == 0:
        size = math.prod(data.shape) if data.shape else 1
        shape: tuple = (size,)
        axis = None
    else:
        shape = data.shape
    op = TensorCumulative(func=func, axis=axis, dtype=out_dtype)
    return op.new_tensor([data], shape, out_dtype)


def cumsum(a: Any, axis: Any = None, dtype: Any = None) -> Tensor:
    """Cumulative sum along ``axis`` (``None``: over the flattened tensor), as ``np.cumsum``.

    >>> import mars.tensor as mt
    >>> mt.tensor([1, 2, 3, 4], chunk_size=3).cumsum().execute().fetch()
    array([ 1,  3,  6, 10])
    """
    return _cumulative("cumsum", a, axis, dtype)


def cumprod(a: Any, axis: Any = None, dtype: Any = None) -> Tensor:
    """Cumulative product along ``axis`` (``None``: over the flattened tensor), as ``np.cumprod``.

    >>> import mars.tensor as mt
    >>> mt.tensor([[1, 2], [3, 4]], chunk_size=1).cumprod(axis=1).execute().fetch()
    array([[ 1,  2],
           [ 3, 12]])
    """
    return _cumulative("cumprod", a, axis, dtype)


def nancumsum(a: Any, axis: Any = None, dtype: Any = None) -> Tensor:
    """Cumulative sum treating NaNs as zero, as ``np.nancumsum``.

    >>> import mars.tensor as mt
    >>> mt.nancumsum(mt.tensor([1.0, float("nan"), 2.0], chunk_size=2)).execute().fetch()
    array([1., 1., 3.])
    """
    return _cumulative("nancumsum", a, axis, dtype)


def nancumprod(a: Any, axis: Any = None, dtype: Any = None) -> Tensor:
    """Cumulative product treating NaNs as one, as ``np.nancumprod``.

    >>> import mars.tensor as mt
    >>> mt.nancumprod(mt.tensor([2.0, float("nan"), 3.0], chunk_size=2)).execute().fetch()
    array([2., 2., 6.])
    """
    return _cumulative("nancumprod", a, axis, dtype)
