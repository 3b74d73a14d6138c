"""``md.CustomReduction`` in ``groupby(...).agg``: in a dict, a list, a NamedAgg, on a SeriesGroupBy; equal to
pandas (which calls the reduction on each whole group) across partitionings, and run in stages (``pre`` on
pieces of partitions, ``agg`` over a tree, ``post`` once per group)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

import mars.dataframe as md
from tests.dataframe.df_testing import _check_meta, partitionings

N = 24
FRAME = pd.DataFrame({"k": np.random.default_rng(0).integers(0, 4, N), "a": np.random.default_rng(1).normal(size=N),
                      "b": np.arange(N) % 7, "c": list("xyzw" * (N // 4))})
FRAME.loc[[2, 9], "a"] = np.nan


class Mean(md.CustomReduction):
    def pre(self, data):
        return data.sum(), data.count()

    def agg(self, total, count):
        return total.sum(), count.sum()

    def post(self, total, count):
        return total / count


class Span(md.CustomReduction):
    """max - min."""

    def pre(self, data):
        return data.min(), data.max()

    def agg(self, low, high):
        return low.min(), high.max()

    def post(self, low, high):
        return high - low


class Total(md.CustomReduction):
    """Only ``agg`` defined."""

    def agg(self, values):
        return values.sum()


class LargestPiece(md.CustomReduction):
    """The most rows ``pre`` saw at once: a whole group in pandas, at most a partition's rows in stages."""

    def pre(self, data):
        return pd.Series([len(data)])

    def agg(self, sizes):
        return sizes.max()


def check(build, chunk_size):
    expected = build(FRAME)
    result = build(md.DataFrame(FRAME, chunk_size=chunk_size))
    value = result.execute().fetch()
    _check_meta(result.meta, value)
    if isinstance(expected, pd.DataFrame):
        pdt.assert_frame_equal(value, expected)
    else:
        pdt.assert_series_equal(value, expected)


CALLS = {
    "dict": lambda df: df.groupby("k").agg({"a": Mean(), "b": Span()}),
    "dict of lists": lambda df: df.groupby("k").agg({"a": [Mean(), "sum"], "b": ["max", Span()]}),
    "list": lambda df: df.groupby("k")[["a", "b"]].agg([Mean(), Span()]),
    "named": lambda df: df.groupby("k").agg(m=pd.NamedAgg("a", Mean()), s=("b", Span()), n=("c", "count")),
    "series": lambda df: df.groupby("k")["a"].agg(Mean()),
    "series list": lambda df: df.groupby("k")["b"].agg([Span(), "mean", Total()]),
    "unsorted keys": lambda df: df.groupby("k", sort=False).agg({"a": Mean()}),
    "keys as columns": lambda df: df.groupby("k", as_index=False).agg({"b": Span()}),
    "two keys": lambda df: df.groupby(["k", "c"]).agg({"a": Mean()}),
}


@pytest.mark.parametrize("chunk_size", partitionings(N) + [1])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_equals_pandas(name, chunk_size):
    check(CALLS[name], chunk_size)


def test_md_named_agg():
    check(lambda df: df.groupby("k").agg(m=(md.NamedAgg if isinstance(df, md.DataFrame) else pd.NamedAgg)(
        "a", Mean())), 5)


@pytest.mark.parametrize("chunk_size", [5, (3, 0, 9, 12), 1])
def test_runs_in_stages(chunk_size):
    most = max(chunk_size) if isinstance(chunk_size, tuple) else chunk_size
    got = md.DataFrame(FRAME, chunk_size=chunk_size).groupby("k").agg({"b": LargestPiece()}).to_pandas()
    assert (got["b"] <= most).all(), got
    whole = FRAME.groupby("k").agg({"b": LargestPiece()})
    pdt.assert_series_equal(whole["b"], FRAME.groupby("k").size().rename("b"))
    pdt.assert_index_equal(got.index, whole.index)
    assert got["b"].sum() < whole["b"].sum()
