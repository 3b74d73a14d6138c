"""``Index.join``: the labels of two lazy Indexes joined, with the positions each result label came from.

The pairs of positions come from the distributed merge (:func:`mars.dataframe.merge.merge`)
of two frames ``(label, position)``, so no side is gathered; pandas' row order
(the left's for ``left``/``inner``, the right's for ``right``, sorted keys for
``outer`` or ``sort=True``) is the merge's. Which indexer pandas returns as
``None`` depends on the path pandas takes (empty sides, sorted sides, equal
sides, repeated labels): a few facts about both Indexes (lengths, monotonic,
unique, equal) are computed first to follow the same path.

>>> import mars.dataframe as md
>>> joined, lidx, ridx = md.Index([3, 1, 2], chunk_size=2).join(
...     md.Index([2, 3, 4]), how="inner", return_indexers=True)
>>> joined.to_pandas().tolist(), lidx.fetch().tolist(), ridx.fetch().tolist()
([3, 2], [0, 2], [1, 0])
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..core.entity import Tileable
from .core import Index
from .index_methods import as_index, labels_series, lazy_index
from .map import map_partitions
from .merge import merge
from .meta import empty_meta, fake
from .rows import renumbered

__all__: list[str] = []

_HOWS = ("left", "right", "inner", "outer")


@dataclass(frozen=True)
class _Facts:
    """What pandas looks at to choose its join path."""

    n: int
    m: int
    left_increasing: bool
    right_increasing: bool
    left_unique: bool
    right_unique: bool
    equal: bool


def _facts(left: Index, right: Index) -> _Facts:
    n, m = int(left.size), int(right.size)
    equal = bool(n == m and left.equals(right))
    return _Facts(n, m, bool(left.is_monotonic_increasing), bool(right.is_monotonic_increasing),
                  bool(left.is_unique), bool(right.is_unique), equal)


def _keyed(part: pd.Series, column: str) -> pd.DataFrame:
    return pd.DataFrame({"key": part.to_numpy(), column: part.index.to_numpy(dtype=np.intp)})


def _positions_frame(idx: Index, column: str) -> Any:
    meta = pd.DataFrame({"key": pd.Series([], dtype=idx.meta.dtype), column: np.array([], dtype=np.intp)})
    return map_partitions(_keyed, renumbered(labels_series(idx)), column, meta=meta)


def _filled(part: pd.Series) -> pd.Series:
    return part.fillna(-1).astype(np.intp)


def _pairs(left: Index, right: Index, how: str, sort: bool) -> Any:
    """The merge of ``(key, l)`` and ``(key, r)`` on ``key``: one row per result label, in pandas' order."""
    return merge(_positions_frame(left, "l"), _positions_frame(right, "r"), on="key", how=how, sort=sort)


def _indexer(pairs: Any, column: str) -> Any:
    """One side's positions (-1: absent) as a lazy Series numbered ``0..k-1``."""
    filled = map_partitions(_filled, pairs[column], meta=pd.Series([], dtype=np.intp, name=column))
    return renumbered(filled)


def _in_place(part: pd.Series) -> pd.Series:
    return pd.Series([bool((part.to_numpy() == part.index.to_numpy()).all())])


def _is_range(indexer: Any, n: int) -> bool:
    """Whether a lazy indexer is exactly ``0..n-1`` (pandas then returns None for it)."""
    if int(indexer.size) != n:
        return False
    return bool(map_partitions(_in_place, indexer, same_rows=False,
                               meta=pd.Series([], dtype=bool)).all().fetch())


def _named(part: pd.Index, name: Any, dtype: Any) -> pd.Index:
    out = part if part.dtype == dtype else part.astype(dtype)
    return out.rename(name)


def _labels(pairs: Any, name: Any, dtype: Any) -> Index:
    keys = as_index(pairs["key"], name)
    meta = empty_meta(pd.Index([], dtype=dtype, name=name))
    return map_partitions(_named, keys, name, dtype, meta=meta)


def _with_name(idx: Index, name: Any, dtype: Any = None) -> Index:
    dtype = idx.meta.dtype if dtype is None else dtype
    if idx.meta.name == name and idx.meta.dtype == dtype:
        return idx
    return map_partitions(_named, idx, name, dtype, meta=empty_meta(pd.Index([], dtype=dtype, name=name)))


def _none_rule(f: _Facts, how: str, sort: bool) -> tuple[str, str] | None:
    """Which indexers pandas leaves out: ``"none"``, ``"given"`` (an array), ``"range"`` (None if 0..n-1).

    None when both are left out because both sides are equal (the result is one side as it is).
    """
    if f.left_increasing and f.right_increasing and (f.left_unique or f.right_unique):
        if f.equal:
            return None
        if how == "left" and f.right_unique:
            return "none", "given"
        if how == "right" and f.left_unique:
            return "given", "none"
        return "range", "range"
    if f.equal and (f.left_unique or f.right_unique) and (not sort or f.left_increasing):
        return None
    if not f.left_unique or not f.right_unique:
        return "given", "given"
    if how == "left" and not sort:
        return "none", "given"
    if how == "right" and not sort:
        return "given", "none"
    return "given", "given"


def _resolve(rule: str, indexer: Any, n: int) -> Any:
    if rule == "none" or (rule == "range" and _is_range(indexer, n)):
        return None
    return indexer.to_tensor()


def _join_same_dtype(left: Index, right: Index, how: str, sort: bool) -> tuple:
    f = _facts(left, right)
    name = right.meta.name if how == "right" else left.meta.name
    dtype = left.meta.dtype
    if not f.n or not f.m:
        return _join_empty(left, right, f, how, sort)
    rule = _none_rule(f, how, sort)
    if rule is None:
        return _with_name(right if how == "right" else left, name), None, None
    pairs = _pairs(left, right, how, sort)
    lidx, ridx = _resolve(rule[0], _indexer(pairs, "l"), f.n), _resolve(rule[1], _indexer(pairs, "r"), f.m)
    if lidx is None and rule[0] == "range":
        return _with_name(left, name), lidx, ridx
    if ridx is None and rule[1] == "range":
        return _with_name(right, name), lidx, ridx
    return _labels(pairs, name, dtype), lidx, ridx


def _minus_ones(n: int) -> Any:
    import mars.tensor as mt

    return mt.full(n, -1, dtype=np.intp)


def _join_empty(left: Index, right: Index, f: _Facts, how: str, sort: bool) -> tuple:
    """pandas' answer when a side is empty: the other side (sorted if asked), or the empty one."""
    if f.m:
        swapped = {"left": "right", "right": "left"}.get(how, how)
        flipped = _Facts(f.m, f.n, f.right_increasing, f.left_increasing, f.right_unique, f.left_unique, f.equal)
        joined, ridx, lidx = _join_empty(right, left, flipped, swapped, sort)
        return joined, lidx, ridx
    if how in ("left", "outer"):
        if sort and not f.left_increasing:
            joined, lidx = left.sort_values(return_indexer=True)
        else:
            joined, lidx = left, None
        return joined, lidx, _minus_ones(f.n)
    import mars.tensor as mt

    return right, mt.tensor(np.array([], dtype=np.intp)), None


def _join(self: Index, other: Any, *, how: str = "left", level: Any = None, return_indexers: bool = False,
          sort: bool = False) -> Any:
    """The labels of both Indexes joined, as ``pandas.Index.join``; the indexers are lazy tensors (or None).

    ``how`` is ``"left"``, ``"right"``, ``"inner"`` or ``"outer"``; ``sort`` sorts the result
    (``outer`` always does). With a MultiIndex on one side, ``level`` (a name or a position) is
    the level the other side's labels meet (without it, the level named as the other side);
    see :func:`_join_level`. Two MultiIndexes are joined only by pandas (``to_pandas()``).

    >>> import mars.dataframe as md
    >>> md.Index([1, 2, 3], chunk_size=2).join(md.Index([4, 5, 6]), how="outer").to_pandas().tolist()
    [1, 2, 3, 4, 5, 6]
    """
    if not isinstance(other, (Index, pd.Index)):
        if isinstance(other, Tileable):
            raise TypeError(f"Index.join expects an Index, got a lazy {type(other).__name__}")
        warnings.warn(f"Passing {type(other).__name__} to Index.join is deprecated and will raise in a future "
                      "version. Pass an Index instead.", FutureWarning, stacklevel=2)
    other = lazy_index(other)
    if how not in _HOWS:
        raise ValueError(f"do not recognize join method {how}")
    if isinstance(self.meta, pd.MultiIndex) or isinstance(other.meta, pd.MultiIndex):
        joined, lidx, ridx = _join_multi(self, other, how, level)
        return (joined, lidx, ridx) if return_indexers else joined
    sort = bool(sort) or how == "outer"
    a, b = fake(self.meta), fake(other.meta)
    if isinstance(a, pd.DatetimeIndex) and isinstance(b, pd.DatetimeIndex) and (a.tz is None) ^ (b.tz is None):
        raise TypeError("Cannot join tz-naive with tz-aware DatetimeIndex")
    if self.meta.dtype != other.meta.dtype:
        joined, lidx, ridx = _join_cast(self, other, how)
    else:
        joined, lidx, ridx = _join_same_dtype(self, other, how, sort)
    return (joined, lidx, ridx) if return_indexers else joined


def _join_cast(self: Index, other: Index, how: str) -> tuple:
    """Both cast to a common dtype and joined; a left (right) join keeps the left (right) side's dtype.

    As pandas, ``sort`` is not passed on (an outer join sorts anyway).
    """
    dtype = fake(self.meta)._find_common_type_compat(fake(other.meta))
    left, right = _with_name(self, self.meta.name, dtype), _with_name(other, other.meta.name, dtype)
    joined, lidx, ridx = _join_same_dtype(left, right, how, how == "outer")
    if how == "left":
        joined = _with_name(joined, self.meta.name, self.meta.dtype)
    elif how == "right":
        joined = _with_name(joined, other.meta.name, other.meta.dtype)
    return joined, lidx, ridx


# ----------------------------------------------------------------- a MultiIndex's level and a flat Index
def _join_multi(self: Index, other: Index, how: str, level: Any) -> tuple:
    both = isinstance(self.meta, pd.MultiIndex) and isinstance(other.meta, pd.MultiIndex)
    if level is None:
        if both or list(self.meta.names) == list(other.meta.names):
            raise NotImplementedError("Index.join of two MultiIndexes (or without level=) is not supported; use "
                                      "idx.to_pandas().join(other.to_pandas(), ...) or DataFrame.merge on the levels")
        overlap = set(self.meta.names) & set(other.meta.names)
        if not overlap:
            raise ValueError("cannot join with no overlapping index names")
        level = next(iter(overlap))
    if both:
        raise TypeError("Join on level between two MultiIndex objects is ambiguous")
    return _join_level(self, other, level, how)


def _join_level(self: Index, other: Index, level: Any, how: str) -> tuple:
    """pandas' join of a flat Index with one level of a MultiIndex: the MultiIndex's rows stay in order.

    The level's distinct labels (sorted, as pandas keeps a MultiIndex's levels; those in use,
    as after ``remove_unused_levels()``: pandas' answer may differ for a level holding labels
    no row uses, e.g. after slicing a MultiIndex) are joined
    with the flat side as Indexes: if that leaves the level as it was, the MultiIndex is the
    result and its indexer None; otherwise its rows whose label the joined level lacks are
    dropped, and the level takes the joined level's dtype. The flat side's indexer is each
    row's label's position there (-1: absent).
    """
    flip = not isinstance(self.meta, pd.MultiIndex)
    multi, flat = (other, self) if flip else (self, other)
    how = {"left": "right", "right": "left"}.get(how, how) if flip else how
    k = multi.meta._get_level_number(level)  # pandas' KeyError / IndexError for a bad level
    if not flat.is_unique:
        raise NotImplementedError("Index._join_level on non-unique index is not implemented")
    values = multi.get_level_values(k)
    if values.hasnans:
        raise NotImplementedError(f"Index.join(level={level!r}) where the level holds missing labels (pandas' "
                                  "answer there is not consistent); drop or fill them first")
    new_level, kept, _ = _join(values.unique().sort_values(), flat, how=how, return_indexers=True)
    dtype = fake(new_level.meta).dtype
    if kept is None:
        pairs = _level_pairs(multi, k, flat, "left")
        joined, lidx = multi, None
    else:
        pairs = _level_pairs(multi, k, flat, "left" if how in ("left", "outer") else "inner")
        joined, lidx = _rows_of(pairs, multi.meta, k, dtype), _indexer(pairs, "l").to_tensor()
    ridx = _indexer(pairs, "r").to_tensor()
    return (joined, ridx, lidx) if flip else (joined, lidx, ridx)


def _level_columns(part: pd.MultiIndex, k: int, key_dtype: Any) -> pd.DataFrame:
    columns = {f"level{i}": part.get_level_values(i) for i in range(part.nlevels)}
    columns["key"] = part.get_level_values(k).astype(key_dtype)
    return pd.DataFrame({name: np.asarray(v) if not isinstance(v.dtype, pd.api.extensions.ExtensionDtype)
                         else v.array for name, v in columns.items()})


def _with_position(part: pd.DataFrame) -> pd.DataFrame:
    return part.assign(l=part.index.to_numpy(dtype=np.intp))


def _level_pairs(multi: Index, k: int, flat: Index, how: str) -> Any:
    """The MultiIndex's rows as columns ``level<i>``, ``key`` (level ``k``) and ``l`` (position), merged with ``(key, r)``."""
    key_dtype = fake(multi.meta.levels[k])._find_common_type_compat(fake(flat.meta))
    meta = _with_position(_level_columns(multi.meta, k, key_dtype))
    rows = map_partitions(_level_columns, multi, k, key_dtype, meta=meta.drop(columns="l"))
    rows = map_partitions(_with_position, renumbered(rows), meta=meta)
    right = _with_name(flat, flat.meta.name, key_dtype)
    return merge(rows, _positions_frame(right, "r"), on="key", how=how, sort=False)


def _as_multi(part: pd.DataFrame, names: list, k: int, dtype: Any) -> pd.MultiIndex:
    arrays = [part[f"level{i}"] for i in range(len(names))]
    arrays[k] = arrays[k].astype(dtype)
    if not len(part):
        return pd.MultiIndex.from_arrays([pd.Index(a) for a in arrays], names=names)
    return pd.MultiIndex.from_arrays(arrays, names=names)


def _rows_of(pairs: Any, meta: pd.MultiIndex, k: int, dtype: Any) -> Index:
    out = meta.set_levels(meta.levels[k].astype(dtype), level=k)
    return map_partitions(_as_multi, pairs, list(meta.names), k, dtype, meta=out)


def _install() -> None:
    Index.join = _join


_install()
