"""The index of a worker's stored chunks: plain data, no I/O.

The storage actor (and the execution actor, which shares the same object in
the worker's main pool) records here which descriptor holds each chunk; the
segments themselves are made and removed by :mod:`.shm`, and spilled to disk
by :mod:`.spill`.

Beside the index, the store keeps what spilling decides by: the chunks held
in memory in least-recently-used order, the pins of running subtasks (a
pinned chunk is never spilled), when each chunk was last handed to a reader,
and running totals of the bytes in memory, on disk and being spilled.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

from ..errors import DataNotFound
from .shm import StoredObject

_Key = tuple[str, str]  # (session id, chunk key)


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
        self._shared_bytes = 0
        self._disk_bytes = 0
        self._device_bytes = 0
        self._spilling_bytes = 0
        #: segment-backed chunks in memory, least recently used first
        self._lru: OrderedDict[_Key, None] = OrderedDict()
        self._pins: dict[_Key, int] = {}
        #: when a chunk was last handed to a reader (monotonic seconds)
        self._read_at: dict[_Key, float] = {}
        #: chunks being copied to disk, with the time the copy started
        self._spilling: dict[_Key, float] = {}

    # ------------------------------------------------------------------ the index
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
                self._forget(session_id, old)
                if old.shm_name is not None and old.shm_name != desc.shm_name:
                    replaced.append(old)
                elif old.device is not None and old.device != desc.device:
                    replaced.append(old)  # its slot frees the device copy (the same slot replaced it already)
            chunks[desc.key] = desc
            self._count(session_id, desc)
        return replaced

    def find(self, session_id: str, key: str) -> StoredObject | None:
        """The descriptor of ``key``, or None when it is not stored."""
        chunks = self._sessions.get(session_id)
        return None if chunks is None else chunks.get(key)

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
            self._forget(session_id, desc)
        if not chunks:
            del self._sessions[session_id]
        return removed

    def delete_session(self, session_id: str) -> list[StoredObject]:
        """Forget every chunk of the session; returns their descriptors."""
        removed = list(self._sessions.pop(session_id, {}).values())
        for desc in removed:
            self._forget(session_id, desc)
        return removed

    def all(self) -> list[StoredObject]:
        """Every stored descriptor, of every session."""
        return [d for chunks in self._sessions.values() for d in chunks.values()]

    def stats(self) -> dict[str, int]:
        """``n_chunks`` and ``memory_bytes`` (the ``nbytes`` of inline and shared chunks not spilled)."""
        return {"n_chunks": self._n_chunks, "memory_bytes": self._memory_bytes}

    @property
    def memory_bytes(self) -> int:
        """Bytes of the chunks held in memory (inline or in shared memory), those being spilled included."""
        return self._memory_bytes

    @property
    def shared_bytes(self) -> int:
        """Bytes of the chunks held in segments (not inline): what ``--cache-mem`` bounds, and what may spill."""
        return self._shared_bytes

    @property
    def disk_bytes(self) -> int:
        """Bytes of the chunks spilled to disk."""
        return self._disk_bytes

    @property
    def device_bytes(self) -> int:
        """Bytes of the chunks held only in GPU slots' device memory (not in host memory)."""
        return self._device_bytes

    def replace(self, session_id: str, old: StoredObject, new: StoredObject) -> bool:
        """Record ``new`` (a host copy) in place of ``old`` (a device-resident chunk).

        Returns False, recording nothing, when the chunk is no longer ``old``:
        deleted, stored again, or replaced already.
        """
        chunks = self._sessions.get(session_id, {})
        if chunks.get(old.key) is not old:
            return False
        self._forget(session_id, old)
        chunks[old.key] = new
        self._count(session_id, new)
        return True

    @property
    def spilling_bytes(self) -> int:
        """Bytes of the chunks being copied to disk now (still counted in memory)."""
        return self._spilling_bytes

    # ------------------------------------------------------------------ readers
    def touch(self, session_id: str, keys: Iterable[str], now: float) -> None:
        """Mark ``keys`` read at ``now``: most recently used, and not to be spilled for a while."""
        for key in keys:
            k = (session_id, key)
            if k in self._lru:
                self._lru.move_to_end(k)
                self._read_at[k] = now

    def pin(self, session_id: str, keys: Iterable[str]) -> None:
        """Keep ``keys`` in memory until :meth:`unpin`: a running subtask reads them.

        Pins count: a chunk pinned twice needs two unpins. Keys not stored
        may be pinned too (an input that another slot is about to copy here).
        """
        for key in keys:
            k = (session_id, key)
            self._pins[k] = self._pins.get(k, 0) + 1
            if k in self._lru:
                self._lru.move_to_end(k)

    def unpin(self, session_id: str, keys: Iterable[str]) -> None:
        """Drop one pin of each of ``keys``."""
        for key in keys:
            k = (session_id, key)
            n = self._pins.get(k, 0) - 1
            if n > 0:
                self._pins[k] = n
            else:
                self._pins.pop(k, None)

    def pinned(self, session_id: str, key: str) -> bool:
        """Whether a running subtask holds ``key``."""
        return (session_id, key) in self._pins

    # ------------------------------------------------------------------ spilling
    def spill_candidates(self, nbytes: int, now: float, lease: float) -> list[tuple[str, StoredObject]]:
        """The least recently used chunks that may go to disk, until they add up to ``nbytes``.

        Skipped: pinned chunks, chunks being spilled already, and chunks
        handed to a reader less than ``lease`` seconds ago (the reader may be
        about to map their segment).
        """
        out: list[tuple[str, StoredObject]] = []
        total = 0
        for k in self._lru:
            if total >= nbytes:
                break
            if k in self._pins or k in self._spilling or now - self._read_at.get(k, -lease) < lease:
                continue
            desc = self._sessions[k[0]][k[1]]
            out.append((k[0], desc))
            total += desc.nbytes
        return out

    def begin_spill(self, session_id: str, desc: StoredObject, now: float) -> None:
        """``desc`` is being copied to disk from ``now`` on."""
        k = (session_id, desc.key)
        assert k in self._lru and k not in self._spilling, f"chunk {desc.key} cannot be spilled now"
        self._spilling[k] = now
        self._spilling_bytes += desc.nbytes

    def finish_spill(self, session_id: str, old: StoredObject, new: StoredObject | None) -> bool:
        """The copy of ``old`` ended (``new``: its descriptor on disk; None if the copy failed).

        Returns whether the chunk now lives on disk. It does not when it was
        deleted or stored again meanwhile, pinned, or handed to a reader since
        the copy began: then the caller removes the copy and the chunk stays
        in memory, and otherwise it unlinks ``old``'s segment.
        """
        k = (session_id, old.key)
        chunks = self._sessions.get(session_id, {})
        if chunks.get(old.key) is not old:
            return False  # deleted or stored again: forgetting ``old`` ended its spill already
        started = self._spilling.pop(k, None)
        if started is None:
            return False
        self._spilling_bytes -= old.nbytes
        if new is None:
            return False
        if k in self._pins or self._read_at.get(k, float("-inf")) >= started:
            return False
        self._forget(session_id, old)
        chunks[old.key] = new
        self._count(session_id, new)
        return True

    # ------------------------------------------------------------------ totals
    def _count(self, session_id: str, desc: StoredObject) -> None:
        self._n_chunks += 1
        if desc.spilled:
            self._disk_bytes += desc.nbytes
            return
        if desc.device is not None:
            self._device_bytes += desc.nbytes
            return
        self._memory_bytes += desc.nbytes
        if desc.shm_name is not None:
            self._shared_bytes += desc.nbytes
            self._lru[(session_id, desc.key)] = None

    def _forget(self, session_id: str, desc: StoredObject) -> None:
        self._n_chunks -= 1
        if desc.spilled:
            self._disk_bytes -= desc.nbytes
            return
        if desc.device is not None:
            self._device_bytes -= desc.nbytes
            return
        self._memory_bytes -= desc.nbytes
        if desc.shm_name is not None:
            self._shared_bytes -= desc.nbytes
        k = (session_id, desc.key)
        self._lru.pop(k, None)
        self._read_at.pop(k, None)
        if self._spilling.pop(k, None) is not None:
            self._spilling_bytes -= desc.nbytes
