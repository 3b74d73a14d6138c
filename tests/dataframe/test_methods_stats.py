"""``rank``, ``skew``/``kurt``, ``corr``/``cov``/``corrwith``/``autocorr``, ``idxmax``/``argmax``, ``mode``,
``first_valid_index`` against pandas across partitionings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, lazy, partitionings

import mars.dataframe as md

N = 14
PARTS = partitionings(N)
CLOSE = {"check_exact": False, "rtol": 1e-9}


def frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    x = rng.normal(size=N)
    x[[0, 2, 7, 8, 9, 13]] = np.nan
    c = rng.normal(size=N)
    c[3:6] = np.nan
    return pd.DataFrame({"a": x, "b": np.arange(N) ** 2, "c": c, "s": list("abcdefghijklmn"),
                         "f": rng.random(N).astype("float32")}, index=[f"r{i}" for i in range(N)])


def ties() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    x = rng.integers(0, 5, N).astype(float)
    x[[0, 2, 7, 8, 13]] = np.nan
    return pd.DataFrame({"a": x, "b": rng.integers(0, 4, N), "s": list("abcabcabcabcab"),
                         "t": pd.date_range("2020", periods=N)[rng.integers(0, 5, N)]})


@pytest.mark.parametrize("cs", PARTS)
def test_rank(cs):
    p = ties()
    m = lazy(p, cs)
    for method in ["average", "min", "max", "first", "dense"]:
        for ascending in [True, False]:
            for na_option in ["keep", "top", "bottom"]:
                for pct in [False, True]:
                    kw = {"method": method, "ascending": ascending, "na_option": na_option, "pct": pct}
                    assert_eq(m.rank(**kw), p.rank(**kw))
    assert_eq(m["a"].rank(), p["a"].rank())
    assert_eq(m.rank(numeric_only=True), p.rank(numeric_only=True))


@pytest.mark.parametrize("cs", PARTS)
def test_skew_kurt(cs):
    p = frame()
    m = lazy(p, cs)
    for name in ["skew", "kurt", "kurtosis"]:
        for skipna in [True, False]:
            assert_eq(getattr(m, name)(numeric_only=True, skipna=skipna),
                      getattr(p, name)(numeric_only=True, skipna=skipna), **CLOSE)
        assert_eq(getattr(m["c"], name)(), getattr(p["c"], name)(), rtol=1e-9)
    assert_eq(m["f"].skew(), p["f"].skew(), rtol=1e-5)
    with pytest.raises(TypeError):
        m.skew()


@pytest.mark.parametrize("cs", PARTS)
def test_corr_cov(cs):
    p = frame()
    m = lazy(p, cs)
    assert_eq(m.corr(numeric_only=True), p.corr(numeric_only=True), **CLOSE)
    assert_eq(m.corr(numeric_only=True, min_periods=9), p.corr(numeric_only=True, min_periods=9), **CLOSE)
    assert_eq(m.cov(numeric_only=True), p.cov(numeric_only=True), **CLOSE)
    assert_eq(m.cov(numeric_only=True, ddof=0), p.cov(numeric_only=True, ddof=0), **CLOSE)
    assert_eq(m[["b", "f"]].cov(ddof=0), p[["b", "f"]].cov(ddof=0), **CLOSE)
    assert_eq(m[["b", "f"]].corr(method="spearman"), p[["b", "f"]].corr(method="spearman"), **CLOSE)
    assert_eq(m["a"].corr(m["c"]), p["a"].corr(p["c"]), rtol=1e-9)
    assert_eq(m["a"].cov(m["c"], ddof=2), p["a"].cov(p["c"], ddof=2), rtol=1e-9)
    assert_eq(m["c"].autocorr(2), p["c"].autocorr(2), rtol=1e-9)
    assert_eq(m.corrwith(m["c"], numeric_only=True), p.corrwith(p["c"], numeric_only=True), **CLOSE)
    assert_eq(m[["a", "b"]].corrwith(m[["b", "c"]]), p[["a", "b"]].corrwith(p[["b", "c"]]), **CLOSE)


def test_corr_errors():
    m = lazy(frame(), 4)
    with pytest.raises(ValueError):
        m.corr()  # a string column, as pandas
    with pytest.raises(NotImplementedError, match="kendall"):
        m.corr(method="kendall", numeric_only=True)
    with pytest.raises(NotImplementedError, match="spearman"):
        m.corr(method="spearman", numeric_only=True).execute()


def test_corr_of_unaligned_series():
    a = pd.Series(np.arange(10.0) ** 1.5, index=np.arange(10))
    b = pd.Series(np.sin(np.arange(12.0)), index=np.arange(12)[::-1])
    assert_eq(md.Series(a, chunk_size=3).corr(md.Series(b, chunk_size=5)), a.corr(b), rtol=1e-9)


@pytest.mark.parametrize("cs", PARTS)
def test_idx_arg_valid_index(cs):
    p = ties().set_axis([f"r{i}" for i in range(N)])
    m = lazy(p, cs)
    for name in ["idxmax", "idxmin"]:
        assert_eq(getattr(m, name)(), getattr(p, name)())
        assert_eq(getattr(m, name)(numeric_only=True), getattr(p, name)(numeric_only=True))
        assert getattr(m["a"], name)().fetch() == getattr(p["a"], name)()
        assert getattr(m["s"], name)().fetch() == getattr(p["s"], name)()
        with pytest.raises(ValueError, match="skipna=False"):
            getattr(m["a"], name)(skipna=False).fetch()
    for name in ["argmax", "argmin"]:
        assert_eq(getattr(m["a"], name)(), getattr(p["a"], name)())
        assert_eq(getattr(m["b"], name)(), getattr(p["b"], name)())
    assert m["a"].first_valid_index().fetch() == p["a"].first_valid_index()
    assert m["a"].last_valid_index().fetch() == p["a"].last_valid_index()


def test_idxmax_all_missing():
    m = md.Series([np.nan, np.nan, np.nan], chunk_size=1)
    with pytest.raises(ValueError, match="all NA"):
        m.idxmax().fetch()
    assert m.first_valid_index().fetch() is None


@pytest.mark.parametrize("cs", PARTS)
def test_mode(cs):
    p = ties()
    m = lazy(p, cs)
    for dropna in [True, False]:
        assert_eq(m["a"].mode(dropna=dropna), p["a"].mode(dropna=dropna))
    assert_eq(m["s"].mode(), p["s"].mode())
    assert_eq(m["t"].mode(), p["t"].mode())
    # padding with NaN changes dtypes, known only once run
    assert_eq(m.mode(), p.mode(), check_meta=False)
    assert_eq(m.mode(numeric_only=True), p.mode(numeric_only=True), check_meta=False)
