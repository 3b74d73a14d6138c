"""On an in-process cluster: a merge of a projected frame runs the projection in the merge's subtask, and a
gather of partitions (``ConcatChunks``) runs in the subtask of the merge or grouped call reading it, and the rows
a partition shares with the one before (``KeyRows``) are cut apart, next to it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

import mars.dataframe as md
import mars.dataframe.groupby.agg as agg_module
from mars.core.fusion import FusedOp
from mars.services.task import processor


@pytest.fixture
def groups(monkeypatch) -> list[str]:
    """The fused groups of the subtasks the supervisor runs, as ``FusedOp(A -> B)``."""
    seen: list[str] = []
    real = processor.fuse

    def recording(subtasks, keep, **kwargs):
        out = real(subtasks, keep, **kwargs)
        seen.extend(repr(st.op) for st in out if isinstance(st.op, FusedOp))
        return out

    monkeypatch.setattr(processor, "fuse", recording)
    return seen


def test_a_projection_fused_into_its_merge_equals_pandas(session, groups):
    rng = np.random.default_rng(3)
    left = pd.DataFrame({"k": rng.choice(list("abcdefg"), 90), "x": rng.random(90), "y": np.arange(90)})
    right = pd.DataFrame({"k": list("abcde"), "w": np.arange(5) * 0.5})
    lazy = md.DataFrame(left, chunk_size=(1, 40, 0, 49))[["k", "x"]].merge(md.DataFrame(right, chunk_size=2), on="k")
    pdt.assert_frame_equal(session.run(lazy), left[["k", "x"]].merge(right, on="k"))
    assert "FusedOp(SelectColumns -> MergeChunk)" in groups, groups


@pytest.mark.parametrize("chunk_size", [30, (1, 40, 0, 49), 1])
def test_a_gather_runs_in_the_grouped_call_reading_it(session, groups, chunk_size):
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"k": rng.integers(0, 9, 90), "x": rng.random(90)})
    lazy = md.DataFrame(frame, chunk_size=chunk_size)
    got = session.run(lazy[lazy.x > 0.2].groupby("k").agg(total=("x", "sum")))
    pdt.assert_frame_equal(got, frame[frame.x > 0.2].groupby("k").agg(total=("x", "sum")))
    assert any(g.startswith("FusedOp(ConcatChunks -> GroupCall") for g in groups), groups


def test_the_rows_a_partition_shares_are_cut_apart_on_a_cluster(session, groups, monkeypatch):
    """The grouping of a frame stored in key order: the rows of a key two partitions share are cut next to
    the partition holding them (KeyRows, a subtask of its own), not by the grouping reading it whole."""
    monkeypatch.setattr(agg_module, "SINGLE_ROWS", -1)  # small frames would be grouped in one call
    frame = pd.DataFrame({"k": np.repeat(np.arange(30), 3), "x": np.arange(90.0)})
    got = session.run(md.DataFrame(frame, chunk_size=20).groupby("k").agg(s=("x", "sum")))
    pdt.assert_frame_equal(got, frame.groupby("k").agg(s=("x", "sum")))
    recut = [g for g in groups if "ShareBoundary" in g]
    assert recut and not any("KeyRows" in g for g in recut), groups
