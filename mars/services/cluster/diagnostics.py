"""What a node's processes are doing: their recent log records and their threads' stacks.

Every pool of a node (a supervisor's, and a worker's main pool and each of
its sub pools) holds a :class:`DiagnosticsActor`. The dashboard reads a
worker's logs and stacks through it, from every process of the worker, so
that a slot stuck in a user's function shows where it is stuck.

Log records are kept by a :class:`LogRing` on the process's root logger: the
last :data:`LOG_RING_SIZE` records, formatted. In a node's own processes the
ring also keeps INFO records while the console shows only what the user's
``--log-level`` asks for; in a user's process (a local cluster) levels are
left as the user set them.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
import traceback
from collections import deque

from ... import oscar as mo

DIAGNOSTICS_UID = "diagnostics"
#: records each process keeps
LOG_RING_SIZE = 2000
#: most records one call returns
MAX_LOG_LIMIT = 10_000


class LogRing(logging.Handler):
    """The last ``capacity`` log records of this process as ``(time, level, logger, message)``.

    Examples
    --------
    >>> ring = LogRing(2)
    >>> log = logging.getLogger("demo.ring"); log.addHandler(ring); log.propagate = False
    >>> for i in range(3): log.warning("n=%d", i)
    >>> [r[3] for r in ring.tail(10)]
    ['n=1', 'n=2']
    """

    def __init__(self, capacity: int = LOG_RING_SIZE) -> None:
        super().__init__(logging.NOTSET)
        self.setFormatter(logging.Formatter("%(message)s"))  # with the traceback of exc_info, if any
        self.records: deque[tuple[float, str, str, str]] = deque(maxlen=capacity)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = self.format(record)
        except Exception:  # noqa: BLE001 - a record with bad arguments is kept as its raw parts
            message = f"{record.msg!r} % {record.args!r}"
        self.records.append((record.created, record.levelname, record.name, message))

    def tail(self, limit: int) -> list[tuple[float, str, str, str]]:
        """The newest ``limit`` records, oldest first."""
        records = list(self.records)
        return records[-limit:] if limit > 0 else []


_ring: LogRing | None = None
_ring_lock = threading.Lock()


def install_log_ring(capture_info: bool = False, shown_level: int | str | None = None) -> LogRing:
    """This process's ring, on its root logger (added once; added again if a reconfiguration dropped it).

    With ``capture_info``, used in a node's own processes, the root logger
    passes INFO records on while every other root handler keeps showing only
    ``shown_level`` (by default the level the root had before).
    """
    global _ring
    root = logging.getLogger()
    with _ring_lock:
        if _ring is None:
            _ring = LogRing()
        if _ring not in root.handlers:
            root.addHandler(_ring)
        if capture_info and (root.getEffectiveLevel() > logging.INFO or shown_level is not None):
            shown = root.getEffectiveLevel() if shown_level is None else _level_number(shown_level)
            for handler in root.handlers:  # each shows what it showed under the root's old level
                if handler is not _ring and handler.level < shown:
                    handler.setLevel(shown)
            root.setLevel(min(logging.INFO, root.getEffectiveLevel()))
        return _ring


def _level_number(level: int | str) -> int:
    number = level if isinstance(level, int) else logging.getLevelName(str(level).upper())
    if not isinstance(number, int):
        raise ValueError(f"not a logging level: {level!r}")
    return number


def thread_stacks() -> list[dict]:
    """Every thread of this process with the stack it is at now, innermost call last."""
    frames = sys._current_frames()
    out = []
    for thread in threading.enumerate():
        frame = frames.get(thread.ident) if thread.ident is not None else None
        stack = "".join(traceback.format_stack(frame)) if frame is not None else ""
        out.append({"name": thread.name, "id": thread.ident, "daemon": thread.daemon, "stack": stack})
    return out


class DiagnosticsActor(mo.Actor):
    """Answers for one process of a node: its recent logs and its threads' stacks.

    Parameters
    ----------
    label
        The process's name within its node: ``main``, ``slot-0``, ``io-0``.
    capture_info
        The process is the node's own (not a user's): keep INFO records too.
    shown_level
        The level its console shows (the node's ``--log-level``), with ``capture_info``.
    """

    def __init__(self, label: str = "main", capture_info: bool = False, shown_level: str | None = None) -> None:
        self.label = label
        self._capture_info = capture_info
        self._shown_level = shown_level

    async def __post_create__(self) -> None:
        install_log_ring(self._capture_info, self._shown_level)

    @mo.no_lock
    def logs(self, limit: int = 200) -> dict:
        """``{"process", "pid", "records": [{"time", "level", "logger", "message"}]}``, oldest first."""
        limit = max(0, min(int(limit), MAX_LOG_LIMIT))
        records = install_log_ring().tail(limit)
        return {"process": self.label, "pid": os.getpid(), "records": [
            {"time": t, "level": level, "logger": name, "message": message} for t, level, name, message in records]}

    @mo.no_lock
    def stacks(self) -> dict:
        """``{"process", "address", "pid", "time", "threads": [{"name", "id", "daemon", "stack"}]}``."""
        return {"process": self.label, "address": self.address, "pid": os.getpid(), "time": time.time(),
                "threads": thread_stacks()}
