"""``topk`` / ``argtopk``: the ``k`` largest (or smallest) along an axis, by partial selection and a tree.

Every chunk keeps its ``k`` candidates along the axis (``np.partition``, or
``np.argpartition`` carrying indices into the whole); groups of
``options.combine_size`` candidate sets are concatenated and cut to ``k``
again, up the tree, and the last step sorts them (largest first) when asked.
Only ``k`` values per chunk ever move, so the result is cheap to gather.
"""

from __future__ import annotations

from typing import Any, Generator

import numpy as np

from ...core.operator import Tiled
from ...core.options import options
from ..chunks import offsets
from ..core import Tensor, TensorData, TensorOperator, tensor_data
from ..datasource.core import astensor
from ..reduction.core import normalize_axis
from .reshape import known_sizes
from .shape import ravel


def _cut(values: np.ndarray, index: np.ndarray | None, k: int, axis: int, largest: bool) -> tuple:
    """The ``k`` largest (smallest) of ``values`` along ``axis``, in any order, and their ``index`` entries."""
    n = values.shape[axis]
    if n <= k:
        return values, index
    kth = n - k if largest else k - 1
    keep = slice(n - k, None) if largest else slice(0, k)
    where = (slice(None),) * axis + (keep,)
    if index is None:
        return np.partition(values, kth, axis=axis)[where], None
    picked = np.argpartition(values, kth, axis=axis)[where]
    return np.take_along_axis(values, picked, axis), np.take_along_axis(index, picked, axis)


#: 1-D chunks longer than a few blocks are scanned block by block against a running threshold
BLOCK = 1 << 16


def _cut_scan(x: np.ndarray, index: np.ndarray | None, k: int, largest: bool) -> tuple:
    """:func:`_cut` of a long 1-D ``x`` in one pass: each cache-sized block gives only its values past the
    current ``k``-th best (NaNs, the largest, always), which are few once the first blocks are seen."""
    best, best_index = _cut(x[:BLOCK], None if index is None else index[:BLOCK], k, 0, largest)
    for start in range(BLOCK, len(x), BLOCK):
        block = x[start:start + BLOCK]
        edge = best.min() if largest else best.max()
        # negated tests so NaNs (never <= or >= anything) are always candidates
        wanted = np.flatnonzero(~(block <= edge) if largest else ~(block >= edge))
        if not len(wanted):
            continue
        best = np.concatenate([best, block[wanted]])
        if index is not None:
            best_index = np.concatenate([best_index, index[start + wanted]])
        best, best_index = _cut(best, best_index, k, 0, largest)
    return best, best_index


class TopkChunk(TensorOperator):
    """One chunk → its candidates: values, or ``(values, indices into the whole)`` when ``arg``."""

    params = ("k", "axis", "largest", "arg", "offset")
    fusible = True

    def execute(self, x: np.ndarray) -> Any:
        cut = _cut_scan if x.ndim == 1 and len(x) > 4 * BLOCK and self.k <= BLOCK // 4 else None
        if not self.arg:
            return cut(x, None, self.k, self.largest)[0] if cut else _cut(x, None, self.k, self.axis, self.largest)[0]
        shape = [1] * x.ndim
        shape[self.axis] = x.shape[self.axis]
        index = np.broadcast_to(np.arange(self.offset, self.offset + x.shape[self.axis]).reshape(shape), x.shape)
        return cut(x, index, self.k, self.largest) if cut else _cut(x, index, self.k, self.axis, self.largest)


class TopkCombine(TensorOperator):
    """Several candidate sets (along the axis) → one."""

    params = ("k", "axis", "largest", "arg")

    def merged(self, parts: tuple) -> tuple:
        if not self.arg:
            return _cut(np.concatenate(parts, axis=self.axis), None, self.k, self.axis, self.largest)
        values = np.concatenate([p[0] for p in parts], axis=self.axis)
        index = np.concatenate([p[1] for p in parts], axis=self.axis)
        return _cut(values, index, self.k, self.axis, self.largest)

    def execute(self, *parts: Any) -> Any:
        values, index = self.merged(parts)
        return values if index is None else (values, index)


class TopkAgg(TopkCombine):
    """The last candidate sets → the result (sorted, largest first, when ``sorted``)."""

    params = ("k", "axis", "largest", "arg", "sorted")

    def execute(self, *parts: Any) -> np.ndarray:
        values, index = self.merged(parts)
        if self.sorted:
            order = np.argsort(values, axis=self.axis, kind="stable")
            if self.largest:
                order = np.flip(order, axis=self.axis)
            values = np.take_along_axis(values, order, self.axis)
            index = None if index is None else np.take_along_axis(index, order, self.axis)
        return np.ascontiguousarray(values if index is None else index)


class TensorTopk(TensorOperator):
    params = ("k", "axis", "largest", "sorted", "arg")

    @classmethod
    def tile(cls, op: TensorTopk) -> Generator[Any, Any, Tiled]:
        x, out = op.inputs[0], op.outputs[0]
        axis = op.axis
        yield from known_sizes([x])
        _check_k(op.k, x.shape[axis])
        starts = offsets(x.nsplits[axis])
        grid = list(x.chunk_shape)
        grid[axis] = 1
        chunks = []
        for out_index in np.ndindex(*grid):
            row = [x.chunk_at(out_index[:axis] + (i,) + out_index[axis + 1:]) for i in range(x.chunk_shape[axis])]
            parts = [TopkChunk(k=op.k, axis=axis, largest=op.largest, arg=op.arg, offset=starts[c.index[axis]])
                     .new_chunk([c], **_meta(c, op.k, axis, x.dtype)) for c in row]
            while len(parts) > options.combine_size:
                size = options.combine_size
                parts = [TopkCombine(k=op.k, axis=axis, largest=op.largest, arg=op.arg)
                         .new_chunk(parts[i:i + size], **_meta_of(parts[i:i + size], op.k, axis, x.dtype))
                         for i in range(0, len(parts), size)]
            agg = TopkAgg(k=op.k, axis=axis, largest=op.largest, arg=op.arg, sorted=op.sorted)
            meta = _meta_of(parts, op.k, axis, out.dtype)
            meta["index"] = out_index
            chunks.append(agg.new_chunk(parts, **meta))
        nsplits = tuple((op.k,) if d == axis else s for d, s in enumerate(x.nsplits))
        return Tiled(chunks, nsplits)


def _meta(chunk: Any, k: int, axis: int, dtype: np.dtype) -> dict:
    shape = tuple(min(k, s) if d == axis else s for d, s in enumerate(chunk.shape))
    return dict(index=chunk.index, shape=shape, dtype=dtype, order="C")


def _meta_of(group: list, k: int, axis: int, dtype: np.dtype) -> dict:
    length = min(k, sum(c.shape[axis] for c in group))
    shape = tuple(length if d == axis else s for d, s in enumerate(group[0].shape))
    return dict(index=group[0].index, shape=shape, dtype=dtype, order="C")


def _check_k(k: int, length: Any) -> None:
    if not isinstance(length, float) and k > length:
        raise ValueError(f"topk: k={k} is larger than the axis length {int(length)}")


def _topk(a: Any, k: Any, axis: Any, largest: bool, sorted: bool, order: Any, parallel_kind: str, arg: bool) -> Tensor:
    name = "argtopk" if arg else "topk"
    if order is not None:
        raise NotImplementedError(f"{name}(order=...) applies to structured arrays, which mars tensors do not hold")
    if parallel_kind not in ("auto", "tree"):
        raise NotImplementedError(f"{name}: parallel_kind={parallel_kind!r} is not supported; use 'auto' or 'tree'")
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"{name}: k must be a positive integer, got {k!r}")
    t = astensor(a)
    if axis is None:
        t, axis = ravel(t), 0
    if t.ndim == 0:
        raise np.exceptions.AxisError(axis, 0)
    (axis,) = normalize_axis(axis, t.ndim)
    data: TensorData = tensor_data(t)
    _check_k(int(k), data.shape[axis])
    shape = tuple(int(k) if d == axis else s for d, s in enumerate(data.shape))
    op = TensorTopk(k=int(k), axis=axis, largest=bool(largest), sorted=bool(sorted), arg=arg)
    return op.new_tensor([data], shape, np.dtype(np.intp) if arg else data.dtype)


def topk(a: Any, k: int, axis: Any = -1, largest: bool = True, sorted: bool = True, order: Any = None,
         parallel_kind: str = "auto", psrs_kinds: Any = None) -> Tensor:
    """The ``k`` largest (``largest=False``: smallest) values along ``axis``, largest first when ``sorted``.

    Equal to sorting along ``axis`` and keeping ``k`` from the top (NaNs
    count as the largest, as in ``np.sort``). ``axis=None`` flattens.

    >>> import mars.tensor as mt
    >>> mt.topk(mt.tensor([3, 9, 1, 7, 5], chunk_size=2), 2).fetch()
    array([9, 7])
    """
    return _topk(a, k, axis, largest, sorted, order, parallel_kind, arg=False)


def argtopk(a: Any, k: int, axis: Any = -1, largest: bool = True, sorted: bool = True, order: Any = None,
            parallel_kind: str = "auto", psrs_kinds: Any = None) -> Tensor:
    """Indices along ``axis`` of the ``k`` largest (smallest) values, as :func:`topk` orders them.

    >>> import mars.tensor as mt
    >>> mt.argtopk(mt.tensor([3, 9, 1, 7, 5], chunk_size=2), 2).fetch()
    array([1, 3])
    """
    return _topk(a, k, axis, largest, sorted, order, parallel_kind, arg=True)
