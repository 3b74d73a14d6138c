"""Each optimizer rule alone, on graphs that are not run: what the rewritten plan looks like."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mars
import mars.dataframe as md
from mars.dataframe.datasource import FromPandas
from mars.dataframe.indexing import SelectColumns
from mars.dataframe.io.parquet import ReadParquet
from mars.dataframe.map import MapPartitions
from mars.dataframe.optimizer import explain, optimize
from mars.dataframe.optimizer.cse import dedupe, select_of_select
from mars.dataframe.optimizer.fusion import find_regions, fuse_partitions
from mars.dataframe.optimizer.graph import topo_order
from mars.dataframe.optimizer.kernels import BinaryStep, ColumnStep, FilterStep, OpStep
from mars.dataframe.optimizer.predicates import push_predicates
from mars.dataframe.optimizer.projection import column_needs, project_columns
from mars.dataframe.optimizer.sources import combine_reads
from mars.dataframe.optimizer.topn import sort_head_to_topn
from mars.dataframe.reduction import TreeReduce
from mars.dataframe.sort import SortRows


def _frame(n: int = 12, chunk_size: int = 5) -> tuple[pd.DataFrame, md.DataFrame]:
    pdf = pd.DataFrame({"a": np.arange(n), "b": np.arange(n) * 0.5, "c": list("xyz" * n)[:n],
                        "d": pd.date_range("2024-01-01", periods=n)})
    return pdf, md.DataFrame(pdf, chunk_size=chunk_size)


def _ops(targets: list) -> list[str]:
    return [type(n.op).__name__ for n in topo_order(targets)]


def test_a_graph_with_nothing_to_do_comes_back_as_the_same_objects():
    _, df = _frame()
    s = df.max()  # reads every column, fuses nothing
    assert optimize([s.data]) == [s.data]
    assert dedupe([df.data]) == [df.data]


def test_dedupe_makes_one_node_per_key():
    _, df = _frame()
    expr = df["a"] + df["a"]  # two SelectColumns objects with one key
    left, right = expr.data.op.inputs
    assert left is not right and left.key == right.key
    [out] = dedupe([expr.data])
    a, b = out.op.inputs
    assert a is b


def test_select_of_select_reads_the_frame_and_then_dedupes():
    _, df = _frame()
    expr = df[["a", "b"]]["a"] + df["a"]
    [out] = select_of_select([expr.data])
    a, b = out.op.inputs
    assert a.key == b.key and a.op.inputs[0] is df.data
    [out] = dedupe([out])
    assert out.op.inputs[0] is out.op.inputs[1]


def test_column_needs_follow_selections_and_filters():
    _, df = _frame()
    f = df[df.a > 3]
    expr = f.b * 2
    needs = column_needs([expr.data])
    assert needs[id(df.data)] == {"a", "b"}
    assert needs[id(f.data)] == {"b"}
    assert column_needs([f.data])[id(df.data)] is None  # a target keeps all its columns


def test_projection_narrows_an_in_memory_source_without_copying():
    pdf, df = _frame()
    f = df[df.a > 3]
    [out] = project_columns([(f.b * 2).data])
    sources = [n for n in topo_order([out]) if isinstance(n.op, FromPandas)]
    assert len(sources) == 1
    src = sources[0]
    assert list(src.meta.columns) == ["a", "b"] and src.shape == (12, 2)
    assert np.shares_memory(src.op.data["a"].to_numpy(), pdf["a"].to_numpy())
    filtered = [n for n in topo_order([out]) if n.op.inputs and n.op.inputs[0] is src and n.meta.ndim == 2]
    assert [list(n.meta.columns) for n in filtered] == [["a", "b"]]
    assert src.partitioning == df.data.partitioning  # same rows in the same partitions


def test_projection_through_a_merge_keeps_keys_and_suffixed_columns():
    left = md.DataFrame(pd.DataFrame({"k": [1, 2, 3], "v": [1.0, 2.0, 3.0], "x": [0, 0, 0], "u": [5, 6, 7]}),
                        chunk_size=2)
    right = md.DataFrame(pd.DataFrame({"k": [1, 3], "v": [9.0, 8.0], "y": [1, 1]}), chunk_size=1)
    m = left.merge(right, on="k")
    expr = m["v_x"] + m["u"]
    needs = column_needs([expr.data])
    assert needs[id(left.data)] == {"k", "v", "u"}
    assert needs[id(right.data)] == {"k", "v"}
    [out] = project_columns([expr.data])
    merged = next(n for n in topo_order([out]) if type(n.op).__name__ == "Merge")
    assert list(merged.meta.columns) == ["k", "v_x", "u", "v_y"]


def test_fusion_finds_one_region_for_a_q6_shaped_query():
    _, df = _frame()
    m = (df.a >= 2) & (df.a < 9) & (df.b > 1.0) & (df.d < pd.Timestamp("2024-01-10"))
    f = df[m]
    expr = (f.a * f.b).sum()
    regions = find_regions([expr.data])
    assert len(regions) == 1
    [out] = fuse_partitions([expr.data])
    assert isinstance(out.op, TreeReduce)
    fused = out.op.inputs[0]
    assert isinstance(fused.op, MapPartitions) and fused.op.inputs == [df.data]
    kinds = {type(s) for s in fused.op.func.steps}
    assert kinds == {ColumnStep, BinaryStep, FilterStep}


def test_fusion_falls_back_to_pandas_steps_for_other_ops():
    _, df = _frame()
    expr = (df.c.str.upper() + "!").fillna("?")
    [out] = fuse_partitions([expr.data])
    assert isinstance(out.op, MapPartitions)
    assert any(isinstance(s, OpStep) for s in out.op.func.steps)


def test_fusion_stops_at_a_node_read_elsewhere_or_aligned():
    _, df = _frame()
    s = df.a + 1
    expr1, expr2 = s * 2, s - 1
    outs = fuse_partitions([expr1.data, expr2.data])
    assert outs[0].op.inputs[0] is outs[1].op.inputs[0]  # s is shared: computed once, not fused twice
    other = md.Series(np.arange(12), chunk_size=4)  # another partitioning: the sum aligns first
    assert find_regions([(df.a + other).data]) == []


def test_fusion_keeps_pandas_steps_where_numpy_would_differ():
    nullable = md.Series(pd.array([1, None, 3, 4, 5], dtype="Int64"), chunk_size=2)
    [out] = fuse_partitions([((nullable + 1) * 2).data])
    assert all(isinstance(s, OpStep) for s in out.op.func.steps)  # a masked array is not a numpy array
    floats = md.Series(np.arange(5.0), chunk_size=2)
    [out] = fuse_partitions([((floats + 1) > 2).data])
    assert all(isinstance(s, BinaryStep) for s in out.op.func.steps)


def test_sort_head_becomes_a_top_n_tree():
    _, df = _frame()
    expr = df.sort_values("b", ascending=False).head(3)
    [out] = sort_head_to_topn([expr.data])
    assert isinstance(out.op, TreeReduce) and not any(isinstance(n.op, SortRows) for n in topo_order([out]))
    kept = df.sort_values("b")
    both = [kept.head(3).data, kept.data]  # the sort is read whole too: left alone
    assert sort_head_to_topn(both) == both


def test_predicate_pushdown_skips_row_groups(tmp_path):
    pdf = pd.DataFrame({"a": np.arange(100), "b": np.arange(100) * 2.0})
    path = tmp_path / "t.parquet"
    pdf.to_parquet(path, row_group_size=10)
    df = md.read_parquet(path, chunk_bytes=1)
    expr = df[(df.a >= 35) & (df.a < 52) & (df.b > -1)]
    [out] = push_predicates(dedupe(select_of_select(combine_reads([expr.data]))))
    src = [n for n in topo_order([out]) if isinstance(n.op, ReadParquet)]
    assert len(src) == 1 and src[0].op.skip == ((0, 1, 2, 6, 7, 8, 9),)
    assert src[0].shape[0] == 30
    both = dedupe(select_of_select(combine_reads([df[df.a > 95].data, df.data])))
    assert push_predicates(both) == both  # the source is read whole too: nothing to skip


def test_reads_of_one_file_become_one_read(tmp_path):
    path = tmp_path / "t.parquet"
    pd.DataFrame({"a": [1, 2, 3], "b": [1.0, 2.0, 3.0], "c": ["x", "y", "z"]}).to_parquet(path)
    df = md.read_parquet(path)
    expr = df[df.a > 1].b
    sources = [n for n in topo_order([expr.data]) if isinstance(n.op, ReadParquet)]
    assert len({n.key for n in sources}) == 2  # df.a reads column a alone
    [out] = combine_reads([expr.data])
    sources = [n for n in topo_order([out]) if isinstance(n.op, ReadParquet)]
    assert len(sources) == 1 and list(sources[0].meta.columns) == ["a", "b", "c"]


def test_explain_shows_both_plans():
    _, df = _frame()
    plan = df[df.a > 1].b.explain()
    assert "FromPandas" in plan.before and "Fused[" in plan.after
    assert "DataFrame[a, b]" in plan.after  # the source narrowed
    assert str(plan).startswith("== plan as written ==")
    assert "Fused[" in str(explain((df.a + 1).sum()).after)


def test_the_option_turns_it_off():
    _, df = _frame()
    with mars.option_context({"optimize": False}) if hasattr(mars, "option_context") else _off():
        expr = df[df.a > 1].b
        expr.execute()
        assert isinstance(expr.data.chunks[0].op, SelectColumns)
    with pytest.raises(ValueError, match="optimize must be True or False"):
        mars.options.optimize = "yes"


class _off:
    def __enter__(self):
        mars.options.optimize = False

    def __exit__(self, *exc):
        mars.options.optimize = True
