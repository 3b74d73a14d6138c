"""Placement by finish time: a wait for a slot weighed against moving the inputs (no cluster)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from mars.core.graph import Subtask
from mars.services.meta.core import ChunkMeta, MetaStore
from mars.services.scheduling.placement import (
    TRANSFER_BYTES_PER_SECOND,
    Placer,
    WorkerLoad,
)
from mars.services.task.graphrun import GraphRun

MB = 1 << 20


def test_equal_waits_keep_a_subtask_where_its_bytes_are():
    p = Placer([WorkerLoad("w1", 1), WorkerLoad("w2", 1)])
    assert p.place({"w1": 80 * MB, "w2": 78 * MB}) == "w1"
    assert p.place({"w2": 10 * MB}) == "w2"


def test_a_busy_holder_of_a_big_input_hands_work_to_an_idle_worker_once_the_wait_is_longer():
    p = Placer([WorkerLoad("w1", 1), WorkerLoad("w2", 1)])
    p.seconds = 0.1  # subtasks took 0.1 s so far
    move = 80 * MB / TRANSFER_BYTES_PER_SECOND  # ~0.08 s
    placed = [p.place({"w1": 80 * MB}) for _ in range(6)]
    # w1 takes work until its queue is longer than the move, then w2 gets its share
    assert placed[0] == "w1" and "w2" in placed
    assert p.workers["w1"].in_flight * p.seconds <= p.workers["w2"].in_flight * p.seconds + move + p.seconds


def test_tiny_subtasks_never_move_big_inputs():
    p = Placer([WorkerLoad("w1", 1), WorkerLoad("w2", 1)])
    p.seconds = 0.0005
    assert {p.place({"w1": 50 * MB}) for _ in range(20)} == {"w1"}


def test_reported_times_make_the_running_average():
    p = Placer([WorkerLoad("w1", 1)])
    p.place({})
    for _ in range(40):
        p.done("w1", seconds=0.5)
    assert abs(p.seconds - 0.5) < 0.01
    p.done("w1", seconds=None)  # a failure's time says nothing about the work
    assert abs(p.seconds - 0.5) < 0.01


def _run(meta: MetaStore, subtasks: list[Subtask], placer: Placer) -> tuple[GraphRun, dict[str, list[int]]]:
    """A GraphRun over a stand-in session processor that records what it would send to whom."""
    sent: dict[str, list[int]] = {}

    async def send_specs(address, specs):
        sent.setdefault(address, []).extend(s.index for s in specs)

    async def get_placer(task):
        return placer

    view = SimpleNamespace(scheduled=lambda i, w: None)
    proc = SimpleNamespace(meta=meta, session_id="s", placer=get_placer, send_specs=send_specs,
                           pins=SimpleNamespace(pin=lambda keys: None),
                           task_graph=lambda task: SimpleNamespace(add_run=lambda base, subtasks: view))
    task = SimpleNamespace(task_id="t", order=0)

    async def go():
        run = GraphRun(proc, task, subtasks, keep=set(), base=0)
        await run.dispatch(list(range(len(subtasks))))
        return run

    return asyncio.run(go()), sent


def test_a_broadcast_side_moves_once_per_worker_and_the_chunks_it_meets_spread():
    # a merge of 12 chunks (spread over two workers) with one broadcast side held on w1 (bigger than a chunk)
    meta = MetaStore()
    meta.put(ChunkMeta("small", "w1", (1,), 80 * MB))
    for i in range(12):
        meta.put(ChunkMeta(f"c{i}", "w1" if i % 2 else "w2", (1,), 78 * MB))
    subtasks = [Subtask(op=None, input_keys=[f"c{i}", "small"], output_keys=[f"m{i}"]) for i in range(12)]
    placer = Placer([WorkerLoad("w1", 1), WorkerLoad("w2", 1)])
    placer.seconds = 0.2
    run, sent = _run(meta, subtasks, placer)
    assert len(sent.get("w2", [])) >= 5 and len(sent.get("w1", [])) >= 5  # both work
    assert run.copies["small"] == {"w2"}  # w2 reads the broadcast side: a copy will be kept there
    # once w2 is to have the broadcast side, each chunk runs where it is (only the first ones may cross over)
    crossed = [i for i in sent["w2"] if i % 2] + [i for i in sent["w1"] if i % 2 == 0]
    assert len(crossed) <= 2 and all(i < 2 for i in crossed)


def test_before_the_fix_everything_went_to_the_broadcast_holder():
    # the same graph with tiny subtasks: moving 80 MB is never worth it, and all goes to w1 as before
    meta = MetaStore()
    meta.put(ChunkMeta("small", "w1", (1,), 80 * MB))
    for i in range(6):
        meta.put(ChunkMeta(f"c{i}", "w1" if i % 2 else "w2", (1,), 78 * MB))
    subtasks = [Subtask(op=None, input_keys=[f"c{i}", "small"], output_keys=[f"m{i}"]) for i in range(6)]
    placer = Placer([WorkerLoad("w1", 1), WorkerLoad("w2", 1)])
    placer.seconds = 0.0001
    _, sent = _run(meta, subtasks, placer)
    assert sorted(sent) == ["w1"]
