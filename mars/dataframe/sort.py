"""Sorting rows: ``sort_values`` and ``sort_index`` (``nlargest``/``nsmallest``: :mod:`.nlargest`).

One partition is sorted by one call. Several, by one numeric key (no
``ignore_index``), go in two stages: keys sampled from the unsorted
partitions give pivots, then each partition's rows go to their output
partition (:func:`buckets_of`), which sorts them: every row is sorted and
copied once. Other sorts use sample-based range partitioning in three stages:

1. every partition sorts itself (a stable sort) and offers evenly spaced
   samples of its (key-mapped) sort keys; the tiling fetches the samples,
   orders them as pandas would, and picks split points ("pivots") at even
   quantiles, each sample weighing the rows it stands for;
2. every sorted partition finds where each pivot cuts it, by binary searches
   down the keys (rows equal on the first key are searched on the second, and
   so on); the tiling fetches these cuts, so the output's row counts are
   known before the last stage runs;
3. a shuffle sends each run between two cuts to its output partition, which
   concatenates its runs and sorts them again (a numeric key without ties
   by numpy's SIMD quicksort, which beats timsort's merging of the runs:
   25 ms against 45 ms for 625k floats in 8 runs; others by the stable sort,
   which merges the runs).

Ties are broken by the rows' original order: a pivot is a sampled row named
by its keys *and* its place (partition, rank in the sorted partition), so
rows equal to a pivot's keys are split by place. Output is therefore what
pandas' stable sort gives, whatever the partitioning, and many equal keys
still spread evenly over the output partitions. pandas' default
``kind="quicksort"`` leaves the order of ties unspecified (numpy's SIMD
quicksort scrambles them); here every ``kind`` gives the stable order.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..core.entity import has_unknown
from ..core.operator import Fetch, Tiled
from ..core.shuffle import ShuffleMap, ShuffleReduce, shuffle_chunks
from ..core.tiling import as_data
from .core import (
    DataFrame,
    PandasOperator,
    Series,
    chunk_index_of,
    chunk_shape_of,
    nsplits_of,
    row_splits,
)
from .map import map_partitions
from .meta import empty_meta
from .rows import recut_chunks, single_chunk

__all__: list[str] = []

_NO_DEFAULT = pd.api.extensions.no_default
#: samples each partition offers per output partition (more: better balanced outputs)
_SAMPLES_PER_PARTITION = 16
_MAX_SAMPLES = 2048
#: the same for unsorted partitions, whose evenly spaced rows are not their quantiles
_UNSORTED_SAMPLES_PER_PARTITION = 64
#: up to this many input partitions, the output has as many (at most this squared shuffle pieces)
_FEW_PARTITIONS = 32
_MIN_OUTPUT_ROWS = 100_000


# ----------------------------------------------------------------- what to sort by
@dataclass(frozen=True)
class SortSpec:
    """How rows are ordered: the pandas call that sorts a partition, and its sort keys.

    ``method`` is ``"sort_values"`` or ``"sort_index"``; ``by`` the column or
    index-level labels of a DataFrame's ``sort_values`` (None for a Series'
    values or for the index); ``orders`` says ascending per key.
    """

    method: str
    by: tuple | None
    orders: tuple
    na_position: str
    key: Callable | None

    def __mars_tokenize__(self) -> tuple:
        return (self.method, self.by, self.orders, self.na_position, self.key)

    def sort(self, part: Any, runs: bool = False) -> Any:
        """``part`` sorted as pandas sorts it, ties in their original order.

        ``runs`` (``part`` is a few sorted runs end to end) changes nothing:
        a numeric key with no ties goes to numpy's SIMD quicksort, faster
        than timsort's merging of the runs; other keys go to the stable sort,
        which merges them by itself.

        A Series' values, and a one-level index, are ordered by the argsort
        pandas uses, then taken: pandas' own methods would rebuild a Series
        (object dtype then becomes ``str`` or not, depending on the order it
        found) or skip sorting an index it finds monotonic (a categorical
        index with NaN first is, by its codes), so partitions would disagree.
        """
        ascending: Any = list(self.orders) if len(self.orders) > 1 else self.orders[0]
        if len(self.orders) == 1 and self.key is None:
            order = quick_order(self.keys(part)[0], self.orders[0], self.na_position)
            if order is not None:
                return part.take(order)
        if self.method == "sort_values" and self.by is not None:
            return part.sort_values(list(self.by), ascending=ascending, kind="stable", na_position=self.na_position,
                                    key=self.key)
        if self.method == "sort_index" and isinstance(part.index, pd.MultiIndex):
            return part.sort_index(ascending=ascending, kind="stable", na_position=self.na_position, key=self.key)
        order = self.keys(part)[0].array.argsort(ascending=ascending, kind="stable", na_position=self.na_position)
        return part.take(order)

    def keys(self, part: Any) -> list:
        """The values pandas compares, one Series or Index per key (``key`` applied)."""
        if self.method == "sort_index":
            index = part.index
            levels = [index.get_level_values(i) for i in range(index.nlevels)] \
                if isinstance(index, pd.MultiIndex) else [index]
            return levels if self.key is None else [pd.Index(self.key(lev.copy())) for lev in levels]
        if self.by is None:
            return [part] if self.key is None else [_as_series(self.key(part.copy()))]
        columns = [part[b] if b in part.columns else part.index.get_level_values(b) for b in self.by]
        if self.key is None:
            return columns
        return [_as_series(self.key(pd.Series(c.array, name=b))) for c, b in zip(columns, self.by)]

    def na_fill(self, i: int, values: Any) -> float | None:
        """What pandas compares a float key's NaNs equal to (None: NaNs sort apart).

        Sorting by several columns, pandas orders numpy floats with NaN
        placed first by making NaN -inf (+inf descending): they tie with
        infinities, and the ties are broken by the next keys.
        """
        lexsort = self.method == "sort_values" and len(self.orders) > 1
        if lexsort and self.na_position == "first" and isinstance(values.dtype, np.dtype) \
                and values.dtype.kind == "f":
            return -np.inf if self.orders[i] else np.inf
        return None

    def order_samples(self, samples: pd.DataFrame) -> np.ndarray:
        """Positions that put ``samples`` (key columns ``0 .. k-1``) in this sort's order."""
        k = len(self.orders)
        if k == 1:  # as ``sort`` orders one key
            return np.asarray(samples[0].array.argsort(ascending=self.orders[0], kind="stable",
                                                       na_position=self.na_position))
        cols = list(range(k))
        rows = samples[cols].assign(pos=np.arange(len(samples)))
        ascending = list(self.orders)
        if self.method == "sort_index":
            # the same pandas path as the real sort: a MultiIndex compares level codes
            ordered = rows.set_index(cols).sort_index(ascending=ascending, kind="stable", na_position=self.na_position)
        else:
            ordered = rows.sort_values(cols, ascending=ascending, kind="stable", na_position=self.na_position)
        return ordered["pos"].to_numpy()


def quick_order(values: Any, ascending: bool, na_position: str) -> np.ndarray | None:
    """The stable order of a numeric key by numpy's faster quicksort, or None where keys tie.

    With no two keys equal every sort gives the same order, and numpy's
    (SIMD) quicksort takes about half the time of its stable sort. A sample
    says first whether ties are likely, so tied keys rarely pay twice.
    """
    dtype = values.dtype
    if not isinstance(dtype, np.dtype) or dtype.kind not in "iufmM" or len(values) < 2:
        return None
    plain = values.to_numpy()
    if dtype.kind in "mM":
        mask, plain = np.isnat(plain), plain.view(np.int64)
    else:
        mask = np.isnan(plain) if dtype.kind == "f" else None
    valid = np.flatnonzero(~mask) if mask is not None and mask.any() else None
    if valid is not None:
        plain = plain[valid]
    sample = plain[::max(1, len(plain) // 1024)]
    if len(np.unique(sample)) < len(sample):
        return None
    order = np.argsort(plain)
    ranked = plain[order]
    if (ranked[1:] == ranked[:-1]).any():
        return None
    if not ascending:
        order = order[::-1]
    if valid is None:
        return order
    order = valid[order]
    nans = np.flatnonzero(mask)
    return np.concatenate([nans, order] if na_position == "first" else [order, nans])


def _as_series(mapped: Any) -> pd.Series:
    return mapped if isinstance(mapped, pd.Series) else pd.Series(mapped)


def _encode(values: Any, na_fill: float | None) -> tuple[np.ndarray, np.ndarray | None]:
    """A numpy array that orders as pandas orders ``values``, and where values are missing.

    Categoricals order by code, datetimes and periods by their integers,
    numbers as they are; anything else compares as Python objects (strings).
    """
    array = values.array
    if isinstance(array, pd.Categorical):
        codes = np.asarray(array.codes)
        return codes, codes < 0
    asi8 = getattr(array, "asi8", None)
    if asi8 is not None:
        return np.asarray(asi8), np.asarray(array.isna())
    dtype = values.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "biufc":
        plain = values.to_numpy()
        if dtype.kind not in "fc":
            return plain, None
        mask = np.isnan(plain)
        if na_fill is not None:
            return (np.where(mask, na_fill, plain) if mask.any() else plain), None
        return plain, mask
    mask = np.asarray(values.isna())
    numpy_dtype = getattr(dtype, "numpy_dtype", None)
    if isinstance(numpy_dtype, np.dtype) and numpy_dtype.kind in "biuf":
        # nullable numbers: the missing slots get a filler, which the mask sets apart
        return values.to_numpy(dtype=numpy_dtype, na_value=numpy_dtype.type(0)), mask
    return values.to_numpy(dtype=object), mask


class _SortedKey:
    """One sort key of a sorted partition, searchable for the rows equal to a value."""

    def __init__(self, values: np.ndarray, mask: np.ndarray | None, ascending: bool, na_first: bool):
        self.n = len(values)
        self.ascending = ascending
        self.na_first = na_first
        # a descending key is searched in a reversed copy, which ascends
        self.values = values if ascending else values[::-1].copy()
        self.nan_count = np.concatenate([[0], np.cumsum(mask)]) if mask is not None and mask.any() else None

    def equal_range(self, lo: int, hi: int, probes: np.ndarray, missing: np.ndarray | None) -> tuple:
        """Within rows ``lo:hi`` (equal on the earlier keys), the rows whose key equals each probe.

        Returns arrays ``(first, stop)``, one entry per probe; ``missing``
        marks probes that are NA.
        """
        nans = 0 if self.nan_count is None else int(self.nan_count[hi] - self.nan_count[lo])
        if self.na_first:
            nan_lo, nan_hi, v_lo, v_hi = lo, lo + nans, lo + nans, hi
        else:
            v_lo, v_hi, nan_lo, nan_hi = lo, hi - nans, hi - nans, hi
        first = np.full(len(probes), nan_lo, dtype=np.int64)
        stop = np.full(len(probes), nan_hi, dtype=np.int64)
        present = slice(None) if missing is None else ~missing  # NA probes would not compare
        if self.ascending:
            run = self.values[v_lo:v_hi]
            first[present] = v_lo + np.searchsorted(run, probes[present], "left")
            stop[present] = v_lo + np.searchsorted(run, probes[present], "right")
        else:
            run = self.values[self.n - v_hi:self.n - v_lo]
            first[present] = v_hi - np.searchsorted(run, probes[present], "right")
            stop[present] = v_hi - np.searchsorted(run, probes[present], "left")
        return first, stop


def _encoded_keys(spec: SortSpec, keys: list) -> list[tuple[np.ndarray, np.ndarray | None]]:
    return [_encode(k, spec.na_fill(i, k)) for i, k in enumerate(keys)]


def pivot_cuts(spec: SortSpec, part: Any, pivots: pd.DataFrame, chunk: int) -> np.ndarray:
    """For each pivot, how many rows of sorted partition ``chunk`` come no later than it.

    The first key is searched for all pivots at once; only pivots tying with
    some rows on it are searched further, one by one.
    """
    na_first = spec.na_position == "first"
    keys = [_SortedKey(v, m, asc, na_first)
            for (v, m), asc in zip(_encoded_keys(spec, spec.keys(part)), spec.orders)]
    probes = _encoded_keys(spec, [pivots[j] for j in range(len(keys))])
    lo, hi = keys[0].equal_range(0, len(part), *probes[0])
    for p in np.flatnonzero(lo < hi) if len(keys) > 1 else ():
        for j in range(1, len(keys)):
            values, mask = probes[j]
            first, stop = keys[j].equal_range(lo[p], hi[p], values[p:p + 1], None if mask is None else mask[p:p + 1])
            lo[p], hi[p] = first[0], stop[0]
            if lo[p] == hi[p]:
                break
    pivot_chunks, pivot_ranks = pivots["chunk"].to_numpy(), pivots["rank"].to_numpy()
    # rows tying with a pivot on every key come before it when their partition does; in the
    # pivot's own partition, those up to its rank do (the partition is in stable order)
    own = np.where(lo == hi, lo, pivot_ranks + 1)
    return np.where(chunk < pivot_chunks, hi, np.where(chunk > pivot_chunks, lo, own)).astype(np.int64)


# ----------------------------------------------------------------- chunk operators
class SortWhole(PandasOperator):
    """A pandas sorting method on one whole partition."""

    params = ("method", "kwargs")

    def execute(self, part: Any) -> Any:
        return getattr(part, self.method)(**self.kwargs)


class SortLocal(PandasOperator):
    """Stage 1: one partition sorted (stable); with ``ignore_index``, numbered from 0 (the only partition)."""

    params = ("spec", "ignore_index")

    def execute(self, part: Any) -> Any:
        result = self.spec.sort(part)
        return _renumbered(result, 0) if self.ignore_index else result


def _renumbered(part: Any, start: int) -> Any:
    return part.set_axis(pd.RangeIndex(start, start + len(part)), axis=0)


class SortSamples(PandasOperator):
    """Stage 1: evenly spaced rows of a sorted partition: key columns ``0..k-1``, place and weight."""

    params = ("spec", "size", "chunk")
    #: runs in the subtask that sorts its partition (see mars.core.fusion)
    tap = True

    def execute(self, part: Any) -> pd.DataFrame:
        n = len(part)
        s = min(n, self.size)
        ranks = ((np.arange(s) + 0.5) * (n / max(s, 1))).astype(np.int64)
        frame = pd.DataFrame({j: k.take(ranks).array for j, k in enumerate(self.spec.keys(part))})
        return frame.assign(chunk=self.chunk, rank=ranks, weight=n / max(s, 1), rows=n)


class SortCuts(PandasOperator):
    """Stage 2: where the pivots cut one sorted partition."""

    params = ("spec", "pivots", "chunk")

    def execute(self, part: Any) -> np.ndarray:
        return pivot_cuts(self.spec, part, self.pivots, self.chunk)


class SortSplit(ShuffleMap, PandasOperator):
    """Stage 3 (map): a sorted partition cut into runs, one per output partition: at ``cuts``, or, when no stage
    found them first, where the ``pivots`` cut it (partition ``chunk``, see :func:`pivot_cuts`)."""

    params = ("cuts", "spec", "pivots", "chunk")

    def split(self, part: Any) -> list:
        cuts = self.cuts if self.cuts is not None else pivot_cuts(self.spec, part, self.pivots, self.chunk).tolist()
        bounds = [0, *cuts, len(part)]
        # copies, not views: a view would keep the whole sorted partition alive until the last
        # reducer ran; copies let it go now, and each piece goes once its reducer ran
        return [part.iloc[a:b].copy() for a, b in itertools.pairwise(bounds)]


def _searchable(values: np.ndarray, ascending: bool) -> np.ndarray:
    """``values`` (numbers) mapped so that ascending numpy order is the sort's order (NaN stays last)."""
    if ascending:
        return values
    return -values if values.dtype.kind == "f" else ~values


def buckets_of(spec: SortSpec, part: Any, pivots: pd.DataFrame, chunk: int) -> np.ndarray:
    """Per row of unsorted partition ``chunk`` (one numeric key), its output partition: the pivots before it.

    A pivot stands before a row when its key does, or when the keys tie and
    the pivot's place (partition, position) does: so ties spread over the
    outputs in their original order.

    >>> spec = SortSpec("sort_values", None, (True,), "last", None)
    >>> pivots = pd.DataFrame({0: [2.0, 2.0], "chunk": [0, 1], "rank": [5, 0]})
    >>> buckets_of(spec, pd.Series([3.0, 2.0, np.nan, 1.0]), pivots, 0).tolist()
    [2, 0, 2, 0]
    """
    values = spec.keys(part)[0].to_numpy()
    keys = pivots[0].to_numpy()
    if keys.dtype != values.dtype:
        common = np.result_type(keys.dtype, values.dtype)
        keys, values = keys.astype(common), values.astype(common)
    ascending, na_first = spec.orders[0], spec.na_position == "first"
    key_nan = np.isnan(keys) if keys.dtype.kind == "f" else np.zeros(len(keys), dtype=bool)
    row_nan = np.isnan(values) if values.dtype.kind == "f" else None
    live = _searchable(keys[~key_nan], ascending)
    before = int(key_nan.sum()) if na_first else 0  # NaN pivots ahead of the numbers
    probes = _searchable(values, ascending)
    lo = _pivots_below(live, probes)
    tied = _tying(live, probes, lo)
    hi = lo.copy()
    hi[tied] = np.searchsorted(live, probes[tied], "right")
    lo += before
    hi += before
    if row_nan is not None and row_nan.any():
        nan_lo = 0 if na_first else len(live)
        lo[row_nan], hi[row_nan] = nan_lo, nan_lo + int(key_nan.sum())
    places = (pivots["chunk"].to_numpy().astype(np.int64) << 40) + pivots["rank"].to_numpy().astype(np.int64)
    tied = np.flatnonzero(lo < hi)
    buckets = lo.copy() if len(tied) else lo
    tied_lo = lo[tied]
    for start in np.unique(tied_lo):
        rows = tied[tied_lo == start]
        run = places[start:hi[rows[0]]]  # pivots tying with these rows, in place order
        buckets[rows] = start + np.searchsorted(run, (np.int64(chunk) << 40) + rows, "left")
    return buckets


def _tying(pivots: np.ndarray, probes: np.ndarray, below: np.ndarray) -> np.ndarray:
    """Which probes equal a pivot (``below``: how many pivots are below each, see :func:`_pivots_below`).

    A few pivots are compared with every probe, one pass each: gathering the pivot above each probe costs
    ten times as much.
    """
    if len(pivots) <= 16:
        tied = np.zeros(len(probes), dtype=bool)
        for p in pivots:
            tied |= probes == p
        return tied
    tied = below < len(pivots)
    tied[tied] = pivots[below[tied]] == probes[tied]
    return tied


def _pivots_below(pivots: np.ndarray, probes: np.ndarray) -> np.ndarray:
    """Per probe, how many of the (ascending) ``pivots`` are below it (NaN probes: none), as int64.

    A few pivots are counted by one comparison each, over all probes: a
    binary search per probe mispredicts its branches, and takes 2-4 times as long.
    """
    if len(pivots) > 16:
        below = np.searchsorted(pivots, probes, "left")
        return below if probes.dtype.kind != "f" else np.where(np.isnan(probes), 0, below)
    count = np.zeros(len(probes), dtype=np.uint8)
    for p in pivots:
        count += probes > p
    return count.astype(np.int64)


class SortBucket(ShuffleMap, PandasOperator):
    """Stage 2 (map) of a sort by one numeric key: an unsorted partition's rows, in their order, cut by
    output partition (:func:`buckets_of`)."""

    params = ("spec", "pivots", "chunk")

    def split(self, part: Any) -> list:
        n_out = len(self.pivots) + 1
        if n_out == 1:
            return [part]
        buckets = buckets_of(self.spec, part, self.pivots, self.chunk)
        ends = np.cumsum(np.bincount(buckets, minlength=n_out)).tolist()
        if not len(buckets) or (buckets[1:] >= buckets[:-1]).all():  # rows already in output order
            return [part.iloc[a:b] for a, b in itertools.pairwise([0, *ends])]
        order = np.argsort(buckets.astype(np.uint8 if n_out <= 256 else np.uint16 if n_out <= 65536 else np.int64),
                           kind="stable")  # a radix sort for small integers
        return [part.take(order[a:b]) for a, b in itertools.pairwise([0, *ends])]


class SortMerge(ShuffleReduce, PandasOperator):
    """Stage 3 (reduce): the runs for one output partition, sorted together.

    Runs come in partition order and each is in stable order, so a stable
    sort of their concatenation keeps ties in the original order.
    """

    params = ("spec", "offset")

    def combine(self, pieces: list) -> Any:
        kept = [p for p in pieces if len(p)] or pieces[:1]
        whole = kept[0] if len(kept) == 1 else pd.concat(kept)
        result = self.spec.sort(whole, runs=len(kept) > 1)
        return result if self.offset is None else _renumbered(result, self.offset)


# ----------------------------------------------------------------- the tileable operator
class SortRows(PandasOperator):
    """A sort of all rows: one pandas call when there is one partition, else the three stages."""

    params = ("spec", "ignore_index")

    @classmethod
    def tile(cls, op: SortRows) -> Generator[Any, Any, Tiled]:
        data, out, spec = op.inputs[0], op.outputs[0], op.spec
        if len(data.chunks) == 1:
            chunk = SortLocal(spec=spec, ignore_index=op.ignore_index).new_chunk(
                [data.chunks[0]], index=chunk_index_of(out.meta, 0), shape=data.chunks[0].shape, meta=out.meta)
            return Tiled([chunk], nsplits_of(out.meta, (data.chunks[0].shape[0],)))
        if not op.ignore_index and _numeric_key(spec, data.meta):
            return (yield from _tile_bucketed(op, _coalesced(data)))
        local = [SortLocal(spec=spec, ignore_index=False).new_chunk([c], index=c.index, shape=c.shape, meta=c.meta)
                 for c in _coalesced(data)]
        size = min(_MAX_SAMPLES, _SAMPLES_PER_PARTITION * len(local))
        samples = [SortSamples(spec=spec, size=size, chunk=i).new_chunk([c], index=(i,), shape=(np.nan,), meta=None)
                   for i, c in enumerate(local)]
        yield local + samples  # the sorted partitions stay held for the later stages
        values = yield Fetch(samples)
        rows = [int(v["rows"].iloc[0]) if len(v) else 0 for v in values]
        mappers = [i for i, n in enumerate(rows) if n] or [0]
        n_out = output_count(len(mappers), sum(rows))
        pivots = choose_pivots(spec, [values[i] for i in mappers], n_out)
        if not op.ignore_index:  # the outputs' sizes number nothing: each mapper finds its own cuts
            return _split_at_pivots(op, [local[i] for i in mappers], mappers, pivots, n_out)
        cut_chunks = [SortCuts(spec=spec, pivots=pivots, chunk=i).new_chunk([local[i]], index=(i,), shape=(np.nan,),
                                                                           meta=None) for i in mappers]
        cuts = yield Fetch(cut_chunks)
        sizes = _output_sizes([rows[i] for i in mappers], cuts, n_out)
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).tolist()
        meta = out.meta
        chunks = shuffle_chunks(
            [local[i] for i in mappers], n_out,
            lambda m: SortSplit(cuts=tuple(int(c) for c in cuts[m])),
            lambda r: SortMerge(spec=spec, offset=int(offsets[r]) if op.ignore_index else None),
            [{"index": chunk_index_of(meta, r), "shape": chunk_shape_of(meta, sizes[r]), "meta": meta}
             for r in range(n_out)],
            lambda m, r: {"index": (m, r), "shape": (np.nan,), "meta": data.meta},
        )
        return Tiled(chunks, nsplits_of(meta, sizes))


def _split_at_pivots(op: SortRows, parts: list, mappers: list, pivots: pd.DataFrame, n_out: int) -> Tiled:
    """The sorted partitions shuffled by the runs the pivots cut, each cut where its partition lies: no stage
    learns the cuts first (sizes known once the outputs ran)."""
    return _runs_sorted(op, parts, n_out, lambda m: SortSplit(cuts=None, spec=op.spec, pivots=pivots,
                                                              chunk=mappers[m]))


def _runs_sorted(op: SortRows, parts: list, n_out: int, make_map: Any) -> Tiled:
    """``parts`` cut into runs by ``make_map``'s op (per mapper), each output sorting its runs; sizes unknown."""
    meta = op.outputs[0].meta
    chunks = shuffle_chunks(
        parts, n_out, make_map, lambda r: SortMerge(spec=op.spec, offset=None),
        [{"index": chunk_index_of(meta, r), "shape": chunk_shape_of(meta, np.nan), "meta": meta}
         for r in range(n_out)],
        lambda m, r: {"index": (m, r), "shape": (np.nan,), "meta": op.inputs[0].meta},
    )
    return Tiled(chunks, nsplits_of(meta, (np.nan,) * n_out))


def _numeric_key(spec: SortSpec, meta: Any) -> bool:
    """Whether the rows are sorted by one key of plain numbers (numpy ints, unsigned ints or floats)."""
    if len(spec.orders) != 1 or spec.key is not None:
        return False
    if spec.method == "sort_index":
        key = meta.index
    elif spec.by is None:
        key = meta
    else:
        label = spec.by[0]
        key = meta[label] if label in meta.columns else meta.index.get_level_values(label) \
            if label in meta.index.names else None
    dtype = getattr(key, "dtype", None)
    return isinstance(key, (pd.Series, pd.Index)) and not isinstance(key, pd.MultiIndex) \
        and isinstance(dtype, np.dtype) and dtype.kind in "iuf"


def _tile_bucketed(op: SortRows, parts: list) -> Generator[Any, Any, Tiled]:
    """A sort by one numeric key in two stages: keys sampled from the unsorted partitions give the pivots;
    each partition's rows go to their output partition (:class:`SortBucket`), which sorts them.

    Every row is sorted and copied once on its way, not sorted in its
    partition first (the general stages' pivot cuts need sorted partitions).
    The output partitions' sizes are known once they ran.
    """
    spec = op.spec
    size = min(_MAX_SAMPLES, _UNSORTED_SAMPLES_PER_PARTITION * len(parts))
    samples = [SortSamples(spec=spec, size=size, chunk=i).new_chunk([c], index=(i,), shape=(np.nan,), meta=None)
               for i, c in enumerate(parts)]
    yield parts + samples  # the partitions stay held for the shuffle
    values = yield Fetch(samples)
    rows = [int(v["rows"].iloc[0]) if len(v) else 0 for v in values]
    mappers = [i for i, n in enumerate(rows) if n] or [0]
    n_out = output_count(len(mappers), sum(rows))
    pivots = choose_pivots(spec, [values[i] for i in mappers], n_out)
    return _runs_sorted(op, [parts[i] for i in mappers], len(pivots) + 1,
                        lambda m: SortBucket(spec=spec, pivots=pivots, chunk=mappers[m]))


def _coalesced(data: Any) -> list:
    """``data``'s chunks, or, when there are many small ones of known sizes, as many as the output will have."""
    rows = row_splits(data)
    if has_unknown(rows):
        return list(data.chunks)
    n_rows = int(sum(rows))
    n_out = output_count(sum(1 for r in rows if r), n_rows)
    if n_out >= len(rows):
        return list(data.chunks)
    return recut_chunks(data, [n_rows // n_out + (i < n_rows % n_out) for i in range(n_out)])


def output_count(n_inputs: int, n_rows: int) -> int:
    """How many partitions the sorted rows go to: as many as came in, unless many small ones came.

    Each input partition sends a piece to each output, so outputs of many
    tiny inputs are fewer, and hold at least ``_MIN_OUTPUT_ROWS`` rows.
    """
    if n_inputs <= _FEW_PARTITIONS:
        return n_inputs
    return min(n_inputs, max(_FEW_PARTITIONS, -(-n_rows // _MIN_OUTPUT_ROWS)))


def choose_pivots(spec: SortSpec, samples: list[pd.DataFrame], n_out: int) -> pd.DataFrame:
    """``n_out - 1`` sampled rows, in sort order, splitting the rows into even parts.

    Each sample stands for ``weight`` rows of its partition; pivot ``r`` is the
    first sample (in sort order) whose cumulative weight reaches ``r / n_out``
    of all rows.
    """
    kept = [s for s in samples if len(s)]
    if n_out == 1 or not kept:
        return samples[0].iloc[:0]
    pooled = pd.concat(kept, ignore_index=True)  # partition order: ties stay in their places' order
    ordered = pooled.take(spec.order_samples(pooled))
    weights = np.cumsum(ordered["weight"].to_numpy())
    targets = weights[-1] * np.arange(1, n_out) / n_out
    at = np.minimum(np.searchsorted(weights, targets, side="left"), len(ordered) - 1)
    return ordered.iloc[at].reset_index(drop=True)


def _output_sizes(rows: Sequence[int], cuts: Sequence[np.ndarray], n_out: int) -> list[int]:
    sizes = np.zeros(n_out, dtype=np.int64)
    for n, c in zip(rows, cuts):
        bounds = np.concatenate([[0], c, [n]])
        assert (np.diff(bounds) >= 0).all(), f"pivots cut a sorted partition out of order: {bounds}"
        sizes += np.diff(bounds)
    return sizes.tolist()


def _sorted(obj: Any, spec: SortSpec, ignore_index: bool, meta: Any) -> Any:
    data = as_data(obj)
    shape = (data.shape[0],) + tuple(meta.shape[1:])
    return SortRows(spec=spec, ignore_index=bool(ignore_index)).new_pandas([data], meta, shape)


class SortGathered(PandasOperator):
    """A pandas sort of all rows gathered in one partition (for options the partitioned sort lacks)."""

    params = ("method", "kwargs")

    @classmethod
    def tile(cls, op: SortGathered) -> Tiled:
        out = op.outputs[0]
        whole = single_chunk(op.inputs[0])
        chunk = SortWhole(method=op.method, kwargs=op.kwargs).new_chunk(
            [whole], index=chunk_index_of(out.meta, 0), shape=whole.shape, meta=out.meta)
        return Tiled([chunk], nsplits_of(out.meta, (whole.shape[0],)))


def _gathered(obj: Any, method: str, kwargs: dict, meta: Any) -> Any:
    data = as_data(obj)
    return SortGathered(method=method, kwargs=kwargs).new_pandas([data], meta, (data.shape[0],) + meta.shape[1:])


def _inplace(self: Any, result: Any, inplace: Any) -> Any:
    if inplace is True:
        self.data = as_data(result)
        return None
    return result


def _validated(meta: Any, method: str, kwargs: dict, inplace: Any) -> Any:
    """pandas' own call on the empty ``meta``: the errors (and warnings) pandas gives, and the output's meta."""
    kw = dict(kwargs)
    if inplace is not _NO_DEFAULT:
        kw["inplace"] = inplace
    target = meta.copy()
    result = getattr(target, method)(**kw)
    return empty_meta(target if result is None else result)


def _orders(ascending: Any, n_keys: int) -> tuple:
    if isinstance(ascending, (list, tuple)):
        return tuple(bool(a) for a in ascending[:n_keys])
    return (bool(ascending),) * n_keys


# ----------------------------------------------------------------- the methods
def _df_sort_values(self: DataFrame, by: Any, *, axis: Any = 0, ascending: Any = True, inplace: Any = _NO_DEFAULT,
                    kind: str = "quicksort", na_position: str = "last", ignore_index: bool = False,
                    key: Callable | None = None) -> DataFrame | None:
    """The rows sorted by the values of ``by`` (column or index-level labels), as ``pd.DataFrame.sort_values``.

    Ties keep their original order for every ``kind`` (pandas' default
    quicksort leaves them in an unspecified order). ``key`` is applied to
    each partition's key columns, so it must work row by row.

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"a": [3, 1, 2, 1], "b": list("wxyz")}, chunk_size=2)
    >>> df.sort_values("a").to_pandas()
       a  b
    1  1  x
    3  1  z
    2  2  y
    0  3  w
    """
    if axis in (1, "columns"):
        raise NotImplementedError("sort_values(axis=1) orders columns by row values, which are not known before "
                                  "running; compute the rows first (.to_pandas()) or transpose")
    kw = {"by": by, "axis": axis, "ascending": ascending, "kind": kind, "na_position": na_position,
          "ignore_index": ignore_index}
    meta = _validated(self.meta, "sort_values", kw, inplace)
    labels = by if isinstance(by, list) else [by]
    if not labels:
        return _inplace(self, DataFrame(self.data), inplace)
    spec = SortSpec("sort_values", tuple(labels), _orders(ascending, len(labels)), na_position, key)
    return _inplace(self, _sorted(self, spec, ignore_index, meta), inplace)


def _series_sort_values(self: Series, *, axis: Any = 0, ascending: Any = True, inplace: Any = _NO_DEFAULT,
                        kind: str = "quicksort", na_position: str = "last", ignore_index: bool = False,
                        key: Callable | None = None) -> Series | None:
    """The values sorted, as ``pd.Series.sort_values`` (ties keep their original order).

    >>> import mars.dataframe as md
    >>> md.Series([3.0, None, 1.0, 2.0], chunk_size=2).sort_values(na_position="first").to_pandas()
    1    NaN
    2    1.0
    3    2.0
    0    3.0
    dtype: float64
    """
    kw = {"axis": axis, "ascending": ascending, "kind": kind, "na_position": na_position, "ignore_index": ignore_index}
    meta = _validated(self.meta, "sort_values", kw, inplace)
    spec = SortSpec("sort_values", None, _orders(ascending, 1), na_position, key)
    return _inplace(self, _sorted(self, spec, ignore_index, meta), inplace)


def _sort_index(self: Any, *, axis: Any = 0, level: Any = None, ascending: Any = True, inplace: Any = _NO_DEFAULT,
                kind: str = "quicksort", na_position: str = "last", sort_remaining: bool = True,
                ignore_index: bool = False, key: Callable | None = None) -> Any:
    """The rows sorted by their index labels, as pandas' ``sort_index`` (ties keep their order).

    ``level`` (and ``key`` on a MultiIndex) sort all rows in one partition.

    >>> import mars.dataframe as md
    >>> md.Series([1, 2, 3], index=[2, 0, 1], chunk_size=2).sort_index().to_pandas()
    0    2
    1    3
    2    1
    dtype: int64
    """
    kw = {"axis": axis, "level": level, "ascending": ascending, "kind": kind, "na_position": na_position,
          "sort_remaining": sort_remaining, "ignore_index": ignore_index}
    meta = _validated(self.meta, "sort_index", kw, inplace)
    if axis in (1, "columns"):  # the column labels are known: every partition reorders its columns alike
        return _inplace(self, map_partitions("sort_index", self, meta=meta, **kw, key=key), inplace)
    multi = isinstance(self.meta.index, pd.MultiIndex)
    if level is not None or (multi and key is not None) or (not multi and isinstance(ascending, (list, tuple))):
        kw.update(kind="stable", key=key)
        del kw["axis"]
        return _inplace(self, _gathered(self, "sort_index", kw, meta), inplace)
    spec = SortSpec("sort_index", None, _orders(ascending, self.meta.index.nlevels), na_position, key)
    return _inplace(self, _sorted(self, spec, ignore_index, meta), inplace)


DataFrame.sort_values = _df_sort_values
Series.sort_values = _series_sort_values
DataFrame.sort_index = _sort_index
Series.sort_index = _sort_index
