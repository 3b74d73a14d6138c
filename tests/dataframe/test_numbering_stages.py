"""A default index numbered across partitions of unknown sizes needs no tiling stage.

``reset_index`` after a filter, and a groupby's ``as_index=False`` result,
number their rows as the partitions run: each partition's start is the sum of
the row counts of those before it (tiny ops in the same graph). A stage that
computed the partitions first, to learn their sizes, was a round trip to the
workers on a cluster, paid by every TPC-H query that ends in
``groupby(...).agg(...).reset_index()``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, lazy, partitionings

import mars.dataframe.groupby.agg as agg_module

N = 23


def _frame(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "k": np.sort(rng.integers(0, 7, N)),  # in key order: the per-partition groupby path
        "u": rng.integers(0, 5, N),  # not: the shuffle path
        "v": rng.random(N),
        "s": pd.Series(rng.choice(["x", "y", "z"], N), dtype="str"),
    }, index=pd.Index(rng.permutation(N) * 3, name="idx"))


@pytest.mark.parametrize("chunk_size", partitionings(N))
@pytest.mark.parametrize("keep", [0.5, 2.0, -1.0])  # some rows, all, none
def test_reset_index_of_filtered_partitions_equals_pandas_with_no_stage(stages, chunk_size, keep):
    pdf = _frame()
    df = lazy(pdf, chunk_size)
    cases = [
        (df[df.v < keep].reset_index(), pdf[pdf.v < keep].reset_index()),
        (df[df.v < keep].reset_index(drop=True), pdf[pdf.v < keep].reset_index(drop=True)),
        (df.v[df.v < keep].reset_index(), pdf.v[pdf.v < keep].reset_index()),
        (df.s[df.v < keep].reset_index(drop=True), pdf.s[pdf.v < keep].reset_index(drop=True)),
    ]
    for result, expected in cases:
        stages.clear()
        assert_eq(result, expected)
        assert stages == []


@pytest.mark.parametrize("chunk_size", partitionings(N))
def test_positions_after_a_numbered_reset_index_are_right(chunk_size):
    """A reader that needs the sizes (``iloc``) learns them itself, from the renumbered partitions."""
    pdf = _frame(1)
    df = lazy(pdf, chunk_size)
    numbered = df[df.v > 0.3].reset_index()
    expected = pdf[pdf.v > 0.3].reset_index()
    assert_eq(numbered.iloc[2:9], expected.iloc[2:9])
    assert_eq(numbered.loc[3:6], expected.loc[3:6])


@pytest.mark.parametrize("chunk_size", partitionings(N))
@pytest.mark.parametrize("by", ["k", "u"])
def test_groupby_as_index_false_is_numbered_in_the_graph(stages, monkeypatch, chunk_size, by):
    """Keys in order group partition by partition, others are shuffled: either way, several result partitions."""
    # no single call on the whole input, no tree of partials settling the result in one chunk
    monkeypatch.setattr(agg_module, "SINGLE_ROWS", -1)
    monkeypatch.setattr(agg_module, "TREE_RATIO", -1.0)
    monkeypatch.setattr(agg_module, "TREE_ROWS", -1.0)
    pdf = _frame(2)
    df = lazy(pdf, chunk_size)
    for result, expected in [
        (df.groupby(by, as_index=False).agg(total=("v", "sum"), n=("s", "count")),
         pdf.groupby(by, as_index=False).agg(total=("v", "sum"), n=("s", "count"))),
        (df.groupby(by).agg(total=("v", "sum")).reset_index(), pdf.groupby(by).agg(total=("v", "sum")).reset_index()),
    ]:
        stages.clear()
        assert_eq(result, expected)
        # stages that learn about the keys may run; none computes the grouped results only to count them
        assert not any(set(s) & {"GroupCall", "GroupReduce", "Renumber", "ResetIndex"} for s in stages), stages
