"""The sessions of a cluster, as clients and the web service reach them.

A session lives on one supervisor, picked from the session id so that every
supervisor's web port finds it without asking the others; its tasks, chunk
meta and result lifetimes live there too. :class:`SessionAPI` is the typed
face of that: the web service calls it for HTTP clients, and a client in a
process that can reach the supervisors calls it directly.
"""

from __future__ import annotations

import asyncio
import uuid
import zlib
from collections.abc import Sequence
from typing import Any

from ... import oscar as mo
from ..cluster.supervisor import CLUSTER_UID
from ..errors import DataNotFound, NodeNotFound, SessionNotFound
from ..meta.core import ChunkMeta
from ..storage.shm import StoredObject, get_object
from ..storage.upload import UploadTarget, put_values, upload_chunks
from ..storage.worker import STORAGE_UID
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
        self._not_local: set[str] = set()  # workers whose shared memory this process cannot map

    def _manager(self, session_id: str) -> mo.ActorRef:
        return mo.ActorRef(owner_of(session_id, self.supervisors), SESSION_MANAGER_UID)

    def _tasks(self, session_id: str) -> mo.ActorRef:
        return mo.ActorRef(owner_of(session_id, self.supervisors), task_manager_uid(session_id))

    async def _call(self, session_id: str, method: str, *args: Any) -> Any:
        try:
            return await getattr(self._tasks(session_id), method)(*args)
        except mo.ActorNotExist:
            raise SessionNotFound.named(session_id) from None

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

    async def submit(self, session_id: str, tileables: list, name: str | None = None) -> str:
        """Start a task computing ``tileables`` (tileable data objects); returns its id.

        ``name`` is what the dashboard shows for it (else one made from its operations).
        """
        return await self._call(session_id, "submit", tileables, name)

    async def submit_and_wait(self, session_id: str, tileables: list, wait: float,
                              name: str | None = None) -> TaskInfo:
        """Start a task and wait up to ``wait`` seconds for it: a small job is one round trip."""
        return await self._call(session_id, "submit_and_wait", tileables, wait, name)

    async def get_task(self, session_id: str, task_id: str, wait: float = 0.0) -> TaskInfo:
        """The task's state; waits up to ``wait`` seconds for it to finish first.

        A closed session's tasks are still answered while its supervisor keeps
        it in its history (see history.py).
        """
        try:
            return await self._call(session_id, "get_task", task_id, wait)
        except SessionNotFound:
            return await self._closed(session_id, "closed_task", task_id)

    async def list_tasks(self, session_id: str) -> list[TaskInfo]:
        try:
            return await self._call(session_id, "list_tasks")
        except SessionNotFound:
            return await self._closed(session_id, "closed_tasks")

    async def _closed(self, session_id: str, method: str, *args: Any) -> Any:
        """What the history of closed sessions holds for ``session_id``; SessionNotFound when nothing."""
        found = await getattr(self._manager(session_id), method)(session_id, *args)
        if found is None:
            raise SessionNotFound.named(session_id)
        return found

    async def cancel_task(self, session_id: str, task_id: str) -> None:
        await self._call(session_id, "cancel_task", task_id)

    async def fetch(self, session_id: str, keys: list[str]) -> list[Any]:
        """Values of chunks by key (computed, and not released).

        A caller on a worker's machine maps that worker's shared memory
        itself (zero-copy); others get the values through the supervisor.
        """
        where = await self._call(session_id, "locate", keys)
        values: dict[str, Any] = {}
        by_worker: dict[str, list[str]] = {}
        for k, (worker, value) in zip(keys, where):
            if worker is None:
                values[k] = value
            else:
                by_worker.setdefault(worker, []).append(k)
        remote: list[str] = []
        for worker, ks in by_worker.items():
            local = await self._read_local(session_id, worker, ks)
            if local is None:
                remote.extend(ks)
            else:
                values.update(zip(ks, local))
        if remote:
            values.update(zip(remote, await self._call(session_id, "fetch", remote)))
        return [values[k] for k in keys]

    async def describe(self, session_id: str, keys: list[str]) -> list[StoredObject | None]:
        """Where ``keys`` are, for a caller on a worker's host that maps shared memory itself (a web client).

        Per key: the worker's descriptor when the chunk is in its shared memory
        (valid for :data:`~mars.services.storage.cache.READ_LEASE`: map it now),
        an inline descriptor holding the value when the supervisor keeps it,
        else None (spilled to disk, in device memory, gone): :meth:`fetch` it.
        """
        where = await self._call(session_id, "locate", keys)
        out: list[StoredObject | None] = [None] * len(keys)
        by_worker: dict[str, list[int]] = {}
        for i, (k, (worker, value)) in enumerate(zip(keys, where)):
            if worker is None:
                out[i] = StoredObject(k, 0, b"", (), None, value)
            else:
                by_worker.setdefault(worker, []).append(i)
        for worker, idx in by_worker.items():
            try:
                descs = await mo.ActorRef(worker, STORAGE_UID).get_descs(session_id, [keys[i] for i in idx])
            except (DataNotFound, mo.ActorNotExist):
                continue
            for i, d in zip(idx, descs):
                # a spill file ("/...") or the disk fallback ("@...") is no segment of shared memory
                in_memory = d.device is None and d.shm_name is not None and not d.shm_name.startswith(("/", "@"))
                out[i] = d if in_memory or d.inline else None
        return out

    async def _read_local(self, session_id: str, worker: str, keys: list[str]) -> list[Any] | None:
        """``keys`` read from ``worker``'s shared memory, or None when it is not on this machine (or gone)."""
        if worker in self._not_local:
            return None
        try:
            descs = await mo.ActorRef(worker, STORAGE_UID).get_descs(session_id, keys)
            return [get_object(d) for d in descs]
        except DataNotFound as e:
            if "segment" in str(e):  # no such segment here: the worker is on another machine
                self._not_local.add(worker)
            return None
        except (mo.ActorNotExist, OSError):
            return None

    async def upload(self, session_id: str, chunks: list[tuple[str, tuple, Any]]) -> dict[str, StoredObject]:
        """Put ``(key, shape, value)`` chunks straight into workers' storage, held by the session.

        They are spread over the alive workers by size; the supervisor only
        records where they are (see :mod:`~mars.services.storage.upload`).
        """
        return await upload_chunks(self, session_id, chunks)

    async def upload_targets(self, session_id: str) -> list[UploadTarget]:
        """The alive workers that take a client's chunks: address, slots and shared-memory segment prefix.
        SessionNotFound for a session that is not open (nothing is told about workers to a made-up one)."""
        if not await self.has_session(session_id):
            raise SessionNotFound.named(session_id)
        statuses = await mo.ActorRef(owner_of(session_id, self.supervisors), CLUSTER_UID).get_workers()
        prefixes = await asyncio.gather(*[mo.ActorRef(s.info.address, STORAGE_UID).prefix() for s in statuses])
        return [UploadTarget(s.info.address, max(1, s.info.n_cpu), p) for s, p in zip(statuses, prefixes)]

    async def adopt_stored(self, session_id: str, worker: str, chunks: list[tuple[str, tuple, StoredObject]]) -> None:
        """Chunks a client on ``worker``'s host wrote into its shared memory: checked and indexed by the
        worker, then held by the session. DataNotFound when the segments are not in that worker's memory."""
        await self._check_worker(session_id, worker)
        await mo.ActorRef(worker, STORAGE_UID).register_uploaded(session_id, [d for _, _, d in chunks])
        await self._adopt(session_id, worker, [(k, s, d.nbytes) for k, s, d in chunks])

    async def put_chunks(self, session_id: str, worker: str, chunks: list[tuple[str, tuple, Any]]) -> None:
        """Store ``(key, shape, value)`` chunks on ``worker`` (written in this process when it shares the
        worker's host, else by the worker), held by the session."""
        await self._check_worker(session_id, worker)
        descs = await put_values(session_id, worker, [(k, v) for k, _, v in chunks])
        await self._adopt(session_id, worker, [(k, s, d.nbytes) for (k, s, _), d in zip(chunks, descs)])

    async def _check_worker(self, session_id: str, worker: str) -> None:
        """A caller names only a worker of the cluster: nothing is sent to an address it makes up."""
        statuses = await mo.ActorRef(owner_of(session_id, self.supervisors), CLUSTER_UID).get_workers()
        if worker not in {s.info.address for s in statuses}:
            raise NodeNotFound(f"{worker!r} is not an alive worker of this cluster")

    async def _adopt(self, session_id: str, worker: str, chunks: list[tuple[str, tuple, int]]) -> None:
        metas = [ChunkMeta(key, worker, tuple(shape), nbytes) for key, shape, nbytes in chunks]
        try:
            await self._call(session_id, "adopt", metas)
        except BaseException:
            await asyncio.gather(mo.ActorRef(worker, STORAGE_UID).delete(session_id, [m.key for m in metas]),
                                 return_exceptions=True)
            raise

    async def release(self, session_id: str, keys: list[str]) -> list[str]:
        """The client dropped its objects holding these chunks: one reference each goes.

        Returns the keys that the session held (a key it did not hold is no error, and is left out).
        """
        return await self._call(session_id, "release", keys)  # type: ignore[no-any-return]

    async def get_task_graph(self, session_id: str, task_id: str, level: str) -> dict:
        """A task's graph at ``level`` ("tileable" or "subtask"), each node with its state (the dashboard's)."""
        try:
            return await self._call(session_id, "get_graph", task_id, level)
        except SessionNotFound:
            return await self._closed(session_id, "closed_graph", task_id, level)  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ the cluster, for the dashboard
    def _view(self) -> Any:
        from ..cluster.nodes import ClusterView

        return ClusterView(self.supervisors)

    async def get_workers(self) -> list[dict]:
        """The cluster's workers, alive and lost, as JSON-able dicts (see the cluster service)."""
        return await self._view().workers()

    async def get_worker(self, address: str) -> dict:
        """One worker's figures; NodeNotFound when the cluster does not know it."""
        return await self._view().worker(address)

    async def get_cluster(self) -> dict:
        """Supervisors and workers with their figures, in one answer."""
        return await self._view().overview(await self.list_sessions())

    async def get_node_logs(self, kind: str, address: str, limit: int) -> dict:
        """The newest log records of a node's processes (``kind``: "worker" or "supervisor")."""
        return await self._view().logs(kind, address, limit)

    async def get_node_stacks(self, kind: str, address: str) -> dict:
        """The stacks of every thread in a node's processes (``kind``: "worker" or "supervisor")."""
        return await self._view().stacks(kind, address)
