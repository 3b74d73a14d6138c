"""Searching and partial sorting: ``searchsorted``, ``partition``, ``argpartition``, ``lexsort``, ``topk``.

``searchsorted``: every chunk of ``v`` reads all chunks of the sorted ``a``;
the last value of each chunk of ``a`` says which chunk a value falls in, and
a search there plus that chunk's offset gives the position.

``partition`` / ``argpartition``: along an axis held in one chunk, each
chunk partitions itself. A 1-D tensor of several chunks is sorted instead
(the distributed sort), which meets the guarantee too; along an axis of a
tensor with more dims, the axis is gathered into one chunk first.

``lexsort``: the keys are gathered into one chunk along ``axis`` (cut alike
along the others), where each chunk sorts its lines.
"""

from __future__ import annotations

from typing import Any, Generator, Sequence

import numpy as np

from ...core.operator import Tiled
from ...core.tiling import recursive_tile
from ..chunks import offsets
from ..core import Tensor, TensorOperator, is_tensor, tensor_data
from ..datasource.core import astensor
from ..indexing.getitem import take
from ..reduction.core import normalize_axis
from .reshape import known_sizes, rechunked
from .shape import ravel
from .sort import argsort, sort
from .topk import argtopk, topk

__all__ = ["searchsorted", "partition", "argpartition", "lexsort", "topk", "argtopk"]


# ----------------------------------------------------------------- searchsorted
class TensorSearchSorted(TensorOperator):
    """Positions of the first input's values in the sorted 1-D tensor ``a`` (the other inputs)."""

    params = ("side", "starts", "length")

    @classmethod
    def tile(cls, op: TensorSearchSorted) -> Generator[Any, Any, Tiled]:
        v, a, out = op.inputs[0], op.inputs[1], op.outputs[0]
        yield from known_sizes([a])
        starts = tuple(offsets(a.nsplits[0]))
        length = int(a.shape[0])
        chunks = [op.copy(starts=starts, length=length).new_chunk(
            [c, *a.chunks], index=c.index, shape=c.shape, dtype=out.dtype, order="C") for c in v.chunks]
        return Tiled(chunks, v.nsplits)

    def execute(self, v: np.ndarray, *parts: np.ndarray) -> Any:
        kept = [(s, p) for s, p in zip(self.starts, parts) if len(p)]
        out = np.full(np.shape(v), self.length, dtype=np.intp)
        if not kept:
            return out
        lasts = np.array([p[-1] for _, p in kept], dtype=kept[0][1].dtype)
        # a chunk whose last value is before v (at or before for 'right') lies wholly before it
        which = np.searchsorted(lasts, v, side=self.side)
        for j, (start, part) in enumerate(kept):
            sel = which == j
            if sel.any():
                out[sel] = start + np.searchsorted(part, np.asarray(v)[sel], side=self.side)
        return out


def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None) -> Tensor:
    """Where to insert ``v`` into the sorted 1-D ``a`` to keep it sorted (``v``'s shape), as ``np.searchsorted``.

    >>> import mars.tensor as mt
    >>> mt.searchsorted(mt.tensor([1, 3, 5, 7], chunk_size=2), [0, 3, 6, 9]).fetch()
    array([0, 1, 3, 4])
    """
    at = astensor(a)
    if at.ndim != 1:
        raise ValueError(f"searchsorted: a must be 1-D, got a tensor of {at.ndim} dimensions")
    vt = astensor(v)
    np.searchsorted(np.zeros(0, dtype=at.dtype), np.zeros(0, dtype=vt.dtype), side=side)  # numpy's checks
    if sorter is not None:
        st = astensor(sorter)
        if not isinstance(st.shape[0] if st.ndim else 0, float) and st.shape != at.shape:
            raise ValueError(f"sorter.size must equal a.size: sorter has shape {st.shape}, a has {at.shape}")
        if st.dtype.kind not in "iu":
            raise TypeError(f"sorter must only contain integers, got dtype {st.dtype}")
        at = take(at, st)
    vd, ad = tensor_data(vt), tensor_data(at)
    op = TensorSearchSorted(side=side, starts=None, length=None)
    return op.new_tensor([vd, ad], vd.shape, np.dtype(np.intp))


# ----------------------------------------------------------------- partition
class TensorPartitionChunk(TensorOperator):
    params = ("kth", "axis", "arg")

    def execute(self, x: np.ndarray) -> np.ndarray:
        func = np.argpartition if self.arg else np.partition
        return func(x, self.kth, axis=self.axis)


class SameChunk(TensorOperator):
    """A chunk passed on as it is, under a key of its own."""

    def execute(self, x: np.ndarray) -> np.ndarray:
        return x


class TensorPartition(TensorOperator):
    params = ("kth", "axis", "arg")

    @classmethod
    def tile(cls, op: TensorPartition) -> Generator[Any, Any, Tiled]:
        x, out = op.inputs[0], op.outputs[0]
        axis = op.axis
        yield from known_sizes([x])
        _check_kth(op.kth, int(x.shape[axis]))
        if x.ndim == 1 and x.chunk_shape[0] > 1:  # a sorted tensor is partitioned at every kth
            t = (argsort if op.arg else sort)(Tensor(x))
            yield from recursive_tile(t)
            # new keys: the sort's own results go when its tensor does
            chunks = [SameChunk().new_chunk([c], index=c.index, shape=c.shape, dtype=out.dtype, order="C")
                      for c in t.data.chunks]
            return Tiled(chunks, t.data.nsplits)
        x = yield from rechunked(x, tuple((int(s),) if d == axis else x.nsplits[d] for d, s in enumerate(x.shape)))
        chunks = [TensorPartitionChunk(kth=op.kth, axis=axis, arg=op.arg).new_chunk(
            [c], index=c.index, shape=c.shape, dtype=out.dtype, order="C") for c in x.chunks]
        return Tiled(chunks, x.nsplits)


def _kths(kth: Any) -> tuple[int, ...]:
    values = np.asarray(kth)
    if values.dtype.kind not in "iu" or values.ndim > 1:
        raise TypeError(f"Partition index must be integer, got {kth!r}")
    return tuple(int(k) for k in values.reshape(-1))


def _check_kth(kth: Sequence[int], n: int) -> None:
    for k in kth:
        shifted = k + n if k < 0 else k
        if not 0 <= shifted < n:
            raise ValueError(f"kth(={shifted}) out of bounds ({n})")


def _partition(a: Any, kth: Any, axis: Any, kind: str, order: Any, arg: bool) -> Tensor:
    name = "argpartition" if arg else "partition"
    if order is not None:
        raise NotImplementedError(f"{name}(order=...) applies to structured arrays, which mars tensors do not hold")
    if kind != "introselect":
        raise ValueError(f"{name}: kind must be 'introselect', got {kind!r}")
    t = astensor(a)
    if axis is None:
        t, axis = ravel(t), 0
    if t.ndim == 0:
        raise np.exceptions.AxisError(axis, 0)
    (axis,) = normalize_axis(axis, t.ndim)
    kths = _kths(kth)
    data = tensor_data(t)
    if not isinstance(data.shape[axis], float):
        _check_kth(kths, int(data.shape[axis]))
    op = TensorPartition(kth=kths, axis=axis, arg=arg)
    return op.new_tensor([data], data.shape, np.dtype(np.intp) if arg else data.dtype)


def partition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None) -> Tensor:
    """A copy of ``a`` with each ``kth`` element where sorting would put it, smaller ones before, larger after.

    As ``np.partition``; the order within each side may differ from numpy's.

    >>> import mars.tensor as mt
    >>> int(mt.partition(mt.tensor([5, 1, 4, 2, 3], chunk_size=5), 2)[2])
    3
    """
    return _partition(a, kth, axis, kind, order, arg=False)


def argpartition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None) -> Tensor:
    """Indices that partition ``a`` at ``kth`` along ``axis``, as ``np.argpartition``.

    >>> import mars.tensor as mt
    >>> int(mt.argpartition(mt.tensor([5, 1, 4, 2, 3], chunk_size=5), 2)[2])
    4
    """
    return _partition(a, kth, axis, kind, order, arg=True)


# ----------------------------------------------------------------- lexsort
class TensorLexsort(TensorOperator):
    """Indices sorting by the inputs (last one primary) along ``axis``."""

    params = ("axis",)

    @classmethod
    def tile(cls, op: TensorLexsort) -> Generator[Any, Any, Tiled]:
        keys, out = list(op.inputs), op.outputs[0]
        axis = op.axis
        yield from known_sizes(keys)
        first = keys[0]
        nsplits = tuple((int(s),) if d == axis else first.nsplits[d] for d, s in enumerate(first.shape))
        aligned = []
        for k in keys:
            aligned.append((yield from rechunked(k, nsplits)))
        keys = aligned
        chunks = [op.copy().new_chunk([k.chunk_at(c.index) for k in keys], index=c.index, shape=c.shape,
                                      dtype=out.dtype, order="C") for c in keys[0].chunks]
        return Tiled(chunks, nsplits)

    def execute(self, *keys: np.ndarray) -> np.ndarray:
        return np.lexsort(keys, axis=self.axis)


def lexsort(keys: Any, axis: int = -1) -> Tensor:
    """Indices that sort by several keys (the last is the primary one), stable, as ``np.lexsort``.

    >>> import mars.tensor as mt
    >>> mt.lexsort([mt.tensor([1, 0, 1, 0], chunk_size=3), mt.tensor([2, 2, 1, 1], chunk_size=3)]).fetch()
    array([3, 2, 1, 0])
    """
    if is_tensor(keys) or isinstance(keys, np.ndarray):
        t = astensor(keys)
        if t.ndim == 0 or isinstance(t.shape[0], float):
            raise TypeError("lexsort: keys must be a sequence of keys, or a tensor of known length along axis 0")
        keys = [t[i] for i in range(int(t.shape[0]))]
    keys = [tensor_data(astensor(k)) for k in keys]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shape = keys[0].shape
    if any(k.shape != shape for k in keys):
        raise ValueError(f"all keys need to be the same shape, got {[tuple(k.shape) for k in keys]}")
    if not shape:
        raise np.exceptions.AxisError(axis, 0)
    (axis,) = normalize_axis(axis, len(shape))
    return TensorLexsort(axis=axis).new_tensor(keys, shape, np.dtype(np.intp))

