"""A shuffle's data path on a worker: pieces read once per worker pair, and no copy of a piece kept.

The execution actor's book of what slots read ahead (plain data), the slot's
reads (its fetches counted, in-process), the execution actor's reservations,
and a hash shuffle on an in-process cluster of two workers.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import numpy as np
import pandas as pd
import pytest

import mars.oscar as mo
from mars.core.graph import Subtask
from mars.core.operator import Operator
from mars.core.shuffle import ShuffleReduce, piece_keys
from mars.services.execution import slot as slot_module
from mars.services.execution.ahead import ReadAhead
from mars.services.execution.api import (
    FetchAhead,
    RemoteInput,
    SlotOutcome,
    SubtaskSpec,
)
from mars.services.execution.slot import SlotRunnerActor, _copy_remote
from mars.services.execution.worker import ExecutionActor
from mars.services.storage.cache import ChunkCache
from mars.services.storage.core import ChunkStore


class Total(Operator):
    """Sums its inputs (numbers)."""

    def execute(self, *values: Any) -> Any:
        return sum(values)


class TotalReduce(ShuffleReduce):
    def combine(self, pieces: list) -> Any:
        return sum(pieces)


def spec(i: int, keys: list[str], worker: str = "w2", op: Any = None, task: str = "t", session: str = "s",
         nbytes: int = 100) -> SubtaskSpec:
    st = Subtask(op if op is not None else TotalReduce(), keys, [f"out{i}"])
    return SubtaskSpec(session, task, i, st, (0, i), {k: RemoteInput(worker, [], nbytes) for k in keys})


# ---------------------------------------------------------------------- the book (plain data)
def test_a_batch_reads_ahead_what_queued_subtasks_of_its_task_need_from_the_same_workers():
    book = ReadAhead()
    queued = [[spec(1, ["b1", "b2"])], [spec(2, ["c"], worker="w3")], [spec(3, ["d"], task="other")],
              [spec(4, ["e"]), spec(5, ["f"])], [spec(6, ["g"], nbytes=0)], [spec(7, ["h"])]]
    plan = book.plan(("slot", "0"), [spec(0, ["a"])], queued, budget=1000)
    # w3 is not read by the batch, another task's, a chained unit's and unsized inputs are not read ahead
    assert sorted(plan.ahead.fetch) == ["b1", "b2", "h"]
    assert sorted(plan.ahead.keep) == ["b1", "b2", "h"] and plan.taken == 300 and plan.freed == 0
    assert book.nbytes == 300


def test_the_read_ahead_stops_at_the_budget_and_skips_what_another_slot_holds():
    book = ReadAhead()
    queued = [[spec(i, [f"k{i}"])] for i in range(1, 6)]
    assert sorted(book.plan(("slot", "0"), [spec(0, ["a"])], queued, budget=250).ahead.fetch) == ["k1", "k2"]
    plan = book.plan(("slot", "1"), [spec(9, ["z"])], queued, budget=450)
    assert sorted(plan.ahead.fetch) == ["k3", "k4"]  # the budget counts what slot 0 holds too


def test_what_a_batch_reads_is_freed_and_other_slots_holding_it_forget_it():
    book = ReadAhead()
    book.plan(("slot", "0"), [spec(0, ["a"])], [[spec(1, ["b"])], [spec(2, ["c"])]], budget=1000)
    plan = book.plan(("slot", "1"), [spec(1, ["b"])], [[spec(2, ["c"])]], budget=1000)
    assert plan.drops == {("slot", "0"): [("s", "b")]} and plan.freed == 100
    assert plan.ahead is None  # slot 0 holds c: slot 1 reads nothing ahead, and holds nothing
    assert book.held_by(("slot", "0"), [spec(2, ["c"])]) == 1
    assert book.prune({("s", "x")}).drops == {("slot", "0"): [("s", "c")]} and book.nbytes == 0


def test_a_batch_of_another_session_makes_the_slot_drop_what_it_held_and_a_dead_slot_holds_nothing():
    book = ReadAhead()
    book.plan(("slot", "0"), [spec(0, ["a"])], [[spec(1, ["b"])]], budget=1000)
    plan = book.plan(("slot", "0"), [spec(0, ["x"], session="s2")], [], budget=1000)
    assert plan.freed == 100 and plan.ahead is None
    book.plan(("slot", "0"), [spec(0, ["a"])], [[spec(1, ["b"])]], budget=1000)
    assert book.forget_slot(("slot", "0")) == 100 and book.nbytes == 0


# ---------------------------------------------------------------------- pieces are not copied
def test_pieces_are_the_inputs_a_reducer_step_reads():
    class Fused:
        def __init__(self) -> None:
            self.steps = [Subtask(TotalReduce(), ["p1", "p2"], ["r"]), Subtask(Total(), ["r", "other"], ["o"])]

    assert piece_keys(Fused(), ["p1", "p2", "other"]) == {"p1", "p2"}
    assert piece_keys(Total(), ["p1"]) == frozenset()


def test_a_fetched_piece_is_not_copied_here_and_other_inputs_are():
    remote = {"p": np.arange(3), "q": np.arange(4)}
    assert _copy_remote(spec(0, ["p"]), remote, "mars-test-ahead", set()) == []
    copies = _copy_remote(spec(0, ["q"], op=Total()), remote, "mars-test-ahead", set())
    assert [d.key for d in copies] == ["q"]


# ---------------------------------------------------------------------- the slot's reads
@pytest.fixture
def fetches(monkeypatch):
    """Counts the slot's calls to other workers; chunk ``k`` of worker w holds ``int(k[1:])``."""
    calls: list[tuple[str, list[str]]] = []
    lost: set[str] = set()

    async def fake_fetch(session_id, keys, worker, transfer):
        calls.append((worker, list(keys)))
        await asyncio.sleep(0.01)
        if any(k in lost for k in keys):
            raise ConnectionError(f"worker {worker} is gone")
        return [int(k[1:]) for k in keys]

    monkeypatch.setattr(slot_module, "fetch_values", fake_fetch)
    return calls, lost


async def _slot():
    pool = await mo.create_actor_pool("127.0.0.1", n_process=0)
    slot = await mo.create_actor(SlotRunnerActor, "mars-test-ahead", False, uid="slot/0", address=pool.address)
    return pool, slot


async def _settle(slot) -> None:
    await slot.ping()
    await asyncio.sleep(0.05)  # the read-ahead call lands


async def test_the_queued_reducers_pieces_come_in_one_call_and_their_runs_call_no_one(fetches):
    calls, _ = fetches
    pool, slot = await _slot()
    try:
        ahead = FetchAhead("s", "t", {k: RemoteInput("w2", [], 8) for k in ["k3", "k4", "k5", "k6"]},
                          ["k3", "k4", "k5", "k6"])
        first = await slot.run([spec(0, ["k1", "k2"])], ahead)
        assert first[0].error is None
        await _settle(slot)
        assert calls == [("w2", ["k1", "k2"]), ("w2", ["k3", "k4", "k5", "k6"])]
        second = await slot.run([spec(1, ["k3", "k4"])], FetchAhead("s", "t", {}, ["k5", "k6"]))
        third = await slot.run([spec(2, ["k5", "k6"])], None)
        assert len(calls) == 2  # both read what was read ahead
        assert [o.error for o in second + third] == [None, None]
    finally:
        await pool.stop()


async def test_what_the_slot_holds_is_exactly_what_it_is_told_to_keep(fetches):
    calls, _ = fetches
    pool, slot = await _slot()
    try:
        await slot.run([spec(0, ["k1"])], FetchAhead("s", "t", {"k2": RemoteInput("w2", [], 8),
                                                                "k3": RemoteInput("w2", [], 8)}, ["k2", "k3"]))
        await _settle(slot)
        await slot.run([spec(1, ["k9"], op=Total())], FetchAhead("s", "t", {}, ["k3"]))  # k2 is dropped
        await slot.drop_ahead("s", ["k3"])
        await slot.run([spec(2, ["k2", "k3"])], None)
        assert calls[-1] == ("w2", ["k2", "k3"])  # neither was held any more: read again
    finally:
        await pool.stop()


async def test_a_cancelled_tasks_read_ahead_is_dropped(fetches):
    calls, _ = fetches
    pool, slot = await _slot()
    try:
        await slot.run([spec(0, ["k1"])], FetchAhead("s", "t", {"k2": RemoteInput("w2", [], 8)}, ["k2"]))
        await _settle(slot)
        await slot.cancel("s", "t")
        await slot.run([spec(1, ["k2"], task="t2")], None)
        assert calls[-1] == ("w2", ["k2"])
    finally:
        await pool.stop()


async def test_a_lost_read_ahead_is_not_held_and_its_subtask_reads_again_and_fails_as_lost(fetches):
    calls, lost = fetches
    pool, slot = await _slot()
    try:
        lost.add("k2")
        await slot.run([spec(0, ["k1"])], FetchAhead("s", "t", {"k2": RemoteInput("w2", [], 8)}, ["k2"]))
        await _settle(slot)
        out = await slot.run([spec(1, ["k2"])], None)
        assert calls[-1] == ("w2", ["k2"])
        assert isinstance(out[0].error, ConnectionError) and not out[0].traceback  # a lost input: no traceback
    finally:
        await pool.stop()


async def test_a_read_ahead_from_a_worker_the_subtask_no_longer_reads_from_is_not_waited_for(monkeypatch):
    # a run planned the read from w2, which died; the run after it reads the chunk from w3, where it was made again
    calls: list[tuple[str, list[str]]] = []

    async def fetch(session_id, keys, worker, transfer):
        calls.append((worker, list(keys)))
        if worker == "w2":
            await asyncio.sleep(0.5)
            raise ConnectionError("cannot connect to w2")
        return [int(k[1:]) for k in keys]

    monkeypatch.setattr(slot_module, "fetch_values", fetch)
    pool, slot = await _slot()
    try:
        await slot.run([spec(0, ["k1"], worker="w3")],
                       FetchAhead("s", "t", {"k2": RemoteInput("w2", [], 8)}, ["k2"]))
        started = time.monotonic()
        out = await slot.run([spec(1, ["k2"], worker="w3")], None)  # w2's call is still on its way
        assert out[0].error is None and calls[-1] == ("w3", ["k2"])
        assert time.monotonic() - started < 0.4  # it did not wait for the dead worker's answer
    finally:
        await pool.stop()


async def test_a_subtask_failing_on_a_lost_input_names_the_worker_it_could_not_read_from(fetches):
    _, lost = fetches
    pool, slot = await _slot()
    try:
        lost.add("k2")
        out = await slot.run([spec(0, ["k1"], worker="w2"), spec(1, ["k2"], worker="w4")], None)
        assert out[0].error is None and out[0].unreachable == ""
        assert isinstance(out[1].error, ConnectionError) and out[1].unreachable == "w4"
    finally:
        await pool.stop()


def test_the_supervisor_checks_the_worker_a_failed_read_named_beside_the_subtasks_sources():
    from mars.serialization import deserialize, serialize
    from mars.services.execution.api import SubtaskReport
    from mars.services.task.graphrun import GraphRun, SubtaskLost

    report = SubtaskReport("s", "t", 3, "w1", error=ConnectionError("refused"), unreachable="w9")
    report = deserialize(*serialize(report))  # it crosses from the worker to the supervisor
    run = GraphRun.__new__(GraphRun)  # _failure reads only these two
    run.base, run.sources = 0, {3: {"w2"}}
    failure = run._failure(3, report)
    assert isinstance(failure, SubtaskLost) and failure.suspects == {"w1", "w2", "w9"}


async def test_a_subtask_reading_a_piece_still_on_its_way_waits_for_that_call(fetches):
    calls, _ = fetches
    pool, slot = await _slot()
    try:
        await slot.run([spec(0, ["k1"])], FetchAhead("s", "t", {"k7": RemoteInput("w2", [], 8)}, ["k7"]))
        out = await slot.run([spec(1, ["k7"])], None)  # at once: the read-ahead call may not have landed
        assert out[0].error is None and len(calls) == 2
    finally:
        await pool.stop()


# ---------------------------------------------------------------------- the execution actor
class AheadSlot(mo.Actor):
    """Records what each batch was told to read ahead; batches end when the test says so."""

    def __init__(self) -> None:
        self.aheads: list[FetchAhead | None] = []
        self.gate = asyncio.Event()

    async def run(self, specs: list[SubtaskSpec], ahead: FetchAhead | None = None) -> list[SlotOutcome]:
        self.aheads.append(ahead)
        await self.gate.wait()
        self.gate.clear()
        return [SlotOutcome(s.index, s.task_id) for s in specs]

    @mo.no_lock
    def open(self) -> None:
        self.gate.set()

    @mo.no_lock
    def seen(self) -> list:
        return self.aheads

    @mo.no_lock
    def drop_ahead(self, session_id: str, keys: list[str]) -> None:
        pass

    @mo.no_lock
    def cancel(self, session_id: str, task_id: str) -> None:
        pass

    @mo.no_lock
    def ping(self) -> int:
        return 0


class Reports(mo.Actor):
    def __init__(self) -> None:
        self.indexes: list[int] = []

    def subtasks_done(self, reports: list) -> None:
        self.indexes.extend(r.index for r in reports)

    def get(self) -> list[int]:
        return sorted(self.indexes)


async def _eq(fn: Any, expected: Any) -> bool:
    return await fn() == expected


async def _until(fn: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not await fn():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


@pytest.mark.parametrize("cancel", [False, True], ids=["run", "cancelled"])
async def test_the_first_reducer_reads_ahead_for_the_rest_and_the_bytes_are_reserved_meanwhile(cancel, monkeypatch):
    monkeypatch.setattr("mars.services.execution.worker._BEHIND_BELOW", float("inf"))  # a batch sent behind one
    pool = await mo.create_actor_pool("127.0.0.1", n_process=0)
    try:
        slot = await mo.create_actor(AheadSlot, uid="slot/0", address=pool.address)
        reports = await mo.create_actor(Reports, address=pool.address)
        cache = ChunkCache(ChunkStore())
        execution = await mo.create_actor(ExecutionActor, [slot], cache, "w", None, address=pool.address)
        await execution.submit([spec(i, [f"k{i}a", f"k{i}b"], nbytes=1000) for i in range(3)], reports)

        async def seen(n: int) -> bool:
            return len(await slot.seen()) == n

        await _until(lambda: seen(1))
        first = (await slot.seen())[0]
        assert sorted(first.fetch) == ["k1a", "k1b", "k2a", "k2b"] and sorted(first.keep) == sorted(first.fetch)
        outputs = 2000  # what the running subtask's outputs are expected to take (sized as its inputs)
        assert cache.reserved == outputs + 4000
        if cancel:
            await execution.cancel("s", "t")
            # the read-ahead goes; the running batch and the one sent behind it keep their outputs' room
            assert cache.reserved == 2 * outputs
            await slot.open()
            await _until(lambda: seen(2))
            await slot.open()

            async def freed() -> bool:
                return cache.reserved == 0

            await _until(freed)
            return
        await slot.open()
        await _until(lambda: seen(2))
        assert sorted((await slot.seen())[1].keep) == ["k2a", "k2b"] and cache.reserved == outputs + 2000
        await slot.open()
        await _until(lambda: seen(3))
        assert (await slot.seen())[2] is None and cache.reserved == outputs
        await slot.open()
        await _until(lambda: _eq(reports.get, [0, 1, 2]))
        assert cache.reserved == 0
    finally:
        await pool.stop()


# ---------------------------------------------------------------------- a shuffle on two workers
def test_a_hash_shuffle_reads_each_workers_pieces_in_two_calls_at_most(session, monkeypatch):
    import mars.dataframe as md

    calls: list[tuple[str, int]] = []
    real = slot_module.fetch_values

    async def counting(session_id, keys, worker, transfer):
        calls.append((worker, len(keys)))
        return await real(session_id, keys, worker, transfer)

    monkeypatch.setattr(slot_module, "fetch_values", counting)
    rng = np.random.default_rng(0)
    pdf = pd.DataFrame({"k": rng.integers(0, 60_000, 200_000), "x": rng.random(200_000)})
    df = md.DataFrame(pdf, chunk_size=25_000).execute(session=session)
    calls.clear()
    got = df.groupby("k", sort=False).agg({"x": "sum"}).execute(session=session).fetch(session=session)
    pd.testing.assert_frame_equal(got.sort_index(), pdf.groupby("k").agg({"x": "sum"}))
    pieces = [n for _, n in calls if n > 1]
    # 8 reducers, 4 on each worker: one call for the first reducer's pieces, one for the rest, per worker pair
    assert pieces and len(pieces) <= 4, calls
