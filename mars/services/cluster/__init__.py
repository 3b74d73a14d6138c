"""The cluster service: workers register with the supervisors, heartbeat, and report their load.

- :mod:`.core`: :class:`WorkerInfo`, :class:`WorkerStats`, :class:`WorkerStatus`
  and the :class:`Membership` state machine (no I/O).
- :mod:`.supervisor`: :class:`ClusterManagerActor`, in each supervisor's pool.
- :mod:`.worker`: :class:`WorkerHeartbeatActor`, in each worker's main pool.
- :mod:`.resources`: CPU and memory of a process tree; ``--n-cpu`` and memory limits.
- :mod:`.api` / :mod:`.mock`: :class:`ClusterAPI` and its in-memory stand-in.
"""

from __future__ import annotations

from .api import ClusterAPI
from .core import Membership, WorkerInfo, WorkerStats, WorkerStatus
from .mock import MockClusterAPI
from .resources import ProcessTreeMonitor, parse_memory_limit, parse_n_cpu
from .supervisor import CLUSTER_UID, ClusterManagerActor
from .worker import WORKER_CLUSTER_UID, WorkerHeartbeatActor, local_worker_info

__all__ = [
    "CLUSTER_UID",
    "WORKER_CLUSTER_UID",
    "ClusterAPI",
    "ClusterManagerActor",
    "Membership",
    "MockClusterAPI",
    "ProcessTreeMonitor",
    "WorkerHeartbeatActor",
    "WorkerInfo",
    "WorkerStats",
    "WorkerStatus",
    "local_worker_info",
    "parse_memory_limit",
    "parse_n_cpu",
]
