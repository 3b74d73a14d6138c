"""The tiler runs the stages of independent ops together (one round of execution for all of them)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mars
import mars.dataframe as md
from mars.core import tiling
from mars.core.entity import ChunkData
from mars.core.operator import Fetch
from mars.core.tiling import TilingError, wanted
from mars.session import Session


@pytest.fixture
def stages(monkeypatch):
    """The stages a session runs while tiling: (values wanted, op names of the chunks)."""
    seen: list[tuple[bool, list[str]]] = []
    run_stage = Session._run_stage

    def recording(self, chunks, want, keys, cancel):
        seen.append((want, sorted(type(c.op).__name__ for c in chunks)))
        return run_stage(self, chunks, want, keys, cancel)

    monkeypatch.setattr(Session, "_run_stage", recording)
    return seen


def frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(0)
    a = pd.DataFrame({"x": rng.permutation(40), "y": rng.random(40)})
    b = pd.DataFrame({"x": rng.permutation(30) + 100, "z": rng.random(30)})
    return a, b


@pytest.mark.parametrize("chunks", [(7, 9), (40, 30), (1, 4)])
def test_two_independent_sorts_share_their_stages(stages, chunks):
    pa, pb = frames()
    with mars.new_session(default=False) as sess:
        a = md.DataFrame(pa, chunk_size=chunks[0])
        sess.execute(a[a.y > 0.3].sort_values("x"))
        alone = len(stages)
        stages.clear()
        a, b = md.DataFrame(pa, chunk_size=chunks[0]), md.DataFrame(pb, chunk_size=chunks[1])
        both = md.concat([a[a.y > 0.3].sort_values("x"), b[b.z > 0.3].sort_values("x", ascending=False)])
        got = sess.run(both)
    expected = pd.concat([pa[pa.y > 0.3].sort_values("x"), pb[pb.z > 0.3].sort_values("x", ascending=False)])
    pd.testing.assert_frame_equal(got, expected)
    assert len(stages) == alone  # one at a time, the second sort would add as many stages again


def test_merges_of_filtered_tables_give_pandas_result_with_fewer_stages(stages):
    pa, pb = frames()
    pb = pb.assign(x=pb.x - 100)
    pc = pd.DataFrame({"x": np.arange(40), "w": np.arange(40) * 2.0})
    with mars.new_session(default=False) as sess:
        a, b, c = (md.DataFrame(p, chunk_size=s) for p, s in ((pa, 9), (pb, 8), (pc, 11)))
        left = a[a.y > 0.2].merge(c[c.w > 10], on="x")
        right = b[b.z > 0.2].merge(c[c.w < 60], on="x")
        got = sess.run(left.merge(right, on="x"))
    left_p = pa[pa.y > 0.2].merge(pc[pc.w > 10], on="x")
    right_p = pb[pb.z > 0.2].merge(pc[pc.w < 60], on="x")
    expected = left_p.merge(right_p, on="x")
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected.reset_index(drop=True))
    # the four filters' sizes are learnt in one stage (one at a time: a stage per merge), then the final merge's
    assert [ops.count("MapPartitions") for _, ops in stages] == [4 + 4 + 4 + 5, 0]


class _Chunk(ChunkData):
    def __init__(self, key: str):  # a stand-in: the tiler only reads keys and types
        self.key = key


def _together(run_chunks, requests):
    """The replies of ``requests`` sharing one stage, computed by ``run_chunks`` (as a Tiler drives it)."""
    stages = tiling._run_together(requests)
    try:
        stage = next(stages)
        while True:
            stage = stages.send(run_chunks(*stage))
    except StopIteration as done:
        return done.value


def test_values_of_a_shared_stage_go_to_the_request_that_asked_and_only_those_travel():
    calls = []

    def run_chunks(chunks, want):
        calls.append(([c.key for c in chunks], want if isinstance(want, bool) else [c.key for c in want]))
        return [c.key.upper() for c in wanted(chunks, want)] if want else None

    x, y, z = _Chunk("x"), _Chunk("y"), _Chunk("z")
    replies = _together(run_chunks, [[x], Fetch([z, y]), Fetch([y])])
    assert replies == [None, ["Z", "Y"], ["Y"]]
    # x is computed in the same stage, but its value is not fetched (on a cluster: not moved to the supervisor)
    assert calls == [(["x", "z", "y"], ["z", "y"])]
    calls.clear()
    assert _together(run_chunks, [[x], [y]]) == [None, None]
    assert calls == [(["x", "y"], False)]


def test_a_request_that_is_not_chunks_is_refused():
    with pytest.raises(TilingError, match="expected a list of chunks or a Fetch"):
        _together(lambda chunks, want: None, [[_Chunk("x")], ["not a chunk"]])
