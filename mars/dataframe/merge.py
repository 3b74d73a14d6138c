"""Joins: ``md.merge``, ``DataFrame.merge`` and ``DataFrame.join``.

Every partition-level join is pandas' own ``merge``; what this module adds
is which rows meet in which partition, and putting the result in pandas'
row order. pandas orders a join's rows by the left's rows (``inner``,
``left``, ``cross``), by the right's (``right``), or by the keys
(``outer``, and any ``sort=True``), ties in left-then-right order. The
strategies (chosen when tiling, once the sides' sizes are known):

- **single**: both sides fit in one partition: one pandas merge.
- **broadcast**: the side the result's order follows is big and the other
  small: every partition of the big side merges with the whole small side;
  the partitions stay in order, and so do the rows. A broadcast right side
  of an ``inner`` join on one integer key, in several partitions of many
  more rows than the left, first keeps only the rows whose key the left
  has, where each partition lies, and only those are gathered
  (:func:`~mars.dataframe.merge_semi.semi_reduced`).
- **broadcast_left_ordered**: an ``inner`` (or ``left``) join whose left side
  is small and right side big: every right partition merges with the whole
  left, each row carrying its left position as a hidden column, and the
  partitions are interleaved by it (see :mod:`mars.dataframe.merge_order`).
- **hash**: both sides are hash-shuffled on their keys (cast to a common
  dtype, so ``1`` and ``1.0`` meet) and merged partition by partition. Each
  row carries its position in the side whose order the result follows as a
  hidden column; a second shuffle by ranges of that position, whose
  reducers sort by it, puts the rows back in pandas' order.
- **range**: for key-sorted results both sides are range-partitioned on
  their keys, with split points from samples: partition ``i`` holds smaller
  keys than partition ``i + 1``, so the partitions' sorted merges, end to
  end, are the sorted result.

The choice among them is made in :mod:`mars.dataframe.merge_strategy`. The
result's final dtypes, index and row order are settled in
:mod:`mars.dataframe.merge_order`.
"""

from __future__ import annotations

import warnings
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..core.operator import Fetch, Tiled
from ..core.shuffle import ShuffleMap, shuffle_chunks
from ..core.tokenize import normalize
from ..tensor.chunks import offsets
from .concat import join_many
from .core import DataFrame, PandasData, PandasOperator, Series, nsplits_of, row_splits
from .datasource import from_pandas
from .map import map_partitions
from .merge_names import (
    labels_for_empty_side,
    with_result_index,
)
from .merge_order import (
    Conform,
    MatchedRows,
    MergeInfo,
    UnmatchedRows,
    WithPositions,
    final_form,
    ordered_by_position,
    ordered_in_meta_dtypes,
)
from .merge_semi import cut_ahead, semi_filtered, semi_reduced
from .merge_strategy import (
    _key_dtype,
    _numbered,
    _one_pair_of_columns,
    _one_partition_broadcast,
    choose_strategy,
    few_rows,
)
from .merge_table import table_key, table_merges
from .meta import METAS, empty_meta, fake, signature
from .rows import (
    ConcatChunks,
    concat_chunks,
    known_rows_of,
    renumber_rows,
    rows_known_now,
    single_chunk,
)
from .shuffle import ConcatPieces, narrow_codes, split_by_codes

__all__ = ["merge"]

_NO_DEFAULT = pd.api.extensions.no_default
#: hidden columns: a row's position in the left / right input
_LPOS = "__mars_merge_left_position__"
_RPOS = "__mars_merge_right_position__"
#: partitions up to which each merge reads the row counts of all the partitions before it
_COUNTS_FAN_IN = 32
#: key samples each partition offers per output partition (range strategy)
_SAMPLES_PER_PARTITION = 32
# ----------------------------------------------------------------- join keys
@dataclass(frozen=True)
class JoinKeys:
    """Where the join keys are and how partitions find them.

    ``left``/``right`` hold ``("column", label)`` or ``("level", i)`` per key;
    ``casts`` the dtype each key pair is cast to before hashing (None: as
    is), or None when equal keys of the two sides cannot be made to hash
    alike; ``kinds`` how each pair is ordered for range partitioning
    (``"num"``, ``"time"``, ``"str"``), or None when it cannot be.
    """

    left: tuple
    right: tuple
    casts: tuple | None
    kinds: tuple | None

    def __mars_tokenize__(self) -> tuple:
        return (self.left, self.right, self.casts, self.kinds)


def key_values(part: pd.DataFrame, keys: tuple) -> list[pd.Series]:
    """Each key of ``part`` as a Series numbered from 0 (no copy)."""
    out = []
    for kind, label in keys:
        values = part[label].array if kind == "column" else part.index.get_level_values(label).array
        out.append(pd.Series(values, copy=False))
    return out


def hash_codes(part: pd.DataFrame, keys: tuple, casts: tuple, n: int) -> np.ndarray:
    """The partition (of ``n``) each row goes to: a hash of its keys, equal for equal keys on either side."""
    columns = [v if c is None else v.astype(c) for v, c in zip(key_values(part, keys), casts)]
    keyed = columns[0] if len(columns) == 1 else pd.concat(columns, axis=1, ignore_index=True)
    hashes = pd.util.hash_pandas_object(keyed, index=False).to_numpy()
    # the high 32 bits scaled to [0, n): a multiply and shifts, far cheaper than a 64-bit modulo
    return _small_codes((hashes >> np.uint64(32)) * np.uint64(n) >> np.uint64(32), n)


def _small_codes(codes: np.ndarray, n: int) -> np.ndarray:
    """Partition codes in the narrowest int type: numpy's stable argsort is a radix sort for 16 bits."""
    return narrow_codes(codes, n)


def encoded_keys(part: pd.DataFrame, keys: tuple, kinds: tuple) -> list[np.ndarray]:
    """Per key, an array that orders as pandas' merge orders the keys, NaN where missing and last.

    Floats stand for all numbers and times: rounding large ints is
    monotone, which is all a range partitioning needs.
    """
    out = []
    for values, kind in zip(key_values(part, keys), kinds):
        if kind == "num":
            out.append(values.to_numpy(dtype=np.float64, na_value=np.nan))
        elif kind == "time":  # NaT is the smallest integer: pandas sorts it first, as that
            out.append(values.array.as_unit("ns").asi8.astype(np.float64))
        else:
            out.append(values.to_numpy(dtype=object, na_value=np.nan))
    return out


def range_codes(encoded: list[np.ndarray], bounds: tuple) -> np.ndarray:
    """How many of the (sorted) split points each row's keys reach: its output partition.

    Keys compare lexicographically, missing values after all others, so
    equal keys always land in the same partition.
    """
    n = len(encoded[0])
    if len(encoded) == 1 and encoded[0].dtype.kind == "f":
        return _small_codes(np.searchsorted(bounds[0], encoded[0], side="right"), len(bounds[0]) + 1)
    missing = [pd.isna(x) for x in encoded]
    codes = np.zeros(n, dtype=np.int64)
    for b in range(len(bounds[0])):
        reached, equal = np.zeros(n, dtype=bool), np.ones(n, dtype=bool)
        for x, miss, column in zip(encoded, missing, bounds):
            point = column[b]
            if pd.isna(point):
                greater, same = np.zeros(n, dtype=bool), miss
            else:
                filled = np.where(miss, point, x) if miss.any() else x  # missing values would not compare
                greater, same = miss | (filled > point), ~miss & (filled == point)
            reached |= equal & greater
            equal &= same
        codes += reached | equal
    return _small_codes(codes, len(bounds[0]) + 1)


def _hash_cast(left: Any, right: Any) -> Any:
    """The dtype both sides' keys take so that equal keys hash alike; False when there is none."""
    if left == right:
        return None
    numeric = [pd.api.types.is_numeric_dtype(d) and not pd.api.types.is_complex_dtype(d) for d in (left, right)]
    if all(numeric):
        return np.dtype(np.float64)
    times = [d.kind if isinstance(d, np.dtype) and d.kind in "mM" else None for d in (left, right)]
    if times[0] is not None and times[0] == times[1]:
        return np.dtype(f"{times[0]}8[ns]")
    if all(_is_text(d) for d in (left, right)):
        return np.dtype(object)
    return False


def _is_text(dtype: Any) -> bool:
    return dtype == object or isinstance(dtype, pd.StringDtype) or \
        (isinstance(dtype, pd.CategoricalDtype) and _is_text(dtype.categories.dtype))


def _range_kind(left: Any, right: Any) -> str | None:
    """How a pair of key dtypes is encoded for range partitioning (None: it cannot be)."""
    if all(pd.api.types.is_numeric_dtype(d) and not pd.api.types.is_complex_dtype(d) for d in (left, right)):
        return "num"
    if all(isinstance(d, np.dtype) and d.kind == "M" for d in (left, right)) or \
            all(isinstance(d, np.dtype) and d.kind == "m" for d in (left, right)) or \
            (isinstance(left, pd.DatetimeTZDtype) and left == right):
        return "time"
    if all(isinstance(d, pd.StringDtype) for d in (left, right)):
        return "str"
    return None


def _side_keys(meta: pd.DataFrame, labels: Any, use_index: bool) -> tuple:
    if use_index:
        return tuple(("level", i) for i in range(meta.index.nlevels))
    out = []
    for label in labels:
        if label in meta.columns:
            out.append(("column", label))
        else:  # pandas accepted it: an index level name
            out.append(("level", list(meta.index.names).index(label)))
    return tuple(out)


def join_keys(lmeta: pd.DataFrame, rmeta: pd.DataFrame, kwargs: dict) -> JoinKeys:
    """The join keys of a merge pandas accepted (``on`` already resolved)."""
    if kwargs["how"] == "cross":
        return JoinKeys((), (), (), ())
    on = kwargs["on"]
    left = _side_keys(lmeta, _as_list(on if on is not None else kwargs["left_on"]), kwargs["left_index"])
    right = _side_keys(rmeta, _as_list(on if on is not None else kwargs["right_on"]), kwargs["right_index"])
    pairs = [(_key_dtype(lmeta, lk), _key_dtype(rmeta, rk)) for lk, rk in zip(left, right)]
    casts = tuple(_hash_cast(a, b) for a, b in pairs)
    kinds = tuple(_range_kind(a, b) for a, b in pairs)
    return JoinKeys(left, right, None if any(c is False for c in casts) else casts,
                    None if any(k is None for k in kinds) else kinds)


def _as_list(labels: Any) -> list:
    if labels is None:
        return []
    return list(labels) if isinstance(labels, (list, tuple)) else [labels]


# ----------------------------------------------------------------- chunk operators
class KeySplit(ShuffleMap, PandasOperator):
    """A partition's rows sent on by their keys: by hash, or by key range when ``bounds`` are given.

    With ``position`` set, each row first gets its place in the whole side
    (from ``start``) in that hidden column.
    """

    params = ("keys", "casts", "kinds", "bounds", "position", "start")

    def split(self, part: pd.DataFrame) -> list:
        n = len(self.output_keys)
        if self.position is not None:
            part = part.assign(**{self.position: np.arange(self.start, self.start + len(part), dtype=np.int64)})
        if n == 1 or not len(part):
            codes = np.zeros(len(part), dtype=np.int64)
        elif self.bounds is None:
            codes = hash_codes(part, self.keys, self.casts, n)
        else:
            codes = range_codes(encoded_keys(part, self.keys, self.kinds), self.bounds)
        return split_by_codes(part, codes, n)


class KeySamples(PandasOperator):
    """Evenly spaced rows' encoded keys (columns ``0..k-1``), each standing for ``weight`` rows."""

    params = ("keys", "kinds", "size")
    #: runs in the subtask that makes its input (see mars.core.fusion)
    tap = True

    def execute(self, part: pd.DataFrame) -> pd.DataFrame:
        n = len(part)
        s = min(n, self.size)
        at = ((np.arange(s) + 0.5) * (n / max(s, 1))).astype(np.int64)
        encoded = encoded_keys(part.iloc[at], self.keys, self.kinds)
        return pd.DataFrame(dict(enumerate(encoded))).assign(weight=n / max(s, 1))


class MergeChunk(PandasOperator):
    """pandas' merge of one left and one right partition.

    ``na_labels`` names the side whose index labels make the result's index
    with NA for rows it lacks (pandas' rule for a column joined to an
    index); pandas falls back to the other side's labels when that side is
    empty, which a partition may be when the whole side is not.
    """

    params = ("kwargs", "na_labels")
    #: a projected or filtered side is made in the merge's own subtask (see mars.core.fusion)
    fuses_inputs = True

    def kept_column(self, column: Any) -> tuple[int, Any] | None:
        """``(side, column)`` where the result's ``column`` holds values of that side's rows: a column of one
        side alone (the side whose every row the join keeps, or either for an inner join), or a key ``on``
        both name, from the side it is taken from. See :meth:`.map.MapPartitions.kept_column`."""
        how, metas = self.kwargs.get("how"), [getattr(i, "meta", None) for i in self.inputs]
        if how not in ("inner", "left", "right") or not all(isinstance(m, pd.DataFrame) for m in metas):
            return None
        try:
            sides = [i for i, m in enumerate(metas) if column in m.columns]
            if len(sides) == 2 and column in _as_list(self.kwargs.get("on")):
                sides = [1 if how == "right" else 0]
        except (TypeError, ValueError):
            return None
        if len(sides) != 1 or sides[0] == {"left": 1, "right": 0}.get(how):
            return None
        return sides[0], column

    def execute(self, left: pd.DataFrame, right: pd.DataFrame) -> pd.DataFrame:
        left, right = semi_filtered(left, right, self.kwargs)
        result = pd.merge(left, right, **self.kwargs)
        side = {"left": left, "right": right}.get(self.na_labels)
        if side is not None and not len(side):
            result.index = labels_for_empty_side(side.index, len(result))
        return result


# ----------------------------------------------------------------- tiling
class Merge(PandasOperator):
    """``merge`` of two lazy DataFrames; ``kwargs`` are pandas' (``on`` resolved), ``keys`` a :class:`JoinKeys`.

    ``unordered`` (see :mod:`.optimizer.order`): rows stay where they were merged, each partition numbered from 0.
    ``unlabelled``: no reader sees the index labels: rows in pandas' order, each partition numbered from 0.
    """

    params = ("kwargs", "keys", "unordered", "unlabelled")
    unordered = False
    unlabelled = False

    @classmethod
    def tile(cls, op: Merge) -> Generator[Any, Any, Tiled]:
        left, right = op.inputs
        one_side = _one_partition_broadcast(op)
        if _one_pair_of_columns(op) or one_side:  # no count decides anything: the inputs run with the merge
            lrows, rrows = rows_known_now(left), row_splits(right)
        else:
            lrows, rrows = yield from known_rows_of(left, right)
        op.outputs[0].meta = with_result_index(op.outputs[0].meta, op.kwargs, left.meta, right.meta, sum(lrows),
                                               sum(rrows))
        strategy = "broadcast_right" if one_side else choose_strategy(op.kwargs, op.keys, left, right, lrows, rrows)
        if strategy == "broadcast_right" and few_rows(lrows):
            strategy = "single"  # a small side in many partitions: one merge, not one subtask a partition
        if strategy == "broadcast_left_ordered" and op.unordered and op.kwargs["how"] == "inner":
            strategy = "broadcast_left"  # (a left join adds its unmatched rows apart, unordered too)
        if strategy == "hash":
            return (yield from _tile_hash(op, lrows, rrows))
        if strategy == "broadcast_left_ordered":
            return (yield from _tile_broadcast_left_ordered(op, lrows, rrows))
        key = table_key(op) if strategy == "broadcast_right" else None
        if key is not None and _renumbered_only(op) and len(op.inputs[0].chunks) <= _COUNTS_FAN_IN:
            chunks = table_merges(op, key, lrows, rrows, numbered=not (op.unordered or op.unlabelled))
            return Tiled(chunks, nsplits_of(op.outputs[0].meta, (np.nan,) * len(chunks)))
        if strategy == "range":
            merged = yield from _range_merges(op, lrows, rrows)
        else:
            merged = _direct_merges(op, strategy, lrows, rrows)
        return (yield from _finish(op, merged, lrows, rrows))


def _na_labels(op: Merge, lrows: Sequence[int], rrows: Sequence[int]) -> str | None:
    """The label side (see :mod:`.merge_names`), when a partition of it may be empty and the whole is not."""
    kwargs = op.kwargs
    how = kwargs["how"]
    if kwargs["right_index"] and not kwargs["left_index"] and how in ("right", "outer", "inner") and sum(lrows):
        return "left"
    if kwargs["left_index"] and not kwargs["right_index"] and how in ("left", "outer", "inner") and sum(rrows):
        return "right"
    return None


def _merge_chunks(op: Merge, pairs: list, meta: pd.DataFrame, lrows: Sequence[int], rrows: Sequence[int]) -> list:
    merge_op = MergeChunk(kwargs=op.kwargs, na_labels=_na_labels(op, lrows, rrows))
    return [merge_op.copy().new_chunk([lc, rc], index=(i, 0), shape=(np.nan, meta.shape[1]), meta=meta)
            for i, (lc, rc) in enumerate(pairs)]


def _direct_merges(op: Merge, strategy: str, lrows: Sequence[int], rrows: Sequence[int]) -> list:
    left, right = op.inputs
    if strategy == "single":
        pairs = [(single_chunk(left), single_chunk(right))]
    elif strategy == "broadcast_right":
        key = table_key(op)
        if key is not None:
            return table_merges(op, key, lrows, rrows)
        whole = _gathered(op, lrows, rrows)
        pairs = [(c, whole) for c in cut_ahead(op.kwargs, op.keys, left, whole)]
    else:
        whole = single_chunk(left)
        pairs = [(whole, c) for c in right.chunks]
    return _merge_chunks(op, pairs, op.outputs[0].meta, lrows, rrows)


def _gathered(op: Merge, lrows: Sequence[int], rrows: Sequence[int]) -> Any:
    """The broadcast right side in one chunk, less the rows no left key meets (see :func:`semi_reduced`)."""
    left, right = op.inputs
    return concat_chunks(semi_reduced(op.kwargs, op.keys, left, right, lrows, rrows), right.meta)


def _shuffled(data: PandasData, keys: tuple, n: int, rows: Sequence[int], casts: tuple | None = None,
              kinds: tuple | None = None, bounds: tuple | None = None, position: str | None = None) -> list:
    """``data``'s rows in ``n`` partitions by key (hash, or ranges when ``bounds``), with positions if asked."""
    meta = data.meta if position is None else data.meta.assign(**{position: np.array([], dtype=np.int64)})
    starts = offsets(list(rows))
    return shuffle_chunks(
        data.chunks, n,
        lambda i: KeySplit(keys=keys, casts=casts, kinds=kinds, bounds=bounds, position=position, start=int(starts[i])),
        lambda r: ConcatPieces(meta=meta),
        [{"index": (r, 0), "shape": (np.nan, meta.shape[1]), "meta": meta} for r in range(n)],
        lambda i, r: {"index": (i, r), "shape": (np.nan,), "meta": meta},
    )


def _range_merges(op: Merge, lrows: Sequence[int], rrows: Sequence[int]) -> Generator[Any, Any, list]:
    left, right = op.inputs
    keys = op.keys
    n = max(len(lrows), len(rrows))
    samples = [KeySamples(keys=side_keys, kinds=keys.kinds, size=_SAMPLES_PER_PARTITION * n).new_chunk(
        [c], index=(i,), shape=(np.nan,), meta=None)
        for side_keys, data in ((keys.left, left), (keys.right, right)) for i, c in enumerate(data.chunks)]
    yield list(left.chunks) + list(right.chunks) + samples  # the inputs stay held for the shuffle
    bounds = choose_bounds((yield Fetch(samples)), n, len(keys.kinds))
    lparts = _shuffled(left, keys.left, n, lrows, kinds=keys.kinds, bounds=bounds)
    rparts = _shuffled(right, keys.right, n, rrows, kinds=keys.kinds, bounds=bounds)
    return _merge_chunks(op, list(zip(lparts, rparts)), op.outputs[0].meta, lrows, rrows)


def choose_bounds(samples: list[pd.DataFrame], n: int, n_keys: int) -> tuple:
    """``n - 1`` split points (one array per key) cutting the sampled keys into parts of even weight."""
    kept = [s for s in samples if len(s)]
    if n == 1 or not kept:
        return tuple(np.array([], dtype=np.float64) for _ in range(n_keys))
    pooled = pd.concat(kept, ignore_index=True)
    ordered = pooled.sort_values(list(range(n_keys)), kind="stable", na_position="last")
    weights = np.cumsum(ordered["weight"].to_numpy())
    at = np.searchsorted(weights, weights[-1] * np.arange(1, n) / n, side="left")
    chosen = ordered.iloc[np.minimum(at, len(ordered) - 1)]
    return tuple(chosen[j].to_numpy() for j in range(n_keys))


def _index_names(op: Merge, lrows: Sequence[int], rrows: Sequence[int]) -> tuple | None:
    """The result's index names: pandas' names for a join of indexes depend on which sides are empty."""
    if _numbered(op.kwargs):
        return None
    left, right = op.inputs
    samples = [fake(d.meta, 1) if sum(rows) else d.meta for d, rows in ((left, lrows), (right, rrows))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tuple(pd.merge(*samples, **op.kwargs).index.names)


def _renumbered_only(op: Merge) -> bool:
    """Whether the merged partitions need only their rows numbered across (no dtype settled afterwards).

    An inner join of columns adds no missing values, so plain numeric dtypes are the same in every partition
    and as the metadata says: only the index needs numbering, which a chain of row counts does without a
    tiling stage (a round trip to the workers per merge on a cluster). Datetimes, timedeltas and pandas'
    ``str`` keep their dtype too, but a key column shared by the two sides takes the dtype of whichever side
    has rows (``datetime64[s]`` or ``[us]``): with those, every key pair must have one dtype. Others
    (categoricals, objects) are settled by :func:`_finish`.
    """
    kwargs, meta = op.kwargs, op.outputs[0].meta
    if not _numbered(kwargs) or kwargs["how"] != "inner" or kwargs.get("indicator"):
        return False
    if all(isinstance(d, np.dtype) and d.kind in "biufc" for d in meta.dtypes):
        return True
    lmeta, rmeta = (d.meta for d in op.inputs)
    same_keys = all(_key_dtype(lmeta, lk) == _key_dtype(rmeta, rk) for lk, rk in zip(op.keys.left, op.keys.right))
    return same_keys and all(isinstance(d, pd.StringDtype) or (isinstance(d, np.dtype) and d.kind in "biufcmM")
                             for d in meta.dtypes)


def _finish(op: Merge, merged: list, lrows: Sequence[int], rrows: Sequence[int],
            drop: str | None = None) -> Generator[Any, Any, Tiled]:
    """The merged partitions in the result's dtypes, numbered across partitions, less the hidden ``drop``."""
    out = op.outputs[0]
    numbered = _numbered(op.kwargs)
    if _renumbered_only(op) and drop is None:
        for c in merged:
            c.meta = out.meta
        if op.unordered or op.unlabelled:  # no reader sees the labels: each partition keeps pandas' own 0..k-1
            return Tiled(merged, nsplits_of(out.meta, [c.shape[0] for c in merged]))
        chunks, nsplits = renumber_rows(merged, out.meta, first_numbered=True)
        return Tiled(chunks, nsplits)
    names = _index_names(op, lrows, rrows)
    bounds = None if drop is None else np.array([], dtype=np.int64)
    info_chunks = [MergeInfo(position=drop, bounds=bounds).new_chunk([c], index=(i,), shape=(), meta=None)
                   for i, c in enumerate(merged)]
    yield merged + info_chunks  # each partition's info is taken in the subtask that merges it
    infos = yield Fetch(info_chunks)
    meta, form = final_form(out.meta, infos, names)
    out.meta = meta
    chunks = []
    for i, (c, info, start) in enumerate(zip(merged, infos, offsets([i.rows for i in infos]))):
        # pandas numbers each partition from 0 already; an unordered merge's readers see no labels
        start = start if numbered and start and not (op.unordered or op.unlabelled) else None
        if start is None and form.matches(info) and drop is None:
            c.meta = meta
            chunks.append(c)
            continue
        chunks.append(Conform(form=form, start=start, drop=drop).new_chunk(
            [c], index=(i, 0), shape=(info.rows, meta.shape[1]), meta=meta))
    return Tiled(chunks, nsplits_of(meta, [i.rows for i in infos]))


def _tile_hash(op: Merge, lrows: Sequence[int], rrows: Sequence[int]) -> Generator[Any, Any, Tiled]:
    left, right = op.inputs
    out, kwargs, keys = op.outputs[0], op.kwargs, op.keys
    follow_left = kwargs["how"] != "right"
    position = _LPOS if follow_left else _RPOS
    n = max(len(lrows), len(rrows))
    if op.unordered:
        lparts = _shuffled(left, keys.left, n, lrows, casts=keys.casts)
        rparts = _shuffled(right, keys.right, n, rrows, casts=keys.casts)
        return (yield from _finish(op, _merge_chunks(op, list(zip(lparts, rparts)), out.meta, lrows, rrows),
                                   lrows, rrows))
    lparts = _shuffled(left, keys.left, n, lrows, casts=keys.casts, position=position if follow_left else None)
    rparts = _shuffled(right, keys.right, n, rrows, casts=keys.casts, position=None if follow_left else position)
    merged_meta = empty_meta(pd.merge(lparts[0].meta, rparts[0].meta, **kwargs))
    merged = _merge_chunks(op, list(zip(lparts, rparts)), merged_meta, lrows, rrows)
    total = sum(lrows if follow_left else rrows)
    if _renumbered_only(op):
        return ordered_in_meta_dtypes(out, merged, merged_meta, position, total)
    return (yield from ordered_by_position(out, merged, merged_meta, position, total,
                                           _index_names(op, lrows, rrows), _numbered(kwargs)))


def _tile_broadcast_left_ordered(op: Merge, lrows: Sequence[int], rrows: Sequence[int]) -> Generator[Any, Any, Tiled]:
    """A small left side merged with each partition of the right, then put in the left's order.

    Each partition's rows are in left position order (pandas' order within
    the partition); :func:`ordered_by_position` interleaves them. For a
    ``left`` join the left rows no partition matched are merged once more,
    alone, with an empty right.
    """
    left, right = op.inputs
    kwargs = op.kwargs
    one = len(left.chunks) == 1
    meta = (left.chunks[0] if one else left).meta.assign(**{_LPOS: np.array([], dtype=np.int64)})
    # several partitions are numbered as they are gathered: one copy of the left, not two
    placed = (WithPositions(position=_LPOS) if one else ConcatChunks(position=_LPOS)).new_chunk(
        list(left.chunks), index=(0, 0), shape=(sum(lrows), meta.shape[1]), meta=meta)
    inner = dict(kwargs, how="inner")
    merged_meta = empty_meta(pd.merge(meta, right.meta, **inner))
    merge_op = MergeChunk(kwargs=inner, na_labels=_na_labels(op, lrows, rrows))
    merged = [merge_op.copy().new_chunk([placed, rc], index=(i, 0), shape=(np.nan, merged_meta.shape[1]),
                                        meta=merged_meta) for i, rc in enumerate(right.chunks)]
    if kwargs["how"] == "left":
        masks = [MatchedRows(position=_LPOS, size=sum(lrows)).new_chunk([c], index=(i,), shape=(sum(lrows),),
                                                                        meta=None) for i, c in enumerate(merged)]
        merged.append(UnmatchedRows(kwargs=kwargs).new_chunk(
            [placed, right.chunks[0], *masks], index=(len(merged), 0), shape=(np.nan, merged_meta.shape[1]),
            meta=merged_meta))
    if op.unordered:
        return (yield from _finish(op, merged, lrows, rrows, drop=_LPOS))
    # no ordered_in_meta_dtypes here: merged partitions of two tables sorted alike (TPC-H's lineitem and
    # orders) follow one another, and the fetched spans then skip the shuffle
    return (yield from ordered_by_position(op.outputs[0], merged, merged_meta, _LPOS, sum(lrows),
                                           _index_names(op, lrows, rrows), _numbered(kwargs)))


# ----------------------------------------------------------------- the functions
def _meta_or_value(obj: Any) -> Any:
    if isinstance(obj, (DataFrame, Series)):
        return obj.meta
    if isinstance(obj, (pd.DataFrame, pd.Series)):
        return empty_meta(obj)
    return obj  # pandas says what is wrong with it


def _lazy_frame(obj: Any) -> Any:
    """``obj`` as a lazy DataFrame (a pandas object is partitioned, a named Series made a frame)."""
    if isinstance(obj, (pd.DataFrame, pd.Series)):
        obj = from_pandas(obj)
    if isinstance(obj, Series):
        obj = map_partitions("to_frame", obj)
    return obj


def _check_labels(kwargs: dict) -> None:
    for name in ("on", "left_on", "right_on"):
        value = kwargs[name]
        values = value if isinstance(value, (list, tuple)) else [value]
        if any(isinstance(v, (np.ndarray, pd.Series, pd.Index, Series)) for v in values) or \
                isinstance(value, (np.ndarray, pd.Series, pd.Index, Series)):
            raise NotImplementedError(f"merge {name}= takes column or index level labels here, not arrays; "
                                      "add the array as a column first")


def _resolved(kwargs: dict, lmeta: pd.DataFrame, rmeta: pd.DataFrame) -> dict:
    """``kwargs`` with the keys pandas would infer (the common columns) spelled out."""
    kwargs = dict(kwargs, sort=bool(kwargs["sort"]), suffixes=tuple(kwargs["suffixes"]))
    given = [kwargs[k] for k in ("on", "left_on", "right_on")]
    if kwargs["how"] != "cross" and all(g is None for g in given) and not kwargs["left_index"] \
            and not kwargs["right_index"]:
        kwargs["on"] = list(lmeta.columns.intersection(rmeta.columns))
    return kwargs


def merge(left: Any, right: Any, how: str = "inner", on: Any = None, left_on: Any = None, right_on: Any = None,
          left_index: bool = False, right_index: bool = False, sort: bool = False,
          suffixes: Sequence[Any] = ("_x", "_y"), copy: Any = _NO_DEFAULT, indicator: Any = False,
          validate: str | None = None) -> DataFrame:
    """Database-style join of two DataFrames (or named Series), as ``pd.merge``.

    Rows come out in pandas' order: the left's for ``inner``/``left``/``cross``,
    the right's for ``right``, sorted keys for ``outer`` or ``sort=True``.
    Either side may be a pandas object. Key columns given as arrays, and
    the ``left_anti``/``right_anti`` joins, are not supported.

    Examples
    --------
    >>> import mars.dataframe as md
    >>> left = md.DataFrame({"k": [1, 2, 3], "a": [4, 5, 6]}, chunk_size=2)
    >>> right = md.DataFrame({"k": [3, 1], "b": [7.0, 8.0]})
    >>> md.merge(left, right, on="k", how="left").to_pandas()
       k  a    b
    0  1  4  8.0
    1  2  5  NaN
    2  3  6  7.0
    """
    kwargs = {"how": how, "on": on, "left_on": left_on, "right_on": right_on, "left_index": left_index,
              "right_index": right_index, "sort": sort, "suffixes": suffixes, "indicator": indicator,
              "validate": validate}
    _check_labels(kwargs)
    extra = {} if copy is _NO_DEFAULT else {"copy": copy}
    lmeta, rmeta = _meta_or_value(left), _meta_or_value(right)
    sides = (signature(lmeta), signature(rmeta))
    key = None if None in sides else ("merge", sides, normalize(kwargs), normalize(extra))
    meta = METAS.get(key, lambda: empty_meta(pd.merge(lmeta, rmeta, **kwargs, **extra)))  # pandas' errors, now
    if how in ("left_anti", "right_anti"):
        raise NotImplementedError(f"merge(how={how!r}) is not supported; use how='left'/'right' with "
                                  "indicator=True and keep the rows marked 'left_only'/'right_only'")
    lframe, rframe = _lazy_frame(left), _lazy_frame(right)
    kwargs = _resolved(kwargs, lframe.meta, rframe.meta)
    op = Merge(kwargs=kwargs, keys=join_keys(lframe.meta, rframe.meta, kwargs))
    meta = with_result_index(empty_meta(meta), kwargs, lframe.meta, rframe.meta)  # pandas' for non-empty sides
    return op.new_pandas([lframe.data, rframe.data], meta, (np.nan, meta.shape[1]))


def _df_merge(self: DataFrame, right: Any, how: str = "inner", on: Any = None, left_on: Any = None,
              right_on: Any = None, left_index: bool = False, right_index: bool = False, sort: bool = False,
              suffixes: Sequence[Any] = ("_x", "_y"), copy: Any = _NO_DEFAULT, indicator: Any = False,
              validate: str | None = None) -> DataFrame:
    """This frame joined with ``right``, as ``pd.DataFrame.merge`` (see :func:`merge`).

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"k": [1, 2], "a": [3, 4]})
    >>> df.merge(md.DataFrame({"k": [2], "b": [5]}), on="k").to_pandas()
       k  a  b
    0  2  4  5
    """
    return merge(self, right, how=how, on=on, left_on=left_on, right_on=right_on, left_index=left_index,
                 right_index=right_index, sort=sort, suffixes=suffixes, copy=copy, indicator=indicator,
                 validate=validate)


def _join_suffixes(lsuffix: Any, rsuffix: Any, suffixes: Any) -> tuple:
    """pandas' rule: ``lsuffix``/``rsuffix`` (deprecated), else ``suffixes``, else none."""
    if lsuffix is not _NO_DEFAULT or rsuffix is not _NO_DEFAULT:
        return ("" if lsuffix is _NO_DEFAULT else lsuffix, "" if rsuffix is _NO_DEFAULT else rsuffix)
    return ("", "") if suffixes is _NO_DEFAULT else tuple(suffixes)


def _df_join(self: DataFrame, other: Any, on: Any = None, how: str = "left", lsuffix: Any = _NO_DEFAULT,
             rsuffix: Any = _NO_DEFAULT, sort: bool = False, validate: str | None = None, *,
             suffixes: Any = _NO_DEFAULT) -> DataFrame:
    """Columns of ``other`` joined on this frame's index or ``on`` columns, as ``pd.DataFrame.join``.

    ``other`` is a DataFrame, a named Series, or a list of them (joined on
    the index; with unique indexes, as pandas does).

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"k": ["a", "b", "a"], "x": [1, 2, 3]}, chunk_size=2)
    >>> other = md.DataFrame({"y": [10, 20]}, index=["a", "b"])
    >>> df.join(other, on="k").to_pandas()
       k  x   y
    0  a  1  10
    1  b  2  20
    2  a  3  10
    """
    many = isinstance(other, (list, tuple))
    given = {k: v for k, v in {"lsuffix": lsuffix, "rsuffix": rsuffix, "suffixes": suffixes}.items()
             if v is not _NO_DEFAULT}
    other_meta = [_meta_or_value(o) for o in other] if many else _meta_or_value(other)
    self.meta.join(other_meta, on=on, how=how, sort=sort, validate=validate, **given)  # pandas' errors and warnings
    if many:
        return join_many(self, list(other), how, sort)
    resolved = _join_suffixes(lsuffix, rsuffix, suffixes)
    if how == "cross":
        return merge(self, other, how=how, on=on, suffixes=resolved, sort=sort, validate=validate)
    return merge(self, other, left_on=on, how=how, left_index=on is None, right_index=True, suffixes=resolved,
                 sort=sort, validate=validate)


DataFrame.merge = _df_merge
DataFrame.join = _df_join
