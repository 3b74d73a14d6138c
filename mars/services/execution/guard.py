"""Watching a worker's memory against its soft and hard limits (``--phy-mem``).

The guard samples the worker's process tree a few times a second (see
:mod:`.memory` for what is counted). At or above the soft limit it lowers the
chunk cache's target so that chunks spill until the worker is back under it,
and tells the execution actor to start nothing new meanwhile. At or above the
hard limit it kills the slot process holding the most memory, remembering a
:class:`~mars.services.errors.WorkerMemoryError` for the subtask that slot
was running: the execution actor reports that error instead of the lost
connection, and the main pool restarts the slot.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import WorkerMemoryError
from ..storage.cache import ChunkCache
from .api import SubtaskSpec
from .memory import HARD, OK, SOFT, MemoryBudget, MemorySample, Need, TreeMemory

logger = logging.getLogger(__name__)

_LEVELS = {OK: "under the soft limit", SOFT: "over the soft limit", HARD: "over the hard limit"}
#: seconds between samples while nothing runs
_IDLE_INTERVAL = 1.0


def _mib(n: float) -> str:
    return f"{n / (1 << 20):.1f} MiB"


def op_name(op: Any) -> str:
    """An op's class name; a fused op's members, in order."""
    steps = getattr(op, "steps", None)
    if steps:
        return " -> ".join(type(s.op).__name__ for s in steps)
    return type(op).__name__


class MemoryGuard:
    """The memory limits of one worker, enforced from its main pool.

    Parameters
    ----------
    budget
        The limits.
    cache
        The worker's chunk cache: spilled down while over the soft limit.
    slot_pids
        The pid of each slot process by slot address.
    interval
        Seconds between samples.
    worker
        The worker's address, for messages.
    """

    def __init__(self, budget: MemoryBudget, cache: ChunkCache, slot_pids: Callable[[], dict[str, int]] | None,
                 interval: float = 0.1, worker: str = "") -> None:
        self.budget = budget
        self.level = OK
        self.used = 0
        self.n_stopped = 0
        self._cache = cache
        self._slot_pids = slot_pids
        self._interval = interval
        self._worker = worker
        self._tree = TreeMemory()
        self._stopped: dict[tuple[str, str], WorkerMemoryError] = {}
        self._stopping: tuple[str, str] | None = None
        self._warned: set[str] = set()
        self._woken = asyncio.Event()

    async def watch(self, in_hand: Callable[[], Mapping[tuple[str, str], Any]], on_lower: Callable[[], None]) -> None:
        """Sample forever; ``in_hand()`` gives the running batches, ``on_lower()`` is called when the level drops.

        Every ``interval`` while subtasks run; idle, every second, or at once when :meth:`wake` says work started.
        """
        loop = asyncio.get_running_loop()
        while True:
            try:
                sample = await loop.run_in_executor(None, self._tree.sample, loop.time())
                self.on_sample(sample, in_hand(), on_lower)
            except Exception:
                logger.exception("sampling the memory of worker %s failed", self._worker)
            self._woken.clear()
            if in_hand():
                await asyncio.sleep(self._interval)
                continue
            try:
                await asyncio.wait_for(self._woken.wait(), max(self._interval, _IDLE_INTERVAL))
            except asyncio.TimeoutError:
                pass

    def wake(self) -> None:
        """Work started: sample now, and often from now on."""
        self._woken.set()

    def on_sample(self, sample: MemorySample, in_hand: Mapping[tuple[str, str], Any],
                  on_lower: Callable[[], None]) -> None:
        """Act on one sample: pressure on the cache, the level, and a stop over the hard limit."""
        store = self._cache.store
        # measured, not estimated: outputs reserved for are counted once they exist (in a slot, then stored)
        self.used = used = sample.process_bytes + store.shared_bytes  # inline chunks: in the main process
        if not in_hand:
            self.budget.baseline = sample.process_bytes
        level = self.budget.level(used)
        if level >= SOFT:
            over = max(0, used - self.budget.soft - store.spilling_bytes)  # spills under way will free theirs
            self._cache.set_pressure(store.shared_bytes - store.spilling_bytes - over)
        elif self.level >= SOFT:
            self._cache.set_pressure(None)
        if level == HARD:
            self._stop_largest(sample, in_hand)
        if level != self.level:
            log = logger.warning if level > self.level else logger.info
            log("worker %s uses %s of %s (--phy-mem): %s%s", self._worker, _mib(used), _mib(self.budget.limit),
                _LEVELS[level], ", taking no new subtasks and spilling" if level >= SOFT else "")
            lower = level < self.level
            self.level = level
            if lower:
                on_lower()

    def stopped(self, slot: Any) -> WorkerMemoryError | None:
        """The error for the batch of ``slot`` if the guard killed its process, else None."""
        key = (slot.address, slot.uid)
        if self._stopping == key:
            self._stopping = None
        return self._stopped.pop(key, None)

    def check_alone(self, need: Need, unit: list[SubtaskSpec]) -> None:
        """Warn (once a task) when work bigger than the whole budget starts, alone."""
        room = self.budget.room(self._cache.store.shared_bytes)
        spec = unit[0]
        if need.total > room and spec.task_id not in self._warned:
            if len(self._warned) > 1000:
                self._warned.clear()
            self._warned.add(spec.task_id)
            logger.warning("subtask %d of task %s (%s) needs about %s, more than the %s that worker %s has for "
                           "running subtasks: it runs alone", spec.index, spec.task_id, op_name(spec.subtask.op),
                           _mib(need.total), _mib(max(room, 0)), self._worker)

    def stats(self) -> dict[str, int]:
        return {"memory_used": self.used, "memory_soft_limit": self.budget.soft,
                "memory_hard_limit": self.budget.hard, "memory_paused": int(self.level >= SOFT),
                "n_memory_stops": self.n_stopped}

    def _stop_largest(self, sample: MemorySample, in_hand: Mapping[tuple[str, str], Any]) -> None:
        if self._stopping is not None and self._stopping in in_hand:
            return  # the last one stopped has not ended yet: its memory is still counted
        pids = self._slot_pids() if self._slot_pids is not None else {}
        best: tuple[int, tuple[str, str], Any, int] | None = None
        for key, hand in in_hand.items():
            pid = pids.get(hand.slot.address)
            if pid is None or pid == os.getpid():
                continue
            held = self._tree.subtree(sample, pid)
            if best is None or held > best[0]:
                best = (held, key, hand, pid)
        if best is None:
            if in_hand and "<no slot>" not in self._warned:
                self._warned.add("<no slot>")
                logger.error("worker %s is over its hard memory limit, but its slots run in its main process "
                             "and cannot be stopped", self._worker)
            return
        held, key, hand, pid = best
        error = WorkerMemoryError(self._describe(hand, held))
        self._stopped[key] = error
        self._stopping = key
        self.n_stopped += 1
        logger.error("%s", error)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # it ended by itself meanwhile

    def _describe(self, hand: Any, held: int) -> str:
        spec: SubtaskSpec = hand.batch[0][0]
        st = spec.subtask
        shape = st.output_shapes[0] if st.output_shapes else None
        others = f" (and {len(hand.batch) - 1} more in its batch)" if len(hand.batch) > 1 else ""
        return (f"worker {self._worker} ran out of memory: subtask {spec.index}{others} of task {spec.task_id} "
                f"({op_name(st.op)}, output chunk of shape {shape}, about {_mib(hand.need.outputs)}; inputs about "
                f"{_mib(hand.need.inputs)}) was stopped when the worker used {_mib(self.used)}, over its hard limit "
                f"of {_mib(self.budget.hard)} (90% of --phy-mem {_mib(self.budget.limit)}); its slot process held "
                f"{_mib(held)}. Give the worker more memory (--phy-mem) or cut the data into smaller chunks")
