"""The worker's side of the cluster service: register with every supervisor, then heartbeat.

Each supervisor gets a task of its own, so that one that is slow, down, or
not started yet delays no other. A supervisor that answers a heartbeat with
False has forgotten the worker (it declared it lost, or restarted): the
worker registers with it again.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from collections.abc import Sequence

from ... import oscar as mo
from .core import WorkerInfo, WorkerStats
from .gpus import GPUMonitor
from .resources import ProcessTreeMonitor
from .supervisor import CLUSTER_UID

logger = logging.getLogger(__name__)

WORKER_CLUSTER_UID = "cluster_worker"
#: uids of the worker's actors whose ``stats()`` travel with each heartbeat
STORAGE_UID = "storage"
EXECUTION_UID = "execution"

#: seconds between registration attempts while a supervisor cannot be reached
REGISTER_RETRY = 0.5
#: a call to a supervisor that takes longer than this failed (the next attempt follows)
_CALL_TIMEOUT = 10.0


def local_worker_info(
    address: str,
    n_cpu: int,
    memory_limit: int,
    slot_addresses: Sequence[str] = (),
    io_addresses: Sequence[str] = (),
    cuda_devices: Sequence[int] = (),
) -> WorkerInfo:
    """The :class:`WorkerInfo` of a worker whose main pool is this process.

    Examples
    --------
    >>> info = local_worker_info("127.0.0.1:1234", n_cpu=2, memory_limit=1 << 30)
    >>> info.pid == os.getpid(), info.slot_addresses
    (True, [])
    """
    return WorkerInfo(
        address=address,
        n_cpu=n_cpu,
        memory_limit=memory_limit,
        pid=os.getpid(),
        hostname=socket.gethostname(),
        slot_addresses=list(slot_addresses),
        io_addresses=list(io_addresses),
        cuda_devices=list(cuda_devices),
        started=time.time(),
    )


class WorkerHeartbeatActor(mo.Actor):
    """Keeps a worker registered with every supervisor, and reports its load.

    Lives in the worker's main pool; its CPU and memory figures cover that
    pool's process and all its children (the sub pools).

    Parameters
    ----------
    supervisors
        Addresses of the supervisors' pools; each gets every registration and heartbeat.
    info
        What the worker registers as.
    interval
        Seconds between heartbeats.
    """

    def __init__(self, supervisors: list[str], info: WorkerInfo, interval: float = 1.0) -> None:
        if not supervisors:
            raise ValueError("a worker needs at least one supervisor address, got none")
        if not interval > 0:
            raise ValueError(f"heartbeat interval must be positive, got {interval!r}")
        self._supervisors = list(supervisors)
        self._info = info
        self._interval = interval
        self._monitor: ProcessTreeMonitor | None = None
        self._gpu_monitor: GPUMonitor | None = None
        self._tasks: list[asyncio.Task] = []
        self._stopping = False
        self._local: dict[str, dict] = {}  # latest stats() of the storage and execution actors

    async def __post_create__(self) -> None:
        self._monitor = ProcessTreeMonitor(os.getpid(), self._info.n_cpu, self._info.memory_limit)
        self._gpu_monitor = GPUMonitor(self._info.cuda_devices)
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._serve(address)) for address in self._supervisors]

    async def __pre_destroy__(self) -> None:
        # The flag, not only cancel(): asyncio.wait_for can swallow a cancellation that
        # races with a failing call (bpo-42130), and the loops would carry on.
        self._stopping = True
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            _, pending = await asyncio.wait(self._tasks, timeout=_CALL_TIMEOUT)
            if pending:
                logger.warning("%d heartbeat tasks of worker %s did not stop", len(pending), self._info.address)

    async def get_stats(self) -> WorkerStats:
        """Sample the worker's load now (CPU use is averaged since the previous sample)."""
        assert self._monitor is not None, "get_stats before __post_create__"
        # off the loop: reading the processes' memory would hold up the subtasks' messages
        cpu, memory = await asyncio.get_running_loop().run_in_executor(None, self._monitor.sample)
        return WorkerStats(
            cpu_usage=cpu,
            memory_used=memory,
            memory_limit=self._info.memory_limit,
            storage=await self._local_stats(STORAGE_UID),
            execution=await self._local_stats(EXECUTION_UID),
            gpus=self._gpu_monitor.sample() if self._gpu_monitor is not None else [],
            timestamp=time.time(),
        )

    async def _local_stats(self, uid: str) -> dict:
        """``stats()`` of another actor of this pool; {} while it does not exist (yet).

        An actor too busy to answer within a heartbeat interval gets its
        previous figures reported: waiting longer would delay the heartbeat
        and could get the worker declared lost.
        """
        ref = mo.ActorRef(self.address, uid)
        try:
            self._local[uid] = dict(await ref.stats.options(timeout=max(self._interval, 0.5))())
        except (mo.ActorNotExist, ConnectionError):  # not created yet, or our pool is stopping
            self._local[uid] = {}
        except asyncio.TimeoutError:
            logger.debug("stats() of actor %r in %s is slow: sending its previous figures", uid, self.address)
        except Exception:  # a broken stats() must not stop the heartbeats that keep us alive
            logger.exception("stats() of actor %r in %s failed", uid, self.address)
            self._local[uid] = {}
        return self._local.get(uid, {})

    async def _serve(self, supervisor: str) -> None:
        ref = mo.ActorRef(supervisor, CLUSTER_UID)
        while not self._stopping:
            await self._register(ref)
            await self._heartbeat_until_rejected(ref)
            if not self._stopping:
                logger.warning("supervisor %s forgot worker %s: registering again", supervisor, self._info.address)

    async def _register(self, ref: mo.ActorRef) -> None:
        """Register with the supervisor, retrying until it answers: soon at first (nodes of a
        local cluster start together), then every REGISTER_RETRY s."""
        attempts = 0
        while not self._stopping:
            try:
                await ref.register_worker.options(timeout=_CALL_TIMEOUT)(self._info)
                logger.info("worker %s registered with supervisor %s", self._info.address, ref.address)
                return
            except mo.AuthenticationError as e:
                if attempts == 0:  # wrong or missing token: retrying helps only once it is fixed
                    logger.error("supervisor %s refused worker %s: %s", ref.address, self._info.address, e)
            except (ConnectionError, OSError, asyncio.TimeoutError, mo.ActorNotExist) as e:
                if attempts == 0:  # once per outage: a supervisor starting after us is normal
                    logger.info("supervisor %s not reachable yet (%s); retrying", ref.address, e)
            except Exception:
                logger.exception("registering worker %s with supervisor %s failed", self._info.address, ref.address)
            attempts += 1
            await asyncio.sleep(min(REGISTER_RETRY, 0.01 * 2**attempts))

    async def _heartbeat_until_rejected(self, ref: mo.ActorRef) -> None:
        """Heartbeat every interval until the supervisor answers False; failed calls are retried."""
        failing = False
        while not self._stopping:
            try:
                stats = await self.get_stats()
                if not await ref.heartbeat.options(timeout=_CALL_TIMEOUT)(self._info.address, stats):
                    return
                if failing:
                    logger.info("heartbeats to supervisor %s go through again", ref.address)
                failing = False
            except (ConnectionError, OSError, asyncio.TimeoutError, mo.ActorNotExist) as e:
                if not failing:
                    logger.warning("heartbeat to supervisor %s failed (%s); retrying", ref.address, e)
                failing = True
            except Exception:
                logger.exception("heartbeat of worker %s to supervisor %s failed", self._info.address, ref.address)
            await asyncio.sleep(self._interval)
