"""The storage service: chunk data in a worker's shared memory, read in place by its
slots and sent to other workers from its IO sub pools; beyond ``--cache-mem``, spilled to disk."""

from __future__ import annotations

from .api import fetch_values
from .cache import ChunkCache
from .core import ChunkStore
from .shm import (
    INLINE_BELOW,
    StorageFull,
    StoredObject,
    get_object,
    put_object,
    unlink_object,
    unlink_prefix,
)
from .spill import SpillDirs, SpillFailed
from .worker import STORAGE_UID, TRANSFER_UID, StorageActor, TransferActor

__all__ = [
    "INLINE_BELOW",
    "STORAGE_UID",
    "TRANSFER_UID",
    "ChunkCache",
    "ChunkStore",
    "SpillDirs",
    "SpillFailed",
    "StorageActor",
    "StorageFull",
    "StoredObject",
    "TransferActor",
    "fetch_values",
    "get_object",
    "put_object",
    "unlink_object",
    "unlink_prefix",
]
