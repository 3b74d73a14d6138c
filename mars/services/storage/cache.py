"""Keeping a worker's chunks within ``--cache-mem``: least recently used ones spill to disk.

:class:`ChunkCache` lives in the worker's main pool and is shared by the
storage actor (readers, frees) and the execution actor (outputs, pins,
reservations for outputs on their way). Whenever the bytes held in memory
plus those reserved exceed the target, it copies the least recently used
chunks that no running subtask pins to the spill directories, on a thread,
and then unlinks their segments. The target is ``--cache-mem``, lowered
while the worker's memory is above its soft limit (:meth:`set_pressure`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import time
from collections.abc import Callable
from typing import Any

from ...core.pools import thread_pool
from .core import ChunkStore
from .device import drop_device
from .shm import StoredObject, unlink_object
from .spill import SpillDirs, SpillFailed

logger = logging.getLogger(__name__)

#: a chunk handed to a reader is not spilled for this long: the reader maps its segment meanwhile
READ_LEASE = 1.0
#: after every spill directory failed, spilling is tried again this much later
_RETRY_AFTER = 5.0


#: segments at least this big are unlinked on a thread: freeing a tmpfs file's pages takes ~0.3 ms per MB,
#: which the worker's event loop (dispatching, reporting) should not wait for
UNLINK_ON_THREAD_ABOVE = 1 << 20


def _unlink_all(descs: list[StoredObject]) -> concurrent.futures.Future | None:
    """Unlink the segments of ``descs``: small ones now, big ones on a thread when an event loop runs here
    (the future of those, else None)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        big = []
    else:
        big = [d for d in descs if d.shm_name is not None and d.nbytes >= UNLINK_ON_THREAD_ABOVE]
    if not big:
        _unlink_each(descs)
        return None
    marked = {id(d) for d in big}
    _unlink_each([d for d in descs if id(d) not in marked])
    # a pool made again in a process forked from one that had made it (a worker started from a test run, say):
    # the inherited executor has no thread, and every delete would wait forever (see mars.core.pools)
    return thread_pool("unlink", 1).submit(_unlink_each, big)


def _unlink_each(descs: list[StoredObject]) -> None:
    for desc in descs:
        unlink_object(desc)


class ChunkCache:
    """A worker's chunk index with a memory limit, spilling what does not fit.

    Parameters
    ----------
    store
        The index (shared with whoever else reads it in this process).
    limit
        Bytes of chunk data to keep in memory; None keeps everything.
    dirs
        Where spilled chunks go; needed when ``limit`` is set.

    Examples
    --------
    >>> import asyncio, numpy as np, tempfile
    >>> from mars.services.storage.shm import put_object
    >>> async def demo():
    ...     cache = ChunkCache(ChunkStore(), 1 << 20, SpillDirs([tempfile.mkdtemp()], "mars-doc-cache"))
    ...     for i in range(3):   # 800 kB each: only one fits in 1 MiB
    ...         cache.register("s", [put_object(f"k{i}", np.arange(100_000), "mars-doc-cache")])
    ...     await cache.settled()
    ...     figures = cache.stats()
    ...     await cache.close()
    ...     return figures["memory_bytes"], figures["disk_bytes"]
    >>> asyncio.run(demo())
    (800000, 1600000)
    """

    def __init__(self, store: ChunkStore | None = None, limit: int | None = None,
                 dirs: SpillDirs | None = None) -> None:
        if limit is not None and limit <= 0:
            raise ValueError(f"a cache limit must be positive, got {limit!r}")
        if limit is not None and dirs is None:
            raise ValueError("a cache limit needs spill directories to spill to")
        self.store = store if store is not None else ChunkStore()
        self.limit = limit
        self.dirs = dirs
        self.reserved = 0
        self._pressure: int | None = None
        self._copies: set[asyncio.Future] = set()
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._listeners: list[Callable[[], Any]] = []
        self._spill_listeners: list[Callable[[str, str, float, float, int], Any]] = []
        self._broken_until = 0.0
        self._retry: asyncio.TimerHandle | None = None
        self.spilled_total = 0  # bytes ever spilled
        self.n_spilled = 0

    # ------------------------------------------------------------------ chunks
    def register(self, session_id: str, descs: list[StoredObject]) -> None:
        """Record chunks a slot stored; a chunk stored again frees its earlier copy."""
        replaced = self.store.put(session_id, descs)
        for old in replaced:
            unlink_object(old)
        drop_device(replaced)
        self.spill_if_needed()

    def read(self, session_id: str, keys: list[str]) -> list[StoredObject]:
        """Descriptors of ``keys`` for a reader, who maps them now (they stay put for :data:`READ_LEASE`)."""
        descs = self.store.get(session_id, keys)
        self.store.touch(session_id, keys, time.monotonic())
        return descs

    def delete(self, session_id: str, keys: list[str]) -> concurrent.futures.Future | None:
        """Forget ``keys`` and free their segments and spill files; missing keys are ignored.

        Returns the future of the unlinks left to a thread (big segments, while an event loop runs), or None.
        """
        return self._free(self.store.delete(session_id, keys))

    def delete_session(self, session_id: str) -> concurrent.futures.Future | None:
        """Forget and free every chunk of the session (returns as :meth:`delete`)."""
        return self._free(self.store.delete_session(session_id))

    def _free(self, descs: list[StoredObject]) -> concurrent.futures.Future | None:
        pending = _unlink_all(descs)
        drop_device(descs)
        if descs:
            self._notify()
        return pending

    # ------------------------------------------------------------------ room
    def reserve(self, nbytes: int) -> None:
        """Room for ``nbytes`` of outputs on their way: spill ahead of them."""
        self.reserved += nbytes
        self.spill_if_needed()

    def release(self, nbytes: int) -> None:
        """The outputs reserved for arrived (and were registered) or will not come."""
        self.reserved = max(0, self.reserved - nbytes)

    def room(self) -> int:
        """Bytes that may still come into memory before the target is passed (negative: over it).

        Chunks being spilled still count: their segments are freed only once the copies end.
        Inline chunks (under 64 KiB each, in the main process) do not: they cannot spill.
        """
        target = self.target()
        if target is None:
            return 1 << 62
        return target - self.store.shared_bytes - self.reserved

    def target(self) -> int | None:
        """The bytes of chunks to keep in memory now: the limit, or less under memory pressure."""
        if self._pressure is None:
            return self.limit
        return self._pressure if self.limit is None else min(self.limit, self._pressure)

    def set_pressure(self, target: int | None) -> None:
        """Keep at most ``target`` bytes in memory for now (None: back to the limit)."""
        self._pressure = None if target is None else max(0, int(target))
        self.spill_if_needed()

    @property
    def busy(self) -> bool:
        """Whether spills are under way (room will appear when they end)."""
        return bool(self._copies)

    @property
    def can_spill(self) -> bool:
        """Whether spilling is possible now (there are directories, and they did not all fail lately)."""
        return self.dirs is not None and time.monotonic() >= self._broken_until

    def add_listener(self, callback: Callable[[], Any]) -> None:
        """Call ``callback()`` whenever memory was freed (a spill ended, chunks were deleted)."""
        self._listeners.append(callback)

    def add_spill_listener(self, callback: Callable[[str, str, float, float, int], Any]) -> None:
        """Call ``callback(session_id, key, start, end, nbytes)`` (unix times) for each chunk spilled to disk."""
        self._spill_listeners.append(callback)

    def _notify(self) -> None:
        for callback in self._listeners:
            try:
                callback()
            except Exception:
                logger.exception("a chunk cache listener failed")

    # ------------------------------------------------------------------ spilling
    def spill_if_needed(self, extra: int = 0) -> None:
        """Start spilling the least recently used chunks while memory (plus ``extra`` to come) is over the target."""
        # what is being spilled already is as good as gone
        excess = extra - self.room() - self.store.spilling_bytes
        if excess <= 0 or self.dirs is None or not self.can_spill:
            return
        now = time.monotonic()
        candidates = self.store.spill_candidates(excess, now, READ_LEASE)
        if not candidates:
            self._retry_later(READ_LEASE)  # what is left was read just now, or is pinned
            return
        loop = asyncio.get_running_loop()
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(min(4, len(self.dirs.roots)),
                                                               thread_name_prefix="mars-spill")
        for session_id, desc in candidates:
            self.store.begin_spill(session_id, desc, now)
            fut = loop.run_in_executor(self._pool, self.dirs.write, desc)
            self._copies.add(fut)
            fut.add_done_callback(functools.partial(self._copied, session_id=session_id, desc=desc,
                                                    started=time.time()))

    def _copied(self, fut: asyncio.Future, *, session_id: str, desc: StoredObject, started: float = 0.0) -> None:
        self._copies.discard(fut)
        new = None
        if not fut.cancelled():
            error = fut.exception()
            if isinstance(error, SpillFailed):
                self._broken_until = time.monotonic() + _RETRY_AFTER
                logger.warning("%s; chunks stay in memory, over the cache limit, for %g s", error, _RETRY_AFTER)
                self._retry_later(_RETRY_AFTER)
            elif error is not None and not isinstance(error, FileNotFoundError):
                logger.warning("spilling chunk %s failed: %s", desc.key, error)
            elif error is None:
                new = fut.result()
        if self.store.finish_spill(session_id, desc, new):
            unlink_object(desc)
            self.spilled_total += desc.nbytes
            self.n_spilled += 1
            for callback in self._spill_listeners:
                callback(session_id, desc.key, started, time.time(), desc.nbytes)
            self._notify()
        elif new is not None:
            unlink_object(new)  # deleted, pinned or read meanwhile: the copy is not needed
        if not self._copies:
            self.spill_if_needed()
            if not self._copies:
                self._notify()  # nothing more will end: whoever waits for room decides now

    def _retry_later(self, delay: float) -> None:
        if self._retry is None or self._retry.cancelled():
            def again() -> None:
                self._retry = None
                self.spill_if_needed()
            self._retry = asyncio.get_running_loop().call_later(delay, again)

    async def settled(self) -> None:
        """Wait until no spill is under way."""
        while self._copies:
            await asyncio.wait(list(self._copies))
            await asyncio.sleep(0)  # the done callbacks run, and may start more

    def stats(self) -> dict[str, int]:
        """``n_chunks``, ``memory_bytes``, ``disk_bytes``, and spilling figures."""
        figures = self.store.stats()
        figures["disk_bytes"] = self.store.disk_bytes
        if self.store.device_bytes:
            figures["device_bytes"] = self.store.device_bytes
        figures["spilled_bytes_total"] = self.spilled_total
        figures["n_spilled"] = self.n_spilled
        if self.limit is not None:
            figures["cache_limit"] = self.limit
        return figures

    async def close(self) -> None:
        """Stop spilling, then free every chunk and remove the spill directories."""
        if self._retry is not None:
            self._retry.cancel()
        await self.settled()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        for desc in self.store.all():
            unlink_object(desc)
        if self.dirs is not None:
            self.dirs.remove_all()
