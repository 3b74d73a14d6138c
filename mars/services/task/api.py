"""What a task looks like from outside the task service: dataclasses of its state.

A *task* is one ``execute()`` of some tileables in a session: the supervisor
tiles them (in stages when an op needs data first), fuses and splits the
chunk graph into subtasks, and schedules them on workers. Clients poll or wait
on :class:`TaskInfo`; when a task succeeds, :class:`TileableResult` tells the
client how each target was cut into chunks so that it can fetch and assemble.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class TaskStatus(str, enum.Enum):
    pending = "pending"
    running = "running"
    succeeded = "succeeded"
    failed = "failed"
    cancelled = "cancelled"

    @property
    def is_done(self) -> bool:
        return self in (TaskStatus.succeeded, TaskStatus.failed, TaskStatus.cancelled)


@dataclass
class ChunkResult:
    key: str
    index: tuple
    shape: tuple


@dataclass
class TileableResult:
    """How a target tileable was cut: its chunks (in order) and its nsplits."""

    key: str
    nsplits: tuple
    chunks: list[ChunkResult]


@dataclass
class TaskInfo:
    task_id: str
    session_id: str
    status: TaskStatus
    #: subtasks finished / subtasks known so far (stages add subtasks as tiling goes on)
    progress: float = 0.0
    n_subtasks: int = 0
    n_finished: int = 0
    start_time: float = 0.0
    end_time: float | None = None
    #: a line for the user while the task cannot make progress (e.g. no workers yet)
    message: str = ""
    #: the error, as itself when it could be pickled (else a RemoteError naming it)
    error: BaseException | None = None
    error_traceback: str = ""
    #: per target, once succeeded
    results: list[TileableResult] = field(default_factory=list)
    #: small target chunk values shipped with the final info, by key (saves a fetch)
    inline_values: dict[str, Any] = field(default_factory=dict)
    #: progress of each target tileable by key (0..1)
    tileable_progress: dict[str, float] = field(default_factory=dict)
    #: what the task computes, readably (see naming.py)
    name: str = ""

    def to_json(self) -> dict:
        """The JSON shape the web API uses (no values, no exception objects)."""
        return {
            "task_id": self.task_id,
            "session_id": self.session_id,
            "name": self.name,
            "status": self.status.value,
            "progress": self.progress,
            "n_subtasks": self.n_subtasks,
            "n_finished": self.n_finished,
            "start_time": self.start_time,
            "end_time": self.end_time,
            "message": self.message,
            "error": None if self.error is None else f"{type(self.error).__name__}: {self.error}",
            "error_traceback": self.error_traceback,
            "tileable_progress": self.tileable_progress,
        }
