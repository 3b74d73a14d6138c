"""What other services call to read a worker's chunks."""

from __future__ import annotations

import zlib
from typing import Any

from ... import oscar as mo
from .shm import unwrap
from .worker import STORAGE_UID, TRANSFER_UID


async def fetch_values(
    session_id: str, keys: list[str], storage_address: str, transfer_addresses: list[str]
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
        main process copies nothing.

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
    # serialized=True: the owner sends the segments' bytes without unpickling them first
    if transfer_addresses:
        # a stable hash (str hashes differ per process) spreads keys over IO pools
        address = transfer_addresses[zlib.crc32(keys[0].encode()) % len(transfer_addresses)]
        values = await mo.ActorRef(address, TRANSFER_UID).read(session_id, keys, serialized=True)
    else:
        values = await mo.ActorRef(storage_address, STORAGE_UID).get_values(session_id, keys, serialized=True)
    return [unwrap(v) for v in values]
