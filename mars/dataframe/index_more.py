"""More ``Index`` methods: sorted lookups, grouping, reindexing and sizes, as pandas.

Lookups in a sorted Index (``asof``, ``asof_locs``, ``get_slice_bound``,
``slice_locs``, ``slice_indexer``) are one small summary per partition
(its row count, where the label hits it, how many of its labels lie before
the bound) combined in a tree: a partition of a sorted Index holds a
contiguous run of it, so the counts add up to the position in the whole.
``groupby`` gathers, per key, the labels of each partition in order;
``inferred_type`` of object labels sends one label per kind of value;
``nbytes`` and ``memory_usage`` add up the partitions' sizes as the whole
would hold them. ``reindex`` uses the lookups of
:mod:`mars.dataframe.index_methods`; ``sortlevel`` is the distributed sort.

>>> import mars.dataframe as md
>>> idx = md.Index([10, 20, 30, 40], chunk_size=3)
>>> idx.asof(25), idx.slice_locs(15, 30)
(np.int64(20), (1, 3))
"""

from __future__ import annotations

import datetime as dt
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import is_list_like, is_scalar

from ..core.entity import Tileable
from ..core.tiling import as_data
from ..tensor.core import is_tensor
from .core import Index, Series, concat_values, wrap
from .index_methods import _get_indexer
from .meta import fake
from .reduction import tree_reduce
from .selection import rows_arg_map

__all__: list[str] = []


# ----------------------------------------------------------------- a label probed in every partition
def _count_before(part: pd.Index, label: Any, side: str, decreasing: bool) -> int:
    """Labels of a sorted ``part`` before ``label``'s bound on ``side`` (``decreasing``: sorted that way)."""
    if not decreasing:
        return int(part.searchsorted(label, side=side))
    flipped = "right" if side == "left" else "left"
    return len(part) - int(part[::-1].searchsorted(label, side=flipped))


def _probe(part: pd.Index, label: Any, side: str, catch: tuple) -> dict:
    """What the whole needs of one partition: rows, hits of ``label``, counts before its bound, their labels."""
    rows = len(part)
    try:
        hits = np.arange(rows)[part.get_loc(label)].reshape(-1)
    except catch:
        hits = np.array([], dtype=np.intp)
    out = {"rows": rows, "hits": hits, "hit": part[hits], "error": None}
    for key, decreasing in (("inc", False), ("dec", True)):
        try:
            n = _count_before(part, label, side, decreasing)
        except TypeError as err:  # labels that do not compare with ``label``: an error only if the count is used
            n, out["error"] = 0, err
        out[key], out[key + "_label"] = n, part[n - 1] if n else None
    return out


def _merge_probes(parts: list) -> dict:
    out = dict(parts[0])
    for p in parts[1:]:
        out["hits"] = np.concatenate([out["hits"], p["hits"] + out["rows"]])
        out["rows"] += p["rows"]
        out["error"] = out["error"] or p["error"]
        out["hit"] = concat_values([out["hit"], p["hit"]], out["hit"])
        for key in ("inc", "dec"):
            if p[key]:
                out[key + "_label"] = p[key + "_label"]
            out[key] += p[key]
    return out


def _probe_all(idx: Index, label: Any, side: str, catch: tuple) -> dict:
    """The merged probe of ``label`` over the whole Index (runs it)."""
    chunk = partial(_probe, label=label, side=side, catch=catch)
    return tree_reduce(idx, chunk, _merge_probes, _merge_probes, np.dtype(object)).fetch()


def _direction(idx: Index) -> str | None:
    """"inc" or "dec" for a sorted Index (increasing first, as pandas checks), else None."""
    if bool(idx.is_monotonic_increasing):
        return "inc"
    return "dec" if bool(idx.is_monotonic_decreasing) else None


# ----------------------------------------------------------------- asof
def _asof(self: Index, label: Any) -> Any:
    """The label itself if present, else the last label before it in a sorted Index (NaN/NaT if none).

    >>> import mars.dataframe as md
    >>> md.Index([10, 20, 30], chunk_size=2).asof(25)
    np.int64(20)
    """
    way = _direction(self)
    if way is None:
        raise ValueError("index must be monotonic increasing or decreasing")
    if is_list_like(label):
        raise TypeError("asof requires scalar valued input")
    found = _probe_all(self, label, "left", (KeyError, TypeError))
    if found["error"] is not None:
        raise found["error"]
    hits = found["hit"]
    if len(hits):
        # pandas finds repeated labels of a decreasing Index by a mask, and then gives them all
        return hits[-1] if way == "inc" or len(hits) == 1 else hits
    if not bool(self.is_unique):  # pandas pads through get_indexer, which wants unique labels
        raise pd.errors.InvalidIndexError("Reindexing only valid with uniquely valued Index objects")
    return found[way + "_label"] if found[way] else self.meta._na_value


def _masked_labels(part: pd.Index, piece: Any) -> pd.Series:
    return pd.Series(np.asarray(piece, dtype=bool), index=part, dtype=bool)


def _locs_probe(part: pd.Series, where: pd.Index) -> dict:
    positions = np.flatnonzero(part.to_numpy())
    labels = part.index[positions]
    counts = labels.searchsorted(where, side="right") if len(labels) else np.zeros(len(where), dtype=np.intp)
    last = np.where(counts > 0, positions[np.maximum(counts - 1, 0)] if len(positions) else -1, -1)
    first = (positions[0], labels[0]) if len(positions) else None
    return {"rows": len(part), "counts": counts, "last": last, "first": first}


def _merge_locs(parts: list) -> dict:
    out = dict(parts[0])
    for p in parts[1:]:
        out["last"] = np.where(p["counts"] > 0, p["last"] + out["rows"], out["last"])
        out["counts"] = out["counts"] + p["counts"]
        if out["first"] is None and p["first"] is not None:
            out["first"] = (p["first"][0] + out["rows"], p["first"][1])
        out["rows"] += p["rows"]
    return out


def _asof_locs(self: Index, where: Any, mask: Any) -> np.ndarray:
    """Per label of ``where``, the position of the last label of this sorted Index at or before it among
    the positions where ``mask`` is true (-1: none), as ``pandas.Index.asof_locs``; runs it.

    >>> import mars.dataframe as md
    >>> import numpy as np
    >>> md.Index([10, 20, 30], chunk_size=2).asof_locs(md.Index([5, 25, 35]).to_pandas(), np.ones(3, bool))
    array([-1,  1,  2])
    """
    where = pd.Index(where.fetch() if isinstance(where, Tileable) else where)
    if isinstance(mask, (Series, Index)):
        mask = mask.to_tensor()
    elif not is_tensor(mask):
        mask = np.asarray(mask, dtype=bool)
    flagged = rows_arg_map(self, _masked_labels, (), mask)
    found = tree_reduce(flagged, partial(_locs_probe, where=where), _merge_locs, _merge_locs,
                        np.dtype(object)).fetch()
    if not len(where):
        return np.array([], dtype=np.intp)
    if found["first"] is None:
        raise IndexError("cannot do a non-empty take from an empty axes.")
    first_position, first_label = found["first"]
    result = np.where(found["counts"] > 0, found["last"], first_position).astype(np.intp)
    result[(found["counts"] <= 1) & np.asarray(where < first_label, dtype=bool)] = -1
    return result


# ----------------------------------------------------------------- slice bounds
def _get_slice_bound(self: Index, label: Any, side: str) -> int:
    """The position where a slice from (``side="left"``) or to (``"right"``) ``label`` starts or stops,
    as ``pandas.Index.get_slice_bound``; runs it.

    >>> import mars.dataframe as md
    >>> md.Index([10, 20, 20, 30], chunk_size=3).get_slice_bound(20, "right")
    3
    """
    if side not in ("left", "right"):
        raise ValueError(f"Invalid value for side kwarg, must be either 'left' or 'right': {side}")
    cast = fake(self.meta)._maybe_cast_slice_bound(label, side)
    found = _probe_all(self, cast, side, (KeyError,))
    hits = found["hits"]
    if len(hits):
        if hits[-1] - hits[0] + 1 != len(hits):
            raise KeyError(f"Cannot get {side} slice bound for non-unique label: {label!r}")
        return int(hits[0]) if side == "left" else int(hits[-1]) + 1
    way = _direction(self)
    if way is None:
        raise KeyError(f"Cannot get {side} slice bound for non-monotonic index with a missing label {label!r}. "
                       "Either sort the index or specify an existing label.")
    if found["error"] is not None:
        raise found["error"]
    return int(found[way])


def _slice_locs(self: Index, start: Any = None, end: Any = None, step: int | None = None) -> tuple[int, int]:
    """(start, stop) positions of the labels from ``start`` to ``end`` inclusive, as ``pandas.Index.slice_locs``.

    >>> import mars.dataframe as md
    >>> md.Index(list("abcd"), chunk_size=3).slice_locs("b", "c")
    (1, 3)
    """
    forward = step is None or step >= 0
    if not forward:
        start, end = end, start
    if isinstance(start, (str, dt.datetime)) and isinstance(end, (str, dt.datetime)):
        try:
            first, last = pd.Timestamp(start), pd.Timestamp(end)
        except (ValueError, TypeError):
            pass
        else:
            if (first.tz is None) != (last.tz is None) or (first.tz is not None and first.utcoffset() !=
                                                           last.utcoffset()):
                raise ValueError("Both dates must have the same UTC offset")
    lo = 0 if start is None else _get_slice_bound(self, start, "left")
    hi = _length(self) if end is None else _get_slice_bound(self, end, "right")
    if forward:
        return lo, hi
    n = _length(self)
    lo, hi = hi - 1, lo - 1
    return (lo - n if lo == -1 else lo), (hi - n if hi == -1 else hi)


def _length(idx: Index) -> int:
    if np.isnan(idx.shape[0]):
        idx.execute()
    return int(idx.shape[0])


def _slice_indexer(self: Index, start: Any = None, end: Any = None, step: int | None = None) -> Any:
    """A slice of positions for the labels from ``start`` to ``end`` inclusive, as ``pandas.Index.slice_indexer``
    (on an unsorted DatetimeIndex with string bounds: the positions in between, as pandas).

    >>> import mars.dataframe as md
    >>> md.Index([1, 2, 3, 4], chunk_size=3).slice_indexer(2, 3)
    slice(1, 3, None)
    """
    if isinstance(self.meta, pd.DatetimeIndex):
        if isinstance(start, dt.time) or isinstance(end, dt.time):
            raise NotImplementedError("slice_indexer with datetime.time bounds; use "
                                      "idx.to_pandas().indexer_between_time(start, end)")
        given = [p for p in (start, end) if p is not None]
        if all(isinstance(p, str) for p in given) and not bool(self.is_monotonic_increasing):
            return _between_dates(self, start, end, step)
    lo, hi = _slice_locs(self, start, end, step)
    return slice(lo, hi, step)


def _date_hits(part: pd.Index, low: Any, high: Any) -> dict:
    inside = np.ones(len(part), dtype=bool)
    seen = []
    for bound, keep in ((low, lambda b: b <= part), (high, lambda b: part <= b)):
        if bound is not None:
            inside &= np.asarray(keep(bound))
            seen.append(bool((part == bound).any()))
    return {"rows": len(part), "positions": np.flatnonzero(inside), "seen": seen}


def _merge_dates(parts: list) -> dict:
    out = dict(parts[0])
    for p in parts[1:]:
        out["positions"] = np.concatenate([out["positions"], p["positions"] + out["rows"]])
        out["seen"] = [a or b for a, b in zip(out["seen"], p["seen"])]
        out["rows"] += p["rows"]
    return out


def _between_dates(self: Index, start: Any, end: Any, step: Any) -> Any:
    sample = fake(self.meta)
    low = None if start is None else sample._maybe_cast_slice_bound(start, "left")
    high = None if end is None else sample._maybe_cast_slice_bound(end, "right")
    found = tree_reduce(self, partial(_date_hits, low=low, high=high), _merge_dates, _merge_dates,
                        np.dtype(object)).fetch()
    if not all(found["seen"]):
        raise KeyError("Value based partial slicing on non-monotonic DatetimeIndexes with non-existing keys is "
                       "not allowed.")
    positions = found["positions"][::step]
    return slice(None) if len(positions) == found["rows"] else positions


# ----------------------------------------------------------------- grouping, reindexing, sorting
def _keyed_labels(part: pd.Index, piece: Any) -> pd.Series:
    return pd.Series(np.asarray(piece, dtype=object) if len(piece) else piece, index=part, dtype=object)


def _groups_of(part: pd.Series, meta: pd.Index) -> dict:
    codes, keys = pd.factorize(part.to_numpy(), use_na_sentinel=True)
    labels = part.index
    return {key: labels[codes == k] for k, key in enumerate(keys)} if len(labels) else {}


def _merge_groups(parts: list, meta: pd.Index) -> dict:
    out: dict = {}
    for groups in parts:
        for key, labels in groups.items():
            out.setdefault(key, []).append(labels)
    return {key: concat_values(pieces, meta) for key, pieces in out.items()}


def _final_groups(parts: list, meta: pd.Index) -> dict:
    return {"groups": _merge_groups(parts, meta)}


def _groupby(self: Index, values: Any) -> dict:
    """``{key: the labels whose value is key}`` for ``values`` as long as the Index, keys ordered as pandas
    orders categories (missing keys left out), as ``pandas.Index.groupby``; runs it.

    >>> import mars.dataframe as md
    >>> groups = md.Index(list("abcd"), chunk_size=3).groupby([1, 0, 1, 0])
    >>> {k: v.tolist() for k, v in groups.items()}
    {0: ['b', 'd'], 1: ['a', 'c']}
    """
    if isinstance(values, (Series, Index)):
        values = values.to_tensor()
    elif not is_tensor(values):
        values = values._values if isinstance(values, pd.MultiIndex) else values
        values = np.asarray(pd.Index(values, tupleize_cols=False), dtype=object)
    keyed = rows_arg_map(self, _keyed_labels, (), values)
    meta = self.meta
    merged = tree_reduce(keyed, partial(_groups_of, meta=meta), partial(_merge_groups, meta=meta),
                         partial(_final_groups, meta=meta), np.dtype(object)).fetch()["groups"]
    order = pd.Categorical(list(merged)).categories
    return {key: merged[key] for key in order}


def _reindex(self: Index, target: Any, method: Any = None, level: Any = None, limit: Any = None,
             tolerance: Any = None) -> tuple:
    """(``target`` as an Index, each of its labels' position here or -1, None when it equals this Index),
    as ``pandas.Index.reindex``; runs it.

    >>> import mars.dataframe as md
    >>> md.Index([5, 6, 7], chunk_size=2).reindex([7, 1])
    (Index([7, 1], dtype='int64'), array([ 2, -1]))
    """
    if method is not None or limit is not None or tolerance is not None or level is not None:
        raise NotImplementedError("Index.reindex(method=/limit=/tolerance=/level=) is not supported; use "
                                  "idx.to_pandas().reindex(...)")
    keep_name = not hasattr(target, "name")
    if isinstance(target, Tileable):
        target = target.fetch()
    if not isinstance(target, pd.Index) and len(list(target) if not hasattr(target, "__len__") else target) == 0:
        target = self.meta[:0]
    else:
        target = pd.Index(list(target) if not hasattr(target, "__len__") else target)
    if self.equals(target):
        indexer = None
    elif bool(self.is_unique):
        indexer = _get_indexer(self, target).fetch()
    else:
        raise ValueError("cannot reindex on an axis with duplicate labels")
    if keep_name and target.nlevels == 1 and target.name != self.name:
        target = target.rename(self.name)
    return target, indexer


def _sortlevel(self: Index, level: Any = None, ascending: bool | list = True, sort_remaining: Any = None,
               na_position: str = "first") -> tuple:
    """(the sorted Index, the positions that sort it: a lazy tensor), as ``pandas.Index.sortlevel``.

    >>> import mars.dataframe as md
    >>> sorted_idx, positions = md.Index([3, 1, 2], chunk_size=2).sortlevel()
    >>> sorted_idx.to_pandas().tolist(), positions.fetch().tolist()
    ([1, 2, 3], [1, 2, 0])
    """
    if isinstance(self.meta, pd.MultiIndex):
        raise NotImplementedError("MultiIndex.sortlevel is not supported; use sort_values(return_indexer=True)")
    if not isinstance(ascending, (list, bool)):
        raise TypeError("ascending must be a single bool value ora list of bool values of length 1")
    if isinstance(ascending, list):
        if len(ascending) != 1:
            raise TypeError("ascending must be a list of bool values of length 1")
        ascending = ascending[0]
    if not isinstance(ascending, bool):
        raise TypeError("ascending must be a bool value")
    return self.sort_values(return_indexer=True, ascending=ascending, na_position=na_position)


def _ravel(self: Index, order: str = "C") -> Index:
    """The Index itself (it has one axis), as ``pandas.Index.ravel``.

    >>> import mars.dataframe as md
    >>> md.Index([1, 2]).ravel().to_pandas().tolist()
    [1, 2]
    """
    return wrap(as_data(self))


# ----------------------------------------------------------------- what the labels are, and their size
def _kind(value: Any) -> tuple:
    """What ``pandas.api.types.infer_dtype`` tells apart in one value: its type, whether missing, its tz,
    freq, closed side and the type of an interval's bounds."""
    missing = bool(is_scalar(value) and pd.isna(value))
    extra = tuple(str(getattr(value, a, None)) for a in ("tz", "freq", "closed"))
    return type(value), missing, extra, type(getattr(value, "left", None))


def _kinds(part: pd.Index) -> list:
    seen: dict = {}
    for value in part:
        seen.setdefault(_kind(value), value)
    return list(seen.items())


def _merge_kinds(parts: list) -> list:
    seen: dict = {}
    for kinds in parts:
        for key, value in kinds:
            seen.setdefault(key, value)
    return list(seen.items())


def _inferred_from(parts: list) -> str:
    return pd.Index([v for _, v in _merge_kinds(parts)], dtype=object, tupleize_cols=False).inferred_type


def _inferred_type(self: Index) -> str:
    """What kind of labels these are, as ``pandas.Index.inferred_type`` (object labels: runs it,
    sending one label of each kind).

    >>> import mars.dataframe as md
    >>> md.Index([1, "a"], dtype=object, chunk_size=1).inferred_type
    'mixed-integer'
    """
    if self.meta.dtype != object or isinstance(self.meta, pd.MultiIndex):
        return self.meta.inferred_type
    return tree_reduce(self, _kinds, _merge_kinds, _inferred_from, np.dtype(object)).fetch()


def _size_of(part: pd.Index, measure: Any) -> tuple:
    """(the bytes this partition adds to the whole, the bytes of none of its labels, itself if a RangeIndex)."""
    if isinstance(part, pd.RangeIndex):
        return measure(pd.Index(part.to_numpy())) - measure(pd.Index(part.to_numpy()[:0])), measure(part[:0]), part
    return measure(part) - measure(part[:0]), measure(part[:0]), None


def _total_size(parts: list, meta: pd.Index, measure: Any) -> int:
    ranges = [r for _, _, r in parts]
    if all(r is not None or not n for (n, _, _), r in zip(parts, ranges)) and any(r is not None for r in ranges):
        return int(measure(concat_values([r for r in ranges if r is not None], meta)))
    return int(sum(n for n, _, _ in parts) + parts[0][1])


def _measure(self: Index, measure: Any) -> int:
    return int(tree_reduce(self, partial(_size_of, measure=measure), None,
                           partial(_total_size, meta=self.meta, measure=measure), np.dtype(object)).fetch())


def _bytes_of(part: pd.Index) -> int:
    return part.nbytes


def _usage_of(part: pd.Index, deep: bool) -> int:
    return part.memory_usage(deep=deep)


def _nbytes(self: Index) -> int:
    """The bytes of the labels as the whole Index holds them, as ``pandas.Index.nbytes``; runs it.

    >>> import mars.dataframe as md
    >>> md.Index([1, 2, 3], chunk_size=2).nbytes
    24
    """
    return _measure(self, _bytes_of)


def _memory_usage(self: Index, deep: bool = False) -> int:
    """The labels' memory (``deep``: object labels' own sizes too), as ``pandas.Index.memory_usage`` of an
    Index that has not built its lookup table; runs it.

    >>> import mars.dataframe as md
    >>> md.Index([1.0, 2.0], chunk_size=1).memory_usage()
    16
    """
    return _measure(self, partial(_usage_of, deep=bool(deep)))


def _install() -> None:
    Index.asof = _asof
    Index.asof_locs = _asof_locs
    Index.get_slice_bound = _get_slice_bound
    Index.slice_locs = _slice_locs
    Index.slice_indexer = _slice_indexer
    Index.groupby = _groupby
    Index.reindex = _reindex
    Index.sortlevel = _sortlevel
    Index.ravel = _ravel
    Index.inferred_type = property(_inferred_type, doc=_inferred_type.__doc__)
    Index.nbytes = property(_nbytes, doc=_nbytes.__doc__)
    Index.memory_usage = _memory_usage


_install()
