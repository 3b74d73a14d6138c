"""What other services call to read a worker's chunks."""

from __future__ import annotations

import logging
import re
import zlib
from typing import Any

from ... import oscar as mo
from ..errors import DataNotFound
from .shm import StoredObject, get_object, is_local_prefix, unwrap
from .worker import STORAGE_UID, TRANSFER_UID

logger = logging.getLogger(__name__)

#: a segment's name: its owner's prefix, then a unique part
_SEGMENT = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_.-]*)-[0-9a-f]{32}")
#: by owner's address: whether its segments are mapped here (it shares this host's shared memory)
_MAPS_OWNER: dict[str, bool] = {}


async def fetch_values(
    session_id: str, keys: list[str], storage_address: str, transfer_addresses: list[str], map_local: bool = True
) -> list[Any]:
    """Read chunks held by another worker.

    Parameters
    ----------
    session_id
        The session the chunks belong to.
    keys
        The chunk keys; the values come back in this order.
    storage_address
        The owner worker's main pool address (its :class:`~.worker.StorageActor`).
    transfer_addresses
        The owner's IO sub pools, each with a :class:`~.worker.TransferActor`;
        when there are some, one of them serves the read so that the owner's
        main process copies nothing. When that IO process cannot serve it
        (it died, or is being restarted), the owner's main process does.
    map_local
        When the owner shares this host's shared memory, only the chunks'
        descriptors travel and their segments are mapped here (no bytes are
        copied through a socket); chunks spilled to disk, and owners on
        other hosts, are read the sending way.

    Returns
    -------
    list
        The objects.

    Raises
    ------
    DataNotFound
        Naming the first key the owner does not hold.

    Examples
    --------
    >>> async def read(where):  # doctest: +SKIP
    ...     return await fetch_values("session", ["chunk-1"], where.worker, where.transfer_addresses)
    """
    if not keys:
        return []
    if map_local and _MAPS_OWNER.get(storage_address, True):
        mapped = await _mapped(session_id, keys, storage_address)
        if mapped is not None:
            return mapped
    # serialized=True: the owner sends the segments' bytes without unpickling them first
    values = None
    if transfer_addresses:
        # a stable hash (str hashes differ per process) spreads keys over IO pools
        address = transfer_addresses[zlib.crc32(keys[0].encode()) % len(transfer_addresses)]
        try:
            values = await mo.ActorRef(address, TRANSFER_UID).read(session_id, keys, serialized=True)
        except (OSError, mo.ActorNotExist) as e:  # the IO process is gone or restarting, not the chunks
            logger.warning("IO process %s of worker %s could not serve %d chunks (%r): reading them from the "
                           "worker's main process", address, storage_address, len(keys), e)
    if values is None:
        values = await mo.ActorRef(storage_address, STORAGE_UID).get_values(session_id, keys, serialized=True)
    return [unwrap(v) for v in values]


async def _mapped(session_id: str, keys: list[str], storage_address: str) -> list[Any] | None:
    """The objects of ``keys`` mapped from the owner's segments, when it shares this host's shared memory
    (only their descriptors travel); None when some are not in such a segment: on disk (spilled), or the
    owner is on another host (its later reads then go the sending way at once)."""
    descs: list[StoredObject] = await mo.ActorRef(storage_address, STORAGE_UID).get_descs(session_id, keys)
    names = [d.shm_name for d in descs if d.shm_name is not None]
    segments = [m for m in map(_SEGMENT.fullmatch, names) if m is not None]
    if segments and storage_address not in _MAPS_OWNER:  # an owner's segments all share its prefix: asked once
        _MAPS_OWNER[storage_address] = is_local_prefix(segments[0].group(1))
    if len(segments) < len(names) or not _MAPS_OWNER.get(storage_address, True):
        return None
    try:
        return [get_object(d) for d in descs]
    except DataNotFound:  # a segment went meanwhile: the owner's next answer says where the chunk is now
        return None
