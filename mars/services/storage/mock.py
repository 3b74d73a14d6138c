"""A stand-in for :class:`~.worker.StorageActor` that keeps everything in this process's memory."""

from __future__ import annotations

import sys
from typing import Any

from ... import oscar as mo
from .core import ChunkStore
from .shm import StoredObject, get_object, put_object, unlink_object


class MockStorage(mo.Actor):
    """The storage actor's async methods over a plain dict of inline descriptors.

    Use it directly (``await MockStorage().get_values(...)``) or create it in
    a pool under :data:`~.worker.STORAGE_UID` in place of the real actor.
    :meth:`put_values` stores values without a slot; descriptors of shared
    segments may be registered too, and are read and unlinked as the real
    actor would.

    Examples
    --------
    >>> import asyncio
    >>> async def demo():
    ...     storage = MockStorage()
    ...     await storage.put_values("s", {"a": [1, 2]})
    ...     return await storage.get_values("s", ["a"]), (await storage.stats())["n_chunks"]
    >>> asyncio.run(demo())
    ([[1, 2]], 1)
    """

    def __init__(self, prefix: str = "mars-mock") -> None:
        self.prefix = prefix
        self.store = ChunkStore()

    async def put_values(self, session_id: str, values: dict[str, Any]) -> list[StoredObject]:
        """Store ``values`` by key, inline; returns their descriptors."""
        descs = [put_object(k, v, self.prefix, inline_below=sys.maxsize) for k, v in values.items()]
        await self.register(session_id, descs)
        return descs

    async def register(self, session_id: str, descs: list[StoredObject]) -> None:
        for old in self.store.put(session_id, descs):
            unlink_object(old)

    async def get_descs(self, session_id: str, keys: list[str]) -> list[StoredObject]:
        return self.store.get(session_id, keys)

    async def get_values(self, session_id: str, keys: list[str], serialized: bool = False) -> list[Any]:
        return [get_object(d) for d in self.store.get(session_id, keys)]

    async def delete(self, session_id: str, keys: list[str]) -> None:
        for desc in self.store.delete(session_id, keys):
            unlink_object(desc)

    async def delete_session(self, session_id: str) -> None:
        for desc in self.store.delete_session(session_id):
            unlink_object(desc)

    async def stats(self) -> dict[str, int]:
        return {**self.store.stats(), "disk_bytes": 0}
