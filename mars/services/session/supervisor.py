"""The session service's actor: makes and drops sessions on its supervisor."""

from __future__ import annotations

from ... import oscar as mo
from ..task.processor import TaskConfig
from ..task.supervisor import TaskManagerActor
from .api import task_manager_uid


class SessionManagerActor(mo.Actor):
    def __init__(self, task_config: TaskConfig | None = None) -> None:
        self._task_config = task_config or TaskConfig()
        self._sessions: dict[str, mo.ActorRef] = {}

    async def create_session(self, session_id: str) -> None:
        if session_id in self._sessions:
            return
        self._sessions[session_id] = await mo.create_actor(
            TaskManagerActor, session_id, self._task_config, uid=task_manager_uid(session_id), address=self.address
        )

    def has_session(self, session_id: str) -> bool:
        return session_id in self._sessions

    async def list_sessions(self) -> list[dict]:
        return [await ref.summary() for ref in self._sessions.values()]

    async def delete_session(self, session_id: str) -> None:
        ref = self._sessions.pop(session_id, None)
        if ref is None:
            return
        try:
            await ref.close()
        finally:
            await mo.destroy_actor(ref)

    async def __pre_destroy__(self) -> None:
        for sid in list(self._sessions):
            await self.delete_session(sid)
