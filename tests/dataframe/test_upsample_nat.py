"""Upsampling data that holds NaT, and fills after a column selection, equal pandas (results and errors)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

import mars.dataframe as md
from tests.dataframe.df_testing import _check_meta, lazy

N = pd.NaT


def _stamps(*values: object) -> pd.DatetimeIndex:
    return pd.DatetimeIndex(list(values), name="t")


DATA = {
    "NaT inside": pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": [10, 20, 30, 40]},
                               index=_stamps("2000-01-01 00:00", N, "2000-01-01 02:00", "2000-01-01 03:30")),
    "on the grid": pd.DataFrame({"a": [1, 9, 3]}, index=_stamps("2000-01-01 00:00", N, "2000-01-01 01:00")),
    "NaN at NaT, off the grid": pd.DataFrame({"a": [1.0, np.nan, 3.0]},
                                             index=_stamps("2000-01-01 00:00", N, "2000-01-01 01:30")),
    "unsorted": pd.DataFrame({"a": [3, 2, 1]}, index=_stamps("2000-01-01 02:00", N, "2000-01-01 00:00")),
    "two NaT": pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0]},
                            index=_stamps("2000-01-01 00:00", N, "2000-01-01 02:00", N)),
    "one row at NaT": pd.DataFrame({"a": [5]}, index=_stamps(N)),
    "two rows at NaT": pd.DataFrame({"a": [5, 6]}, index=_stamps(N, N)),
}

CALLS = {
    "asfreq": lambda r: r.asfreq(),
    "asfreq fill": lambda r: r.asfreq(fill_value=0),
    "ffill": lambda r: r.ffill(),
    "bfill limit": lambda r: r.bfill(limit=1),
    "nearest": lambda r: r.nearest(),
    "interpolate": lambda r: r.interpolate(),
    "interpolate time": lambda r: r.interpolate(method="time"),
}


def _outcome(make: object) -> object:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return make()
    except Exception as e:  # noqa: BLE001 - pandas' error is the expected outcome
        return e


def check(call, pobj, chunk_size, rule="1h", **kw):
    expected = _outcome(lambda: call(pobj.resample(rule, **kw)))
    if isinstance(expected, Exception):
        with pytest.raises(type(expected)) as ours:
            call(lazy(pobj, chunk_size).resample(rule, **kw)).execute()
        assert str(ours.value) == str(expected)
        return
    result = call(lazy(pobj, chunk_size).resample(rule, **kw))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = result.execute().fetch()
    _check_meta(result.meta, value)
    if isinstance(expected, pd.DataFrame):
        pdt.assert_frame_equal(value, expected, check_freq=False)
    else:
        pdt.assert_series_equal(value, expected, check_freq=False)


@pytest.mark.parametrize("data", sorted(DATA))
@pytest.mark.parametrize("closed", ["left", "right"])
def test_upsampling_with_nat(data, closed):
    frame = DATA[data]
    for call in CALLS.values():
        for chunk_size in sorted({len(frame), 1, 2}):
            check(call, frame, chunk_size, closed=closed, label=closed)


def test_series_and_time_zones():
    s = DATA["NaT inside"]["a"]
    aware = s.tz_localize("UTC")
    for chunk_size in (4, 1, (2, 0, 2)):
        for call in (CALLS["asfreq"], CALLS["interpolate"], CALLS["ffill"]):
            check(call, s, chunk_size, rule="30min")
            check(call, aware, chunk_size, rule="30min")


def test_nat_rows_in_front_of_the_grid():
    """The NaT row is pandas' first label; its own value, and a NaN there, stay as pandas leaves them."""
    expected = DATA["NaN at NaT, off the grid"].resample("1h").interpolate()
    assert pd.isna(expected.index[0]) and expected["a"].iloc[0] == 3.0
    got = md.DataFrame(DATA["NaN at NaT, off the grid"], chunk_size=1).resample("1h").interpolate().to_pandas()
    pdt.assert_frame_equal(got, expected, check_freq=False)


# ----------------------------------------------------------------- a column selection first
SEL_STAMPS = _stamps("2000-01-01 00:40", "2000-01-01 00:10", N, "2000-01-01 00:20", "2000-01-01 01:10",
                     "2000-01-01 00:50", "2000-01-01 01:30", "2000-01-01 03:30")
SELECTED = pd.DataFrame({"a": [1.0, np.nan, 5.0, np.nan, np.nan, np.nan, 7.0, np.nan],
                         "b": [np.nan, 2.0, 3.0, np.nan, 4.0, np.nan, np.nan, 1.0],
                         "c": list("abcdefgh"), "i": range(8)}, index=SEL_STAMPS)

SELECTIONS = {
    "ffill a": lambda r: r["a"].ffill(),
    "bfill a, b limit": lambda r: r[["a", "b"]].bfill(limit=1),
    "ffill all": lambda r: r[["a", "b", "c", "i"]].ffill(),
    "bfill int": lambda r: r["i"].bfill(),
    "attribute": lambda r: r.a.ffill(limit=1),
}


@pytest.mark.parametrize("name", sorted(SELECTIONS))
def test_fill_after_selection(name):
    with_nat, sorted_rows = SELECTED, SELECTED[SELECTED.index.notna()].sort_index()
    for frame in (with_nat, sorted_rows, SELECTED[SELECTED.index.notna()]):
        for rule in ("1h", "20min"):
            for chunk_size in (len(frame), 3, 1, (2, 0, len(frame) - 2)):
                check(SELECTIONS[name], frame, chunk_size, rule=rule)


def test_fill_after_selection_on_a_column():
    frame = SELECTED[SELECTED.index.notna()].reset_index()
    for chunk_size in (7, 2, (3, 0, 4)):
        check(lambda r: r[["a", "b"]].ffill(), frame, chunk_size, rule="1h", on="t")


@pytest.mark.parametrize("how", ["asfreq", "nearest", "interpolate"])
def test_selection_without_the_method_raises_as_pandas(how):
    for selection in ("a", ["a", "b"]):
        with pytest.raises(AttributeError) as pandas_error:
            getattr(SELECTED.resample("1h")[selection], how)()
        with pytest.raises(AttributeError) as ours:
            getattr(md.DataFrame(SELECTED, chunk_size=3).resample("1h")[selection], how)()
        assert str(ours.value) == str(pandas_error.value)


def test_selection_of_empty_data():
    empty = SELECTED.iloc[:0]
    check(SELECTIONS["ffill all"], empty, 1)
    only_nat = SELECTED[SELECTED.index.isna()]
    check(SELECTIONS["bfill a, b limit"], only_nat, 1)
