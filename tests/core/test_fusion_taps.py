"""Taps: small reads of a chunk (a row count, a key range) run in the subtask that makes the chunk.

The rules are checked on graphs of plain ops, without running them; then
results of real expressions, whose renumbering counts rows, equal pandas'
with no subtask of their own for the counts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest
from fusion_testing import Source, run_subtasks, subtask

import mars.dataframe as md
from mars.core.fusion import FusedOp, fuse


class Double:
    fusible = True

    def execute(self, df):
        return df * 2


class Repeatable(Double):
    repeatable = True


class OnGpu(Double):
    gpu = True


class Heavy:
    """Not fusible (a groupby call, a merge): it keeps a subtask of its own."""

    def execute(self, df):
        return df + 1


class TakesIn(Heavy):
    """A merge-like op: not fusible, but it takes in the fusible ops that make its inputs."""

    fuses_inputs = True


class Count:
    tap = True

    def execute(self, df):
        return len(df)


class SumOfTwo:
    tap = True

    def execute(self, a, b):
        return int(a.sum() + b.sum())


class After:
    """A reader of the chunk and of the counts of the chunks before it (a renumbering, say)."""

    def execute(self, df, *counts):
        return df.set_axis(pd.RangeIndex(sum(counts), sum(counts) + len(df)))


_st, _run = subtask, run_subtasks


def _names(subtasks):
    return [repr(st.op) if isinstance(st.op, FusedOp) else type(st.op).__name__ for st in subtasks]


SERIES = pd.Series(np.arange(5.0))


def _renumbering(producer):
    """Two partitions made by ``producer``; each counted; the second numbered after the first's rows."""
    return [_st(Source(SERIES), [], ["a"]), _st(Source(SERIES.iloc[:3]), [], ["b"]),
            _st(producer, ["a"], ["p"]), _st(producer, ["b"], ["q"]),
            _st(Count(), ["p"], ["np"]), _st(Count(), ["q"], ["nq"]),
            _st(After(), ["p"], ["p2"]), _st(After(), ["q", "np"], ["q2"])]


@pytest.mark.parametrize("producer", [Heavy(), Double()])
def test_a_count_runs_in_the_subtask_that_makes_what_it_counts(producer):
    subtasks = _renumbering(producer)
    fused = fuse(subtasks, keep={"p2", "q2", "nq"})
    if isinstance(producer, Heavy):
        assert _names(fused) == ["Source", "Source", "FusedOp(Heavy -> Count)", "FusedOp(Heavy -> Count)",
                                 "After", "After"]
    else:  # a fusible step reading a source alone runs in the source's subtask (see test_fusion_trailing.py)
        assert _names(fused) == ["FusedOp(Source -> Double -> Count)"] * 2 + ["After", "After"]
    made = [st for st in fused if "np" in st.output_keys or "nq" in st.output_keys]
    assert [st.output_keys for st in made] == [["p", "np"], ["q", "nq"]]
    assert [len(st.output_shapes) for st in made] == [2, 2]
    env, expected = _run(fused), _run(subtasks)
    assert env["np"] == expected["np"] == 5 and env["nq"] == 3
    pdt.assert_series_equal(env["q2"], expected["q2"])
    assert list(env["q2"].index) == [5, 6, 7]


def test_the_producers_own_producers_still_fuse_into_it():
    subtasks = [_st(Source(SERIES), [], ["a"]), _st(Double(), ["a"], ["d"]), _st(TakesIn(), ["d"], ["p"]),
                _st(Count(), ["p"], ["n"]), _st(After(), ["p"], ["out"])]
    fused = fuse(subtasks, keep={"out", "n"})
    assert _names(fused) == ["Source", "FusedOp(Double -> TakesIn -> Count)", "After"]
    assert fused[1].input_keys == ["a"] and fused[1].output_keys == ["p", "n"]
    assert _run(fused)["n"] == 5


def test_a_kept_chunk_read_by_a_tap_alone_is_tapped():
    """A stage computes partitions and their key ranges: the partitions are kept for the next graph."""
    subtasks = [_st(Source(SERIES), [], ["a"]), _st(Heavy(), ["a"], ["p"]), _st(Count(), ["p"], ["n"])]
    fused = fuse(subtasks, keep={"p", "n"})
    assert _names(fused) == ["Source", "FusedOp(Heavy -> Count)"]
    assert fused[1].output_keys == ["p", "n"]


@pytest.mark.parametrize("case", ["read by the tap alone", "repeatable", "on a GPU", "two inputs"])
def test_no_tap_where_it_would_not_save_a_write(case):
    producer = {"repeatable": Repeatable(), "on a GPU": OnGpu()}.get(case, Double())
    subtasks = [_st(Source(SERIES), [], ["a"]), _st(producer, ["a"], ["p"])]
    if case == "two inputs":
        subtasks += [_st(SumOfTwo(), ["p", "a"], ["n"]), _st(After(), ["p"], ["out"])]
    else:
        subtasks += [_st(Count(), ["p"], ["n"])]
        if case != "read by the tap alone":
            subtasks.append(_st(After(), ["p"], ["out"]))
    fused = fuse(subtasks, keep={"n", "out"})
    assert not any(isinstance(st.op, FusedOp) and st.op.steps[-1].output_keys == ["n"] and len(st.output_keys) > 1
                   for st in fused), _names(fused)
    if case == "read by the tap alone":  # as without taps (the source's one reader runs in its subtask)
        assert _names(fused) == ["FusedOp(Source -> Double)", "Count"]


# ----------------------------------------------------------------- results equal pandas
@pytest.mark.parametrize("chunk_size", [11, 4, 1, (3, 0, 5, 3)])
def test_renumbered_results_equal_pandas_with_the_counts_tapped(fused_names, chunk_size):
    rng = np.random.default_rng(len(str(chunk_size)))
    pdf = pd.DataFrame({"k": rng.integers(0, 4, 11), "v": rng.random(11)}, index=np.arange(11) * 7)
    df = md.DataFrame(pdf, chunk_size=chunk_size)
    got = df[df.v > 0.3].reset_index().execute().fetch()
    pdt.assert_frame_equal(got, pdf[pdf.v > 0.3].reset_index())
    if chunk_size != 11:  # several partitions: every count is taken where its partition is filtered
        assert "CountRows" not in fused_names, fused_names
        assert any(name.endswith("-> CountRows") for name in fused_names), fused_names
