"""The session service's actor: makes and drops sessions on its supervisor, and remembers closed ones."""

from __future__ import annotations

import logging

from ... import oscar as mo
from ..task.api import TaskInfo
from ..task.processor import TaskConfig
from ..task.supervisor import TaskManagerActor
from .api import task_manager_uid
from .history import DEFAULT_SIZE, SessionHistory

logger = logging.getLogger(__name__)


class SessionManagerActor(mo.Actor):
    def __init__(self, task_config: TaskConfig | None = None, history: int = DEFAULT_SIZE) -> None:
        self._task_config = task_config or TaskConfig()
        self._sessions: dict[str, mo.ActorRef] = {}
        self._history = SessionHistory(history)

    async def create_session(self, session_id: str) -> None:
        if session_id in self._sessions:
            return
        self._history.discard(session_id)
        self._sessions[session_id] = await mo.create_actor(
            TaskManagerActor, session_id, self._task_config, uid=task_manager_uid(session_id), address=self.address
        )

    def has_session(self, session_id: str) -> bool:
        return session_id in self._sessions

    async def list_sessions(self) -> list[dict]:
        live = [{**await ref.summary(), "state": "open"} for ref in self._sessions.values()]
        return live + self._history.summaries()

    def closed_tasks(self, session_id: str) -> list[TaskInfo] | None:
        """The tasks of a closed session still listed, or None when it is not."""
        closed = self._history.get(session_id)
        return None if closed is None else closed.tasks

    def closed_task(self, session_id: str, task_id: str) -> TaskInfo | None:
        closed = self._history.get(session_id)
        return None if closed is None else closed.task(task_id)

    def closed_graph(self, session_id: str, task_id: str, level: str) -> dict | None:
        closed = self._history.get(session_id)
        return None if closed is None else closed.graph(task_id, level)

    async def delete_session(self, session_id: str) -> None:
        ref = self._sessions.pop(session_id, None)
        if ref is None:
            return
        try:
            await ref.close()
            await self._remember(session_id, ref)
        finally:
            await mo.destroy_actor(ref)

    async def _remember(self, session_id: str, ref: mo.ActorRef) -> None:
        """Keep what the closed session ran, for the dashboard (a failure loses the record, not the close)."""
        try:
            tasks = await ref.list_tasks()
            graphs = {}
            for t in tasks:
                graphs[t.task_id] = await ref.get_graph(t.task_id, "tileable")
            self._history.add(await ref.summary(), tasks, graphs)
        except Exception:  # noqa: BLE001 - the history is a courtesy
            logger.warning("closed session %s is not kept in the history", session_id, exc_info=True)

    async def __pre_destroy__(self) -> None:
        for sid in list(self._sessions):
            await self.delete_session(sid)
