"""Sums, counts and means over few groups of string, object or several keys: the keys coded as one integer
per row and summed by numpy (``tree.numpy_partials``), against pandas across partitionings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mars.dataframe as md
from mars.dataframe.groupby import tree
from mars.dataframe.groupby.keys import GroupSpec, combined_codes
from tests.dataframe.df_testing import assert_eq, partials_answers, partitionings

N = 50
RNG = np.random.default_rng(5)
PDF = pd.DataFrame({
    "flag": pd.Series(RNG.choice(["A", "N", "R"], N), dtype="string[pyarrow]"),
    "status": pd.Series(RNG.choice(["F", "O"], N), dtype="str"),
    "gappy": pd.Series(RNG.choice(["p", "q", None], N), dtype="string[pyarrow]"),
    "obj": pd.Series(RNG.choice(["u", "v", "w"], N), dtype=object),
    "n": RNG.integers(0, 3, N), "b": RNG.random(N) > 0.5,
    "x": RNG.random(N), "y": np.where(RNG.random(N) < 0.2, np.nan, RNG.random(N)),
})

CALLS = {
    "two string keys (Q1)": lambda df: df.groupby(["flag", "status"]).agg(
        s=("x", "sum"), m=("y", "mean"), c=("y", "count"), k=("x", "count")),
    "string key, unsorted": lambda df: df.groupby("flag", sort=False).agg({"x": "sum", "y": "mean"}),
    "missing keys dropped": lambda df: df.groupby(["gappy", "n"]).agg({"x": "sum", "y": "count"}),
    "missing keys unsorted": lambda df: df.groupby(["n", "gappy"], sort=False)["x"].sum(),
    "missing keys kept (pandas' path)": lambda df: df.groupby("gappy", dropna=False)["x"].sum(),
    "object and bool keys": lambda df: df.groupby(["obj", "b"]).size(),
    "three keys": lambda df: df.groupby(["status", "obj", "n"], sort=False)["y"].mean(),
}


@pytest.mark.parametrize("chunk_size", partitionings(N))
@pytest.mark.parametrize("name", sorted(CALLS))
def test_equals_pandas(name: str, chunk_size: object, monkeypatch: pytest.MonkeyPatch) -> None:
    partials_answers(monkeypatch, "numpy_partials")
    assert_eq(CALLS[name](md.DataFrame(PDF, chunk_size=chunk_size)), CALLS[name](PDF))


@pytest.mark.parametrize("name", ["two string keys (Q1)", "missing keys dropped", "three keys"])
def test_few_groups_of_coded_keys_are_summed_by_numpy(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = partials_answers(monkeypatch, "numpy_partials")
    assert_eq(CALLS[name](md.DataFrame(PDF, chunk_size=(20, 25, 5))), CALLS[name](PDF))
    assert calls and all(calls), calls


def test_a_group_of_missing_keys_is_left_to_pandas(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = partials_answers(monkeypatch, "numpy_partials")
    name = "missing keys kept (pandas' path)"
    assert_eq(CALLS[name](md.DataFrame(PDF, chunk_size=20)), CALLS[name](PDF))
    assert calls and not any(calls), calls


@pytest.mark.parametrize("sort", [True, False])
def test_partials_of_coded_keys_equal_pandas_partials(sort: bool) -> None:
    spec = GroupSpec(by=["gappy", "obj", "n"], sort=sort)
    partials = [("sum", "x"), ("count", "y"), ("sum", "y"), ("size", None)]
    for block in (1 << 16, 7):  # one block, and several merged
        got = tree.numpy_partials(PDF, (), spec, partials, block)
        expected = tree.chunk_partials(PDF.groupby(spec.by, sort=False), partials)
        if sort:  # groups in code order: the tree sorts them at its root
            got, expected = got.sort_index(), expected.sort_index()
        pd.testing.assert_frame_equal(got, expected)


def test_keys_left_to_pandas() -> None:
    categorical = pd.Series(pd.Categorical(["a", "b"], categories=["a", "b", "c"]))
    assert combined_codes([categorical]) is None  # unobserved categories are groups too
    assert combined_codes([pd.Series([1.5, np.nan])]) is None
    assert combined_codes([pd.Series(pd.to_datetime(["2001", "2002"]))]) is None
