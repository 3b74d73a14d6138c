"""Series methods: ``between``, ``is_monotonic_*``, ``is_unique``, ``hasnans``, ``searchsorted``,
``factorize``, ``repeat``, ``argsort``.

``is_monotonic_*`` is a tree over each partition's (first, last, monotonic)
facts; ``searchsorted`` on a sorted Series adds up each partition's own
insertion point (the values before a point are those before it in every
partition); ``factorize`` codes each partition against the distributed
``unique()``; ``argsort`` sorts (value, position) pairs with the distributed
sort and hands the positions back in the original partitioning.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd

from ...core.tiling import as_data
from ..core import Index, Series
from ..map import Whole, map_partitions
from ..reductions import Reducer, run_reducer
from ..rows import renumbered
from ..selection import rows_arg_map

__all__: list[str] = []


def _between(self: Series, left: Any, right: Any, inclusive: str = "both") -> Series:
    """Whether each value lies between ``left`` and ``right`` (``inclusive``), as pandas.

    >>> import mars.dataframe as md
    >>> md.Series([1, 5, 9], chunk_size=2).between(2, 9).to_pandas().tolist()
    [False, True, True]
    """
    self.meta.between(left, right, inclusive=inclusive)  # pandas' error for a bad ``inclusive``
    return map_partitions("between", self, left, right, inclusive=inclusive)


class Monotonic(Reducer):
    """(first, last, increasing, decreasing) of the non-empty partitions, merged in order."""

    increasing: bool

    def chunk(self, part: Any) -> tuple | None:
        if not len(part):
            return None
        index = pd.Index(part)
        return index[0], index[-1], index.is_monotonic_increasing, index.is_monotonic_decreasing

    def combine(self, partials: list) -> tuple | None:
        kept = [p for p in partials if p is not None]
        if not kept:
            return None
        inc = all(p[2] for p in kept) and all(_le(a[1], b[0]) for a, b in itertools.pairwise(kept))
        dec = all(p[3] for p in kept) and all(_le(b[0], a[1]) for a, b in itertools.pairwise(kept))
        return kept[0][0], kept[-1][1], inc, dec

    def agg(self, partials: list) -> np.bool_:
        merged = self.combine(partials)
        return np.bool_(True if merged is None else merged[2 if self.increasing else 3])


def _le(a: Any, b: Any) -> bool:
    try:
        return bool(a <= b)
    except TypeError:
        return False


def _monotonic(increasing: bool) -> property:
    def getter(self: Any) -> Any:
        return run_reducer(as_data(self), Monotonic(increasing=increasing), np.bool_(True))

    word = "increasing" if increasing else "decreasing"
    getter.__doc__ = f"""Whether the values are monotonically {word} (a lazy 0-d bool tensor).

    >>> import mars.dataframe as md
    >>> bool(md.Series([1, 2, 2, 3], chunk_size=2).is_monotonic_{word})
    {increasing}
    """
    return property(getter)


def _is_unique(self: Any) -> Any:
    """Whether no value repeats (a lazy 0-d bool tensor).

    >>> import mars.dataframe as md
    >>> bool(md.Series([1, 2, 1], chunk_size=2).is_unique)
    False
    """
    return ~self.duplicated().any()


def _hasnans(self: Any) -> Any:
    """Whether any value is missing (a lazy 0-d bool tensor).

    >>> import mars.dataframe as md
    >>> bool(md.Series([1.0, None], chunk_size=1).hasnans)
    True
    """
    return self.isna().any()


class SearchSorted(Reducer):
    """Insertion points in a sorted Series: the sum of each partition's own."""

    value: Any
    side: str
    scalar: bool

    def chunk(self, part: pd.Series) -> Any:
        return np.asarray(part.searchsorted(self.value, side=self.side), dtype=np.intp)

    def combine(self, partials: list) -> Any:
        return sum(partials)

    def agg(self, partials: list) -> Any:
        total = sum(partials)
        return np.intp(total) if self.scalar else pd.Series(total)


def _searchsorted(self: Series, value: Any, side: str = "left", sorter: Any = None) -> Any:
    """Where ``value`` would be inserted to keep this sorted Series sorted, as pandas: a lazy tensor.

    >>> import mars.dataframe as md
    >>> md.Series([1, 3, 5, 7], chunk_size=3).searchsorted([4, 7], side="right").fetch().tolist()
    [2, 4]
    """
    if sorter is not None:
        raise NotImplementedError("searchsorted(sorter=...); sort the Series first")
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right', got {side!r}")
    sample = self.meta.searchsorted(value, side=side)
    scalar = np.ndim(sample) == 0
    reducer = SearchSorted(value=value, side=side, scalar=scalar)
    if scalar:
        return run_reducer(as_data(self), reducer, np.intp(0))
    return run_reducer(as_data(self), reducer, pd.Series(np.asarray(sample))).to_tensor()


def _codes(part: pd.Series, uniques: Any, use_na_sentinel: bool) -> pd.Series:
    index = pd.Index(np.asarray(uniques), dtype=part.dtype if part.dtype != object else object)
    codes = index.get_indexer(part)
    return pd.Series(codes.astype(np.intp), index=part.index)


def _factorize(self: Series, sort: bool = False, use_na_sentinel: bool = True) -> tuple:
    """(codes, uniques) as pandas: codes a lazy tensor, uniques a lazy Index (missing values coded -1).

    >>> import mars.dataframe as md
    >>> codes, uniques = md.Series(["b", "a", "b"], chunk_size=2).factorize()
    >>> codes.fetch().tolist(), uniques.to_pandas().tolist()
    ([0, 1, 0], ['b', 'a'])
    """
    if not use_na_sentinel:
        raise NotImplementedError("factorize(use_na_sentinel=False); fillna() first")
    uniques = self.dropna().drop_duplicates()
    if sort:
        uniques = uniques.sort_values()
    uniques_index = map_partitions(_as_index, uniques, meta=pd.Index(self.meta.to_numpy()[:0], dtype=self.meta.dtype))
    codes = map_partitions(_codes, self, Whole(uniques), use_na_sentinel)
    return codes.to_tensor(), uniques_index


def _as_index(part: pd.Series) -> pd.Index:
    return pd.Index(part.to_numpy(), dtype=part.dtype)


def _repeat(self: Series, repeats: Any, axis: Any = None) -> Series:
    """Each value repeated ``repeats`` times (an int), in place, as pandas.

    >>> import mars.dataframe as md
    >>> md.Series([1, 2], chunk_size=1).repeat(2).to_pandas().tolist()
    [1, 1, 2, 2]
    """
    if not isinstance(repeats, (int, np.integer)):
        raise NotImplementedError("repeat with per-row counts; repeat(n) with an int, or explode() a list column")
    if repeats < 0:
        raise ValueError("negative dimensions are not allowed")
    result = map_partitions("repeat", self, int(repeats), same_rows=False)
    return result


def _positions(part: pd.Series) -> pd.Series:
    return pd.Series(part.index.to_numpy(), index=part.index)


def _argsort(self: Series, axis: Any = 0, kind: str = "quicksort", order: Any = None, stable: Any = None) -> Series:
    """Positions that would sort the values (missing values last), indexed like the Series, as pandas.

    Ties keep their order (a stable sort): pandas' ``quicksort`` may order ties differently.

    >>> import mars.dataframe as md
    >>> md.Series([3.0, None, 1.0], chunk_size=2).argsort().to_pandas().tolist()
    [2, 0, 1]
    """
    numbered = renumbered(self)
    order_ = numbered.sort_values(kind="stable", na_position="last")
    positions = map_partitions(_positions, order_).to_tensor()
    return rows_arg_map(self, _with_values, (), positions)


def _with_values(part: pd.Series, values: Any) -> pd.Series:
    return pd.Series(np.asarray(values, dtype=np.int64), index=part.index, name=part.name)


Series.between = _between
for _cls in (Series, Index):
    _cls.is_monotonic_increasing = _monotonic(True)
    _cls.is_monotonic_decreasing = _monotonic(False)
    _cls.is_unique = property(_is_unique)
    _cls.hasnans = property(_hasnans)
Series.searchsorted = _searchsorted
Series.factorize = _factorize
Series.repeat = _repeat
Series.argsort = _argsort
