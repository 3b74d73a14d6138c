"""Starting and stopping the nodes of a cluster: supervisor, worker, and the web service alone.

The command-line entry points (:mod:`mars.deploy.oscar.cmdline`) and
:func:`mars.deploy.local.new_cluster` both come here with a merged config
dict (the defaults shipped in ``config.yml``, a user's file, then flags).

A supervisor is one actor pool running the cluster, session and task
services, and the web service when it has a web port. A worker is a main
pool (storage, execution queue, heartbeats) with one sub pool process per
CPU slot, each limited to one BLAS/OpenMP thread so that ``--n-cpu N``
really means N busy cores, plus ``--n-io-process`` IO sub pools that serve
its chunks to other workers.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import socket
import time
import uuid
from typing import Any

import psutil

from ... import oscar as mo
from ...oscar import tokenfile
from ...services.cluster.core import ALIVE, WorkerInfo, WorkerStatus
from ...services.cluster.diagnostics import DIAGNOSTICS_UID, DiagnosticsActor
from ...services.cluster.gpus import resolve_devices
from ...services.cluster.resources import parse_memory_limit, parse_n_cpu
from ...services.cluster.supervisor import CLUSTER_UID, ClusterManagerActor
from ...services.cluster.worker import WORKER_CLUSTER_UID, WorkerHeartbeatActor
from ...services.execution.api import EXECUTION_UID, SLOT_RUNNER_UID
from ...services.execution.memory import SOFT_LIMIT, MemoryBudget
from ...services.execution.slot import SlotRunnerActor
from ...services.execution.worker import ExecutionActor
from ...services.session.api import SESSION_MANAGER_UID
from ...services.session.supervisor import SessionManagerActor
from ...services.storage.cache import ChunkCache
from ...services.storage.spill import SpillDirs
from ...services.storage.worker import (
    STORAGE_UID,
    TRANSFER_UID,
    StorageActor,
    TransferActor,
)
from ...services.task.processor import TaskConfig
from .config import check_dirs
from .tokens import ClusterToken, joining_token, supervisor_token, tls_config

logger = logging.getLogger(__name__)

#: slots run chunk functions single-threaded: the worker's parallelism is its slots
_ONE_THREAD = {name: "1" for name in (
    "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS",
)}


def _address(host: str, port: int | str | None) -> str:
    return f"{host}:{int(port or 0)}"


def _split_list(value: Any) -> list[str]:
    if not value:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value]


async def _destroy_quietly(address: str, uids: tuple[str, ...]) -> None:
    """Destroy actors in order (their ``__pre_destroy__`` cleans up); a node stops whatever fails."""
    for uid in uids:
        try:
            await mo.destroy_actor(mo.ActorRef(address, uid))
        except Exception as e:  # noqa: BLE001 - stopping anyway
            logger.debug("stopping %s: could not destroy %s: %s", address, uid, e)


def _web_options(config: dict, tls: mo.TLSConfig | None, advertise: str | None) -> dict:
    """The web service's keyword arguments from the ``web`` section and the TLS settings."""
    web = config.get("web") or {}
    return dict(max_body_size=int(web.get("max_body", 1 << 30)), allow_origins=list(web.get("allow_origins") or []),
                allow_hosts=list(web.get("allow_hosts") or []), advertise=advertise,
                header_timeout=float(web.get("header_timeout", 30.0)),
                keepalive_timeout=float(web.get("keepalive_timeout", 75.0)),
                metrics_token=(config.get("security") or {}).get("metrics_token") or None,
                ssl_context=tls.server_context() if tls is not None and tls.serves else None)


def _advertised(address: str, host: str | None) -> str:
    """``address`` as others reach it: the advertised host in place of the bound one."""
    if not host:
        return address
    return f"{host}:{address.rsplit(':', 1)[1]}"


def _web_url(web: Any, advertise: str | None) -> str:
    """A web service's URL as others reach it (http or https, with the advertised host when one is set)."""
    if not advertise:
        return str(web.url)
    return f"{web.url.split('://')[0]}://{_advertised(web.address, advertise)}"


class SupervisorNode:
    def __init__(self, pool: Any, supervisors: list[str], web: Any = None, token: str | None = None):
        self.pool = pool
        self.supervisors = supervisors
        self.web = web
        self.token = token
        self.advertise: str | None = None
        self.token_files = tokenfile.TokenFiles([])

    @property
    def address(self) -> str:
        """As other nodes reach it (the advertised host, when one is set)."""
        return _advertised(self.pool.external_address, self.advertise)

    @property
    def web_address(self) -> str | None:
        """The web service's URL as others reach it (the advertised host, when one is set)."""
        if self.web is None:
            return None
        return _web_url(self.web, self.advertise)

    def publish_token(self, token: ClusterToken, fixed_port: bool) -> None:
        """Leave the token where this user's workers and clients on this host find it by the node's addresses.

        A token made here for a port given on the command line stays after a
        stop, for a supervisor restarted there (see :func:`supervisor_token`).
        """
        if self.token is not None:
            addresses = [self.pool.external_address, self.address]
            if self.web is not None:
                addresses += [self.web.address, self.web_address]
            keep = token.made and fixed_port
            self.token_files = tokenfile.write_token_files(addresses, self.token, keep) + token.claim

    async def stop(self) -> None:
        self.token_files.remove()
        if self.web is not None:
            await self.web.stop()
            self.web = None
        await _destroy_quietly(self.pool.external_address, (SESSION_MANAGER_UID, CLUSTER_UID, DIAGNOSTICS_UID))
        await self.pool.stop()


def _tune_gc() -> None:
    """Fewer cyclic collections in a node process.

    Tiling and scheduling make objects by the hundred thousand, nearly none of
    them in cycles (ops hold their outputs weakly); with the default
    thresholds the collector rescans them again and again, which cost a third
    of the supervisor's time on a 10,000-chunk job.
    """
    gc.set_threshold(50_000, 20, 20)


def preload_kernels() -> None:
    """Import the tensor and dataframe packages, before a node starts serving.

    A job's ops are unpickled on the node's event loop as they arrive: the
    first dataframe job would import pandas there, stalling the loop (and a
    worker's heartbeats with it) for a second or more on a busy machine,
    enough for the supervisor to take a live worker for lost. Imported on a
    thread beside the loop instead, the import held the GIL while the memory
    guard had to watch a job's first subtasks. So a node pays it as it starts
    (about 0.5 s), before it forks its slot processes, which inherit it.
    """
    from ... import dataframe, tensor  # noqa: F401


async def start_supervisor(config: dict) -> SupervisorNode:
    """Start a supervisor pool with its services (and web, when ``supervisor.web`` and a web port)."""
    _tune_gc()
    preload_kernels()
    sup = config["supervisor"]
    cluster_token = supervisor_token(config, int(sup.get("port") or 0), _split_list(sup.get("supervisors")))
    token = cluster_token.value
    tls = tls_config(config)
    pool = await mo.create_actor_pool(_address(sup["host"], sup.get("port")), n_process=0, token=token, tls=tls,
                                      use_uvloop=config.get("oscar", {}).get("use_uvloop", "auto"))
    address = pool.external_address
    if sup.get("advertise_address"):
        address = f"{sup['advertise_address']}:{address.rsplit(':', 1)[1]}"
    supervisors = _split_list(sup.get("supervisors")) or [address]
    if address not in supervisors:
        supervisors.append(address)
    cluster_cfg = config.get("cluster", {})
    task_cfg = config.get("task", {})
    try:
        await mo.create_actor(ClusterManagerActor, float(cluster_cfg.get("worker_timeout", 10.0)),
                              uid=CLUSTER_UID, address=pool.external_address)
        await mo.create_actor(DiagnosticsActor, "main", uid=DIAGNOSTICS_UID, address=pool.external_address)
        await mo.create_actor(SessionManagerActor, TaskConfig(
            no_worker_timeout=float(task_cfg.get("no_worker_timeout", 60.0)),
            no_worker_warning=float(task_cfg.get("no_worker_warning", 2.0)),
            max_retries=int(task_cfg.get("max_retries", 3))), int(sup.get("session_history", 50)),
                              uid=SESSION_MANAGER_UID, address=pool.external_address)
        web = None
        if sup.get("web", True) and sup.get("web_port") is not None:
            from ...services.web.server import (
                start_web_server,  # the web stack loads only where it is served
            )

            web = await start_web_server(sup["host"], int(sup["web_port"]), supervisors, token=token,
                                         insecure=token is None,
                                         **_web_options(config, tls, sup.get("advertise_address")))
    except BaseException:
        await pool.stop()
        raise
    node = SupervisorNode(pool, supervisors, web, token)
    node.advertise = sup.get("advertise_address")
    node.publish_token(cluster_token, fixed_port=bool(sup.get("port")))
    return node


class WorkerNode:
    def __init__(self, pool: Any, info: WorkerInfo, prefix: str):
        self.pool = pool
        self.info = info
        self.prefix = prefix
        #: the server of this worker's GET /metrics (``--metrics-port``), or None
        self.metrics: Any = None

    @property
    def address(self) -> str:
        """As other nodes reach it (the advertised host, when one is set)."""
        return self.info.address

    async def stop(self) -> None:
        if self.metrics is not None:
            await self.metrics.stop()
        # heartbeats stop first, so supervisors see the worker go; storage unlinks its segments
        await _destroy_quietly(self.pool.external_address,
                               (WORKER_CLUSTER_UID, EXECUTION_UID, STORAGE_UID, DIAGNOSTICS_UID))
        await self.pool.stop()


def _worker_pool_layout(n_cpu: int, n_io: int, cuda_devices: list[int]) -> tuple[list[str], list[dict]]:
    """Labels and environments of the sub pools: CPU slots, IO processes, then one GPU slot per device.

    >>> _worker_pool_layout(1, 0, [3])[0], _worker_pool_layout(1, 0, [3])[1][1]["CUDA_VISIBLE_DEVICES"]
    (['main', 'slot-0', 'gpu-3'], '3')
    """
    labels = (["main"] + [f"slot-{i}" for i in range(n_cpu)] + [f"io-{i}" for i in range(n_io)]
              + [f"gpu-{d}" for d in cuda_devices])
    envs = [dict(_ONE_THREAD) for _ in range(n_cpu + n_io)]
    if cuda_devices:
        for env in envs:  # CPU slots must not grab a GPU
            env["CUDA_VISIBLE_DEVICES"] = ""
    # a GPU slot sees only its own device (as device 0)
    envs += [dict(_ONE_THREAD, CUDA_VISIBLE_DEVICES=str(d)) for d in cuda_devices]
    return labels, envs


async def start_worker(config: dict) -> WorkerNode:
    """Start a worker: main pool, ``n_cpu`` slot processes and ``n_io_process`` IO processes.

    With ``worker.slots_in_process`` the slots run on threads of the main pool
    instead (one process for the whole worker: fast to start, for tests).
    """
    _tune_gc()
    preload_kernels()
    wcfg = config["worker"]
    supervisors = _split_list(wcfg.get("supervisors"))
    if not supervisors:
        raise ValueError("a worker needs the address of at least one supervisor (-s host:port)")
    n_cpu = parse_n_cpu(wcfg.get("n_cpu", "auto"))
    in_process = bool(wcfg.get("slots_in_process", False))
    n_io = 0 if in_process else int(wcfg.get("n_io_process", 1))
    cuda = [] if in_process else resolve_devices(wcfg.get("cuda_devices"))
    memory_limit = parse_memory_limit(wcfg.get("phy_mem", "90%"), psutil.virtual_memory().total)
    labels, envs = _worker_pool_layout(0 if in_process else n_cpu, n_io, cuda)
    token = await joining_token(config, supervisors, "the worker")
    pool = await mo.create_actor_pool(_address(wcfg["host"], wcfg.get("port")), n_process=len(envs),
                                      labels=labels, envs=envs, token=token, tls=tls_config(config),
                                      start_method=config.get("oscar", {}).get("start_method", "spawn"),
                                      use_uvloop=config.get("oscar", {}).get("use_uvloop", "auto"))
    try:
        node = await _start_worker_services(pool, config, supervisors, n_cpu, memory_limit, cuda)
        if wcfg.get("metrics_port") is not None:
            node.metrics = await _start_worker_metrics(config, node.info, pool.external_address, token)
        return node
    except BaseException:
        await pool.stop()
        raise


async def _start_worker_services(pool: Any, config: dict, supervisors: list[str], n_cpu: int,
                                 memory_limit: int, cuda: list[int]) -> WorkerNode:
    address = pool.external_address
    advertise = config["worker"].get("advertise_address")
    prefix = f"mars-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    slots = [s.address for s in pool.sub_pools if s.label.startswith("slot-")]
    gpu_slots = [s.address for s in pool.sub_pools if s.label.startswith("gpu-")]
    ios = [s.address for s in pool.sub_pools if s.label.startswith("io-")]
    cache = _chunk_cache(config["worker"], prefix, memory_limit)
    await mo.create_actor(StorageActor, prefix, cache=cache, uid=STORAGE_UID, address=address)
    # sub pools are the node's own processes: their rings keep INFO records too
    shown = _console_level(config)
    await asyncio.gather(mo.create_actor(DiagnosticsActor, "main", uid=DIAGNOSTICS_UID, address=address),
                         *[mo.create_actor(DiagnosticsActor, s.label, True, shown, uid=DIAGNOSTICS_UID,
                                           address=s.address) for s in pool.sub_pools])
    labels = {s.address: s.label for s in pool.sub_pools}
    if slots:
        slot_refs = await asyncio.gather(*[mo.create_actor(SlotRunnerActor, _slot_prefix(prefix, labels[a]),
                                                           uid=SLOT_RUNNER_UID, address=a) for a in slots])
    else:
        # slots on threads of this process share its BLAS pools: those are left alone
        slot_refs = [await mo.create_actor(SlotRunnerActor, prefix, False, uid=f"{SLOT_RUNNER_UID}/{i}",
                                           address=address) for i in range(n_cpu)]
    gpu_refs = await asyncio.gather(*[mo.create_actor(SlotRunnerActor, _slot_prefix(prefix, labels[a]),
                                                      uid=SLOT_RUNNER_UID, address=a) for a in gpu_slots])
    await asyncio.gather(*[mo.create_actor(TransferActor, address, uid=TRANSFER_UID, address=a) for a in ios])
    slot_set = set(slots) | set(gpu_slots)

    def slot_pids() -> dict[str, int]:
        return {s.address: s.pid for s in pool.sub_pools if s.alive and s.address in slot_set and s.pid}

    await mo.create_actor(ExecutionActor, list(slot_refs), cache, _advertised(address, advertise),
                          MemoryBudget(memory_limit), slot_pids,
                          cancel_grace=float(config["worker"].get("cancel_grace", 2.0)),
                          slot_prefixes={a: _slot_prefix(prefix, labels[a]) for a in slots + gpu_slots},
                          gpu_slots=list(gpu_refs),
                          uid=EXECUTION_UID, address=address)
    pool.on_process_recover = _recreate_actors(prefix, address, slot_set, set(ios), labels, shown)
    info = WorkerInfo(address=_advertised(address, advertise), n_cpu=n_cpu, memory_limit=memory_limit, pid=os.getpid(),
                      hostname=socket.gethostname(), slot_addresses=slots or [address],
                      io_addresses=[_advertised(a, advertise) for a in ios],
                      cuda_devices=list(cuda), started=time.time())
    interval = float(config.get("cluster", {}).get("heartbeat_interval", 1.0))
    await mo.create_actor(WorkerHeartbeatActor, supervisors, info, interval, uid=WORKER_CLUSTER_UID, address=address)
    return WorkerNode(pool, info, prefix)


async def _start_worker_metrics(config: dict, info: WorkerInfo, address: str, token: str | None) -> Any:
    """``GET /metrics`` of this worker alone, on ``--metrics-port``, under the cluster's token rules."""
    from ...services.web import metrics
    from ...services.web.server import start_metrics_server  # the web stack loads only where it is served

    heartbeat = mo.ActorRef(address, WORKER_CLUSTER_UID)

    async def render() -> str:
        status = WorkerStatus(info, await heartbeat.get_stats(), ALIVE, last_heartbeat=time.time())
        return metrics.render(metrics.worker_families([status]))

    options = _web_options(config, tls_config(config), config["worker"].get("advertise_address"))
    return await start_metrics_server(
        config["worker"]["host"], int(config["worker"]["metrics_port"]), render, token=token,
        insecure=token is None, metrics_token=options["metrics_token"], advertise=options["advertise"],
        allow_hosts=options["allow_hosts"], ssl_context=options["ssl_context"])


def _slot_prefix(prefix: str, label: str) -> str:
    """The segment names of one slot process: the worker's prefix (removed whole at its end), then the slot's."""
    return f"{prefix}-{label}"


def _chunk_cache(wcfg: dict, prefix: str, memory_limit: int) -> ChunkCache:
    """The worker's chunk cache: ``--cache-mem`` of chunk data in memory, the rest spilled to ``--spill-dirs``."""
    limit = parse_memory_limit(wcfg.get("cache_mem", "40%"), psutil.virtual_memory().total)
    soft = int(memory_limit * SOFT_LIMIT)
    if limit > soft:
        logger.warning("--cache-mem (%d MiB) is above the soft memory limit (%d MiB, 75%% of --phy-mem): chunks "
                       "will spill as soon as the worker reaches that limit", limit >> 20, soft >> 20)
    return ChunkCache(limit=limit, dirs=SpillDirs(check_dirs(wcfg.get("spill_dirs") or []), prefix))


def _console_level(config: dict) -> str:
    """The level a node's consoles show (``--log-level``); its sub pools' too."""
    return str((config.get("logging") or {}).get("level") or "WARNING").upper()


def _recreate_actors(prefix: str, main: str, slots: set[str], ios: set[str], labels: dict[str, str],
                     shown_level: str) -> Any:
    """A sub pool that crashed comes back empty: its slot runner or transfer actor is made again."""

    async def recreate(address: str) -> None:
        await mo.create_actor(DiagnosticsActor, labels.get(address, "sub"), True, shown_level,
                              uid=DIAGNOSTICS_UID, address=address)
        if address in slots:
            await mo.create_actor(SlotRunnerActor, _slot_prefix(prefix, labels[address]), uid=SLOT_RUNNER_UID,
                                  address=address)
        elif address in ios:
            await mo.create_actor(TransferActor, main, uid=TRANSFER_UID, address=address)
        logger.warning("sub pool %s of worker %s restarted; its actor is back", address, main)

    return recreate


class WebNode:
    def __init__(self, web: Any, advertise: str | None = None, token: str | None = None):
        self.web = web
        self.token = token
        self.advertise = advertise
        self.token_files = tokenfile.TokenFiles([])

    @property
    def web_address(self) -> str:
        """As others reach it (the advertised host, when one is set)."""
        return _web_url(self.web, self.advertise)

    async def stop(self) -> None:
        self.token_files.remove()
        await self.web.stop()


async def start_web(config: dict) -> WebNode:
    """The web service alone (legacy ``mars-web``), serving the supervisors it points at."""
    from ...services.web.server import start_web_server

    web_cfg = config["web"]
    supervisors = _split_list(web_cfg.get("supervisors"))
    if not supervisors:
        raise ValueError("mars-web needs the address of at least one supervisor (-s host:port)")
    host = web_cfg.get("host") or "127.0.0.1"
    token = await joining_token(config, supervisors, "mars-web")
    if token is not None:
        mo.set_token(token)  # to reach the supervisors
    tls = tls_config(config)
    if tls is not None:
        mo.set_tls(tls)
    web = await start_web_server(host, int(web_cfg.get("port") or 0), supervisors, token=token,
                                 insecure=token is None,
                                 **_web_options(config, tls, web_cfg.get("advertise_address")))
    node = WebNode(web, web_cfg.get("advertise_address"), token)
    if token is not None:
        node.token_files = tokenfile.write_token_files([web.address, node.web_address], token)
    return node
