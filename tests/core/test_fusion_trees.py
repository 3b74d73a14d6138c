"""A tree over one table (its distinct keys, say) is not merged into a reader that also waits for another
input computed in the same graph: apart, it runs beside what makes that input, on another slot, instead of
after it."""

from __future__ import annotations

import pandas as pd
import pandas.testing as pdt
from fusion_testing import Source, run_subtasks, subtask

from mars.core.fusion import FusedOp, fuse


class Select:
    """A column selection of held data: made again by each reader."""

    fusible = True
    repeatable = True

    def execute(self, df):
        return df[["k"]]


class Unique:
    """A tree node: the distinct rows of its inputs, end to end."""

    fusible = True

    def execute(self, *parts):
        return pd.concat(parts).drop_duplicates()


class Filter:
    fusible = True

    def execute(self, df, limit):
        return df[df.v > limit]


class Mean:
    fusible = True

    def execute(self, df):
        return df.v.mean()


class Join:
    fuses_inputs = True

    def execute(self, left, right):
        return left.merge(right, on="k")


PARTS = [pd.DataFrame({"k": [1, 2, 2, i]}) for i in range(3)]
OTHER = pd.DataFrame({"k": [0, 1, 5, 2], "v": [1.0, 4.0, 2.0, 9.0]})


HELD = {f"h{i}": p for i, p in enumerate(PARTS)}


def _graph(other_computed: bool = True) -> list:
    """The distinct keys of the held partitions joined with a filter of another table by its mean (computed
    here), or with that table as it is held."""
    selects = [subtask(Select(), [f"h{i}"], [f"s{i}"]) for i in range(3)]
    leaves = [subtask(Unique(), [f"s{i}"], [f"u{i}"]) for i in range(3)]
    other = [subtask(Source(OTHER), [], ["o"]), subtask(Mean(), ["o"], ["m"]), subtask(Filter(), ["o", "m"], ["f"])]
    tree = subtask(Unique(), ["u0", "u1", "u2"], ["t"])
    join = subtask(Join(), ["f" if other_computed else "held_other", "t"], ["out"])
    return [*selects, *leaves, *(other if other_computed else []), tree, join]


def _groups(fused: list) -> list[list[str]]:
    return [sorted(type(s.op).__name__ for s in st.op.steps) if isinstance(st.op, FusedOp)
            else [type(st.op).__name__] for st in fused]


TREE = ["Select"] * 3 + ["Unique"] * 4


def test_a_tree_runs_apart_from_a_reader_that_waits_for_a_computed_input():
    graph = _graph()
    fused = fuse(graph, {"out"})
    groups = _groups(fused)
    assert TREE in groups  # the tree, whole, in a subtask of its own
    assert ["Filter", "Join", "Mean"] in groups  # the other side still runs in the join
    expected = run_subtasks(graph, HELD)["out"]
    pdt.assert_frame_equal(run_subtasks(fused, HELD)["out"], expected)
    assert expected.k.tolist() == [2]  # the rows above the mean (4.0) whose key the tree has


def test_a_tree_is_still_merged_into_a_reader_whose_other_input_is_ready():
    """The other side held (a source, nothing computed here): the tree waits for nothing more merged in."""
    graph = _graph(other_computed=False)
    fused = fuse(graph, {"out"})
    assert _groups(fused) == [sorted([*TREE, "Join"])]
    env = {**HELD, "held_other": OTHER}
    pdt.assert_frame_equal(run_subtasks(fused, env)["out"], run_subtasks(graph, env)["out"])
