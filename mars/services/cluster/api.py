"""The cluster service as other services and the web API call it."""

from __future__ import annotations

from ... import oscar as mo
from .core import WorkerInfo, WorkerStats, WorkerStatus
from .supervisor import CLUSTER_UID


class ClusterAPI:
    """Typed calls to the :class:`~.supervisor.ClusterManagerActor` of one supervisor.

    Examples
    --------
    >>> import asyncio
    >>> import mars.oscar as mo
    >>> from mars.services.cluster.supervisor import ClusterManagerActor
    >>> async def main():
    ...     async with await mo.create_actor_pool("127.0.0.1") as pool:
    ...         await mo.create_actor(ClusterManagerActor, uid=CLUSTER_UID, address=pool.address)
    ...         api = ClusterAPI(pool.address)
    ...         return await api.wait_for_workers(1, timeout=0.1)
    >>> asyncio.run(main())
    []
    """

    def __init__(self, supervisor_address: str) -> None:
        self.supervisor_address = supervisor_address
        self._ref = mo.ActorRef(supervisor_address, CLUSTER_UID)

    async def get_workers(self, include_lost: bool = False) -> list[WorkerStatus]:
        """The alive workers (and the lost ones too with ``include_lost``), in the order they joined."""
        return await self._ref.get_workers(include_lost)

    async def wait_for_workers(self, min_count: int = 1, timeout: float | None = 0) -> list[WorkerStatus]:
        """The alive workers once there are ``min_count``, or whatever there is after ``timeout`` s."""
        return await self._ref.wait_for_workers(min_count, timeout)

    async def watch(
        self, version: int, timeout: float | None, include_lost: bool = False
    ) -> tuple[int, list[WorkerStatus]]:
        """Long poll: ``(version, workers)`` once membership differs from ``version``, or after ``timeout`` s.

        Start with ``version=-1`` to get the current state at once, then pass
        back the version each call returns.
        """
        return await self._ref.watch(version, timeout, include_lost)

    async def get_version(self) -> int:
        """The membership version: it grows on every join and every loss."""
        return await self._ref.get_version()

    async def mark_lost(self, address: str) -> bool:
        """Declare a worker lost now (its pool is known to be gone); False if it was not alive."""
        return await self._ref.mark_lost(address)

    async def register_worker(self, info: WorkerInfo) -> None:
        await self._ref.register_worker(info)

    async def heartbeat(self, address: str, stats: WorkerStats) -> bool:
        """False when the supervisor does not know the worker (it must register again)."""
        return await self._ref.heartbeat(address, stats)
