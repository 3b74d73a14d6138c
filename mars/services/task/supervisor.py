"""The task service's actor: one per session, on the supervisor that holds the session."""

from __future__ import annotations

from typing import Any

from ... import oscar as mo
from ...core.entity import TileableData
from ..execution.api import SubtaskReport
from ..meta.core import ChunkMeta
from .api import TaskInfo
from .naming import check_task_name
from .processor import SessionProcessor, TaskConfig


class TaskManagerActor(mo.Actor):
    """Thin shell over :class:`SessionProcessor`: calls in, I/O out.

    Every method is lock-free: the processor's state changes only between
    awaits, and a client waiting on a task must not hold up workers' reports.
    """

    def __init__(self, session_id: str, config: TaskConfig | None = None) -> None:
        self.session_id = session_id
        self._config = config or TaskConfig()
        self._proc: SessionProcessor | None = None

    async def __post_create__(self) -> None:
        self._proc = SessionProcessor(self.session_id, self.address, self.ref(), self._config)

    @property
    def proc(self) -> SessionProcessor:
        assert self._proc is not None
        return self._proc

    @mo.no_lock
    def submit(self, tileables: list[TileableData], name: str | None = None) -> str:
        if not isinstance(tileables, (list, tuple)) or not all(isinstance(t, TileableData) for t in tileables):
            raise TypeError(f"submit takes a list of tileable data objects, got {type(tileables).__name__}")
        return self.proc.submit(list(tileables), check_task_name(name))

    @mo.no_lock
    async def submit_and_wait(self, tileables: list[TileableData], wait: float, name: str | None = None) -> TaskInfo:
        return await self.proc.wait(self.submit(tileables, name), float(wait))

    @mo.no_lock
    async def get_task(self, task_id: str, wait: float = 0.0) -> TaskInfo:
        return await self.proc.wait(task_id, float(wait))

    @mo.no_lock
    def list_tasks(self) -> list[TaskInfo]:
        return [self.proc.info(t) for t in self.proc.tasks.values()]

    @mo.no_lock
    def get_graph(self, task_id: str, level: str) -> dict:
        return self.proc.graph_json(task_id, level)

    @mo.no_lock
    async def cancel_task(self, task_id: str) -> None:
        await self.proc.run_whole(self.proc.cancel(task_id))

    @mo.no_lock
    async def fetch(self, keys: list[str]) -> list[Any]:
        return await self.proc.fetch(list(keys))

    @mo.no_lock
    async def locate(self, keys: list[str]) -> list[tuple[str | None, Any]]:
        return await self.proc.locate(list(keys))

    @mo.no_lock
    def adopt(self, metas: list[ChunkMeta]) -> None:
        self.proc.adopt(list(metas))

    @mo.no_lock
    async def release(self, keys: list[str]) -> list[str]:
        return await self.proc.run_whole(self.proc.release(list(keys)))  # type: ignore[no-any-return]

    @mo.no_lock
    async def subtasks_done(self, reports: list[SubtaskReport]) -> None:
        await self.proc.run_whole(self.proc.on_reports(reports))

    @mo.no_lock
    def summary(self) -> dict:
        proc = self.proc
        return {"session_id": self.session_id, "supervisor": self.address, "n_tasks": len(proc.tasks),
                "n_chunks": len(proc.meta), "created": proc.created}

    async def close(self) -> None:
        await self.proc.close()
