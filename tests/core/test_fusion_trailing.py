"""A subtask that is not fusible takes in a fusible step that reads only its output (``_trailing_steps``).

A grouped call followed by ``reset_index`` and a filter used to write the
call's result out for a second subtask to read back; the steps now run after
the call in its subtask. Only where that makes the group wait for nothing
more than the call did.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest
from fusion_testing import run_subtasks, subtask

import mars.dataframe as md
from mars.core.fusion import FusedOp, fuse


class Call:
    """Not fusible (a grouped call): it keeps a subtask of its own unless a step trails it."""

    def execute(self, df):
        return df.groupby("k").x.sum().reset_index()


class Step:
    fusible = True

    def execute(self, df, *others):
        return df[df.x > 1]


class Count:
    tap = True

    def execute(self, df):
        return len(df)


FRAME = pd.DataFrame({"k": [1, 2, 1, 3, 2], "x": [0.5, 1.5, 2.5, 0.5, 0.25]})


_st = subtask


def _names(subtasks):
    return [repr(st.op) if isinstance(st.op, FusedOp) else type(st.op).__name__ for st in subtasks]


_run = run_subtasks


def test_steps_reading_only_the_calls_output_run_in_its_subtask():
    subtasks = [_st(Call(), ["a"], ["c"]), _st(Step(), ["c"], ["s"]), _st(Step(), ["s"], ["t"])]
    fused = fuse(subtasks, keep={"t"})
    assert _names(fused) == ["FusedOp(Call -> Step -> Step)"]
    assert fused[0].input_keys == ["a"] and fused[0].output_keys == ["t"]
    pdt.assert_frame_equal(_run(fused, {"a": FRAME})["t"], _run(subtasks, {"a": FRAME})["t"])


def test_a_step_also_reading_what_the_graph_has_not_made_still_trails():
    """An input computed before (a held table) is there already: the group waits for nothing more."""
    subtasks = [_st(Call(), ["a"], ["c"]), _st(Step(), ["c", "held"], ["s"])]
    assert _names(fuse(subtasks, keep={"s"})) == ["FusedOp(Call -> Step)"]


@pytest.mark.parametrize("case", ["kept", "two readers", "reads another output", "a later step does",
                                  "counted"])
def test_the_call_stays_apart_where_the_group_would_wait_or_its_output_is_needed(case):
    subtasks = [_st(Call(), ["a"], ["c"]), _st(Call(), ["b"], ["d"])]
    if case == "reads another output":  # a renumbering that waits on another partition's count, say
        subtasks.append(_st(Step(), ["c", "d"], ["s"]))
    elif case == "a later step does":
        subtasks += [_st(Step(), ["c"], ["s"]), _st(Step(), ["s", "d"], ["t"])]
    else:
        subtasks.append(_st(Step(), ["c"], ["s"]))
    if case == "two readers":
        subtasks.append(_st(Step(), ["c"], ["u"]))
    if case == "counted":  # the count runs in the call's subtask; the output is written for the step
        subtasks.append(_st(Count(), ["c"], ["n"]))
    keep = {"t", "d"} if case == "a later step does" else {"s", "u", "n", "d"} | ({"c"} if case == "kept" else set())
    fused = fuse(subtasks, keep)
    assert any(st.output_keys[0] == "c" for st in fused), _names(fused)
    assert not any(isinstance(st.op, FusedOp) and type(st.op.steps[0].op) is Call and
                   any(type(s.op) is Step for s in st.op.steps) for st in fused), _names(fused)


@pytest.mark.parametrize("chunk_size", [40, 9, 1, (5, 0, 30, 5)])
def test_a_groupby_reset_and_filter_equal_pandas(fused_names, chunk_size):
    rng = np.random.default_rng(len(str(chunk_size)))
    pdf = pd.DataFrame({"k": np.sort(rng.integers(0, 12, 40)), "x": rng.random(40)})
    df = md.DataFrame(pdf, chunk_size=chunk_size)
    per = df.groupby("k").agg(total=("x", "sum")).reset_index()
    other = md.DataFrame({"k": np.arange(12), "w": np.arange(12) * 2.0}, chunk_size=5)
    got = per[per.total > 0.5].merge(other, on="k").sort_values("k").execute().fetch()
    per_p = pdf.groupby("k").agg(total=("x", "sum")).reset_index()
    expected = per_p[per_p.total > 0.5].merge(pd.DataFrame({"k": np.arange(12), "w": np.arange(12) * 2.0}),
                                              on="k").sort_values("k")
    pdt.assert_frame_equal(got, expected)
