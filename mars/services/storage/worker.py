"""The storage actors of a worker.

:class:`StorageActor`, in the worker's main pool, indexes what the slots
stored and frees it. :class:`TransferActor`, one in each IO sub pool, serves
other workers' reads straight from shared memory, so that the main process
never copies chunk bytes and its event loop stays free for control calls.
"""

from __future__ import annotations

import logging
from typing import Any

from ... import oscar as mo
from .core import ChunkStore
from .shm import Serialized, StoredObject, get_object, unlink_object, unlink_prefix

logger = logging.getLogger(__name__)

STORAGE_UID = "storage"
TRANSFER_UID = "transfer"


class StorageActor(mo.Actor):
    """The index of a worker's chunks, and the owner of its segments.

    Parameters
    ----------
    prefix
        The worker's segment name prefix: the slots store with it, and
        destroying this actor removes every segment that carries it.
    store
        The index to use; the execution actor of the same main pool may be
        given the same object, so that both see one set of chunks.
    """

    def __init__(self, prefix: str, store: ChunkStore | None = None) -> None:
        self._prefix = prefix
        self._store = store if store is not None else ChunkStore()

    async def __pre_destroy__(self) -> None:
        for desc in self._store.all():
            unlink_object(desc)
        strays = unlink_prefix(self._prefix)
        if strays:
            logger.info("removed %d unregistered shared memory segments of %s", strays, self._prefix)

    def register(self, session_id: str, descs: list[StoredObject]) -> None:
        """Record chunks a slot stored; a chunk stored again frees its earlier segment."""
        for old in self._store.put(session_id, descs):
            unlink_object(old)

    def get_descs(self, session_id: str, keys: list[str]) -> list[StoredObject]:
        """Descriptors of ``keys``; raises DataNotFound naming the first missing one."""
        return self._store.get(session_id, keys)

    def get_values(self, session_id: str, keys: list[str], serialized: bool = False) -> list[Any]:
        """The objects of ``keys``, for readers on other workers when there is no IO pool.

        With ``serialized``, each is sent in the serialized form it has in
        shared memory (a :class:`~.shm.Serialized`): a caller in another
        process still receives the object, but this process never unpickles
        it; a caller in this process gets the wrappers (see :func:`~.shm.unwrap`).
        """
        descs = self._store.get(session_id, keys)
        return [Serialized.of(d) for d in descs] if serialized else [get_object(d) for d in descs]

    def delete(self, session_id: str, keys: list[str]) -> None:
        """Forget ``keys`` and free their segments; missing keys are ignored."""
        for desc in self._store.delete(session_id, keys):
            unlink_object(desc)

    def delete_session(self, session_id: str) -> None:
        """Forget and free every chunk of the session."""
        for desc in self._store.delete_session(session_id):
            unlink_object(desc)

    def stats(self) -> dict[str, int]:
        """``n_chunks``, ``memory_bytes`` and ``disk_bytes`` (0: nothing spills yet)."""
        return {**self._store.stats(), "disk_bytes": 0}


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
        return [Serialized.of(d) for d in descs] if serialized else [get_object(d) for d in descs]
