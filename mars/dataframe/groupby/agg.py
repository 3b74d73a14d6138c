"""Grouped aggregation (``sum``, ``agg``, ``median``, ``apply``, ...): a tree or a shuffle.

How it chooses, at tile time:

1. One partition, or at most ``SINGLE_ROWS`` rows in all (sizes known, or
   learnt by the probe or the sampling below): pandas' own call on it (on the
   partitions end to end). Grouped by one integer column whose ranges in
   the partitions follow each other (a table stored in key order): pandas'
   call on each partition, no shuffle (:func:`ordered_ranges`). When those
   ranges are not in order but narrow together (sorted sums, counts, sizes
   and means), each partition's partials index their groups by key, with no
   hashing and no probe of the groups (:func:`dense_range`): a tree.
2. A call that does not split into partials (``median``, ``nunique``, a
   callable, ``apply``): a shuffle on the keys, then the call per partition.
3. Otherwise the distinct keys of the first two non-empty partitions are
   counted first (a hash table over the key columns, block by block; the
   partitions stay computed for what follows, except where each is made in
   one step from held data: only the two probed ones are made then, and the
   others in the subtasks of their partials, never written out whole).
   Few groups (``groups <= TREE_RATIO * rows``, or at most ``TREE_ROWS``)
   means partials shrink the data: a **tree** (per-partition partials with
   ``sort=False``, merged, finished in one chunk). Many groups means the
   partials are nearly as big as the rows and one merge would do all the work
   on one core: a **shuffle** on the keys, whose reducers each group a
   ``1/n`` slice of the keys (which also suits the cache: pandas is slower
   per row with a million groups than with a thousand).

Measured on the 2-core machine (10M rows in 8 partitions, an int key, two
float columns, ``agg({"x": "sum", "y": "mean"})``; best of 3-5 runs
interleaved with pandas', so ratios are to pandas timed alongside):

=========  ======  ===============  ===============
keys       pandas  tree             shuffle
=========  ======  ===============  ===============
1,000      0.17 s  0.071 s (0.42x)  0.25 s (1.48x)
10,000     0.21 s  0.083 s (0.41x)  0.30 s (1.46x)
100,000    0.26 s  0.24 s (0.92x)   0.36 s (1.41x)
200,000    0.29 s  0.33 s (1.11x)   0.44 s (1.49x)
300,000    0.30 s  0.42 s (1.39x)   0.35 s (1.13x)
1,000,000  0.93 s  1.15 s (1.24x)   0.45 s (0.49x)
=========  ======  ===============  ===============

The crossover is near 0.2 groups per row in a partition (200,000 keys give
0.16, 300,000 give 0.24), hence ``TREE_RATIO``; the choice costs one count
of distinct keys in two partitions (a few ms). Up to ``BLOCK_GROUPS`` groups
per partition, float sums and counts over an integer key are computed by
numpy a block of rows at a time (:func:`.tree.numpy_partials`): that is the
0.07 s at 1,000 keys, against 0.12 s for pandas' groupby per partition,
with a tenth of its memory.

With ``sort=True`` the shuffle is a *range* shuffle: keys sampled from every
partition give boundaries, so reducer ``r`` holds keys that sort before
reducer ``r + 1``'s, and the reducers' sorted results, end to end, are in
pandas' order with no sort afterwards. With ``sort=False`` it is a hash
shuffle and groups come in partition order (pandas gives first appearance,
which the tree keeps exactly).
"""

from __future__ import annotations

import itertools
from collections.abc import Generator, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...core.operator import Fetch, HeldData, Tiled
from ...core.options import options
from ...core.shuffle import shuffle_chunks
from ..core import (
    PandasOperator,
    chunk_index_of,
    chunk_shape_of,
    nsplits_of,
    row_splits,
)
from ..custom_reduction import CustomReduction
from ..datasource import int_range
from ..held import UNKNOWN, held_bound, held_range, held_source
from ..map import align_row_inputs
from ..rows import ConcatChunks, known_rows, recut_chunks, renumber_rows
from .keys import ALIGNED, GroupSpec, boundaries
from .shuffle import (
    BLOCK_ROWS,
    GroupCall,
    GroupReduce,
    KeyCount,
    KeySample,
    KeySplit,
    index_free,
)
from .tree import FinishPartials, GroupPartial, MergePartials

#: the tree is used when the probed partitions have at most this many groups per row ...
TREE_RATIO = 0.2
#: ... or at most this many groups (small data: one merge is cheap whatever the ratio)
TREE_ROWS = 20_000
#: inputs of at most this many rows (all partitions together, once known) are grouped by one pandas call
#: on their concatenation: pandas groups 100,000 rows in a few ms, less than a probe, a sample or a
#: shuffle's extra stages cost (TPC-H Q11 groups 32,000 rows of a merge)
SINGLE_ROWS = 100_000
#: partial rows a single merge takes at once; beyond this, partials merge in a tree of options.combine_size
FLAT_MERGE_ROWS = 2_000_000
#: partitions with at most this many groups may get their partials from numpy, BLOCK_ROWS rows at a time;
#: with more, merging the blocks' partials would cost more than it saves
BLOCK_GROUPS = BLOCK_ROWS // 16


def aligned_partitions(datas: Sequence[Any], modes: Sequence[str]) -> Generator[Any, Any, list[list]]:
    """Per partition of ``datas[0]``, its chunk and the matching chunk of each lazy key."""
    obj, keys = datas[0], list(datas[1:])
    by_index = [i for i, m in enumerate(modes) if m == ALIGNED]
    key_chunks: dict[int, list] = {}
    if by_index:
        aligned = yield from align_row_inputs([obj] + [keys[i] for i in by_index], how="left")
        obj_chunks, splits = aligned[0][0], aligned[0][1]
        for i, (chunks, _, _) in zip(by_index, aligned[1:]):
            key_chunks[i] = chunks
    else:
        obj_chunks = list(obj.chunks)
        splits = row_splits(obj)
        if modes:
            splits = yield from known_rows(obj)
    for i, mode in enumerate(modes):
        if mode != ALIGNED:
            rows = yield from known_rows(keys[i])
            if sum(rows) != sum(splits):
                raise ValueError("Grouper and axis must be same length")
            key_chunks[i] = recut_chunks(keys[i], splits)
    return [[c] + [key_chunks[i][p] for i in range(len(keys))] for p, c in enumerate(obj_chunks)]


def probe_groups(spec: GroupSpec, parts: list[list]) -> Generator[Any, Any, float | None]:
    """Groups per partition, when few enough for a tree (partials merged on one core); else None.

    Counts the distinct keys of the first two partitions not known to be
    empty (all partitions are computed, and stay so for what follows).
    """
    probed = [p for p, chunks in enumerate(parts) if chunks[0].shape[0] != 0][:2] or [0]
    counts = [KeyCount(spec=spec).new_chunk(parts[p], index=(i,), shape=(2,), meta=None) for i, p in enumerate(probed)]
    # every partition, not just the probed ones, unless each is one step from held data: both plans read them
    # all, and computing two of a shuffle's outputs now and the others later would run its mappers twice
    kept = parts if not _one_step_from_held(parts) else [parts[p] for p in probed]
    yield counts + [c for p in kept for c in p]
    rows, groups = np.sum((yield Fetch(counts)), axis=0)
    if groups <= TREE_ROWS or groups <= TREE_RATIO * rows:
        return groups / len(probed)
    return None


def _one_step_from_held(parts: list[list]) -> bool:
    """Whether every chunk of ``parts`` is made by one op from held data or from sources of its own (chunks
    with no inputs that no other partition reads): computing some partitions now and the others later then
    recomputes nothing, and the others, left to the tree's partials, are made in their subtasks
    (:class:`.tree.GroupPartial` ``fuses_inputs``) instead of being written out whole.
    """
    read: set[str] = set()
    for chunk in (c for p in parts for c in p):
        for i in chunk.op.inputs:
            if isinstance(i.op, HeldData):
                continue
            if i.op.inputs or i.key in read:
                return False
            read.add(i.key)
    return True


class GroupByAgg(PandasOperator):
    """A grouped aggregation; ``plan`` (outputs from partials) is None when it needs whole groups.

    ``call`` is ``(method, args, kwargs)`` as the user called it, ``layout``
    turns the tree's ``as_index=True`` result into ``as_index=False``'s, and
    ``columns`` are the columns a shuffle moves (None: all). ``distinct``
    (``(subset, keep)``, set by the optimizer) aggregates the rows that
    ``drop_duplicates(subset, keep)`` keeps: the shuffle on the group keys
    (a part of ``subset``) brings repeats together, so each reducer drops
    them itself and no shuffle of their own is needed.
    """

    params = ("spec", "call", "plan", "partials", "index_meta", "layout", "columns", "distinct")

    @classmethod
    def tile(cls, op: GroupByAgg) -> Generator[Any, Any, Tiled]:
        parts = yield from aligned_partitions(op.inputs, op.spec.modes)
        if len(parts) == 1 or small_input(op, parts):
            return single_tiled(op, parts)
        if range_checkable(op, parts):
            # keys known to lie in a narrow range take the dense tree at once; otherwise the exact ranges
            # (and, where a stage reads them, the partitions' sizes) decide
            dense = dense_range(op, parts, key_bounds(op.spec, parts))
            if dense is None:
                ranges = yield from key_ranges(op.spec, parts)
                if small_input(op, parts):
                    return single_tiled(op, parts)
                if ranges is not None and ordered_ranges(ranges):
                    return per_partition_tiled(op, parts, ranges)
                dense = dense_range(op, parts, ranges) if ranges is not None else None
            if dense is not None:
                partials = [GroupPartial(spec=op.spec, partials=op.partials, dense=dense).new_chunk(
                    p, index=(i,), shape=(np.nan,), meta=None) for i, p in enumerate(parts)]
                return tree_tiled(op, partials, dense[1] * len(parts))
        if op.plan is not None and op.distinct is None:
            groups = yield from probe_groups(op.spec, parts)
            if small_input(op, parts):  # the probe computed the partitions: their sizes are known now
                return single_tiled(op, parts)
            if groups is not None:
                block = BLOCK_ROWS if groups <= BLOCK_GROUPS else None
                partials = [GroupPartial(spec=op.spec, partials=op.partials, block_rows=block).new_chunk(
                    p, index=(i,), shape=(np.nan,), meta=None) for i, p in enumerate(parts)]
                return tree_tiled(op, partials, groups * len(parts))
        return (yield from shuffle_tiled(op, parts))


def _whole_calls(op: GroupByAgg, parts: list[list]) -> bool:
    """Whether pandas' call may run on whole partitions: no lazy keys, and no :class:`CustomReduction` (which
    runs in its stages whatever the data: its stages are its contract)."""
    return all(len(p) == 1 for p in parts) and not any(isinstance(k, CustomReduction) for k, _ in op.partials or ())


def small_input(op: GroupByAgg, parts: list[list]) -> bool:
    """Whether the partitions (no lazy keys) are known to hold at most ``SINGLE_ROWS`` rows in all."""
    if not _whole_calls(op, parts):
        return False
    rows = sum(p[0].shape[0] for p in parts)
    return not np.isnan(rows) and rows <= SINGLE_ROWS  # a size not known yet is not small


def single_tiled(op: GroupByAgg, parts: list[list]) -> Tiled:
    """pandas' own call on the one partition, or on all partitions end to end (:func:`small_input`)."""
    out = op.outputs[0]
    inputs = parts[0]
    if len(parts) > 1:
        chunks = [p[0] for p in parts]
        meta = op.inputs[0].meta
        rows = sum(c.shape[0] for c in chunks)
        inputs = [ConcatChunks().new_chunk(chunks, index=chunk_index_of(meta, 0), shape=chunk_shape_of(meta, rows),
                                           meta=meta)]
    chunk = GroupCall(spec=op.spec, call=op.call, meta=None, distinct=op.distinct).new_chunk(
        inputs, index=chunk_index_of(out.meta, 0), shape=chunk_shape_of(out.meta, np.nan), meta=out.meta)
    return Tiled([chunk], nsplits_of(out.meta, (np.nan,)))


class KeyRange(PandasOperator):
    """A partition's smallest and largest key (one integer key column) as an int64 2-array; empty when the
    partition is empty; one element when the keys have no int64 range (uint64 keys from 2**63, or keys of
    another dtype): see :func:`key_ranges`."""

    params = ("column",)
    #: a selection of held data it reads is made in its own subtask; a computed partition it reads, in the
    #: subtask that makes it (see mars.core.fusion)
    fuses_inputs = True
    tap = True

    def execute(self, part: Any) -> np.ndarray:
        column = part[self.column] if isinstance(part, pd.DataFrame) and self.column in part.columns else None
        if isinstance(column, pd.Series) and not len(column):
            return np.zeros(0, dtype=np.int64)
        found = int_range(column)
        return np.array(found, dtype=np.int64) if found is not None else np.zeros(1, dtype=np.int64)


def dense_range(op: GroupByAgg, parts: list[list], ranges: list) -> tuple[int, int] | None:
    """``(low, span)`` when the keys' range across partitions is narrow enough to index the groups of a
    sorted tree aggregation of sums and counts directly (:func:`.tree.dense_partials`); else None.

    Narrow means at most ``TREE_ROWS`` keys, or ``TREE_RATIO`` of a partition's
    rows: the groups are then few enough for a tree, with no probe of them.
    """
    spans = [r for r in ranges if r is not None]
    if not spans or op.plan is None or op.distinct is not None or not op.spec.sort \
            or not all(kind in ("sum", "count", "size") for kind, _ in op.partials):
        return None
    low, high = min(r[0] for r in spans), max(r[1] for r in spans)
    span = high - low + 1
    rows = [p[0].shape[0] for p in parts]
    per_part = np.nan if any(np.isnan(r) for r in rows) else sum(rows) / len(rows)
    if span <= TREE_ROWS or (not np.isnan(per_part) and span <= TREE_RATIO * per_part):
        return low, span
    return None


def range_checkable(op: GroupByAgg, parts: list[list]) -> bool:
    """Whether the groups are keyed by one integer column whose ranges per partition are worth checking."""
    spec = op.spec
    if not _whole_calls(op, parts) or spec.level is not None or spec.modes or type(spec.by) is list \
            or not spec.observed:
        return False
    meta = op.inputs[0].meta
    if not isinstance(meta, pd.DataFrame) or not meta.columns.is_unique:
        return False
    try:
        dtype = meta.dtypes[spec.by] if spec.by in meta.columns else None
    except TypeError:  # an unhashable key: a function or a mapping
        return False
    return isinstance(dtype, np.dtype) and dtype.kind in "iu"


def key_ranges(spec: GroupSpec, parts: list[list]) -> Generator[Any, Any, list | None]:
    """Each partition's key range ``(lo, hi)`` (None when empty), or None when some partition's keys have no
    int64 range; the partitions are computed, and stay so, but for held data and selections of it (each
    reader makes its own: see :func:`mars.core.fusion.fuse`).

    The ranges of data the client uploaded are known already (``HeldData.ranges``): those take no stage.
    """
    known = [held_range(p[0], spec.by) for p in parts]
    todo = [i for i, r in enumerate(known) if r is UNKNOWN]
    if not todo:
        return known
    ranges = [KeyRange(column=spec.by).new_chunk(parts[i], index=(i,), shape=(np.nan,), meta=None) for i in todo]
    yield ranges + [c for p in parts for c in p if held_source(c) is None]
    for i, r in zip(todo, (yield Fetch(ranges))):
        if len(r) == 1:
            return None
        known[i] = (int(r[0]), int(r[1])) if len(r) == 2 else None
    return known


def key_bounds(spec: GroupSpec, parts: list[list]) -> list:
    """Each partition's bound of its keys known without running it (:func:`.held.held_bound`: the range of
    the uploaded column they come from through filters, merges and the like), None when empty; an empty
    list when some partition's is not known, or when all are exactly (:func:`key_ranges` takes those).

    Only the dense plan takes these: the other plans also need what a
    :class:`KeyRange` stage learns, the partitions' sizes, which a bound
    through a filter or a merge does not give.
    """
    if all(held_range(p[0], spec.by) is not UNKNOWN for p in parts):
        return []
    bounds = [held_bound(p[0], spec.by) for p in parts]
    return [] if any(b is UNKNOWN for b in bounds) else bounds


def ordered_ranges(ranges: list) -> bool:
    """Whether the non-empty partitions' key ranges follow each other (a table stored in key order, such as
    TPC-H's lineitem by l_orderkey), meeting at most in one key where one ends and the next starts.

    Once each such shared key's rows join the earlier partition (:class:`ShareBoundary`), every group lies
    in one partition, and the partitions' own results, end to end, are the whole result in pandas' order
    (sorted, or first seen). A partition of one key shared on both sides is not covered.
    """
    spans = [r for r in ranges if r is not None]
    if len(spans) < 2 or not all(a[1] <= b[0] for a, b in itertools.pairwise(spans)):
        return False
    return not any(a[1] == b[0] and b[0] == b[1] for a, b in itertools.pairwise(spans))


class ShareBoundary(PandasOperator):
    """A partition without the rows of the key it shares with the one before (``drop``), with the next
    partition's rows of the key it shares with it (``take``; ``following`` holds just those rows, cut by
    :class:`KeyRows` where that partition lies, so the partition itself never travels between workers).

    It runs in the subtask of the call that reads it (``fusible``): the recut partition is never written out.
    """

    params = ("column", "drop", "take")
    fusible = True

    def execute(self, part: Any, following: Any = None) -> Any:
        if self.drop is not None:
            part = _rows_of_key(part, self.column, self.drop, keep=False)
        if self.take is not None:
            part = pd.concat([part, following])
        return part


class KeyRows(PandasOperator):
    """A copy of the rows of a partition whose ``column`` is ``value`` (the few rows it gives to the partition
    before). Not ``fusible``: it runs apart, next to its partition, and only its small result moves; a
    selection it reads is made in its own subtask (``fuses_inputs``). In an embedded session, where all the
    data is in one process (``fuses_near``), it runs in its reader's subtask instead, which then waits for no
    other (mars.core.fusion)."""

    params = ("column", "value")
    fuses_inputs = True
    fuses_near = True

    def execute(self, part: Any) -> Any:
        return _rows_of_key(part, self.column, self.value, keep=True).copy()


def _rows_of_key(part: pd.DataFrame, column: Any, key: Any, keep: bool) -> pd.DataFrame:
    """The rows whose ``column`` is ``key`` (``keep``) or the others: a slice, not a copy, when those rows come
    first (a partition in key order)."""
    values = part[column].to_numpy()
    hit = values == key
    n = int(hit.sum())
    if hit[:n].all():
        return part.iloc[:n] if keep else part.iloc[n:]
    return part[hit] if keep else part[~hit]


def _whole_groups(column: Any, parts: list[list], ranges: list) -> list:
    """Each partition's chunk, recut so that no key is in two partitions (see :func:`ordered_ranges`)."""
    live = [i for i, r in enumerate(ranges) if r is not None]
    after = dict(itertools.pairwise(live))
    before = {b: a for a, b in after.items()}
    out = []
    for i, p in enumerate(parts):
        prev, nxt = before.get(i), after.get(i)
        drop = ranges[i][0] if prev is not None and ranges[prev][1] == ranges[i][0] else None
        take = ranges[i][1] if nxt is not None and ranges[nxt][0] == ranges[i][1] else None
        if drop is None and take is None:
            out.append(p[0])
            continue
        inputs = [p[0]]
        if take is not None:
            following = parts[nxt][0]
            inputs.append(KeyRows(column=column, value=take).new_chunk(
                [following], index=following.index, shape=(np.nan,) + tuple(following.shape[1:]), meta=None))
        out.append(ShareBoundary(column=column, drop=drop, take=take).new_chunk(
            inputs, index=p[0].index, shape=(np.nan,) + tuple(p[0].shape[1:]), meta=None))
    return out


def per_partition_tiled(op: GroupByAgg, parts: list[list], ranges: list) -> Tiled:
    """pandas' call on each partition, its groups made whole (:func:`ordered_ranges`)."""
    meta = op.outputs[0].meta
    chunks = [GroupCall(spec=op.spec, call=op.call, meta=meta, distinct=op.distinct).new_chunk(
        [c], index=chunk_index_of(meta, i), shape=chunk_shape_of(meta, np.nan), meta=meta)
        for i, c in enumerate(_whole_groups(op.spec.by, parts, ranges))]
    if not op.spec.as_index:
        chunks = _renumbered(chunks, meta)
    return Tiled(chunks, nsplits_of(meta, (np.nan,) * len(chunks)))


def tree_tiled(op: GroupByAgg, partials: list, expected_rows: float) -> Tiled:
    """Partials merged in a tree (flat when they are small), finished in one chunk."""
    out = op.outputs[0]
    size = options.combine_size
    flat = not np.isnan(expected_rows) and expected_rows <= FLAT_MERGE_ROWS
    while not flat and len(partials) > size:
        partials = [MergePartials(partials=op.partials, observed=op.spec.observed).new_chunk(
            partials[i:i + size], index=(i // size,), shape=(np.nan,), meta=None)
            for i in range(0, len(partials), size)]
    finish = FinishPartials(partials=op.partials, outs=op.plan, meta=op.index_meta, spec=op.spec, layout=op.layout)
    chunk = finish.new_chunk(partials, index=chunk_index_of(out.meta, 0), shape=chunk_shape_of(out.meta, np.nan),
                             meta=out.meta)
    return Tiled([chunk], nsplits_of(out.meta, (np.nan,)))


def sampled_bounds(spec: GroupSpec, parts: list[list]) -> Generator[Any, Any, pd.DataFrame | None]:
    """Range boundaries from keys sampled in every partition (None: no sort, so a hash shuffle)."""
    if not spec.sort:
        return None
    samples = [KeySample(spec=spec, seed=i).new_chunk(p, index=(i,), shape=(np.nan,), meta=None)
               for i, p in enumerate(parts)]
    # the partitions are computed here: keep them for the shuffle rather than compute them twice
    yield samples + [c for p in parts for c in p]
    return boundaries((yield Fetch(samples)), len(parts))


def _shuffled(op: Any, inputs: list, n: int, make_map: Any, make_reduce: Any) -> Tiled:
    meta = op.outputs[0].meta
    reducers = shuffle_chunks(
        inputs, n, make_map, make_reduce,
        [{"index": chunk_index_of(meta, r), "shape": chunk_shape_of(meta, np.nan), "meta": meta} for r in range(n)],
        lambda i, r: {"index": (i, r), "shape": (np.nan,), "meta": None},
    )
    if not op.spec.as_index:
        reducers = _renumbered(reducers, meta)
    return Tiled(reducers, nsplits_of(meta, (np.nan,) * len(reducers)))


def shuffle_tiled(op: GroupByAgg, parts: list[list]) -> Generator[Any, Any, Tiled]:
    """Whole groups per partition (a range shuffle when sorting, else hash), then the call on each.

    With ``observed=False`` every partition would list every unobserved
    category: all groups then meet in one partition.
    """
    spec, meta = op.spec, op.outputs[0].meta
    if not spec.observed:
        bounds, n = None, 1
    else:
        bounds = yield from sampled_bounds(spec, parts)
        if small_input(op, parts):  # sampling computed the partitions: their sizes are known now
            return single_tiled(op, parts)
        n = len(bounds) + 1 if bounds is not None else len(parts)
    drop = index_free(spec, op.call, op.inputs[0].meta)
    return _shuffled(
        op, parts, n,
        lambda i: KeySplit(spec=spec, bounds=bounds, columns=op.columns, chunk=None, travel=(), drop_index=drop),
        lambda r: GroupReduce(spec=spec, call=op.call, meta=meta, distinct=op.distinct, drop_index=drop))


class Renumber(PandasOperator):
    """A default (0-based range) index continued from the partitions before: ``as_index=False`` results.

    ``offset`` None: the sum of the count inputs, the rows of the partitions before (see :func:`renumber_rows`).
    """

    params = ("offset",)
    fusible = True

    def execute(self, value: Any, *counts: Any) -> Any:
        offset = sum(int(c) for c in counts) if counts else self.offset
        index = value.index
        if offset and isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1:
            return value.set_axis(pd.RangeIndex(offset, offset + len(value)), axis=0)
        return value


def _renumbered(chunks: list, meta: Any) -> list:
    """``chunks`` numbered across as they run: no tiling stage computes them first."""
    return renumber_rows(chunks, meta, first_numbered=True, renumber=lambda start: Renumber(offset=start))[0]


def keys_as_columns(result: Any) -> pd.DataFrame:
    """``as_index=False`` layout of an ``as_index=True`` result, as pandas inserts the keys."""
    if isinstance(result, pd.Series):
        result = result.to_frame()
    index = result.index
    n = index.nlevels
    for level in reversed(range(n)):
        name = index.names[level]
        if name is None:
            name = "index" if n == 1 else f"level_{level}"
        if name not in result.columns:
            if isinstance(result.columns, pd.MultiIndex) and not isinstance(name, tuple):
                name = (name,) + ("",) * (result.columns.nlevels - 1)
            result.insert(0, name, index.get_level_values(level))
    result.index = pd.RangeIndex(len(result))
    return result


def sizes_as_frame(result: pd.Series) -> pd.DataFrame:
    """``size()``'s ``as_index=False`` layout."""
    return result.rename("size").reset_index()
