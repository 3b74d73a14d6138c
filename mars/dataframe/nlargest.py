"""``nlargest`` and ``nsmallest`` of DataFrames and Series: a tree of each partition's best rows.

pandas breaks ties by position (``keep="first"``/``"last"``), so partials keep
their rows in the original order and one row more than asked: the final
pandas call then sees more than ``n`` rows exactly when the whole does.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import pandas as pd

from ..core.tiling import as_data
from .core import DataFrame, Series
from .meta import empty_meta
from .reduction import tree_reduce

__all__: list[str] = []


def _select_rows(part: Any, method: str, kwargs: dict) -> Any:
    return getattr(part, method)(**kwargs)


def _select_in_place(part: Any, method: str, kwargs: dict) -> Any:
    """The selected rows in their original order.

    pandas breaks ties by position ("first"/"last"), so candidates must
    reach the final selection in their original relative order.
    """
    positions = getattr(part.reset_index(drop=True), method)(**kwargs).index.to_numpy()
    return part.iloc[np.sort(positions)]


def _concat(partials: list) -> Any:
    kept = [p for p in partials if len(p)] or partials[:1]
    return kept[0] if len(kept) == 1 else pd.concat(kept)


def _combine_partials(partials: list, method: str, kwargs: dict) -> Any:
    return _select_in_place(_concat(partials), method, kwargs)


def _agg_partials(partials: list, method: str, kwargs: dict) -> Any:
    return _select_rows(_concat(partials), method, kwargs)


def _select(obj: Any, method: str, kwargs: dict) -> Any:
    """``nlargest``/``nsmallest`` as a tree: each partition's best rows, then the best of those."""
    meta = empty_meta(_select_rows(obj.meta, method, kwargs))
    n, rows = kwargs["n"], as_data(obj).shape[0]
    known = kwargs["keep"] != "all" and not math.isnan(rows)
    shape = (min(max(int(n), 0), rows) if known else np.nan,) + tuple(meta.shape[1:])
    # partials keep one row more than asked: then the final pandas call sees more than n
    # rows exactly when the whole does, and takes the same path (the paths order ties apart)
    partial_kw = dict(kwargs, n=int(n) + 1)
    return tree_reduce(obj, functools.partial(_select_in_place, method=method, kwargs=partial_kw),
                       functools.partial(_combine_partials, method=method, kwargs=partial_kw),
                       functools.partial(_agg_partials, method=method, kwargs=kwargs), meta, shape=shape)


def _df_nlargest(self: DataFrame, n: int, columns: Any, keep: str = "first") -> DataFrame:
    """The ``n`` rows with the largest ``columns`` values, in descending order, as ``pd.DataFrame.nlargest``.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [3, 1, 2, 5]}, chunk_size=2).nlargest(2, "a").to_pandas()
       a
    3  5
    0  3
    """
    return _select(self, "nlargest", {"n": n, "columns": columns, "keep": keep})


def _df_nsmallest(self: DataFrame, n: int, columns: Any, keep: str = "first") -> DataFrame:
    """The ``n`` rows with the smallest ``columns`` values, in ascending order, as ``pd.DataFrame.nsmallest``.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [3, 1, 2, 5]}, chunk_size=2).nsmallest(2, "a").to_pandas()
       a
    1  1
    2  2
    """
    return _select(self, "nsmallest", {"n": n, "columns": columns, "keep": keep})


def _series_nlargest(self: Series, n: int = 5, keep: str = "first") -> Series:
    """The ``n`` largest values, in descending order, as ``pd.Series.nlargest``.

    >>> import mars.dataframe as md
    >>> md.Series([3, 1, 2, 5], chunk_size=2).nlargest(2).tolist()
    [5, 3]
    """
    return _select(self, "nlargest", {"n": n, "keep": keep})


def _series_nsmallest(self: Series, n: int = 5, keep: str = "first") -> Series:
    """The ``n`` smallest values, in ascending order, as ``pd.Series.nsmallest``.

    >>> import mars.dataframe as md
    >>> md.Series([3, 1, 2, 5], chunk_size=2).nsmallest(2).tolist()
    [1, 2]
    """
    return _select(self, "nsmallest", {"n": n, "keep": keep})


DataFrame.nlargest = _df_nlargest
DataFrame.nsmallest = _df_nsmallest
Series.nlargest = _series_nlargest
Series.nsmallest = _series_nsmallest
