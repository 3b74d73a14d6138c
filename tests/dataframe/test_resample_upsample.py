"""Upsampling through ``resample`` (``asfreq``/``ffill``/``bfill``/``nearest``/``interpolate``, and reductions on
a finer rule than the data's) equals pandas across partitionings: edges inside a partition, empty partitions,
unsorted data, a single row, empty data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

import mars.dataframe as md
from tests.dataframe.df_testing import _check_meta

STAMPS = pd.DatetimeIndex(["2000-01-01 00:10", "2000-01-01 01:00", "2000-01-01 03:20", "2000-01-01 03:40",
                           "2000-01-01 06:00", "2000-01-01 06:05", "2000-01-01 09:30"])
SERIES = pd.Series([1, 2, 3, 4, 5, 6, 7], index=STAMPS, name="v")
FRAME = pd.DataFrame({"a": [1.0, 2.0, np.nan, 4.0, 5.0, 6.0, 7.0], "b": [3, 1, 4, 1, 5, 9, 2]}, index=STAMPS)
CHUNKINGS = [7, 3, (1, 0, 2, 4), (0, 3, 0, 4), 1]

CALLS = {
    "asfreq": lambda r: r.asfreq(),
    "asfreq fill": lambda r: r.asfreq(fill_value=0),
    "ffill": lambda r: r.ffill(),
    "ffill limit": lambda r: r.ffill(limit=1),
    "bfill": lambda r: r.bfill(),
    "bfill limit": lambda r: r.bfill(limit=2),
    "nearest": lambda r: r.nearest(),
    "interpolate": lambda r: r.interpolate(),
    "interpolate time": lambda r: r.interpolate(method="time"),
    "sum": lambda r: r.sum(),
    "mean": lambda r: r.mean(),
    "first": lambda r: r.first(),
}


def check(call, pobj, chunk_size, rule="30min", **kw):
    expected = call(pobj.resample(rule, **kw))
    mobj = md.DataFrame(pobj, chunk_size=chunk_size) if isinstance(pobj, pd.DataFrame) else \
        md.Series(pobj, chunk_size=chunk_size)
    result = call(mobj.resample(rule, **kw))
    value = result.execute().fetch()
    _check_meta(result.meta, value)
    if isinstance(expected, pd.DataFrame):
        pdt.assert_frame_equal(value, expected, check_freq=False)
    else:
        pdt.assert_series_equal(value, expected, check_freq=False)


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
@pytest.mark.parametrize("name", sorted(CALLS))
def test_series(name, chunk_size):
    check(CALLS[name], SERIES, chunk_size)


@pytest.mark.parametrize("chunk_size", [7, (2, 0, 5), 1])
@pytest.mark.parametrize("name", ["asfreq", "ffill", "bfill limit", "nearest", "interpolate", "sum"])
def test_frame(name, chunk_size):
    check(CALLS[name], FRAME, chunk_size)
    check(lambda r: CALLS[name](r)["a"], FRAME, chunk_size)
    if name == "sum":
        check(lambda r: r["a"].sum(), FRAME, chunk_size)
    elif name in ("ffill", "bfill limit"):  # pandas answers a selection with a groupby of the bins
        check(lambda r: CALLS[name](r["a"]), FRAME, chunk_size)
    else:  # which has no such method
        with pytest.raises(AttributeError, match="'SeriesGroupBy' object has no attribute"):
            CALLS[name](md.DataFrame(FRAME, chunk_size=chunk_size).resample("30min")["a"])


@pytest.mark.parametrize("chunk_size", [3, 1])
@pytest.mark.parametrize("kw", [{"closed": "right"}, {"label": "right"}, {"origin": "start"}, {"offset": "7min"}])
def test_bin_keywords(kw, chunk_size):
    for name in ("asfreq", "ffill", "interpolate"):
        check(CALLS[name], SERIES, chunk_size, rule="20min", **kw)


@pytest.mark.parametrize("chunk_size", [3, 1])
def test_coarser_rule_reindexes_too(chunk_size):
    for name in ("asfreq", "ffill", "bfill", "nearest", "interpolate"):
        check(CALLS[name], SERIES, chunk_size, rule="2h")


def test_unsorted_single_and_empty():
    for name in ("asfreq", "ffill", "bfill", "interpolate"):
        check(CALLS[name], SERIES.iloc[[3, 0, 6, 2, 1, 5, 4]], 3)
        check(CALLS[name], SERIES.iloc[:1], 1)
        check(CALLS[name], SERIES.iloc[:0], 2)


def test_data_on_the_grid():
    on_grid = pd.Series(np.arange(6.0), index=pd.date_range("2000-01-01", periods=6, freq="30min"))
    for name in ("asfreq", "ffill", "interpolate"):
        check(CALLS[name], on_grid, 4)


def test_errors_are_pandas():
    frame = md.DataFrame(FRAME.reset_index(names="t"), chunk_size=3)
    with pytest.raises(ValueError, match="Upsampling from level= or on= selection"):
        frame.resample("30min", on="t").ffill()
    with pytest.raises(ValueError, match="Cannot interpolate inplace"):
        md.Series(SERIES).resample("30min").interpolate(inplace=True)
    with_nat = pd.Series([1.0, 2.0, 3.0], index=pd.DatetimeIndex(["2000-01-01", pd.NaT, "2000-01-01 02:00"]))
    with pytest.raises(ValueError, match="index must be monotonic increasing or decreasing"):
        with_nat.resample("h").ffill()
    with pytest.raises(ValueError, match="index must be monotonic increasing or decreasing"):
        md.Series(with_nat, chunk_size=2).resample("h").ffill().execute()
