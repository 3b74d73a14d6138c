"""The sessions of a cluster, as clients and the web service reach them.

A session lives on one supervisor, picked from the session id so that every
supervisor's web port finds it without asking the others; its tasks, chunk
meta and result lifetimes live there too. :class:`SessionAPI` is the typed
face of that: the web service calls it for HTTP clients, and a client in a
process that can reach the supervisors calls it directly.
"""

from __future__ import annotations

import uuid
import zlib
from collections.abc import Sequence
from typing import Any

from ... import oscar as mo
from ..errors import SessionNotFound
from ..task.api import TaskInfo

SESSION_MANAGER_UID = "session_manager"


def task_manager_uid(session_id: str) -> str:
    return f"task_manager/{session_id}"


def owner_of(session_id: str, supervisors: Sequence[str]) -> str:
    """The supervisor that holds ``session_id``: the same answer on every node."""
    ordered = sorted(supervisors)
    return ordered[zlib.crc32(session_id.encode()) % len(ordered)]


class SessionAPI:
    """Create sessions, submit tasks, wait on them, fetch and release results.

    Examples
    --------
    >>> api = SessionAPI(["127.0.0.1:7001"])   # doctest: +SKIP
    >>> sid = await api.create_session()        # doctest: +SKIP
    """

    def __init__(self, supervisors: Sequence[str]):
        if not supervisors:
            raise ValueError("SessionAPI needs at least one supervisor address, got none")
        self.supervisors = list(supervisors)

    def _manager(self, session_id: str) -> mo.ActorRef:
        return mo.ActorRef(owner_of(session_id, self.supervisors), SESSION_MANAGER_UID)

    def _tasks(self, session_id: str) -> mo.ActorRef:
        return mo.ActorRef(owner_of(session_id, self.supervisors), task_manager_uid(session_id))

    async def _call(self, session_id: str, method: str, *args: Any) -> Any:
        try:
            return await getattr(self._tasks(session_id), method)(*args)
        except mo.ActorNotExist:
            raise SessionNotFound(f"no session {session_id!r} on this cluster (closed, or never made)") from None

    async def create_session(self, session_id: str | None = None) -> str:
        session_id = session_id or uuid.uuid4().hex
        await self._manager(session_id).create_session(session_id)
        return session_id

    async def delete_session(self, session_id: str) -> None:
        await self._manager(session_id).delete_session(session_id)

    async def has_session(self, session_id: str) -> bool:
        return await self._manager(session_id).has_session(session_id)

    async def list_sessions(self) -> list[dict]:
        """Every supervisor's sessions: ``{"session_id", "supervisor", "n_tasks", "created"}``."""
        out: list[dict] = []
        for address in self.supervisors:
            out.extend(await mo.ActorRef(address, SESSION_MANAGER_UID).list_sessions())
        return out

    async def submit(self, session_id: str, tileables: list) -> str:
        """Start a task computing ``tileables`` (tileable data objects); returns its id."""
        return await self._call(session_id, "submit", tileables)

    async def submit_and_wait(self, session_id: str, tileables: list, wait: float) -> TaskInfo:
        """Start a task and wait up to ``wait`` seconds for it: a small job is one round trip."""
        return await self._call(session_id, "submit_and_wait", tileables, wait)

    async def get_task(self, session_id: str, task_id: str, wait: float = 0.0) -> TaskInfo:
        """The task's state; waits up to ``wait`` seconds for it to finish first."""
        return await self._call(session_id, "get_task", task_id, wait)

    async def list_tasks(self, session_id: str) -> list[TaskInfo]:
        return await self._call(session_id, "list_tasks")

    async def cancel_task(self, session_id: str, task_id: str) -> None:
        await self._call(session_id, "cancel_task", task_id)

    async def fetch(self, session_id: str, keys: list[str]) -> list[Any]:
        """Values of chunks by key (computed, and not released)."""
        return await self._call(session_id, "fetch", keys)

    async def release(self, session_id: str, keys: list[str]) -> None:
        """The client dropped its objects holding these chunks: one reference each goes."""
        await self._call(session_id, "release", keys)

    async def get_workers(self) -> list[dict]:
        """The cluster's workers as JSON-able dicts (see the cluster service)."""
        from ..cluster.api import ClusterAPI

        return [w.to_json() for w in await ClusterAPI(self.supervisors[0]).get_workers(include_lost=True)]
