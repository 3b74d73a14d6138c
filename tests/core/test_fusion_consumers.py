"""Fusion into consumers that are not fusible themselves but take in their inputs' producers (``fuses_inputs``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest
from fusion_testing import Source, run_subtasks, subtask

import mars.dataframe as md
from mars.core.fusion import FusedOp, fuse
from mars.core.shuffle import ShuffleMap, ShuffleReduce
from mars.dataframe.merge import MergeChunk


class Project:
    fusible = True

    def execute(self, df):
        return df[["k", "x"]]


class Join:
    """A merge-like consumer: not fusible, takes in its producers."""

    fuses_inputs = True

    def execute(self, left, right):
        return left.merge(right, on="k")


class PlainJoin(Join):
    fuses_inputs = False


class TwoOutJoin(Join):
    def execute(self, left, right):
        out = super().execute(left, right)
        return out, out


class Split(ShuffleMap):
    fusible = True

    def split(self, df):
        return df.iloc[:2], df.iloc[2:]


class Gather(ShuffleReduce):
    fuses_inputs = True

    def combine(self, pieces):
        return pd.concat(pieces)


_st = subtask


LEFT = pd.DataFrame({"k": [1, 2, 3, 2], "x": [0.5, 1.5, 2.5, 3.5], "y": list("abcd")})
RIGHT = pd.DataFrame({"k": [2, 3], "w": [10, 20]})


def _graph(join_op, extra_reader: bool = False, join_outputs=("m",)):
    subtasks = [_st(Source(LEFT), [], ["a"]), _st(Source(RIGHT), [], ["b"]), _st(Project(), ["a"], ["p"]),
                _st(join_op, ["p", "b"], join_outputs)]
    if extra_reader:
        subtasks.append(_st(Project(), ["p"], ["q"]))
    return subtasks


_run = run_subtasks


def test_a_projection_read_once_is_made_in_the_merges_subtask():
    subtasks = _graph(Join())
    fused = fuse(subtasks, keep={"m"})
    assert [type(st.op).__name__ for st in fused] == ["Source", "Source", "FusedOp"]
    group = fused[2]
    assert [type(s.op).__name__ for s in group.op.steps] == ["Project", "Join"]
    # the group reads what the projection read, and the merge's other side
    assert group.input_keys == ["a", "b"] and group.output_keys == ["m"]
    pdt.assert_frame_equal(_run(fused)["m"], LEFT[["k", "x"]].merge(RIGHT, on="k"))


@pytest.mark.parametrize("case", ["two readers", "kept", "no flag", "two outputs"])
def test_the_projection_stays_its_own_subtask_where_fusing_is_unsafe(case):
    join_op = {"no flag": PlainJoin(), "two outputs": TwoOutJoin()}.get(case, Join())
    outputs = ("m", "n") if case == "two outputs" else ("m",)
    subtasks = _graph(join_op, extra_reader=case == "two readers", join_outputs=outputs)
    keep = {"m", "p"} if case == "kept" else set(outputs) | {"q"}
    fused = fuse(subtasks, keep)
    assert not any(isinstance(st.op, FusedOp) and type(st.op.steps[-1].op).__name__.endswith("Join") for st in fused)
    assert any(st.output_keys == ["p"] for st in fused)


class RepeatableProject(Project):
    repeatable = True


def test_a_repeatable_projection_of_outside_data_runs_in_each_reader():
    subtasks = [_st(RepeatableProject(), ["a"], ["p"]), _st(Join(), ["p", "b"], ["m"]),
                _st(Join(), ["p", "c"], ["n"]), _st(Join(), ["m", "n"], ["o"])]
    fused = fuse(subtasks, keep={"o"})
    assert [repr(st.op) if isinstance(st.op, FusedOp) else type(st.op).__name__ for st in fused] == \
        ["FusedOp(RepeatableProject -> Join)"] * 2 + ["Join"]
    assert [st.input_keys for st in fused[:2]] == [["a", "b"], ["a", "c"]]
    assert not any(st.output_keys == ["p"] for st in fused)
    env = _run([_st(Source(LEFT), [], ["a"]), _st(Source(RIGHT), [], ["b"]), _st(Source(RIGHT), [], ["c"]),
                *fused])
    expected = LEFT[["k", "x"]].merge(RIGHT, on="k")
    pdt.assert_frame_equal(env["o"], expected.merge(expected, on="k"))


@pytest.mark.parametrize("case", ["not repeatable", "input made here", "kept", "a reader not taking it in"])
def test_a_projection_read_twice_stays_its_own_subtask(case):
    project = Project() if case == "not repeatable" else RepeatableProject()
    reader = PlainJoin() if case == "a reader not taking it in" else Join()
    subtasks = [_st(project, ["a"], ["p"]), _st(Join(), ["p", "b"], ["m"]), _st(reader, ["p", "c"], ["n"])]
    if case == "input made here":
        subtasks.insert(0, _st(Source(LEFT), [], ["a"]))
    keep = {"m", "n", "p"} if case == "kept" else {"m", "n"}
    assert any(st.output_keys == ["p"] for st in fuse(subtasks, keep))


def test_a_flagged_consumer_is_merged_into_its_reader_only_when_that_reads_nothing_else():
    # the reader of the merge reads the other side too: it waits for more than the merge, which stays apart
    subtasks = _graph(Join()) + [_st(Join(), ["m", "b"], ["z"])]
    fused = fuse(subtasks, keep={"z"})
    assert [type(st.op).__name__ for st in fused] == ["Source", "Source", "FusedOp", "Join"]
    assert fused[2].output_keys == ["m"]
    # a fusible step reading the merge alone runs after it, in its subtask (see test_fusion_trailing.py)
    fused = fuse(_graph(Join()) + [_st(Project(), ["m"], ["z"])], keep={"z"})
    assert [repr(st.op) if isinstance(st.op, FusedOp) else type(st.op).__name__ for st in fused] == \
        ["Source", "Source", "FusedOp(Project -> Join -> Project)"]


def test_shuffle_pieces_are_never_fused_into_their_reducer():
    subtasks = [_st(Source(LEFT), [], ["a"]), _st(Split(), ["a"], ["s0", "s1"]), _st(Gather(), ["s0"], ["g0"]),
                _st(Gather(), ["s1"], ["g1"])]
    fused = fuse(subtasks, keep={"g0", "g1"})
    assert not any(isinstance(st.op, FusedOp) for st in fused)


def test_merge_chunk_takes_in_its_inputs_and_is_not_fusible_itself():
    assert MergeChunk.fuses_inputs and not getattr(MergeChunk, "fusible", False)


# ----------------------------------------------------------------- results equal pandas
def _frames(n: int):
    rng = np.random.default_rng(n)
    left = pd.DataFrame({"k": rng.choice(list("abcdefgh"), n), "x": rng.random(n), "y": np.arange(n),
                         "z": rng.random(n)})
    right = pd.DataFrame({"k": list("abcdef"), "w": np.arange(6) * 1.5, "v": list("uvwxyz")})
    return left, right


@pytest.fixture
def recorded(fused_names):
    """A fresh session, and the subtasks each of its runs executed (names of ops or fused groups)."""
    return fused_names


@pytest.mark.parametrize("chunk_size", [30, 11, (1, 25, 4, 0), (0, 3, 0, 27)])
def test_a_merge_of_a_projected_frame_equals_pandas(recorded, chunk_size):
    left, right = _frames(30)
    got = md.DataFrame(left, chunk_size=chunk_size)[["k", "x"]].merge(md.DataFrame(right, chunk_size=4), on="k")
    pdt.assert_frame_equal(got.execute().fetch(), left[["k", "x"]].merge(right, on="k"))
    assert any("SelectColumns -> MergeChunk" in name for name in recorded), recorded


@pytest.mark.parametrize("chunk_size", [12, 5, 1, (1, 9, 2, 0)])
def test_a_merge_of_a_filtered_frame_equals_pandas(recorded, chunk_size):
    left, right = _frames(12)
    lazy = md.DataFrame(left, chunk_size=chunk_size)
    got = lazy[lazy["x"] > 0.4].merge(md.DataFrame(right, chunk_size=2), on="k", how="left")
    pdt.assert_frame_equal(got.execute().fetch(), left[left["x"] > 0.4].merge(right, on="k", how="left"))
    # (the filtered partitions' row counts are unknown: a stage makes them before the merge is planned, so they
    # are kept results and nothing fuses here; the merge still reads them right)


def test_a_merge_of_an_empty_selection_equals_pandas(recorded):
    left, right = _frames(20)
    lazy = md.DataFrame(left, chunk_size=6)
    got = lazy[lazy["x"] > 2][["k", "y"]].merge(md.DataFrame(right, chunk_size=3), on="k")
    pdt.assert_frame_equal(got.execute().fetch(), left[left["x"] > 2][["k", "y"]].merge(right, on="k"))
