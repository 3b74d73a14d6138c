"""The index of a worker's stored chunks: plain data, no I/O.

The storage actor (and the execution actor, which shares the same object in
the worker's main pool) records here which descriptor holds each chunk; the
segments themselves are made and removed by :mod:`.shm`.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import DataNotFound
from .shm import StoredObject


class ChunkStore:
    """Descriptors of stored chunks, by session and key, with running totals.

    Examples
    --------
    >>> store = ChunkStore()
    >>> store.put("s", [StoredObject("a", 10, b"", (), None, 1)])
    []
    >>> [d.value for d in store.get("s", ["a"])], store.stats()
    ([1], {'n_chunks': 1, 'memory_bytes': 10})
    """

    def __init__(self) -> None:
        self._sessions: dict[str, dict[str, StoredObject]] = {}
        self._n_chunks = 0
        self._memory_bytes = 0

    def put(self, session_id: str, descs: Iterable[StoredObject]) -> list[StoredObject]:
        """Record ``descs``; returns the descriptors they replaced that held other segments.

        The caller unlinks those: a chunk computed twice (a retried subtask)
        would otherwise leave its first segment behind.
        """
        chunks = self._sessions.setdefault(session_id, {})
        replaced = []
        for desc in descs:
            old = chunks.get(desc.key)
            if old is not None:
                self._forget(old)
                if old.shm_name is not None and old.shm_name != desc.shm_name:
                    replaced.append(old)
            chunks[desc.key] = desc
            self._n_chunks += 1
            self._memory_bytes += desc.nbytes
        return replaced

    def get(self, session_id: str, keys: Iterable[str]) -> list[StoredObject]:
        """The descriptors of ``keys``, in order.

        Raises
        ------
        DataNotFound
            Naming the first key that is not stored, and the session.
        """
        chunks = self._sessions.get(session_id, {})
        descs = []
        for key in keys:
            desc = chunks.get(key)
            if desc is None:
                raise DataNotFound(f"chunk {key} of session {session_id} is not stored on this worker")
            descs.append(desc)
        return descs

    def contains(self, session_id: str, key: str) -> bool:
        """Whether chunk ``key`` of the session is stored."""
        return key in self._sessions.get(session_id, {})

    def delete(self, session_id: str, keys: Iterable[str]) -> list[StoredObject]:
        """Forget ``keys`` (missing ones are ignored); returns the removed descriptors."""
        chunks = self._sessions.get(session_id)
        if chunks is None:
            return []
        removed = [d for d in (chunks.pop(k, None) for k in keys) if d is not None]
        for desc in removed:
            self._forget(desc)
        if not chunks:
            del self._sessions[session_id]
        return removed

    def delete_session(self, session_id: str) -> list[StoredObject]:
        """Forget every chunk of the session; returns their descriptors."""
        removed = list(self._sessions.pop(session_id, {}).values())
        for desc in removed:
            self._forget(desc)
        return removed

    def all(self) -> list[StoredObject]:
        """Every stored descriptor, of every session."""
        return [d for chunks in self._sessions.values() for d in chunks.values()]

    def stats(self) -> dict[str, int]:
        """``n_chunks`` and ``memory_bytes`` (the ``nbytes`` of inline and shared chunks alike)."""
        return {"n_chunks": self._n_chunks, "memory_bytes": self._memory_bytes}

    def _forget(self, desc: StoredObject) -> None:
        self._n_chunks -= 1
        self._memory_bytes -= desc.nbytes
