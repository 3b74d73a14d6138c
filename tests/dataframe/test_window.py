"""``rolling`` and ``expanding`` against pandas across partitionings.

Windows reach across partition boundaries, over several small or empty
partitions: the partitionings below put runs of size-1 and empty partitions
where windows of a few rows must reach past them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, partitionings

import mars.dataframe as md
from mars.dataframe.map import map_partitions

N = 14
#: uneven, with windows reaching over runs of empty and one-row partitions
PARTS = partitionings(N) + [(2, 0, 1, 0, 0, 1, 1, 9), (0, 0, 1, 1, 1, 1, 10), (9, 1, 0, 1, 0, 0, 3)]
CLOSE = {"check_exact": False, "rtol": 1e-9, "atol": 1e-12}


def values(n: int = N) -> np.ndarray:
    x = np.random.default_rng(3).normal(10, 3, size=n)
    x[[2, 7, 8]] = np.nan
    return x


def series(n: int = N) -> pd.Series:
    return pd.Series(values(n), name="v", index=[f"r{k:02d}" for k in range(n)])


def frame(n: int = N) -> pd.DataFrame:
    return pd.DataFrame({"a": values(n), "b": np.arange(n) % 4, "c": np.arange(n) * 0.5}, index=np.arange(n) * 3)


OBJECTS = [series, frame]
ROLLING = [(3, {}), (1, {}), (4, {"min_periods": 1}), (5, {"center": True}), (4, {"center": True, "min_periods": 2}),
           (3, {"closed": "both"}), (N + 3, {"min_periods": 1})]


@pytest.mark.parametrize("make", OBJECTS)
@pytest.mark.parametrize("cs", PARTS)
def test_rolling_aggregations(cs, make):
    pobj = make()
    obj = md.DataFrame(pobj, chunk_size=cs) if isinstance(pobj, pd.DataFrame) else md.Series(pobj, chunk_size=cs)
    for window, kw in ROLLING:
        for how in ["sum", "mean", "min", "max", "std", "var", "count", "median"]:
            assert_eq(getattr(obj.rolling(window, **kw), how)(), getattr(pobj.rolling(window, **kw), how)(), **CLOSE)


@pytest.mark.parametrize("cs", PARTS)
def test_rolling_apply_agg_quantile(cs):
    ps = series()
    s = md.Series(ps, chunk_size=cs)
    span = lambda w: np.nanmax(w) - np.nanmin(w)
    assert_eq(s.rolling(3, min_periods=1).apply(span, raw=True), ps.rolling(3, min_periods=1).apply(span, raw=True))
    assert_eq(s.rolling(4).apply(lambda w: w.iloc[-1] - w.iloc[0]), ps.rolling(4).apply(lambda w: w.iloc[-1] - w.iloc[0]))
    assert_eq(s.rolling(3).agg(["sum", "max"]), ps.rolling(3).agg(["sum", "max"]), **CLOSE)
    assert_eq(s.rolling(5, center=True).quantile(0.25), ps.rolling(5, center=True).quantile(0.25), **CLOSE)
    pdf = frame()
    df = md.DataFrame(pdf, chunk_size=cs)
    assert_eq(df.rolling(2).agg({"a": "sum", "c": "max"}), pdf.rolling(2).agg({"a": "sum", "c": "max"}), **CLOSE)
    assert_eq(df.rolling(3)["a"].mean(), pdf.rolling(3)["a"].mean(), **CLOSE)


@pytest.mark.parametrize("cs", [7, 3, (0, 5, 0, 0, 9)])
def test_rolling_win_type(cs):
    pytest.importorskip("scipy")
    ps = series()
    s = md.Series(ps, chunk_size=cs)
    assert_eq(s.rolling(3, win_type="triang").mean(), ps.rolling(3, win_type="triang").mean(), **CLOSE)
    assert_eq(s.rolling(4, win_type="gaussian", center=True).sum(std=1.5),
              ps.rolling(4, win_type="gaussian", center=True).sum(std=1.5), **CLOSE)


def time_series(decreasing: bool = False) -> pd.Series:
    steps = np.random.default_rng(5).integers(0, 3, N)
    index = pd.Timestamp("2021-02-03") + pd.to_timedelta(np.cumsum(steps), unit="s")
    ps = pd.Series(values(), index=index, name="v")
    return ps.iloc[::-1] if decreasing else ps


@pytest.mark.parametrize("decreasing", [False, True])
@pytest.mark.parametrize("cs", PARTS)
def test_rolling_time_window(cs, decreasing):
    ps = time_series(decreasing)
    s = md.Series(ps, chunk_size=cs)
    for window, kw in [("2s", {}), ("3s", {"closed": "both"}), ("1s", {"closed": "left"}), ("4s", {"center": True}),
                       (pd.Timedelta("5s"), {"min_periods": 2})]:
        if decreasing and kw.get("center"):
            continue
        for how in ["sum", "count", "max", "mean"]:
            assert_eq(getattr(s.rolling(window, **kw), how)(), getattr(ps.rolling(window, **kw), how)(), **CLOSE)


@pytest.mark.parametrize("cs", [N, 4, (3, 0, 1, 1, 9)])
def test_rolling_time_window_on_column(cs):
    pdf = time_series().rename("v").reset_index().rename(columns={"index": "t"})
    df = md.DataFrame(pdf, chunk_size=cs)
    assert_eq(df.rolling("3s", on="t").sum(), pdf.rolling("3s", on="t").sum(), **CLOSE)


def test_rolling_time_window_needs_monotonic_labels():
    ps = pd.Series([1.0, 2.0, 3.0, 4.0], index=pd.to_datetime(["2021-01-01", "2021-01-03", "2021-01-02", "2021-01-04"]))
    with pytest.raises(ValueError, match="index values must be monotonic"):
        ps.rolling("2s").sum()
    with pytest.raises(ValueError, match="index values must be monotonic"):
        md.Series(ps, chunk_size=2).rolling("2s").sum().execute()


@pytest.mark.parametrize("make", OBJECTS)
@pytest.mark.parametrize("cs", PARTS)
def test_expanding_by_state(cs, make):
    pobj = make()
    obj = md.DataFrame(pobj, chunk_size=cs) if isinstance(pobj, pd.DataFrame) else md.Series(pobj, chunk_size=cs)
    for min_periods in [1, 0, 4]:
        for how in ["sum", "mean", "min", "max", "std", "var", "count"]:
            assert_eq(getattr(obj.expanding(min_periods=min_periods), how)(),
                      getattr(pobj.expanding(min_periods=min_periods), how)(), **CLOSE)
    assert_eq(obj.expanding().var(ddof=0), pobj.expanding().var(ddof=0), **CLOSE)


@pytest.mark.parametrize("cs", PARTS)
def test_expanding_by_prefix(cs):
    ps = series()
    s = md.Series(ps, chunk_size=cs)
    assert_eq(s.expanding(min_periods=2).median(), ps.expanding(min_periods=2).median())
    assert_eq(s.expanding().apply(lambda w: w[-1] * 2 - w[0], raw=True),
              ps.expanding().apply(lambda w: w[-1] * 2 - w[0], raw=True))
    assert_eq(s.expanding().agg(["sum", "max"]), ps.expanding().agg(["sum", "max"]), **CLOSE)


def test_expanding_large_offsets_stay_precise():
    """Variance of values far from zero: the carried state must not lose precision."""
    ps = pd.Series(1e9 + np.random.default_rng(0).normal(size=200))
    s = md.Series(ps, chunk_size=(1, 0, 60, 0, 0, 139))
    assert_eq(s.expanding().std(), ps.expanding().std(), check_exact=False, rtol=1e-7)
    assert_eq(s.expanding().mean(), ps.expanding().mean(), check_exact=False, rtol=1e-12)


def test_window_after_filter_with_unknown_sizes():
    """Row counts unknown until run (a filter) are computed before the overlaps are cut."""
    ps = series()
    s = md.Series(ps, chunk_size=3)
    kept = map_partitions(lambda p: p[p.index.str[-1] != "3"], s, same_rows=False)
    expected = ps[ps.index.str[-1] != "3"]
    assert_eq(kept.rolling(3, min_periods=1).sum(), expected.rolling(3, min_periods=1).sum(), **CLOSE)
    assert_eq(kept.expanding().max(), expected.expanding().max())


@pytest.mark.parametrize("cs", [4, (0, 1, 1, 2)])
def test_numeric_only(cs):
    pdf = pd.DataFrame({"a": [1.0, 2.0, np.nan, 4.0], "s": list("wxyz"), "b": [True, False, True, True]})
    df = md.DataFrame(pdf, chunk_size=cs)
    assert_eq(df.expanding().sum(numeric_only=True), pdf.expanding().sum(numeric_only=True))
    assert_eq(df.expanding(2).std(numeric_only=True), pdf.expanding(2).std(numeric_only=True), **CLOSE)
    assert_eq(df.rolling(2).max(numeric_only=True), pdf.rolling(2).max(numeric_only=True))


def test_window_metadata_and_errors():
    pdf = pd.DataFrame({"a": [1.0, 2.0], "s": ["x", "y"]})
    df = md.DataFrame(pdf, chunk_size=1)
    with pytest.raises(Exception) as want:
        pdf.rolling(2).sum()
    with pytest.raises(type(want.value), match="Cannot aggregate non-numeric"):
        df.rolling(2).sum()
    with pytest.raises(type(want.value), match="Cannot aggregate non-numeric"):
        df.expanding().mean()
    with pytest.raises(ValueError, match="window must be an integer 0 or greater"):
        df.rolling(-1)
    with pytest.raises(ValueError, match="min_periods must be >= 0"):
        df.expanding(min_periods=-1)
    with pytest.raises(NotImplementedError):
        df.rolling(2, step=2)
    s = md.Series(pd.Series([1, 2, 3], dtype="int64"), chunk_size=2)
    assert s.rolling(2).sum().meta.dtype == np.float64
    assert_eq(s.rolling(2).sum(), pd.Series([1, 2, 3]).rolling(2).sum())
