"""A join whose side in several partitions holds few rows in all (sizes known after an earlier stage) merges it
whole, in one partition (``merge_strategy.FEW_ROWS``): TPC-H Q17's lineitem rows of a few parts, merged with
their parts' mean quantity."""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, partitionings

import mars.dataframe as md

N = 200
strategy_module = importlib.import_module("mars.dataframe.merge_strategy")


@pytest.fixture
def few_rows(monkeypatch):
    """The threshold as it ships (the dataframe tests' conftest turns it off)."""
    monkeypatch.setattr(strategy_module, "FEW_ROWS", 100_000)


def _tables(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    items = pd.DataFrame({"pk": rng.integers(0, 30, N), "qty": rng.integers(1, 50, N).astype(float),
                          "price": rng.random(N)})
    parts = pd.DataFrame({"pk": np.arange(30), "brand": rng.choice(["a", "b", "c"], 30)})
    return items, parts


def _q17_shape(items, parts):
    j = items.merge(parts[parts.brand == "b"][["pk"]], on="pk")
    avg = j.groupby("pk").agg(avg_qty=("qty", "mean")).reset_index()
    j = j.merge(avg, on="pk")
    return j[j.qty < 0.9 * j.avg_qty]


def _merges(names: list[str]) -> list[str]:
    """The subtasks that merge partitions (a pandas merge, or a look-up in a key table)."""
    return [n for n in names if "MergeChunk" in n or "TableMerge" in n]


@pytest.mark.parametrize("chunk_size", partitionings(N))
def test_a_few_rows_in_several_partitions_merge_in_one_and_equal_pandas(chunk_size, few_rows, fused_names):
    items, parts = _tables()
    got = _q17_shape(md.DataFrame(items, chunk_size=chunk_size), md.DataFrame(parts)).execute().fetch()
    assert_eq(got, _q17_shape(items, parts))
    second = fused_names[fused_names.index(next(n for n in fused_names if "GroupCall" in n)):]
    assert len(_merges(second)) == 1, second  # the second join: one merge, whatever the partitions


@pytest.mark.parametrize("chunk_size", [7, (1, N - 3, 2, 0)])
def test_more_rows_than_few_keep_a_merge_per_partition(chunk_size, monkeypatch, fused_names):
    monkeypatch.setattr(strategy_module, "FEW_ROWS", 5)
    items, parts = _tables(1)
    got = _q17_shape(md.DataFrame(items, chunk_size=chunk_size), md.DataFrame(parts)).execute().fetch()
    assert_eq(got, _q17_shape(items, parts))
    second = fused_names[fused_names.index(next(n for n in fused_names if "GroupCall" in n)):]
    assert len(_merges(second)) > 1, second


def test_sizes_unknown_are_not_few(few_rows, fused_names):
    """A side whose partitions have not run yet is not taken for small: its merge stays one per partition."""
    items, parts = _tables(2)
    lazy, lazy_parts = md.DataFrame(items, chunk_size=50), md.DataFrame(parts)
    got = lazy[lazy.qty > 10].merge(lazy_parts[lazy_parts.brand != "a"], on="pk").execute().fetch()
    assert_eq(got, items[items.qty > 10].merge(parts[parts.brand != "a"], on="pk"))
    assert len(_merges(fused_names)) == 4, fused_names


@pytest.mark.parametrize("chunk_size", [7, (1, N - 3, 2, 0), 1])
def test_a_left_join_of_few_rows_merges_in_one_and_keeps_unmatched_rows(chunk_size, few_rows, fused_names):
    items, parts = _tables(3)

    def query(items, parts):
        kept = items[items.qty > 5]
        return kept.merge(parts[parts.brand != "c"], on="pk", how="left")

    lazy = md.DataFrame(items, chunk_size=chunk_size).execute()  # sizes known: uploaded partitions
    got = query(lazy, md.DataFrame(parts)).execute().fetch()
    expected = query(items, parts)
    assert expected.brand.isna().any()  # some rows have no partner
    assert_eq(got, expected)
