"""The worker's execution service: a priority queue of subtasks feeding its slots.

The supervisor sends batches of :class:`SubtaskSpec`; they wait in one queue
ordered by priority; whenever a slot is free it gets the next spec, or a few
at once when subtasks are tiny (so that the hop to the slot process is not
the bottleneck). Finished subtasks are registered with the worker's storage
and reported back to the supervisor that sent them, batched by event-loop turn.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
from typing import Any

from ... import oscar as mo
from ..storage.core import ChunkStore
from ..storage.shm import unlink_object
from .api import OutputMeta, SlotOutcome, SubtaskReport, SubtaskSpec

logger = logging.getLogger(__name__)

#: subtasks faster than this on average go to a slot in batches of up to _MAX_BATCH
_BATCH_BELOW_SECONDS = 1e-3
_MAX_BATCH = 64
#: outputs smaller than this travel with the report when the supervisor asked for values
_REPORT_VALUE_BELOW = 64 * 1024


class ExecutionActor(mo.Actor):
    """Queue and slots of one worker; ``store`` is the worker's chunk index (shared with storage)."""

    def __init__(self, slots: list[mo.ActorRef], store: ChunkStore, worker_address: str | None = None) -> None:
        self._slots = list(slots)
        self._worker_address = worker_address  # as other nodes reach this worker (advertised)
        self._free = list(reversed(self._slots))
        self._store = store
        #: units of work by priority: one spec, or a chained graph's specs (run together, in order)
        self._queue: list[tuple[tuple, int, list[SubtaskSpec], mo.ActorRef]] = []
        self._seq = itertools.count()
        self._cancelled: set[tuple[str, str]] = set()
        self._outbox: dict[mo.ActorRef, list[SubtaskReport]] = {}
        self._running = 0
        self._avg_cost = float("inf")
        self._tasks: set[asyncio.Task] = set()

    async def __pre_destroy__(self) -> None:
        for t in list(self._tasks):
            t.cancel()

    # ------------------------------------------------------------------ calls
    def submit(self, specs: list[SubtaskSpec], reply_to: mo.ActorRef) -> None:
        """Queue ``specs``; their reports go to ``reply_to.subtasks_done``.

        Chained specs (a small graph sent whole) stay together and go to one slot.
        """
        for spec in specs:
            self._cancelled.discard((spec.session_id, spec.task_id))
        if specs and specs[0].chained:
            heapq.heappush(self._queue, (specs[0].priority, next(self._seq), list(specs), reply_to))
        else:
            for spec in specs:
                heapq.heappush(self._queue, (spec.priority, next(self._seq), [spec], reply_to))
        self._pump()

    def cancel(self, session_id: str, task_id: str) -> int:
        """Drop the task's queued subtasks (running ones finish); returns how many were dropped."""
        self._cancelled.add((session_id, task_id))
        for slot in self._slots:  # a batch in a slot's hands stops between subtasks
            self._spawn(self._cancel_on(slot, session_id, task_id))
        before = len(self._queue)
        self._queue = [e for e in self._queue if (e[2][0].session_id, e[2][0].task_id) != (session_id, task_id)]
        heapq.heapify(self._queue)
        return before - len(self._queue)

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
        """Forget the session's queued subtasks (its data goes through the storage actor)."""
        self._queue = [e for e in self._queue if e[2][0].session_id != session_id]
        heapq.heapify(self._queue)

    def stats(self) -> dict:
        return {"n_slots": len(self._slots), "n_running": self._running, "n_queued": len(self._queue),
                "n_free_slots": len(self._free)}

    # ------------------------------------------------------------------ running
    def _pump(self) -> None:
        while self._free and self._queue:
            batch = self._take_batch()
            if not batch:
                continue
            slot = self._free.pop()
            self._running += len(batch)
            self._spawn(self._run_on(slot, batch))

    def _take_batch(self) -> list[tuple[SubtaskSpec, mo.ActorRef]]:
        size = 1
        if self._avg_cost < _BATCH_BELOW_SECONDS:
            size = max(1, min(_MAX_BATCH, len(self._queue) // (2 * len(self._slots))))
        batch: list[tuple[SubtaskSpec, mo.ActorRef]] = []
        while self._queue and len(batch) < size:
            _, _, unit, reply_to = heapq.heappop(self._queue)
            if (unit[0].session_id, unit[0].task_id) in self._cancelled:
                continue
            for spec in unit:
                self._attach_local_inputs(spec)
                batch.append((spec, reply_to))
        return batch

    def _attach_local_inputs(self, spec: SubtaskSpec) -> None:
        for key in spec.subtask.input_keys:
            if self._store.contains(spec.session_id, key):
                spec.local_inputs[key] = self._store.get(spec.session_id, [key])[0]
                spec.remote_inputs.pop(key, None)  # a copy fetched earlier is here already

    async def _run_on(self, slot: mo.ActorRef, batch: list[tuple[SubtaskSpec, mo.ActorRef]]) -> None:
        specs = [spec for spec, _ in batch]
        try:
            outcomes: list[SlotOutcome] = await slot.run(specs)
        except Exception as e:  # noqa: BLE001 - a slot process died or failed: every subtask in hand fails
            logger.warning("slot %s failed running %d subtasks: %s", slot.address, len(specs), e)
            outcomes = [SlotOutcome(s.index, s.task_id, error=e) for s in specs]
        finally:
            self._running -= len(specs)
            self._free.append(slot)
        cost = sum(o.duration for o in outcomes) / max(len(outcomes), 1)
        self._avg_cost = cost if self._avg_cost == float("inf") else 0.8 * self._avg_cost + 0.2 * cost
        by_id = {(o.task_id, o.index): o for o in outcomes}
        for spec, reply_to in batch:
            outcome = by_id.get((spec.task_id, spec.index))
            if outcome is not None:  # none: skipped after an earlier failure in its chain
                self._report(spec, reply_to, outcome)
        self._pump()

    def _report(self, spec: SubtaskSpec, reply_to: mo.ActorRef, outcome: SlotOutcome) -> None:
        report = SubtaskReport(spec.session_id, spec.task_id, spec.index, self._worker_address or self.address,
                               error=outcome.error, traceback=outcome.traceback, duration=outcome.duration)
        for copy in outcome.copies:
            if self._store.contains(spec.session_id, copy.key):
                unlink_object(copy)  # another slot kept one first
                continue
            self._store.put(spec.session_id, [copy])
            report.copies.append(copy.key)
        if outcome.error is None:
            if (spec.session_id, spec.task_id) in self._cancelled:
                for desc in outcome.descs:
                    unlink_object(desc)
                return
            for replaced in self._store.put(spec.session_id, outcome.descs):
                unlink_object(replaced)  # the same chunk made again: the old copy goes
            for desc, shape in zip(outcome.descs, outcome.shapes):
                meta = OutputMeta(desc.key, shape, desc.nbytes)
                if spec.report_values and desc.inline and desc.nbytes < _REPORT_VALUE_BELOW:
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
