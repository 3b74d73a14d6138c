"""An in-memory stand-in for :class:`~.api.ClusterAPI`, for other services' tests.

It runs the supervisor's own logic (a :class:`~.supervisor.ClusterManagerActor`
object called directly, with no pool and no background check), so that
waiting and watching behave as they do for real; workers join and leave only
when a test says so.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

from .core import Membership, WorkerInfo, WorkerStats, WorkerStatus
from .supervisor import ClusterManagerActor

#: workers of the mock never time out by themselves: tests lose them with lose_worker
_NEVER = 1e12


class MockClusterAPI:
    """The :class:`~.api.ClusterAPI` methods over an in-memory :class:`~.core.Membership`.

    Examples
    --------
    >>> import asyncio
    >>> api = MockClusterAPI()
    >>> _ = api.add_worker("w1:1", n_cpu=2)
    >>> [w.info.n_cpu for w in asyncio.run(api.get_workers())]
    [2]
    """

    def __init__(self, supervisor_address: str = "mock-supervisor:0") -> None:
        self.supervisor_address = supervisor_address
        self._manager = ClusterManagerActor(worker_timeout=_NEVER)

    @property
    def membership(self) -> Membership:
        """The membership itself, for tests that look inside."""
        return self._manager.membership

    # -- helpers for tests ----------------------------------------------------
    def add_worker(
        self,
        address: str,
        n_cpu: int = 1,
        memory_limit: int = 1 << 30,
        slot_addresses: Sequence[str] | None = None,
        io_addresses: Sequence[str] = (),
        cuda_devices: Sequence[int] = (),
        stats: WorkerStats | None = None,
    ) -> WorkerInfo:
        """Register a worker; its slots default to ``n_cpu`` made-up addresses."""
        if slot_addresses is None:
            slot_addresses = [f"{address}/slot-{i}" for i in range(n_cpu)]
        info = WorkerInfo(
            address=address,
            n_cpu=n_cpu,
            memory_limit=memory_limit,
            pid=os.getpid(),
            hostname="mock",
            slot_addresses=list(slot_addresses),
            io_addresses=list(io_addresses),
            cuda_devices=list(cuda_devices),
            started=time.time(),
        )
        self._manager.register_worker(info)
        if stats is not None:
            self._manager.heartbeat(address, stats)
        return info

    def lose_worker(self, address: str) -> bool:
        """Declare a worker lost, as the supervisor does when its heartbeats stop."""
        return self._manager.mark_lost(address)

    # -- the API --------------------------------------------------------------
    async def get_workers(self, include_lost: bool = False) -> list[WorkerStatus]:
        return self._manager.get_workers(include_lost)

    async def wait_for_workers(self, min_count: int = 1, timeout: float | None = 0) -> list[WorkerStatus]:
        return await self._manager.wait_for_workers(min_count, timeout)

    async def watch(
        self, version: int, timeout: float | None, include_lost: bool = False
    ) -> tuple[int, list[WorkerStatus]]:
        return await self._manager.watch(version, timeout, include_lost)

    async def get_version(self) -> int:
        return self._manager.get_version()

    async def mark_lost(self, address: str) -> bool:
        return self._manager.mark_lost(address)

    async def register_worker(self, info: WorkerInfo) -> None:
        self._manager.register_worker(info)

    async def heartbeat(self, address: str, stats: WorkerStats) -> bool:
        return self._manager.heartbeat(address, stats)
