"""Where chunk functions spend their time: a statistical profile of each slot's Python stack.

Each slot runner owns a :class:`StackSampler`: a thread of the slot's process
that, while the slot runs subtasks, wakes every :data:`SAMPLE_INTERVAL`
seconds, reads the Python stack of the slot's worker thread
(``sys._current_frames``) and counts it under the subtask's task and
operator in a bounded :class:`ProfileTable`. Only the frames below the
slot's own function that runs one subtask are kept, so a stack starts at
what that subtask did (reading inputs, the operator's ``execute``, the
user's chunk function, storing outputs). An idle slot's sampler sleeps on
an event and costs nothing; the slot pays an attribute write per subtask.

Nothing is sent anywhere by itself: as with the task stream, the web
service asks each worker's execution service for a task's profile when a
page (or a performance report) wants it, and the worker gathers its
slots' tables (:func:`merge_profiles`). The profile of a slot process that
died, or of a worker that was lost, is gone with it.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import CodeType, FrameType
from typing import Any

from .api import op_name

#: seconds between two samples of a busy slot
SAMPLE_INTERVAL = 0.01
#: distinct (task, operator, stack) rows a slot keeps; past it the oldest tasks' rows go
MAX_ROWS = 20_000
#: frames kept per stack, from its root; a deeper stack ends in a frame named TRUNCATED
MAX_DEPTH = 96
#: the frame that stands for the frames cut off a deeper stack
TRUNCATED = ("…", "", 0)
#: code objects whose labels a sampler remembers (labels are made again after it forgets)
_LABEL_CACHE = 20_000

#: a frame's label: (qualified name, file, first line of the function)
Frame = tuple[str, str, int]


@dataclass
class Profile:
    """The samples of one task (or more) on one worker: frames by number, and rows that count stacks.

    ``rows`` are ``(operator, stack, count)`` with ``stack`` a tuple of
    numbers into ``frames``, outermost first. ``interval`` is the mean time
    between two samples as measured (a slot busy in Python holds the GIL, and
    the sampler waits its turn), so ``count * interval`` estimates the time
    spent in a stack.

    Examples
    --------
    >>> p = Profile(0.01, 3, frames=[("f", "a.py", 1), ("g", "a.py", 5)], rows=[("Op", (0, 1), 2), ("Op", (0,), 1)])
    >>> p.to_json()["rows"][0]
    {'op': 'Op', 'stack': [0, 1], 'count': 2}
    """

    interval: float
    samples: int
    frames: list[Frame] = field(default_factory=list)
    rows: list[tuple[str, tuple[int, ...], int]] = field(default_factory=list)
    #: samples a slot dropped because its table was full (older tasks' rows went first)
    dropped: int = 0

    def to_json(self) -> dict:
        """A JSON-able dict: ``interval``, ``samples``, ``dropped``, ``frames`` and ``rows``."""
        return {"interval": self.interval, "samples": self.samples, "dropped": self.dropped,
                "frames": [{"name": n, "file": f, "line": line} for n, f, line in self.frames],
                "rows": [{"op": op, "stack": list(stack), "count": count} for op, stack, count in self.rows]}


def merge_profiles(profiles: Iterable[Profile]) -> Profile:
    """One profile counting the samples of all ``profiles`` (each slot's, or each worker's); its interval is
    their mean, weighted by samples.

    Examples
    --------
    >>> a = Profile(0.01, 2, [("f", "a.py", 1)], [("Op", (0,), 2)])
    >>> b = Profile(0.01, 3, [("g", "b.py", 3), ("f", "a.py", 1)], [("Op", (1,), 1), ("Op", (1, 0), 2)])
    >>> m = merge_profiles([a, b])
    >>> m.samples, m.frames, m.rows
    (5, [('f', 'a.py', 1), ('g', 'b.py', 3)], [('Op', (0,), 3), ('Op', (0, 1), 2)])
    """
    numbers: dict[Frame, int] = {}
    counts: dict[tuple[str, tuple[int, ...]], int] = {}
    samples = dropped = 0
    weighted = 0.0
    for p in profiles:
        samples += p.samples
        dropped += p.dropped
        weighted += p.interval * p.samples
        local = [numbers.setdefault(tuple(f), len(numbers)) for f in p.frames]  # type: ignore[arg-type]
        for op, stack, count in p.rows:
            key = (op, tuple(local[i] for i in stack))
            counts[key] = counts.get(key, 0) + count
    return Profile(weighted / samples if samples else SAMPLE_INTERVAL, samples, list(numbers),
                   [(op, stack, count) for (op, stack), count in counts.items()], dropped)


class ProfileTable:
    """Counts of sampled stacks by (session, task) and (operator, stack), bounded to ``max_rows`` rows.

    Stacks are tuples of frame labels; a full table forgets its oldest
    task's rows (never the task being added) and counts the samples it
    could not keep in ``dropped``.

    Examples
    --------
    >>> t = ProfileTable(max_rows=2)
    >>> for task in ("t1", "t2", "t2"):
    ...     t.add("s", task, "Op", (("f", "a.py", 1),))
    >>> t.profile("s", "t2").samples, t.profile("s", "t1").samples
    (2, 1)
    >>> t.add("s", "t3", "Op", (("g", "a.py", 9),)); t.add("s", "t3", "Add", (("g", "a.py", 9),))
    >>> t.profile("s", None).samples, t.dropped
    (2, 3)
    """

    def __init__(self, max_rows: int = MAX_ROWS, interval: float = SAMPLE_INTERVAL) -> None:
        if max_rows < 1:
            raise ValueError(f"a profile table needs room for at least 1 row, got max_rows={max_rows!r}")
        self.max_rows = max_rows
        self.interval = interval
        self._tasks: dict[tuple[str, str], dict[tuple[str, tuple[Frame, ...]], int]] = {}
        self._n_rows = 0
        self.dropped = 0
        self._periods = (0.0, 0)  # seconds between consecutive samples of a busy slot, and how many
        self._lock = threading.Lock()  # the sampler's thread adds, the slot's event loop reads

    def add(self, session_id: str, task_id: str, op: str, stack: tuple[Frame, ...]) -> None:
        """Count one sample of ``stack`` while ``op`` of the task ran."""
        with self._lock:
            rows = self._tasks.get((session_id, task_id))
            if rows is None:
                rows = self._tasks[(session_id, task_id)] = {}
            key = (op, stack)
            if key in rows:
                rows[key] += 1
                return
            while self._n_rows >= self.max_rows and self._evict((session_id, task_id)):
                pass
            if self._n_rows >= self.max_rows:
                self.dropped += 1  # the task being added fills the table alone
                return
            rows[key] = 1
            self._n_rows += 1

    def observe_period(self, seconds: float) -> None:
        """Note the time between two consecutive samples (the interval is a target; a busy CPU stretches it)."""
        total, n = self._periods
        self._periods = (total + seconds, n + 1)

    @property
    def mean_interval(self) -> float:
        """The mean time between two samples seen so far, or the target interval before there are two."""
        total, n = self._periods
        return total / n if n else self.interval

    def _evict(self, keep: tuple[str, str]) -> bool:
        oldest = next((k for k in self._tasks if k != keep), None)
        if oldest is None:
            return False
        gone = self._tasks.pop(oldest)
        self._n_rows -= len(gone)
        self.dropped += sum(gone.values())
        return True

    def profile(self, session_id: str | None, task_id: str | None) -> Profile:
        """The samples of one task (``task_id``), of a session (``task_id=None``), or of all (both None)."""
        numbers: dict[Frame, int] = {}
        rows = []
        samples = 0
        with self._lock:
            for (sid, tid), counts in self._tasks.items():
                if (session_id is not None and sid != session_id) or (task_id is not None and tid != task_id):
                    continue
                for (op, stack), count in counts.items():
                    rows.append((op, tuple(numbers.setdefault(f, len(numbers)) for f in stack), count))
                    samples += count
        return Profile(self.mean_interval, samples, list(numbers), rows, self.dropped)


class StackSampler:
    """Samples the stack of the thread that runs a slot's subtasks while it runs them.

    ``root`` is the code of the slot's function that runs one subtask: the
    frames below it are a sample's stack (a sample taken outside it, between
    subtasks, is not counted). The thread starts with the sampler and sleeps
    while the slot is idle. Call :meth:`enter` as each subtask starts (from
    the thread that runs it) and :meth:`pause` when the slot goes idle.

    Examples
    --------
    >>> def work():
    ...     t = time.perf_counter()
    ...     while time.perf_counter() - t < 0.1:
    ...         pass
    >>> def run_one():
    ...     work()
    >>> s = StackSampler(root=run_one.__code__, interval=0.005)
    >>> s.enter("s", "t", "MyOp"); run_one(); s.pause()
    >>> p = s.profile("s", "t"); s.close()
    >>> p.samples > 0 and p.frames[p.rows[0][1][-1]][0]
    'work'
    """

    def __init__(self, root: CodeType | None = None, interval: float = SAMPLE_INTERVAL,
                 max_rows: int = MAX_ROWS) -> None:
        if not 0 < interval < 10:
            raise ValueError(f"the sampling interval must be between 0 and 10 seconds, got {interval!r}")
        self.interval = interval
        self.table = ProfileTable(max_rows, interval)
        self._root = root
        #: (thread ident, session id, task id, operator) of the subtask running now
        self._current: tuple[int, str, str, Any] | None = None
        self._busy = threading.Event()
        self._closed = False
        self._labels: dict[CodeType, Frame] = {}
        self._names: dict[type, str] = {}
        self._thread = threading.Thread(target=self._loop, name="mars-profiler", daemon=True)
        self._thread.start()

    def enter(self, session_id: str, task_id: str, op: Any) -> None:
        """The calling thread starts a subtask of ``op`` (an operator, or its name) of the task."""
        self._current = (threading.get_ident(), session_id, task_id, op)
        if not self._busy.is_set():
            self._busy.set()

    def pause(self) -> None:
        """The slot is idle: no samples until the next :meth:`enter`."""
        self._current = None
        self._busy.clear()

    def close(self) -> None:
        """Stop the sampling thread (it ends within one interval)."""
        self._closed = True
        self._current = None
        self._busy.set()

    def profile(self, session_id: str | None = None, task_id: str | None = None) -> Profile:
        """The samples counted so far (see :meth:`ProfileTable.profile`)."""
        return self.table.profile(session_id, task_id)

    def _loop(self) -> None:
        interval = self.interval
        due = last = 0.0
        while True:
            if not self._busy.is_set():
                self._busy.wait()
                due, last = time.monotonic() + interval, 0.0
            if self._closed:
                return
            # on a deadline: the wait for the GIL (a slot running Python holds it) is part of the interval
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            if self.sample() and last:
                self.table.observe_period(time.monotonic() - last)
            now = time.monotonic()
            last, due = now, max(due + interval, now + interval / 2)

    def sample(self) -> bool:
        """Take one sample of the running subtask's stack now; whether one was counted."""
        current = self._current
        if current is None:
            return False
        frame = sys._current_frames().get(current[0])
        stack = self._stack_of(frame) if frame is not None else None
        del frame  # a frame keeps its whole stack's locals alive
        if stack is None or self._current is not current:
            return False  # between subtasks, or the subtask ended while the stack was read
        self.table.add(current[1], current[2], self._op_name(current[3]), stack)
        return True

    def _stack_of(self, frame: FrameType | None) -> tuple[Frame, ...] | None:
        """The labels of ``frame`` and its callers up to ``root`` (excluded), outermost first."""
        labels = []
        root = self._root
        while frame is not None:
            code = frame.f_code
            if code is root:
                break
            labels.append(self._labels.get(code) or self._label(code))
            frame = frame.f_back
        else:
            if root is not None:
                return None
        labels.reverse()
        if len(labels) > MAX_DEPTH:
            labels = labels[:MAX_DEPTH - 1] + [TRUNCATED]
        return tuple(labels)

    def _label(self, code: CodeType) -> Frame:
        if len(self._labels) >= _LABEL_CACHE:
            self._labels.clear()
        label = self._labels[code] = (getattr(code, "co_qualname", code.co_name), code.co_filename, code.co_firstlineno)
        return label

    def _op_name(self, op: Any) -> str:
        if isinstance(op, str):
            return op
        if getattr(op, "steps", None):  # a fused group: named by its steps
            return op_name(op)
        name = self._names.get(type(op))
        if name is None:
            name = self._names[type(op)] = op_name(op)
        return name
