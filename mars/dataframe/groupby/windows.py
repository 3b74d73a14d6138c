"""Moving windows per group: ``gb.rolling(...)``, ``gb.expanding()``, ``gb.ewm(...)``, ``gb.resample(...)``.

A window never crosses groups, so whole groups meet in one partition (a
range shuffle on the keys, as for ``apply``) and pandas' grouped window runs
there; the reducers' results, end to end, are in pandas' order (groups by
key, each group's rows in their original order).

>>> import mars.dataframe as md
>>> df = md.DataFrame({"k": [1, 2, 1, 2], "v": [1.0, 2.0, 3.0, 4.0]}, chunk_size=2)
>>> df.groupby("k").v.rolling(2).sum().to_pandas().tolist()
[nan, 4.0, nan, 6.0]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .groupby import DataFrameGroupBy, GroupBy, SeriesGroupBy

__all__: list[str] = []

#: the methods of each kind of grouped window (pandas' names)
_METHODS = {
    "rolling": ("count", "sum", "mean", "median", "var", "std", "min", "max", "corr", "cov", "skew", "kurt",
                "quantile", "rank", "sem", "apply", "aggregate", "agg", "first", "last", "nunique", "pipe"),
    "expanding": ("count", "sum", "mean", "median", "var", "std", "min", "max", "corr", "cov", "skew", "kurt",
                  "quantile", "rank", "sem", "apply", "aggregate", "agg", "first", "last", "nunique", "pipe"),
    "ewm": ("mean", "sum", "var", "std", "corr", "cov", "aggregate", "agg"),
    "resample": ("sum", "mean", "min", "max", "count", "first", "last", "ohlc", "median", "std", "var", "sem",
                 "prod", "size", "nunique", "quantile", "apply", "aggregate", "agg", "transform", "ffill", "bfill",
                 "nearest", "asfreq", "interpolate", "pipe"),
}


def _window_call(g: Any, kind: str, kwargs: dict, how: str, args: tuple, agg_kwargs: dict) -> Any:
    return getattr(getattr(g, kind)(**kwargs), how)(*args, **agg_kwargs)


class GroupByWindow:
    """A lazy grouped window (pandas' ``RollingGroupby``, ``ExpandingGroupby``, ``ExponentialMovingWindowGroupby``
    or ``DatetimeIndexResamplerGroupby``): each method runs pandas' on whole groups."""

    def __init__(self, gb: GroupBy, kind: str, kwargs: dict):
        getattr(gb._pandas(sample=False), kind)(**kwargs)  # pandas' checks of the arguments
        self._gb, self._kind, self._kwargs = gb, kind, kwargs

    def __repr__(self) -> str:
        return f"<mars grouped {self._kind} of {self._gb!r}>"

    def _agg(self, how: str, *args: Any, **kwargs: Any) -> Any:
        return self._gb._aggregate("pipe", (_window_call, self._kind, self._kwargs, how, args, kwargs), {},
                                   user=True)

    def __getitem__(self, key: Any) -> GroupByWindow:
        return GroupByWindow(self._gb[key], self._kind, self._kwargs)


def _method(name: str) -> Callable:
    def method(self: GroupByWindow, *args: Any, **kwargs: Any) -> Any:
        return self._agg(name, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"pandas' grouped window ``{name}``, per group."
    return method


for _name in sorted({n for names in _METHODS.values() for n in names}):
    setattr(GroupByWindow, _name, _method(_name))


def _rolling(self: GroupBy, window: Any, min_periods: int | None = None, center: bool = False,
             win_type: str | None = None, on: Any = None, closed: str | None = None,
             method: str = "single") -> GroupByWindow:
    """A moving window within each group, as ``pandas.core.groupby.GroupBy.rolling``.

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"k": [1, 1, 2, 1], "v": [1.0, 2.0, 3.0, 4.0]}, chunk_size=2)
    >>> df.groupby("k").v.rolling(2, min_periods=1).mean().to_pandas().tolist()
    [1.0, 1.5, 3.0, 3.0]
    """
    kwargs = {"window": window, "min_periods": min_periods, "center": center, "win_type": win_type, "on": on,
              "closed": closed, "method": method}
    return GroupByWindow(self, "rolling", kwargs)


def _expanding(self: GroupBy, min_periods: int = 1, method: str = "single") -> GroupByWindow:
    """Windows from each group's first row, as ``pandas.core.groupby.GroupBy.expanding``.

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"k": [1, 1, 2, 1], "v": [1.0, 2.0, 3.0, 4.0]}, chunk_size=2)
    >>> df.groupby("k").v.expanding().sum().to_pandas().tolist()
    [1.0, 3.0, 7.0, 3.0]
    """
    return GroupByWindow(self, "expanding", {"min_periods": min_periods, "method": method})


def _ewm(self: GroupBy, com: float | None = None, span: float | None = None, halflife: Any = None,
         alpha: float | None = None, min_periods: int = 0, adjust: bool = True, ignore_na: bool = False,
         times: Any = None, method: str = "single") -> GroupByWindow:
    """Exponentially weighted windows within each group, as ``pandas.core.groupby.GroupBy.ewm``.

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"k": [1, 1, 2], "v": [1.0, 2.0, 3.0]}, chunk_size=2)
    >>> df.groupby("k").v.ewm(alpha=0.5).mean().round(4).to_pandas().tolist()
    [1.0, 1.6667, 3.0]
    """
    if times is not None:
        raise NotImplementedError("groupby(...).ewm(times=...) is not supported (the rows move between partitions);"
                                  " use groupby(...).apply(lambda g: g.ewm(times=g['t'], halflife=...).mean())")
    kwargs = {"com": com, "span": span, "halflife": halflife, "alpha": alpha, "min_periods": min_periods,
              "adjust": adjust, "ignore_na": ignore_na, "times": times, "method": method}
    return GroupByWindow(self, "ewm", kwargs)


def _resample(self: GroupBy, rule: Any, **kwargs: Any) -> GroupByWindow:
    """Resampling of each group's rows on their datetime index (or ``on=`` column), as pandas.

    >>> import mars.dataframe as md, pandas as pd
    >>> df = md.DataFrame({"k": [1, 1, 2], "v": [1.0, 2.0, 3.0]},
    ...                   index=pd.date_range("2000-01-01", periods=3, freq="12h"), chunk_size=2)
    >>> df.groupby("k").v.resample("D").sum().to_pandas().tolist()
    [3.0, 3.0]
    """
    return GroupByWindow(self, "resample", {"rule": rule, **kwargs})


for _cls in (DataFrameGroupBy, SeriesGroupBy):
    _cls.rolling = _rolling
    _cls.expanding = _expanding
    _cls.ewm = _ewm
    _cls.resample = _resample
