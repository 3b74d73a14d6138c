"""The worker's execution service: a priority queue of subtasks feeding its slots.

The supervisor sends batches of :class:`SubtaskSpec`; they wait in one queue
ordered by priority; whenever a slot is free it gets the next spec, or a few
at once when subtasks are tiny (so that the hop to the slot process is not
the bottleneck). While subtasks are short (under 50 ms on average), a CPU
slot holds two batches: the one it runs and the next,
sent while it runs, which its thread starts as soon as the first ends (the
answer, this loop and the next call are then off the slot's path). When a
slot's process ends, the batch it ran fails and the one behind it, which never
started, is queued again. Finished subtasks are registered with the worker's storage
and reported back to the supervisor that sent them, batched by event-loop turn.

Memory (see :mod:`.memory`): a spec starts only when its estimated need fits
the worker's budget beside those running (alone, it always starts), and when
the chunk cache has room for its outputs (it spills ahead to make some). A
:class:`~.guard.MemoryGuard` samples the worker's memory: above the soft limit
nothing new starts and the cache spills down; above the hard limit the slot
running the biggest subtask is killed, and that subtask fails with
:class:`~mars.services.errors.WorkerMemoryError`.

A batch that reads inputs from another worker also reads there, in one more
call made while it runs, what the next queued subtasks of its task need from
that worker (a shuffle's other reducers: see :mod:`.ahead`); the bytes a
slot holds that way are reserved in the chunk cache until they are read.

Cancelling a task (or dropping a session) drops its queued subtasks and tells
the slots, which stop a chained graph between subtasks; a slot still running
only such subtasks ``cancel_grace`` seconds later has its process killed (the
main pool starts it again), so that one long chunk function cannot keep a
slot from the next job.

A slot process that dies by itself (a segfault, ``os._exit``, a signal from
outside) fails the subtasks it held with :class:`~.api.SlotDied`, naming the
slot, the worker, the exit code or signal (which the main pool learns as it
reaps the process) and the operator; the main pool kills the processes the
slot started (its process group) and starts it again.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ... import oscar as mo
from ...oscar.mainpool import sub_pool_exit
from ..errors import TaskCancelled
from ..storage.cache import ChunkCache
from ..storage.core import ChunkStore
from ..storage.device import adopt_moved, drop_device, holder_name, host_descs
from ..storage.shm import unlink_object, unlink_prefix
from .ahead import AHEAD_BYTES, AHEAD_UNITS, Plan, ReadAhead
from .api import (
    FetchAhead,
    OutputMeta,
    SlotDied,
    SlotOutcome,
    SubtaskReport,
    SubtaskSpec,
    op_name,
)
from .guard import MemoryGuard
from .memory import SOFT, MemoryBudget, Need, estimate
from .profiler import Profile, merge_profiles
from .stream import StreamRecorder

logger = logging.getLogger(__name__)

#: subtasks faster than this on average go to a slot in batches of up to _MAX_BATCH
_BATCH_BELOW_SECONDS = 1e-3
_MAX_BATCH = 64
#: and with outputs of at most this many bytes in all (tiny subtasks have small outputs)
_BATCH_BYTES = 8 << 20
#: outputs smaller than this travel with the report when the supervisor asked for values
_REPORT_VALUE_BELOW = 64 * 1024
#: and smaller than this always (counts, key ranges, dtypes: readers elsewhere get them in their specs)
PASS_VALUE_BELOW = 1024
#: a slot whose process died is given up on when it does not answer again within this
_REVIVE_TIMEOUT = 120.0
#: how long a slot whose connection closed has to be seen ending (its main pool joins it) to count as dead
_EXIT_SEEN_TIMEOUT = 10.0
#: batches a CPU slot holds at once: the one it runs and the next, sent while it runs (see _pump_lane)
_CPU_DEPTH = 2
#: ... only while subtasks take less than this on average (seconds): the round trip saved is a few ms, and a
#: batch sent behind a long one waits for it even when another slot becomes idle first
_BEHIND_BELOW = 0.05

_Unit = tuple[tuple, int, list[SubtaskSpec], mo.ActorRef]
#: how a slot call fails when the slot's process ended
_GONE = (mo.ServerClosed, ConnectionError)


@dataclass
class Lane:
    """The slots of one kind (CPU or GPU) and the queue of units only they run."""

    slots: list[mo.ActorRef]
    #: batches each slot holds at once (the one it runs, and those sent to wait behind it)
    depth: int = 1
    queue: list[_Unit] = field(default_factory=list)
    #: one entry per batch a slot may take now; a slot with room for two is listed twice
    free: list[mo.ActorRef] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.free = list(reversed(self.slots)) * self.depth  # popped from the end: idle slots first

    def drop(self, gone: Callable[[list[SubtaskSpec]], bool]) -> int:
        """Drop the queued units ``gone`` says; returns how many."""
        before = len(self.queue)
        self.queue = [e for e in self.queue if not gone(e[2])]
        heapq.heapify(self.queue)
        return before - len(self.queue)


@dataclass
class InHand:
    """A batch a slot is running, and what it holds of the worker's memory."""

    slot: mo.ActorRef
    batch: list[tuple[SubtaskSpec, mo.ActorRef]]
    need: Need
    #: the slot's process when the batch started (None: unknown, or this process)
    pid: int | None = None
    #: the queued units the batch was made of (queued again when it never started: see _run_on)
    units: list[_Unit] = field(default_factory=list)
    #: when it was sent, or when the batch ahead of it in its slot ended
    sent_at: float = 0.0


class ExecutionActor(mo.Actor):
    """Queue and slots of one worker.

    Parameters
    ----------
    slots
        The slot runners.
    cache
        The worker's chunk cache (shared with its storage actor); a bare
        :class:`ChunkStore` is taken as a cache without a limit.
    worker_address
        The worker's address as other nodes reach it (advertised).
    budget
        The worker's memory limits; None enforces none.
    slot_pids
        Returns the pid of each slot's process by slot address (slots that
        run in this process have none, and cannot be stopped).
    cancel_grace
        Seconds a cancelled task's running subtasks have to end before their
        slot processes are killed.
    slot_prefixes
        The shared-memory segment prefix of each slot process by slot
        address: what a slot that died was writing is removed.
    """

    def __init__(self, slots: list[mo.ActorRef], cache: ChunkCache | ChunkStore, worker_address: str | None = None,
                 budget: MemoryBudget | None = None, slot_pids: Callable[[], dict[str, int]] | None = None,
                 sample_interval: float = 0.1, cancel_grace: float = 2.0,
                 slot_prefixes: dict[str, str] | None = None, gpu_slots: Sequence[mo.ActorRef] = ()) -> None:
        self._slots = list(slots) + list(gpu_slots)
        self._worker_address = worker_address  # as other nodes reach it (advertised)
        #: CPU slots run CPU subtasks, GPU slots (one per device) GPU subtasks; with no GPU slot, all go to CPU
        self._lanes = {False: Lane(list(slots), _CPU_DEPTH), True: Lane(list(gpu_slots))}
        self._cache = cache if isinstance(cache, ChunkCache) else ChunkCache(cache)
        self._store = self._cache.store
        #: units of work by priority: one spec, or a chained graph's specs (run together, in order)
        self._seq = itertools.count()
        self._cancelled: set[tuple[str, str]] = set()
        self._outbox: dict[mo.ActorRef, list[SubtaskReport]] = {}
        self._running = 0
        self._avg_cost = float("inf")
        self._tasks: set[asyncio.Task] = set()
        #: the batch each slot runs, and the next one it was sent (waiting behind it, in the slot)
        self._in_hand: dict[tuple[str, str], InHand] = {}
        self._behind: dict[tuple[str, str], InHand] = {}
        #: slots whose process failed or was stopped: no work until it answers again (see _revive)
        self._down: set[tuple[str, str]] = set()
        self._slot_pids = slot_pids
        self._cancel_grace = cancel_grace
        self._slot_prefixes = slot_prefixes or {}
        #: slots killed because all they ran was cancelled: the error their batch reports
        self._cancel_stops: dict[tuple[str, str], TaskCancelled] = {}
        self._guard = None if budget is None else MemoryGuard(budget, self._cache, slot_pids, sample_interval,
                                                              worker_address or "")
        self._cache.add_listener(self._pump_soon)
        self._pump_scheduled = False
        #: what the slots ran, for the task stream (see stream.py)
        self._stream = StreamRecorder()
        self._slot_numbers = {(s.address, s.uid): i for i, s in enumerate(self._slots)}
        self._op_names: dict[type, str] = {}
        self._cache.add_spill_listener(self._stream.spill)
        #: the inputs each slot holds read ahead for queued subtasks (see ahead.py)
        self._ahead = ReadAhead()

    async def __post_create__(self) -> None:
        if self._guard is not None:
            self._spawn(self._guard.watch(lambda: self._in_hand, self._pump_soon))

    async def __pre_destroy__(self) -> None:
        for t in list(self._tasks):
            t.cancel()

    # ------------------------------------------------------------------ calls
    def submit(self, specs: list[SubtaskSpec], reply_to: mo.ActorRef) -> None:
        """Queue ``specs``; their reports go to ``reply_to.subtasks_done``.

        Chained specs (a small graph sent whole, a run of subtasks each reading the last) stay together,
        one unit per chain number, and go to one slot.
        """
        for spec in specs:
            self._cancelled.discard((spec.session_id, spec.task_id))
        chains: dict[int, list[SubtaskSpec]] = {}
        for spec in specs:
            if spec.chained:
                chains.setdefault(spec.chained, []).append(spec)
            else:
                heapq.heappush(self._lane_for([spec]).queue, (spec.priority, next(self._seq), [spec], reply_to))
        for unit in chains.values():
            heapq.heappush(self._lane_for(unit).queue, (unit[0].priority, next(self._seq), unit, reply_to))
        self._pump()

    def cancel(self, session_id: str, task_id: str) -> int:
        """Drop the task's queued subtasks; running ones are stopped (see the module's notes).
        Returns how many queued subtasks were dropped."""
        self._cancelled.add((session_id, task_id))
        for slot in self._slots:  # a batch in a slot's hands stops between subtasks
            self._spawn(self._cancel_on(slot, session_id, task_id))
        dropped = self._drop(lambda unit: (unit[0].session_id, unit[0].task_id) == (session_id, task_id))
        self._prune_ahead()
        self._spawn(self._stop_stragglers(lambda spec: (spec.session_id, spec.task_id) in self._cancelled,
                                          f"task {task_id} of session {session_id} was cancelled"))
        return dropped

    def drop_queued(self, session_id: str, task_id: str, start: int, stop: int) -> int:
        """Drop the task's queued subtasks numbered ``start <= index < stop`` (a run cut short by a lost
        worker: the run after it makes what is missing); returns how many were dropped."""
        def gone(unit: list[SubtaskSpec]) -> bool:
            spec = unit[0]
            return spec.session_id == session_id and spec.task_id == task_id and start <= spec.index < stop

        dropped = self._drop(gone)
        self._prune_ahead()
        return dropped

    def _drop(self, gone: Callable[[list[SubtaskSpec]], bool]) -> int:
        return sum(lane.drop(gone) for lane in self._lanes.values())

    def _lane_for(self, unit: list[SubtaskSpec]) -> Lane:
        gpu = self._lanes[True]
        return gpu if gpu.slots and any(spec.subtask.gpu for spec in unit) else self._lanes[False]

    def _lane_of(self, slot: mo.ActorRef) -> Lane:
        gpu = self._lanes[True]
        return gpu if any(slot is s for s in gpu.slots) else self._lanes[False]

    async def _stop_stragglers(self, doomed: Callable[[SubtaskSpec], bool], why: str) -> None:
        """After the grace period, kill the slot processes still running nothing but ``doomed`` subtasks."""
        await asyncio.sleep(self._cancel_grace)
        pids = self._slot_pids() if self._slot_pids is not None else {}
        for key, hand in list(self._in_hand.items()):
            if key in self._cancel_stops or not all(doomed(spec) for spec, _ in hand.batch):
                continue
            pid = pids.get(hand.slot.address)
            if pid is None or pid == os.getpid():
                logger.warning("slot %s still runs subtasks of a stopped job (%s) after %g s; it runs in the "
                               "worker's main process and cannot be stopped", hand.slot.address, why,
                               self._cancel_grace)
                continue
            self._cancel_stops[key] = TaskCancelled(why)
            logger.info("slot %s still ran %d subtasks %g s after %s: stopping its process", hand.slot.address,
                        len(hand.batch), self._cancel_grace, why)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass  # it ended by itself meanwhile

    async def _cancel_on(self, slot: mo.ActorRef, session_id: str, task_id: str) -> None:
        try:
            await slot.cancel(session_id, task_id)
        except Exception as e:  # noqa: BLE001 - a slot that is gone runs nothing
            logger.debug("could not cancel task %s on slot %s: %s", task_id, slot.address, e)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def drop_session(self, session_id: str) -> None:
        """Forget the session's queued subtasks and stop its running ones (its data goes through the
        storage actor)."""
        self._drop(lambda unit: unit[0].session_id == session_id)
        self._prune_ahead()
        self._spawn(self._stop_stragglers(lambda spec: spec.session_id == session_id,
                                          f"session {session_id} was closed"))

    def stats(self) -> dict:
        lanes = self._lanes.values()
        idle = [s for s in self._slots if not self._n_hands(_sid(s)) and _sid(s) not in self._down]
        figures = {"n_slots": len(self._slots), "n_running": self._running,
                   "n_queued": sum(len(lane.queue) for lane in lanes),
                   "n_free_slots": len(idle), "n_gpu_slots": len(self._lanes[True].slots)}
        if self._guard is not None:
            figures.update(self._guard.stats())
        figures.update(self._stream.stats())
        return figures

    def stream_events(self, session_id: str | None = None, task_id: str | None = None, since: float = 0.0,
                      after_seq: int = -1, limit: int = 50_000) -> list:
        """The task stream's events this worker kept (see :meth:`.stream.StreamRecorder.events`)."""
        return self._stream.events(session_id, task_id, since, after_seq, limit)

    @mo.no_lock
    async def profile(self, session_id: str | None = None, task_id: str | None = None) -> Profile:
        """The sampled stacks of a task's subtasks on this worker's slots (see profiler.py), merged;
        a slot that does not answer (restarting, say) counts nothing."""
        async def ask(slot: mo.ActorRef) -> Profile | None:
            try:
                return await slot.profile.options(timeout=5)(session_id, task_id)  # type: ignore[no-any-return]
            except Exception as e:  # noqa: BLE001 - the other slots' samples still count
                logger.debug("no profile from slot %s: %s", slot.address, e)
                return None

        answers = await asyncio.gather(*[ask(slot) for slot in self._slots])
        return merge_profiles(p for p in answers if p is not None)

    # ------------------------------------------------------------------ running
    def _pump_soon(self) -> None:
        """Pump once the current event-loop turn ends (memory was freed, the limits moved)."""
        if not self._pump_scheduled:
            self._pump_scheduled = True
            asyncio.get_running_loop().call_soon(self._pump)

    def _pump(self) -> None:
        self._pump_scheduled = False
        for lane in self._lanes.values():
            self._pump_lane(lane)

    def _pump_lane(self, lane: Lane) -> None:
        """Hand queued units to slots with room. A CPU slot is sent the next batch while it runs one: the
        round trip between two batches (the slot's answer, this loop, the next call) is then off its path."""
        while lane.free and lane.queue:
            if self._avg_cost > _BEHIND_BELOW and all(self._n_hands(_sid(s)) for s in lane.free):
                return  # long subtasks: a batch sent behind one could wait while another slot idles
            taken = self._take_batch(lane)
            if taken is None:
                return  # the next unit waits for memory
            batch, need, units = taken
            if not batch:
                continue
            slot = self._pick_slot(lane, batch)
            self._running += len(batch)
            hand = InHand(slot, batch, need, self._pid_of(slot), units, time.time())
            key = _sid(slot)
            (self._behind if key in self._in_hand else self._in_hand)[key] = hand
            for spec, _ in batch:
                self._store.pin(spec.session_id, spec.subtask.input_keys)
            self._cache.reserve(need.outputs)
            self._spawn(self._run_on(hand, self._plan_ahead(lane, slot, [spec for spec, _ in batch])))
            if self._guard is not None:
                self._guard.wake()

    def _take_batch(self, lane: Lane) -> tuple[list[tuple[SubtaskSpec, mo.ActorRef]], Need, list[_Unit]] | None:
        """The next units of ``lane`` for one slot (the batch, its need, the units), or None when the first
        may not start yet (memory)."""
        queue = lane.queue
        while queue and self._is_cancelled(queue[0][2]):
            heapq.heappop(queue)
        if not queue:
            return [], Need(0, 0, 0.0), []
        need = estimate(queue[0][2], self._store)
        if not self._admits(need, queue[0][2]):
            return None
        size = 1
        if lane is self._lanes[True]:
            # a device runs its kernels one after the other anyway: what is queued goes to the GPU slots
            # whole, split between them, and no slot round trip comes between two subtasks' kernels
            size = max(1, min(_MAX_BATCH, -(-len(queue) // len(lane.slots))))
        elif self._avg_cost < _BATCH_BELOW_SECONDS:
            size = max(1, min(_MAX_BATCH, len(queue) // (2 * len(lane.slots))))
        batch: list[tuple[SubtaskSpec, mo.ActorRef]] = []
        units: list[_Unit] = []
        # a batch's outputs are registered when it ends: they must fit in the cache together (a GPU
        # slot's stay in device memory, and its partial results are estimated far above what they are)
        max_bytes = 1 << 62 if lane is self._lanes[True] else min(_BATCH_BYTES, max(self._cache.room(), 0))
        while queue and len(batch) < size:
            unit = queue[0][2]
            if batch:  # the rest of a batch of tiny subtasks runs after the first, in the same slot
                if self._is_cancelled(unit):
                    heapq.heappop(queue)
                    continue
                more = estimate(unit, self._store)
                if need.outputs + more.outputs > max_bytes:
                    break
                need = Need(max(need.loaded, more.loaded), need.outputs + more.outputs, max(need.factor, more.factor),
                            need.inputs + more.inputs)
            entry = heapq.heappop(queue)
            units.append(entry)
            _, _, unit, reply_to = entry
            for spec in unit:
                self._attach_local_inputs(spec)
                batch.append((spec, reply_to))
        return batch, need, units

    def _is_cancelled(self, unit: list[SubtaskSpec]) -> bool:
        return (unit[0].session_id, unit[0].task_id) in self._cancelled

    def _admits(self, need: Need, unit: list[SubtaskSpec]) -> bool:
        """Whether ``unit``, needing ``need``, may start now (see the module's notes)."""
        if self._cache.can_spill and self._cache.room() < need.outputs:
            self._cache.spill_if_needed(extra=need.outputs)  # room for it is made ahead
            if self._in_hand or self._cache.busy:
                return False  # what runs, or the spills under way, will make room
        if not self._in_hand and not self._behind:
            if self._guard is not None:
                self._guard.check_alone(need, unit)
            return True
        if self._guard is None:
            return True
        if self._guard.level >= SOFT:
            return False
        hands = [*self._in_hand.values(), *self._behind.values()]
        running = sum(h.need.total for h in hands)
        return self._guard.budget.admits(need.total, running, self._store.shared_bytes + self._cache.reserved,
                                         len(hands))

    def _attach_local_inputs(self, spec: SubtaskSpec) -> None:
        for key in spec.subtask.input_keys:
            if self._store.contains(spec.session_id, key):
                spec.local_inputs[key] = self._store.get(spec.session_id, [key])[0]
                spec.remote_inputs.pop(key, None)  # a copy fetched earlier is here already

    # ------------------------------------------------------------------ reading ahead
    def _pick_slot(self, lane: Lane, batch: list[tuple[SubtaskSpec, mo.ActorRef]]) -> mo.ActorRef:
        """A slot of ``lane`` with room, holding the fewest batches: of those, the one holding most of the
        batch's inputs read ahead, else the last freed."""
        free = lane.free
        if len(free) == 1:
            return free.pop()
        loads = [self._n_hands(_sid(s)) for s in free]
        least = min(loads)
        fits = [i for i, n in enumerate(loads) if n == least]
        if len(fits) > 1 and not self._ahead.empty:
            specs = [spec for spec, _ in batch]
            counts = [self._ahead.held_by(_sid(free[i]), specs) for i in fits]
            best = max(range(len(counts)), key=counts.__getitem__)
            if counts[best]:
                return free.pop(fits[best])
        return free.pop(fits[-1])

    def _n_hands(self, key: tuple[str, str]) -> int:
        return (key in self._in_hand) + (key in self._behind)

    def _plan_ahead(self, lane: Lane, slot: mo.ActorRef, specs: list[SubtaskSpec]) -> FetchAhead | None:
        """What ``slot`` reads ahead with ``specs`` (see ahead.py); the cache's reservations follow."""
        budget = 0
        if lane is self._lanes[False] and (self._guard is None or self._guard.level < SOFT):
            budget = min(AHEAD_BYTES, max(self._cache.room(), 0) // 2 + self._ahead.nbytes)
        reads = budget > 0 and any(spec.remote_inputs for spec in specs)
        if not reads and self._ahead.empty:
            return None
        queued = [unit for _, _, unit, _ in heapq.nsmallest(AHEAD_UNITS, lane.queue)] if reads else []
        plan = self._ahead.plan((slot.address, slot.uid), specs, queued, budget)
        self._apply(plan)
        return plan.ahead

    def _prune_ahead(self) -> None:
        """Forget what slots read ahead for subtasks no longer queued (cancelled, dropped)."""
        if not self._ahead.empty:
            needed = {(unit[0].session_id, k) for lane in self._lanes.values() for _, _, unit, _ in lane.queue
                      if len(unit) == 1 for k in unit[0].remote_inputs}
            self._apply(self._ahead.prune(needed))

    def _apply(self, plan: Plan) -> None:
        if plan.taken:
            self._cache.reserve(plan.taken)
        if plan.freed:
            self._cache.release(plan.freed)
        by_id = {(s.address, s.uid): s for s in self._slots} if plan.drops else {}
        for slot_id, keys in plan.drops.items():
            by_session: dict[str, list[str]] = {}
            for session_id, key in keys:
                by_session.setdefault(session_id, []).append(key)
            for session_id, ks in by_session.items():
                self._spawn(self._drop_ahead_on(by_id[slot_id], session_id, ks))

    async def _drop_ahead_on(self, slot: mo.ActorRef, session_id: str, keys: list[str]) -> None:
        try:
            await slot.drop_ahead(session_id, keys)
        except Exception as e:  # noqa: BLE001 - a slot that is gone holds nothing
            logger.debug("could not drop inputs read ahead on slot %s: %s", slot.address, e)

    async def _run_on(self, hand: InHand, ahead: FetchAhead | None = None) -> None:
        slot = hand.slot
        key = _sid(slot)
        specs = [spec for spec, _ in hand.batch]
        crashed = False
        outcomes: list[SlotOutcome] | None = None
        try:
            lost = await self._inputs_on_host(specs, slot)
            if lost is not None:
                outcomes = [SlotOutcome(s.index, s.task_id, error=lost) for s in specs]
            else:
                outcomes = await (slot.run(specs, ahead) if ahead is not None else slot.run(specs))
                # the worker killed it just as it finished: its outcomes stand, the slot restarts
                crashed = self._in_hand.get(key) is hand and self._stopped(slot) is not None
        except Exception as e:  # noqa: BLE001 - a slot process died or failed: every subtask in hand fails
            crashed = True
            # a batch sent behind the one its slot ran when the process ended never started: it is queued again
            if self._in_hand.get(key) is hand or not (key in self._down or isinstance(e, _GONE)):
                outcomes = await self._failed(hand, e)
        finally:
            self._running -= len(specs)
            if crashed:
                self._mark_down(slot)
            self._let_go(hand)
        if outcomes is None:
            self._requeue(hand)
        else:
            self._finish(hand, outcomes)
        self._settle(slot)

    async def _failed(self, hand: InHand, e: Exception) -> list[SlotOutcome]:
        """The outcomes of a batch whose slot call failed: each subtask fails with the reason, when known."""
        slot = hand.slot
        error = self._stopped(slot)
        killed = error is not None
        if error is None:
            error = await self._death(hand, e)
        if error is None:
            logger.warning("slot %s failed running %d subtasks: %s", slot.address, len(hand.batch), e)
        # a memory stop or a crash is the subtask's own failure, not its worker's: it carries a "traceback"
        # (the supervisor retries failures without one elsewhere, and this one would fail again)
        by = "the worker killed the slot process" if killed else "the slot process died"
        why = f"{type(error).__name__}: {error}\n(no traceback: {by})" if error else ""
        return [SlotOutcome(s.index, s.task_id, error=error or e, traceback=why) for s, _ in hand.batch]

    def _mark_down(self, slot: mo.ActorRef) -> None:
        """The slot's process failed or was stopped: it takes no batch until it answers again."""
        self._down.add(_sid(slot))
        lane = self._lane_of(slot)
        lane.free = [s for s in lane.free if s is not slot]

    def _let_go(self, hand: InHand) -> None:
        """The slot call of ``hand`` ended: the batch behind it in its slot (if any, and the slot is up) runs now."""
        key = _sid(hand.slot)
        for spec, _ in hand.batch:
            self._store.unpin(spec.session_id, spec.subtask.input_keys)
        if self._in_hand.get(key) is hand:
            del self._in_hand[key]
            nxt = self._behind.get(key)
            if nxt is not None and key not in self._down:
                del self._behind[key]
                nxt.sent_at = max(nxt.sent_at, time.time())  # it waited for the slot, not for its inputs
                self._in_hand[key] = nxt
        elif self._behind.get(key) is hand:
            del self._behind[key]

    def _requeue(self, hand: InHand) -> None:
        lane = self._lane_of(hand.slot)
        for unit in hand.units:
            heapq.heappush(lane.queue, unit)
        self._cache.release(hand.need.outputs)

    def _finish(self, hand: InHand, outcomes: list[SlotOutcome]) -> None:
        """Record and report what the batch of ``hand`` ran."""
        cost = sum(o.duration for o in outcomes) / max(len(outcomes), 1)
        self._avg_cost = cost if self._avg_cost == float("inf") else 0.8 * self._avg_cost + 0.2 * cost
        by_id = {(o.task_id, o.index): o for o in outcomes}
        self._record(hand, hand.sent_at, by_id)
        for spec, reply_to in hand.batch:
            outcome = by_id.get((spec.task_id, spec.index))
            if outcome is not None:  # none: skipped after an earlier failure in its chain
                self._report(spec, reply_to, outcome)
        # the batch's reports leave now, before the next batch is sent to the slot (the supervisor is
        # waiting for them to dispatch what they make ready)
        for reply_to in list(self._outbox):
            self._flush(reply_to)
        adopt_moved(self._cache, [m for o in outcomes for m in o.moved])
        self._cache.release(hand.need.outputs)

    def _settle(self, slot: mo.ActorRef) -> None:
        """A batch came back from ``slot``: it has room again; or, when its process failed, once the last
        batch it held is back, what it left is cleaned up and it is started again."""
        key = _sid(slot)
        if key not in self._down:
            self._lane_of(slot).free.append(slot)
        elif not self._n_hands(key):
            self._cache.release(self._ahead.forget_slot(key))
            self._sweep(slot)
            self._spawn(self._revive(slot))
        self._pump()

    async def _inputs_on_host(self, specs: list[SubtaskSpec], slot: mo.ActorRef) -> BaseException | None:
        """Give ``specs`` host copies of the inputs held in another GPU slot's device memory (a GPU slot reads
        its own where they are); the error, naming the chunk, when one cannot be had."""
        here = holder_name(slot.address, slot.uid)
        try:
            for spec in specs:
                descs = list(spec.local_inputs.values())
                if any(d.device is not None and d.device != here for d in descs):
                    copies = await host_descs(self._cache, spec.session_id, descs, keep_on=here)
                    spec.local_inputs = dict(zip(spec.local_inputs, copies))
        except Exception as e:  # noqa: BLE001 - the subtasks fail with it; the slot carries on
            return e
        return None

    def _record(self, hand: InHand, sent_at: float, by_id: dict[tuple, SlotOutcome]) -> None:
        """Tell the task stream what the batch of ``hand`` ran, and the fetch it waited for first.

        Runs once per subtask on the worker's loop: kept to a few attribute reads and one tuple.
        """
        slot = self._slot_numbers.get((hand.slot.address, hand.slot.uid), -1)
        ended = time.time()
        first = min((o.started for o in by_id.values() if o.started), default=ended)
        record, names = self._stream.subtask, self._op_names
        for spec, _ in hand.batch:
            o = by_id.get((spec.task_id, spec.index))
            if spec.remote_inputs:
                self._record_fetch(spec, slot, sent_at, first, o)
            if o is None:
                continue
            op = spec.subtask.op
            name = names.get(type(op)) or op_name(op)
            if not getattr(op, "steps", None):  # a fused group's name depends on its steps: not cached
                names[type(op)] = name
            descs = o.descs
            if len(descs) == 1:
                keys, nbytes = (descs[0].key,), descs[0].nbytes
            else:
                keys, nbytes = tuple(d.key for d in descs) or tuple(spec.subtask.output_keys), sum(d.nbytes for d in descs)
            start = o.started or max(sent_at, ended - o.duration)  # a failed subtask's start is not sent
            record(spec.session_id, spec.task_id, slot, start, start + o.duration, name, spec.index, keys, nbytes,
                   o.error is not None)

    def _record_fetch(self, spec: SubtaskSpec, slot: int, start: float, end: float,
                      outcome: SlotOutcome | None) -> None:
        """The inputs of ``spec`` read from other workers, one event per worker they came from."""
        copied = {d.key: d.nbytes for d in outcome.copies} if outcome is not None else {}
        by_peer: dict[str, list[str]] = {}
        for key, where in spec.remote_inputs.items():
            by_peer.setdefault(where.worker, []).append(key)
        for peer, keys in by_peer.items():
            nbytes = sum(copied.get(k) or spec.remote_inputs[k].nbytes for k in keys)
            self._stream.transfer(spec.session_id, spec.task_id, slot, start, max(start, end), peer, tuple(keys),
                                  nbytes)

    def _stopped(self, slot: mo.ActorRef) -> BaseException | None:
        """The error for the batch of ``slot`` when the worker killed its process (memory, cancel), else None."""
        error = self._guard.stopped(slot) if self._guard is not None else None
        cancelled = self._cancel_stops.pop((slot.address, slot.uid), None)
        return error or cancelled

    def _pid_of(self, slot: mo.ActorRef) -> int | None:
        pid = self._slot_pids().get(slot.address) if self._slot_pids is not None else None
        return None if pid == os.getpid() else pid

    async def _death(self, hand: InHand, error: Exception) -> SlotDied | None:
        """The error naming how the slot process of ``hand`` ended, when its call failed as it died; None when
        it did not end (the call failed otherwise) or this worker cannot tell."""
        if hand.pid is None or not isinstance(error, _GONE):
            return None
        code = await sub_pool_exit(self.address, hand.pid, _EXIT_SEEN_TIMEOUT)
        if code is None:
            return None
        ops = list(dict.fromkeys(op_name(spec.subtask.op) for spec, _ in hand.batch))
        running = ops[0] if len(ops) == 1 else "one of " + ", ".join(ops)
        message = (f"slot {self._slots.index(hand.slot)} of worker {self._worker_address or self.address} died with "
                   f"{_exit_text(code)} while running {running} (pid {hand.pid}); the slot is restarted")
        logger.error("%s", message)
        return SlotDied(message)

    def _sweep(self, slot: mo.ActorRef) -> None:
        """Remove the segments a dead slot process wrote and nobody registered (outputs cut off mid-way)."""
        prefix = self._slot_prefixes.get(slot.address)
        if prefix is None:
            return
        n = unlink_prefix(prefix, {d.shm_name for d in self._store.all() if d.shm_name})
        if n:
            logger.info("removed %d segments that the dead process of slot %s left", n, slot.address)

    async def _revive(self, slot: mo.ActorRef) -> None:
        """Give the slot work again once its process answers (the main pool restarts a dead one)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _REVIVE_TIMEOUT
        while True:
            try:
                await slot.ping.options(timeout=5)()
                break
            except Exception as e:  # noqa: BLE001 - restarting: refused, not there yet, or slow
                if loop.time() > deadline:
                    logger.error("slot %s did not come back within %g s (%s): it gets no more work",
                                 slot.address, _REVIVE_TIMEOUT, e)
                    return
                await asyncio.sleep(0.1)
        key = _sid(slot)
        self._down.discard(key)
        lane = self._lane_of(slot)
        lane.free.extend([slot] * (lane.depth - self._n_hands(key)))
        self._pump()

    def _report(self, spec: SubtaskSpec, reply_to: mo.ActorRef, outcome: SlotOutcome) -> None:
        report = SubtaskReport(spec.session_id, spec.task_id, spec.index, self._worker_address or self.address,
                               error=outcome.error, traceback=outcome.traceback, duration=outcome.duration,
                               unreachable=outcome.unreachable)
        for copy in outcome.copies:
            if self._store.contains(spec.session_id, copy.key):
                unlink_object(copy)  # another slot kept one first
                continue
            self._cache.register(spec.session_id, [copy])
            report.copies.append(copy.key)
        if outcome.error is None:
            if (spec.session_id, spec.task_id) in self._cancelled:
                for desc in outcome.descs:
                    unlink_object(desc)
                drop_device(outcome.descs)
                return
            self._cache.register(spec.session_id, outcome.descs)  # the same chunk made again: the old copy goes
            for desc, shape in zip(outcome.descs, outcome.shapes):
                meta = OutputMeta(desc.key, shape, desc.nbytes)
                if desc.inline and desc.nbytes < (_REPORT_VALUE_BELOW if spec.report_values else PASS_VALUE_BELOW):
                    meta.value, meta.has_value = desc.value, True
                report.outputs.append(meta)
        box = self._outbox.get(reply_to)
        if box is None:
            self._outbox[reply_to] = [report]
            asyncio.get_running_loop().call_soon(self._flush, reply_to)
        else:
            box.append(report)

    def _flush(self, reply_to: mo.ActorRef) -> None:
        reports = self._outbox.pop(reply_to, [])
        if reports:
            self._spawn(self._send(reply_to, reports))

    async def _send(self, reply_to: mo.ActorRef, reports: list[SubtaskReport]) -> None:
        try:
            await reply_to.subtasks_done(reports)
        except Exception as e:  # noqa: BLE001 - the supervisor went away; its tasks are gone with it
            logger.warning("could not report %d subtasks to %s: %s", len(reports), reply_to, e)


def _sid(slot: mo.ActorRef) -> tuple[str, str]:
    return slot.address, slot.uid


def _exit_text(code: int) -> str:
    """``SIGSEGV`` for -11 (a process killed by a signal), ``exit code 3`` for 3."""
    if code >= 0:
        return f"exit code {code}"
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"
