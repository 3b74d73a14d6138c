"""Reductions (sum ... describe, agg) and cumulative ops, against pandas across partitionings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, partitionings, lazy, same_error

import mars.dataframe as md
from mars.core.options import option_context
from mars.tensor.core import Tensor

N = 12
PARTS = partitionings(N)


def frame(n: int = N) -> pd.DataFrame:
    """ints, floats with NaN (a leading all-NaN run), bools, strings and datetimes."""
    k = np.arange(n)
    f = np.where(k % 3 == 1, np.nan, k / 2)
    f[:3] = np.nan
    return pd.DataFrame({
        "i": k * 3 - 5,
        "f": f,
        "b": k % 2 == 0,
        "s": [f"s{j % 5}" for j in k],
        "t": pd.date_range("2020-01-01", periods=n, freq="D"),
    }, index=[f"r{j:02d}" for j in k])


PDF = frame()
NUM = PDF[["i", "f", "b"]]


# ----------------------------------------------------------------- tree reductions
@pytest.mark.parametrize("chunk_size", PARTS)
@pytest.mark.parametrize("name", ["sum", "prod", "min", "max", "count", "any", "all"])
def test_simple_frame(chunk_size, name):
    df = lazy(NUM, chunk_size)
    for kw in ({}, {"skipna": False}) if name != "count" else ({},):
        assert_eq(getattr(df, name)(**kw), getattr(NUM, name)(**kw))
    if name not in ("any", "all", "prod"):
        full = lazy(PDF, chunk_size)
        assert_eq(getattr(full, name)(numeric_only=True), getattr(PDF, name)(numeric_only=True))


@pytest.mark.parametrize("chunk_size", PARTS)
def test_mixed_dtypes_frame(chunk_size):
    """min/max over strings and datetimes, and the concatenating sum of strings, as pandas."""
    df = lazy(PDF, chunk_size)
    assert_eq(df.min(), PDF.min())
    assert_eq(df.max(), PDF.max())
    assert_eq(df[["i", "s"]].sum(), PDF[["i", "s"]].sum())
    assert_eq(df.count(), PDF.count())


@pytest.mark.parametrize("chunk_size", PARTS)
def test_series_scalars(chunk_size):
    """A Series reduces to a 0-d tensor whose value is what pandas returns, of the same type."""
    cases = {"i": ["sum", "prod", "min", "max", "count", "mean", "median", "any"],
             "f": ["sum", "min", "max", "count", "mean", "var", "std", "sem", "median", "all"],
             "b": ["sum", "any", "all", "mean", "min"],
             "s": ["min", "max", "count", "sum"],
             "t": ["min", "max", "count", "mean", "median"]}
    for col, names in cases.items():
        s = lazy(PDF[col], chunk_size)
        for name in names:
            result = getattr(s, name)()
            assert isinstance(result, Tensor) and result.shape == ()
            expected = getattr(PDF[col], name)()
            value = result.fetch()
            assert type(value) is type(expected), (col, name, type(value), type(expected))
            if isinstance(expected, float) and np.isnan(expected):
                assert np.isnan(value)
            elif isinstance(expected, (float, np.floating)):
                assert value == pytest.approx(expected, rel=1e-12), (col, name)
            else:
                assert value == expected, (col, name)


@pytest.mark.parametrize("chunk_size", PARTS)
def test_min_count(chunk_size):
    df = lazy(NUM[["f"]], chunk_size)
    s = lazy(NUM["f"], chunk_size)
    for mc in (0, 1, 5, 13):
        assert_eq(df.sum(min_count=mc), NUM[["f"]].sum(min_count=mc))
        assert_eq(df.prod(min_count=mc), NUM[["f"]].prod(min_count=mc))
        assert_eq(s.sum(min_count=mc), NUM["f"].sum(min_count=mc))


def test_min_count_int_result_dtype():
    """An int column whose sum falls below min_count is NaN (float), as in pandas: a value-dependent dtype."""
    pdf = pd.DataFrame({"a": [1, 2, 3]})
    assert_eq(lazy(pdf, 2).sum(min_count=4), pdf.sum(min_count=4), check_meta=False)
    assert_eq(lazy(pdf, 2).sum(min_count=3), pdf.sum(min_count=3))


@pytest.mark.parametrize("chunk_size", PARTS)
@pytest.mark.parametrize("name", ["mean", "var", "std", "sem"])
def test_moments(chunk_size, name):
    df = lazy(NUM, chunk_size)
    for kw in ({}, {"skipna": False}, {"ddof": 0}, {"ddof": 4}) if name != "mean" else ({}, {"skipna": False}):
        assert_eq(getattr(df, name)(**kw), getattr(NUM, name)(**kw))
    assert_eq(getattr(lazy(PDF, chunk_size), name)(numeric_only=True), getattr(PDF, name)(numeric_only=True))


def test_moments_are_numerically_sound():
    """A large offset and a small spread: merged (count, mean, M2) partials keep the variance exact."""
    rng = np.random.default_rng(0)
    pdf = pd.DataFrame({"x": 1e9 + rng.standard_normal(10_000), "y": rng.integers(0, 10**6, 10_000)})
    for chunk_size in (10_000, 777, 64):
        df = lazy(pdf, chunk_size)
        pd.testing.assert_series_equal(df.var().fetch(), pdf.var(), rtol=1e-9)
        pd.testing.assert_series_equal(df.std(ddof=0).fetch(), pdf.std(ddof=0), rtol=1e-9)
        pd.testing.assert_series_equal(df.mean().fetch(), pdf.mean(), rtol=1e-12)


def test_deep_tree():
    """More partitions than one combine step takes: combines of combines."""
    pdf = frame(40)[["i", "f", "b"]]
    with option_context({"combine_size": 2}):
        for name in ("sum", "min", "mean", "var", "count", "any"):
            assert_eq(getattr(lazy(pdf, 3), name)(), getattr(pdf, name)())
        assert_eq(lazy(pdf["f"], 3).std(), pdf["f"].std(), rtol=1e-12)


@pytest.mark.parametrize("chunk_size", PARTS)
def test_median_and_quantile(chunk_size):
    df, s = lazy(NUM, chunk_size), lazy(NUM["f"], chunk_size)
    assert_eq(df.median(), NUM.median())
    assert_eq(df.median(skipna=False), NUM.median(skipna=False))
    for q in (0.3, [0.1, 0.5, 0.9]):
        assert_eq(df[["i", "f"]].quantile(q), NUM[["i", "f"]].quantile(q))
        no_bools = PDF.drop(columns="b")  # pandas cannot interpolate bools
        assert_eq(lazy(no_bools, chunk_size).quantile(q, numeric_only=True), no_bools.quantile(q, numeric_only=True))
        assert_eq(s.quantile(q), NUM["f"].quantile(q))
    assert_eq(s.quantile(0.25, interpolation="nearest"), NUM["f"].quantile(0.25, interpolation="nearest"))


@pytest.mark.parametrize("chunk_size", PARTS)
def test_describe(chunk_size):
    df = lazy(PDF, chunk_size)
    assert_eq(df.describe(), PDF.describe())
    assert_eq(df.describe(include="all"), PDF.describe(include="all"))
    assert_eq(df.describe(percentiles=[0.1, 0.9]), PDF.describe(percentiles=[0.1, 0.9]))
    assert_eq(lazy(PDF["s"], chunk_size).describe(), PDF["s"].describe())
    assert_eq(lazy(PDF["f"], chunk_size).describe(), PDF["f"].describe())


def test_datetime_mean_is_gathered():
    df = lazy(PDF[["t"]], 5)
    assert_eq(df.mean(), PDF[["t"]].mean())
    assert_eq(lazy(PDF["t"], 5).std(), PDF["t"].std())


# ----------------------------------------------------------------- agg
@pytest.mark.parametrize("chunk_size", PARTS)
def test_agg(chunk_size):
    df = lazy(PDF, chunk_size)
    num = lazy(NUM, chunk_size)
    assert_eq(num.agg("sum"), NUM.agg("sum"))
    assert_eq(num.aggregate(["sum", "mean", "min"]), NUM.agg(["sum", "mean", "min"]))
    assert_eq(num.agg([np.sum, "max"]), NUM.agg([np.sum, "max"]))
    assert_eq(df.agg(["min", "max", "count"]), PDF.agg(["min", "max", "count"]))
    assert_eq(df.agg({"i": "sum", "f": "mean"}), PDF.agg({"i": "sum", "f": "mean"}))
    spec = {"i": ["sum", "min"], "f": "mean", "s": ["max"]}
    assert_eq(df.agg(spec), PDF.agg(spec))
    s = lazy(PDF["i"], chunk_size)
    assert_eq(s.agg("mean"), PDF["i"].agg("mean"))
    assert_eq(s.agg(["sum", "mean", np.max]), PDF["i"].agg(["sum", "mean", np.max]))
    assert_eq(s.agg(["min", "max"]), PDF["i"].agg(["min", "max"]))


def test_agg_errors():
    df = lazy(PDF, 5)
    same_error(lambda: df.agg({"nope": "sum"}), lambda: PDF.agg({"nope": "sum"}))
    same_error(lambda: df.agg(["mean"]), lambda: PDF.agg(["mean"]))
    with pytest.raises(NotImplementedError, match="agg with"):
        df.agg(lambda x: x.sum())


# ----------------------------------------------------------------- cumulative
@pytest.mark.parametrize("chunk_size", PARTS)
@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummin", "cummax"])
def test_cumulative(chunk_size, name):
    pdf = NUM.assign(g=np.where(np.arange(N) == 7, np.nan, np.arange(N) % 4 + 0.5))
    df, s = lazy(pdf, chunk_size), lazy(pdf["g"], chunk_size)
    for skipna in (True, False):
        assert_eq(getattr(df, name)(skipna=skipna), getattr(pdf, name)(skipna=skipna))
        assert_eq(getattr(s, name)(skipna=skipna), getattr(pdf["g"], name)(skipna=skipna))
    assert_eq(getattr(df, name)(axis=1), getattr(pdf, name)(axis=1))


@pytest.mark.parametrize("chunk_size", PARTS)
def test_cumulative_other_dtypes(chunk_size):
    pdf = PDF[["t", "i"]]
    assert_eq(lazy(pdf, chunk_size).cummax(), pdf.cummax())
    assert_eq(lazy(pdf, chunk_size).cummin(), pdf.cummin())
    strings = PDF["s"].astype(object)
    assert_eq(lazy(strings, chunk_size).cumsum(), strings.cumsum())
    deltas = PDF["t"] - PDF["t"].iloc[0]
    assert_eq(lazy(deltas, chunk_size).cumsum(), deltas.cumsum())


# ----------------------------------------------------------------- axis=1, empty, errors
@pytest.mark.parametrize("chunk_size", PARTS)
def test_axis_1(chunk_size):
    df = lazy(NUM, chunk_size)
    for name in ("sum", "mean", "min", "max", "count", "var", "median"):
        assert_eq(getattr(df, name)(axis=1), getattr(NUM, name)(axis=1))
    assert_eq(df.sum(axis="columns", min_count=3), NUM.sum(axis="columns", min_count=3))
    assert_eq(df.quantile(0.5, axis=1), NUM.quantile(0.5, axis=1))


@pytest.mark.parametrize("chunk_size", [1, 3])
def test_empty(chunk_size):
    empty = PDF.iloc[:0]
    df = lazy(empty, chunk_size)
    assert_eq(df.min(), empty.min())
    assert_eq(df.count(), empty.count())
    num = lazy(empty[["i", "f", "b"]], chunk_size)
    for name in ("sum", "prod", "mean", "var", "median", "any", "all"):
        assert_eq(getattr(num, name)(), getattr(empty[["i", "f", "b"]], name)())
    assert_eq(num.cumsum(), empty[["i", "f", "b"]].cumsum())
    assert_eq(num.describe(), empty[["i", "f", "b"]].describe())
    for name in ("sum", "min", "mean", "var", "count"):
        assert_eq(getattr(lazy(empty["i"], chunk_size), name)(), getattr(empty["i"], name)())


def test_partitions_without_rows():
    """Empty partitions contribute nothing (an empty min is NaN in pandas, and must not leak)."""
    pdf = NUM
    df = lazy(pdf, (0, 5, 0, 0, 7, 0))
    for name in ("min", "max", "sum", "mean", "std"):
        assert_eq(getattr(df, name)(skipna=False), getattr(pdf, name)(skipna=False))
    assert_eq(df.cummax(skipna=False), pdf.cummax(skipna=False))


def test_errors_at_build_time():
    df = lazy(PDF, 5)
    same_error(lambda: df.mean(), lambda: PDF.mean())
    same_error(lambda: lazy(PDF["s"], 5).var(), lambda: PDF["s"].var())
    same_error(lambda: df.sum(axis=2), lambda: PDF.sum(axis=2))
    same_error(lambda: df.sum(nope=1), lambda: PDF.sum(nope=1))
    same_error(lambda: lazy(PDF["t"], 5).sum(), lambda: PDF["t"].sum())
    same_error(lambda: lazy(PDF["s"], 5).cumprod(), lambda: PDF["s"].cumprod())
    with pytest.raises(TypeError):  # over both axes (issue 18), strings and numbers do not add, in pandas either
        PDF.sum(axis=None)
    with pytest.raises(TypeError):
        df.sum(axis=None)


def test_lazy_scalar_feeds_arithmetic():
    """A reduction's 0-d tensor is usable in a later expression."""
    s = lazy(NUM["i"], 5)
    assert_eq(s - s.mean(), NUM["i"] - NUM["i"].mean())
    df = lazy(NUM[["i", "f"]], 5)
    assert_eq((df - df.mean()) / df.std(), (NUM[["i", "f"]] - NUM[["i", "f"]].mean()) / NUM[["i", "f"]].std())


def test_index_reductions():
    idx = pd.Index([5, 1, 9, 3], name="x")
    lazy_idx = md.Index(idx, chunk_size=3)
    for name in ("min", "max", "any", "all"):
        assert_eq(getattr(lazy_idx, name)(), getattr(idx, name)())
