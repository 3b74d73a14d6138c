"""On a cluster (``fuse(..., in_process=False)``), a gather (partitions concatenated) runs in the subtask of its one
reader when that reader takes in its producers (a merge, a grouped call): the whole is never written out and
read back. It takes in none of its own producers, which still run side by side; an embedded session keeps it
apart."""

from __future__ import annotations

import pandas as pd
import pandas.testing as pdt
import pytest
from fusion_testing import Source, run_subtasks, subtask

from mars.core.fusion import FusedOp, fuse
from mars.dataframe.rows import ConcatChunks


class Filter:
    """A fusible step on one partition."""

    fusible = True

    def execute(self, df):
        return df[df.v > 1]


class Gather:
    gather = True

    def execute(self, *parts):
        return pd.concat(parts, ignore_index=True)


class Join:
    fuses_inputs = True

    def execute(self, left, right):
        return left.merge(right, on="k")


class Total:
    """A reader that takes in nothing (not fusible, no fuses_inputs)."""

    def execute(self, df):
        return df.v.sum()


PARTS = [pd.DataFrame({"k": [i, i + 1, 7], "v": [0.5, 2.0 + i, 3.0]}) for i in range(3)]
RIGHT = pd.DataFrame({"k": [1, 2, 7], "w": ["a", "b", "c"]})
HELD = {**{f"h{i}": p for i, p in enumerate(PARTS)}, "right": RIGHT}


def _graph(reader=Join) -> list:
    filters = [subtask(Filter(), [f"h{i}"], [f"f{i}"]) for i in range(3)]
    gather = subtask(Gather(), ["f0", "f1", "f2"], ["g"])
    last = subtask(reader(), ["g", "right"] if reader is Join else ["g"], ["out"])
    return [*filters, gather, last]


def _groups(fused: list) -> list[list[str]]:
    return [[type(s.op).__name__ for s in st.op.steps] if isinstance(st.op, FusedOp)
            else [type(st.op).__name__] for st in fused]


def test_a_gather_runs_in_its_reader_and_its_partitions_apart():
    graph = _graph()
    fused = fuse(graph, {"out"}, in_process=False)
    assert _groups(fused) == [["Filter"]] * 3 + [["Gather", "Join"]]
    expected = run_subtasks(graph, HELD)["out"]
    pdt.assert_frame_equal(run_subtasks(fused, HELD)["out"], expected)
    assert expected.k.tolist() == [1, 7, 2, 7, 7]


@pytest.mark.parametrize("in_process, reader", [(True, Join), (False, Total)])
def test_a_gather_stays_apart_embedded_or_before_a_reader_that_takes_in_nothing(in_process, reader):
    graph = _graph(reader)
    fused = fuse(graph, {"out"}, in_process=in_process)
    assert _groups(fused) == [["Filter"]] * 3 + [["Gather"], [reader.__name__]]
    got, expected = run_subtasks(fused, HELD)["out"], run_subtasks(graph, HELD)["out"]
    assert got.equals(expected) if reader is Join else got == expected == 18.0


def test_a_gather_read_by_several_or_kept_stays_apart():
    graph = _graph()
    graph.append(subtask(Total(), ["g"], ["sum"]))
    assert ["Gather"] in _groups(fuse(graph, {"out", "sum"}, in_process=False))
    assert ["Gather"] in _groups(fuse(_graph(), {"out", "g"}, in_process=False))


def test_concat_chunks_is_a_gather():
    assert ConcatChunks.gather and not getattr(ConcatChunks, "fusible", False)


def test_sources_are_still_made_apart():
    """A gather of sources (uploaded partitions made by their subtasks) takes none of them in."""
    graph = [subtask(Source(p), [], [f"h{i}"]) for i, p in enumerate(PARTS)]
    graph += [subtask(Gather(), ["h0", "h1", "h2"], ["g"]), subtask(Join(), ["g", "right"], ["out"])]
    fused = fuse(graph, {"out"}, in_process=False)
    assert _groups(fused) == [["Source"]] * 3 + [["Gather", "Join"]]
    pdt.assert_frame_equal(run_subtasks(fused, {"right": RIGHT})["out"],
                           pd.concat(PARTS, ignore_index=True).merge(RIGHT, on="k"))
