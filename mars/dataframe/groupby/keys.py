"""Group keys: ``by=`` and ``level=`` as plain data that a partition can evaluate.

A :class:`GroupSpec` holds what ``obj.groupby(...)`` was given, with lazy key
Series replaced by :class:`~mars.dataframe.map.Slot` placeholders.
``spec.groupby(part, keys)`` is the pandas groupby of one partition, ``keys``
being the matching partitions of the lazy keys; every chunk function goes
through it, so a partition is grouped exactly as pandas groups the whole.

Lazy keys line up with the rows in one of three ways (``spec.modes``):

- ``"aligned"``: a Series aligned on the index, as pandas aligns a Series key;
- ``"values"``: an array-like of the frame's length, by position;
- ``"index"``: a lazy Index used as a key, by position (its name names the level).

Key *values* per row (for hashing and for sampling range boundaries) are read
off a partition's own groupby: ``ngroup()`` numbers each row's group and the
groups' keys are the ``size()`` index, so keys are hashed once per group, not
once per row.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..map import Slot

ALIGNED, VALUES, INDEX = "aligned", "values", "index"


@dataclasses.dataclass(frozen=True)
class GroupSpec:
    """What ``groupby`` was called with (lazy keys as slots), and the column selection.

    ``selection`` is ``()`` for none, else a 1-tuple holding the key given to
    ``[]`` (a label: SeriesGroupBy; a list: DataFrameGroupBy).
    """

    by: Any
    level: Any = None
    modes: tuple = ()
    sort: bool = True
    dropna: bool = True
    as_index: bool = True
    observed: bool = True
    group_keys: bool = True
    selection: tuple = ()

    def replace(self, **changes: Any) -> GroupSpec:
        return dataclasses.replace(self, **changes)

    def groupby(self, part: Any, keys: Sequence[Any] = (), select: bool = True, **overrides: Any) -> Any:
        """pandas' groupby of ``part`` (a partition), ``keys`` being the lazy keys' partitions."""
        kw = {"sort": self.sort, "dropna": self.dropna, "as_index": self.as_index,
              "observed": self.observed, "group_keys": self.group_keys}
        kw.update(overrides)
        by = _fill(self.by, keys, self.modes)
        if by is None:
            g = part.groupby(level=self.level, **kw)
        else:
            g = part.groupby(by, level=self.level, **kw)
        return g[self.selection[0]] if select and self.selection else g

    def __mars_tokenize__(self) -> Any:
        return ("GroupSpec",) + tuple(getattr(self, f.name) for f in dataclasses.fields(self))


def _fill(by: Any, keys: Sequence[Any], modes: Sequence[str]) -> Any:
    if isinstance(by, Slot):
        key = keys[by.i]
        return _values(key) if modes[by.i] == VALUES else key
    if type(by) is list:
        return [_fill(b, keys, modes) for b in by]
    return by


def _values(key: Any) -> Any:
    """A positional key's values without its index (pandas would align a Series)."""
    if isinstance(key, pd.Series):
        return key.array if isinstance(key.dtype, pd.api.extensions.ExtensionDtype) else key.to_numpy()
    return key


def row_keys(spec: GroupSpec, part: Any, keys: Sequence[Any]) -> list | None:
    """Each grouping's values per row when all are read directly (columns, index levels, lazy keys).

    None when a key is a function or a mapping of the index labels: then
    only pandas' grouping says what the keys are.
    """
    index = part.index
    if spec.by is None:
        levels = spec.level if isinstance(spec.level, (list, tuple)) else [spec.level]
        return [index.get_level_values(level) for level in levels]
    columns = part.columns if isinstance(part, pd.DataFrame) else ()
    out = []
    for item in spec.by if type(spec.by) is list else [spec.by]:
        if isinstance(item, Slot):
            key = keys[item.i]
            out.append(_values(key) if spec.modes[item.i] == VALUES else key)
        elif is_label(item) and item in columns:
            column = part[item]
            if not isinstance(column, pd.Series):
                return None
            out.append(column)
        elif is_label(item) and item in index.names:
            out.append(index.get_level_values(item))
        else:
            return None
    return out


def is_label(item: Any) -> bool:
    """Whether ``by`` item ``item`` may name a column or an index level (a hashable, not a function or an array).

    >>> is_label("k"), is_label(len), is_label(["k"])
    (True, False, False)
    """
    if callable(item) or isinstance(item, (dict, list, np.ndarray, pd.Series, pd.Index)):
        return False
    try:
        hash(item)
    except TypeError:
        return False
    return True


def hash_rows(columns: Sequence[Any]) -> np.ndarray:
    """uint64 hashes of each row's keys; equal keys (as groupby sees them) hash equal in every partition."""
    arrays = {}
    for i, column in enumerate(columns):
        values = column.array if isinstance(column, (pd.Series, pd.Index)) else column
        if isinstance(values, pd.arrays.NumpyExtensionArray):
            values = values.to_numpy()
        if isinstance(values, np.ndarray) and values.dtype.kind == "f":
            # -0.0 and 0.0 are one group, as are NaNs of any payload: one bit pattern each
            values = np.where(np.isnan(values), np.nan, values + 0.0)
        arrays[i] = values
    if len(arrays) == 1:
        return pd.util.hash_pandas_object(pd.Series(arrays[0], copy=False), index=False).to_numpy()
    return pd.util.hash_pandas_object(pd.DataFrame(arrays, copy=False), index=False).to_numpy()


def missing_rows(columns: Sequence[Any]) -> np.ndarray:
    """Rows where some key is NaN/None/NaT (the rows ``dropna=True`` leaves out)."""
    mask = pd.isna(columns[0])
    mask = np.asarray(mask)
    for column in columns[1:]:
        mask = mask | np.asarray(pd.isna(column))
    return mask


def key_codes(g: Any) -> tuple[np.ndarray, pd.Index]:
    """Per row, its group's number (-1: a dropped NaN key); and the groups' keys in that numbering.

    ``g`` is an unselected groupby with ``as_index=True``.
    """
    codes = g.ngroup().to_numpy()
    if codes.dtype.kind == "f":
        codes = np.where(np.isnan(codes), -1, codes)
    return codes.astype(np.int64, copy=False), g.size().index


def key_frame(keys: pd.Index) -> pd.DataFrame:
    """Group keys as columns ``0..k-1`` (one per level)."""
    arrays = [keys.get_level_values(i) for i in range(keys.nlevels)]
    return pd.DataFrame(dict(enumerate(arrays)), copy=False)


def sort_order(frame: pd.DataFrame) -> np.ndarray:
    """Stable order of ``frame``'s rows as groupby sorts keys: by each column in turn, NaN last."""
    if len(frame) == 0:
        return np.zeros(0, dtype=np.int64)
    columns = []
    for j in range(frame.shape[1]):
        codes, uniques = pd.factorize(frame.iloc[:, j], sort=True)
        columns.append(np.where(codes < 0, len(uniques), codes))
    return np.lexsort(columns[::-1])


def range_codes(keys: pd.DataFrame, bounds: pd.DataFrame) -> np.ndarray:
    """For each key row, how many boundary rows sort before or equal to it (its range partition)."""
    if len(bounds) == 0:
        return np.zeros(len(keys), dtype=np.int64)
    both = pd.concat([bounds, keys], ignore_index=True)
    order = sort_order(both)
    # a stable sort puts a boundary before an equal key: equal keys go right of it, in every partition
    before = np.cumsum(order < len(bounds))
    codes = np.empty(len(both), dtype=np.int64)
    codes[order] = before
    return codes[len(bounds):]


def boundaries(samples: Sequence[pd.DataFrame], n: int) -> pd.DataFrame:
    """Up to ``n - 1`` distinct keys cutting the sampled keys into ``n`` ranges of about equal size."""
    samples = [s for s in samples if len(s)]
    if not samples or n < 2:
        return pd.DataFrame()
    both = pd.concat(samples, ignore_index=True)
    ordered = both.take(sort_order(both))
    picks = [len(ordered) * j // n for j in range(1, n)]
    bounds = ordered.iloc[picks].drop_duplicates()
    return bounds.reset_index(drop=True)


def combined_codes(columns: Sequence[Any]) -> tuple[np.ndarray, Any, int] | None:
    """One int64 code per row standing for its keys (-1 where a key is missing), a function turning
    codes back into pandas' group index, and the codes' span; None for key dtypes left to pandas.

    Each key is factorized on its own (what pandas' grouping does too) and
    the codes are combined by place value. Keys of numpy integers or bools,
    strings (``str``, ``string``) and objects are taken; categoricals (their
    unobserved categories), floats and times are left to pandas.

    >>> codes, index_of, span = combined_codes([pd.Series(["b", "a", "b", None], name="s"),
    ...                                          pd.Series([1, 2, 1, 2], name="n")])
    >>> codes.tolist(), span
    ([0, 3, 0, -1], 4)
    >>> index_of(np.array([0, 3])).tolist()
    [('b', 1), ('a', 2)]
    """
    place, codes, missing = 1, np.zeros(len(columns[0]), dtype=np.int64), None
    uniques, places = [], []
    for column in reversed(columns):
        if not _codable(column.dtype):
            return None
        level, values = pd.factorize(column)
        if place * max(len(values), 1) >= 1 << 62:
            return None
        absent = level < 0
        if absent.any():
            missing = absent if missing is None else missing | absent
        codes += level.astype(np.int64, copy=False) * place
        uniques.append(values)
        places.append(place)
        place *= max(len(values), 1)
    if missing is not None:
        codes[missing] = -1
    names = [getattr(c, "name", None) for c in columns]

    def index_of(code: np.ndarray) -> pd.Index:
        levels = [_level(u.take((code // p) % max(len(u), 1))) for u, p in zip(uniques, places)][::-1]
        if len(levels) == 1:
            return levels[0].rename(names[0])
        return pd.MultiIndex.from_arrays(levels, names=names)

    return codes, index_of, place


def _level(values: Any) -> pd.Index:
    """An index of a key's values as pandas' grouping makes it: object values are inferred (strings become
    ``str``), other dtypes kept."""
    return pd.Index(np.asarray(values, dtype=object)) if values.dtype == object else pd.Index(values)


def _codable(dtype: Any) -> bool:
    if isinstance(dtype, np.dtype):
        return dtype.kind in "iubO"
    return isinstance(dtype, pd.StringDtype)
