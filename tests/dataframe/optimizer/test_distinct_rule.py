"""The rule that deduplicates rows inside a sorted groupby's shuffle instead of in a shuffle of their own."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mars
import mars.dataframe as md
from mars.dataframe.groupby.agg import GroupByAgg
from mars.dataframe.optimizer.distinct import distinct_into_groupby
from mars.dataframe.optimizer.graph import topo_order
from mars.dataframe.uniques import Distinct
from tests.dataframe.df_testing import assert_eq, partitionings

N = 40


def _frame(n: int = N) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    return pd.DataFrame({"k": rng.integers(0, 6, n), "s": rng.integers(0, 3, n), "v": rng.integers(0, 2, n) * 1.5,
                         "t": rng.choice(["x", "y"], n)}, index=pd.RangeIndex(50, 50 + n))


def _kinds(targets: list) -> list[str]:
    return [type(n.op).__name__ for n in topo_order(targets)]


def test_distinct_rows_read_only_by_a_sorted_groupby_join_its_shuffle():
    df = md.DataFrame(_frame(), chunk_size=9)
    expr = df[["k", "s"]].drop_duplicates().groupby("k").agg(n=("s", "count"))
    [out] = distinct_into_groupby([expr.data])
    assert "Distinct" not in _kinds([out])
    assert isinstance(out.op, GroupByAgg) and out.op.distinct == (None, "first") and out.op.columns is None
    assert out.meta.equals(expr.data.meta)


def test_a_subset_travels_with_the_aggregated_columns():
    df = md.DataFrame(_frame(), chunk_size=9)
    expr = df.drop_duplicates(["k", "s"], keep="last").groupby("k").agg(total=("v", "sum"))
    [out] = distinct_into_groupby([expr.data])
    assert out.op.distinct == (["k", "s"], "last") and out.op.columns == ["k", "s", "v"]


@pytest.mark.parametrize("case", ["keys outside the subset", "unsorted", "read elsewhere", "grouped by a series"])
def test_left_alone(case):
    pdf = _frame()
    df = md.DataFrame(pdf, chunk_size=9)
    d = df.drop_duplicates(["s"]) if case == "keys outside the subset" else df.drop_duplicates()
    if case == "unsorted":
        targets = [d.groupby("k", sort=False).agg(n=("s", "count")).data]
    elif case == "read elsewhere":
        targets = [d.groupby("k").agg(n=("s", "count")).data, d.data]
    elif case == "grouped by a series":
        targets = [d.groupby(d["k"] * 2).agg(n=("s", "count")).data]
    else:
        targets = [d.groupby("k").agg(n=("s", "count")).data]
    assert "Distinct" in _kinds(distinct_into_groupby(targets))


def _queries(df, subset, keep):
    d = df.drop_duplicates(subset, keep=keep) if subset else df[["k", "s", "t"]].drop_duplicates(keep=keep)
    yield d.groupby("k").agg(n=("s", "count"), first=("s", "first"))
    yield d.groupby(["k", "s"], as_index=False).agg(n=("t", "count"))
    yield d.groupby("k")["s"].sum()


@pytest.mark.parametrize("cs", partitionings(N))
@pytest.mark.parametrize("subset,keep", [(None, "first"), (["k", "s"], "last"), (["k", "s"], False)])
def test_results_equal_pandas(cs, subset, keep):
    pdf = _frame()
    df = md.DataFrame(pdf, chunk_size=cs)
    with mars.option_context({"optimize": True}):
        for got, expected in zip(_queries(df, subset, keep), _queries(pdf, subset, keep)):
            assert_eq(got, expected)


def test_results_on_an_executed_frame_with_many_groups():
    rng = np.random.default_rng(2)
    pdf = pd.DataFrame({"k": rng.integers(0, 3000, 6000), "s": rng.integers(0, 3, 6000)})
    df = md.DataFrame(pdf, chunk_size=700).execute()
    expr = df.drop_duplicates().groupby("k").agg(n=("s", "count"))
    assert "GroupByAgg" in _kinds([expr.data]) and any(isinstance(n.op, Distinct) for n in topo_order([expr.data]))
    assert_eq(expr, pdf.drop_duplicates().groupby("k").agg(n=("s", "count")))
