"""Coordinate grids: meshgrid, mgrid, ogrid, indices, and the index tuples of triangles and diagonals.

Grids are ranges reshaped and broadcast, so each chunk is made where it is
needed. The triangle indices are a source op: a chunk finds the rows of its
flat positions from the row counts (a formula of ``n``, ``m`` and ``k``).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ...core.operator import Tiled
from ..base.join import stack
from ..base.shape import broadcast_arrays, broadcast_to, ravel, reshape
from ..chunks import normalize_chunk_sizes
from ..core import Tensor, TensorOperator
from ..indexing.nonzero import nonzero
from .core import astensor, grid_tile, ones
from .creation import arange

__all__ = [
    "meshgrid", "mgrid", "ogrid", "indices", "tril_indices", "triu_indices", "tril_indices_from",
    "triu_indices_from", "diag_indices", "diag_indices_from", "mask_indices",
]


def _axis_shape(ndim: int, axis: int) -> tuple:
    return tuple(-1 if d == axis else 1 for d in range(ndim))


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> tuple[Tensor, ...]:
    """Coordinate tensors from 1-d coordinate vectors, as ``np.meshgrid`` (``indexing='xy'`` or ``'ij'``).

    >>> import mars.tensor as mt
    >>> x, y = mt.meshgrid(mt.arange(3), mt.arange(2))
    >>> x.execute().fetch()
    array([[0, 1, 2],
           [0, 1, 2]])
    """
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    shapes = [_axis_shape(ndim, i) for i in range(ndim)]
    if indexing == "xy" and ndim > 1:
        shapes[0], shapes[1] = _axis_shape(ndim, 1), _axis_shape(ndim, 0)
    grids = [reshape(ravel(astensor(x)), s) for x, s in zip(xi, shapes)]
    if not sparse:
        grids = list(broadcast_arrays(*grids))
    return tuple(grids)


def indices(dimensions: Any, dtype: Any = int, sparse: bool = False) -> Any:
    """The index of each position of a grid of shape ``dimensions``, as ``np.indices``
    (one stacked tensor, or a tuple of broadcastable ones when ``sparse``).

    >>> import mars.tensor as mt
    >>> mt.indices((2, 3))[1].execute().fetch()
    array([[0, 1, 2],
           [0, 1, 2]])
    """
    dims = tuple(operator.index(d) for d in dimensions)
    ndim = len(dims)
    grids = [reshape(arange(n, dtype=dtype), _axis_shape(ndim, i)) for i, n in enumerate(dims)]
    if sparse:
        return tuple(grids)
    if not grids:
        return astensor(np.empty((0,), dtype=dtype))
    return stack([broadcast_to(g, dims) for g in grids])


# ----------------------------------------------------------------- mgrid, ogrid
def _axis_plan(key: slice) -> tuple[int, Any, Any, list]:
    """(length, step, start, numbers for the dtype) of one slice of a grid index."""
    start = 0 if key.start is None else key.start
    step = 1 if key.step is None else key.step
    if isinstance(step, (complex, np.complexfloating)):
        length = int(abs(step))
        numbers = [start, key.stop, abs(step)]
        step = (key.stop - start) / float(length - 1) if length != 1 else 1
        return length, step, start, numbers
    return math.ceil((key.stop - start) / step), step, start, [start, key.stop, step]


class _Grid:
    """``mgrid[...]`` / ``ogrid[...]``: slices (a complex step is a number of points) to grids."""

    def __init__(self, sparse: bool):
        self.sparse = sparse

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            length, step, start, numbers = _axis_plan(key)
            if not isinstance(key.step, (complex, np.complexfloating)):
                return arange(start, key.stop, key.step)
            dtype = np.result_type(*numbers)
            return arange(0, length, 1, dtype=dtype) * step + start
        plans = [_axis_plan(k) for k in key]
        dtype = np.result_type(0, *(x for p in plans for x in p[3]))
        grids = indices([max(p[0], 0) for p in plans], dtype, sparse=True)
        grids = [g * p[1] + p[2] for g, p in zip(grids, plans)]
        if self.sparse:
            return tuple(grids)
        shape = tuple(max(p[0], 0) for p in plans)
        return stack([broadcast_to(g, shape) for g in grids])


mgrid = _Grid(sparse=False)
mgrid.__doc__ = """Dense grids from slices, as ``np.mgrid``: ``mt.mgrid[0:2, 0:3]`` has shape (2, 2, 3).

>>> import mars.tensor as mt
>>> mt.mgrid[0:1:3j].execute().fetch()
array([0. , 0.5, 1. ])
"""
ogrid = _Grid(sparse=True)
ogrid.__doc__ = """Open (broadcastable) grids from slices, as ``np.ogrid``.

>>> import mars.tensor as mt
>>> [g.shape for g in mt.ogrid[0:2, 0:3]]
[(2, 1), (1, 3)]
"""


# ----------------------------------------------------------------- triangles and diagonals
class TensorTriIndices(TensorOperator):
    """Row (``part=0``) or column (``part=1``) indices of a triangle's positions ``[offset, offset+length)``."""

    params = ("n", "m", "k", "upper", "part", "offset", "length", "nsplits")
    fusible = True

    @classmethod
    def tile(cls, op: TensorTriIndices) -> Tiled:
        def chunk_op(index: tuple, slices: tuple, shape: tuple) -> TensorTriIndices:
            return op.copy(offset=slices[0].start, length=shape[0], nsplits=None)

        return grid_tile(op, chunk_op)

    def execute(self) -> np.ndarray:
        rows = np.arange(self.n)
        first = np.clip(rows + self.k, 0, self.m) if self.upper else np.zeros(self.n, dtype=np.intp)
        counts = self.m - first if self.upper else np.clip(rows + self.k + 1, 0, self.m)
        starts = np.concatenate([[0], np.cumsum(counts)])
        flat = np.arange(self.offset, self.offset + self.length)
        row = np.searchsorted(starts, flat, side="right") - 1
        if self.part == 0:
            return row.astype(np.intp)
        return (flat - starts[row] + first[row]).astype(np.intp)


def _tri_count(n: int, m: int, k: int, upper: bool) -> int:
    rows = np.arange(n)
    if upper:
        return int((m - np.clip(rows + k, 0, m)).sum())
    return int(np.clip(rows + k + 1, 0, m).sum())


def _tri_indices(n: Any, k: Any, m: Any, upper: bool) -> tuple[Tensor, Tensor]:
    n = operator.index(n)
    m = n if m is None else operator.index(m)
    k = operator.index(k)
    if n < 0 or m < 0:
        raise ValueError(f"negative dimensions are not allowed, got n={n}, m={m}")
    length = _tri_count(n, m, k, upper)
    nsplits = normalize_chunk_sizes((length,), None, np.dtype(np.intp).itemsize)
    result = []
    for part in (0, 1):
        op = TensorTriIndices(n=n, m=m, k=k, upper=upper, part=part, offset=0, length=length, nsplits=nsplits)
        result.append(op.new_tensor([], (length,), np.intp))
    return result[0], result[1]


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Tensor, Tensor]:
    """Row and column indices of the lower triangle (``col <= row + k``) of an (n, m) array, as
    ``np.tril_indices``.

    >>> import mars.tensor as mt
    >>> [i.execute().fetch().tolist() for i in mt.tril_indices(3)]
    [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]
    """
    return _tri_indices(n, k, m, upper=False)


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Tensor, Tensor]:
    """Row and column indices of the upper triangle (``col >= row + k``) of an (n, m) array, as
    ``np.triu_indices``.

    >>> import mars.tensor as mt
    >>> [i.execute().fetch().tolist() for i in mt.triu_indices(3, 1)]
    [[0, 0, 1], [1, 2, 2]]
    """
    return _tri_indices(n, k, m, upper=True)


def _square_shape(arr: Any) -> tuple:
    shape = astensor(arr).shape if not hasattr(arr, "shape") else arr.shape
    if len(shape) != 2:
        raise ValueError("input array must be 2-d")
    return shape


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Tensor, Tensor]:
    """:func:`tril_indices` for the shape of 2-d ``arr``, as ``np.tril_indices_from``.

    >>> import mars.tensor as mt
    >>> mt.tril_indices_from(mt.ones((2, 3)))[1].execute().fetch().tolist()
    [0, 0, 1]
    """
    rows, cols = _square_shape(arr)
    return tril_indices(rows, k=k, m=cols)


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Tensor, Tensor]:
    """:func:`triu_indices` for the shape of 2-d ``arr``, as ``np.triu_indices_from``.

    >>> import mars.tensor as mt
    >>> mt.triu_indices_from(mt.ones((2, 3)))[1].execute().fetch().tolist()
    [0, 1, 2, 1, 2]
    """
    rows, cols = _square_shape(arr)
    return triu_indices(rows, k=k, m=cols)


def diag_indices(n: int, ndim: int = 2) -> tuple[Tensor, ...]:
    """The indices of the main diagonal of an ``n`` x ... x ``n`` array, as ``np.diag_indices``.

    >>> import mars.tensor as mt
    >>> [i.execute().fetch().tolist() for i in mt.diag_indices(2)]
    [[0, 1], [0, 1]]
    """
    idx = arange(operator.index(n))
    return (idx,) * operator.index(ndim)


def diag_indices_from(arr: Any) -> tuple[Tensor, ...]:
    """:func:`diag_indices` for ``arr`` (at least 2-d, all sides equal), as ``np.diag_indices_from``.

    >>> import mars.tensor as mt
    >>> len(mt.diag_indices_from(mt.ones((3, 3, 3))))
    3
    """
    shape = arr.shape if hasattr(arr, "shape") else np.shape(arr)
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], len(shape))


def mask_indices(n: int, mask_func: Callable, k: int = 0) -> tuple[Tensor, ...]:
    """The indices where ``mask_func(ones((n, n)), k)`` is non-zero (e.g. ``mt.triu``), as ``np.mask_indices``.

    Their length is known after running.

    >>> import mars.tensor as mt
    >>> [i.execute().fetch().tolist() for i in mt.mask_indices(2, mt.triu)]
    [[0, 0, 1], [0, 1, 1]]
    """
    mask = mask_func(ones((operator.index(n), operator.index(n)), dtype=int), k)
    return nonzero(astensor(mask) != 0)
