"""Spill files: chunks moved out of shared memory into directories on disk.

A spilled chunk is a plain copy of its segment (the same layout, so
:func:`~.shm.get_object` maps the file as it maps a segment, in any process
of the host). Each worker writes under a directory of its own in every spill
root, ``<root>/<worker prefix>/``, which holds an ``owner`` file naming the
host and process of the worker. The worker removes its directories when it
stops; a worker starting on the same host removes those of workers that died
without stopping (their process is gone).
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import tempfile
import uuid
from dataclasses import replace

from ..errors import ServiceError
from .owner import abandoned, write_owner
from .shm import StoredObject, segment_path

logger = logging.getLogger(__name__)

__all__ = ["DEFAULT_SPILL_ROOT", "SpillDirs", "SpillFailed"]

#: where chunks spill when a worker is given no --spill-dirs
DEFAULT_SPILL_ROOT = os.path.join(tempfile.gettempdir(), "mars-spill")
_OWNER = "owner"
#: a root with less free space than this beyond the chunk is skipped
_RESERVE = 64 << 20


class SpillFailed(ServiceError, OSError):
    """No spill directory could take a chunk (all full, or not writable)."""


class SpillDirs:
    """The spill directories of one worker, used in turn.

    Parameters
    ----------
    roots
        The directories given with ``--spill-dirs``; empty means
        :data:`DEFAULT_SPILL_ROOT`.
    prefix
        The worker's segment prefix: its files go to ``<root>/<prefix>/``.

    Examples
    --------
    >>> import numpy as np, tempfile
    >>> from mars.services.storage.shm import get_object, put_object, unlink_object
    >>> dirs = SpillDirs([tempfile.mkdtemp()], "mars-doc-spill")
    >>> desc = put_object("k", np.arange(100_000), "mars-doc-spill")
    >>> on_disk = dirs.write(desc)
    >>> unlink_object(desc)
    >>> on_disk.spilled, int(get_object(on_disk).sum())
    (True, 4999950000)
    >>> dirs.remove_all()
    """

    def __init__(self, roots: list[str] | tuple[str, ...], prefix: str) -> None:
        self.roots = [os.path.abspath(r) for r in roots] or [DEFAULT_SPILL_ROOT]
        self.prefix = prefix
        self._next = 0
        self._made: set[str] = set()
        for root in self.roots:
            if _is_tmpfs(root):
                logger.warning("spill directory %s is in memory (tmpfs): chunks spilled there free no memory", root)

    def write(self, desc: StoredObject) -> StoredObject:
        """Copy ``desc``'s segment into a spill file; returns the descriptor of the copy.

        The segment is left alone (the caller unlinks it once the copy is
        the chunk's home). Raises :class:`SpillFailed` when no root can
        take it, and FileNotFoundError when the segment is gone.
        Thread-safe for different chunks: the roots' turn is only a hint.
        """
        assert desc.shm_name is not None and not desc.spilled, f"chunk {desc.key} is not in shared memory"
        src = os.open(segment_path(desc.shm_name), os.O_RDONLY)  # FileNotFoundError: the chunk was freed
        try:
            return self._write_from(src, desc)
        finally:
            os.close(src)

    def _write_from(self, src: int, desc: StoredObject) -> StoredObject:
        size = os.fstat(src).st_size
        errors = []
        for _ in range(len(self.roots)):
            root = self.roots[self._next % len(self.roots)]
            self._next += 1
            if _free_bytes(root) < size + _RESERVE:
                errors.append(f"{root}: less than {(size + _RESERVE) >> 20} MiB free")
                continue
            try:
                path = os.path.join(self._own_dir(root), f"{self.prefix}-{uuid.uuid4().hex}")
                _copy(src, path, size)
            except OSError as e:
                self._made.discard(os.path.join(root, self.prefix))  # made again next time, if it went
                errors.append(f"{root}: {e}")
                continue
            return replace(desc, shm_name=path)
        raise SpillFailed(f"cannot spill chunk {desc.key} ({size} bytes): " + "; ".join(errors))

    def remove_all(self) -> None:
        """Remove this worker's spill directories and everything in them."""
        for root in self.roots:
            shutil.rmtree(os.path.join(root, self.prefix), ignore_errors=True)
        self._made.clear()

    def remove_strays(self) -> int:
        """Remove the spill directories that dead workers of this host left behind; returns how many."""
        removed = 0
        for root in self.roots:
            try:
                entries = list(os.scandir(root))
            except OSError:
                continue
            for entry in entries:
                if entry.is_dir(follow_symlinks=False) and abandoned(os.path.join(entry.path, _OWNER)):
                    shutil.rmtree(entry.path, ignore_errors=True)
                    removed += 1
        if removed:
            logger.info("removed %d spill directories of stopped workers from %s", removed, self.roots)
        return removed

    def _own_dir(self, root: str) -> str:
        path = os.path.join(root, self.prefix)
        if path not in self._made:
            os.makedirs(path, mode=0o700, exist_ok=True)
            write_owner(os.path.join(path, _OWNER))
            self._made.add(path)
        return path


def _copy(src: int, path: str, size: int) -> None:
    """Copy ``size`` bytes of open file ``src`` to a new file ``path`` (mode 0600), in the kernel."""
    dst = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    try:
        done = 0
        while done < size:
            n = os.sendfile(dst, src, done, size - done)
            if n == 0:
                raise OSError(errno.EIO, f"the segment ended after {done} of {size} bytes")
            done += n
    except BaseException:
        os.close(dst)
        _remove(path)
        raise
    os.close(dst)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _free_bytes(root: str) -> int:
    try:
        os.makedirs(root, exist_ok=True)
        st = os.statvfs(root)
    except OSError:
        return 0
    return st.f_bavail * st.f_frsize


def _is_tmpfs(path: str) -> bool:
    """Whether ``path`` lies on a tmpfs mount (Linux; False where that cannot be told)."""
    try:
        with open("/proc/mounts") as f:
            mounts = [line.split()[1:3] for line in f]
    except OSError:
        return False
    path = os.path.realpath(path)
    best, kind = "", ""
    for point, fstype in mounts:
        if (path == point or path.startswith(point.rstrip("/") + "/")) and len(point) > len(best):
            best, kind = point, fstype
    return kind == "tmpfs"
