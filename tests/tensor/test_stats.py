"""mt.stats: tests and descriptive statistics equal to scipy.stats across chunkings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.stats as st
from tensor_testing import assert_eq, chunkings

import mars.tensor as mt

RNG = np.random.RandomState(0)
A = RNG.rand(9, 4)
B = RNG.rand(7, 4) + 0.2
S1 = RNG.randn(20).round(1)  # ties on purpose
S2 = (RNG.randn(15) + 0.4).round(1)


def _same(result, expected, fields=("statistic", "pvalue")):
    got = result.fetch()
    assert type(got).__name__ == type(expected).__name__
    for f in fields:
        assert_eq(np.asarray(getattr(got, f)), np.asarray(getattr(expected, f)), rtol=1e-9, atol=1e-14)
    stat, pvalue = result  # unpacks like scipy's
    assert isinstance(stat, mt.Tensor) and isinstance(pvalue, mt.Tensor)


@pytest.mark.parametrize("chunk", chunkings((9, 4)))
@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_ttest_1samp_and_rel(chunk, alternative):
    _same(mt.stats.ttest_1samp(mt.tensor(A, chunk_size=chunk), 0.5, alternative=alternative),
          st.ttest_1samp(A, 0.5, alternative=alternative), ("statistic", "pvalue", "df"))
    pop = np.full((1, 4), 0.4)
    _same(mt.stats.ttest_1samp(mt.tensor(A, chunk_size=chunk), pop, axis=0), st.ttest_1samp(A, pop, axis=0))
    _same(mt.stats.ttest_rel(mt.tensor(A, chunk_size=chunk), A ** 2, alternative=alternative),
          st.ttest_rel(A, A ** 2, alternative=alternative), ("statistic", "pvalue", "df"))


@pytest.mark.parametrize("chunk", chunkings((9, 4)))
@pytest.mark.parametrize("equal_var", [True, False])
def test_ttest_ind(chunk, equal_var):
    got = mt.stats.ttest_ind(mt.tensor(A, chunk_size=chunk), mt.tensor(B, chunk_size=3), equal_var=equal_var)
    _same(got, st.ttest_ind(A, B, equal_var=equal_var), ("statistic", "pvalue", "df"))
    _same(mt.stats.ttest_ind(mt.tensor(A, chunk_size=chunk), B, axis=None, alternative="less"),
          st.ttest_ind(A, B, axis=None, alternative="less"))
    _same(mt.stats.ttest_ind(mt.tensor(A.T, chunk_size=2), B.T, axis=1), st.ttest_ind(A.T, B.T, axis=1))


def test_ttest_ind_from_stats():
    _same(mt.stats.ttest_ind_from_stats(mt.tensor([1.0, 2.0]), 1.0, 10, 0.0, 1.5, 12, equal_var=False),
          st.ttest_ind_from_stats(np.array([1.0, 2.0]), 1.0, 10, 0.0, 1.5, 12, equal_var=False))


def test_ttest_errors():
    with pytest.raises(ValueError, match="alternative"):
        mt.stats.ttest_1samp(mt.ones(3), 0, alternative="sideways")
    with pytest.raises(ValueError, match="nan_policy"):
        mt.stats.ttest_ind(mt.ones(3), mt.ones(3), nan_policy="skip")
    with pytest.raises(NotImplementedError, match="propagate"):
        mt.stats.ttest_ind(mt.ones(3), mt.ones(3), nan_policy="omit")
    with pytest.raises(ValueError, match="popmean"):
        mt.stats.ttest_1samp(mt.ones((3, 2)), np.ones((2, 2)))


@pytest.mark.parametrize("chunk", [6, 4, 1])
def test_chisquare_and_power_divergence(chunk):
    f = np.array([16, 18, 16, 14, 12, 12])
    _same(mt.stats.chisquare(mt.tensor(f, chunk_size=chunk)), st.chisquare(f))
    _same(mt.stats.chisquare(mt.tensor(f, chunk_size=chunk), f[::-1], ddof=1), st.chisquare(f, f[::-1], ddof=1))
    for lam in ["log-likelihood", "freeman-tukey", "mod-log-likelihood", "neyman", "cressie-read", 0.3]:
        _same(mt.stats.power_divergence(mt.tensor(f, chunk_size=chunk), lambda_=lam),
              st.power_divergence(f, lambda_=lam))
    obs = np.array([[16, 18], [16, 14], [12, 12.0]])
    _same(mt.stats.chisquare(mt.tensor(obs, chunk_size=chunk), axis=None), st.chisquare(obs, axis=None))
    _same(mt.stats.chisquare(mt.tensor(obs, chunk_size=chunk), axis=1), st.chisquare(obs, axis=1))


def test_chisquare_errors():
    with pytest.raises(ValueError, match="must agree"):
        mt.stats.chisquare(mt.tensor([1.0, 2.0]), [2.0, 2.0]).fetch()
    with pytest.raises(ValueError, match="invalid string for lambda_"):
        mt.stats.power_divergence(mt.ones(3), lambda_="bogus")
    _same(mt.stats.chisquare(mt.tensor([1.0, 2.0]), [2.0, 2.0], sum_check=False),
          st.chisquare([1.0, 2.0], [2.0, 2.0], sum_check=False))


@pytest.mark.parametrize("chunk", chunkings((9, 4)))
def test_moments(chunk):
    t = mt.tensor(A, chunk_size=chunk)
    assert_eq(mt.stats.zscore(t), st.zscore(A))
    assert_eq(mt.stats.zscore(t, axis=None, ddof=1), st.zscore(A, axis=None, ddof=1))
    assert_eq(mt.stats.zmap(t, B), st.zmap(A, B))
    for bias in (True, False):
        assert_eq(mt.stats.skew(t, bias=bias), st.skew(A, bias=bias))
        assert_eq(mt.stats.kurtosis(t, axis=1, bias=bias), st.kurtosis(A, axis=1, bias=bias))
    assert_eq(mt.stats.kurtosis(t, axis=None, fisher=False), st.kurtosis(A, axis=None, fisher=False))
    assert_eq(mt.stats.gmean(t), st.gmean(A))
    assert_eq(mt.stats.gmean(t, axis=1, weights=A), st.gmean(A, axis=1, weights=A))
    assert_eq(mt.stats.hmean(t, axis=None), st.hmean(A, axis=None))


def test_moment_edge_cases():
    const = np.ones((4, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_eq(mt.stats.zscore(mt.tensor(const, chunk_size=3)), st.zscore(const))
        assert_eq(mt.stats.skew(mt.tensor(const, chunk_size=3)), st.skew(const))
        neg = np.array([1.0, -2.0, 3.0])
        assert_eq(mt.stats.hmean(mt.tensor(neg, chunk_size=2)), st.hmean(neg))
    f32 = A.astype(np.float32)
    assert_eq(mt.stats.zscore(mt.tensor(f32, chunk_size=4)), st.zscore(f32), rtol=1e-5)
    assert_eq(mt.stats.skew(mt.tensor(f32, chunk_size=4)), st.skew(f32), rtol=1e-4)
    ints = np.arange(1, 9)
    assert_eq(mt.stats.gmean(mt.tensor(ints, chunk_size=3)), st.gmean(ints))
    assert_eq(mt.stats.zscore(mt.tensor(ints, chunk_size=3)), st.zscore(ints))


@pytest.mark.parametrize("chunk", chunkings((9, 4)))
def test_describe_and_entropy(chunk):
    t = mt.tensor(A, chunk_size=chunk)
    got, want = mt.stats.describe(t).fetch(), st.describe(A)
    assert got.nobs == want.nobs
    for g, w in zip((*got.minmax, *got[2:]), (*want.minmax, *want[2:])):
        assert_eq(np.asarray(g), w)
    assert_eq(mt.stats.entropy(t), st.entropy(A))
    assert_eq(mt.stats.entropy(t, base=2, axis=1), st.entropy(A, base=2, axis=1))
    assert_eq(mt.stats.entropy(t, mt.tensor(A[::-1], chunk_size=2)), st.entropy(A, A[::-1]))
    with pytest.raises(ValueError, match="base"):
        mt.stats.entropy(t, base=-1)


@pytest.mark.parametrize("chunk", [20, 7, 1, ((1, 18, 1),)])
@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_ks_1samp(chunk, alternative):
    fields = ("statistic", "pvalue", "statistic_location", "statistic_sign")
    t = mt.tensor(S1, chunk_size=chunk)
    _same(mt.stats.ks_1samp(t, st.norm.cdf, alternative=alternative), st.ks_1samp(S1, st.norm.cdf,
                                                                               alternative=alternative), fields)
    _same(mt.stats.ks_1samp(t, "norm", args=(0.3, 2.0), method="asymp"),
          st.ks_1samp(S1, st.norm.cdf, args=(0.3, 2.0), method="asymp"), fields)


@pytest.mark.parametrize("chunk", [20, 7, 1])
@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_ks_2samp(chunk, alternative):
    fields = ("statistic", "pvalue", "statistic_location", "statistic_sign")
    got = mt.stats.ks_2samp(mt.tensor(S1, chunk_size=chunk), mt.tensor(S2, chunk_size=4), alternative=alternative)
    _same(got, st.ks_2samp(S1, S2, alternative=alternative), fields)
    _same(mt.stats.ks_2samp(mt.tensor(S2, chunk_size=chunk), S1, method="asymp"),
          st.ks_2samp(S2, S1, method="asymp"), fields)
    nan = np.append(S1, np.nan)
    assert np.isnan(mt.stats.ks_2samp(mt.tensor(nan, chunk_size=chunk), S2).statistic.fetch())


def test_ks_errors():
    with pytest.raises(ValueError, match="Invalid value for mode"):
        mt.stats.ks_2samp(mt.ones(3), mt.ones(3), method="bogus")
    with pytest.raises(ValueError, match="must not be empty"):
        mt.stats.ks_2samp(mt.ones(3), mt.ones(0))
    with pytest.raises(ValueError, match="alternative"):
        mt.stats.ks_1samp(mt.ones(3), "norm", alternative="bogus")


@pytest.mark.parametrize("chunk", [20, 7, 1, ((1, 18, 1),)])
@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
def test_rankdata(chunk, method):
    assert_eq(mt.stats.rankdata(mt.tensor(S1, chunk_size=chunk), method), st.rankdata(S1, method))
    grid = (A * 4).round().reshape(4, 9)
    assert_eq(mt.stats.rankdata(mt.tensor(grid, chunk_size=3), method), st.rankdata(grid, method))
    assert_eq(mt.stats.rankdata(mt.tensor(grid, chunk_size=3), method, axis=1), st.rankdata(grid, method, axis=1))
    assert_eq(mt.stats.rankdata(mt.tensor(grid, chunk_size=2), method, axis=0), st.rankdata(grid, method, axis=0))


def test_rankdata_nan_and_errors():
    x = np.array([3.0, np.nan, 1.0])
    assert_eq(mt.stats.rankdata(mt.tensor(x, chunk_size=2)), st.rankdata(x))
    with pytest.raises(ValueError, match="NaN"):
        mt.stats.rankdata(mt.tensor(x, chunk_size=2), "min").fetch()
    with pytest.raises(ValueError, match='unknown method "foo"'):
        mt.stats.rankdata(mt.ones(3), "foo")
