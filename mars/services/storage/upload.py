"""Chunks that a client puts straight into workers' storage (the partitions of a pandas frame it executes).

A client on a worker's host writes the segments itself, under the worker's
segment prefix, and has the worker's storage actor check and register them:
the bytes are copied once, from the client's memory into shared memory, and
never cross a socket. A client on another host sends the values to the
storage actor (or, over the web API, to the web service), which writes them.
Either way the supervisor and the slots never see the data.

:func:`upload_chunks` is that procedure, over any API that offers
``upload_targets``, ``adopt_stored``, ``put_chunks`` and ``release``: the
session API over the actor protocol, and the web client over HTTP, where
only descriptors travel when the client shares the workers' host.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ... import oscar as mo
from ...core.pools import thread_pool
from ..errors import DataNotFound, NoWorkersError
from .shm import StoredObject, is_local_prefix, put_object, unlink_object
from .worker import STORAGE_UID

#: threads that copy a client's chunks into shared memory side by side (a copy releases the GIL)
WRITE_THREADS = 4
#: values sent in one request at most this big (a bigger chunk goes alone): under the web service's body limit
SEND_BATCH_BYTES = 256 << 20

Chunk = tuple[str, tuple, Any]  # (key, shape, value)


@dataclass(frozen=True)
class UploadTarget:
    """A worker that takes uploaded chunks: its address, slots (its share) and segment prefix."""

    address: str
    n_slots: int
    prefix: str


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


def value_nbytes(value: Any) -> int:
    """Bytes of a chunk value, for spreading and batching chunks (a guess is enough).

    >>> import numpy as np
    >>> value_nbytes(np.zeros(10))
    80
    """
    try:
        usage = value.memory_usage(index=True, deep=False)
        return int(usage.sum() if hasattr(usage, "sum") else usage)
    except (AttributeError, TypeError):
        return int(getattr(value, "nbytes", 1))


def batches(chunks: Sequence[Chunk], limit: int | None = None) -> list[list[Chunk]]:
    """``chunks`` cut into runs of at most ``limit`` (default :data:`SEND_BATCH_BYTES`) bytes each; a bigger
    chunk is a run of its own.

    >>> import numpy as np
    >>> [len(b) for b in batches([("a", (2,), np.zeros(2)), ("b", (2,), np.zeros(2)), ("c", (9,), np.zeros(9))], 40)]
    [2, 1]
    """
    limit = SEND_BATCH_BYTES if limit is None else limit
    out: list[list[Chunk]] = []
    size = 0
    for chunk in chunks:
        n = value_nbytes(chunk[2])
        if not out or size + n > limit:
            out.append([])
            size = 0
        out[-1].append(chunk)
        size += n
    return out


async def write_local(items: Sequence[tuple[str, Any]], prefix: str) -> list[StoredObject]:
    """Store ``(key, value)`` pairs in this host's shared memory under ``prefix``, side by side on threads.

    Nothing is left behind when one fails.

    Examples
    --------
    >>> descs = await write_local([("k", df)], "mars-w1")  # doctest: +SKIP
    """
    loop = asyncio.get_running_loop()
    written = await asyncio.gather(
        *[loop.run_in_executor(thread_pool("upload", WRITE_THREADS), put_object, key, value, prefix) for key, value in items],
        return_exceptions=True)
    descs = [d for d in written if isinstance(d, StoredObject)]
    error = next((e for e in written if isinstance(e, BaseException)), None)
    if error is not None:
        for d in descs:
            unlink_object(d)
        raise error
    return descs


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
    descs = await write_local(items, prefix)
    try:
        await ref.register(session_id, descs)
    except BaseException:
        for d in descs:
            unlink_object(d)
        raise
    return descs


async def upload_chunks(api: Any, session_id: str, chunks: Sequence[Chunk]) -> dict[str, StoredObject]:
    """Put ``(key, shape, value)`` chunks into the workers ``api.upload_targets`` names, held by the session.

    They are spread over the workers by size and slots. For a worker whose
    shared memory this process shares, the segments are written here and only
    their descriptors go to ``api.adopt_stored``; for the others the values go
    to ``api.put_chunks`` in batches. When any part fails, what the others
    stored is released, and the error raised. Returns the descriptors of the
    segments written here, by key (the caller may map them: see
    :func:`~.shm.get_object`).
    """
    targets: list[UploadTarget] = await api.upload_targets(session_id)
    if not targets:
        raise NoWorkersError(f"no worker to put {len(chunks)} chunks on: none is registered")
    where = spread([value_nbytes(c[2]) for c in chunks], [max(1, t.n_slots) for t in targets])
    groups: dict[int, list[Chunk]] = {}
    for chunk, w in zip(chunks, where):
        groups.setdefault(w, []).append(chunk)

    written: dict[str, StoredObject] = {}

    async def to(target: UploadTarget, group: list[Chunk]) -> None:
        if is_local_prefix(target.prefix):
            descs = await write_local([(k, v) for k, _, v in group], target.prefix)
            try:
                await api.adopt_stored(session_id, target.address, [(k, s, d) for (k, s, _), d in zip(group, descs)])
                written.update((k, d) for (k, _, _), d in zip(group, descs))
                return
            except DataNotFound:  # the same prefix in another host's shared memory: the values go after all
                for d in descs:
                    unlink_object(d)
            except BaseException:
                for d in descs:
                    unlink_object(d)
                raise
        for batch in batches(group):
            await api.put_chunks(session_id, target.address, batch)

    ordered = sorted(groups)
    results = await asyncio.gather(*[to(targets[w], groups[w]) for w in ordered], return_exceptions=True)
    error = next((r for r in results if isinstance(r, BaseException)), None)
    if error is not None:
        stored = [k for w, r in zip(ordered, results) if not isinstance(r, BaseException) for k, _, _ in groups[w]]
        if stored:
            await asyncio.gather(api.release(session_id, stored), return_exceptions=True)
        raise error
    return written
