"""Joins whose row order no reader sees are not put back in pandas' order (``optimizer.order``)."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

import mars.dataframe as md
from mars.core.options import option_context
from mars.dataframe import merge_strategy
from mars.dataframe.merge import Merge
from mars.dataframe.optimizer import optimize
from mars.dataframe.optimizer.graph import topo_order
from mars.dataframe.optimizer.order import unordered_merges
from tests.dataframe.df_testing import assert_eq, partitionings

merge_module = sys.modules["mars.dataframe.merge"]
NL, NR = 12, 40


def _left(n: int = NL) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame({"k": rng.integers(0, 8, n), "g": rng.choice(["a", "b", "c"], n),
                         "x": rng.integers(0, 50, n)}, index=pd.RangeIndex(100, 100 + n))


def _right(n: int = NR) -> pd.DataFrame:
    rng = np.random.default_rng(4)
    return pd.DataFrame({"k": rng.integers(0, 10, n), "y": rng.integers(0, 1000, n).astype(float),
                         "t": pd.to_datetime(rng.integers(0, 10**8, n), unit="s")})


def _flags(targets: list) -> list[bool]:
    """Each merge's ``unordered`` flag after the rule, inputs first."""
    return [n.op.unordered for n in topo_order(unordered_merges([t.data for t in targets]))
            if isinstance(n.op, Merge)]


def _joined(lc=4, rc=7):
    return md.DataFrame(_left(), chunk_size=lc).merge(md.DataFrame(_right(), chunk_size=rc), on="k")


def test_a_join_read_by_a_sorted_grouped_sum_through_row_steps_is_unordered():
    j = _joined()
    f = j[j.y > 100]
    f = f.assign(v=f.x * 2 + f.y)
    out = f.groupby("g").agg(total=("v", "sum"), n=("x", "count"), hi=("y", "max"))
    assert _flags([out]) == [True]
    # a value aligned by index labels from another partitioning (the unfiltered join) keeps the order
    aligned = j[j.y > 100].assign(v=j.x * 2 + j.y)
    assert _flags([aligned.groupby("g").v.sum()]) == [False]


def test_chains_of_joins_and_reductions_to_one_value():
    j = _joined().merge(md.DataFrame({"g": ["a", "b"], "w": [1.5, 2.0]}), on="g")
    assert _flags([j.groupby("g").y.mean()]) == [True, True]
    assert _flags([(j.x * j.w).sum()]) == [True, True]
    assert _flags([j[j.t.dt.year > 1971].y.std()]) == [True, True]


def test_distinct_rows_then_a_count_keep_no_order():
    # TPC-H Q16's shape: distinct whole rows of a join, counted per group (the distinct step joins the groupby)
    left, right = _left(), _right()
    j = left.merge(right, on="k")
    expected = j[["g", "k"]].drop_duplicates().groupby("g").agg(n=("k", "count"))
    lj = md.DataFrame(left, chunk_size=5).merge(md.DataFrame(right, chunk_size=(1, 20, 0, 19)), on="k")
    counted = lj[["g", "k"]].drop_duplicates().groupby("g").agg(n=("k", "count"))
    assert [n.op.unordered for n in topo_order(optimize([counted.data])) if isinstance(n.op, Merge)] == [True]
    with option_context({"chunk_store_limit": 64}):
        assert_eq(counted, expected)
    # which of two rows alike in the subset is kept shows in what is summed: the join keeps its order
    summed = lj.drop_duplicates(["g"]).groupby("g").x.sum()
    assert [n.op.unordered for n in topo_order(optimize([summed.data])) if isinstance(n.op, Merge)] == [False]
    assert_eq(summed, j.drop_duplicates(["g"]).groupby("g").x.sum())


@pytest.mark.parametrize("case", ["target", "unsorted groupby", "first", "index read", "array column",
                                  "cumulative", "join on the index", "also fetched", "grouped by a series"])
def test_joins_whose_order_shows_stay_ordered(case):
    j = _joined()
    targets = {
        "target": lambda: [j],
        "unsorted groupby": lambda: [j.groupby("g", sort=False).x.sum()],
        "first": lambda: [j.groupby("g").x.first()],
        "index read": lambda: [j.reset_index().groupby("g")["index"].sum()],
        "array column": lambda: [j.assign(z=np.arange(len(_left().merge(_right(), on="k")))).groupby("g").z.sum()],
        "cumulative": lambda: [j.x.cumsum().sum()],
        "join on the index": lambda: [j.merge(md.DataFrame({"w": [1.0] * 50}), left_index=True,
                                              right_index=True).w.sum()],
        "also fetched": lambda: [j.groupby("g").x.sum(), j.x],
        "grouped by a series": lambda: [j.groupby(j.x % 3).y.sum()],
    }[case]()
    assert not any(_flags(targets))


def _no_reordering(monkeypatch) -> list:
    """Records each call that puts merged rows in pandas' order (none is expected)."""
    calls: list = []
    for name in ("ordered_by_position", "ordered_in_meta_dtypes"):
        original = getattr(merge_module, name)
        monkeypatch.setattr(merge_module, name, lambda *a, _f=original, _n=name, **k: (calls.append(_n), _f(*a, **k))[1])
    return calls


@pytest.mark.parametrize("lc", partitionings(NL))
@pytest.mark.parametrize("rc", [NR, 9, (1, 20, 0, 19)])
@pytest.mark.parametrize("limit", ["broadcast the left", "hash"])
def test_results_equal_pandas(monkeypatch, strategies, lc, rc, limit):
    left, right = _left(), _right()
    j = left.merge(right, on="k")
    expected = j.assign(v=j.x + j.y).groupby("g").agg(v=("v", "sum"), n=("k", "size"), lo=("t", "min"))
    lj = md.DataFrame(left, chunk_size=lc).merge(md.DataFrame(right, chunk_size=rc), on="k")
    result = lj.assign(v=lj.x + lj.y).groupby("g").agg(v=("v", "sum"), n=("k", "size"), lo=("t", "min"))
    # a store limit the left fits in (it is broadcast), or neither side (both are shuffled)
    store = merge_strategy._nbytes(left, NL) + 1 if limit == "broadcast the left" else 64
    calls = _no_reordering(monkeypatch)
    with option_context({"chunk_store_limit": int(store)}):
        assert_eq(result, expected)
    assert calls == []
    if strategies and len(strategies) == 1 and isinstance(lc, int) and lc < NL:
        assert strategies[0] in (("broadcast_left_ordered", "broadcast_right") if limit != "hash" else ("hash",))


@pytest.mark.parametrize("how", ["inner", "left", "right", "outer"])
def test_other_joins_keep_their_values(how):
    left, right = _left(), _right()
    j = left.merge(right, on="k", how=how)
    expected = j.groupby("g").agg(y=("y", "sum"), n=("x", "count"))
    lj = md.DataFrame(left, chunk_size=5).merge(md.DataFrame(right, chunk_size=(1, 20, 0, 19)), on="k", how=how)
    with option_context({"chunk_store_limit": 64}):
        assert_eq(lj.groupby("g").agg(y=("y", "sum"), n=("x", "count")), expected)


def test_a_reduction_of_a_chain_of_joins_equals_pandas():
    left, right = _left(), _right()
    third = pd.DataFrame({"g": ["a", "b", "c"], "w": [1, 2, 3]})
    expected = (left.merge(right, on="k").merge(third, on="g").pipe(lambda f: f.x * f.w)).sum()
    j = md.DataFrame(left, chunk_size=5).merge(md.DataFrame(right, chunk_size=9), on="k").merge(
        md.DataFrame(third, chunk_size=2), on="g")
    assert [n.op.unordered for n in topo_order(optimize([(j.x * j.w).sum().data]))
            if isinstance(n.op, Merge)] == [True, True]
    assert (j.x * j.w).sum().execute().fetch() == expected


@pytest.mark.parametrize("how", ["inner", "left"])
@pytest.mark.parametrize("rc", [13, (1, 30, 0, 19)])
def test_a_small_left_broadcast_to_the_right_keeps_no_order(monkeypatch, strategies, how, rc):
    # a left join's unmatched left rows are added apart; its hidden position column goes with the dtypes settled
    left = _left()
    rng = np.random.default_rng(6)
    right = pd.DataFrame({"k": rng.integers(0, 12, 50), "o": np.arange(50)})
    j = left.merge(right, on="k", how=how)
    expected = j.groupby("k").agg(n=("o", "count")).groupby("n").agg(c=("n", "size"))
    lj = md.DataFrame(left, chunk_size=NL).merge(md.DataFrame(right, chunk_size=rc), on="k", how=how)
    calls = _no_reordering(monkeypatch)
    with option_context({"chunk_store_limit": int(merge_strategy._nbytes(left, NL)) + 1}):
        assert_eq(lj.groupby("k").agg(n=("o", "count")).groupby("n").agg(c=("n", "size")), expected)
    assert calls == []
    assert strategies == ["broadcast_left_ordered"]
