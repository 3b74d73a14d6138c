"""The supervisor's side of the cluster service: who the workers are, and whether they live.

:class:`ClusterManagerActor` is a thin shell around :class:`~.core.Membership`:
it stamps calls with the supervisor's clock, checks for silent workers in a
background loop, and wakes callers waiting for the membership to change.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from collections.abc import Callable

import psutil

from ... import oscar as mo
from .core import Membership, WorkerInfo, WorkerStats, WorkerStatus
from .resources import ProcessTreeMonitor
from .timeseries import SeriesStore

logger = logging.getLogger(__name__)

CLUSTER_UID = "cluster"


class ClusterManagerActor(mo.Actor):
    """The workers that registered with this supervisor, alive or lost.

    Parameters
    ----------
    worker_timeout
        Seconds without a heartbeat after which a worker is lost.
    check_interval
        Seconds between checks for silent workers; by default a quarter of
        ``worker_timeout``, at most one second.

    Examples
    --------
    >>> import asyncio
    >>> import mars.oscar as mo
    >>> async def main():
    ...     async with await mo.create_actor_pool("127.0.0.1") as pool:
    ...         ref = await mo.create_actor(ClusterManagerActor, 5.0, uid=CLUSTER_UID, address=pool.address)
    ...         return await ref.get_workers()
    >>> asyncio.run(main())
    []
    """

    def __init__(self, worker_timeout: float = 10.0, check_interval: float | None = None) -> None:
        self._membership = Membership(worker_timeout)
        if check_interval is None:
            check_interval = min(worker_timeout / 4, 1.0)
        if not check_interval > 0:
            raise ValueError(f"check_interval must be positive, got {check_interval!r}")
        self._check_interval = check_interval
        self._changed = asyncio.Event()
        self._checker: asyncio.Task | None = None
        self._monitor: ProcessTreeMonitor | None = None
        self._started = time.time()
        self._series = SeriesStore()

    async def __post_create__(self) -> None:
        self._checker = asyncio.get_running_loop().create_task(self._check_loop())

    async def __pre_destroy__(self) -> None:
        if self._checker is not None:
            self._checker.cancel()
            await asyncio.gather(self._checker, return_exceptions=True)
        self._notify()  # long polls return now rather than at their timeout

    @property
    def membership(self) -> Membership:
        """The state machine itself (for the mock and tests in this process)."""
        return self._membership

    # -- calls from workers -------------------------------------------------
    def register_worker(self, info: WorkerInfo) -> None:
        """Add a worker; one that registers again under a known address rejoins as a new one."""
        known = self._membership.get(info.address)
        self._membership.register(info, time.time())
        logger.info(
            "worker %s %s: %d cpu, %d MiB memory, pid %d on %s",
            info.address, "rejoined" if known else "joined", info.n_cpu, info.memory_limit >> 20,
            info.pid, info.hostname,
        )  # fmt: skip
        self._notify()

    def heartbeat(self, address: str, stats: WorkerStats) -> bool:
        """Record a heartbeat; False tells the worker that it is not known and must register again."""
        now = time.time()
        accepted = self._membership.heartbeat(address, stats, now)
        if accepted:
            self._series.record(address, stats, now)
        return accepted

    def get_series(self, address: str | None = None, since: float = 0.0) -> dict:
        """The last hour of a worker's load at 1 s, or the cluster's with ``address=None`` (see timeseries.py)."""
        return self._series.series(address, since)

    # -- calls from other services -----------------------------------------
    def mark_lost(self, address: str) -> bool:
        """Declare a worker lost now (a caller found its pool gone); False if it was not alive.

        Should the worker still be up, its next heartbeat is refused and it rejoins as a new one.
        """
        if not self._membership.mark_lost(address, time.time()):
            return False
        logger.warning("worker %s declared lost by a caller", address)
        self._notify()
        return True

    def get_workers(self, include_lost: bool = False) -> list[WorkerStatus]:
        """The alive workers (and the lost ones too with ``include_lost``), in the order they joined."""
        self._check()
        return self._membership.all() if include_lost else self._membership.alive()

    def supervisor_info(self) -> dict:
        """This supervisor's own process, for the dashboard: who it is and its CPU and memory use."""
        if self._monitor is None:
            self._monitor = ProcessTreeMonitor(os.getpid(), os.cpu_count() or 1, psutil.virtual_memory().total)
        cpu, memory = self._monitor.sample()
        return {"address": self.address, "state": "alive", "hostname": socket.gethostname(), "pid": os.getpid(),
                "started": self._started, "n_cpu": self._monitor.n_cpu, "cpu_usage": cpu, "memory_used": memory,
                "memory_total": self._monitor.memory_limit, "error": None}

    def get_version(self) -> int:
        """The membership version: it grows on every join and every loss."""
        return self._membership.version

    @mo.no_lock  # a waiting call must not keep workers from registering
    async def wait_for_workers(self, min_count: int = 1, timeout: float | None = 0) -> list[WorkerStatus]:
        """The alive workers as soon as there are ``min_count``, or whatever there is after ``timeout`` s.

        ``timeout=None`` waits as long as it takes.
        """
        await self._wait_until(lambda: len(self._membership.alive()) >= min_count, timeout)
        return self.get_workers()

    @mo.no_lock
    async def watch(
        self, version: int, timeout: float | None, include_lost: bool = False
    ) -> tuple[int, list[WorkerStatus]]:
        """Long poll: ``(version, workers)`` once the version differs from ``version``, or after ``timeout`` s.

        Pass the version a previous call returned (or -1 to get the current
        state at once).
        """
        await self._wait_until(lambda: self._membership.version != version, timeout)
        return self._membership.version, self.get_workers(include_lost)

    # -- inside -------------------------------------------------------------
    async def _wait_until(self, predicate: Callable[[], bool], timeout: float | None) -> bool:
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + max(timeout, 0.0)
        while True:
            self._check()
            if predicate():
                return True
            remaining = None if deadline is None else deadline - loop.time()
            if remaining is not None and remaining <= 0:
                return False
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    def _notify(self) -> None:
        """Wake the waiters; later waiters wait on a fresh event."""
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def _check(self) -> None:
        now = time.time()
        lost = self._membership.check(now)
        for address in lost:
            status = self._membership.get(address)
            silent = now - status.last_heartbeat if status is not None else float("nan")
            logger.warning(
                "worker %s lost: no heartbeat for %.1f s (timeout %.1f s)", address, silent, self._membership.timeout
            )
        if lost:
            self._notify()

    async def _check_loop(self) -> None:
        while True:
            await asyncio.sleep(self._check_interval)
            try:
                self._check()
            except Exception:  # the loop must outlive a bug in one check, or no worker is ever lost
                logger.exception("checking for lost workers failed")
