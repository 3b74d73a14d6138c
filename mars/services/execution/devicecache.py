"""What a GPU slot keeps in its device's memory: the chunks it made, for the GPU subtasks after them.

Every chunk a GPU slot makes also goes to the worker's shared memory as a
host copy (other processes and workers read that one, and it spills to disk
like any chunk); the device copy saves the next GPU subtask on this slot the
copy back. Device copies are counted against a share of the device's memory
(``MARS_GPU_CACHE_FRACTION``, default 0.5) and the least recently used are
dropped beyond it: under pressure a chunk lives on in host memory, then on
disk. Keys name immutable results, so a copy is never stale.

>>> cache = DeviceCache(limit=100)
>>> cache.put("a", "not on a device")
>>> cache.get("a") is None
True
"""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import Any

from ...core.device import is_device_array


class DeviceCache:
    """Device arrays by chunk key, least recently used dropped beyond ``limit`` bytes (None: from the device)."""

    def __init__(self, limit: int | None = None):
        self._items: OrderedDict[str, Any] = OrderedDict()
        self._limit = limit
        self.nbytes = 0

    @property
    def limit(self) -> int:
        if self._limit is None:
            import cupy

            _, total = cupy.cuda.runtime.memGetInfo()
            self._limit = int(total * float(os.environ.get("MARS_GPU_CACHE_FRACTION", "0.5")))
        return self._limit

    def get(self, key: str) -> Any:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: str, value: Any) -> None:
        if not is_device_array(value) or key in self._items:
            return
        size = int(value.nbytes)
        if size > self.limit:
            return
        self._items[key] = value
        self.nbytes += size
        while self.nbytes > self.limit:
            _, dropped = self._items.popitem(last=False)
            self.nbytes -= int(dropped.nbytes)

    def __len__(self) -> int:
        return len(self._items)


#: the cache of this process (a GPU slot is one process per device)
DEVICE_CACHE = DeviceCache()
