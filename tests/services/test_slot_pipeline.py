"""A worker sends a slot its next batch while the slot runs one (the round trip is off the slot's path).

The execution actor against fake slots in one process: how many batches a
slot holds at once, what a slot that fails does to the batch waiting behind
the one it ran, and the real slot runner starting a batch sent early as soon
as the one before it ends.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

import mars.oscar as mo
from mars.core.graph import Subtask
from mars.core.operator import Operator
from mars.services.execution.api import SlotOutcome, SubtaskSpec
from mars.services.execution.slot import SlotRunnerActor
from mars.services.execution.worker import ExecutionActor
from mars.services.storage.cache import ChunkCache
from mars.services.storage.core import ChunkStore


class Nap(Operator):
    """Sleeps ``seconds`` (off the GIL), then returns when it started and ended."""

    def __init__(self, seconds: float = 0.0) -> None:
        super().__init__()
        self.seconds = seconds

    def execute(self) -> Any:
        start = time.perf_counter()
        time.sleep(self.seconds)
        return start, time.perf_counter()


def spec(i: int, op: Any = None, task: str = "t") -> SubtaskSpec:
    return SubtaskSpec("s", task, i, Subtask(op if op is not None else Nap(), [], [f"out{i}"]), (0, i))


class GatedSlot(mo.Actor):
    """Batches end when the test opens the gate; a call may fail with what the test sets."""

    def __init__(self) -> None:
        self.calls: list[list[int]] = []
        self.gates: list[asyncio.Event] = []
        self.fail_with: BaseException | None = None
        self.duration = 0.0  # what each subtask reports it took

    @mo.no_lock
    async def run(self, specs: list[SubtaskSpec], ahead: Any = None) -> list[SlotOutcome]:
        self.calls.append([s.index for s in specs])
        gate = asyncio.Event()
        self.gates.append(gate)
        await gate.wait()
        if self.fail_with is not None:
            raise self.fail_with
        return [SlotOutcome(s.index, s.task_id, duration=self.duration) for s in specs]

    @mo.no_lock
    def take(self, seconds: float) -> None:
        self.duration = seconds

    @mo.no_lock
    def open(self, n: int, fail: BaseException | None = None) -> None:
        """End the ``n``-th call (and all still open before it when failing: the process is gone)."""
        self.fail_with = fail
        for gate in self.gates[: n + 1] if fail is not None else [self.gates[n]]:
            gate.set()

    @mo.no_lock
    def seen(self) -> list[list[int]]:
        return self.calls

    @mo.no_lock
    def ping(self) -> int:
        self.fail_with = None
        return 0

    @mo.no_lock
    def cancel(self, session_id: str, task_id: str) -> None:
        pass


class Reports(mo.Actor):
    def __init__(self) -> None:
        self.got: list[tuple[int, bool]] = []

    def subtasks_done(self, reports: list) -> None:
        self.got.extend((r.index, r.ok) for r in reports)

    def get(self) -> list[tuple[int, bool]]:
        return sorted(self.got)


async def _until(fn: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not await fn():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


@pytest.fixture
def short_subtasks(monkeypatch):
    """Subtasks count as short whatever their cost (unknown until the first batch ends)."""
    monkeypatch.setattr("mars.services.execution.worker._BEHIND_BELOW", float("inf"))


@pytest.fixture
async def gated():
    pool = await mo.create_actor_pool("127.0.0.1", n_process=0)
    slot = await mo.create_actor(GatedSlot, uid="slot/0", address=pool.address)
    reports = await mo.create_actor(Reports, address=pool.address)
    execution = await mo.create_actor(ExecutionActor, [slot], ChunkCache(ChunkStore()), "w", None,
                                      address=pool.address)
    try:
        yield slot, reports, execution
    finally:
        await pool.stop()


async def test_a_slot_holds_the_batch_it_runs_and_the_next_one_no_more(gated, short_subtasks):
    slot, reports, execution = gated
    await execution.submit([spec(i) for i in range(4)], reports)

    async def calls(n: int) -> bool:
        return len(await slot.seen()) == n

    await _until(lambda: calls(2))
    await asyncio.sleep(0.05)
    assert await slot.seen() == [[0], [1]]  # the second was sent while the first runs; the third waits
    stats = await execution.stats()
    assert stats["n_running"] == 2 and stats["n_queued"] == 2 and stats["n_free_slots"] == 0
    for n in range(4):
        await slot.open(n)
        await _until(lambda n=n: calls(min(n + 3, 4)))  # one ended: the next queued one goes behind the other

    async def reported() -> bool:
        return await reports.get() == [(i, True) for i in range(4)]

    await _until(reported)
    assert await slot.seen() == [[0], [1], [2], [3]]
    assert (await execution.stats())["n_free_slots"] == 1


async def test_long_or_unknown_subtasks_wait_in_the_queue_not_behind_a_running_batch(gated):
    # a batch sent behind a long one would wait for it even if another slot became idle first
    slot, reports, execution = gated
    await slot.take(0.2)
    await execution.submit([spec(i) for i in range(3)], reports)

    async def calls(n: int) -> bool:
        return len(await slot.seen()) == n

    await _until(lambda: calls(1))
    await asyncio.sleep(0.05)
    assert await slot.seen() == [[0]]  # no cost known yet: the others stay queued
    await slot.open(0)
    await _until(lambda: calls(2))
    await asyncio.sleep(0.05)
    assert await slot.seen() == [[0], [1]]  # the first took 0.2 s: still one batch at a time
    await slot.open(1)
    await _until(lambda: calls(3))
    await slot.open(2)

    async def reported() -> bool:
        return await reports.get() == [(i, True) for i in range(3)]

    await _until(reported)


async def test_the_batch_sent_behind_one_whose_slot_died_runs_again_rather_than_failing(gated, short_subtasks):
    slot, reports, execution = gated
    await execution.submit([spec(i) for i in range(2)], reports)

    async def calls(n: int) -> bool:
        return len(await slot.seen()) >= n

    await _until(lambda: calls(2))
    await slot.open(1, mo.ServerClosed("the slot's process ended"))  # both calls fail: the process is gone

    async def reported() -> bool:
        return len(await reports.get()) == 1

    await _until(reported)
    # the batch it ran fails; the one behind never started: sent again once the slot answers, it runs
    assert await reports.get() == [(0, False)]
    await _until(lambda: calls(3))
    assert (await slot.seen())[2] == [1]
    await slot.open(2)

    async def both() -> bool:
        return await reports.get() == [(0, False), (1, True)]

    await _until(both)


async def test_the_slot_starts_a_batch_sent_early_as_soon_as_the_one_before_ends():
    pool = await mo.create_actor_pool("127.0.0.1", n_process=0)
    try:
        slot = await mo.create_actor(SlotRunnerActor, "mars-pipe-test", False, uid="slot/0", address=pool.address)
        first = asyncio.ensure_future(slot.run([spec(0, Nap(0.2))]))
        await asyncio.sleep(0.05)
        second = asyncio.ensure_future(slot.run([spec(1, Nap(0.0))]))
        (a,), (b,) = await asyncio.gather(first, second)
        # the second ran after the first (one thread), and its run was not held behind the first's answer
        assert a.error is None and b.error is None
        assert b.started >= a.started + 0.2
        assert b.started - (a.started + a.duration) < 0.05
    finally:
        await pool.stop()
