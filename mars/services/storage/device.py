"""Chunks that live in a GPU slot's device memory, and their host copies.

A GPU slot keeps the chunks it makes on its device and hands the worker a
descriptor that names the slot (``StoredObject.device``) instead of a shared
memory segment. Nothing is copied to host memory until a reader elsewhere
needs the value: a CPU slot, another GPU slot, another worker's transfer, a
client's fetch. Then :func:`host_descs` asks the holding slot for a host
copy (through pinned staging), records it in the worker's index in place of
the device descriptor, and hands it to the reader; the device copy stays as
a cache for the slot's next GPU subtasks. Under device memory pressure the
slot writes host copies itself and reports them with its next outcome
(:func:`adopt_moved`). When the worker forgets a device chunk,
:func:`drop_device` tells its slot to free the device memory.

All of this runs on the worker's main pool loop, beside the
:class:`~.cache.ChunkCache` it updates; without GPU slots none of it is ever
reached.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ... import oscar as mo
from ..errors import DataNotFound
from .shm import StoredObject, unlink_object

if TYPE_CHECKING:
    from .cache import ChunkCache

logger = logging.getLogger(__name__)

#: the names of the GPU slot actor's methods this module calls
HOST_COPIES = "host_copies"
DROP_DEVICE = "drop_device"


def holder_name(address: str, uid: str) -> str:
    """How a device descriptor names the slot actor holding it.

    >>> holder_ref("127.0.0.1:1234#slot-gpu-0").uid
    'slot-gpu-0'
    >>> holder_name("127.0.0.1:1234", "slot-gpu-0")
    '127.0.0.1:1234#slot-gpu-0'
    """
    return f"{address}#{uid}"


def holder_ref(name: str) -> mo.ActorRef:
    """The actor a :func:`holder_name` names."""
    address, _, uid = name.rpartition("#")
    return mo.ActorRef(address, uid)


async def host_descs(cache: ChunkCache, session_id: str, descs: list[StoredObject],
                     keep_on: str | None = None) -> list[StoredObject]:
    """``descs`` with every device-resident one replaced by a host copy, made now where needed.

    ``keep_on`` names a slot whose own device chunks are left as they are
    (the slot about to read them has them in hand). Raises DataNotFound
    naming the first chunk whose slot cannot give it (the slot died with it).
    """
    by_holder: dict[str, list[StoredObject]] = {}
    for desc in descs:
        if desc.device is not None and desc.device != keep_on:
            by_holder.setdefault(desc.device, []).append(desc)
    if not by_holder:
        return descs
    holders = list(by_holder)
    copies = await asyncio.gather(*[_copies_from(h, session_id, by_holder[h]) for h in holders])
    made: dict[str, StoredObject] = {}
    for holder, olds, news in zip(holders, (by_holder[h] for h in holders), copies):
        for old, new in zip(olds, news):
            made[old.key] = _adopt(cache, session_id, old, new)
    return [made.get(d.key, d) if d.device is not None and d.device != keep_on else d for d in descs]


async def _copies_from(holder: str, session_id: str, descs: list[StoredObject]) -> list[StoredObject]:
    keys = [d.key for d in descs]
    try:
        return await getattr(holder_ref(holder), HOST_COPIES)(keys)
    except (LookupError, DataNotFound, ConnectionError, OSError) as e:
        raise DataNotFound(f"chunk {keys[0]} of session {session_id} was held in the device memory of GPU slot "
                           f"{holder}, which cannot give it now ({type(e).__name__}: {e})") from None


def _adopt(cache: ChunkCache, session_id: str, old: StoredObject, new: StoredObject) -> StoredObject:
    """Record ``new`` for ``old`` in the index; the index's current descriptor either way."""
    store = cache.store
    if store.replace(session_id, old, new):
        cache.spill_if_needed()
        return new
    current = store.find(session_id, old.key)
    if current is None or current.shm_name != new.shm_name:
        # gone or made again meanwhile: this copy is nobody's (the reader gets it all the same, mapped at once)
        asyncio.get_running_loop().call_later(5.0, unlink_object, new)
    return new if current is None else current


def adopt_moved(cache: ChunkCache, moved: Iterable[tuple[str, StoredObject, StoredObject]]) -> None:
    """Record the host copies a GPU slot wrote when its device memory ran short: ``(session, device desc, copy)``."""
    for session_id, old, new in moved:
        if not cache.store.replace(session_id, old, new):
            current = cache.store.find(session_id, old.key)
            if current is None or current.shm_name != new.shm_name:
                unlink_object(new)  # the chunk went meanwhile
    cache.spill_if_needed()


def drop_device(descs: Iterable[StoredObject]) -> None:
    """Tell the slots holding ``descs`` on their devices to free them (descriptors of other kinds are ignored)."""
    by_holder: dict[str, list[str]] = {}
    for desc in descs:
        if desc.device is not None:
            by_holder.setdefault(desc.device, []).append(desc.key)
    if not by_holder:
        return
    loop = asyncio.get_running_loop()
    for holder, keys in by_holder.items():
        task = loop.create_task(_drop(holder, keys))
        _PENDING.add(task)
        task.add_done_callback(_PENDING.discard)


_PENDING: set[asyncio.Task] = set()


async def _drop(holder: str, keys: list[str]) -> Any:
    try:
        await getattr(holder_ref(holder), DROP_DEVICE)(keys)
    except Exception as e:  # noqa: BLE001 - a slot that went took its device memory with it
        logger.debug("could not free %d device chunks on %s: %s", len(keys), holder, e)
