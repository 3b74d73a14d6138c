"""Joins whose order shows but whose index labels do not keep pandas' order and skip the numbering across
partitions (``optimizer.order``: ``unlabelled``)."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

import mars.dataframe as md
from mars.core.options import option_context
from mars.dataframe import merge_strategy
from mars.dataframe.merge import Merge
from mars.dataframe.optimizer.graph import topo_order
from mars.dataframe.optimizer.order import unordered_merges
from tests.dataframe.df_testing import assert_eq, partitionings

merge_module = sys.modules["mars.dataframe.merge"]
NL, NR = 14, 9


def _left(n: int = NL) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    return pd.DataFrame({"k": rng.integers(0, 6, n), "g": rng.choice(["a", "b", "c"], n),
                         "x": rng.integers(0, 50, n)}, index=pd.RangeIndex(100, 100 + n))


def _right(n: int = NR) -> pd.DataFrame:
    rng = np.random.default_rng(8)
    return pd.DataFrame({"k": rng.permutation(n) % 7, "y": rng.integers(0, 1000, n).astype(float)})


def _flags(targets: list) -> list[tuple[bool, bool]]:
    """Each merge's ``(unordered, unlabelled)`` after the rule, inputs first."""
    return [(n.op.unordered, n.op.unlabelled) for n in topo_order(unordered_merges([t.data for t in targets]))
            if isinstance(n.op, Merge)]


def _q2_shape(left: pd.DataFrame, right: pd.DataFrame, lib=pd, lc=None, rc=None):
    """TPC-H Q2's shape: a join, its per-key minimum, the join again with it, the rows at the minimum, sorted."""
    lz = left if lib is pd else md.DataFrame(left, chunk_size=lc)
    rz = right if lib is pd else md.DataFrame(right, chunk_size=rc)
    j = lz.merge(rz, on="k")
    low = j.groupby("k").agg(lo=("y", "min")).reset_index()
    j = j.merge(low, on="k")
    return j[j.y == j.lo].sort_values(["x", "g"])


def test_a_join_read_only_by_joins_on_columns_and_sorted_sums_is_unlabelled():
    assert _flags([_q2_shape(_left(), _right(), md, 4, 3)]) == [(False, True), (False, False)]


@pytest.mark.parametrize("case", ["target", "joined on the index", "index read", "key is the index"])
def test_joins_whose_labels_show_are_numbered(case):
    j = md.DataFrame(_left(), chunk_size=4).merge(md.DataFrame(_right(), chunk_size=3), on="k")
    other = md.DataFrame({"w": np.arange(40.0)}, chunk_size=10)
    targets = {
        "target": lambda: [j.merge(md.DataFrame(_right(), chunk_size=3), on="k"), j],
        "joined on the index": lambda: [j.merge(other, left_index=True, right_index=True)],
        "index read": lambda: [j.reset_index().merge(md.DataFrame(_right(), chunk_size=3), on="k")],
        "key is the index": lambda: [j.rename_axis("ix").merge(
            md.DataFrame({"ix": [0, 1, 2], "z": [1, 2, 3]}), on="ix")],
    }[case]()
    flags = _flags(targets)
    assert flags[0] == (False, False), flags


@pytest.mark.parametrize("lc", partitionings(NL))
@pytest.mark.parametrize("rc", [NR, 3, (1, 8, 0)])
def test_results_equal_pandas_with_no_numbering_of_the_first_join(monkeypatch, lc, rc):
    left, right = _left(), _right()
    expected = _q2_shape(left, right)
    numbered: list = []  # per join numbered across its partitions: how many partitions
    renumber, table = merge_module.renumber_rows, merge_module.table_merges

    def renumbering(chunks, *a, **k):
        numbered.append(len(chunks))
        return renumber(chunks, *a, **k)

    def table_merging(op, key, lrows, rrows, *a, **k):
        numbered.extend([len(lrows)] if k.get("numbered", a[0] if a else False) else [])
        return table(op, key, lrows, rrows, *a, **k)

    monkeypatch.setattr(merge_module, "renumber_rows", renumbering)
    monkeypatch.setattr(merge_module, "table_merges", table_merging)
    with option_context({"chunk_store_limit": int(merge_strategy._nbytes(right, NR)) + 1}):  # right broadcast
        assert_eq(_q2_shape(left, right, md, lc, rc), expected)
    # only the second join, whose labels the sorted result shows, is numbered across its partitions
    assert len([n for n in numbered if n > 1]) <= 1, numbered


def _q18_shape(left: pd.DataFrame, right: pd.DataFrame, lib=pd, lc=None, rc=None):
    """TPC-H Q18's shape: sums per key, numbered afresh, filtered, joined on a column, sorted by values."""
    lz = left if lib is pd else md.DataFrame(left, chunk_size=lc)
    rz = right if lib is pd else md.DataFrame(right, chunk_size=rc)
    per = lz.groupby("k").agg(total=("x", "sum")).reset_index()
    big = per[per.total > 20]
    return big.merge(rz, on="k").sort_values(["y", "k", "total"])


def _reset_flags(target) -> list[bool]:
    return [n.op.unlabelled for n in topo_order(unordered_merges([target.data]))
            if type(n.op).__name__ == "ResetIndex"]


def test_a_reset_index_whose_labels_no_reader_sees_is_unlabelled():
    assert _reset_flags(_q18_shape(_left(), _right(), md, 4, 3)) == [True]
    per = md.DataFrame(_left(), chunk_size=4).groupby("k").agg(total=("x", "sum")).reset_index()
    assert _reset_flags(per[per.total > 20]) == [False]  # a target: its labels are the user's


@pytest.mark.parametrize("lc", partitionings(NL))
@pytest.mark.parametrize("rc", [NR, 3, (1, 8, 0)])
def test_results_of_an_unlabelled_reset_index_equal_pandas(monkeypatch, lc, rc):
    import mars.dataframe.groupby.agg as agg_module

    # each partition's groups apart (keys in order, or a shuffle): several partitions to number
    monkeypatch.setattr(agg_module, "SINGLE_ROWS", -1)
    monkeypatch.setattr(agg_module, "TREE_RATIO", -1.0)
    monkeypatch.setattr(agg_module, "TREE_ROWS", -1.0)
    left, right = _left(), _right()
    assert_eq(_q18_shape(left, right, md, lc, rc), _q18_shape(left, right))
