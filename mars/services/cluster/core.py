"""Cluster membership as plain data and a state machine, with no I/O.

A worker registers with a :class:`WorkerInfo`, then sends :class:`WorkerStats`
with every heartbeat. The supervisor keeps a :class:`WorkerStatus` per worker
in a :class:`Membership`, which is told the time by its caller, so that losing
a worker is unit-tested with a fake clock instead of sleeps.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any

ALIVE = "alive"
LOST = "lost"

#: lost workers a supervisor remembers (for the dashboard); older ones are forgotten
DEFAULT_MAX_LOST = 100


@dataclass
class WorkerInfo:
    """What a worker says about itself when it registers."""

    address: str
    n_cpu: int
    memory_limit: int
    pid: int
    hostname: str
    slot_addresses: list[str] = field(default_factory=list)
    io_addresses: list[str] = field(default_factory=list)
    cuda_devices: list[int] = field(default_factory=list)
    #: unix time the worker started
    started: float = 0.0


@dataclass
class WorkerStats:
    """What each heartbeat carries: the worker's load as it measured it."""

    #: cores busy over the worker's process tree since its previous sample, in [0, n_cpu]
    cpu_usage: float
    #: bytes of memory used by the worker's process tree
    memory_used: int
    memory_limit: int
    #: the worker's storage actor's ``stats()`` (n_chunks, memory_bytes, disk_bytes), or {}
    storage: dict = field(default_factory=dict)
    #: the worker's execution actor's ``stats()`` (n_running, n_queued, ...), or {}
    execution: dict = field(default_factory=dict)
    #: unix time of the sample, by the worker's clock
    timestamp: float = 0.0
    #: one dict per CUDA device: index, name, memory_used, memory_total, utilization (percent)
    gpus: list = field(default_factory=list)


@dataclass
class WorkerStatus:
    """A supervisor's view of one worker."""

    info: WorkerInfo
    stats: WorkerStats | None
    state: str
    #: supervisor's time of the registration or of the latest heartbeat
    last_heartbeat: float
    lost_at: float | None = None

    @property
    def address(self) -> str:
        return self.info.address

    @property
    def alive(self) -> bool:
        return self.state == ALIVE

    def to_json(self) -> dict:
        """A flat dict of JSON-able values, for the web API and the dashboard.

        Storage and execution figures are flattened with a ``storage_`` or
        ``execution_`` prefix; load figures are ``None`` until the first heartbeat.

        Examples
        --------
        >>> info = WorkerInfo("127.0.0.1:1234", 4, 2 << 30, 99, "node-1")
        >>> status = WorkerStatus(info, None, "alive", last_heartbeat=10.0)
        >>> d = status.to_json()
        >>> d["address"], d["state"], d["n_cpu"], d["cpu_usage"]
        ('127.0.0.1:1234', 'alive', 4, None)
        """
        info, stats = self.info, self.stats
        out: dict[str, Any] = {
            "address": info.address,
            "state": self.state,
            "hostname": info.hostname,
            "pid": info.pid,
            "started": info.started,
            "n_cpu": info.n_cpu,
            "n_slots": len(info.slot_addresses),
            "n_io": len(info.io_addresses),
            "cuda_devices": list(info.cuda_devices),
            "cpu_usage": None if stats is None else stats.cpu_usage,
            "memory_used": None if stats is None else stats.memory_used,
            "memory_limit": info.memory_limit if stats is None else stats.memory_limit,
            "gpus": [] if stats is None else list(stats.gpus),
            "stats_timestamp": None if stats is None else stats.timestamp,
            "last_heartbeat": self.last_heartbeat,
            "lost_at": self.lost_at,
        }
        if stats is not None:
            out.update(_flat("storage", stats.storage))
            out.update(_flat("execution", stats.execution))
        return out


def _flat(prefix: str, values: dict) -> dict[str, Any]:
    """Scalar entries of ``values`` as ``prefix_key``; anything else would not be JSON-able."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, float) and not math.isfinite(value):
            value = None  # JSON has no NaN or infinity
        if value is None or isinstance(value, (bool, int, float, str)):
            out[f"{prefix}_{key}"] = value
    return out


class Membership:
    """The workers a supervisor knows, and which of them are alive.

    Every method takes the supervisor's current time as ``now``; a worker whose
    latest heartbeat is more than ``timeout`` seconds old at a :meth:`check` is
    lost. ``version`` grows by one on every join and every loss.

    Examples
    --------
    >>> m = Membership(timeout=5.0)
    >>> m.register(WorkerInfo("w1:1", 2, 1 << 30, 1, "h"), now=0.0)
    >>> m.heartbeat("w1:1", WorkerStats(0.5, 1 << 20, 1 << 30), now=4.0)
    True
    >>> m.check(now=8.0), m.check(now=9.5)
    ([], ['w1:1'])
    >>> m.heartbeat("w1:1", WorkerStats(0.5, 1 << 20, 1 << 30), now=10.0)  # must register again
    False
    >>> m.version
    2
    """

    def __init__(self, timeout: float, max_lost: int = DEFAULT_MAX_LOST) -> None:
        if not (isinstance(timeout, (int, float)) and math.isfinite(timeout) and timeout > 0):
            raise ValueError(f"worker timeout must be a positive number of seconds, got {timeout!r}")
        if max_lost < 0:
            raise ValueError(f"max_lost must be >= 0, got {max_lost!r}")
        self.timeout = float(timeout)
        self.max_lost = max_lost
        self.version = 0
        self._workers: dict[str, WorkerStatus] = {}

    def register(self, info: WorkerInfo, now: float) -> None:
        """Add a worker; one already known under this address is replaced (it rejoins as a new one)."""
        self._workers.pop(info.address, None)  # re-insert: order of joining is kept
        self._workers[info.address] = WorkerStatus(info, None, ALIVE, last_heartbeat=now)
        self.version += 1

    def heartbeat(self, address: str, stats: WorkerStats, now: float) -> bool:
        """Record a heartbeat; False when the worker is unknown or lost, and must register again."""
        status = self._workers.get(address)
        if status is None or status.state != ALIVE:
            return False
        status.stats = stats
        status.last_heartbeat = max(status.last_heartbeat, now)
        return True

    def check(self, now: float) -> list[str]:
        """Declare lost every alive worker silent for more than ``timeout``; returns their addresses."""
        silent = [
            s.address for s in self._workers.values() if s.state == ALIVE and now - s.last_heartbeat > self.timeout
        ]
        for address in silent:
            self.mark_lost(address, now)
        return silent

    def mark_lost(self, address: str, now: float) -> bool:
        """Declare a worker lost at once (e.g. its pool is known to be gone); False if it was not alive."""
        status = self._workers.get(address)
        if status is None or status.state != ALIVE:
            return False
        status.state, status.lost_at = LOST, now
        self.version += 1
        self._forget_old_lost()
        return True

    def _forget_old_lost(self) -> None:
        lost = [s for s in self._workers.values() if s.state == LOST]
        if len(lost) > self.max_lost:
            lost.sort(key=lambda s: s.lost_at or 0.0)
            for status in lost[: len(lost) - self.max_lost]:
                del self._workers[status.address]

    def get(self, address: str) -> WorkerStatus | None:
        """A snapshot of one worker's status, or None if it is not known."""
        status = self._workers.get(address)
        return None if status is None else copy.copy(status)

    def alive(self) -> list[WorkerStatus]:
        """Snapshots of the alive workers, in the order they joined."""
        return [copy.copy(s) for s in self._workers.values() if s.state == ALIVE]

    def all(self) -> list[WorkerStatus]:
        """Snapshots of every worker known, alive or lost, in the order they joined."""
        return [copy.copy(s) for s in self._workers.values()]

    def __len__(self) -> int:
        return len(self._workers)
