"""A stand-in for :class:`~mars.services.session.api.SessionAPI` that needs no cluster.

Each mock session computes its tasks in this process with the engine's own
pieces (the :class:`~mars.core.tiling.Tiler`, fusion and the chunk-graph
executor, as the local session does) on a thread, so the event loop stays
free, and fills :class:`~mars.services.task.api.TaskInfo` the way the task
service does: progress, per-target chunk layout, small values inline, the
original exception when a chunk raised. Results live in the mock session's
store, counted per chunk key, until ``release``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import socket
import sys
import threading
import time
import traceback
import uuid
from typing import Any, Sequence

from ...core.entity import ChunkData, Tileable, TileableData, has_unknown
from ...core.executor import ExecutionCancelled, execute_subtasks
from ...core.fusion import fuse
from ...core.graph import build_subtasks
from ...core.options import options
from ...core.tiling import Tiler, wanted
from ...serialization import deserialize, serialize
from ..cluster.core import ALIVE, WorkerInfo, WorkerStatus
from ..cluster.diagnostics import install_log_ring, thread_stacks
from ..errors import DataNotFound, NodeNotFound, SessionNotFound, TaskCancelled, TaskNotFound
from ..task.naming import check_task_name, task_name
from ..task.api import ChunkResult, TaskInfo, TaskStatus, TileableResult
from ..task.graphview import TaskGraph

#: target chunks smaller than this travel inside the final TaskInfo
INLINE_LIMIT = 64 * 1024


def nbytes_of(value: Any) -> int:
    """Bytes a chunk value holds (arrays, pandas objects, scalars; else a rough size)."""
    n = getattr(value, "nbytes", None)
    if isinstance(n, int):
        return n
    usage = getattr(value, "memory_usage", None)
    if callable(usage):
        try:
            return int(usage(index=True).sum())
        except (TypeError, ValueError, AttributeError):
            pass
    return sys.getsizeof(value)


class _Progress:
    """Subtasks finished / known, added up over tiling stages; written from the run's thread."""

    def __init__(self, info: TaskInfo):
        self.info = info
        self.base_done = self.base_total = 0

    def __call__(self, done: int, total: int) -> None:
        info = self.info
        info.n_subtasks = self.base_total + total
        info.n_finished = self.base_done + done
        info.progress = info.n_finished / info.n_subtasks if info.n_subtasks else 0.0

    def stage_done(self, total: int) -> None:
        self.base_done += total
        self.base_total += total


@dataclasses.dataclass
class _Outcome:
    results: list[TileableResult] = dataclasses.field(default_factory=list)
    inline_values: dict[str, Any] = dataclasses.field(default_factory=dict)


class _MockSession:
    """One session's store, result references and tasks."""

    def __init__(self, session_id: str):
        self.session_id = session_id
        self.created = time.time()
        self.store: dict[str, Any] = {}
        self.refs: dict[str, int] = {}
        self.tasks: dict[str, TaskInfo] = {}
        self.graphs: dict[str, TaskGraph] = {}
        self.done: dict[str, asyncio.Future] = {}
        self.cancels: dict[str, threading.Event] = {}
        # runs share the store: one at a time, as a worker slot would take them
        self.run_lock = threading.Lock()
        self.state_lock = threading.Lock()
        self.running = 0
        self.deferred: list[str] = []

    # ------------------------------------------------------------ in the run's thread
    def run(self, targets: list[TileableData], cancel: threading.Event, progress: _Progress) -> _Outcome:
        """Compute ``targets``; returns their layout and small values, with their chunks held."""
        with self.state_lock:
            self.running += 1
        try:
            with self.run_lock:
                self._run(targets, cancel, progress)
            with self.state_lock:
                # held before the run counts as ended, so no deferred release can free them first
                return self._hold(targets)
        finally:
            self._run_ended()

    def _hold(self, targets: list[TileableData]) -> _Outcome:
        outcome = _Outcome()
        seen: set[int] = set()
        for d in targets:
            keys = [c.key for c in d.chunks or ()]
            if id(d) not in seen:  # one reference per target object: the client holds one
                seen.add(id(d))
                for k in keys:
                    self.refs[k] = self.refs.get(k, 0) + 1
            chunks = [ChunkResult(c.key, tuple(c.index), tuple(c.shape)) for c in d.chunks or ()]
            outcome.results.append(TileableResult(d.key, tuple(tuple(s) for s in d.nsplits or ()), chunks))
            for k in keys:
                value = self.store[k]
                if nbytes_of(value) < INLINE_LIMIT:
                    outcome.inline_values[k] = value
        return outcome

    def _run(self, targets: list[TileableData], cancel: threading.Event, progress: _Progress) -> None:
        stage_keys: set[str] = set()

        def run_stage(chunks: Sequence[ChunkData], want_values: Any) -> list[Any] | None:
            self._compute(chunks, cancel, progress)
            stage_keys.update(c.key for c in chunks)
            return [self.store[c.key] for c in wanted(chunks, want_values)] if want_values else None

        target_keys: set[str] = set()
        try:
            Tiler(run_stage).tile(targets)
            chunks = [c for t in targets for c in t.chunks or ()]
            target_keys = {c.key for c in chunks}
            self._compute(chunks, cancel, progress)
        except BaseException:
            # a failed or cancelled run leaves nothing half-made behind
            with self.state_lock:
                self._drop_unheld(target_keys)
            raise
        finally:
            with self.state_lock:
                self._drop_unheld(stage_keys - target_keys)
        for t in targets:
            if has_unknown(t.shape) or any(has_unknown(s) for s in t.nsplits or ()):
                t.refresh_shape()

    def _compute(self, chunks: Sequence[ChunkData], cancel: threading.Event, progress: _Progress) -> None:
        keep = {c.key for c in chunks}
        subtasks = fuse(build_subtasks(chunks, self.store.__contains__), keep)
        shapes = execute_subtasks(
            subtasks, self.store, keep, n_threads=options.effective_threads(), on_done=progress, cancel=cancel
        )
        progress.stage_done(len(subtasks))
        for c in chunks:
            if has_unknown(c.shape) and c.key in shapes:
                c.shape = tuple(shapes[c.key])

    def _drop_unheld(self, keys: set[str]) -> None:
        """Free ``keys`` that no result holds (the caller has ``state_lock``)."""
        for k in keys:
            if k not in self.refs:
                self.store.pop(k, None)

    def _run_ended(self) -> None:
        with self.state_lock:
            self.running -= 1
            if self.running == 0:
                self._drop_unheld(set(self.deferred))
                self.deferred.clear()

    # ------------------------------------------------------------ in the event loop
    def release(self, keys: Sequence[str]) -> list[str]:
        with self.state_lock:
            freed, held = [], []
            for k in keys:
                n = self.refs.get(k)
                if n is None:
                    continue
                held.append(k)
                if n <= 1:
                    del self.refs[k]
                    freed.append(k)
                else:
                    self.refs[k] = n - 1
            if self.running:  # a run may read them: freed when it ends
                self.deferred.extend(freed)
            else:
                self._drop_unheld(set(freed))
        return held


class MockSessionAPI:
    """SessionAPI's async methods, computed in this process.

    Examples
    --------
    >>> import mars.tensor as mt
    >>> async def demo():
    ...     api = MockSessionAPI()
    ...     sid = await api.create_session()
    ...     tid = await api.submit(sid, [(mt.ones(3) + 1).data])
    ...     info = await api.get_task(sid, tid, wait=10)
    ...     return info.status.value, list(info.inline_values.values())[0].tolist()
    >>> asyncio.run(demo())
    ('succeeded', [2.0, 2.0, 2.0])
    """

    def __init__(self, supervisors: Sequence[str] | None = None):
        self.supervisors = list(supervisors or ["mock-supervisor"])
        self._started = time.time()
        self._sessions: dict[str, _MockSession] = {}

    def _session(self, session_id: str) -> _MockSession:
        try:
            return self._sessions[session_id]
        except KeyError:
            raise SessionNotFound.named(session_id) from None

    def _task(self, session_id: str, task_id: str) -> TaskInfo:
        tasks = self._session(session_id).tasks  # SessionNotFound is a KeyError too: not caught below
        try:
            return tasks[task_id]
        except KeyError:
            raise TaskNotFound(f"no task {task_id!r} in session {session_id!r}") from None

    async def create_session(self, session_id: str | None = None) -> str:
        session_id = session_id or uuid.uuid4().hex
        if session_id not in self._sessions:  # making one that exists is a no-op
            self._sessions[session_id] = _MockSession(session_id)
        return session_id

    async def delete_session(self, session_id: str) -> None:
        """Cancel the session's tasks and drop its results; a session not held is no error."""
        sess = self._sessions.get(session_id)
        if sess is None:
            return
        for event in sess.cancels.values():
            event.set()
        # its store goes with the object, once the runs still in hand let go of it
        del self._sessions[session_id]

    async def has_session(self, session_id: str) -> bool:
        return session_id in self._sessions

    async def list_sessions(self) -> list[dict]:
        return [
            {
                "session_id": s.session_id,
                "supervisor": self.supervisors[0],
                "n_tasks": len(s.tasks),
                "n_chunks": len(s.store),
                "created": s.created,
                "state": "open",
            }
            for s in self._sessions.values()
        ]

    async def submit(self, session_id: str, tileables: list, name: str | None = None) -> str:
        """Start computing ``tileables`` (tileable data objects); returns the task id."""
        sess = self._session(session_id)
        datas = [t.data if isinstance(t, Tileable) else t for t in tileables]
        bad = [type(d).__name__ for d in datas if not isinstance(d, TileableData)]
        if bad:
            raise TypeError(f"submit() takes tileable data objects, got {', '.join(bad)}")
        # the cluster computes on its own copy, never on the caller's objects
        header, buffers = serialize(datas)
        datas = deserialize(header, buffers)
        task_id = uuid.uuid4().hex
        info = TaskInfo(task_id, session_id, TaskStatus.running, start_time=time.time(), name=check_task_name(name) or task_name(datas))
        info.tileable_progress = {d.key: 0.0 for d in datas}
        loop = asyncio.get_running_loop()
        sess.tasks[task_id] = info
        sess.graphs[task_id] = TaskGraph(datas)
        sess.done[task_id] = loop.create_future()
        cancel = sess.cancels[task_id] = threading.Event()
        job = loop.run_in_executor(None, sess.run, datas, cancel, _Progress(info))
        job.add_done_callback(lambda f: self._finish(sess, info, datas, f))
        return task_id

    def _finish(self, sess: _MockSession, info: TaskInfo, datas: list[TileableData], job: asyncio.Future) -> None:
        sess.cancels.pop(info.task_id, None)
        exc = ExecutionCancelled("the loop shut down") if job.cancelled() else job.exception()
        info.end_time = time.time()
        if exc is None:
            outcome = job.result()
            info.results, info.inline_values = outcome.results, outcome.inline_values
            info.tileable_progress = {d.key: 1.0 for d in datas}
            info.status, info.progress = TaskStatus.succeeded, 1.0
        elif isinstance(exc, ExecutionCancelled):
            info.status = TaskStatus.cancelled
            info.error = TaskCancelled(f"task {info.task_id} was cancelled")
        else:
            info.status = TaskStatus.failed
            info.error = exc
            info.error_traceback = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        graph = sess.graphs.get(info.task_id)
        if graph is not None:
            graph.freeze(info.status.value, lambda key: False)
        done = sess.done.get(info.task_id)
        if done is not None and not done.done():
            done.set_result(None)

    async def get_task(self, session_id: str, task_id: str, wait: float = 0.0) -> TaskInfo:
        """A snapshot of the task's state, after waiting up to ``wait`` seconds for it to finish."""
        info = self._task(session_id, task_id)
        if wait > 0 and not info.status.is_done:
            await asyncio.wait([self._sessions[session_id].done[task_id]], timeout=wait)
        return _snapshot(info)

    async def list_tasks(self, session_id: str) -> list[TaskInfo]:
        return [_snapshot(info) for info in self._session(session_id).tasks.values()]

    async def cancel_task(self, session_id: str, task_id: str) -> None:
        self._task(session_id, task_id)
        event = self._sessions[session_id].cancels.get(task_id)
        if event is not None:
            event.set()

    async def fetch(self, session_id: str, keys: list[str]) -> list[Any]:
        """Values of chunks by key; :class:`DataNotFound` names the first key not held."""
        store = self._session(session_id).store
        for k in keys:
            if k not in store:
                raise DataNotFound(f"chunk {k} is not held by session {session_id!r} (released, or never computed)")
        return [store[k] for k in keys]

    async def describe(self, session_id: str, keys: list[str]) -> list[None]:
        """No chunk is in shared memory here: every key is for :meth:`fetch`."""
        self._session(session_id)
        return [None] * len(keys)

    async def release(self, session_id: str, keys: list[str]) -> list[str]:
        """Drop one reference per key; returns the keys the session held."""
        return self._session(session_id).release(keys)

    async def get_task_graph(self, session_id: str, task_id: str, level: str) -> dict:
        """The task's tileable graph (the mock runs no subtasks on workers: that level is empty)."""
        info = self._task(session_id, task_id)
        graph = self._session(session_id).graphs[task_id]
        return {"task_id": task_id, "session_id": session_id, "status": info.status.value,
                **graph.to_json(level, info.status.value, lambda key: False)}

    async def get_workers(self) -> list[dict]:
        """One worker, this process, in the cluster service's JSON shape."""
        n_cpu = options.effective_threads()
        info = WorkerInfo("mock-worker", n_cpu, 0, os.getpid(), socket.gethostname(), started=self._started)
        return [WorkerStatus(info, None, ALIVE, last_heartbeat=time.time()).to_json()]

    async def get_worker(self, address: str) -> dict:
        for w in await self.get_workers():
            if w["address"] == address:
                return w
        raise NodeNotFound(f"no worker {address!r} in this cluster (see GET /api/cluster/workers)")

    async def get_cluster(self) -> dict:
        workers = await self.get_workers()
        supervisors = [{"address": a, "state": "alive", "hostname": socket.gethostname(), "pid": os.getpid(),
                        "started": self._started, "n_cpu": os.cpu_count(), "cpu_usage": None, "memory_used": None,
                        "memory_total": None, "n_sessions": len(self._sessions), "error": None}
                       for a in self.supervisors]
        return {"time": time.time(), "supervisors": supervisors, "workers": workers,
                "n_workers": {"alive": len(workers), "lost": 0}}

    async def _node(self, kind: str, address: str) -> None:
        known = self.supervisors if kind == "supervisor" else [w["address"] for w in await self.get_workers()]
        if address not in known:
            raise NodeNotFound(f"no {kind} {address!r} in this cluster")

    async def get_node_logs(self, kind: str, address: str, limit: int) -> dict:
        """This process's log records: the mock's every node is this process."""
        await self._node(kind, address)
        records = [{"time": t, "level": level, "logger": name, "message": message, "process": "main",
                    "pid": os.getpid()} for t, level, name, message in install_log_ring().tail(limit)]
        return {"address": address, "records": records, "errors": []}

    async def get_node_stacks(self, kind: str, address: str) -> dict:
        await self._node(kind, address)
        process = {"process": "main", "address": address, "pid": os.getpid(), "threads": thread_stacks()}
        return {"address": address, "time": time.time(), "processes": [process], "errors": []}


def _snapshot(info: TaskInfo) -> TaskInfo:
    """A copy the caller may keep while the run goes on updating the original."""
    return dataclasses.replace(
        info,
        results=list(info.results),
        inline_values=dict(info.inline_values),
        tileable_progress=dict(info.tileable_progress),
    )
