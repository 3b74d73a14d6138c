"""``ewm`` (state carried between partitions), rolling/expanding ``corr``/``cov``, weighted windows and the
newer window methods, against pandas across partitionings (one, several, uneven with empty ones, size 1)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, lazy, partitionings

import mars.dataframe as md
from mars.dataframe.windows.ewm_state import weighted_sums

N = 17
PARTS = partitionings(N) + [(2, 0, 1, 0, 0, 1, 1, 12)]


def frame(n: int = N) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    a = rng.normal(size=n) + 1000.0  # a large mean: the variances must not cancel
    a[[0, 1, 5, 6, 7, 12]] = np.nan
    b = rng.normal(size=n)
    b[[3, 12, 13]] = np.nan
    return pd.DataFrame({"a": a, "b": b, "c": rng.integers(0, 5, n)},
                        index=pd.date_range("2002-01-01", periods=n, freq="h"))


EWM_ARGS = [
    {"com": 0.5},
    {"span": 4, "adjust": False},
    {"alpha": 0.5, "adjust": False},  # pandas' mean gives a new value what the old weights leave (com == 1)
    {"alpha": 0.3, "ignore_na": True},
    {"halflife": 2, "adjust": False, "ignore_na": True},
    {"com": 2, "min_periods": 4},
]


@pytest.mark.parametrize("chunk_size", PARTS)
@pytest.mark.parametrize("kw", EWM_ARGS)
def test_ewm_moments(chunk_size, kw):
    pdf = frame()
    df = lazy(pdf, chunk_size)
    hows = ["mean", "var", "std"] + (["sum"] if kw.get("adjust", True) else [])
    for how in hows:
        assert_eq(getattr(df.ewm(**kw), how)(), getattr(pdf.ewm(**kw), how)())
    assert_eq(df.a.ewm(**kw).var(bias=True), pdf.a.ewm(**kw).var(bias=True))
    assert_eq(df.ewm(**kw).corr(), pdf.ewm(**kw).corr())
    assert_eq(df.ewm(**kw).cov(bias=True), pdf.ewm(**kw).cov(bias=True))


@pytest.mark.parametrize("chunk_size", PARTS)
def test_ewm_times_and_other(chunk_size):
    pdf = frame()
    df = lazy(pdf, chunk_size)
    times = pdf.index + pd.to_timedelta(np.random.default_rng(2).integers(0, 50, N), unit="min")
    assert_eq(df.ewm(halflife="3h", times=times).mean(), pdf.ewm(halflife="3h", times=times).mean())
    assert_eq(df.ewm(halflife="90min", times=times, adjust=False).mean(),
              pdf.ewm(halflife="90min", times=times, adjust=False).mean())
    assert_eq(df.a.ewm(com=1.5).corr(df.b), pdf.a.ewm(com=1.5).corr(pdf.b))
    assert_eq(df.a.ewm(com=1.5).cov(df.b), pdf.a.ewm(com=1.5).cov(pdf.b))
    assert_eq(df.ewm(span=3).agg(["mean", "std"]), pdf.ewm(span=3).agg(["mean", "std"]))
    assert_eq(df.a.ewm(span=3).agg(["mean", "var"]), pdf.a.ewm(span=3).agg(["mean", "var"]))


def test_ewm_long_series_keeps_precision():
    # many partitions and a slow decay: the carried weights' sums must stay exact
    x = pd.Series(np.random.default_rng(4).normal(size=3000).cumsum())
    s = md.Series(x, chunk_size=137)
    for kw in ({"alpha": 0.001}, {"alpha": 0.9}, {"span": 50, "adjust": False}):
        assert_eq(s.ewm(**kw).mean(), x.ewm(**kw).mean())
        assert_eq(s.ewm(**kw).std(), x.ewm(**kw).std())


@pytest.mark.parametrize("kw", [{"alpha": 1.0}, {"alpha": 1.0, "adjust": False}, {"alpha": 1 - 1e-9}])
def test_ewm_weights_that_vanish_keep_the_last_mean(kw):
    x = pd.Series([np.nan, 1.0, np.nan, 3.0, 4.0, np.nan, np.nan])
    for chunk_size in (7, 2, 1):
        assert_eq(md.Series(x, chunk_size=chunk_size).ewm(**kw).mean(), x.ewm(**kw).mean())


def test_weighted_sums_blocks_match_direct_sums():
    rng = np.random.default_rng(0)
    g = -np.cumsum(rng.uniform(0, 5, 500))
    h = g - rng.uniform(0, 1, 500)
    v = rng.normal(size=500)
    want = [sum(np.exp(g[t] - h[i]) * v[i] for i in range(t + 1)) for t in range(0, 500, 37)]
    np.testing.assert_allclose(weighted_sums(g, h, v)[::37], want, rtol=1e-12)


def test_ewm_errors_are_pandas():
    pdf = frame()
    df = md.DataFrame(pdf, chunk_size=5)
    for kw in ({}, {"com": 1, "span": 2}, {"alpha": 2}):
        with pytest.raises(ValueError) as want:
            pdf.ewm(**kw)
        with pytest.raises(ValueError, match=str(want.value)):
            df.ewm(**kw)
    with pytest.raises(NotImplementedError, match="adjust=False"):
        df.ewm(com=1, adjust=False).sum()
    with pytest.raises(ValueError, match="same length"):
        df.ewm(halflife="1h", times=pdf.index[:-1])
    with pytest.raises(NotImplementedError, match="online"):
        df.ewm(com=1).online()


@pytest.mark.parametrize("chunk_size", PARTS)
def test_rolling_and_expanding_pairwise(chunk_size):
    pdf = frame().fillna(0.5)
    df = lazy(pdf, chunk_size)
    assert_eq(df.rolling(4).corr(), pdf.rolling(4).corr())
    assert_eq(df.rolling("3h").cov(), pdf.rolling("3h").cov())
    assert_eq(df.expanding(2).corr(), pdf.expanding(2).corr())
    assert_eq(df.a.rolling(3).cov(), pdf.a.rolling(3).cov())
    with pytest.raises(NotImplementedError, match="pairwise"):
        df.a.rolling(3).corr(df.b)


@pytest.mark.parametrize("chunk_size", PARTS)
def test_weighted_windows_and_new_methods(chunk_size):
    pdf = frame()[["a", "b"]]
    df = lazy(pdf, chunk_size)
    assert_eq(df.rolling(5, win_type="gaussian", center=True, min_periods=1).mean(std=2),
              pdf.rolling(5, win_type="gaussian", center=True, min_periods=1).mean(std=2))
    assert_eq(df.rolling(4, win_type="triang", min_periods=1).sum(), pdf.rolling(4, win_type="triang",
                                                                                 min_periods=1).sum())
    assert_eq(df.rolling(3, closed="both").max(), pdf.rolling(3, closed="both").max())
    assert_eq(df.rolling(3, min_periods=1).first(), pdf.rolling(3, min_periods=1).first())
    assert_eq(df.rolling(3).nunique(), pdf.rolling(3).nunique())
    assert_eq(df.expanding().last(), pdf.expanding().last())
    assert_eq(df.rolling(2).pipe(lambda r: r.sum()), pdf.rolling(2).pipe(lambda r: r.sum()))
    assert df.rolling(2).ndim == 2 and df.a.expanding().ndim == 1
    with pytest.raises(AttributeError):
        df.rolling(3, win_type="triang").median()
