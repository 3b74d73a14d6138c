"""``sort``: chunks sorted where they are, or a sample-based partition sort across chunks.

Along an axis cut into several chunks of a 1-D tensor, ``sort`` is parallel
sorting by regular sampling: every chunk sorts itself and offers evenly
spaced samples; the tiling fetches the samples (a stage), picks pivots, and a
map-reduce shuffle sends each sorted chunk's runs between pivots to their
partitions, where they are merged. Partition sizes are known once it ran.
For more dimensions, the axis is gathered into one chunk and each chunk sorts
its rows; so is a GPU tensor of up to 4 GiB (one device sort beats the exchange).
"""

from __future__ import annotations

import math
from typing import Any, Generator

import numpy as np

from ...core.device import xp_of
from ...core.operator import Fetch, Tiled
from ...core.shuffle import ShuffleMap, ShuffleReduce, shuffle_chunks
from ..core import Tensor, TensorData, TensorOperator, tensor_data
from ..datasource.core import astensor
from ..reduction.core import normalize_axis
from .reshape import known_sizes, rechunked
from .shape import ravel

__all__ = ["sort", "argsort"]


#: on a GPU, a 1-D tensor up to this size is sorted whole by one kernel: faster than any exchange of runs
GPU_WHOLE_SORT_BYTES = 4 << 30


class TensorSortChunk(TensorOperator):
    params = ("axis",)

    def execute(self, x: np.ndarray) -> np.ndarray:
        return np.sort(x, axis=self.axis)


class TensorSortSamples(TensorOperator):
    """``n`` evenly spaced values of a sorted chunk."""

    params = ("n",)

    def execute(self, x: np.ndarray) -> np.ndarray:
        if not len(x):
            return x[:0]
        return x[xp_of(x).linspace(0, len(x) - 1, self.n).round().astype(np.intp)]


class TensorSortSplit(ShuffleMap):
    """A sorted chunk cut at the pivots."""

    params = ("pivots",)
    tileable_type = TensorData

    def split(self, x: np.ndarray) -> list:
        bounds = [0, *np.searchsorted(x, self.pivots, side="right").tolist(), len(x)]
        return [x[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]


class TensorSortMerge(ShuffleReduce):
    tileable_type = TensorData

    def combine(self, pieces: list) -> np.ndarray:
        return np.sort(np.concatenate(pieces), kind="stable")


class TensorArgSortChunk(TensorOperator):
    """Along the axis: stable argsort; with ``offset`` (1-D partition sort) also the sorted values."""

    params = ("axis", "offset")

    def execute(self, x: np.ndarray) -> Any:
        order = np.argsort(x, axis=self.axis, kind="stable")
        if self.offset is None:
            return order
        return x[order], order + self.offset


class TensorArgSortSamples(TensorSortSamples):
    def execute(self, pair: tuple) -> np.ndarray:
        return super().execute(pair[0])


class TensorArgSortSplit(TensorSortSplit):
    def split(self, pair: tuple) -> list:
        values, order = pair
        bounds = [0, *np.searchsorted(values, self.pivots, side="right").tolist(), len(values)]
        return [(values[lo:hi], order[lo:hi]) for lo, hi in zip(bounds[:-1], bounds[1:])]


class TensorArgSortMerge(TensorSortMerge):
    def combine(self, pieces: list) -> np.ndarray:
        values = np.concatenate([p[0] for p in pieces])
        order = np.concatenate([p[1] for p in pieces])
        # pieces come in chunk order and each is stable, so ties keep the input's order
        return order[np.argsort(values, kind="stable")]


class TensorSort(TensorOperator):
    params = ("axis", "arg")

    @classmethod
    def tile(cls, op: TensorSort) -> Generator[Any, Any, Tiled]:
        x, out = op.inputs[0], op.outputs[0]
        axis = op.axis
        yield from known_sizes([x])
        if x.ndim > 1 or x.chunk_shape[axis] == 1 or (op.gpu and x.nbytes <= GPU_WHOLE_SORT_BYTES):
            x = yield from rechunked(x, tuple((int(s),) if d == axis else x.nsplits[d] for d, s in enumerate(x.shape)))
            chunks = [_local_op(op).new_chunk([c], index=c.index, shape=c.shape, dtype=out.dtype, order="C")
                      for c in x.chunks]
            return Tiled(chunks, x.nsplits)
        return (yield from _partition_sort(x, out, op.arg))


def _local_op(op: TensorSort) -> TensorOperator:
    return TensorArgSortChunk(axis=op.axis, offset=None) if op.arg else TensorSortChunk(axis=op.axis)


_STAGES = {False: (TensorSortSamples, TensorSortSplit, TensorSortMerge),
           True: (TensorArgSortSamples, TensorArgSortSplit, TensorArgSortMerge)}


def _partition_sort(x: Any, out: Any, arg: bool) -> Generator[Any, Any, Tiled]:
    n = len(x.chunks)
    meta = dict(dtype=out.dtype, order="C")
    sample_op, split_op, merge_op = _STAGES[arg]
    starts = np.concatenate([[0], np.cumsum(x.nsplits[0])[:-1]]).astype(int)
    local = [(TensorArgSortChunk(axis=0, offset=int(start)) if arg else TensorSortChunk(axis=0)).new_chunk(
        [c], index=c.index, shape=c.shape, dtype=x.dtype, order="C") for c, start in zip(x.chunks, starts)]
    samples = [sample_op(n=n).new_chunk([c], index=c.index, shape=(math.nan,), dtype=x.dtype, order="C")
               for c in local]
    values = yield Fetch(samples)
    pooled = np.sort(np.concatenate(values))
    pivots = pooled[np.linspace(0, len(pooled) - 1, n + 1).round().astype(np.intp)[1:-1]] if len(pooled) else pooled
    reduce_kws = [dict(index=(r,), shape=(math.nan,), **meta) for r in range(n)]
    chunks = shuffle_chunks(local, n, lambda i: split_op(pivots=pivots), lambda r: merge_op(),
                            reduce_kws, piece_kws=lambda i, r: dict(index=(i, r), shape=(math.nan,), **meta))
    return Tiled(chunks, ((math.nan,) * n,))


def sort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *, descending: bool = False,
         stable: bool | None = None) -> Tensor:
    """A sorted copy of ``a`` along ``axis`` (flattened when ``axis`` is None), as ``np.sort``;
    ``descending=True`` (the Array API's) sorts largest first. The sort is always stable.

    >>> import mars.tensor as mt
    >>> mt.sort(mt.tensor([3, 1, 2, 0], chunk_size=2)).fetch()
    array([0, 1, 2, 3])
    >>> mt.sort(mt.tensor([3, 1, 2, 0], chunk_size=2), descending=True).fetch()
    array([3, 2, 1, 0])
    """
    result = _sort_op(a, axis, order, arg=False)
    return _reversed(result, -1 if axis is None else axis) if descending else result


def argsort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *, descending: bool = False,
            stable: bool | None = None) -> Tensor:
    """Indices that sort ``a`` along ``axis``, as ``np.argsort``; ties keep their order (stable),
    also with ``descending=True`` (the Array API's: largest first).

    >>> import mars.tensor as mt
    >>> mt.argsort(mt.tensor([3, 1, 2, 1], chunk_size=2)).fetch()
    array([1, 3, 2, 0])
    >>> mt.argsort(mt.tensor([3, 1, 2, 1], chunk_size=2), descending=True).fetch()
    array([0, 2, 1, 3])
    """
    if not descending:
        return _sort_op(a, axis, order, arg=True)
    # stable and descending: sort the reversed data ascending, then reverse and re-index
    t = astensor(a)
    t, axis = (ravel(t), -1) if axis is None else (t, axis)
    if t.ndim == 0:
        raise np.exceptions.AxisError(axis, 0)
    (axis,) = normalize_axis(axis, t.ndim)
    flipped = _sort_op(_reversed(t, axis), axis, order, arg=True)
    return (t.shape[axis] - 1) - _reversed(flipped, axis)


def _reversed(t: Tensor, axis: int) -> Tensor:
    axis = axis % max(t.ndim, 1)
    return t[(slice(None),) * axis + (slice(None, None, -1),)]


def _sort_op(a: Any, axis: Any, order: Any, arg: bool) -> Tensor:
    """The sort (or argsort) of ``a`` along ``axis``, flattened when ``axis`` is None."""
    name = "argsort" if arg else "sort"
    if order is not None:
        raise NotImplementedError(f"{name}(order=...) applies to structured arrays, which mars tensors do not hold")
    t = astensor(a)
    if axis is None:
        t, axis = ravel(t), 0
    if t.ndim == 0:
        raise np.exceptions.AxisError(axis, 0)
    (axis,) = normalize_axis(axis, t.ndim)
    data = tensor_data(t)
    return TensorSort(axis=axis, arg=arg).new_tensor([data], data.shape, np.dtype(np.intp) if arg else data.dtype)
