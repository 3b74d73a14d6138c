"""Chunk data in POSIX shared memory: one segment per stored object.

A slot process serializes a chunk (pickle protocol 5, buffers out of band)
and copies the buffers into one segment; any process of the same host
attaches the segment by name and deserializes with memoryviews over it, so
numpy arrays and pandas blocks are read-only views of the segment, never
copies. Small objects skip the segment and travel inline in their
descriptor.

Segments are files under ``/dev/shm`` (a temp directory where there is no
``/dev/shm``), opened with ``os.open`` and mapped with :mod:`mmap` rather
than through :class:`multiprocessing.shared_memory.SharedMemory`: that class
registers every segment with the resource tracker, which unlinks it when the
creating slot exits and warns, and its ``close()`` raises BufferError while
arrays still view the segment. A mapping made here lives exactly as long as
the arrays over it, and survives the segment's unlink.
"""

from __future__ import annotations

import errno
import logging
import mmap
import os
import pickle
import tempfile
import threading
import uuid
import weakref
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from ...serialization import deserialize, serialize
from .owner import abandoned, write_owner
from ..errors import DataNotFound, ServiceError

logger = logging.getLogger(__name__)

__all__ = [
    "INLINE_BELOW",
    "SHM_DIR",
    "Serialized",
    "StorageFull",
    "StoredObject",
    "get_object",
    "is_local_prefix",
    "keep_mappings",
    "put_object",
    "segment_path",
    "segment_size",
    "segment_views",
    "sweep_kept",
    "unlink_object",
    "unlink_prefix",
    "unwrap",
    "views_of",
    "claim_prefix",
    "release_prefix",
    "remove_abandoned_prefixes",
]

#: the file naming the process whose segments have a prefix (see claim_prefix)
_OWNER_SUFFIX = ".owner"
#: objects whose pickle (header and buffers) is smaller than this travel inline
INLINE_BELOW = 64 * 1024
#: where segments live: tmpfs on Linux; elsewhere a temp directory (page cache backed)
SHM_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else os.path.join(tempfile.gettempdir(), "mars-shm")
#: where segments go when SHM_DIR is full (a container's 64 MB /dev/shm, say): files on disk,
#: mapped the same way (the page cache keeps them in memory while there is room);
#: their names start with "@"
DISK_DIR = os.environ.get("MARS_SHM_FALLBACK_DIR") or os.path.join(tempfile.gettempdir(), "mars-shm-disk")
#: pickle headers this long (object columns, Python containers) are stored in the
#: segment, not carried by the descriptor through every message that names the chunk
_HEADER_IN_SEGMENT = 64 * 1024
#: buffers start on cache-line boundaries so that vectorized kernels see aligned data
_ALIGN = 64

# Mappings attached by this process, by segment name. Weak: a mapping closes
# when the last array viewing it dies; while one lives, readers share it.
_attached: weakref.WeakValueDictionary[str, mmap.mmap] = weakref.WeakValueDictionary()



class _KeptMappings:
    """Mappings a process keeps past their last reader once it asked (:func:`keep_mappings`; slots do).

    Those of segments it reads a second time, for as long as the segment
    exists. A table's partitions, read by query after query, are then read
    from pages mapped already: a fresh mapping costs a page fault per 64 KB
    on every read (TPC-H on a 2-worker cluster: 5% of the wall time, 7% of
    the CPU). A slot's thread and its event loop (reading ahead, sweeping)
    both reach it, hence the lock.
    """

    #: names of segments read once that are remembered, the oldest forgotten first
    READ_BEFORE_MAX = 4096

    def __init__(self) -> None:
        self.on = False
        self.kept: dict[str, mmap.mmap] = {}
        self._read_before: dict[str, None] = {}
        self._lock = threading.Lock()

    def switch(self, on: bool) -> None:
        self.on = on
        if not on:
            with self._lock:
                self.kept.clear()
                self._read_before.clear()

    def offer(self, name: str, mm: mmap.mmap) -> None:
        """``name`` was just mapped: kept when it was read before, else remembered as read."""
        if not self.on or name.startswith(("/", "@")):  # a file on disk (spilled) is the page cache's to keep
            return
        with self._lock:
            if name in self._read_before:
                del self._read_before[name]
                self.kept[name] = mm
                return
            self._read_before[name] = None
            if len(self._read_before) > self.READ_BEFORE_MAX:
                del self._read_before[next(iter(self._read_before))]

    def sweep(self) -> int:
        with self._lock:
            names = list(self.kept)
        gone = [name for name in names if not os.path.exists(_path(name))]
        with self._lock:
            for name in gone:
                self.kept.pop(name, None)
        return len(gone)


_KEPT = _KeptMappings()


class StorageFull(ServiceError, MemoryError):
    """Shared memory has no room for an object (the tmpfs behind ``/dev/shm`` is full)."""


@dataclass(frozen=True)
class StoredObject:
    """Where a stored chunk is and how to rebuild it.

    Attributes
    ----------
    key
        The chunk key.
    nbytes
        Size of the data: the bytes held in shared memory, or the length of
        the pickle (header and buffers) of an inline object.
    header
        The pickle header; empty for inline objects (``value`` is kept
        instead) and when the header itself sits in the segment.
    buffer_sizes
        Sizes of the out-of-band buffers, in segment order; empty when inline.
    shm_name
        The shared-memory segment holding the buffers; None when inline. An
        absolute path when the chunk was spilled: a file of a spill
        directory, with the segment's layout, mapped the same way.
    value
        The object itself when inline; None otherwise.
    shm_header_size
        Non-zero when the header was too big to carry around in the
        descriptor: it then fills the start of the segment, this many bytes.
    device
        Set when the chunk lives only in a GPU slot's device memory: that
        slot's actor, ``"address#uid"``. Readers in other processes ask for a
        host copy first (see :mod:`.device`); ``nbytes`` is the device size.
    """

    key: str
    nbytes: int
    header: bytes
    buffer_sizes: tuple[int, ...]
    shm_name: str | None = None
    value: Any = None
    shm_header_size: int = 0
    device: str | None = None

    @property
    def inline(self) -> bool:
        """Whether the object travels in the descriptor rather than in a segment."""
        return self.shm_name is None and self.device is None

    @property
    def on_device(self) -> bool:
        """Whether the chunk is held only in a GPU slot's device memory (no host copy yet)."""
        return self.device is not None

    @property
    def spilled(self) -> bool:
        """Whether the data sits in a spill file on disk rather than in shared memory."""
        return self.shm_name is not None and self.shm_name.startswith("/")


def put_object(key: str, value: Any, prefix: str, inline_below: int = INLINE_BELOW) -> StoredObject:
    """Store ``value``: inline when its pickle is small, else in a new segment.

    Parameters
    ----------
    key
        The chunk key, recorded in the descriptor.
    value
        Anything :func:`mars.serialization.serialize` accepts.
    prefix
        Start of the segment's name (``f"{prefix}-{unique}"``): one per
        worker, so that :func:`unlink_prefix` can clean up after it.
    inline_below
        Pickles (header plus buffers) smaller than this stay inline.

    Returns
    -------
    StoredObject
        The descriptor; pass it to :func:`get_object` in any process of the host.

    Examples
    --------
    >>> import numpy as np
    >>> desc = put_object("k", np.arange(100_000), "mars-doc")
    >>> desc.inline, desc.nbytes
    (False, 800000)
    >>> int(get_object(desc).sum())
    4999950000
    >>> unlink_object(desc)
    """
    _check_prefix(prefix)
    header, buffers = serialize(value)
    sizes = tuple(b.nbytes for b in buffers)
    if len(header) + sum(sizes) < inline_below:
        return StoredObject(key, len(header) + sum(sizes), b"", (), None, value)
    header_size = 0
    if len(header) >= _HEADER_IN_SEGMENT:  # e.g. object columns: keep the pickle out of every message
        header_size = len(header)
        buffers = [memoryview(header), *buffers]
        header = b""
    name = f"{prefix}-{uuid.uuid4().hex}"
    try:
        _write_segment(name, key, buffers)
    except StorageFull:
        if os.path.abspath(DISK_DIR) == os.path.abspath(SHM_DIR):
            raise
        _warn_full_once()
        name = "@" + name
        _write_segment(name, key, buffers)
    return StoredObject(key, sum(sizes) + header_size, header, sizes, name, None, header_size)


def get_object(desc: StoredObject) -> Any:
    """The object ``desc`` describes, its arrays zero-copy views of the segment.

    The views are read-only and stay valid after the segment is unlinked, for
    as long as they are alive.

    Raises
    ------
    DataNotFound
        The segment is gone (the chunk was deleted, or its worker cleaned up).

    Examples
    --------
    >>> desc = put_object("k", {"a": 1}, "mars-doc")
    >>> desc.inline, get_object(desc)
    (True, {'a': 1})
    """
    if desc.device is not None:
        raise DataNotFound(f"chunk {desc.key} is held in the device memory of GPU slot {desc.device}: "
                           "its worker's storage makes a host copy for readers elsewhere")
    if desc.shm_name is None:
        return desc.value
    header, buffers = segment_views(desc)
    return deserialize(header, buffers)


def segment_views(desc: StoredObject) -> tuple[bytes | memoryview, list[memoryview]]:
    """The pickle header and read-only views of the buffers of a segment-backed ``desc``.

    For senders that pass the serialized form on as it is, without rebuilding
    the object (see :class:`Serialized`).
    """
    assert desc.shm_name is not None, "an inline object has no segment"
    return views_of(desc, _attach(desc))


def views_of(desc: StoredObject, mapping: Any) -> tuple[bytes | memoryview, list[memoryview]]:
    """The pickle header and views of the buffers of ``desc`` in ``mapping``, a map of its segment
    (however it was mapped: see :func:`segment_size` for the bytes it must hold)."""
    sizes = _sizes(desc)
    offsets, _ = _layout(sizes)
    with memoryview(mapping) as whole:
        # slices keep their own export of the mapping, independent of ``whole``
        views = [whole[o : o + n] for o, n in zip(offsets, sizes)]
    if desc.shm_header_size:
        return views[0], views[1:]
    return desc.header, views


def segment_size(desc: StoredObject) -> int:
    """The bytes the segment of a segment-backed ``desc`` holds at least (its regions, aligned)."""
    return _layout(_sizes(desc))[1]


def unlink_object(desc: StoredObject) -> None:
    """Remove the segment's name so that its memory is freed once no process maps it.

    Inline descriptors and segments that are already gone are ignored.
    """
    if desc.shm_name is not None:
        _unlink(desc.shm_name)


def unlink_prefix(prefix: str, keep: Collection[str] = ()) -> int:
    """Remove every segment named ``f"{prefix}-..."``, e.g. those of a dead worker, but those in ``keep``
    (descriptors' ``shm_name``: segments still registered).

    Only names continuing with ``-`` match, so that worker ``w1``'s cleanup
    leaves worker ``w10``'s segments alone.

    Returns
    -------
    int
        How many segments were removed.
    """
    _check_prefix(prefix)
    start = f"{prefix}-"
    removed = 0
    for directory, mark in ((SHM_DIR, ""), (DISK_DIR, "@")):
        try:
            names = os.listdir(directory)
        except FileNotFoundError:
            continue
        removed += sum(_unlink(mark + name) for name in names
                       if name.startswith(start) and mark + name not in keep)
    return removed


def claim_prefix(prefix: str) -> None:
    """Mark segments named ``f"{prefix}-..."`` as this process's (``<SHM_DIR>/<prefix>.owner``): should it
    be killed, a worker starting later on this host removes them (:func:`remove_abandoned_prefixes`)."""
    _check_prefix(prefix)
    os.makedirs(SHM_DIR, exist_ok=True)
    write_owner(os.path.join(SHM_DIR, f"{prefix}{_OWNER_SUFFIX}"))


def is_local_prefix(prefix: str) -> bool:
    """Whether the owner of ``prefix`` claimed it in this host's shared memory (:func:`claim_prefix`):
    this process can then store segments under it that the owner maps.

    >>> claim_prefix("mars-doc-local"); is_local_prefix("mars-doc-local")
    True
    >>> release_prefix("mars-doc-local"); is_local_prefix("mars-doc-local")
    False
    """
    _check_prefix(prefix)
    return os.path.exists(os.path.join(SHM_DIR, f"{prefix}{_OWNER_SUFFIX}"))


def release_prefix(prefix: str) -> None:
    """The owner's own end: its owner file goes (after its segments, see :func:`unlink_prefix`)."""
    _check_prefix(prefix)
    try:
        os.unlink(os.path.join(SHM_DIR, f"{prefix}{_OWNER_SUFFIX}"))
    except FileNotFoundError:
        pass


def remove_abandoned_prefixes() -> int:
    """Remove the segments of every prefix whose owner process on this host is gone; returns how many."""
    try:
        names = os.listdir(SHM_DIR)
    except FileNotFoundError:
        return 0
    removed = 0
    for name in names:
        if not name.endswith(_OWNER_SUFFIX) or not abandoned(os.path.join(SHM_DIR, name)):
            continue
        prefix = name[:-len(_OWNER_SUFFIX)]
        removed += unlink_prefix(prefix)
        release_prefix(prefix)
    if removed:
        logger.warning("removed %d shared-memory segments that killed workers of this host left", removed)
    return removed


class Serialized:
    """A stored object in its serialized form, which pickles as the object itself.

    A sender (a transfer actor, the storage actor) returns these so that the
    segment's bytes go out on the socket as they are: the receiver rebuilds the
    object while unpickling the message, and the sender never deserializes and
    re-serializes it. Use :func:`unwrap` where the call may have been a direct
    one within a process, which does not pickle.
    """

    __slots__ = ("buffers", "header")

    def __init__(self, header: bytes | memoryview, buffers: list[memoryview]) -> None:
        self.header, self.buffers = header, buffers

    @classmethod
    def of(cls, desc: StoredObject) -> Any:
        """The wrapper for a segment-backed ``desc``; an inline one's value as it is."""
        if desc.shm_name is None:
            return desc.value
        return cls(*segment_views(desc))

    def __reduce__(self) -> tuple:
        header = self.header if isinstance(self.header, bytes) else pickle.PickleBuffer(self.header)
        return deserialize, (header, [pickle.PickleBuffer(b) for b in self.buffers])

    def value(self) -> Any:
        """The object, rebuilt here."""
        return deserialize(self.header, self.buffers)


def unwrap(value: Any) -> Any:
    """``value``, rebuilt when it is still a :class:`Serialized`."""
    return value.value() if isinstance(value, Serialized) else value


# -- segments ----------------------------------------------------------------
def _check_prefix(prefix: str) -> None:
    if not prefix or "/" in prefix or "\0" in prefix:
        raise ValueError(f"a segment prefix must be a non-empty file name without '/', got {prefix!r}")


def _layout(sizes: tuple[int, ...] | list[int]) -> tuple[list[int], int]:
    """Aligned offsets of regions of ``sizes``, and the segment size (at least 1: mmap refuses 0)."""
    offsets, end = [], 0
    for n in sizes:
        start = -(-end // _ALIGN) * _ALIGN
        offsets.append(start)
        end = start + n
    return offsets, max(end, 1)


def _sizes(desc: StoredObject) -> tuple[int, ...]:
    return (desc.shm_header_size, *desc.buffer_sizes) if desc.shm_header_size else desc.buffer_sizes


def segment_path(name: str) -> str:
    """The file behind segment ``name``: in ``SHM_DIR``, ``DISK_DIR`` (``@`` names) or a spill directory."""
    if name.startswith("/"):
        return name
    return os.path.join(DISK_DIR, name[1:]) if name.startswith("@") else os.path.join(SHM_DIR, name)


_path = segment_path


_warned_full = False


def _warn_full_once() -> None:
    global _warned_full
    if not _warned_full:
        _warned_full = True
        logger.warning("shared memory in %s is full: chunks go to files in %s (raise the size of %s, "
                       "e.g. docker --shm-size)", SHM_DIR, DISK_DIR, SHM_DIR)


def _write_segment(name: str, key: str, buffers: list[memoryview]) -> None:
    """Create segment ``name`` and copy ``buffers`` into it at aligned offsets."""
    path = _path(name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    offsets, size = _layout([b.nbytes for b in buffers])
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    try:
        _reserve(fd, size, key, claim=name.startswith("@"))
        for offset, buf in zip(offsets, buffers):
            _pwrite_all(fd, buf.cast("B") if buf.format != "B" else buf, offset, os.path.dirname(path))
    except BaseException:
        _unlink(name)
        raise
    finally:
        os.close(fd)


def _reserve(fd: int, size: int, key: str, claim: bool) -> None:
    """Give the segment its size; with ``claim`` (a file on disk), claim its blocks now where the OS can.

    Shared memory is not claimed ahead: on tmpfs that zeroes every page the
    writes then fill (a put of 5.6 MB took 2.2 ms with it, 2.0 without). A full
    tmpfs fails the writes instead, with the same error, and the segment is removed.
    """
    os.ftruncate(fd, size)
    if not claim or not hasattr(os, "posix_fallocate"):
        return
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as e:
        if e.errno in (errno.ENOSPC, errno.ENOMEM):
            raise StorageFull(f"no space left in {DISK_DIR} to store chunk {key} ({size} bytes)") from e
        if e.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
            raise


def _pwrite_all(fd: int, buf: memoryview, offset: int, where: str) -> None:
    # pwrite rather than a writable mapping: no page faults in the writer, and
    # a full device is an OSError rather than SIGBUS
    done = 0
    try:
        while done < buf.nbytes:
            done += os.pwrite(fd, buf[done:], offset + done)
    except OSError as e:
        if e.errno in (errno.ENOSPC, errno.ENOMEM):
            raise StorageFull(f"no space left in {where} ({buf.nbytes} bytes)") from e
        raise


def _attach(desc: StoredObject) -> mmap.mmap:
    """A read-only mapping of ``desc``'s segment, shared with live earlier readers."""
    name = desc.shm_name
    assert name is not None
    mm = _attached.get(name)
    if mm is not None:
        return mm
    size = segment_size(desc)
    try:
        fd = os.open(_path(name), os.O_RDONLY)
    except FileNotFoundError:
        raise DataNotFound(f"chunk {desc.key}: its shared memory segment {name} is gone") from None
    try:
        mm = mmap.mmap(fd, size, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)  # the mapping keeps the memory; the descriptor is not needed
    _attached[name] = mm
    _KEPT.offer(name, mm)
    return mm


def keep_mappings(on: bool = True) -> None:
    """From now on, keep the mappings of segments this process reads again (see :class:`_KeptMappings`);
    ``False`` stops, and lets go of those kept. The process calls :func:`sweep_kept` often enough that a
    deleted or spilled segment's pages are not held for long."""
    _KEPT.switch(on)


def sweep_kept() -> int:
    """Let go of the kept mappings whose segments are gone (deleted, spilled); returns how many.

    A mapping outlives its segment's name: kept, it would hold the pages of
    a deleted chunk, or of one spilled to disk to make room.
    """
    return _KEPT.sweep()


def _unlink(name: str) -> bool:
    """Remove segment ``name``; False when it was already gone."""
    _attached.pop(name, None)
    _KEPT.kept.pop(name, None)
    try:
        os.unlink(_path(name))
    except FileNotFoundError:
        return False
    return True
