"""What other services call to read a worker's chunks."""

from __future__ import annotations

import logging
import zlib
from typing import Any

from ... import oscar as mo
from .shm import unwrap
from .worker import STORAGE_UID, TRANSFER_UID

logger = logging.getLogger(__name__)


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
        main process copies nothing. When that IO process cannot serve it
        (it died, or is being restarted), the owner's main process does.

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
