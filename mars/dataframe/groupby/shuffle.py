"""Moving whole groups into one partition: hash or range shuffles on the group keys.

Each mapper picks a destination per row from its keys and cuts its rows into
one piece per destination, keeping their order. A piece is a tuple: the rows,
the lazy keys' matching rows, and (for round trips) the rows' positions.

- ``hash`` (``sort=False``): the hash of the keys mod n. Floats are made
  canonical first (``-0.0`` is ``0.0``, one NaN), as groupby sees them equal.
- ``range`` (``sort=True``): the key's rank among boundaries sampled from all
  partitions, so partition ``r`` holds keys sorting before partition
  ``r+1``'s and the reducers' sorted results, end to end, are sorted.

Keys read straight off the rows (columns, index levels, lazy keys) are hashed
or ranked per row; keys that pandas computes (functions or mappings of the
index) go through the partition's groupby (``ngroup`` numbers each row's
group, whose key is hashed or ranked once).

Rows whose keys are NaN with ``dropna=True`` are left out of aggregations;
round trips (transforms) keep them, as pandas gives them a result (NaN).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...core.shuffle import ShuffleMap, ShuffleReduce
from ..core import PandasOperator
from ..map import Slot
from ..shuffle import narrow_codes
from ..uniques import duplicated_keys
from .dense import dense_agg
from .keys import (
    ALIGNED,
    VALUES,
    GroupSpec,
    hash_rows,
    is_label,
    key_codes,
    key_frame,
    missing_rows,
    range_codes,
    row_keys,
)
from .named import call_on

#: bits of a row position that hold the row's place in its partition (the rest: the partition)
POSITION_BITS = 40
#: sampled keys per partition, for range boundaries
SAMPLES = 256
#: rows hashed at once where few distinct keys are expected (pandas sizes its hash table by the rows)
BLOCK_ROWS = 1 << 18


def destinations(spec: GroupSpec, part: Any, keys: Sequence[Any], n: int, bounds: pd.DataFrame | None) -> np.ndarray:
    """Per row of ``part``, its partition (-1: a NaN key that ``dropna`` leaves out)."""
    columns = row_keys(spec, part, keys)
    if columns is not None and (bounds is None or _searchable(columns, bounds)):
        if n == 1:
            dest = np.zeros(len(part), dtype=np.int64)
        elif bounds is None:
            dest = (hash_rows(columns) % np.uint64(n)).astype(np.int64)
        elif len(columns) == 1:
            dest = _ranks(np.asarray(columns[0]), bounds[0].to_numpy())
        else:
            dest = _lex_ranks([np.asarray(c) for c in columns], [bounds[i].to_numpy() for i in range(len(columns))])
        if spec.dropna and len(part):
            dest[missing_rows(columns)] = -1
        return dest
    g = spec.groupby(part, keys, select=False, sort=False, as_index=True)
    return _group_destinations(g, n, bounds)


def _searchable(columns: list, bounds: pd.DataFrame) -> bool:
    """One plain numeric key (numpy's search on the sorted boundaries ranks it as groupby sorts it), or a
    few integer keys against a few boundaries (compared in order, column by column)."""
    if len(columns) != bounds.shape[1]:
        return False
    kinds = "iufb" if len(columns) == 1 else "iub"  # several keys: no NaN, so plain comparisons sort as pandas
    if len(columns) > 1 and len(bounds) > 64:
        return False
    for column, bound in zip(columns, bounds.dtypes):
        dtype = column.dtype
        if not (isinstance(dtype, np.dtype) and dtype.kind in kinds and isinstance(bound, np.dtype) and bound == dtype):
            return False
    return True


def _lex_ranks(columns: list[np.ndarray], bounds: list[np.ndarray]) -> np.ndarray:
    """How many boundary rows are <= each key row, comparing the key columns in order (integers only).

    >>> _lex_ranks([np.array([1, 2, 2]), np.array([9, 0, 5])], [np.array([2]), np.array([3])]).tolist()
    [0, 0, 1]
    """
    ranks = np.zeros(len(columns[0]), dtype=np.int8)
    for j in range(len(bounds[0])):
        at_least = columns[-1] >= bounds[-1][j]
        for c, b in zip(columns[-2::-1], bounds[-2::-1]):
            at_least = (c > b[j]) | ((c == b[j]) & at_least)
        ranks += at_least
    return ranks.astype(np.int64)


def _ranks(values: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """How many sorted ``bounds`` are <= each value, NaN being the largest (numpy's sort order)."""
    if len(bounds) > 64:
        return np.searchsorted(bounds, values, side="right").astype(np.int64)
    # a few vectorized comparisons beat a binary search per row by an order of magnitude
    ranks = np.zeros(len(values), dtype=np.int8)
    for b in bounds:
        ranks += values >= b
    if values.dtype.kind == "f":
        ranks[np.isnan(values)] = len(bounds)
    return ranks.astype(np.int64)


def _group_destinations(g: Any, n: int, bounds: pd.DataFrame | None) -> np.ndarray:
    codes, keys = key_codes(g)
    if n == 1:
        per_group = np.zeros(len(keys), dtype=np.int64)
    elif bounds is None:
        hashes = hash_rows([keys.get_level_values(i) for i in range(keys.nlevels)])
        per_group = (hashes % np.uint64(n)).astype(np.int64)
    else:
        per_group = range_codes(key_frame(keys), bounds)
    if len(per_group) == 0:
        return np.full(len(codes), -1, dtype=np.int64)
    return np.where(codes >= 0, per_group[codes], -1)


def take_rows(value: Any, order: np.ndarray) -> Any:
    if isinstance(value, np.ndarray):
        return value[order]
    return value.take(order)


def _slice(value: Any, a: int, b: int) -> Any:
    if isinstance(value, (np.ndarray, pd.Index)):
        return value[a:b]
    return value.iloc[a:b]


def split_rows(values: Sequence[Any], dest: np.ndarray, n: int) -> list[tuple]:
    """``values`` (row-aligned) cut into ``n`` pieces by destination, row order kept; -1 rows dropped."""
    if len(dest) and dest.min() >= 0 and dest.max() == dest.min():
        empty = [tuple(_slice(v, 0, 0) for v in values)]
        return empty * int(dest[0]) + [tuple(values)] + empty * (n - 1 - int(dest[0]))
    dest = np.where(dest < 0, n, dest)
    # small integer codes sort by radix: much faster than a merge sort of int64
    small = narrow_codes(dest, n)
    order = np.argsort(small, kind="stable")
    bounds = np.searchsorted(small[order], np.arange(n + 1))
    taken = [take_rows(v, order) for v in values]
    return [tuple(_slice(t, bounds[r], bounds[r + 1]) for t in taken) for r in range(n)]


class KeySplit(ShuffleMap, PandasOperator):
    """Mapper: a partition and its keys' partitions, cut by group into one piece per destination.

    ``columns`` (or None: all) are the columns that travel. With ``chunk`` set
    (a round trip) each piece also carries its rows' positions
    (``chunk << POSITION_BITS | row``), rows with dropped NaN keys stay, and
    keys that depend on the index (levels, functions) travel as values.
    With ``drop_index`` (see :func:`index_free`) the pieces' rows travel
    under a default index: the labels would be a quarter of the bytes of a
    frame of an integer key and two float columns, and the reducer never
    reads them.
    """

    params = ("spec", "bounds", "columns", "chunk", "travel", "drop_index")
    drop_index = False

    def split(self, part: Any, *keys: Any) -> list:
        n = len(self.output_keys)
        dest = destinations(self.spec, part, keys, n, self.bounds)
        rows = part if self.columns is None else part[self.columns]
        if self.chunk is None:
            pieces = split_rows([rows, *keys], dest, n)
            return [tuple(_unlabelled(v) for v in p) for p in pieces] if self.drop_index else pieces
        dest = np.where(dest < 0, self.chunk % n, dest)
        travelling = traveling_keys(self.spec, part, keys, self.travel)
        pos = (np.int64(self.chunk) << POSITION_BITS) + np.arange(len(part), dtype=np.int64)
        return split_rows([rows, pos, *travelling], dest, n)


def _unlabelled(value: Any) -> Any:
    """A Series or frame under a default index (a ``RangeIndex`` pickles to a few bytes); else ``value``."""
    if isinstance(value, (pd.Series, pd.DataFrame)) and not _is_default(value.index):
        return value.set_axis(pd.RangeIndex(len(value)), axis=0)
    return value


def _is_default(index: pd.Index) -> bool:
    return isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1 and index.name is None


#: groupby methods (and ``agg`` functions by name) whose result depends on the grouped values alone, never
#: on the rows' index labels (``idxmax`` returns labels, ``cumsum``/``head``/``transform`` keep them)
INDEX_FREE_FUNCS = frozenset({
    "sum", "prod", "mean", "median", "count", "size", "min", "max", "std", "var", "sem", "first", "last",
    "nunique", "quantile", "any", "all", "describe", "ohlc", "value_counts", "unique",
})


def index_free(spec: GroupSpec, call: tuple, meta: Any) -> bool:
    """Whether ``call`` on whole groups gives the same result whatever the rows' index labels.

    True when every key is a column of ``meta`` (the grouped frame's meta) or a
    lazy key read by position, and the call names only functions of
    :data:`INDEX_FREE_FUNCS` (no callables: a user's function may read
    ``group.index``). A shuffle's pieces for such a call need not carry the index.

    >>> import pandas as pd
    >>> meta = pd.DataFrame({"k": [1], "x": [1.0]}).iloc[:0]
    >>> index_free(GroupSpec(by="k"), ("agg", ({"x": ["sum", "max"]},), {}), meta)
    True
    >>> index_free(GroupSpec(by="k"), ("idxmax", (), {}), meta)
    False
    >>> index_free(GroupSpec(by="k"), ("agg", (lambda s: s.index[0],), {}), meta)
    False
    """
    return _keys_by_value(spec, meta) and _names_index_free(call)


def _keys_by_value(spec: GroupSpec, meta: Any) -> bool:
    if spec.level is not None or spec.by is None or not isinstance(meta, pd.DataFrame):
        return False
    columns, names = meta.columns, set(meta.index.names)
    for item in spec.by if type(spec.by) is list else [spec.by]:
        if isinstance(item, Slot):
            if spec.modes[item.i] == ALIGNED:  # aligned on the labels
                return False
        elif not is_label(item) or item not in columns or item in names:
            return False
    return True


def _names_index_free(call: tuple) -> bool:
    method, args, kwargs = call
    if method not in ("agg", "aggregate"):
        return method in INDEX_FREE_FUNCS
    func = args[0] if args else None
    if func is None:
        return bool(kwargs) and all(_named_func(v) for v in kwargs.values())
    if isinstance(func, dict):
        return all(_func_list(f) for f in func.values())
    return _func_list(func)


def _func_list(func: Any) -> bool:
    if isinstance(func, list):
        return all(_func_list(f) for f in func) and bool(func)
    if isinstance(func, tuple) and len(func) == 2:  # (output name, function) in a list
        return _func_list(func[1])
    return isinstance(func, str) and func in INDEX_FREE_FUNCS


def _named_func(value: Any) -> bool:
    """A named aggregation's ``(column, func)``, or a SeriesGroupBy's ``func``."""
    if isinstance(value, tuple) and len(value) == 2:
        return isinstance(value[1], str) and value[1] in INDEX_FREE_FUNCS
    return isinstance(value, str) and value in INDEX_FREE_FUNCS


def traveling_keys(spec: GroupSpec, part: Any, keys: Sequence[Any], travel: Sequence[int]) -> list:
    """Per row, the values (arrays, no index) of each grouping level in ``travel``."""
    if not travel:
        return []
    columns = row_keys(spec, part, keys)
    if columns is not None:
        return [_array(columns[level]) for level in travel]
    codes, uniq = key_codes(spec.groupby(part, keys, select=False, sort=False, as_index=True))
    return [pd.api.extensions.take(_array(uniq.get_level_values(level)), codes, allow_fill=True) for level in travel]


def _array(values: Any) -> Any:
    array = values.array if isinstance(values, (pd.Series, pd.Index)) else values
    return array.to_numpy() if isinstance(array, pd.arrays.NumpyExtensionArray) else array


def concat_pieces(pieces: Sequence[tuple], ignore_index: bool = False) -> tuple:
    """Pieces for one partition, end to end, element by element (renumbered from 0 with ``ignore_index``)."""
    if len(pieces) == 1:
        return pieces[0]
    out = []
    for parts in zip(*pieces):
        first = parts[0]
        if isinstance(first, np.ndarray):
            out.append(np.concatenate(parts))
        elif isinstance(first, pd.Index):
            out.append(first.append(list(parts[1:])))
        elif isinstance(first, pd.api.extensions.ExtensionArray):
            out.append(type(first)._concat_same_type(list(parts)))
        else:
            kept = [p for p in parts if len(p)] or [first]
            out.append(pd.concat(kept, ignore_index=ignore_index) if len(kept) > 1 else kept[0])
    return tuple(out)


class GroupCall(PandasOperator):
    """The call (``method``, ``args``, ``kwargs``) on a partition's groupby: whole groups are at hand.

    ``distinct`` (``(subset, keep)``, or None) drops repeated rows first, as ``drop_duplicates`` would.
    """

    params = ("spec", "call", "meta", "distinct")
    #: a recut partition (:class:`.agg.ShareBoundary`) is made in the call's own subtask (see mars.core.fusion)
    fuses_inputs = True

    def execute(self, part: Any, *keys: Any) -> Any:
        return run_call(self.spec, self.call, deduplicated(part, self.distinct), keys, self.meta)


def deduplicated(part: Any, distinct: tuple | None) -> Any:
    """``part.drop_duplicates(subset, keep)`` for ``distinct = (subset, keep)``; ``part`` itself for None."""
    if distinct is None:
        return part
    subset, keep = distinct
    keys = part if subset is None else part[subset]
    repeated = duplicated_keys(keys.set_axis(range(keys.shape[1]), axis=1), keep)
    return part[~repeated] if repeated.any() else part


def run_call(spec: GroupSpec, call: tuple, part: Any, keys: Sequence[Any], meta: Any) -> Any:
    method, args, kwargs = call
    if len(part) == 0 and meta is not None:
        # an empty reducer: pandas would guess dtypes from nothing; the meta knows them
        return meta
    fast = dense_agg(spec, call, part, meta) if not keys and meta is not None else None
    if fast is not None:
        return fast
    return call_on(spec.groupby(part, keys), method, args, kwargs)


class GroupReduce(ShuffleReduce, PandasOperator):
    """Reducer: this partition's pieces end to end (repeated rows dropped with ``distinct``, see
    :class:`GroupCall`), then the call on whole groups. ``drop_index``: the pieces came without their
    labels (:class:`KeySplit`), so they are renumbered, not concatenated label by label."""

    params = ("spec", "call", "meta", "distinct", "drop_index")
    drop_index = False

    def combine(self, pieces: list) -> Any:
        part, *keys = concat_pieces(pieces, ignore_index=bool(self.drop_index))
        return run_call(self.spec, self.call, deduplicated(part, self.distinct), keys, self.meta)


class KeyCount(PandasOperator):
    """A partition's rows and distinct keys (NaN keys count as one), as a 2-array: what the strategy weighs."""

    params = ("spec",)
    #: runs in the subtask that makes its partition, when it reads no lazy keys (see mars.core.fusion)
    tap = True

    def execute(self, part: Any, *keys: Any) -> np.ndarray:
        columns = row_keys(self.spec, part, keys)
        if columns is None:
            groups = self.spec.groupby(part, keys, select=False, sort=False, dropna=False).ngroups
        else:
            groups = distinct_count(_array(columns[0]) if len(columns) == 1 else hash_rows(columns))
        return np.array([len(part), groups], dtype=np.float64)


def distinct_count(values: Any) -> int:
    """Distinct values, counted block by block then together: memory follows the distinct values, not the rows."""
    if len(values) <= 2 * BLOCK_ROWS:
        return len(pd.unique(values))
    blocks = [pd.unique(values[i:i + BLOCK_ROWS]) for i in range(0, len(values), BLOCK_ROWS)]
    if isinstance(blocks[0], np.ndarray):
        return len(pd.unique(np.concatenate(blocks)))
    return len(pd.unique(type(blocks[0])._concat_same_type(blocks)))


class KeySample(PandasOperator):
    """Up to ``SAMPLES`` group keys of a partition's rows, drawn at random (for range boundaries)."""

    params = ("spec", "seed")
    #: runs in the subtask that makes its partition, when it reads no lazy keys (see mars.core.fusion)
    tap = True

    def execute(self, part: Any, *keys: Any) -> pd.DataFrame:
        n = len(part)
        if n > SAMPLES:
            rows = np.sort(np.random.default_rng(self.seed).choice(n, SAMPLES, replace=False))
            part = part.take(rows)
            keys = tuple(take_rows(k, rows) for k in keys)
        g = self.spec.groupby(part, keys, select=False, sort=False, as_index=True)
        codes, uniq = key_codes(g)
        return key_frame(uniq).take(codes[codes >= 0]).reset_index(drop=True)


def round_trip_spec(spec: GroupSpec, label_levels: Sequence[int], n_levels: int) -> tuple[GroupSpec, tuple]:
    """The spec a round trip's reducer groups by, and the key levels that travel as values.

    Column labels stay labels (pandas leaves those columns out of results);
    every other key (a level, a function of the index, a lazy key) travels
    as values, since the reducer renumbers the index.
    """
    travel = tuple(i for i in range(n_levels) if i not in label_levels)
    labels = _by_items(spec)
    by = []
    for i in range(n_levels):
        if i in label_levels:
            by.append(labels[i])
        else:
            by.append(Slot(travel.index(i)))
    return spec.replace(by=by, level=None, modes=(VALUES,) * len(travel)), travel


def _by_items(spec: GroupSpec) -> list:
    if spec.by is None:
        return [None] * (len(spec.level) if isinstance(spec.level, (list, tuple)) else 1)
    return list(spec.by) if type(spec.by) is list else [spec.by]
