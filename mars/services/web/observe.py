"""Where the web service reads the task stream, the time series and the metrics from.

The task stream lives on the workers (each execution service's ring buffer,
see :mod:`mars.services.execution.stream`): :class:`ObservabilityView` asks
every alive worker for a task's events at once, so a page that polls gets
one batch per worker per poll, and a worker nobody watches sends nothing.
The time series and the workers' figures live on the first supervisor
(:mod:`mars.services.cluster.timeseries`, fed by heartbeats). As with
:class:`~mars.services.cluster.nodes.ClusterView`, only nodes the cluster
knows are asked: a URL never names where the web service connects.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Sequence
from typing import Any

from aiohttp import web

from ... import oscar as mo
from ..cluster.core import WorkerStatus
from ..cluster.supervisor import CLUSTER_UID
from ..errors import NodeNotFound
from ..execution.api import EXECUTION_UID
from ..execution.profiler import Profile, merge_profiles
from ..execution.stream import MAX_BATCH, SPILL, StreamEvent
from . import metrics
from .routes import API_KEY, query_limit
from .wire import BadRequest

logger = logging.getLogger(__name__)
#: a worker that does not answer within this long is reported in ``errors``
CALL_TIMEOUT = 5.0


class ObservabilityView:
    """Task streams, series and metrics of a cluster for the web API.

    Examples
    --------
    >>> view = ObservabilityView(["127.0.0.1:7001"])             # doctest: +SKIP
    >>> (await view.stream("sid", "tid"))["events"][0]["kind"]    # doctest: +SKIP
    'subtask'
    """

    def __init__(self, supervisors: Sequence[str]) -> None:
        if not supervisors:
            raise ValueError("ObservabilityView needs at least one supervisor address, got none")
        self.supervisors = list(supervisors)

    def _cluster(self) -> mo.ActorRef:
        return mo.ActorRef(self.supervisors[0], CLUSTER_UID)

    async def statuses(self) -> list[WorkerStatus]:
        """Every worker the first supervisor knows, alive or lost."""
        return await self._cluster().get_workers(True)  # type: ignore[no-any-return]

    async def stream(self, session_id: str | None = None, task_id: str | None = None, since: float = 0.0,
                     limit: int = MAX_BATCH) -> dict:
        """Events of the alive workers (of one session or task, ending at or after ``since``), by start time.

        ``workers`` lists each worker with its slot count (the stream's rows);
        a worker that did not answer is named in ``errors``.
        """
        alive = [w for w in await self.statuses() if w.alive]

        async def ask(w: WorkerStatus) -> list[StreamEvent] | str:
            ref = mo.ActorRef(w.address, EXECUTION_UID)
            try:
                return await ref.stream_events.options(timeout=CALL_TIMEOUT)(session_id, task_id, since, -1, limit)
            except Exception as e:  # noqa: BLE001 - reported per worker; the others still answer
                return f"{type(e).__name__}: {e}"

        answers = await asyncio.gather(*[ask(w) for w in alive])
        events: list[dict] = []
        errors = []
        for w, answer in zip(alive, answers):
            if isinstance(answer, str):
                errors.append({"worker": w.address, "error": answer})
            else:
                events.extend(e.to_json(w.address) for e in _clip_spills(answer, task_id))
        events.sort(key=lambda e: (e["start"], e["id"]))
        rows = [{"address": w.address, "n_slots": len(w.info.slot_addresses) + len(w.info.cuda_devices)}
                for w in alive]
        return {"time": time.time(), "session_id": session_id, "task_id": task_id, "workers": rows,
                "events": events[-limit:], "errors": errors}

    async def profile(self, session_id: str, task_id: str | None = None) -> dict:
        """The sampled stacks of a task's subtasks (a session's, with ``task_id=None``) on the alive workers.

        ``rows`` count stacks (numbers into ``frames``) by operator; ``workers``
        gives each worker's number of samples; a worker that did not answer is
        named in ``errors``.
        """
        alive = [w for w in await self.statuses() if w.alive]

        async def ask(w: WorkerStatus) -> Profile | str:
            ref = mo.ActorRef(w.address, EXECUTION_UID)
            try:
                return await ref.profile.options(timeout=CALL_TIMEOUT)(session_id, task_id)  # type: ignore[no-any-return]
            except Exception as e:  # noqa: BLE001 - reported per worker; the others still answer
                return f"{type(e).__name__}: {e}"

        answers = await asyncio.gather(*[ask(w) for w in alive])
        errors = [{"worker": w.address, "error": a} for w, a in zip(alive, answers) if isinstance(a, str)]
        got = [(w, a) for w, a in zip(alive, answers) if not isinstance(a, str)]
        merged = merge_profiles(a for _, a in got).to_json()
        return {"time": time.time(), "session_id": session_id, "task_id": task_id, **merged,
                "workers": [{"address": w.address, "samples": a.samples} for w, a in got], "errors": errors}

    async def series(self, worker: str | None = None, since: float = 0.0) -> dict:
        """The last hour of one worker's load at 1 s (or the cluster's, summed, with ``worker=None``)."""
        statuses = await self.statuses()
        if worker is not None:
            statuses = [w for w in statuses if w.address == worker]
            if not statuses:
                raise NodeNotFound(f"no worker {worker!r} in this cluster (see GET /api/cluster/workers)")
        else:
            statuses = [w for w in statuses if w.alive]
        answer = dict(await self._cluster().get_series(worker, since))
        answer["time"] = time.time()
        answer["n_cpu"] = sum(w.info.n_cpu for w in statuses)
        answer["memory_limit"] = sum(w.info.memory_limit for w in statuses)
        return answer

    async def metrics_text(self, session_api: Any) -> str:
        """``/metrics``: every worker's figures and the cluster's tasks by state, in Prometheus' text format."""
        statuses = await self.statuses()
        sessions = await session_api.list_sessions()
        states: dict[str, int] = {}
        for s in sessions:
            try:
                tasks = await session_api.list_tasks(s["session_id"])
            except Exception as e:  # noqa: BLE001 - a session closed meanwhile counts no task
                logger.debug("tasks of session %s not counted: %s", s["session_id"], e)
                continue
            for t in tasks:
                states[t.status.value] = states.get(t.status.value, 0) + 1
        families = metrics.cluster_families(states, len(sessions)) + metrics.worker_families(statuses)
        return metrics.render(families)


def _clip_spills(events: list[StreamEvent], task_id: str | None) -> list[StreamEvent]:
    """A task's events, with only the spills made while its subtasks ran (a spill belongs to no task)."""
    if task_id is None:
        return events
    own = [e for e in events if e.kind != SPILL]
    if not own:
        return own
    first, last = min(e.start for e in own), max(e.end for e in own)
    return [e for e in events if e.kind != SPILL or (e.end >= first and e.start <= last)]


# ---------------------------------------------------------------------- routes
VIEW_KEY: web.AppKey[Any] = web.AppKey("mars_observability", object)
#: the path Prometheus scrapes (a read-only metrics token, when set, opens it and nothing else)
METRICS_PATH = "/metrics"

routes = web.RouteTableDef()


def _view(request: web.Request) -> ObservabilityView:
    return request.app[VIEW_KEY]  # type: ignore[no-any-return]


def _since(request: web.Request) -> float:
    raw = request.query.get("since", "0")
    try:
        since = float(raw)
    except ValueError:
        raise BadRequest(f"since must be a unix time in seconds, got {raw!r}") from None
    if not 0 <= since < math.inf:
        raise BadRequest(f"since must be a finite unix time >= 0, got {raw!r}")
    return since


def _stream_limit(request: web.Request) -> int:
    return query_limit(request, default=MAX_BATCH, most=MAX_BATCH, least=1, what="events")


@routes.get("/api/sessions/{sid}/tasks/{tid}/stream")
async def task_stream(request: web.Request) -> web.StreamResponse:
    sid, tid = request.match_info["sid"], request.match_info["tid"]
    return web.json_response(await _view(request).stream(sid, tid, _since(request), _stream_limit(request)))


@routes.get("/api/stream")
async def cluster_stream(request: web.Request) -> web.StreamResponse:
    sid = request.query.get("session_id") or None
    tid = request.query.get("task_id") or None
    return web.json_response(await _view(request).stream(sid, tid, _since(request), _stream_limit(request)))


@routes.get("/api/sessions/{sid}/tasks/{tid}/profile")
async def task_profile(request: web.Request) -> web.StreamResponse:
    sid, tid = request.match_info["sid"], request.match_info["tid"]
    return web.json_response(await _view(request).profile(sid, tid))


@routes.get("/api/cluster/series")
async def cluster_series(request: web.Request) -> web.StreamResponse:
    return web.json_response(await _view(request).series(None, _since(request)))


@routes.get("/api/cluster/workers/{address}/series")
async def worker_series(request: web.Request) -> web.StreamResponse:
    return web.json_response(await _view(request).series(request.match_info["address"], _since(request)))


@routes.get(METRICS_PATH)
async def metrics_page(request: web.Request) -> web.StreamResponse:
    text = await _view(request).metrics_text(request.app[API_KEY])
    return web.Response(text=text, headers={"Content-Type": metrics.CONTENT_TYPE})
