"""DataFrame.resample / Series.resample equal pandas' across partitionings: bins that a partition cut
would split, gaps longer than a partition, empty partitions, unsorted data, NaT, ``on=`` columns, time zones."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

import mars.dataframe as md
from tests.dataframe.df_testing import _check_meta, partitionings


def check(build, pobj, chunk_size):
    """``build`` on the mars counterpart of ``pobj`` equals it on ``pobj``, value and (after running) meta."""
    expected = build(pobj)
    mobj = md.DataFrame(pobj, chunk_size=chunk_size) if isinstance(pobj, pd.DataFrame) else \
        md.Series(pobj, chunk_size=chunk_size)
    result = build(mobj)
    value = result.execute().fetch()
    _check_meta(result.meta, value)
    if isinstance(expected, pd.DataFrame):
        pdt.assert_frame_equal(value, expected)
    else:
        pdt.assert_series_equal(value, expected)


def _gappy_index(n=40, seed=0):
    """Irregular timestamps with runs of several rows per bin and a gap of days in the middle."""
    rng = np.random.default_rng(seed)
    steps = rng.integers(1, 50, n).astype("timedelta64[m]")
    steps[n // 2] = np.timedelta64(3 * 24 * 60, "m")
    return pd.DatetimeIndex(np.datetime64("2000-01-30T22:00") + np.cumsum(steps))


N = 40
SERIES = pd.Series(np.random.default_rng(1).integers(0, 9, N), index=_gappy_index(N), name="v")
FRAME = pd.DataFrame({"a": np.random.default_rng(2).normal(size=N), "b": np.arange(N),
                      "c": np.random.default_rng(3).integers(0, 3, N).astype(float)}, index=_gappy_index(N))
FRAME.loc[FRAME.index[[3, 4, 17]], "a"] = np.nan
CHUNKINGS = [*partitionings(N), 3, (39, 1)]


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
@pytest.mark.parametrize("how", ["sum", "mean", "min", "max", "count", "size", "first", "last", "median", "std",
                                 "var", "sem", "prod", "ohlc", "nunique"])
def test_series_methods(chunk_size, how):
    check(lambda s: getattr(s.resample("2h"), how)(), SERIES, chunk_size)


@pytest.mark.parametrize("chunk_size", [N, 7, (1, N - 3, 2, 0), 1])
@pytest.mark.parametrize("rule", ["5min", "7min", "h", "D", "W", "ME", "QE", "MS", "B"])
def test_rules(chunk_size, rule):
    check(lambda s: s.resample(rule).agg(["sum", "max", "first"]), SERIES, chunk_size)


@pytest.mark.parametrize("chunk_size", [N, 6, (0, 2, 0, N - 2), 1])
@pytest.mark.parametrize("kw", [
    {"closed": "right"}, {"label": "right"}, {"closed": "right", "label": "right"},
    {"origin": "start"}, {"origin": "end"}, {"origin": "end_day", "closed": "left"}, {"origin": "epoch"},
    {"origin": "2000-01-01 00:03"}, {"offset": "13min"}, {"origin": "start", "offset": "-5min"},
    {"closed": "left", "label": "left"},
])
def test_closed_label_origin_offset(chunk_size, kw):
    check(lambda s: s.resample("25min", **kw).agg(["count", "mean"]), SERIES, chunk_size)
    check(lambda s: s.resample("W", **{k: v for k, v in kw.items() if k in ("closed", "label")}).sum(),
          SERIES, chunk_size)


@pytest.mark.parametrize("chunk_size", [N, 9, (1, N - 3, 2, 0), 1])
def test_frame_methods(chunk_size):
    check(lambda d: d.resample("3h").mean(), FRAME, chunk_size)
    check(lambda d: d.resample("3h").max(), FRAME, chunk_size)  # b: int64 → float64 (empty bins)
    check(lambda d: d.resample("3h").ohlc(), FRAME, chunk_size)
    check(lambda d: d.resample("3h").agg({"a": "sum", "b": ["min", "last"]}), FRAME, chunk_size)
    check(lambda d: d.resample("3h")[["a", "c"]].quantile(0.25), FRAME, chunk_size)
    check(lambda d: d.resample("3h")["b"].count(), FRAME, chunk_size)
    check(lambda d: d.resample("3h").b.nunique(), FRAME, chunk_size)
    check(lambda d: d.resample("3h").apply(lambda g: g["a"].sum() - g["b"].max() if len(g) else np.nan),
          FRAME, chunk_size)


def test_no_empty_bins_keeps_ints():
    s = pd.Series(np.arange(12), index=pd.date_range("2000-01-01", periods=12, freq="20min"))
    for cs in (12, 5, 1):
        check(lambda x: x.resample("h").max(), s, cs)
        check(lambda x: x.resample("h").first(), s, cs)


@pytest.mark.parametrize("chunk_size", [N, 7, (1, N - 3, 2, 0)])
def test_unsorted_and_nat(chunk_size):
    order = np.random.default_rng(5).permutation(N)
    shuffled = FRAME.iloc[order]
    check(lambda d: d.resample("2h").first(), shuffled, chunk_size)
    check(lambda d: d.resample("2h").last(), shuffled, chunk_size)
    with_nat = SERIES.copy()
    with_nat.index = with_nat.index.where(np.arange(N) % 7 != 3, pd.NaT)
    check(lambda s: s.resample("2h").sum(), with_nat, chunk_size)
    check(lambda s: s.resample("2h").last(), with_nat, chunk_size)


@pytest.mark.parametrize("chunk_size", [N, 8, (0, 2, 0, N - 2), 1])
def test_on_column(chunk_size):
    df = FRAME.reset_index(names="t")
    check(lambda d: d.resample("4h", on="t").sum(), df, chunk_size)
    check(lambda d: d.resample("4h", on="t", closed="right")[["a", "b"]].mean(), df, chunk_size)
    check(lambda d: d.resample("4h", on="t").b.max(), df, chunk_size)
    check(lambda d: d.resample("4h", on="t").sum(), df.iloc[::-1], chunk_size)


@pytest.mark.parametrize("chunk_size", [N, 7, 1])
def test_time_zone(chunk_size):
    s = SERIES.copy()
    s.index = s.index.tz_localize("Europe/Berlin")
    check(lambda x: x.resample("D").sum(), s, chunk_size)
    check(lambda x: x.resample("90min", origin="start").mean(), s, chunk_size)
    s.index = pd.date_range("2000-03-25", periods=N, freq="93min", tz="Europe/Berlin")  # across a DST change
    check(lambda x: x.resample("D").count(), s, chunk_size)
    check(lambda x: x.resample("4h").max(), s, chunk_size)


def test_small_and_empty():
    one = pd.Series([5.0], index=pd.to_datetime(["2000-01-01 10:00"]))
    check(lambda s: s.resample("h").sum(), one, 1)
    two = pd.Series([1, 2], index=pd.to_datetime(["2000-01-01", "2000-03-01"]))  # a long gap between partitions
    check(lambda s: s.resample("D").mean(), two, 1)
    check(lambda s: s.resample("D").sum(), two, 1)
    empty = pd.Series([], dtype=float, index=pd.DatetimeIndex([]))
    check(lambda s: s.resample("D").sum(), empty, 1)
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0]}, index=pd.to_datetime(["2000-01-01", "2000-01-01", "2000-01-01"]))
    check(lambda d: d.resample("h").agg(["sum", "count"]), frame, 1)


def test_bin_spanning_many_partitions():
    s = pd.Series(np.arange(20.0), index=pd.date_range("2000-01-01", periods=20, freq="min"))
    for cs in (1, 3, (5, 0, 0, 15), (19, 1)):
        check(lambda x: x.resample("h").median(), s, cs)
        check(lambda x: x.resample("7min").agg(["first", "last", "size"]), s, cs)


def test_errors_and_not_supported():
    s = md.Series([1.0, 2.0], index=pd.date_range("2000-01-01", periods=2))
    ps = s.to_pandas()
    with pytest.raises(ValueError) as want:
        ps.resample("D", closed="middle")
    with pytest.raises(ValueError) as got:
        s.resample("D", closed="middle")
    assert str(got.value) == str(want.value)
    with pytest.raises(TypeError, match="DatetimeIndex"):
        md.Series([1.0, 2.0]).resample("D")
    pdt.assert_series_equal(s.resample("h").ffill().to_pandas(), ps.resample("h").ffill(), check_freq=False)
    with pytest.raises(NotImplementedError, match="TimedeltaIndex"):
        md.Series([1.0, 2.0], index=pd.to_timedelta([1, 2], unit="h")).resample("h")
    with pytest.raises(KeyError):
        md.DataFrame({"a": [1.0]}, index=pd.date_range("2000-01-01", periods=1)).resample("D")["zz"]


def test_empty_bins_at_the_ends():
    # origin="end" with closed="left" gives a leading empty bin; month ends with closed="right" bin a day's end
    s = pd.Series(np.arange(9.0), index=pd.date_range("2000-01-01", periods=9, freq="25min"))
    assert s.resample("25min", origin="end", closed="left").sum().iloc[0] == 0  # pandas' own leading empty bin
    for cs in (9, 4, 1):
        check(lambda x: x.resample("25min", origin="end", closed="left").agg(["sum", "mean"]), s, cs)
        check(lambda x: x.resample("25min", origin="end_day", closed="right").count(), s, cs)
    m = pd.Series(np.arange(5.0), index=pd.to_datetime(["2000-01-31 13:00", "2000-02-29 23:00", "2000-03-01 00:00",
                                                         "2000-05-31 10:00", "2000-05-31 23:59"]))
    for cs in (5, 2, 1, (2, 0, 3)):
        check(lambda x: x.resample("ME").agg(["count", "first"]), m, cs)
        check(lambda x: x.resample("ME", closed="left", label="left").sum(), m, cs)
        check(lambda x: x.resample("QE", closed="left").max(), m, cs)


def test_bins_stay_partitioned():
    # each partition computes its own bins (nothing is gathered into one task), and sizes are known
    s = md.Series(np.arange(100.0), index=pd.date_range("2000-01-01", periods=100, freq="7min"), chunk_size=10)
    result = s.resample("h").sum().execute()
    rows = result.data.nsplits[0]
    assert len(rows) == 10 and sum(rows) == 12
