"""``take_along_axis`` and ``put_along_axis``: each chunk whole along the axis, nothing more gathered.

The array is cut like the indices on the other axes (both broadcast first),
so each chunk pair runs numpy's function on its own. The writer rebinds the
tensor passed in, as ``t[...] = v`` does.
"""

from __future__ import annotations

import operator
from collections.abc import Generator
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ...core.operator import Tiled
from ..arithmetic.core import broadcast_shapes
from ..base.reshape import known_sizes, rechunked
from ..base.shape import broadcast_to, ravel
from ..core import Tensor, TensorData, TensorOperator
from ..datasource.core import astensor
from .setitem import rebind

__all__ = ["take_along_axis", "put_along_axis"]


def writable(a: Any, name: str) -> Tensor:
    if not isinstance(a, Tensor):
        raise TypeError(f"{name} changes its first argument in place: it must be a mars Tensor, "
                        f"got {type(a).__name__}")
    return a


class TensorTakeAlongAxis(TensorOperator):
    """``np.take_along_axis`` per chunk: the array whole along ``axis``, cut like the indices elsewhere."""

    params = ("axis",)

    @classmethod
    def tile(cls, op: TensorTakeAlongAxis) -> Generator[Any, Any, Tiled]:
        arr, idx = op.inputs[:2]
        out = op.outputs[0]
        yield from known_sizes(list(op.inputs))
        if len(op.inputs) > 2:  # a writer: each lane's indices meet its chunk once
            idx = yield from rechunked(idx, tuple((idx.shape[d],) if d == op.axis else s
                                                  for d, s in enumerate(idx.nsplits)))
        arr = yield from _whole_along(arr, idx, op.axis)
        rest = []
        for v in op.inputs[2:]:
            rest.append((yield from rechunked(v, idx.nsplits)))
        chunks = []
        for c in idx.chunks:
            src = arr.chunk_at(tuple(0 if d == op.axis else i for d, i in enumerate(c.index)))
            ins = [src, c] + [v.chunk_at(c.index) for v in rest]
            shape = src.shape if rest else c.shape
            chunks.append(op.copy().new_chunk(ins, index=c.index, shape=shape, dtype=out.dtype, order="C"))
        nsplits = idx.nsplits if not rest else tuple(
            arr.nsplits[d] if d == op.axis else s for d, s in enumerate(idx.nsplits))
        return Tiled(chunks, nsplits)

    def execute(self, arr: np.ndarray, indices: np.ndarray) -> np.ndarray:
        return np.take_along_axis(arr, indices, axis=self.axis)


class TensorPutAlongAxis(TensorTakeAlongAxis):
    """``np.put_along_axis`` on a copy of each chunk (the values cut like the indices)."""

    def execute(self, arr: np.ndarray, indices: np.ndarray, values: np.ndarray) -> np.ndarray:
        out = np.array(arr)
        np.put_along_axis(out, indices, values, axis=self.axis)
        return out


def _whole_along(arr: TensorData, idx: TensorData, axis: int) -> Generator[Any, Any, TensorData]:
    nsplits = tuple((arr.shape[d],) if d == axis else s for d, s in enumerate(idx.nsplits))
    return (yield from rechunked(arr, nsplits))


def _along_args(arr: Any, indices: Any, axis: Any) -> tuple[Tensor, Tensor, int]:
    t, idx = astensor(arr), astensor(indices)
    if idx.dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if axis is None:
        if idx.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        return ravel(t), idx, 0
    axis = normalize_axis_index(operator.index(axis), t.ndim)
    if idx.ndim != t.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    return t, idx, axis


def take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> Tensor:
    """Values of ``arr`` at ``indices`` along ``axis`` (other axes broadcast), as ``np.take_along_axis``.

    >>> import mars.tensor as mt
    >>> a = mt.tensor([[10, 30, 20], [60, 40, 50]])
    >>> mt.take_along_axis(a, mt.argsort(a, axis=1), axis=1).execute().fetch()
    array([[10, 20, 30],
           [40, 50, 60]])
    """
    t, idx, axis = _along_args(arr, indices, axis)
    other = broadcast_shapes(*(tuple(1 if d == axis else s for d, s in enumerate(x.shape)) for x in (t, idx)))
    t = broadcast_to(t, other[:axis] + (t.shape[axis],) + other[axis + 1:])
    idx = broadcast_to(idx, other[:axis] + (idx.shape[axis],) + other[axis + 1:])
    op = TensorTakeAlongAxis(axis=axis)
    return op.new_tensor([t.data, idx.data], idx.shape, t.dtype)


def put_along_axis(arr: Any, indices: Any, values: Any, axis: Any) -> None:
    """Write ``values`` at ``indices`` along ``axis``, as ``np.put_along_axis``; ``arr`` is rebound.

    >>> import mars.tensor as mt
    >>> t = mt.zeros((2, 3), dtype=int)
    >>> mt.put_along_axis(t, mt.tensor([[2], [0]]), 9, axis=1)
    >>> t.execute().fetch()
    array([[0, 0, 9],
           [9, 0, 0]])
    """
    t = writable(arr, "put_along_axis")
    if axis is None:
        raise NotImplementedError("put_along_axis with axis=None is not supported; use mt.put on the flat positions")
    _, idx, ax = _along_args(t, indices, axis)
    idx = broadcast_to(idx, t.shape[:ax] + (idx.shape[ax],) + t.shape[ax + 1:])
    vals = broadcast_to(astensor(values).astype(t.dtype), idx.shape)
    op = TensorPutAlongAxis(axis=ax)
    rebind(t, op.new_tensor([t.data, idx.data, vals.data], t.shape, t.dtype).data)


