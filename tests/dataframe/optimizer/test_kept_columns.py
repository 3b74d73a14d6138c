"""Which input a column's values come from (``kept_column``): the rule behind bounds of an uploaded column's
keys through filters, assignments, selections and merges (:func:`mars.dataframe.held.held_bound`).
Each op is asked on its own graph, nothing runs."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import mars.dataframe as md
from mars.dataframe.indexing import SelectColumns
from mars.dataframe.map import MapPartitions
from mars.dataframe.merge import MergeChunk
from mars.dataframe.merge_table import TableMerge
from mars.dataframe.optimizer import optimize


def _frame() -> md.DataFrame:
    pdf = pd.DataFrame({"k": np.arange(6), "x": np.linspace(0.0, 1.0, 6), "s": list("abcabc")})
    return md.DataFrame(pdf, chunk_size=4)


def _merge(how: str, **kwargs) -> MergeChunk:
    op = MergeChunk(kwargs={"how": how, **kwargs}, na_labels=None)
    left = pd.DataFrame({"k": [1], "a": [1], "both": [1]})
    right = pd.DataFrame({"k": [1], "b": [1], "both": [1]})
    op.inputs = [SimpleNamespace(meta=left), SimpleNamespace(meta=right)]
    return op


def test_a_filter_keeps_every_column_of_the_frame_it_filters():
    df = _frame()
    op = df[df.x > 0.3].data.op
    assert isinstance(op, MapPartitions)
    assert op.kept_column("k") == (0, "k") and op.kept_column("s") == (0, "s")


def _source_of(data, column):
    """Where ``column`` of ``data`` comes from, followed down while ops keep it: (the data, the label) or None."""
    while data.op.inputs:
        kept = getattr(data.op, "kept_column", None)
        found = kept(column) if kept is not None else None
        if found is None:
            return None
        data, column = data.op.inputs[found[0]], found[1]
    return data, column


def test_an_assignment_keeps_the_other_columns_only():
    df = _frame()
    assigned = df.assign(y=df.x * 2, k2=df.k + 1).data  # one op a column
    assert _source_of(assigned, "k") == (df.data, "k")
    assert _source_of(assigned, "y") is None and _source_of(assigned, "k2") is None
    df = _frame()
    df[["k", "z"]] = 0  # setting a column it has: its values are new
    assert df.data.op.kept_column("k") is None and df.data.op.kept_column("x") == (0, "x")


def test_a_selection_of_labels_keeps_those_it_selects():
    assert SelectColumns(columns=["k", "x"], by_position=False).kept_column("k") == (0, "k")
    assert SelectColumns(columns=["k", "x"], by_position=False).kept_column("s") is None
    assert SelectColumns(columns="k", by_position=False).kept_column("k") is None  # a Series: no columns
    assert SelectColumns(columns=[0, 1], by_position=True).kept_column(0) is None


@pytest.mark.parametrize("how, left, right", [("inner", (0, "a"), (1, "b")), ("left", (0, "a"), None),
                                              ("right", None, (1, "b")), ("outer", None, None)])
def test_a_merge_keeps_the_columns_of_a_side_whose_rows_it_keeps(how, left, right):
    op = _merge(how, on="k")
    assert op.kept_column("a") == left and op.kept_column("b") == right
    # the key both sides name: the side it is taken from (either, inner: the values are equal)
    assert op.kept_column("k") == {"inner": (0, "k"), "left": (0, "k"), "right": (1, "k")}.get(how)
    # a column both sides have and the merge renames: neither
    assert op.kept_column("both") is None and op.kept_column("both_x") is None


def test_a_merge_on_differently_named_keys_keeps_each_from_its_side():
    op = _merge("inner", left_on="a", right_on="b")
    assert op.kept_column("a") == (0, "a") and op.kept_column("b") == (1, "b")
    assert op.kept_column("k") is None  # both sides have k, and it is no key: suffixed


def test_a_table_merge_keeps_the_left_columns():
    op = TableMerge(kwargs={"how": "inner", "on": "k"}, on="k", columns=pd.Index(["k", "a", "b"]), numbered=False)
    op.inputs = [SimpleNamespace(meta=pd.DataFrame({"k": [1], "a": [1]})), SimpleNamespace(meta=None)]
    assert op.kept_column("a") == (0, "a") and op.kept_column("k") == (0, "k") and op.kept_column("b") is None


def test_a_fused_region_traces_a_column_through_its_steps():
    """Filter, assignment and selection fused into one program: the column is followed step by step."""
    df = _frame()
    kept = df[df.x > 0.3]
    kept = kept.assign(y=kept.x * 2)[["k", "y"]]
    [out] = optimize([kept.data])
    assert isinstance(out.op, MapPartitions) and hasattr(out.op.func, "steps")
    assert out.op.kept_column("k") == (0, "k")
    assert out.op.kept_column("y") is None
    # a column computed inside the region and then filtered comes from no input
    df = _frame()
    made = df.assign(k=df.k * 2)
    [out] = optimize([made[made.x > 0.3].data])
    assert out.op.kept_column("k") is None and out.op.kept_column("x") == (0, "x")
