"""Distinct values: ``value_counts``, ``unique``, ``nunique``, ``drop_duplicates``, ``duplicated``, ``isin``.

Each partition first reduces itself: its distinct keys, each with where it
first appears (partition, position) and, for value_counts, how often. How
those partials are merged is chosen at tiling time, once their sizes are known:

- a **tree** (groups of ``options.combine_size``, as for any reduction) when
  the partials hold at most :data:`TREE_MAX_ROWS` rows in all: few distinct
  keys, so one task can merge them all;
- a **hash shuffle** otherwise: the partials' rows go by the hash of their
  key to one of as many reducers as there are partitions, each merging a
  disjoint share of the keys, so no task holds them all.

Either way pandas' order is kept: value_counts sorts the merged keys by
first appearance, then (stable) by count, as pandas does; drop_duplicates
sends each partition the positions of its kept rows, so every partition
keeps its own rows, in order, in place.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np
import pandas as pd

from ..core.entity import Tileable
from ..core.operator import Tiled
from ..core.options import options
from ..core.shuffle import ShuffleMap, ShuffleReduce, shuffle_chunks
from ..core.tiling import as_data
from ..tensor.core import Tensor, TensorData, TensorOperator
from .core import (
    DataFrame,
    Index,
    PandasData,
    PandasOperator,
    Series,
    chunk_index_of,
    chunk_shape_of,
    nsplits_of,
)
from .datasource import from_tensor
from .held import UNKNOWN, held_bound
from .map import Whole, map_partitions
from .meta import empty_meta, infer
from .reduction import tree_reduce
from .reductions import Gather, Reducer, run_reducer
from .rows import renumbered
from .shuffle import ConcatPieces, HashSplit, narrow_codes

__all__: list[str] = []

#: partial rows (distinct keys summed over partitions) up to which a tree merges them; above, a hash shuffle
TREE_MAX_ROWS = 1_000_000

#: where a partial's key first appears: ``partition << POSITION_BITS | position``
POSITION_BITS = 40


def _merge_chunks(partials: list, merge: PandasOperator, meta: Any, by: Any, total: float | None = None) -> list:
    """The partials merged: one chunk by a tree when small (their rows, or the ``total`` bound on them), else one
    per hash partition (of key ``by``)."""
    total = sum(c.shape[0] for c in partials) if total is None else total
    if total <= TREE_MAX_ROWS or len(partials) == 1:
        size = options.combine_size
        while len(partials) > 1:
            partials = [merge.copy().new_chunk(partials[i:i + size], index=chunk_index_of(meta, i // size),
                                               shape=chunk_shape_of(meta, np.nan), meta=meta)
                        for i in range(0, len(partials), size)]
        return partials
    n = len(partials)
    pieces = shuffle_chunks(
        partials, n, lambda i: HashSplit(by=by, cast=None), lambda r: ConcatPieces(meta=meta),
        [{"index": chunk_index_of(meta, r), "shape": chunk_shape_of(meta, np.nan), "meta": meta} for r in range(n)],
        lambda i, r: {"index": (i, r), "shape": (np.nan,), "meta": meta})
    return [merge.copy().new_chunk([p], index=p.index, shape=p.shape, meta=meta) for p in pieces]


# ----------------------------------------------------------------- value_counts
class LocalCounts(PandasOperator):
    """A partition's counts by key (pandas' value_counts, unsorted) and where each key first appears."""

    params = ("kwargs", "part")
    fusible = True

    def execute(self, value: Any) -> pd.DataFrame:
        counts = value.value_counts(sort=False, **self.kwargs)
        first = (np.int64(self.part) << POSITION_BITS) + np.arange(len(counts), dtype=np.int64)
        return pd.DataFrame({"count": counts.to_numpy(), "first": first}, index=counts.index)


class MergeCounts(PandasOperator):
    """Partials of value_counts merged: counts summed, first appearance the earliest."""

    params = ()

    def execute(self, *partials: Any) -> pd.DataFrame:
        kept = [p for p in partials if len(p)] or list(partials[:1])
        frame = pd.concat(kept) if len(kept) > 1 else kept[0]
        levels = list(range(frame.index.nlevels))
        merged = frame.groupby(level=levels, sort=False, dropna=False).agg({"count": "sum", "first": "min"})
        if isinstance(frame.index, pd.MultiIndex) and not isinstance(merged.index, pd.MultiIndex):
            merged.index = pd.MultiIndex.from_arrays([merged.index], names=frame.index.names)
        return merged


class FinishCounts(PandasOperator):
    """value_counts' result from the merged partials: pandas' order, name and normalization."""

    params = ("sort", "ascending", "normalize", "name")

    def execute(self, *merged: Any) -> pd.Series:
        frame = pd.concat(merged) if len(merged) > 1 else merged[0]
        first, count = frame["first"].to_numpy(), frame["count"].to_numpy()
        # pandas: keys in order of first appearance, then a stable sort by count; one lexsort does both
        order = np.lexsort((first, count if self.ascending else -count)) if self.sort else np.argsort(first, kind="stable")
        counts = frame["count"].iloc[order].rename(self.name)
        if self.normalize:
            counts = counts / counts.sum()
        return counts


class ValueCounts(PandasOperator):
    """value_counts: local counts, merged by a tree or a hash shuffle, then sorted as pandas sorts."""

    params = ("kwargs", "sort", "ascending", "normalize")

    @classmethod
    def tile(cls, op: ValueCounts) -> Generator[Any, Any, Tiled]:
        data, out = op.inputs[0], op.outputs[0]
        partial = pd.DataFrame({"count": np.zeros(0, np.int64), "first": np.zeros(0, np.int64)}, index=out.meta.index)
        local = [LocalCounts(kwargs=op.kwargs, part=i).new_chunk(
            [c], index=chunk_index_of(partial, i), shape=chunk_shape_of(partial, np.nan), meta=partial)
            for i, c in enumerate(data.chunks)]
        if len(local) > 1:
            yield local  # their sizes choose the plan
        merged = _merge_chunks(local, MergeCounts(), partial, "index")
        finish = FinishCounts(sort=op.sort, ascending=op.ascending, normalize=op.normalize, name=out.meta.name)
        chunk = finish.new_chunk(merged, index=(0,), shape=(np.nan,), meta=out.meta)
        return Tiled([chunk], ((np.nan,),))


def _value_counts(self: Any, normalize: bool = False, sort: bool = True, ascending: bool = False, bins: Any = None,
                  dropna: bool = True) -> Series:
    """Counts of distinct values, most frequent first (ties in order of first appearance), like pandas.

    >>> import mars.dataframe as md
    >>> md.Series(["b", "a", "b"], chunk_size=2).value_counts().to_pandas().to_dict()
    {'b': 2, 'a': 1}
    """
    data = as_data(self)
    kwargs = {"dropna": dropna}
    meta = infer(lambda m: m.value_counts(normalize=normalize, sort=sort, ascending=ascending, bins=bins,
                                          dropna=dropna), data.meta)
    if bins is not None:
        kw = {"normalize": normalize, "sort": sort, "ascending": ascending, "bins": bins, "dropna": dropna}
        reducer = Gather(name="value_counts", args=(), kwargs=kw, positions=None, meta=data.meta)
        return run_reducer(data, reducer, meta)
    op = ValueCounts(kwargs=kwargs, sort=sort, ascending=ascending, normalize=normalize)
    return op.new_pandas([data], meta, (np.nan,))


def _df_value_counts(self: DataFrame, subset: Any = None, normalize: bool = False, sort: bool = True,
                     ascending: bool = False, dropna: bool = True) -> Series:
    """Counts of distinct rows (of ``subset`` columns), like pandas: a Series on a MultiIndex.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 1, 2]}, chunk_size=2).value_counts().to_pandas().tolist()
    [2, 1]
    """
    data = as_data(self)
    meta = empty_meta(data.meta.value_counts(subset=subset, normalize=normalize, sort=sort, ascending=ascending,
                                             dropna=dropna))
    op = ValueCounts(kwargs={"subset": subset, "dropna": dropna}, sort=sort, ascending=ascending, normalize=normalize)
    return op.new_pandas([data], meta, (np.nan,))


# ----------------------------------------------------------------- distinct rows
def _keys(value: Any, subset: list | None) -> pd.DataFrame:
    """The keys of a partition's rows as a frame with columns 0..m-1 and a default index."""
    if isinstance(value, pd.Index):
        keys = value.to_frame(index=False) if isinstance(value, pd.MultiIndex) else value.to_frame(index=False, name=0)
    elif isinstance(value, pd.Series):
        keys = value.to_frame(name=0).reset_index(drop=True)
    else:
        keys = value.iloc[:, subset] if subset is not None else value
        keys = keys.reset_index(drop=True)
    return keys.set_axis(range(keys.shape[1]), axis=1)


def packed_keys(keys: pd.DataFrame) -> np.ndarray | None:
    """Integer key columns packed into one int64 per row (each column offset by its minimum, in as many bits as
    its range needs) when they fit in 63 bits, else None: equal rows give equal numbers and unequal rows
    unequal ones, so one hash table over one column finds the duplicates (pandas factorizes every column).

    >>> packed_keys(pd.DataFrame({0: [5, 6, 5], 1: [1, 1, 1]})).tolist()
    [0, 1, 0]
    """
    # the dtypes first: a column of strings made into an array only to be turned down costs more than the rest
    if not keys.shape[1] or not len(keys) or any(not isinstance(d, np.dtype) or d.kind not in "iub"
                                                  for d in keys.dtypes):
        return None
    columns = [keys.iloc[:, i].to_numpy() for i in range(keys.shape[1])]
    packed = np.zeros(len(columns[0]), dtype=np.int64)
    bits = 0
    for c in columns:
        low, high = int(c.min()), int(c.max())
        width = (high - low).bit_length()
        if bits + width > 63:
            return None
        if width:
            # offsets from the minimum fit in int64 (width <= 63); unsigned ones are taken in their own type first
            offset = (c - c.dtype.type(low)).astype(np.int64) if c.dtype.kind == "u" else c.astype(np.int64) - low
            packed |= offset << bits
        bits += width
    return packed


def duplicated_keys(keys: pd.DataFrame, keep: Any) -> np.ndarray:
    """pandas' duplicated of the key rows (a single key column, or integer ones packed into one, take the faster
    Series path)."""
    if keys.shape[1] == 1:
        return keys.iloc[:, 0].duplicated(keep=keep).to_numpy()
    packed = packed_keys(keys)
    if packed is not None:
        return pd.Series(packed, copy=False).duplicated(keep=keep).to_numpy()
    return keys.duplicated(keep=keep).to_numpy()


def merge_distinct(frame: pd.DataFrame, n_keys: int, keep: Any) -> pd.DataFrame:
    """One row per distinct key: the first (or last) occurrence; for ``keep=False``, whether it repeats."""
    keys = frame.iloc[:, :n_keys]
    if keep == "last":
        return frame[~duplicated_keys(keys, "last")]
    first = ~duplicated_keys(keys, "first")
    if keep == "first":
        return frame[first]
    repeated = frame["repeated"].to_numpy() | duplicated_keys(keys, False)
    return frame[first].assign(repeated=repeated[first])


#: rows of a partition whose first rows are checked for repeats before it is deduplicated ...
PROBE_ROWS = 16_384
#: ... and the share of repeats among them below which it is passed on whole (the merge finds its repeats)
PROBE_REPEATS = 0.01


def mostly_unique(keys: pd.DataFrame) -> bool:
    """Whether a large partition's first rows hardly repeat: deduplicating it first would cost a pass that
    removes almost nothing.

    >>> mostly_unique(pd.DataFrame({0: range(100_000)})), mostly_unique(pd.DataFrame({0: [1] * 100_000}))
    (True, False)
    """
    if len(keys) < 4 * PROBE_ROWS:
        return False
    return bool(duplicated_keys(keys.iloc[:PROBE_ROWS], "first").mean() < PROBE_REPEATS)


class LocalDistinct(PandasOperator):
    """A partition's distinct keys, with their positions (``part``, ``pos``) unless ``bare``.

    For ``keep=False`` a ``repeated`` column says whether the key occurs
    more than once in the partition. With ``merged`` (a merge of the
    partials follows) a partition whose keys hardly repeat is passed on
    whole: the merge, which looks at every row again, finds its repeats.
    """

    params = ("subset", "keep", "part", "bare", "merged")
    fusible = True

    def execute(self, value: Any) -> pd.DataFrame:
        keys = _keys(value, self.subset)
        if self.merged and mostly_unique(keys):
            kept, out = np.ones(len(keys), dtype=bool), keys
        else:
            kept = ~duplicated_keys(keys, "last" if self.keep == "last" else "first")
            out = keys[kept]
        if self.bare:
            return out
        out = out.assign(part=np.int64(self.part), pos=np.flatnonzero(kept).astype(np.int64))
        if self.keep is False:
            repeated = np.zeros(len(out), dtype=bool) if len(out) == len(keys) else duplicated_keys(keys, False)[kept]
            out = out.assign(repeated=repeated)
        return out


class MergeDistinct(PandasOperator):
    """Partials of distinct keys merged (in partition order, so ``keep`` picks the right occurrence)."""

    params = ("n_keys", "keep")

    def execute(self, *partials: Any) -> pd.DataFrame:
        kept = [p for p in partials if len(p)] or list(partials[:1])
        frame = pd.concat(kept, ignore_index=True) if len(kept) > 1 else kept[0]
        return merge_distinct(frame, self.n_keys, self.keep)


class SplitByPart(ShuffleMap, PandasOperator):
    """The kept rows' positions, split by the partition they belong to."""

    params = ("keep",)

    def split(self, value: pd.DataFrame) -> list:
        if self.keep is False:
            value = value[~value["repeated"].to_numpy()]
        n = len(self.output_keys)
        parts = narrow_codes(value["part"].to_numpy(), n)
        order = np.argsort(parts, kind="stable")
        bounds = np.searchsorted(parts[order], np.arange(n + 1))
        pos = value["pos"].to_numpy()[order]
        return [pos[bounds[r]:bounds[r + 1]] for r in range(n)]


class ConcatPositions(ShuffleReduce, PandasOperator):
    """A partition's kept positions, from every merger."""

    params = ()

    def combine(self, pieces: list) -> np.ndarray:
        return np.sort(np.concatenate(pieces)) if pieces else np.zeros(0, np.int64)


class TakeKept(PandasOperator):
    """A partition's kept rows (drop_duplicates), or a mask of its repeated ones (duplicated)."""

    params = ("part", "keep", "mask", "name")
    fusible = True

    def execute(self, value: Any, kept: Any) -> Any:
        if isinstance(kept, pd.DataFrame):
            if self.keep is False:
                kept = kept[~kept["repeated"].to_numpy()]
            kept = np.sort(kept["pos"].to_numpy()[kept["part"].to_numpy() == self.part])
        if not self.mask:
            return value[kept] if isinstance(value, pd.Index) else value.iloc[kept]
        repeated = np.ones(len(value), dtype=bool)
        repeated[kept] = False
        if isinstance(value, pd.Index):
            return pd.Index(repeated)
        return pd.Series(repeated, index=value.index, name=self.name)


class Distinct(PandasOperator):
    """drop_duplicates (``mask=False``) or duplicated (``mask=True``) of the rows' keys.

    ``unordered`` (set by the optimizer where only a merge's right side reads
    the rows, on all their columns) drops repeats without keeping the rows'
    order and index: no positions are kept and sent back.
    """

    params = ("subset", "keep", "mask", "unordered")
    unordered = False

    @classmethod
    def tile(cls, op: Distinct) -> Generator[Any, Any, Tiled]:
        if op.unordered and not op.mask:
            return (yield from _unordered_tiled(op))
        data, out = op.inputs[0], op.outputs[0]
        sample = LocalDistinct(subset=op.subset, keep=op.keep, part=0, bare=False).execute(data.meta)
        n_keys = sample.shape[1] - (3 if op.keep is False else 2)
        several = len(data.chunks) > 1
        local = [LocalDistinct(subset=op.subset, keep=op.keep, part=i, bare=False, merged=several).new_chunk(
            [c], index=(i, 0), shape=(np.nan, sample.shape[1]), meta=sample) for i, c in enumerate(data.chunks)]
        if len(local) > 1:
            # their sizes choose the plan; the partitions stay held for the take at the end
            yield local + list(data.chunks)
        merge = MergeDistinct(n_keys=n_keys, keep=op.keep)
        merged = _merge_chunks(local, merge, sample, list(range(n_keys)))
        if len(merged) == 1:
            per_part = [merged[0]] * len(data.chunks)
        else:
            per_part = shuffle_chunks(
                merged, len(data.chunks), lambda i: SplitByPart(keep=op.keep), lambda r: ConcatPositions(),
                [{"index": (r,), "shape": (np.nan,), "meta": None} for r in range(len(data.chunks))])
        if len(local) > 1:
            # the kept positions, computed once: a reader that computes some partitions first (a groupby's
            # probe) would otherwise run the whole merge again for the others
            yield list({c.key: c for c in per_part}.values())
        chunks = []
        name = out.meta.name if isinstance(out.meta, pd.Series) else None
        for i, (c, kept) in enumerate(zip(data.chunks, per_part)):
            take = TakeKept(part=i, keep=op.keep, mask=op.mask, name=name)
            shape = c.shape if op.mask else chunk_shape_of(out.meta, np.nan)
            chunks.append(take.new_chunk([c, kept], index=chunk_index_of(out.meta, i), shape=shape, meta=out.meta))
        rows = tuple(c.shape[0] for c in chunks)
        return Tiled(chunks, nsplits_of(out.meta, rows))


class UniqueRows(PandasOperator):
    """Partitions end to end without repeats of their keys (the first or last of each, in partition order)."""

    params = ("subset", "keep")
    fusible = True

    def execute(self, *parts: Any) -> Any:
        kept = [p for p in parts if len(p)] or list(parts[:1])
        value = pd.concat(kept) if len(kept) > 1 else kept[0]
        dense = dense_unique(value)
        if dense is not None:
            return dense
        return value[~duplicated_keys(_keys(value, self.subset), self.keep)]


#: an integer column whose values span at most this many times its rows (plus a constant) counts as dense
DENSE_SPREAD = 4


def dense_unique(value: Any) -> pd.DataFrame | None:
    """The distinct values of a one-column frame of integers spanning a narrow range, by ``bincount``, sorted;
    None otherwise. Only for :class:`UniqueRows`: their order and index are not kept.

    >>> dense_unique(pd.DataFrame({"k": [5, 3, 5, 4]}))["k"].tolist()
    [3, 4, 5]
    """
    if not isinstance(value, pd.DataFrame) or value.shape[1] != 1 or not len(value):
        return None
    column = value.iloc[:, 0]
    if not isinstance(column.dtype, np.dtype) or column.dtype.kind not in "iu":
        return None
    values = column.to_numpy()
    lo, hi = int(values.min()), int(values.max())
    if hi - lo > DENSE_SPREAD * len(values) + 1024:
        return None
    present = np.flatnonzero(np.bincount((values - lo).astype(np.intp), minlength=hi - lo + 1))
    return pd.DataFrame({value.columns[0]: (present + lo).astype(column.dtype)}, columns=value.columns)


def _unordered_tiled(op: Distinct) -> Generator[Any, Any, Tiled]:
    """Repeats dropped per partition, then among partitions (one chunk by a tree, or a hash shuffle's)."""
    data, meta = op.inputs[0], op.outputs[0].meta
    chunks = [UniqueRows(subset=op.subset, keep=op.keep).new_chunk(
        [c], index=chunk_index_of(meta, i), shape=chunk_shape_of(meta, np.nan), meta=meta)
        for i, c in enumerate(data.chunks)]
    if len(chunks) > 1:
        bound = distinct_bound(data, op.subset)
        if bound > TREE_MAX_ROWS:
            yield chunks  # their sizes choose the plan
            bound = None
        by = "values" if op.subset is None else [meta.columns[i] for i in op.subset]
        chunks = _merge_chunks(chunks, UniqueRows(subset=op.subset, keep=op.keep), meta, by, bound)
    return Tiled(chunks, nsplits_of(meta, (np.nan,) * len(chunks)))


def distinct_bound(data: Any, subset: list | None) -> float:
    """At most how many distinct rows the partitions hold in all, known without running them (inf if unknown):
    each partition's rows where known, or, for one integer key column of an uploaded frame (or taken from one:
    :func:`.held.held_bound`), its values' span (``HeldData.ranges``: the 150,000 customer keys of TPC-H's
    1.5M orders)."""
    meta = data.meta
    labels = list(meta.columns) if isinstance(meta, pd.DataFrame) and meta.columns.is_unique else []
    keys = labels if subset is None else [labels[i] for i in subset] if labels else []
    dtype = meta[keys[0]].dtype if len(keys) == 1 else None
    key = keys[0] if isinstance(dtype, np.dtype) and dtype.kind in "iu" else None
    total = 0.0
    for chunk in data.chunks:
        rows = chunk.shape[0]
        found = held_bound(chunk, key) if key is not None else UNKNOWN
        span = np.inf if found is UNKNOWN else 0 if found is None else found[1] - found[0] + 1
        total += min(span, np.inf if np.isnan(rows) else rows)
    return total


def _subset_positions(meta: Any, subset: Any) -> list | None:
    """Positions of the ``subset`` columns (a label or a list of them); pandas' KeyError for missing ones."""
    if not isinstance(meta, pd.DataFrame) or subset is None:
        return None
    one = not pd.api.types.is_list_like(subset) or (isinstance(subset, tuple) and subset in meta.columns)
    labels = [subset] if one else list(subset)
    missing = [c for c in labels if c not in meta.columns]
    if missing:
        raise KeyError(pd.Index(missing))
    return [i for i, c in enumerate(meta.columns) if c in labels]


def distinct(obj: Any, subset: Any = None, keep: Any = "first", mask: bool = False) -> Any:
    """The rows kept by ``drop_duplicates(subset, keep)``, or (``mask``) ``duplicated``'s boolean Series."""
    if keep not in ("first", "last", False):
        raise ValueError('keep must be either "first", "last" or False')
    data = as_data(obj)
    positions = _subset_positions(data.meta, subset)
    if mask:
        meta = data.meta.duplicated(keep=keep) if isinstance(data.meta, pd.Index) else \
            data.meta.duplicated(**({"subset": subset} if subset is not None else {}), keep=keep)
        meta = pd.Index(meta) if isinstance(data.meta, pd.Index) else meta
        return Distinct(subset=positions, keep=keep, mask=True).new_pandas([data], meta, data.shape[:1],
                                                                           partitioning=data.partitioning)
    shape = (np.nan,) + tuple(data.shape[1:])
    return Distinct(subset=positions, keep=keep, mask=False).new_pandas([data], data.meta, shape)


def _drop_duplicates(self: Any, subset: Any = None, *, keep: Any = "first", inplace: bool = False,
                     ignore_index: bool = False) -> Any:
    """Rows without repeats of their ``subset`` columns, in their original order, as in pandas.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 2, 1], "b": [0, 0, 0]}, chunk_size=2).drop_duplicates("a").to_pandas()["a"].tolist()
    [1, 2]
    """
    result = distinct(self, subset, keep)
    if ignore_index:
        result = renumbered(result)
    if inplace:
        self.data = result.data
        return None
    return result


def _series_drop_duplicates(self: Any, *, keep: Any = "first", inplace: bool = False,
                            ignore_index: bool = False) -> Any:
    """Values without repeats, in their original order, as in pandas.

    >>> import mars.dataframe as md
    >>> md.Series([3, 1, 3, 2], chunk_size=2).drop_duplicates().to_pandas().tolist()
    [3, 1, 2]
    """
    return _drop_duplicates(self, None, keep=keep, inplace=inplace, ignore_index=ignore_index)


def _index_drop_duplicates(self: Index, *, keep: Any = "first") -> Index:
    """The Index without repeated labels, in order."""
    return distinct(self, None, keep)


def _df_duplicated(self: Any, subset: Any = None, keep: Any = "first") -> Any:
    """Whether each row repeats an earlier one (``keep="first"``), a later one (``"last"``), or any (False).

    >>> import mars.dataframe as md
    >>> md.Series([1, 2, 1], chunk_size=2).duplicated().to_pandas().tolist()
    [False, False, True]
    """
    return distinct(self, subset, keep, mask=True)


def _series_duplicated(self: Any, keep: Any = "first") -> Any:
    return distinct(self, None, keep, mask=True)


def _index_duplicated(self: Index, keep: Any = "first") -> Any:
    """Whether each label repeats another: a boolean tensor (pandas gives an array)."""
    return distinct(self, None, keep, mask=True).to_tensor()



class ToValues(TensorOperator):
    """Partitions' values as array chunks (``Series.unique``'s result is a tensor)."""

    params = ()
    fusible = True

    @classmethod
    def tile(cls, op: ToValues) -> Tiled:
        data, out = op.inputs[0], op.outputs[0]
        chunks = [ToValues().new_chunk([c], index=(i,), shape=c.shape[:1], dtype=out.dtype, order="C")
                  for i, c in enumerate(data.chunks)]
        return Tiled(chunks, (tuple(c.shape[0] for c in chunks),))

    def execute(self, value: Any) -> np.ndarray:
        return np.asarray(value.array if isinstance(value, pd.Series) else value)


def _unique(self: Series) -> Tensor:
    """Distinct values in order of first appearance.

    Returns a 1-d mars tensor; its ``fetch()`` is a numpy array: pandas'
    ``unique()`` values for numpy dtypes, and the same values as an object
    (or numpy) array where pandas returns an extension array (``str``,
    categorical, tz-aware datetimes).

    >>> import mars.dataframe as md
    >>> md.Series([3, 1, 3, 2], chunk_size=2).unique().fetch().tolist()
    [3, 1, 2]
    """
    kept = as_data(distinct(self, None, "first"))
    return ToValues().new_tensor([kept], (np.nan,), np.asarray(self.meta.array).dtype)


def _index_unique(self: Index, level: Any = None) -> Index:
    """Distinct labels in order of first appearance, as a lazy Index."""
    if level is not None:
        raise NotImplementedError("Index.unique(level=...)")
    return distinct(self, None, "first")


# ----------------------------------------------------------------- nunique
class CountDistinct(PandasOperator):
    """How many distinct keys the merged partials hold (NaN left out with ``dropna``)."""

    params = ("dropna",)

    def execute(self, *merged: Any) -> Any:
        total = 0
        for frame in merged:
            keys = frame.iloc[:, 0]
            total += int(keys.notna().sum()) if self.dropna else len(keys)
        return total


class NUnique(PandasOperator):
    """Series.nunique: local distinct values, merged by a tree or a hash shuffle, then counted."""

    params = ("dropna",)

    @classmethod
    def tile(cls, op: NUnique) -> Generator[Any, Any, Tiled]:
        data = op.inputs[0]
        sample = LocalDistinct(subset=None, keep="first", part=0, bare=True).execute(data.meta)
        local = [LocalDistinct(subset=None, keep="first", part=i, bare=True, merged=len(data.chunks) > 1).new_chunk(
            [c], index=(i, 0), shape=(np.nan, sample.shape[1]), meta=sample) for i, c in enumerate(data.chunks)]
        if len(local) > 1:
            yield local  # their sizes choose the plan
        merged = _merge_chunks(local, MergeDistinct(n_keys=1, keep="first"), sample, [0])
        chunk = CountDistinct(dropna=op.dropna).new_scalar_chunk(merged, op.outputs[0].dtype)
        return Tiled([chunk], ())


def _series_nunique(self: Any, dropna: bool = True) -> Any:
    """How many distinct values (NaN not counted with ``dropna``): a 0-d tensor.

    >>> import mars.dataframe as md
    >>> md.Series([1, 2, 1, None], chunk_size=2).nunique().fetch()
    2
    """
    data = as_data(self)
    return NUnique(dropna=dropna).new_scalar([data], np.dtype(np.int64))


class ColumnsNUnique(Reducer):
    """DataFrame.nunique: per column, the distinct values of each partition, merged by a tree."""

    dropna: bool
    columns: pd.Index

    def chunk(self, part: pd.DataFrame) -> list:
        return [part.iloc[:, j].drop_duplicates() for j in range(part.shape[1])]

    def combine(self, partials: list) -> list:
        return [pd.concat([p[j] for p in partials]).drop_duplicates() for j in range(len(self.columns))]

    def agg(self, partials: list) -> pd.Series:
        merged = self.combine(partials)
        counts = [int(m.notna().sum()) if self.dropna else len(m) for m in merged]
        return pd.Series(counts, index=self.columns, dtype=np.int64)


def _df_nunique(self: DataFrame, axis: Any = 0, dropna: bool = True) -> Series:
    """Distinct values per column (``axis=0``) or per row (``axis=1``), like pandas.

    Per column, a tree merges each partition's distinct values (no shuffle).

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 1, 2], "b": [1, 2, 3]}, chunk_size=2).nunique().to_pandas().tolist()
    [2, 3]
    """
    meta = self.meta
    if meta._get_axis_number(axis) == 1:
        return map_partitions("nunique", self, axis=1, dropna=dropna, sample=True)
    reducer = ColumnsNUnique(dropna=dropna, columns=meta.columns)
    chunk, combine, agg = reducer.stages()
    return tree_reduce(self, chunk, combine, agg, meta.nunique(dropna=dropna), shape=(meta.shape[1],))


# ----------------------------------------------------------------- isin
def _isin_values(values: Any) -> Any:
    if isinstance(values, Tileable) and isinstance(values.data, TensorData) or isinstance(values, TensorData):
        return Whole(from_tensor(values, kind="series")) if values.ndim == 1 else values
    if isinstance(values, (Tileable, PandasData)):
        return Whole(values)
    return values


def _isin(self: Any, values: Any) -> Any:
    """Whether each value is among ``values`` (a list, set, pandas object, lazy Series/Index or tensor).

    >>> import mars.dataframe as md
    >>> md.Series([1, 2, 3], chunk_size=2).isin([2, 3]).to_pandas().tolist()
    [False, True, True]
    """
    if isinstance(values, str):
        raise TypeError(f"only list-like objects are allowed to be passed to isin(), you passed a `{type(values).__name__}`")
    return map_partitions("isin", self, _isin_values(values))


def _index_isin(self: Index, values: Any, level: Any = None) -> Any:
    """Whether each label is among ``values``: a boolean tensor (pandas gives an array)."""
    if level is not None:
        raise NotImplementedError("Index.isin(level=...)")
    return map_partitions(_index_isin_part, self, _isin_values(values)).to_tensor()


def _index_isin_part(index: pd.Index, values: Any) -> pd.Index:
    return pd.Index(index.isin(values))


def _install() -> None:
    Series.value_counts = _value_counts
    Index.value_counts = _value_counts
    DataFrame.value_counts = _df_value_counts
    DataFrame.drop_duplicates = _drop_duplicates
    Series.drop_duplicates = _series_drop_duplicates
    Index.drop_duplicates = _index_drop_duplicates
    DataFrame.duplicated = _df_duplicated
    Series.duplicated = _series_duplicated
    Index.duplicated = _index_duplicated
    Series.unique = _unique
    Index.unique = _index_unique
    Series.nunique = _series_nunique
    Index.nunique = _series_nunique
    DataFrame.nunique = _df_nunique
    DataFrame.isin = _isin
    Series.isin = _isin
    Index.isin = _index_isin


_install()
