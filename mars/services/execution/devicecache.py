"""What a GPU slot keeps in its device's memory: the chunks it made, until someone elsewhere needs them.

A chunk a GPU slot makes stays on the device: the slot hands the worker a
device descriptor (see :mod:`mars.services.storage.device`) and copies
nothing to host memory. The next GPU subtasks on this slot read it where it
is; a reader anywhere else makes the worker ask for a host copy
(:meth:`DeviceCache.host_copy`), written through pinned staging. From then
on the device copy is only a cache of the host one.

Device memory is bounded by a share of the device
(``MARS_GPU_CACHE_FRACTION``, default 0.5). Beyond it the least recently used
chunks leave the device: a cached copy is simply dropped; a chunk whose only
home is the device is first written to host memory (or disk, when shared
memory is full), and the new descriptor goes back to the worker with the
slot's next outcome (:meth:`DeviceCache.take_moved`). Keys name immutable
results, so a copy is never stale.

>>> cache = DeviceCache(limit=100)
>>> cache.put("a", "not on a device")
>>> cache.get("a") is None
True
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ...core.device import is_device_array, to_host
from ..storage.shm import StoredObject, put_object

logger = logging.getLogger(__name__)

#: host copies of device-only chunks remembered (the worker records each at once; a second reader may ask again)
_HOSTED_KEPT = 4096


@dataclass
class _Entry:
    value: Any
    #: while the device is the chunk's only home: its session and the descriptor the worker holds
    session_id: str | None = None
    desc: StoredObject | None = None
    prefix: str = ""


class DeviceCache:
    """Device arrays by chunk key, least recently used leaving beyond ``limit`` bytes (None: from the device).

    Called from the slot's compute thread (``keep``, ``put``, ``get``) and
    from its event loop's threads (``host_copy``, ``drop``): one lock guards it.
    """

    def __init__(self, limit: int | None = None):
        self._items: OrderedDict[str, _Entry] = OrderedDict()
        #: host copies written for chunks that were device-only, by key (the worker may not know them yet)
        self._hosted: OrderedDict[str, StoredObject] = OrderedDict()
        self._moved: list[tuple[str, StoredObject, StoredObject]] = []
        self._limit = limit
        self._lock = threading.RLock()
        self.nbytes = 0

    @property
    def limit(self) -> int:
        if self._limit is None:
            import cupy

            _, total = cupy.cuda.runtime.memGetInfo()
            self._limit = int(total * float(os.environ.get("MARS_GPU_CACHE_FRACTION", "0.5")))
        return self._limit

    def get(self, key: str) -> Any:
        with self._lock:
            entry = self._items.get(key)
            if entry is None:
                return None
            self._items.move_to_end(key)
            return entry.value

    def put(self, key: str, value: Any) -> None:
        """Cache a device copy of a chunk that has a host copy too."""
        if not is_device_array(value):
            return
        with self._lock:
            if key not in self._items and int(value.nbytes) <= self.limit:
                self._add(key, _Entry(value))

    def keep(self, key: str, value: Any, session_id: str, holder: str, prefix: str) -> StoredObject | None:
        """Keep ``value`` on the device as the chunk's only copy; its device descriptor naming ``holder``.

        None when it does not fit the device's share at all: the caller stores a host copy instead.
        """
        size = int(value.nbytes)
        if not is_device_array(value) or size > self.limit:
            return None
        desc = StoredObject(key, size, b"", (), None, None, 0, holder)
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.nbytes -= int(old.value.nbytes)
            self._hosted.pop(key, None)
            self._add(key, _Entry(value, session_id, desc, prefix))
        return desc

    def host_copy(self, key: str, prefix: str) -> StoredObject:
        """A host copy of device-resident chunk ``key``, written now unless written already.

        Raises KeyError when this slot does not hold the chunk (it was freed, or the slot restarted).
        """
        with self._lock:
            made = self._hosted.get(key)
            if made is not None:
                return made
            entry = self._items.get(key)
            if entry is None or entry.desc is None:
                raise KeyError(f"chunk {key} is not held in this GPU slot's device memory")
            made = put_object(key, to_host(entry.value), entry.prefix or prefix)
            self._remember(key, made)
            entry.session_id = entry.desc = None  # a cached copy from now on
            return made

    def take_moved(self) -> list[tuple[str, StoredObject, StoredObject]]:
        """``(session, device descriptor, host copy)`` of chunks written out under pressure since the last call."""
        with self._lock:
            moved, self._moved = self._moved, []
            return moved

    def drop(self, keys: Iterable[str]) -> None:
        """Free the device memory of ``keys`` (the worker forgot them); their host copies are the worker's."""
        with self._lock:
            for key in keys:
                entry = self._items.pop(key, None)
                if entry is not None:
                    self.nbytes -= int(entry.value.nbytes)
                self._hosted.pop(key, None)

    def _add(self, key: str, entry: _Entry) -> None:
        self._items[key] = entry
        self.nbytes += int(entry.value.nbytes)
        while self.nbytes > self.limit and len(self._items) > 1:
            old_key, old = self._items.popitem(last=False)
            self.nbytes -= int(old.value.nbytes)
            if old.desc is not None and not self._write_out(old_key, old):
                self._items[old_key] = old  # host memory and disk are full: it stays, over the share, for now
                self._items.move_to_end(old_key, last=False)
                self.nbytes += int(old.value.nbytes)
                return

    def _write_out(self, key: str, entry: _Entry) -> bool:
        """Write a device-only chunk to host memory (or disk) before the device lets go of it."""
        try:
            copy = put_object(key, to_host(entry.value), entry.prefix)
        except Exception as e:  # noqa: BLE001 - StorageFull, or the host out of memory: keep it on the device
            logger.warning("could not move chunk %s out of device memory: %s", key, e)
            return False
        self._remember(key, copy)
        assert entry.session_id is not None and entry.desc is not None, f"chunk {key} was not device-only"
        self._moved.append((entry.session_id, entry.desc, copy))
        return True

    def _remember(self, key: str, copy: StoredObject) -> None:
        """Keep the host copy's descriptor until the worker surely has it (it asks for it at most once more)."""
        self._hosted[key] = copy
        while len(self._hosted) > _HOSTED_KEPT:
            self._hosted.pop(next(iter(self._hosted)))

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: str) -> bool:
        return key in self._items


#: the cache of this process (a GPU slot is one process per device)
DEVICE_CACHE = DeviceCache()
