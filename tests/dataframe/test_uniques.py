"""value_counts, unique, nunique, drop_duplicates, duplicated, isin against pandas across partitionings.

Each is run both ways the partials can be merged: by a tree (few distinct
keys) and by a hash shuffle (``TREE_MAX_ROWS`` set to 0 forces it).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, partitionings, lazy

import mars.tensor as mt
from mars.dataframe import uniques
from mars.tensor.core import Tensor

N = 12
PARTS = partitionings(N)


def frame(n: int = N) -> pd.DataFrame:
    """Repeating ints, floats with NaN, bools, strings with missing values, datetimes."""
    k = np.arange(n)
    return pd.DataFrame({
        "i": k % 4,
        "f": np.where(k % 3 == 1, np.nan, k % 5 / 2),
        "b": k % 2 == 0,
        "s": pd.Series([f"s{j % 5}" if j % 4 else None for j in k], dtype="str"),
        "t": pd.to_datetime(pd.Series(k % 3), unit="D"),
    }, index=[f"r{j:02d}" for j in k][::-1])


PDF = frame()


# the shuffle runs on the partitionings with several partitions, not the one of 12 (a shuffle of 12 x 12 pieces)
PLANS = [(c, "tree") for c in PARTS] + [(c, "shuffle") for c in PARTS[1:4]]


@pytest.fixture(params=["tree", "shuffle"])
def plan(request, monkeypatch):
    if request.param == "shuffle":
        monkeypatch.setattr(uniques, "TREE_MAX_ROWS", 0)
    return request.param


def assert_array(result, expected):
    """``result`` (a lazy tensor) fetches to a numpy array holding pandas' values, NaN included."""
    assert isinstance(result, Tensor)
    value = result.fetch()
    assert isinstance(value, np.ndarray)
    pd.testing.assert_extension_array_equal(pd.array(value, dtype=expected.dtype), pd.array(expected, dtype=expected.dtype))


# ----------------------------------------------------------------- value_counts
@pytest.mark.parametrize("chunk_size,plan", PLANS, indirect=["plan"])
def test_value_counts(chunk_size, plan):
    for col in PDF.columns:
        s = lazy(PDF[col], chunk_size)
        for kw in ({}, {"dropna": False}, {"normalize": True}, {"sort": False, "dropna": False},
                   {"ascending": True}):
            assert_eq(s.value_counts(**kw), PDF[col].value_counts(**kw))


@pytest.mark.parametrize("chunk_size,plan", PLANS, indirect=["plan"])
def test_frame_value_counts(chunk_size, plan):
    df = lazy(PDF, chunk_size)
    for kw in ({}, {"subset": ["i", "b"]}, {"subset": ["f"]}, {"dropna": False, "subset": ["f", "s"]},
               {"normalize": True, "sort": False}, {"ascending": True, "subset": ["i"]}):
        assert_eq(df.value_counts(**kw), PDF.value_counts(**kw))


def test_value_counts_ties_keep_first_appearance():
    """Equal counts keep the order in which the values first appear, across partitions."""
    ps = pd.Series([5, 3, 9, 3, 5, 9, 1, 7, 1, 7])
    for chunk_size in (1, 3, (0, 4, 6)):
        assert_eq(lazy(ps, chunk_size).value_counts(), ps.value_counts())
        assert_eq(lazy(ps, chunk_size).value_counts(ascending=True), ps.value_counts(ascending=True))


def test_value_counts_bins_and_categorical():
    ps = pd.Series([0.5, 1.5, 2.5, 0.1, 2.9, 1.0])
    assert_eq(lazy(ps, 4).value_counts(bins=3), ps.value_counts(bins=3))
    cat = pd.Series(pd.Categorical(["b", "a", "b", None], categories=["c", "b", "a"]))
    assert_eq(lazy(cat, 3).value_counts(), cat.value_counts())
    assert_eq(lazy(cat, 3).value_counts(sort=False, dropna=False), cat.value_counts(sort=False, dropna=False))


def test_index_value_counts(plan):
    idx = pd.Index(PDF["i"].to_numpy(), name="x")
    assert_eq(lazy(idx, 5).value_counts(), idx.value_counts())


# ----------------------------------------------------------------- distinct rows
@pytest.mark.parametrize("chunk_size,plan", PLANS, indirect=["plan"])
@pytest.mark.parametrize("keep", ["first", "last", False])
def test_series_drop_duplicates_and_duplicated(chunk_size, keep, plan):
    for col in PDF.columns:
        s = lazy(PDF[col], chunk_size)
        assert_eq(s.drop_duplicates(keep=keep), PDF[col].drop_duplicates(keep=keep))
        assert_eq(s.duplicated(keep=keep), PDF[col].duplicated(keep=keep))
    s = lazy(PDF["i"], chunk_size)
    assert_eq(s.drop_duplicates(keep=keep, ignore_index=True), PDF["i"].drop_duplicates(keep=keep, ignore_index=True))


@pytest.mark.parametrize("chunk_size,plan", PLANS, indirect=["plan"])
@pytest.mark.parametrize("keep", ["first", "last", False])
def test_frame_drop_duplicates_and_duplicated(chunk_size, keep, plan):
    df = lazy(PDF, chunk_size)
    for subset in (None, ["i", "b"], "f", ["s"]):
        assert_eq(df.drop_duplicates(subset, keep=keep), PDF.drop_duplicates(subset, keep=keep))
        assert_eq(df.duplicated(subset, keep=keep), PDF.duplicated(subset, keep=keep))
    assert_eq(df.drop_duplicates(["i"], keep=keep, ignore_index=True),
              PDF.drop_duplicates(["i"], keep=keep, ignore_index=True))


def test_duplicates_keep_partitions_in_place():
    """drop_duplicates keeps each row in its partition: no gathering, row order as in pandas."""
    df = lazy(PDF, 3)
    result = df.drop_duplicates(["i"]).execute()
    assert len(result.chunks) == 4
    assert df.duplicated().partitioning == df.partitioning


@pytest.mark.parametrize("chunk_size,plan", PLANS, indirect=["plan"])
def test_unique_and_nunique(chunk_size, plan):
    for col in PDF.columns:
        s = lazy(PDF[col], chunk_size)
        assert_array(s.unique(), PDF[col].unique())
        assert_eq(s.nunique(), PDF[col].nunique())
        assert_eq(s.nunique(dropna=False), PDF[col].nunique(dropna=False))
    df = lazy(PDF, chunk_size)
    assert_eq(df.nunique(), PDF.nunique())
    assert_eq(df.nunique(dropna=False), PDF.nunique(dropna=False))
    assert_eq(df.nunique(axis=1), PDF.nunique(axis=1))


def test_index_distinct(plan):
    idx = pd.Index(PDF["f"].to_numpy(), name="x")
    for chunk_size in (1, 5, (0, 6, 0, 6)):
        li = lazy(idx, chunk_size)
        assert_eq(li.unique(), idx.unique())
        assert_eq(li.drop_duplicates(keep="last"), idx.drop_duplicates(keep="last"))
        assert_eq(li.nunique(), idx.nunique())
        np.testing.assert_array_equal(li.duplicated(keep=False).fetch(), idx.duplicated(keep=False))


def test_many_partitions_deep_tree_and_shuffle(plan):
    """More partials than one combine step takes; large enough to have many keys per partition."""
    rng = np.random.default_rng(0)
    pdf = pd.DataFrame({"a": rng.integers(0, 50, 400), "b": rng.integers(0, 3, 400)})
    df = lazy(pdf, 23)
    assert_eq(df.drop_duplicates(), pdf.drop_duplicates())
    assert_eq(df.drop_duplicates(keep=False), pdf.drop_duplicates(keep=False))
    assert_eq(df.value_counts(), pdf.value_counts())
    assert_eq(lazy(pdf["a"], 23).value_counts(), pdf["a"].value_counts())
    assert_eq(lazy(pdf["a"], 23).nunique(), pdf["a"].nunique())


@pytest.mark.parametrize("chunk_size", [1, 3])
def test_empty(chunk_size, plan):
    empty = PDF.iloc[:0]
    df = lazy(empty, chunk_size)
    assert_eq(df.drop_duplicates(), empty.drop_duplicates())
    assert_eq(df.duplicated(), empty.duplicated())
    assert_eq(df.value_counts(), empty.value_counts())
    s = lazy(empty["i"], chunk_size)
    assert_eq(s.value_counts(), empty["i"].value_counts())
    assert_eq(s.nunique(), empty["i"].nunique())
    assert_array(s.unique(), empty["i"].unique())


# ----------------------------------------------------------------- isin
@pytest.mark.parametrize("chunk_size", PARTS)
def test_isin(chunk_size):
    df = lazy(PDF, chunk_size)
    for col in ("i", "f", "s"):
        values = list(PDF[col].iloc[:3])
        s = lazy(PDF[col], chunk_size)
        assert_eq(s.isin(values), PDF[col].isin(values))
        assert_eq(s.isin(set(values)), PDF[col].isin(set(values)))
        assert_eq(s.isin(pd.Series(values)), PDF[col].isin(pd.Series(values)))
        assert_eq(s.isin(lazy(pd.Series(values), 2)), PDF[col].isin(values))
    assert_eq(lazy(PDF["i"], chunk_size).isin(mt.tensor([1, 3], chunk_size=1)), PDF["i"].isin([1, 3]))
    assert_eq(df.isin([1, "s1", True]), PDF.isin([1, "s1", True]))
    assert_eq(df.isin({"i": [1, 2], "s": ["s2"]}), PDF.isin({"i": [1, 2], "s": ["s2"]}))
    other = PDF.iloc[::-1].copy()
    other.iloc[::2, 0] = -1
    assert_eq(df.isin(other), PDF.isin(other))
    assert_eq(lazy(PDF[["i"]], chunk_size).isin(PDF["i"].iloc[:5]),
              PDF[["i"]].isin(PDF["i"].iloc[:5]))
    idx = pd.Index(PDF["i"].to_numpy())
    np.testing.assert_array_equal(lazy(idx, chunk_size).isin([0, 2]).fetch(), idx.isin([0, 2]))


# ----------------------------------------------------------------- errors
def test_errors():
    df = lazy(PDF, 5)
    with pytest.raises(ValueError, match="keep must be either"):
        df.drop_duplicates(keep="middle")
    with pytest.raises(KeyError):
        df.drop_duplicates(["nope"])
    with pytest.raises(TypeError, match="only list-like"):
        lazy(PDF["i"], 5).isin("abc")
    with pytest.raises(TypeError):
        PDF["i"].isin("abc")
