"""``unique``: per-chunk uniques merged by a tree, or by a range shuffle when there are many.

Every chunk finds its own unique values (with their first flat index and
their counts when asked): a *partial*, the tuple ``(values, index, counts)``
(``None`` for what is not asked). Partials merge by sorting their values
together and, per group of equal values, keeping the smallest index and the
sum of counts. With few distinct values the partials merge in a tree into
one chunk. With many, the tiling fetches a few samples of every partial (a
stage), picks pivots, and a shuffle sends each partial's values between two
pivots to one partition, where they merge: the result is then several
chunks, in order. The inverse of each input chunk is a search of its values
among all the uniques. Sizes are known once it ran.

With ``axis=`` the tensor is gathered into one chunk along the other axes and
the slices along ``axis`` (as rows) go through a tree merge into one chunk.
"""

from __future__ import annotations

import math
from typing import Any, Generator

import numpy as np

from ...core.operator import Fetch, Tiled
from ...core.options import options
from ...core.shuffle import ShuffleMap
from ..chunks import offsets
from ..core import Tensor, TensorData, TensorOperator, tensor_data
from ..datasource.core import astensor
from ..reduction.core import normalize_axis
from .reshape import known_sizes, rechunked

#: partial uniques in all above this many values are merged by a shuffle, not a tree
SHUFFLE_ABOVE = 1 << 17
_NAN_KINDS = "fcmM"


# ----------------------------------------------------------------- chunk functions
def _group_starts(s: np.ndarray, equal_nan: bool) -> np.ndarray:
    """Where each run of equal values of sorted ``s`` starts (NaNs one run when ``equal_nan``)."""
    flag = np.empty(len(s), dtype=bool)
    flag[:1] = True
    np.not_equal(s[1:], s[:-1], out=flag[1:])
    if equal_nan and s.dtype.kind in _NAN_KINDS and len(s) and np.isnan(s[-1]):
        flag[int(np.argmax(np.isnan(s))) + 1:] = False
    return np.flatnonzero(flag)


def _unique_flat(x: np.ndarray, want_index: bool, want_counts: bool, equal_nan: bool) -> tuple:
    """``np.unique`` of ``x`` flattened, by sorting: numpy 2.3+ hashes instead, which is slow with many values."""
    flat = x.reshape(-1)
    order = np.argsort(flat, kind="stable") if want_index else None
    s = flat[order] if want_index else np.sort(flat)
    starts = _group_starts(s, equal_nan)
    counts = np.diff(np.append(starts, len(s))).astype(np.intp, copy=False) if want_counts else None
    return s[starts], (order[starts] if want_index else None), counts


def _merge_flat(parts: list, equal_nan: bool) -> tuple:
    """Partials (values, index, counts) of flat uniques → one partial."""
    values = np.concatenate([p[0] for p in parts])
    if parts[0][1] is None and parts[0][2] is None:
        return _unique_flat(values, False, False, equal_nan)
    index = counts = None
    if parts[0][1] is not None:
        # by value then first index: each run starts at its first occurrence (NaNs kept apart in index order)
        index = np.concatenate([p[1] for p in parts])
        order = np.lexsort((index, values))
        index = index[order]
    else:
        order = np.argsort(values, kind="stable")
    s = values[order]
    starts = _group_starts(s, equal_nan)
    empty = np.zeros(0, dtype=np.intp)
    if index is not None:
        index = index[starts]
    if parts[0][2] is not None:
        counts = np.add.reduceat(np.concatenate([p[2] for p in parts])[order], starts) if len(s) else empty
    return s[starts], index, counts


def _merge_rows(parts: list, equal_nan: bool) -> tuple:
    """Partials of unique rows (the axis moved first) → one partial."""
    rows = np.concatenate([p[0] for p in parts])
    u, inv = np.unique(rows, axis=0, return_inverse=True, equal_nan=equal_nan)
    inv = inv.reshape(-1)
    index = counts = None
    if parts[0][1] is not None:
        index = np.full(len(u), np.iinfo(np.intp).max, dtype=np.intp)
        np.minimum.at(index, inv, np.concatenate([p[1] for p in parts]))
    if parts[0][2] is not None:
        counts = np.zeros(len(u), dtype=np.intp)
        np.add.at(counts, inv, np.concatenate([p[2] for p in parts]))
    return u, index, counts


class UniqueChunk(TensorOperator):
    """One chunk → its partial; ``start``/``whole`` turn its indices into the whole's flat (or row) indices."""

    params = ("axis", "want_index", "want_counts", "equal_nan", "start", "whole")

    def execute(self, x: np.ndarray) -> tuple:
        if self.axis is None:
            values, index, counts = _unique_flat(x, self.want_index, self.want_counts, self.equal_nan)
        else:
            found = np.unique(np.moveaxis(x, self.axis, 0), axis=0, return_index=self.want_index,
                              return_counts=self.want_counts, equal_nan=self.equal_nan)
            res = list(found) if isinstance(found, tuple) else [found]
            values = res.pop(0)
            index = res.pop(0) if self.want_index else None
            counts = res.pop(0) if self.want_counts else None
        if index is not None:
            index = self._global(index, x.shape)
        return values, index, counts

    def _global(self, index: np.ndarray, shape: tuple) -> np.ndarray:
        if self.axis is not None:
            return index + self.start[self.axis]
        if len(shape) <= 1:
            return index + (self.start[0] if shape else 0)
        at = np.unravel_index(index, shape)
        return np.ravel_multi_index(tuple(i + s for i, s in zip(at, self.start)), self.whole).astype(np.intp)


class UniqueCombine(TensorOperator):
    """Several partials → one."""

    params = ("axis", "equal_nan")

    def execute(self, *parts: tuple) -> tuple:
        if len(parts) == 1:
            return parts[0]
        merge = _merge_flat if self.axis is None else _merge_rows
        return merge(list(parts), self.equal_nan)


class UniqueOutputs(UniqueCombine):
    """The last partials (of one partition) → the asked outputs: values, then index and counts if asked."""

    params = ("axis", "equal_nan", "want_index", "want_counts")

    def execute(self, *parts: tuple) -> Any:
        values, index, counts = super().execute(*parts)
        if self.axis is not None:
            values = np.moveaxis(values, 0, self.axis)
        out = [values] + ([index] if self.want_index else []) + ([counts] if self.want_counts else [])
        return tuple(out) if len(out) > 1 else out[0]


class UniqueSamples(TensorOperator):
    """A partial's length and ``n`` evenly spaced values of it."""

    params = ("n",)

    def execute(self, part: tuple) -> tuple:
        values = part[0]
        if not len(values):
            return 0, values
        return len(values), values[np.linspace(0, len(values) - 1, self.n).round().astype(np.intp)]


class UniqueSplit(ShuffleMap):
    """A partial cut at the pivots: values up to the first pivot, up to the second, ..."""

    params = ("pivots",)
    tileable_type = TensorData

    def split(self, part: tuple) -> list:
        values = part[0]
        bounds = [0, *np.searchsorted(values, self.pivots, side="right").tolist(), len(values)]
        return [tuple(None if a is None else a[lo:hi] for a in part) for lo, hi in zip(bounds[:-1], bounds[1:])]


class UniqueInverse(TensorOperator):
    """Each value of an input chunk → its position among all the uniques (every partition an input)."""

    params = ("axis", "equal_nan")

    def execute(self, x: np.ndarray, *uniques: np.ndarray) -> np.ndarray:
        if self.axis is not None:
            u = uniques[0]
            rows = np.moveaxis(x, self.axis, 0)
            both = np.concatenate([np.moveaxis(u, self.axis, 0), rows])
            inv = np.unique(both, axis=0, return_inverse=True, equal_nan=self.equal_nan)[1].reshape(-1)
            return inv[len(both) - len(rows):]
        u = np.concatenate(uniques) if len(uniques) > 1 else uniques[0]
        pos = np.searchsorted(u, x)
        if x.dtype.kind in "cmM" and len(u) and np.isnan(u[-1]):  # every NaN matches the one kept
            pos = np.where(np.isnan(x), len(u) - 1, pos)
        return pos.astype(np.intp, copy=False)


class UniqueWhole(TensorOperator):
    """``np.unique`` of a tensor held in one chunk: every output at once."""

    params = ("axis", "flags", "equal_nan")

    def execute(self, x: np.ndarray) -> Any:
        index, inverse, counts = self.flags
        return np.unique(x, return_index=index, return_inverse=inverse, return_counts=counts, axis=self.axis,
                         equal_nan=self.equal_nan)


# ----------------------------------------------------------------- tiling
class TensorUnique(TensorOperator):
    """``np.unique``: outputs values, then index, inverse, counts as ``flags`` asks."""

    params = ("axis", "flags", "equal_nan")

    @classmethod
    def tile(cls, op: TensorUnique) -> Generator[Any, Any, list[Tiled]]:
        x = op.inputs[0]
        yield from known_sizes([x])
        if op.axis is not None:
            x = yield from rechunked(x, tuple(s if d == op.axis else (int(x.shape[d]),) for d, s in enumerate(x.nsplits)))
        gather = op.flags[1] and not op.equal_nan and x.dtype.kind in _NAN_KINDS
        if gather or (len(x.chunks) == 1 and op.axis is not None):
            x = yield from rechunked(x, tuple((int(s),) for s in x.shape))
            return _whole(op, x)
        partials = _partials(op, x)
        outputs: list[list] = []
        if op.axis is None:
            outputs = yield from _shuffled(op, x, partials)
        if not outputs:
            outputs = [_tree(op, x, partials)]
        return _tiled_outputs(op, x, outputs)


def _metas(op: TensorUnique, x: TensorData) -> list[tuple[tuple, np.dtype]]:
    """(shape, dtype) of each output, from the input (outputs nobody holds are gone from ``op.outputs``)."""
    intp = np.dtype(np.intp)
    if op.axis is None:
        values, inverse = (math.nan,), tuple(x.shape)
    else:
        values = tuple(math.nan if d == op.axis else s for d, s in enumerate(x.shape))
        inverse = (x.shape[op.axis],)
    metas = [(values, x.dtype)]
    metas += [((math.nan,), intp)] if op.flags[0] else []
    metas += [(inverse, intp)] if op.flags[1] else []
    metas += [((math.nan,), intp)] if op.flags[2] else []
    return metas


def _whole(op: TensorUnique, x: TensorData) -> list[Tiled]:
    kws = [dict(index=(0,) * len(shape), shape=shape, dtype=dtype, order="C") for shape, dtype in _metas(op, x)]
    chunks = UniqueWhole(axis=op.axis, flags=op.flags, equal_nan=op.equal_nan).new_chunks([x.chunks[0]], kws)
    return [Tiled([c], tuple((s,) for s in c.shape)) for c in chunks]


def _partials(op: TensorUnique, x: TensorData) -> list:
    starts = [offsets(s) for s in x.nsplits]
    whole = tuple(int(s) for s in x.shape)
    result = []
    for c in x.chunks:
        start = tuple(starts[d][i] for d, i in enumerate(c.index))
        chunk_op = UniqueChunk(axis=op.axis, want_index=op.flags[0], want_counts=op.flags[2],
                               equal_nan=op.equal_nan, start=start, whole=whole)
        result.append(chunk_op.new_chunk([c], index=c.index, shape=(math.nan,), dtype=x.dtype, order="C"))
    return result


def _finals(op: TensorUnique, x: TensorData, parts: list, index: int) -> list:
    metas = [m for i, m in enumerate(_metas(op, x)) if not (op.flags[1] and i == 1 + op.flags[0])]
    kws = [dict(index=tuple(index if isinstance(s, float) else 0 for s in shape), shape=shape, dtype=dtype,
                order="C") for shape, dtype in metas]
    final = UniqueOutputs(axis=op.axis, equal_nan=op.equal_nan, want_index=op.flags[0], want_counts=op.flags[2])
    return final.new_chunks(parts, kws)


def _tree(op: TensorUnique, x: TensorData, partials: list) -> list:
    while len(partials) > options.combine_size:
        size = options.combine_size
        partials = [UniqueCombine(axis=op.axis, equal_nan=op.equal_nan).new_chunk(
            partials[i:i + size], index=(i // size,), shape=(math.nan,), dtype=partials[0].dtype, order="C")
            for i in range(0, len(partials), size)]
    return _finals(op, x, partials, 0)


def _shuffled(op: TensorUnique, x: TensorData, partials: list) -> Generator[Any, Any, list[list]]:
    """The finals of a range shuffle, one list per partition; none when the partials are few enough for a tree."""
    n = len(partials)
    samples = [UniqueSamples(n=4 * n).new_chunk([p], index=p.index, shape=(math.nan,), dtype=p.dtype, order="C")
               for p in partials]
    fetched = yield Fetch(samples)
    total = sum(int(f[0]) for f in fetched)
    parts = min(n, math.ceil(total / SHUFFLE_ABOVE))
    if parts <= 1:
        return []
    pooled = np.sort(np.concatenate([f[1] for f in fetched]))
    pivots = pooled[np.linspace(0, len(pooled) - 1, parts + 1).round().astype(np.intp)[1:-1]]
    meta = dict(shape=(math.nan,), dtype=partials[0].dtype, order="C")
    pieces = [UniqueSplit(pivots=pivots).new_chunks([p], [dict(index=(i, r), **meta) for r in range(parts)])
              for i, p in enumerate(partials)]
    return [_finals(op, x, [p[r] for p in pieces], r) for r in range(parts)]


def _tiled_outputs(op: TensorUnique, x: TensorData, finals: list[list]) -> list[Tiled]:
    nparts = len(finals)
    result = []
    for k in range(len(finals[0])):
        chunks = [f[k] for f in finals]
        nsplits = tuple((math.nan,) * nparts if isinstance(s, float) else (s,) for s in chunks[0].shape)
        result.append(Tiled(chunks, nsplits))
    if op.flags[1]:
        result.insert(1 + op.flags[0], _inverse(op, x, [f[0] for f in finals]))
    return result


def _inverse(op: TensorUnique, x: TensorData, uniques: list) -> Tiled:
    intp = np.dtype(np.intp)
    chunks = []
    for c in x.chunks:
        shape = c.shape if op.axis is None else (c.shape[op.axis],)
        index = c.index if op.axis is None else (c.index[op.axis],)
        chunk_op = UniqueInverse(axis=op.axis, equal_nan=op.equal_nan)
        chunks.append(chunk_op.new_chunk([c, *uniques], index=index, shape=shape, dtype=intp, order="C"))
    nsplits = x.nsplits if op.axis is None else (x.nsplits[op.axis],)
    return Tiled(chunks, nsplits)


# ----------------------------------------------------------------- the function
def unique(ar: Any, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
           axis: Any = None, *, equal_nan: bool = True) -> Any:
    """The sorted unique values of ``ar`` (and their first index, the inverse, the counts), as ``np.unique``.

    The sizes are known once it ran. With ``axis`` the tensor is gathered
    into one chunk along the other axes.

    >>> import mars.tensor as mt
    >>> mt.unique(mt.tensor([3, 1, 3, 2, 1], chunk_size=2)).fetch()
    array([1, 2, 3])
    >>> u, counts = mt.unique(mt.tensor([3, 1, 3], chunk_size=2), return_counts=True)
    >>> counts.fetch()
    array([1, 2])
    """
    data = tensor_data(astensor(ar))
    if axis is not None:
        if data.ndim == 0:
            raise np.exceptions.AxisError(axis, 0)
        (axis,) = normalize_axis(axis, data.ndim)
    flags = (bool(return_index), bool(return_inverse), bool(return_counts))
    if axis is None:
        values_shape: tuple = (math.nan,)
    else:
        values_shape = tuple(math.nan if d == axis else s for d, s in enumerate(data.shape))
    intp = np.dtype(np.intp)
    kws = [dict(shape=values_shape, dtype=data.dtype)]
    if flags[0]:
        kws.append(dict(shape=(math.nan,), dtype=intp))
    if flags[1]:
        kws.append(dict(shape=tuple(data.shape) if axis is None else (data.shape[axis],), dtype=intp))
    if flags[2]:
        kws.append(dict(shape=(math.nan,), dtype=intp))
    op = TensorUnique(axis=axis, flags=flags, equal_nan=bool(equal_nan))
    outs = op.new_tensors([data], kws)
    return outs[0] if len(outs) == 1 else tuple(outs)


def unique_values(x: Any) -> Tensor:
    """The unique values of ``x`` (sorted), as the Array API's ``unique_values``.

    >>> import mars.tensor as mt
    >>> mt.unique_values(mt.tensor([2, 1, 2], chunk_size=2)).fetch()
    array([1, 2])
    """
    return unique(x, equal_nan=False)
