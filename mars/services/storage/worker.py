"""The storage actors of a worker.

:class:`StorageActor`, in the worker's main pool, indexes what the slots
stored, frees it, and (through its :class:`~.cache.ChunkCache`) spills what
does not fit in ``--cache-mem``. :class:`TransferActor`, one in each IO sub
pool, serves other workers' reads straight from shared memory or spill
files, so that the main process never copies chunk bytes and its event loop
stays free for control calls.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Sequence
from typing import Any

from ... import oscar as mo
from ..errors import DataNotFound
from .cache import ChunkCache
from .core import ChunkStore
from .device import host_descs
from .shm import (
    Serialized,
    StoredObject,
    claim_prefix,
    get_object,
    put_object,
    release_prefix,
    remove_abandoned_prefixes,
    segment_path,
    segment_size,
    unlink_object,
    unlink_prefix,
)

logger = logging.getLogger(__name__)

STORAGE_UID = "storage"
TRANSFER_UID = "transfer"


class StorageActor(mo.Actor):
    """The index of a worker's chunks, and the owner of its segments and spill files.

    Parameters
    ----------
    prefix
        The worker's segment name prefix: the slots store with it, and
        destroying this actor removes every segment that carries it.
    store
        The index to use; the execution actor of the same main pool may be
        given the same object, so that both see one set of chunks.
    cache
        The chunk cache over ``store`` that keeps chunk data within the
        worker's ``--cache-mem`` (shared with the execution actor too); by
        default one without a limit, which never spills.
    """

    def __init__(self, prefix: str, store: ChunkStore | None = None, cache: ChunkCache | None = None) -> None:
        self._prefix = prefix
        self._cache = cache if cache is not None else ChunkCache(store)
        self._store = self._cache.store

    async def __post_create__(self) -> None:
        claim_prefix(self._prefix)
        remove_abandoned_prefixes()
        if self._cache.dirs is not None:
            self._cache.dirs.remove_strays()

    async def __pre_destroy__(self) -> None:
        await self._cache.close()
        strays = unlink_prefix(self._prefix)
        if strays:
            logger.info("removed %d unregistered shared memory segments of %s", strays, self._prefix)
        release_prefix(self._prefix)

    def register(self, session_id: str, descs: list[StoredObject]) -> None:
        """Record chunks a slot stored; a chunk stored again frees its earlier segment."""
        self._cache.register(session_id, descs)

    def register_uploaded(self, session_id: str, descs: list[StoredObject]) -> None:
        """Record chunks a client on this host wrote under this worker's prefix, once checked (see
        :func:`check_uploaded`); DataNotFound when their segments are not in this host's memory."""
        self._cache.register(session_id, check_uploaded(self._prefix, descs))

    def prefix(self) -> str:
        """The worker's segment name prefix: a client on this host stores chunks under it itself."""
        return self._prefix

    async def put_values(self, session_id: str, items: list[tuple[str, Any]]) -> list[StoredObject]:
        """Store ``(key, value)`` pairs sent from another host (see :mod:`.upload`); returns their descriptors."""
        loop = asyncio.get_running_loop()
        descs = await loop.run_in_executor(None, _put_all, items, self._prefix)
        self._cache.register(session_id, descs)
        return descs

    @mo.no_lock  # a host copy from a GPU slot may take a while: other calls go on meanwhile
    async def get_descs(self, session_id: str, keys: list[str]) -> list[StoredObject]:
        """Descriptors of ``keys`` in host memory or on disk; raises DataNotFound naming the first missing one.

        A spilled chunk's descriptor names its spill file, which
        :func:`~.shm.get_object` maps as it maps a segment; a chunk held on a
        GPU slot's device is copied to host memory first (see :mod:`.device`).
        Whatever the caller gets stays where it is for a while
        (:data:`~.cache.READ_LEASE`), long enough to map it.
        """
        return await host_descs(self._cache, session_id, self._cache.read(session_id, keys))

    @mo.no_lock
    async def get_values(self, session_id: str, keys: list[str], serialized: bool = False) -> list[Any]:
        """The objects of ``keys``, for readers on other workers when there is no IO pool.

        With ``serialized``, each is sent in the serialized form it has in
        shared memory (a :class:`~.shm.Serialized`): a caller in another
        process still receives the object, but this process never unpickles
        it; a caller in this process gets the wrappers (see :func:`~.shm.unwrap`).
        """
        return _load(await self.get_descs(session_id, keys), serialized)

    async def delete(self, session_id: str, keys: list[str]) -> None:
        """Forget ``keys`` and free their segments; missing keys are ignored.

        Big segments are unlinked on a thread (freeing their pages takes a while): this process's other
        actors go on meanwhile, and the call returns once they are gone.
        """
        await _settled(self._cache.delete(session_id, keys))

    async def delete_session(self, session_id: str) -> None:
        """Forget and free every chunk of the session."""
        await _settled(self._cache.delete_session(session_id))

    def stats(self) -> dict[str, int]:
        """``n_chunks``, ``memory_bytes`` (in memory) and ``disk_bytes`` (spilled).

        With a cache limit, also ``cache_limit``, ``spilled_bytes_total``
        (ever spilled) and ``n_spilled``.
        """
        figures = self._cache.stats()
        if self._cache.limit is None:
            return {k: figures[k] for k in ("n_chunks", "memory_bytes", "disk_bytes", "device_bytes") if k in figures}
        return figures


class TransferActor(mo.Actor):
    """Serves reads of a worker's chunks from an IO sub pool.

    It asks the storage actor only for descriptors and reads the segments
    itself, so the bytes pass from shared memory to the socket in this process.

    Parameters
    ----------
    storage_address
        The address of the worker's main pool, where its :class:`StorageActor` lives.
    """

    def __init__(self, storage_address: str) -> None:
        self._storage = mo.ActorRef(storage_address, STORAGE_UID)

    async def read(self, session_id: str, keys: list[str], serialized: bool = False) -> list[Any]:
        """The objects of ``keys``, read from shared memory in this process.

        ``serialized`` as for :meth:`StorageActor.get_values`; raises
        DataNotFound naming the first key the worker does not hold.
        """
        descs: list[StoredObject] = await self._storage.get_descs(session_id, keys)
        for _ in range(2):
            try:
                return _load(descs, serialized)
            except DataNotFound:
                # a segment went between the two steps (spilled in spite of the read lease, on a
                # loaded host): the storage actor's next answer names where the chunk is now
                descs = await self._storage.get_descs(session_id, keys)
        return _load(descs, serialized)


async def _settled(pending: Any) -> None:
    if pending is not None:
        await asyncio.wrap_future(pending)


def _put_all(items: list[tuple[str, Any]], prefix: str) -> list[StoredObject]:
    descs: list[StoredObject] = []
    try:
        for key, value in items:
            descs.append(put_object(key, value, prefix))
    except BaseException:
        for d in descs:
            unlink_object(d)
        raise
    return descs


def _load(descs: list[StoredObject], serialized: bool) -> list[Any]:
    return [Serialized.of(d) for d in descs] if serialized else [get_object(d) for d in descs]


def check_uploaded(prefix: str, descs: Sequence[Any]) -> list[StoredObject]:
    """Descriptors a client wrote under ``prefix``, checked before the worker indexes them.

    Each must name a segment of this worker (``prefix-...`` in shared memory,
    or its disk fallback ``@prefix-...``), never a path or a device, and the
    segment must be there, readable by this process, and as big as the
    descriptor says. Raises ValueError or DataNotFound naming the first that is not.

    >>> check_uploaded("mars-w1", [StoredObject("k", 3, b"", (), None, [1, 2])])[0].value
    [1, 2]
    """
    out = []
    for d in descs:
        if not isinstance(d, StoredObject):
            raise TypeError(f"an uploaded chunk is described by a StoredObject, got {type(d).__name__}")
        if d.device is not None:
            raise ValueError(f"uploaded chunk {d.key!r} names device memory ({d.device!r}); clients write host memory")
        if d.shm_name is not None:
            name = d.shm_name.removeprefix("@")
            if "/" in name or "\0" in name or not name.startswith(f"{prefix}-"):
                raise ValueError(f"uploaded chunk {d.key!r} names segment {d.shm_name!r}, which is not one of this "
                                 f"worker's (they start with {prefix + '-'!r})")
            path = segment_path(d.shm_name)
            try:
                size = os.stat(path).st_size
            except FileNotFoundError:
                raise DataNotFound(f"uploaded chunk {d.key!r}: segment {d.shm_name} is not in this worker's shared "
                                   "memory (the client is on another host)") from None
            if size < segment_size(d) or not os.access(path, os.R_OK):
                raise ValueError(f"uploaded chunk {d.key!r}: segment {d.shm_name} is smaller than its descriptor "
                                 f"says, or not readable by the worker")
        out.append(d)
    return out
