"""Where values are: ``idxmax``/``idxmin``, ``argmax``/``argmin``, ``mode``, ``first_valid_index``/``last_valid_index``.

All are tree reductions over the row partitions, whose partials are a few
values per column: a partition's extreme value with its label and position
(and its row count, so that positions add up in order), its first and last
valid labels. ``mode`` reduces the distributed ``value_counts`` (each
distinct value once, wherever it was) to the values of the largest count.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...core.tiling import as_data
from ..core import DataFrame, Series
from ..map import map_partitions
from ..meta import fake
from ..reductions import Reducer, as_frame, run_reducer
from .whole import combine_wholes

__all__: list[str] = []

_NA_SKIPNA = "Encountered an NA value with skipna=False"
_ALL_NA = "Encountered all NA values"


# ----------------------------------------------------------------- idxmax, argmax
class Extreme(Reducer):
    """Per column: (value, label, position, rows, missing seen) of the first largest (smallest) valid value."""

    largest: bool
    skipna: bool
    positions: list | None
    columns: Any
    want: str
    dtype: Any

    def chunk(self, part: Any) -> list:
        frame = as_frame(part)
        if self.positions is not None:
            frame = frame.iloc[:, self.positions]
        out = []
        for j in range(frame.shape[1]):
            col = frame.iloc[:, j]
            valid = col.notna().to_numpy()
            best = None
            if valid.any():
                values = col.to_numpy()[valid] if not valid.all() else col.to_numpy()
                k = int(np.argmax(values) if self.largest else np.argmin(values))
                pos = int(np.flatnonzero(valid)[k])
                best = (values[k], frame.index[pos], pos)
            out.append((best, len(frame), not valid.all()))
        return out

    def _better(self, a: Any, b: Any) -> bool:
        return b[0] > a[0] if self.largest else b[0] < a[0]

    def combine(self, partials: list) -> list:
        out = []
        for cols in zip(*partials):
            best, rows, missing = None, 0, False
            for b, n, m in cols:
                if b is not None and (best is None or self._better(best, b)):
                    best = (b[0], b[1], b[2] + rows)
                rows += n
                missing = missing or m
            out.append((best, rows, missing))
        return out

    def agg(self, partials: list) -> Any:
        results = []
        for best, _, missing in self.combine(partials):
            if missing and not self.skipna:
                raise ValueError(_NA_SKIPNA)
            if best is None:
                raise ValueError(_ALL_NA)
            results.append(best[1] if self.want == "label" else np.int64(best[2]))
        if self.columns is None:
            return results[0]
        return pd.Series(results, index=self.columns, dtype=self.dtype)


def _idx(largest: bool) -> Any:
    name = "idxmax" if largest else "idxmin"

    def method(self: Any, axis: Any = 0, skipna: bool = True, numeric_only: bool = False, *args: Any,
               **kwargs: Any) -> Any:
        if isinstance(self, DataFrame):
            if self.meta._get_axis_number(axis) == 1:
                return map_partitions(name, self, axis=1, skipna=skipna, numeric_only=numeric_only, sample=True)
            result = getattr(fake(self.meta), name)(skipna=skipna, numeric_only=numeric_only)
            used = set(result.index)
            positions = [i for i, c in enumerate(self.meta.columns) if c in used]
            reducer = Extreme(largest=largest, skipna=bool(skipna), positions=positions, columns=result.index,
                              want="label", dtype=result.dtype)
            return run_reducer(as_data(self), reducer, result)
        sample = getattr(fake(self.meta), name)(skipna=skipna)
        reducer = Extreme(largest=largest, skipna=bool(skipna), positions=None, columns=None, want="label",
                          dtype=None)
        return run_reducer(as_data(self), reducer, sample)

    method.__name__ = name
    method.__doc__ = f"""The label of the first {'largest' if largest else 'smallest'} value (per column), as pandas.

    >>> import mars.dataframe as md
    >>> md.Series([3, 9, 1, 9], index=list("abcd"), chunk_size=2).{name}().fetch()
    '{'b' if largest else 'c'}'
    """
    return method


def _arg(largest: bool) -> Any:
    name = "argmax" if largest else "argmin"

    def method(self: Series, axis: Any = None, skipna: bool = True, *args: Any, **kwargs: Any) -> Any:
        reducer = Extreme(largest=largest, skipna=bool(skipna), positions=None, columns=None, want="position",
                          dtype=None)
        return run_reducer(as_data(self), reducer, np.int64(0))

    method.__name__ = name
    method.__doc__ = f"""The position of the first {'largest' if largest else 'smallest'} value, as pandas.

    >>> import mars.dataframe as md
    >>> int(md.Series([3, 9, 1, 9], chunk_size=2).{name}().fetch())
    {1 if largest else 2}
    """
    return method


# ----------------------------------------------------------------- first/last valid index
class ValidLabel(Reducer):
    """The first (last) label of a row with any valid value, or None."""

    first: bool

    def chunk(self, part: Any) -> Any:
        return part.first_valid_index() if self.first else part.last_valid_index()

    def combine(self, partials: list) -> Any:
        kept = [p for p in partials if p is not None]
        return (kept[0] if self.first else kept[-1]) if kept else None

    def agg(self, partials: list) -> Any:
        return self.combine(partials)


def _valid_index(first: bool) -> Any:
    name = "first_valid_index" if first else "last_valid_index"

    def method(self: Any) -> Any:
        return run_reducer(as_data(self), ValidLabel(first=first), None)

    method.__name__ = name
    method.__doc__ = f"""The {'first' if first else 'last'} label with a valid value (None if none): a 0-d tensor.

    >>> import mars.dataframe as md
    >>> md.Series([None, 2.0, 3.0, None], chunk_size=1).{name}().fetch()
    {1 if first else 2}
    """
    return method


# ----------------------------------------------------------------- mode
class Modes(Reducer):
    """The keys of the largest count in a value_counts result, sorted as pandas sorts modes."""

    name: Any
    dtype: Any

    def chunk(self, counts: pd.Series) -> pd.Series:
        return counts[counts == counts.max()] if len(counts) else counts

    def combine(self, partials: list) -> pd.Series:
        kept = [p for p in partials if len(p)]
        if not kept:
            return partials[0]
        both = pd.concat(kept)
        return both[both == both.max()]

    def agg(self, partials: list) -> pd.Series:
        keys = self.combine(partials).index
        try:
            keys = keys.sort_values()
        except TypeError:
            pass
        return pd.Series(keys.to_numpy(), name=self.name).astype(self.dtype)


def _series_mode(self: Series, dropna: bool = True) -> Series:
    """The most frequent values, sorted, as ``pandas.Series.mode``.

    >>> import mars.dataframe as md
    >>> md.Series([3, 1, 3, 1, 2], chunk_size=2).mode().to_pandas().tolist()
    [1, 3]
    """
    counts = self.value_counts(dropna=dropna)
    result = self.meta.mode(dropna=dropna)
    return run_reducer(as_data(counts), Modes(name=self.meta.name, dtype=self.meta.dtype), result)


def _frame_modes(*modes: pd.Series, columns: Any) -> pd.DataFrame:
    out = pd.DataFrame(dict(enumerate(modes)))
    return out.set_axis(columns, axis=1)


def _df_mode(self: DataFrame, axis: Any = 0, numeric_only: bool = False, dropna: bool = True) -> DataFrame:
    """The most frequent values of each column (shorter columns padded with NaN), as pandas.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 1, 2], "b": [3, 4, 4]}, chunk_size=2).mode().to_pandas()
       a  b
    0  1  4
    """
    if self.meta._get_axis_number(axis) == 1:
        raise NotImplementedError("mode(axis=1): each row's modes make a different number of columns; "
                                  "use to_pandas().mode(axis=1)")
    result = fake(self.meta).mode(numeric_only=numeric_only, dropna=dropna)
    modes = [_series_mode(self.iloc[:, i], dropna=dropna) for i, c in enumerate(self.meta.columns)
             if c in set(result.columns)]
    meta = self.meta[list(result.columns)].iloc[:0] if len(modes) else result.iloc[:0]
    return combine_wholes(_frame_modes, modes, {"columns": result.columns}, meta)


for _cls in (DataFrame, Series):
    _cls.idxmax = _idx(True)
    _cls.idxmin = _idx(False)
    _cls.first_valid_index = _valid_index(True)
    _cls.last_valid_index = _valid_index(False)
Series.argmax = _arg(True)
Series.argmin = _arg(False)
Series.mode = _series_mode
DataFrame.mode = _df_mode
