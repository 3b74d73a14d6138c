"""What a worker's slots ran, when, and for how long: the task stream's record on each worker.

The execution actor tells a :class:`StreamRecorder` about every subtask a
slot ran (start and end on the worker's clock, its operator, chunk keys,
output sizes), every fetch of inputs from other workers that a batch waited
for (a *transfer*), and every chunk its cache wrote to disk (a *spill*). The
recorder keeps the newest :data:`STREAM_CAPACITY` events in a ring buffer
(older ones are dropped, and counted), a histogram of subtask durations, and
the bytes received from each other worker. Nothing is sent anywhere by
itself: the web service asks for events in batches, by sequence number or
time, when someone looks (see :mod:`mars.services.web.observe`), so a worker
that nobody watches pays only for appending a tuple per subtask.
"""

from __future__ import annotations

import bisect
import itertools
from collections import deque
from typing import Any, NamedTuple

#: events each worker keeps; the oldest go first
STREAM_CAPACITY = 100_000
#: most events one call returns
MAX_BATCH = 50_000
#: chunk keys kept per event (a shuffle's subtask may read hundreds)
MAX_KEYS = 8
#: upper bounds, in seconds, of the subtask-duration histogram's buckets (the last one, +Inf, is implied)
DURATION_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 60.0)

SUBTASK, TRANSFER, SPILL = "subtask", "transfer", "spill"


class StreamEvent(NamedTuple):
    """One bar of the task stream (a NamedTuple: recording one costs a tuple, not an object)."""

    seq: int
    kind: str  # SUBTASK, TRANSFER or SPILL
    session_id: str
    task_id: str
    #: the slot's number on its worker; -1 for what is not a slot's (spills)
    slot: int
    start: float  # unix seconds, by the worker's clock
    end: float
    #: the operator (subtasks), "fetch" (transfers) or "spill"
    name: str
    #: the subtask's number within its task; -1 when none
    subtask_index: int
    keys: tuple
    nbytes: int
    error: bool = False
    #: where a transfer came from (a worker's address); "" otherwise
    peer: str = ""

    def to_json(self, worker: str) -> dict:
        """A JSON-able dict naming ``worker``; ``id`` is unique in the cluster."""
        return {"id": f"{worker}#{self.seq}", "kind": self.kind, "worker": worker, "slot": self.slot,
                "session_id": self.session_id, "task_id": self.task_id, "start": self.start, "end": self.end,
                "name": self.name, "index": self.subtask_index, "keys": list(self.keys), "nbytes": self.nbytes,
                "error": self.error, "peer": self.peer}


class DurationHistogram:
    """Counts of subtask durations by bucket, cumulative as Prometheus has them.

    Examples
    --------
    >>> h = DurationHistogram((0.1, 1.0))
    >>> for d in (0.05, 0.5, 3.0): h.observe(d)
    >>> h.snapshot()
    {'le': [0.1, 1.0], 'counts': [1, 2, 3], 'sum': 3.55}
    """

    def __init__(self, bounds: tuple[float, ...] = DURATION_BUCKETS) -> None:
        if list(bounds) != sorted(set(bounds)) or not bounds:
            raise ValueError(f"histogram bounds must be increasing and distinct, got {bounds!r}")
        self.bounds = tuple(float(b) for b in bounds)
        self._counts = [0] * (len(bounds) + 1)  # per bucket, the last one is +Inf
        self.total = 0.0

    def observe(self, seconds: float) -> None:
        self._counts[bisect.bisect_left(self.bounds, seconds)] += 1
        self.total += seconds

    def snapshot(self) -> dict:
        """``le`` (the bounds), cumulative ``counts`` (one more: +Inf, the total count) and ``sum``."""
        return {"le": list(self.bounds), "counts": list(itertools.accumulate(self._counts)),
                "sum": round(self.total, 9)}


class StreamRecorder:
    """The ring buffer of one worker's events, its duration histogram and its transfer counters.

    Examples
    --------
    >>> rec = StreamRecorder(capacity=2)
    >>> for i in range(3):
    ...     rec.subtask("s", "t", slot=0, start=10.0 + i, end=10.5 + i, name="Add", index=i, keys=("k",), nbytes=8)
    >>> [e.subtask_index for e in rec.events()], rec.dropped
    ([1, 2], 1)
    >>> rec.histogram.snapshot()["counts"][-1]
    3
    """

    def __init__(self, capacity: int = STREAM_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError(f"stream capacity must be at least 1 event, got {capacity!r}")
        self._ring: deque[StreamEvent] = deque(maxlen=capacity)
        self._seq = itertools.count()
        self.dropped = 0
        self.histogram = DurationHistogram()
        #: bytes fetched from each other worker, by its address
        self.received_from: dict[str, int] = {}

    def _add(self, event: StreamEvent) -> None:
        if len(self._ring) == self._ring.maxlen:
            self.dropped += 1
        self._ring.append(event)

    def subtask(self, session_id: str, task_id: str, slot: int, start: float, end: float, name: str, index: int,
                keys: tuple, nbytes: int, error: bool = False) -> None:
        """A subtask ran on ``slot`` from ``start`` to ``end`` (its output ``keys`` and their total size)."""
        self.histogram.observe(end - start)
        if len(keys) > MAX_KEYS:
            keys = keys[:MAX_KEYS]
        self._add(StreamEvent(next(self._seq), SUBTASK, session_id, task_id, slot, start, end, name, index,
                              keys, nbytes, error))

    def transfer(self, session_id: str, task_id: str, slot: int, start: float, end: float, peer: str,
                 keys: tuple, nbytes: int) -> None:
        """``slot`` waited from ``start`` to ``end`` for ``keys`` (``nbytes``) from worker ``peer``."""
        self.received_from[peer] = self.received_from.get(peer, 0) + nbytes
        self._add(StreamEvent(next(self._seq), TRANSFER, session_id, task_id, slot, start, end, "fetch", -1,
                              keys[:MAX_KEYS], nbytes, peer=peer))

    def spill(self, session_id: str, key: str, start: float, end: float, nbytes: int) -> None:
        """The cache wrote chunk ``key`` (``nbytes``) to disk from ``start`` to ``end``."""
        self._add(StreamEvent(next(self._seq), SPILL, session_id, "", -1, start, end, "spill", -1, (key,), nbytes))

    def events(self, session_id: str | None = None, task_id: str | None = None, since: float = 0.0,
               after_seq: int = -1, limit: int = MAX_BATCH) -> list[StreamEvent]:
        """The newest ``limit`` events ending at or after ``since`` with ``seq > after_seq``, oldest first.

        A spill belongs to no task: asked for a task's events, the session's
        spills during them come too.
        """
        out: list[StreamEvent] = []
        for e in reversed(self._ring):
            if e.seq <= after_seq or len(out) >= limit:
                break
            if e.end < since or (session_id is not None and e.session_id != session_id):
                continue
            if task_id is not None and e.task_id != task_id and e.kind != SPILL:
                continue
            out.append(e)
        out.reverse()
        return out

    def stats(self) -> dict[str, Any]:
        """The figures that travel with heartbeats: histogram, bytes received, events kept and dropped."""
        return {"stream_events": len(self._ring), "stream_dropped": self.dropped,
                "bytes_received": sum(self.received_from.values()),
                "received_from": dict(self.received_from), "durations": self.histogram.snapshot()}
