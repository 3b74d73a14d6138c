"""Sessions that have closed, kept for the dashboard: their summaries, tasks and tileable graphs.

A client that exits closes its session, and its data goes with it; what it
ran stays listed for the last ``size`` sessions of each supervisor, so a
person opening the dashboard afterwards still sees the jobs, their names,
times, errors and graphs. Results and subtask graphs are not kept.
"""

from __future__ import annotations

import collections
import dataclasses
import time

from ..errors import TaskNotFound
from ..task.api import TaskInfo

#: closed sessions a supervisor keeps listing, unless configured otherwise
DEFAULT_SIZE = 50


@dataclasses.dataclass
class ClosedSession:
    summary: dict
    tasks: list[TaskInfo]
    graphs: dict[str, dict]  # task id -> its tileable-level graph, as the web API answers it

    def task(self, task_id: str) -> TaskInfo:
        for info in self.tasks:
            if info.task_id == task_id:
                return info
        raise TaskNotFound(f"no task {task_id!r} in closed session {self.summary['session_id']!r}")

    def graph(self, task_id: str, level: str) -> dict:
        self.task(task_id)
        if level != "tileable" or task_id not in self.graphs:
            raise TaskNotFound(f"session {self.summary['session_id']!r} is closed: only its tasks' tileable "
                               f"graphs are kept, not the {level} graph of {task_id!r}")
        return self.graphs[task_id]


class SessionHistory:
    """The last ``size`` closed sessions, oldest dropped first (``size`` 0 keeps none).

    >>> h = SessionHistory(1)
    >>> h.add({"session_id": "a"}, [], {}); h.add({"session_id": "b"}, [], {})
    >>> [s["session_id"] for s in h.summaries()], h.get("a") is None
    (['b'], True)
    """

    def __init__(self, size: int = DEFAULT_SIZE):
        if size < 0:
            raise ValueError(f"the session history size must be >= 0, got {size}")
        self._closed: collections.OrderedDict[str, ClosedSession] = collections.OrderedDict()
        self.size = size

    def add(self, summary: dict, tasks: list[TaskInfo], graphs: dict[str, dict]) -> None:
        if self.size == 0:
            return
        summary = {**summary, "state": "closed", "closed": time.time(), "n_chunks": 0}
        light = [dataclasses.replace(t, inline_values={}, results=[]) for t in tasks]  # the data went with it
        self._closed.pop(summary["session_id"], None)
        self._closed[summary["session_id"]] = ClosedSession(summary, light, graphs)
        while len(self._closed) > self.size:
            self._closed.popitem(last=False)

    def get(self, session_id: str) -> ClosedSession | None:
        return self._closed.get(session_id)

    def discard(self, session_id: str) -> None:
        """A session opened again under the same id is live, not history."""
        self._closed.pop(session_id, None)

    def summaries(self) -> list[dict]:
        return [c.summary for c in self._closed.values()]
