"""A task's stage results (chunks computed while tiling) go once tiling is over, not when the task ends."""

from __future__ import annotations

import asyncio

import numpy as np
import pandas as pd

import mars.dataframe as md
from mars.services.meta.core import ChunkMeta
from mars.services.task.processor import SessionProcessor, TaskConfig, TaskRecord

from .test_concurrent_tasks import _assert_only_results_stay


def _processor(deleted: dict[str, list[str]]) -> SessionProcessor:
    proc = SessionProcessor("s", "127.0.0.1:1", None, TaskConfig())

    async def delete_on(worker: str, keys: list[str]) -> None:
        deleted.setdefault(worker, []).extend(keys)

    proc._delete_on = delete_on  # type: ignore[method-assign]
    return proc


async def test_stage_results_the_final_graph_does_not_read_go_when_it_starts():
    deleted: dict[str, list[str]] = {}
    proc = _processor(deleted)
    for key, worker in (("read", "w1"), ("unread", "w2"), ("target", "w1"), ("held", "w2")):
        proc.meta.put(ChunkMeta(key, worker, (10,), 80))
    proc.refs.incref(["held"])  # a result the client holds: a stage of this task computed it again
    task = TaskRecord("t", [])
    task.pinned = {"read", "unread", "target", "held"}
    proc.pins.pin(task.pinned)
    proc.pins.pin(["read"])  # the final run reads it

    proc._release_stage_results(task, keep={"target"})
    await asyncio.sleep(0.01)  # deletes go out one message per worker per loop turn
    assert deleted == {"w2": ["unread"]}
    assert "unread" not in proc.meta and "read" in proc.meta and "held" in proc.meta
    assert task.pinned == {"target"}  # kept to the task's end, as its result

    proc._free_soon(proc.pins.unpin(["read"]))  # the run's last reader of it reported
    await asyncio.sleep(0.01)
    assert deleted == {"w2": ["unread"], "w1": ["read"]}
    assert "target" in proc.meta


def test_the_final_graph_starts_with_only_what_it_reads_held(cluster, session, monkeypatch):
    """A filter (sizes known only once run) and a merge whose strategy is chosen from sizes: stages, then a
    final graph. When it starts, meta holds what it reads and the client's objects, not every stage's
    results; the answer is right and only the result stays afterwards."""
    from mars.services.task import graphrun

    seen: list[set[str]] = []
    start = graphrun.GraphRun.start

    async def watched(run):
        proc = run.proc
        seen.append(set(proc.meta._meta) - set(proc.refs._refs) - run.pinned - run.keep)
        await start(run)

    monkeypatch.setattr(graphrun.GraphRun, "start", watched)
    rng = np.random.default_rng(3)
    left = pd.DataFrame({"k": rng.integers(0, 40, 900), "v": rng.random(900)})
    right = pd.DataFrame({"k": np.arange(40), "w": rng.random(40)})
    a = md.DataFrame(left, chunk_size=200)
    b = md.DataFrame(right, chunk_size=15)
    session.execute(a, b)
    seen.clear()
    expr = a[a.v > 0.3].merge(b[b.w < 0.8], on="k").groupby("k").v.sum()
    got = session.fetch(session.execute(expr))
    want = left[left.v > 0.3].merge(right[right.w < 0.8], on="k").groupby("k").v.sum()
    pd.testing.assert_series_equal(got, want)
    assert len(seen) > 2 and any(seen[:-1])  # stages ran, and later ones started with earlier results held
    assert seen[-1] == set()
    _assert_only_results_stay(cluster, session)
