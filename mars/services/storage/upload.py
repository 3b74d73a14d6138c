"""Chunks that a client puts straight into workers' storage (the partitions of a pandas frame it executes).

A client on a worker's host writes the segments itself, under the worker's
segment prefix, and has the worker's storage actor register them: the bytes
are copied once, from the client's memory into shared memory, and never
cross a socket. A client on another host sends the values to the storage
actor, which writes them: one socket copy, one copy into shared memory.
Either way the supervisor and the slots never see the data.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Sequence
from typing import Any

from ... import oscar as mo
from .shm import StoredObject, is_local_prefix, put_object, unlink_object
from .worker import STORAGE_UID

#: threads that copy a client's chunks into shared memory side by side (a copy releases the GIL)
WRITE_THREADS = 4
_pool: concurrent.futures.ThreadPoolExecutor | None = None


def _writers() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = concurrent.futures.ThreadPoolExecutor(WRITE_THREADS, thread_name_prefix="mars-upload")
    return _pool


def spread(sizes: Sequence[int], weights: Sequence[int]) -> list[int]:
    """Which worker takes each chunk: the one with the fewest bytes per unit of weight (its slots) so far.

    Chunks go in their order, so that neighbouring partitions are spread
    evenly too; of two equal choices, the worker that holds less so far.

    Examples
    --------
    >>> spread([10, 10, 10, 10], [1, 1])
    [0, 1, 0, 1]
    >>> spread([30, 10, 10, 10], [1, 1])
    [0, 1, 1, 1]
    >>> spread([5, 5, 5], [2, 1])
    [0, 1, 0]
    """
    if not weights or any(w <= 0 for w in weights):
        raise ValueError(f"spread needs workers with positive weights, got {list(weights)}")
    load = [0.0] * len(weights)
    out = []
    for size in sizes:
        i = min(range(len(weights)), key=lambda j: ((load[j] + size) / weights[j], load[j] / weights[j]))
        load[i] += size
        out.append(i)
    return out


async def put_values(session_id: str, worker: str, items: list[tuple[str, Any]]) -> list[StoredObject]:
    """Store ``(key, value)`` pairs in ``worker``'s storage for ``session_id``; their descriptors, in order.

    Written here when the worker shares this host's shared memory, else sent
    to its storage actor. Nothing is left behind when it fails.

    Examples
    --------
    >>> descs = await put_values("s1", "127.0.0.1:7201", [("k", df)])  # doctest: +SKIP
    """
    ref = mo.ActorRef(worker, STORAGE_UID)
    prefix = await ref.prefix()
    if not is_local_prefix(prefix):
        return await ref.put_values(session_id, items)  # type: ignore[no-any-return]
    loop = asyncio.get_running_loop()
    written = await asyncio.gather(
        *[loop.run_in_executor(_writers(), put_object, key, value, prefix) for key, value in items],
        return_exceptions=True)
    descs = [d for d in written if isinstance(d, StoredObject)]
    try:
        error = next((e for e in written if isinstance(e, BaseException)), None)
        if error is not None:
            raise error
        await ref.register(session_id, descs)
    except BaseException:
        for d in descs:
            unlink_object(d)
        raise
    return descs
