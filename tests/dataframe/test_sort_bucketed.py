"""Sorting by one numeric key: unsorted partitions bucketed by sampled pivots, each bucket sorted once."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mars.dataframe as md
from mars.dataframe.sort import SortSpec, buckets_of
from tests.dataframe.df_testing import assert_eq, partitionings

N = 40
RNG = np.random.default_rng(5)
PDF = pd.DataFrame({
    "f": RNG.choice([1.5, -2.0, np.nan, np.inf, -np.inf, 0.0, -0.0, 7.25], N),
    "i": RNG.choice(np.array([np.iinfo(np.int64).min, -1, 0, 3, np.iinfo(np.int64).max]), N),
    "u": RNG.choice(np.array([0, 7, 2**64 - 1], dtype=np.uint64), N),
    "g": RNG.random(N).astype(np.float32),
    "pos": np.arange(N),
}, index=pd.Index(RNG.permutation(N) * 3, name="idx"))


def _ops(result) -> set:  # type: ignore[no-untyped-def]
    seen, stack, names = set(), list(result.data.chunks), set()
    while stack:
        c = stack.pop()
        if id(c) not in seen:
            seen.add(id(c))
            names.add(type(c.op).__name__)
            stack.extend(c.op.inputs)
    return names


@pytest.mark.parametrize("chunk_size", partitionings(N))
@pytest.mark.parametrize("by", ["f", "i", "u", "g"])
@pytest.mark.parametrize("ascending", [True, False])
@pytest.mark.parametrize("na_position", ["last", "first"])
def test_equals_pandas_stable_sort(chunk_size: object, by: str, ascending: bool, na_position: str) -> None:
    kw = {"ascending": ascending, "na_position": na_position}
    mdf = md.DataFrame(PDF, chunk_size=chunk_size)
    assert_eq(mdf.sort_values(by, **kw), PDF.sort_values(by, kind="stable", **kw))
    assert_eq(mdf[by].sort_values(**kw), PDF[by].sort_values(kind="stable", **kw))


@pytest.mark.parametrize("chunk_size", partitionings(N))
def test_sort_index_by_numbers(chunk_size: object) -> None:
    indexed = PDF.set_index("f")
    assert_eq(md.DataFrame(indexed, chunk_size=chunk_size).sort_index(ascending=False),
              indexed.sort_index(ascending=False, kind="stable"))


def test_a_numeric_key_is_sorted_once_and_sizes_are_learnt() -> None:
    result = md.DataFrame(PDF, chunk_size=9).sort_values("f").execute()
    ops = _ops(result)
    assert "SortBucket" in ops and "SortLocal" not in ops, ops
    assert sum(result.nsplits[0]) == N
    numbered = md.DataFrame(PDF, chunk_size=9).sort_values("f", ignore_index=True).execute()
    assert "SortLocal" in _ops(numbered)  # the three stages know the sizes, hence the numbering
    assert_eq(numbered, PDF.sort_values("f", kind="stable", ignore_index=True))


def test_ties_with_a_pivot_split_by_place() -> None:
    spec = SortSpec("sort_values", None, (True,), "last", None)
    pivots = pd.DataFrame({0: [2.0, 2.0, np.nan], "chunk": [0, 1, 1], "rank": [5, 0, 3]})
    rows = pd.Series([2.0, 2.0, 3.0, np.nan, np.nan, 1.0])
    assert buckets_of(spec, rows, pivots, 0).tolist() == [0, 0, 2, 2, 2, 0]
    # in partition 1 the tied rows come after the pivot of partition 0, and each after its own place's pivot
    assert buckets_of(spec, rows, pivots, 1).tolist() == [1, 2, 2, 2, 3, 0]
    first = SortSpec("sort_values", None, (False,), "first", None)
    assert buckets_of(first, rows, pivots.iloc[[2, 0, 1]].reset_index(drop=True), 1).tolist() == [2, 3, 1, 0, 1, 3]


@pytest.mark.parametrize("n_pivots", [3, 16, 17, 40])
def test_buckets_with_many_or_few_pivots_agree_with_a_search_per_row(n_pivots: int) -> None:
    """A few pivots are compared with every row; more are searched: both find the same buckets, ties included."""
    rng = np.random.default_rng(n_pivots)
    values = pd.Series(rng.choice(np.r_[np.arange(10.0), np.nan], 500))
    keys = np.sort(rng.choice(np.arange(10.0), n_pivots))
    pivots = pd.DataFrame({0: keys, "chunk": rng.integers(0, 3, n_pivots), "rank": rng.integers(0, 500, n_pivots)})
    pivots = pivots.sort_values([0, "chunk", "rank"], ignore_index=True)
    spec = SortSpec("sort_values", None, (True,), "last", None)
    places = (pivots["chunk"].to_numpy() << 40) + pivots["rank"].to_numpy()
    expected = []
    for row, v in enumerate(values):
        if np.isnan(v):
            expected.append(n_pivots)
            continue
        before = (keys < v) | ((keys == v) & (places < (1 << 40) + row))  # pivots before this row of partition 1
        expected.append(int(before.sum()))
    assert buckets_of(spec, values, pivots, 1).tolist() == expected
