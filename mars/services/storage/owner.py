"""Which worker process of this host made a name, and whether that process is gone.

A worker's spill directories and its shared-memory segments outlive it when
it is killed (SIGKILL, the OOM killer): nothing of it runs to remove them. It
leaves an owner file beside them naming its host and process (pid and start
time, so that a reused pid is not taken for it); a worker starting later on
the same host removes what dead owners left.
"""

from __future__ import annotations

import json
import os
import socket

import psutil


def write_owner(path: str) -> None:
    """Record this process as the owner, in the file ``path``."""
    me = psutil.Process()
    tmp = f"{path}.{me.pid}.tmp"
    with open(tmp, "w") as f:
        json.dump({"host": socket.gethostname(), "pid": me.pid, "started": me.create_time()}, f)
    os.replace(tmp, path)  # a reader never sees half a record


def abandoned(path: str) -> bool:
    """Whether the owner file ``path`` names a process of this host that is gone.

    An unreadable file, or one from another host (a directory shared over the
    network), is never taken for abandoned: what is not known to be ours is not touched.
    """
    try:
        with open(path) as f:
            owner = json.load(f)
        if owner["host"] != socket.gethostname():
            return False
        return not _alive(int(owner["pid"]), float(owner["started"]))
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _alive(pid: int, started: float) -> bool:
    try:
        return abs(psutil.Process(pid).create_time() - started) < 1.0
    except psutil.NoSuchProcess:
        return False
    except psutil.Error:
        return True
