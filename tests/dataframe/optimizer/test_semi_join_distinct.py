"""Distinct rows read only as a semi-join's right side drop repeats in any order; merges' narrow metas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mars.dataframe as md
import mars.dataframe.uniques as uniques_module
from mars.dataframe.optimizer import optimize
from mars.dataframe.optimizer.distinct import unordered_distinct_for_merges
from mars.dataframe.optimizer.graph import topo_order
from mars.dataframe.optimizer.merge_columns import narrow_merge_meta, output_names
from mars.dataframe.uniques import Distinct, dense_unique
from tests.dataframe.df_testing import assert_eq, partitionings

N = 60
RNG = np.random.default_rng(5)
LEFT = pd.DataFrame({"k": RNG.integers(0, 30, 40), "v": RNG.random(40), "t": RNG.choice(["a", "b", "c"], 40)})
RIGHT = pd.DataFrame({"k": RNG.integers(0, 25, N), "j": RNG.integers(-3, 3, N), "t": RNG.choice(["a", "b"], N)})


def _unordered(expr) -> list[bool]:
    [out] = unordered_distinct_for_merges([expr.data])
    return [n.op.unordered for n in topo_order([out]) if isinstance(n.op, Distinct)]


@pytest.mark.parametrize("how", ["inner", "left"])
def test_a_semi_joins_right_side_becomes_unordered(how):
    left, right = md.DataFrame(LEFT, chunk_size=7), md.DataFrame(RIGHT, chunk_size=9)
    assert _unordered(left.merge(right[["k"]].drop_duplicates(), on="k", how=how)) == [True]
    assert _unordered(left.merge(right[["k", "j"]].drop_duplicates(), left_on=["k", "v"], right_on=["k", "j"],
                                 how=how)) == [True]


def test_order_that_shows_keeps_the_ordered_distinct():
    left, right = md.DataFrame(LEFT, chunk_size=7), md.DataFrame(RIGHT, chunk_size=9)
    keys = right[["k"]].drop_duplicates()
    assert _unordered(keys) == [False]  # a target: its order is the result's
    assert _unordered(keys.merge(left, on="k")) == [False]  # the left side orders the output
    assert _unordered(left.merge(keys, on="k", how="right")) == [False]
    assert _unordered(left.merge(keys, on="k", how="outer")) == [False]
    # keyed on part of the columns: a left row may meet several of them, in their order
    assert _unordered(left.merge(right[["k", "j"]].drop_duplicates(), on="k")) == [False]
    # a subset: which repeat is kept shows
    assert _unordered(left.assign(j=1).merge(right[["k", "j"]].drop_duplicates("k"), on=["k", "j"])) == [False]
    # another reader besides the semi-join
    outs = unordered_distinct_for_merges([left.merge(keys, on="k").data, keys["k"].cumsum().data])
    assert [n.op.unordered for n in topo_order(outs) if isinstance(n.op, Distinct)] == [False]


@pytest.mark.parametrize("chunk_size", partitionings(N))
@pytest.mark.parametrize("how", ["inner", "left"])
def test_semi_joins_equal_pandas(chunk_size, how, monkeypatch):
    left, right = md.DataFrame(LEFT, chunk_size=7), md.DataFrame(RIGHT, chunk_size=chunk_size)
    cases = [
        (lambda l, r: l.merge(r[["k"]].drop_duplicates(), on="k", how=how)),  # dense integers
        (lambda l, r: l.merge(r[["t"]].drop_duplicates(), on="t", how=how)),  # strings
        (lambda l, r: l.merge(r[["k", "t"]].drop_duplicates(), on=["k", "t"], how=how)),  # two columns
    ]
    for case in cases:
        assert_eq(case(left, right), case(LEFT, RIGHT))
    monkeypatch.setattr(uniques_module, "TREE_MAX_ROWS", 0)  # the partitions' uniques merged by a hash shuffle
    for case in cases:
        assert_eq(case(left, right), case(LEFT, RIGHT))


def test_the_optimized_plan_really_runs_unordered():
    left, right = md.DataFrame(LEFT, chunk_size=7), md.DataFrame(RIGHT, chunk_size=9)
    expr = left.merge(right[["k"]].drop_duplicates(), on="k")
    assert any(isinstance(n.op, Distinct) and n.op.unordered for n in topo_order(optimize([expr.data])))


def test_dense_unique_keeps_dtype_and_skips_wide_ranges():
    got = dense_unique(pd.DataFrame({"k": np.array([7, 3, 7, 5], dtype="uint16")}))
    assert got["k"].tolist() == [3, 5, 7] and got["k"].dtype == np.uint16
    assert dense_unique(pd.DataFrame({"k": [0, 10**12]})) is None
    assert dense_unique(pd.DataFrame({"k": [1.0, 1.0]})) is None
    assert dense_unique(pd.DataFrame({"k": [1], "j": [2]})) is None


# ----------------------------------------------------------------- a merge's narrow meta, without pandas' merge
SIDES = (
    pd.DataFrame({"k": [1], "a": [1.0], "b": ["x"], "c": [True], "d": pd.to_datetime(["2020-01-01"])}),
    pd.DataFrame({"k": [1], "b": ["z"], "c": [0.5], "e": ["y"]}),
)
MERGES = [
    {"on": ["k"]}, {"on": ["k", "b"], "how": "left"}, {"left_on": ["a"], "right_on": ["c"], "how": "outer"},
    {"left_on": ["b"], "right_on": ["e"], "how": "right", "suffixes": ("", "_r")},
    {"on": ["k"], "suffixes": ("_l", "_r"), "sort": True},
]


@pytest.mark.parametrize("kw", MERGES)
def test_narrow_merge_meta_equals_pandas_merge_of_the_narrow_sides(kw):
    lmeta, rmeta = (s.iloc[:0] for s in SIDES)
    kw = {"how": "inner", "suffixes": ("_x", "_y"), **kw}
    wide = pd.merge(lmeta, rmeta, **kw)
    keys_l = kw.get("on") or kw["left_on"]
    keys_r = kw.get("on") or kw["right_on"]
    rng = np.random.default_rng(len(str(kw)))
    for _ in range(12):
        lkeep = [c for c in lmeta.columns if c in keys_l or rng.random() < 0.5]
        rkeep = [c for c in rmeta.columns if c in keys_r or rng.random() < 0.5]
        got = narrow_merge_meta(wide, list(lmeta.columns), list(rmeta.columns), lkeep, rkeep, kw)
        expected = pd.merge(lmeta[lkeep], rmeta[rkeep], **kw)
        assert got is not None, (kw, lkeep, rkeep)
        pd.testing.assert_frame_equal(got, expected)


def test_merges_the_rule_does_not_cover_are_left_to_pandas():
    lmeta, rmeta = (s.iloc[:0] for s in SIDES)
    assert output_names(["k"], ["k"], {"how": "inner", "on": ["k"], "indicator": True}) is None
    assert output_names(["k"], ["k"], {"how": "cross", "on": None}) is None
    assert output_names(["k"], ["k"], {"how": "inner", "left_on": ["k"], "right_on": ["k"]}) is None
    kw = {"how": "inner", "on": ["k"], "suffixes": ("_x", "_y")}
    wrong = pd.merge(lmeta, rmeta, **kw).rename(columns={"a": "z"})  # not what the rule gives: no answer
    assert narrow_merge_meta(wrong, list(lmeta.columns), list(rmeta.columns), ["k"], ["k"], kw) is None


def test_projected_merges_equal_pandas():
    left, right = md.DataFrame(LEFT, chunk_size=7), md.DataFrame(RIGHT.rename(columns={"j": "v"}), chunk_size=9)
    expr = left.merge(right, on="k")[["k", "v_x", "t_y"]]
    assert_eq(expr, LEFT.merge(RIGHT.rename(columns={"j": "v"}), on="k")[["k", "v_x", "t_y"]])
