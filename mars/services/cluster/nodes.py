"""The cluster as the dashboard reads it: its nodes, their figures, their logs and stacks.

:class:`ClusterView` asks the supervisors and the workers' diagnostics
actors. Only nodes the cluster knows are asked: an address in a request is
looked up among the supervisors and the registered workers first, so the web
service never connects where a URL tells it to.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from ... import oscar as mo
from ..errors import NodeNotFound
from .diagnostics import DIAGNOSTICS_UID
from .supervisor import CLUSTER_UID

#: a node that does not answer within this long is shown as unreachable
CALL_TIMEOUT = 3.0


def _processes_of(worker: dict) -> list[tuple[str, str]]:
    """``(label, address)`` of a worker's processes: main pool, slots, IO pools (no address twice)."""
    out = [("main", worker["address"])]
    seen = {worker["address"]}
    for kind, addresses in (("slot", worker.get("slot_addresses") or []), ("io", worker.get("io_addresses") or [])):
        for i, address in enumerate(addresses):
            if address not in seen:
                seen.add(address)
                out.append((f"{kind}-{i}", address))
    return out


class ClusterView:
    """Read-only views of a cluster's nodes for the web API.

    Examples
    --------
    >>> view = ClusterView(["127.0.0.1:7001"])   # doctest: +SKIP
    >>> await view.overview()                    # doctest: +SKIP
    {'time': ..., 'supervisors': [...], 'workers': [...], 'n_workers': {'alive': 2, 'lost': 0}}
    """

    def __init__(self, supervisors: Sequence[str]) -> None:
        self.supervisors = list(supervisors)

    async def workers(self) -> list[dict]:
        """Every worker the first supervisor knows, alive or lost, with its process addresses."""
        statuses = await mo.ActorRef(self.supervisors[0], CLUSTER_UID).get_workers(True)
        out = []
        for s in statuses:
            d = s.to_json()
            d["slot_addresses"], d["io_addresses"] = list(s.info.slot_addresses), list(s.info.io_addresses)
            out.append(d)
        return out

    async def overview(self, sessions: list[dict]) -> dict:
        """Supervisors (with their figures) and workers in one answer; ``sessions`` counts per supervisor."""
        supervisors, workers = await asyncio.gather(
            asyncio.gather(*[self._supervisor(a) for a in self.supervisors]), self.workers())
        for sup in supervisors:
            sup["n_sessions"] = sum(1 for s in sessions if s.get("supervisor") == sup["address"])
        alive = sum(1 for w in workers if w["state"] == "alive")
        return {"time": time.time(), "supervisors": list(supervisors), "workers": workers,
                "n_workers": {"alive": alive, "lost": len(workers) - alive}}

    async def _supervisor(self, address: str) -> dict:
        try:
            ref = mo.ActorRef(address, CLUSTER_UID)
            return dict(await ref.supervisor_info.options(timeout=CALL_TIMEOUT)())
        except Exception as e:  # noqa: BLE001 - any failure means: not reachable now
            blank: dict[str, Any] = dict.fromkeys(
                ("hostname", "pid", "started", "n_cpu", "cpu_usage", "memory_used", "memory_total"))
            return {"address": address, "state": "unreachable", **blank, "error": f"{type(e).__name__}: {e}"}

    async def worker(self, address: str) -> dict:
        """One worker's figures; :class:`NodeNotFound` when the cluster does not know it."""
        for w in await self.workers():
            if w["address"] == address:
                return w
        raise NodeNotFound(f"no worker {address!r} in this cluster (see GET /api/cluster/workers)")

    async def _processes(self, kind: str, address: str) -> list[tuple[str, str]]:
        if kind == "supervisor":
            if address not in self.supervisors:
                raise NodeNotFound(f"no supervisor {address!r} in this cluster (it has {self.supervisors})")
            return [("main", address)]
        worker = await self.worker(address)
        if worker["state"] != "alive":
            raise NodeNotFound(f"worker {address!r} is lost: its processes cannot be asked")
        return _processes_of(worker)

    async def _ask_all(self, kind: str, address: str, method: str, *args: Any) -> tuple[list[dict], list[dict]]:
        """Call ``method`` of the diagnostics actor in each of the node's processes: (answers, errors)."""
        processes = await self._processes(kind, address)

        async def ask(label: str, where: str) -> Any:
            ref = mo.ActorRef(where, DIAGNOSTICS_UID)
            try:
                return await getattr(ref, method).options(timeout=CALL_TIMEOUT)(*args)
            except Exception as e:  # noqa: BLE001 - reported per process, the others still answer
                return {"process": label, "error": f"{type(e).__name__}: {e}"}

        answers = await asyncio.gather(*[ask(label, where) for label, where in processes])
        good = [a for a in answers if "error" not in a]
        return good, [a for a in answers if "error" in a]

    async def logs(self, kind: str, address: str, limit: int) -> dict:
        """The newest ``limit`` log records across the node's processes, oldest first."""
        answers, errors = await self._ask_all(kind, address, "logs", limit)
        records = [{**r, "process": a["process"], "pid": a["pid"]} for a in answers for r in a["records"]]
        records.sort(key=lambda r: r["time"])
        return {"address": address, "records": records[-limit:] if limit > 0 else [], "errors": errors}

    async def stacks(self, kind: str, address: str) -> dict:
        """Every thread's stack in each of the node's processes."""
        answers, errors = await self._ask_all(kind, address, "stacks")
        return {"address": address, "time": time.time(), "processes": answers, "errors": errors}
