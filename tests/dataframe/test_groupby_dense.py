"""Sorted sums, counts and means over an integer key of a narrow range: partials indexed by key, no hashing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mars.dataframe as md
import mars.dataframe.groupby.agg as agg_module
from mars.dataframe.groupby import tree
from tests.dataframe.df_testing import assert_eq, partials_answers, partitionings

N = 60
RNG = np.random.default_rng(11)
PDF = pd.DataFrame({"k": RNG.integers(-3, 6, N), "u": RNG.integers(0, 4, N).astype(np.uint8),
                    "x": RNG.random(N), "y": RNG.integers(-5, 5, N), "f": RNG.random(N).astype(np.float32)})
PDF.loc[[2, 9, 10], "x"] = np.nan
# keys spread so that no partition's range follows the one before (else each partition is grouped alone)
PDF.loc[::7, "k"] = [5, -3, 5, -3, 5, -3, 5, -3, 5]

CALLS = {
    "dict": lambda df: df.groupby("k").agg({"x": "sum", "y": "mean"}),
    "named": lambda df: df.groupby("k").agg(total=("x", "sum"), n=("x", "count"), m=("x", "mean")),
    "size": lambda df: df.groupby("k").size(),
    "selected count": lambda df: df.groupby("k")["x"].count(),
    "uint8 key": lambda df: df.groupby("u").agg({"x": "mean", "y": "count"}),
    "int sums (pandas' path)": lambda df: df.groupby("k").agg({"y": "sum"}),
    "float32 sums (pandas' path)": lambda df: df.groupby("k")["f"].sum(),
    "min_count": lambda df: df.groupby("k")["x"].sum(min_count=2),
}


def _dense_calls(monkeypatch: pytest.MonkeyPatch) -> list:
    """Each partition's answer from :func:`tree.dense_partials` (False: it declined), as they run."""
    return partials_answers(monkeypatch, "dense_partials")


@pytest.mark.parametrize("chunk_size", partitionings(N))
@pytest.mark.parametrize("name", sorted(CALLS))
def test_equals_pandas(name: str, chunk_size: object, monkeypatch: pytest.MonkeyPatch) -> None:
    _dense_calls(monkeypatch)
    assert_eq(CALLS[name](md.DataFrame(PDF, chunk_size=chunk_size)), CALLS[name](PDF))


def test_sums_of_a_narrow_key_take_the_dense_partials(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _dense_calls(monkeypatch)
    assert_eq(CALLS["named"](md.DataFrame(PDF, chunk_size=(20, 0, 25, 15))), CALLS["named"](PDF))
    assert calls == [True] * 4
    calls.clear()
    assert_eq(CALLS["int sums (pandas' path)"](md.DataFrame(PDF, chunk_size=20)), CALLS["int sums (pandas' path)"](PDF))
    assert calls == [False] * 3  # int64 sums stay exact in pandas' groupby (and int means go with them)


def test_unsorted_groups_and_wide_keys_are_hashed(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _dense_calls(monkeypatch)
    unsorted = PDF.groupby("k", sort=False).agg({"x": "sum"})
    assert_eq(md.DataFrame(PDF, chunk_size=20).groupby("k", sort=False).agg({"x": "sum"}), unsorted)
    wide = PDF.assign(k=PDF["k"] * 10**9)
    monkeypatch.setattr(agg_module, "TREE_ROWS", 5)
    assert_eq(CALLS["dict"](md.DataFrame(wide, chunk_size=20)), CALLS["dict"](wide))
    assert calls == []


def test_dense_partials_declines_keys_outside_its_range() -> None:
    part = pd.DataFrame({"k": [1, 9], "x": [1.0, 2.0]})
    spec = tree.GroupSpec(by="k")
    assert tree.dense_partials(part, spec, [("sum", "x")], 1, 5) is None
    assert tree.dense_partials(part, spec, [("min", "x")], 1, 9) is None
    out = tree.dense_partials(part.iloc[:0], spec, [("sum", "x")], 1, 9)
    assert len(out) == 0 and out.index.dtype == np.int64
