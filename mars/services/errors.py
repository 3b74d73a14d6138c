"""Every error that the services raise themselves derives from :class:`ServiceError`."""

from __future__ import annotations


class ServiceError(Exception):
    """Root of the services' own errors."""


class NoWorkersError(ServiceError, TimeoutError):
    """A job waited for workers to register and none did within the timeout."""


class NoGPUWorkersError(ServiceError, RuntimeError):
    """A job has GPU subtasks and no worker of the cluster has a GPU slot."""


class SessionNotFound(ServiceError, KeyError):
    """A call named a session that the cluster does not hold (closed, or never made)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "session not found"

    @classmethod
    def named(cls, session_id: str) -> SessionNotFound:
        """The error for ``session_id``, with the reasons a session can be missing."""
        return cls(f"no session {session_id!r} on this cluster (closed, never made, or held by a supervisor "
                   "that has restarted since)")


class TaskNotFound(ServiceError, KeyError):
    """A call named a task that the session does not hold."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "task not found"


class DataNotFound(ServiceError, KeyError):
    """Chunk data that a call needs is not held by the cluster (freed, or never computed)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "data not found"


class TaskCancelled(ServiceError):
    """The task was cancelled before it finished."""


class WorkerLost(ServiceError):
    """A worker that held or was computing data went away."""


class NodeNotFound(ServiceError, KeyError):
    """A call named a worker or supervisor that the cluster does not know."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "node not found"


class WorkerMemoryError(ServiceError, MemoryError):
    """A subtask was stopped because its worker's memory passed the hard limit (90% of ``--phy-mem``).

    The message names the subtask's operator, the size of its chunks, the
    memory its slot process used and the worker's limit. Running the same
    subtask again on the same worker would fail the same way: it is not retried.
    """
