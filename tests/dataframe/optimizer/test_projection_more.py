"""Column projection through assignments, grouped aggregations, sorts and row slices, and into held frames."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mars
import mars.dataframe as md
from mars.dataframe.groupby.agg import GroupByAgg
from mars.dataframe.indexing import SelectColumns
from mars.dataframe.merge import Merge
from mars.dataframe.optimizer.graph import topo_order
from mars.dataframe.optimizer.projection import column_needs, project_columns
from mars.dataframe.optimizer.topn import sort_head_to_topn
from mars.dataframe.sort import SortRows
from tests.dataframe.df_testing import assert_eq, partitionings

N = 30


def _tables(n: int = N) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(3)
    orders = pd.DataFrame({"ok": np.arange(n), "ck": rng.integers(0, 5, n), "price": rng.uniform(0, 100, n),
                           "note": rng.choice(["late", "ok", "lost"], n), "day": rng.integers(0, 9, n)})
    cust = pd.DataFrame({"ck": np.arange(5), "name": list("abcde"), "nation": [1, 2, 1, 3, 2],
                         "comment": ["x" * i for i in range(5)]})
    return orders, cust


def _by_type(targets: list, kind: type) -> list:
    return [n for n in topo_order(targets) if isinstance(n.op, kind)]


def test_an_assignment_passes_on_what_its_readers_use_but_its_own_column():
    orders, _ = _tables()
    df = md.DataFrame(orders, chunk_size=7)
    a = df.assign(twice=df.price * 2)
    expr = a[["ok", "twice"]]
    needs = column_needs([expr.data])
    assert needs[id(a.data)] == {"ok", "twice"}
    assert needs[id(df.data)] == {"ok", "price"}  # ``ok`` through the assignment, ``price`` for the value
    [out] = project_columns([expr.data])
    source = next(n for n in topo_order([out]) if not n.op.inputs)
    assert list(source.meta.columns) == ["ok", "price"]


def test_an_assignment_nobody_reads_is_dropped():
    orders, _ = _tables()
    df = md.DataFrame(orders, chunk_size=7)
    a = df.assign(unused=df.price * 2, kept=df.day + 1)
    [out] = project_columns([a[["kept"]].data])
    written = [n.op.args[1] for n in topo_order([out]) if type(n.op).__name__ == "MapPartitions"
               and getattr(n.op.func, "__name__", "") == "_set_column"]
    assert written == ["kept"]


def test_a_named_aggregation_reads_only_its_keys_and_columns():
    orders, _ = _tables()
    df = md.DataFrame(orders, chunk_size=7)
    g = df.groupby("ck").agg(total=("price", "sum"))
    [out] = project_columns([g.data])
    [agg] = _by_type([out], GroupByAgg)
    assert list(agg.inputs[0].meta.columns) == ["ck", "price"]
    assert list(out.meta.columns) == ["total"]


def test_a_sort_reads_its_keys_and_what_its_readers_use():
    orders, _ = _tables()
    df = md.DataFrame(orders, chunk_size=7)
    expr = df.sort_values("day").head(3)[["ok"]]
    [out] = project_columns([expr.data])
    [sort] = _by_type([out], SortRows)
    assert list(sort.meta.columns) == ["ok", "day"]


def test_held_frames_are_read_through_one_selection_per_column_set():
    orders, cust = _tables()
    o = md.DataFrame(orders, chunk_size=7).execute()
    c = md.DataFrame(cust, chunk_size=2).execute()
    j = o[o.day > 2].merge(c, on="ck")
    expr = j.groupby("nation").agg(total=("price", "sum"))
    [out] = project_columns([expr.data])
    [merge] = _by_type([out], Merge)
    assert list(merge.meta.columns) == ["ck", "price", "nation"]
    selections = {tuple(n.op.columns) for n in _by_type([out], SelectColumns) if isinstance(n.op.columns, list)}
    assert selections == {("ck", "price"), ("ck", "nation")}
    assert o.data.chunks is not None and len(o.data.meta.columns) == 5  # the held frame itself is untouched


def test_a_held_frame_read_whole_is_left_alone():
    orders, _ = _tables()
    o = md.DataFrame(orders, chunk_size=7).execute()
    expr = o[o.day > 2]
    assert project_columns([expr.data]) == [expr.data]


def _query(orders, cust, pd_):
    j = orders[orders.note != "lost"].merge(cust, on="ck")
    j = j.assign(value=j.price * j.nation, year=j.day + 2000, unused=j.price - 1)
    out = j.groupby(["nation", "year"]).agg(total=("value", "sum"), n=("ok", "count")).reset_index()
    return out.sort_values(["total", "nation"], ascending=[False, True]).head(4)[["nation", "total", "n"]]


@pytest.mark.parametrize("optimize", [True, False], ids=["optimized", "plain"])
@pytest.mark.parametrize("cs", partitionings(N))
@pytest.mark.parametrize("held", [True, False], ids=["held", "lazy"])
def test_results_equal_pandas(cs, held, optimize):
    orders, cust = _tables()
    o, c = md.DataFrame(orders, chunk_size=cs), md.DataFrame(cust, chunk_size=2)
    if held:
        o, c = o.execute(), c.execute()
    with mars.option_context({"optimize": optimize}):
        assert_eq(_query(o, c, md), _query(orders, cust, pd))
        expr = o.assign(price=o.day * 1.5)[["ok", "price"]]  # an assignment replacing a column
        assert_eq(expr, orders.assign(price=orders.day * 1.5)[["ok", "price"]])
        expr = o.sort_values(["day", "ok"]).head(5)[["price"]]
        assert_eq(expr, orders.sort_values(["day", "ok"]).head(5)[["price"]])


@pytest.mark.parametrize("cs", partitionings(N))
def test_a_selection_between_a_sort_and_its_head_still_makes_a_top_n(cs):
    orders, _ = _tables()
    df = md.DataFrame(orders, chunk_size=cs)
    for cols in (["ok", "price"], "price"):
        expr = df.sort_values(["day", "ok"], ascending=[False, True])[cols].head(4)
        [out] = sort_head_to_topn([expr.data])
        assert not _by_type([out], SortRows)
        assert_eq(expr, orders.sort_values(["day", "ok"], ascending=[False, True])[cols].head(4))
    kept = df.sort_values("day")
    expr = kept[["ok"]].head(3)
    assert _by_type(sort_head_to_topn([expr.data, kept.data]), SortRows)  # the sort is read whole elsewhere
