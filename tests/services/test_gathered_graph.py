"""A graph whose computed inputs are few bytes on one worker goes whole to a slot there, in one message:
level by level it costs a round trip through the supervisor per level (issue 19: the last steps of a
join's or a groupby's few partitions)."""

from __future__ import annotations

import asyncio
import math
from types import SimpleNamespace

import numpy as np
import pandas as pd

import mars.dataframe as md
from mars.core.graph import Subtask
from mars.services.meta.core import ChunkMeta, MetaStore
from mars.services.task.graphrun import GraphRun
from mars.services.task.processor import SessionProcessor

MB = 1 << 20


def _gathered(meta: MetaStore, subtasks: list[Subtask]) -> bool:
    proc = SimpleNamespace(meta=meta, pins=SimpleNamespace(pin=lambda keys: None),
                           task_graph=lambda task: SimpleNamespace(add_run=lambda base, subtasks: None))

    async def make() -> GraphRun:
        return GraphRun(proc, SimpleNamespace(task_id="t", order=0), subtasks, keep=set(), base=0)

    return asyncio.run(make())._is_gathered()


def _two_branches(left: str = "a", right: str = "b", shape: tuple = (math.nan,)) -> list[Subtask]:
    """Two subtasks reading held chunks, and a third reading both (not a path: two branches)."""
    return [Subtask("op", [left], ["x"], [shape]), Subtask("op", [right], ["y"], [shape]),
            Subtask("op", ["x", "y"], ["z"], [shape])]


def test_which_graphs_count_as_gathered():
    meta = MetaStore()
    meta.put(ChunkMeta("a", "w1", (10,), 3 * MB // 2))
    meta.put(ChunkMeta("b", "w1", (10,), 3 * MB // 2))
    meta.put(ChunkMeta("far", "w2", (10,), 2 * MB))
    meta.put(ChunkMeta("big", "w1", (10,), 8 * MB))
    assert _gathered(meta, _two_branches())
    assert not _gathered(meta, _two_branches(right="far"))  # 1.5 MB to read from another worker, wherever it goes
    assert not _gathered(meta, _two_branches(right="big"))  # 9 MB of inputs: worth two slots
    assert not _gathered(meta, _two_branches(shape=(4000, 4000)))  # makes 48M elements
    source = [Subtask("op", [], ["x"], [(math.nan,)]), *_two_branches()[1:]]
    assert not _gathered(meta, source)  # a source may make much from nothing
    assert not _gathered(meta, _two_branches()[:1])  # one subtask: nothing to gather


def test_a_small_two_branch_graph_over_one_workers_chunks_goes_in_one_message(cluster, session, monkeypatch):
    sent: list[list[int]] = []
    send_specs = SessionProcessor.send_specs

    async def spy(self, address, specs):
        sent.append([s.chained for s in specs])
        await send_specs(self, address, specs)

    monkeypatch.setattr(SessionProcessor, "send_specs", spy)
    checked = 0
    rng = np.random.default_rng(5)
    pdf = pd.DataFrame({"k": rng.integers(0, 20, 5000), "x": rng.random(5000), "y": rng.random(5000)})
    for chunk_size in (5000, 2000, 1):
        if chunk_size == 1:
            pdf = pdf.head(3)
        a = md.DataFrame(pdf, chunk_size=chunk_size)
        session.execute(a)
        if len(_holders(cluster, session, a)) > 1:
            continue  # spread over both workers: left to the placer (the rule does not apply)
        sent.clear()
        expr = a.groupby("k").x.sum() / a.y.sum()
        got = session.fetch(session.execute(expr))
        pd.testing.assert_series_equal(got, pdf.groupby("k").x.sum() / pdf.y.sum())
        final = sent[-1]
        assert len(final) > 2 and all(final), sent  # the last graph: one message, every spec chained
        checked += 1
    assert checked >= 2  # the single chunk and the 3 rows at least sit on one worker


def _holders(cluster, session, t) -> set[str]:
    """The workers holding the chunks of executed ``t``."""
    from mars import oscar as mo
    from mars.services.session.api import task_manager_uid

    async def locate():
        ref = mo.ActorRef(cluster.supervisor.address, task_manager_uid(session.session_id))
        return await ref.locate([c.key for c in t.data.chunks])

    return {worker for worker, _ in cluster.run(locate())}
