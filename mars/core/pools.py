"""Thread pools a process's parts share by name, made on first use.

A process forked from one that had made a pool inherits the executor but not
its threads: what it was handed would never run. A pool is therefore made
again in a process other than the one that made it.
"""

from __future__ import annotations

import concurrent.futures
import os
import threading

_pools: dict[str, tuple[int, concurrent.futures.ThreadPoolExecutor]] = {}
_lock = threading.Lock()


def thread_pool(name: str, workers: int) -> concurrent.futures.ThreadPoolExecutor:
    """This process's pool called ``name`` (its threads are named ``mars-<name>``), made with ``workers`` threads
    on first use."""
    made = _pools.get(name)
    if made is not None and made[0] == os.getpid():
        return made[1]
    with _lock:
        made = _pools.get(name)
        if made is None or made[0] != os.getpid():
            made = _pools[name] = (os.getpid(), concurrent.futures.ThreadPoolExecutor(
                workers, thread_name_prefix=f"mars-{name}"))
        return made[1]
