"""The chunk-graph executor: runs subtasks on a thread pool, freeing as it goes.

numpy releases the GIL in its kernels, so threads give real parallelism. The
calling thread works too, and helper threads are kept between runs, so a tiny
graph runs without any thread handoff. Workers do their own bookkeeping under
one lock: pick the ready subtask that comes first in depth-first order, run
it, store its outputs, and drop every input that no pending subtask needs
(unless the caller asked to keep it).

The same executor runs a worker's share of a graph in the distributed
runtime: it only sees :class:`~mars.core.graph.Subtask` objects and a store.
"""

from __future__ import annotations

import heapq
import queue
import threading
import time
from typing import Any, Callable, MutableMapping, Sequence

from .device import run_op
from .graph import Subtask, index_graph


#: subtasks faster than this on average are taken in batches of up to _MAX_BATCH
_BATCH_BELOW_SECONDS = 200e-6
_MAX_BATCH = 64
#: graphs that make or read fewer elements than this start in the calling thread alone,
#: and get helper threads only once a subtask took longer than _SLOW_SUBTASK_SECONDS
_SMALL_GRAPH_ELEMENTS = 100_000
_SLOW_SUBTASK_SECONDS = 1e-3


class ExecutionCancelled(Exception):
    """The run was cancelled before it finished."""


class _Helpers:
    """Daemon threads lent to runs; a run returns them when it ends."""

    def __init__(self) -> None:
        self._idle: list[queue.SimpleQueue] = []
        self._lock = threading.Lock()

    def lend(self, run: _Run, n: int) -> None:
        for _ in range(n):
            with self._lock:
                inbox = self._idle.pop() if self._idle else None
            if inbox is None:
                inbox = queue.SimpleQueue()
                threading.Thread(target=self._serve, args=(inbox,), daemon=True, name="mars-chunk").start()
            inbox.put(run)

    def _serve(self, inbox: queue.SimpleQueue) -> None:
        while True:
            run = inbox.get()
            try:
                run.work(helper=True)
            finally:
                with self._lock:
                    self._idle.append(inbox)


_HELPERS = _Helpers()


class _Run:
    def __init__(
        self,
        subtasks: Sequence[Subtask],
        store: MutableMapping[str, Any],
        keep: set[str],
        on_done: Callable[[int, int], None] | None,
        cancel_event: threading.Event | None = None,
        release: set[str] = frozenset(),  # type: ignore[assignment]
    ):
        self.cancel_event = cancel_event
        self.release = release
        self.subtasks = list(subtasks)
        self.store = store
        self.keep = keep
        self.on_done = on_done
        self.cond = threading.Condition()
        self.error: BaseException | None = None
        self.cancelled = False
        self.shapes: dict[str, tuple] = {}
        self.finished = 0
        self.active_workers = 0
        self.avg_cost = float("inf")  # unknown until a subtask ran: no batching before that
        self.spare_helpers = 0  # helpers not lent yet, for a graph thought small
        self._index(store)

    def _index(self, store: MutableMapping[str, Any]) -> None:
        index = index_graph(self.subtasks, store.__contains__)
        self.refs, self.consumers, self.waiting = index.refs, index.consumers, index.waiting
        # only data made by this run (or that the caller hands over) is freed; other data stays
        self.owned = (index.producer | (self.release & index.refs.keys())) - self.keep
        self.ready = [i for i, n in enumerate(self.waiting) if n == 0]
        heapq.heapify(self.ready)

    def work(self, helper: bool = False) -> None:
        cond = self.cond
        with cond:
            self.active_workers += 1
            try:
                self._loop(cond)
            except BaseException as e:
                # e.g. Ctrl-C while the calling thread waits, or a failing progress callback:
                # the run stops everywhere; a helper hands the error to the caller
                self.cancelled = True
                if not helper:
                    raise
                if self.error is None:
                    self.error = e
            finally:
                self.active_workers -= 1
                cond.notify_all()

    def _loop(self, cond: threading.Condition) -> None:
        total = len(self.subtasks)
        while self.error is None and not self.cancelled and self.finished < total:
            if self.cancel_event is not None and self.cancel_event.is_set():
                self.cancelled = True
                break
            if not self.ready:
                cond.wait()
                continue
            batch = [heapq.heappop(self.ready) for _ in range(self._batch_size())]
            cond.release()
            try:
                started = time.perf_counter()
                results = [self._execute(self.subtasks[i]) for i in batch]
                cost = (time.perf_counter() - started) / len(batch)
            except BaseException as e:  # noqa: BLE001 - handed to the caller as is
                cond.acquire()
                if self.error is None:
                    self.error = e
                cond.notify_all()
                return
            cond.acquire()
            self.avg_cost = cost if self.avg_cost == float("inf") else 0.8 * self.avg_cost + 0.2 * cost
            for i, result in zip(batch, results):
                self._complete(i, self.subtasks[i], result)
            del results
            if self.spare_helpers and self.avg_cost > _SLOW_SUBTASK_SECONDS and self.ready:
                _HELPERS.lend(self, self.spare_helpers)
                self.spare_helpers = 0
            if self.on_done is not None:
                self.on_done(self.finished, total)
            cond.notify_all() if len(self.ready) > 1 or self.finished == total else cond.notify()

    def _batch_size(self) -> int:
        """Tiny subtasks are taken several at a time, so the lock is not the bottleneck."""
        if self.avg_cost > _BATCH_BELOW_SECONDS:
            return 1
        return max(1, min(_MAX_BATCH, len(self.ready) // (2 * max(self.active_workers, 1))))

    def _execute(self, st: Subtask) -> Any:
        # inputs cannot be freed while this subtask is pending, so reading without the lock is safe
        store = self.store
        return run_op(st.op, [store[k] for k in st.input_keys])

    def _complete(self, i: int, st: Subtask, result: Any) -> None:
        outs = st.output_keys
        values = (result,) if len(outs) == 1 else result
        for k, v in zip(outs, values):
            self.store[k] = v
            shape = getattr(v, "shape", None)
            if shape is not None:
                self.shapes[k] = shape
            for c in self.consumers.get(k, ()):
                self.waiting[c] -= 1
                if self.waiting[c] == 0:
                    heapq.heappush(self.ready, c)
        for k in set(st.input_keys):
            self.refs[k] -= 1
            if self.refs[k] == 0 and k in self.owned:
                self.store.pop(k, None)
        for k in outs:
            if k not in self.refs and k in self.owned:
                self.store.pop(k, None)  # nobody reads it and nobody asked for it
        self.finished += 1

    def wait(self) -> None:
        with self.cond:
            while self.active_workers or (self.error is None and not self.cancelled and self.finished < len(self.subtasks)):
                self.cond.wait()


def execute_subtasks(
    subtasks: Sequence[Subtask],
    store: MutableMapping[str, Any],
    keep: set[str],
    n_threads: int = 1,
    on_done: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
    work_in_caller: bool = True,
    release: set[str] = frozenset(),  # type: ignore[assignment]
) -> dict[str, tuple]:
    """Run ``subtasks`` reading and writing ``store``; returns the outputs' shapes by key.

    Keys in ``keep`` stay in ``store`` afterwards; other outputs are dropped
    as soon as nothing pending reads them. The first exception raised by a
    chunk function is raised here, with its traceback; ``cancel`` (an event)
    stops the run between subtasks with :class:`ExecutionCancelled` (a run
    waiting on a long subtask notices when that subtask ends). Keys in
    ``release`` were in ``store`` before and may go once nothing pending
    reads them (a tiling stage's chunks, needed only by this run).
    """
    if not subtasks:
        return {}
    run = _Run(subtasks, store, keep, on_done, cancel, release)
    helpers = min(n_threads, len(subtasks)) - (1 if work_in_caller else 0)
    if work_in_caller and estimated_elements(subtasks, store) < _SMALL_GRAPH_ELEMENTS:
        # waking a thread would cost more than a small graph; helpers join later
        # only if its subtasks turn out slow (e.g. Python functions on small data)
        run.spare_helpers, helpers = helpers, 0
    if helpers > 0:
        _HELPERS.lend(run, helpers)
    try:
        if work_in_caller:
            run.work()
        run.wait()
    except BaseException:
        with run.cond:
            run.cancelled = True
        run.wait()  # helpers finish the subtask in hand, then stop
        _drop_owned(run)
        raise
    if run.error is not None:
        _drop_owned(run)
        raise run.error
    if run.cancelled:
        _drop_owned(run)
        raise ExecutionCancelled("execution was cancelled")
    return run.shapes


def estimated_elements(subtasks: Sequence[Subtask], store: MutableMapping[str, Any], limit: float = 1e9) -> float:
    """Elements the graph makes or reads from ``store``: a cheap measure of its work."""
    total = 0.0
    for st in subtasks:
        steps = getattr(st.op, "steps", None)
        for inner in steps if steps is not None else (st,):
            for shape in inner.output_shapes:
                total += _elements(shape)
        for k in st.input_keys:
            value = store.get(k)
            total += getattr(value, "size", 1) if value is not None else 0
        if total > limit:
            break
    return total


def _elements(shape: Any) -> float:
    if not shape:
        return 1.0
    n = 1.0
    for d in shape:
        n *= d if d == d else 1e6  # NaN: unknown until run, assume it is large
    return n


def _drop_owned(run: _Run) -> None:
    for k in run.owned:
        run.store.pop(k, None)

