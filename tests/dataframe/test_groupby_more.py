"""GroupBy's group numbers, single groups, dicts of groups, iteration, sampling, whole-group statistics and
grouped windows, against pandas across partitionings (one, several, uneven with empty ones, size 1)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest
from df_testing import assert_eq, lazy, partitionings

import mars.dataframe as md

N = 13
PARTS = partitionings(N)


def frame(n: int = N) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    return pd.DataFrame({"k": rng.integers(0, 4, n), "j": rng.choice(["x", "y"], n), "v": rng.normal(size=n),
                         "w": rng.normal(size=n)},
                        index=pd.date_range("2001-01-01", periods=n, freq="9h"))


@pytest.mark.parametrize("chunk_size", PARTS)
def test_ngroup_and_ngroups(chunk_size):
    pdf = frame()
    df = lazy(pdf, chunk_size)
    assert_eq(df.groupby("k").ngroup(), pdf.groupby("k").ngroup())
    assert_eq(df.groupby(["j", "k"], sort=False).ngroup(ascending=False),
              pdf.groupby(["j", "k"], sort=False).ngroup(ascending=False))
    assert_eq(df.v.groupby(lambda t: t.day % 3).ngroup(), pdf.v.groupby(lambda t: t.day % 3).ngroup())
    assert df.groupby(["k", "j"]).ngroups == pdf.groupby(["k", "j"]).ngroups


def test_ngroup_of_a_dropped_missing_key_is_nan():
    pdf = pd.DataFrame({"k": [1.0, np.nan, 2.0, 1.0]})
    df = md.DataFrame(pdf, chunk_size=2)
    pdt.assert_series_equal(df.groupby("k").ngroup().to_pandas(), pdf.groupby("k").ngroup())


@pytest.mark.parametrize("chunk_size", PARTS)
def test_get_group(chunk_size):
    pdf = frame()
    df = lazy(pdf, chunk_size)
    assert_eq(df.groupby("k").get_group(2), pdf.groupby("k").get_group(2))
    assert_eq(df.groupby(["k", "j"]).v.get_group((1, "x")), pdf.groupby(["k", "j"]).v.get_group((1, "x")))


def test_get_group_of_no_group_raises_key_error():
    df = md.DataFrame(frame(), chunk_size=4)
    with pytest.raises(KeyError):
        df.groupby("k").get_group(99).execute()


@pytest.mark.parametrize("chunk_size", PARTS)
def test_groups_indices_and_iteration(chunk_size):
    pdf = frame()
    df = lazy(pdf, chunk_size)
    got, want = df.groupby("k").groups, pdf.groupby("k").groups
    assert type(got) is type(want) and list(got) == list(want)
    for key in want:
        pdt.assert_index_equal(got[key], want[key])
    got, want = df.groupby(["k", "j"]).indices, pdf.groupby(["k", "j"]).indices
    assert list(got) == list(want)
    for key in want:
        np.testing.assert_array_equal(got[key], want[key])
        assert got[key].dtype == want[key].dtype
    pairs = list(df.groupby(["k"]))
    assert [k for k, _ in pairs] == [k for k, _ in pdf.groupby(["k"])]
    for (_, g), (_, p) in zip(pairs, pdf.groupby(["k"])):
        pdt.assert_frame_equal(g, p)
    assert [k for k, _ in df.groupby("j").v] == ["x", "y"]


@pytest.mark.parametrize("chunk_size", PARTS)
@pytest.mark.parametrize("method", ["corr", "cov", "skew", "kurt"])
def test_whole_group_statistics(chunk_size, method):
    pdf = frame()
    df = lazy(pdf, chunk_size)
    assert_eq(getattr(df.groupby("k")[["v", "w"]], method)(), getattr(pdf.groupby("k")[["v", "w"]], method)())
    if method in ("skew", "kurt"):
        assert_eq(getattr(df.groupby("k").v, method)(), getattr(pdf.groupby("k").v, method)())


@pytest.mark.parametrize("chunk_size", PARTS)
def test_take_nlargest_and_monotonic(chunk_size):
    pdf = frame()
    df = lazy(pdf, chunk_size)
    assert_eq(df.groupby("k").take([0, -1]), pdf.groupby("k").take([0, -1]))
    assert_eq(df.groupby("k").v.nlargest(2), pdf.groupby("k").v.nlargest(2))
    assert_eq(df.groupby("k").v.nsmallest(1), pdf.groupby("k").v.nsmallest(1))
    assert_eq(df.groupby("k").v.is_monotonic_increasing, pdf.groupby("k").v.is_monotonic_increasing)


@pytest.mark.parametrize("chunk_size", [14, 5, (1, 10, 3, 0), 1])
@pytest.mark.parametrize("kw", [{}, {"normalize": True}, {"ascending": True}])
def test_value_counts(chunk_size, kw):
    # counts differ within each group: pandas orders equal counts by where values first appear in the whole data
    pdf = pd.DataFrame({"k": [0] * 6 + [1] * 5 + [2] * 3,
                        "j": list("aaabbc") + list("bbbaa") + list("cca")}).sample(frac=1, random_state=3)
    df = lazy(pdf, chunk_size)
    assert_eq(df.groupby("k").value_counts(**kw), pdf.groupby("k").value_counts(**kw))
    assert_eq(df.groupby("k").j.value_counts(**kw), pdf.groupby("k").j.value_counts(**kw))


@pytest.mark.parametrize("chunk_size", PARTS)
def test_sample_sizes_and_membership(chunk_size):
    pdf = frame(40)
    df = md.DataFrame(pdf, chunk_size=chunk_size if isinstance(chunk_size, int) else (1, 35, 4, 0))
    got = df.groupby("k").sample(n=2, random_state=1).to_pandas()
    assert got.groupby("k").size().eq(2).all()
    pdt.assert_frame_equal(got, pdf.loc[got.index])  # real rows, each once
    assert not got.index.has_duplicates
    got = df.groupby("k").sample(frac=0.5, random_state=1).to_pandas()
    pdt.assert_series_equal(got.groupby("k").size(), pdf.groupby("k").sample(frac=0.5).groupby("k").size())
    got = df.groupby("k").v.sample(n=5, replace=True, random_state=2).to_pandas()
    assert got.index.isin(pdf.index).all() and len(got) == 5 * pdf.k.nunique()


def test_sample_draws_differ_between_seeds_and_bad_arguments_raise():
    df = md.DataFrame(frame(200), chunk_size=50)
    a = df.groupby("k").sample(n=3, random_state=1).to_pandas().index
    b = df.groupby("k").sample(n=3, random_state=2).to_pandas().index
    assert not a.equals(b)
    with pytest.raises(ValueError):
        df.groupby("k").sample(n=2, frac=0.5)
    with pytest.raises(NotImplementedError, match="weights"):
        df.groupby("k").sample(n=1, weights=[1.0] * 200)


def test_attributes():
    pdf = frame()
    df = md.DataFrame(pdf, chunk_size=4)
    assert df.groupby("k").keys == pdf.groupby("k").keys
    assert df.groupby(level=0).level == 0
    assert df.groupby("k").ndim == pdf.groupby("k").ndim
    assert df.groupby("k").v.ndim == pdf.groupby("k").v.ndim
    assert_eq(df.groupby("k").v.dtype, pdf.groupby("k").v.dtype)


@pytest.mark.parametrize("chunk_size", PARTS)
def test_grouped_windows(chunk_size):
    pdf = frame().drop(columns="j")
    df = lazy(pdf, chunk_size)
    g, p = df.groupby("k"), pdf.groupby("k")
    assert_eq(g.rolling(3, min_periods=1).mean(), p.rolling(3, min_periods=1).mean())
    assert_eq(g.v.rolling("1D").sum(), p.v.rolling("1D").sum())
    assert_eq(g.expanding().std(), p.expanding().std())
    assert_eq(g.ewm(span=3).mean(), p.ewm(span=3).mean())
    assert_eq(g.resample("2D").sum(), p.resample("2D").sum())
    assert_eq(g.v.resample("2D").ohlc(), p.v.resample("2D").ohlc())


def test_grouped_ewm_times_names_the_way_through():
    df = md.DataFrame(frame(), chunk_size=4)
    with pytest.raises(NotImplementedError, match="apply"):
        df.groupby("k").ewm(halflife="1D", times=df.index)


def _with_gaps(n: int = N) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    full = rng.normal(size=n)
    gappy = np.where(rng.random(n) < 0.3, np.nan, full)
    return pd.DataFrame({
        "k": rng.integers(0, 4, n), "c": pd.Categorical(rng.choice(["a", "b"], n), categories=["a", "b", "z"]),
        "full": full, "gappy": gappy, "i": rng.integers(0, 9, n),
        "s": pd.Series(rng.choice(["p", None], n), dtype="string[pyarrow]"),
        "t": pd.Series(pd.date_range("2001", periods=n, freq="D")).where(rng.random(n) < 0.7).to_numpy(),
    })


@pytest.mark.parametrize("chunk_size", PARTS)
def test_counts_and_means_of_columns_with_and_without_missing_values(chunk_size, monkeypatch):
    # per-partition partials (a tree): a column without missing values is counted as its groups' sizes,
    # one with them value by value
    from mars.dataframe.groupby import agg as agg_module

    monkeypatch.setattr(agg_module, "SINGLE_ROWS", -1)
    pdf = _with_gaps()
    df = lazy(pdf, chunk_size)
    spec = {"full": ["count", "mean"], "gappy": ["count", "mean", "sum"], "i": ["count", "size"],
            "s": "count", "t": "count"}
    assert_eq(df.groupby("k").agg(spec), pdf.groupby("k").agg(spec))
    assert_eq(df.groupby("k", sort=False).full.count(), pdf.groupby("k", sort=False).full.count())
    assert_eq(df.groupby("k")[["full", "gappy"]].count(), pdf.groupby("k")[["full", "gappy"]].count())
    named = {"n_full": ("full", "count"), "n_gappy": ("gappy", "count"), "avg": ("full", "mean")}
    assert_eq(df.groupby("c", observed=False).agg(**named), pdf.groupby("c", observed=False).agg(**named))
    assert_eq(df.full.groupby(df.k).count(), pdf.full.groupby(pdf.k).count())
