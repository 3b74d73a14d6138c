"""``with mars.performance_report("report.html"):`` saves what the jobs inside the block did.

The report is one HTML file that opens anywhere with no server and no
network (see :mod:`mars.services.web.report`): the task stream of every
task the session ran inside the block (per slot, with transfers and
spills), the cluster's CPU, memory and network over that time, and each
task's graph and profile (a flame graph of its chunk functions' stacks).
It reads them from the cluster as the dashboard does, through the
session's own connection: the web API for ``http://`` sessions, the actors
for ``host:port`` ones.
"""

from __future__ import annotations

import os
import time
from typing import Any, Self

from .services.web.observe import ObservabilityView
from .services.web.report import render_report
from .session import get_default_session

#: seconds of load recorded before the block began, and waited for after it (a heartbeat's worth)
_MARGIN = 2.0


class _WebSource:
    """Reads over the web API, with the session's client (token and TLS included)."""

    def __init__(self, backend: Any) -> None:
        self._sync = backend._client

    def _get(self, path: str) -> Any:
        return self._sync.call(self._sync.client._request, "GET", path)

    def tasks(self, sid: str) -> list[dict]:
        return self._get(f"/api/sessions/{sid}/tasks")  # type: ignore[no-any-return]

    def graph(self, sid: str, tid: str) -> dict:
        return self._get(f"/api/sessions/{sid}/tasks/{tid}/graph?level=tileable")  # type: ignore[no-any-return]

    def stream(self, sid: str, tid: str) -> dict:
        return self._get(f"/api/sessions/{sid}/tasks/{tid}/stream")  # type: ignore[no-any-return]

    def profile(self, sid: str, tid: str) -> dict:
        return self._get(f"/api/sessions/{sid}/tasks/{tid}/profile")  # type: ignore[no-any-return]

    def series(self, since: float) -> dict:
        return self._get(f"/api/cluster/series?since={since:.0f}")  # type: ignore[no-any-return]

    def url(self) -> str:
        return str(self._sync.url)


class _ActorSource:
    """Reads through the actors, on the session's own event loop thread."""

    def __init__(self, backend: Any) -> None:
        self._api, self._run = backend.api, backend._thread.run
        self._view = ObservabilityView(backend.api.supervisors)

    def tasks(self, sid: str) -> list[dict]:
        return [t.to_json() for t in self._run(self._api.list_tasks(sid))]

    def graph(self, sid: str, tid: str) -> dict:
        return self._run(self._api.get_task_graph(sid, tid, "tileable"))  # type: ignore[no-any-return]

    def stream(self, sid: str, tid: str) -> dict:
        return self._run(self._view.stream(sid, tid))  # type: ignore[no-any-return]

    def profile(self, sid: str, tid: str) -> dict:
        return self._run(self._view.profile(sid, tid))  # type: ignore[no-any-return]

    def series(self, since: float) -> dict:
        return self._run(self._view.series(None, since))  # type: ignore[no-any-return]

    def url(self) -> str:
        return ",".join(self._api.supervisors)


def _source_for(session: Any) -> Any:
    backend = getattr(session, "_backend", None)
    if backend is None:
        raise NotImplementedError(
            "performance_report records what a cluster's workers ran; this session is the embedded one, which "
            "runs chunks on local threads with no task stream: start a cluster (from mars.deploy.local import "
            "new_cluster) or connect to one (mars.new_session('http://host:web_port')) first")
    return _WebSource(backend) if hasattr(backend, "_client") else _ActorSource(backend)


class performance_report:
    """Save the task stream, load figures and task graphs of the jobs run inside the block.

    Parameters
    ----------
    filename
        Where the HTML file goes (overwritten).
    session
        The cluster session whose tasks are reported; by default the default session.
    title
        The report's heading.

    Examples
    --------
    >>> import mars, mars.tensor as mt                            # doctest: +SKIP
    >>> from mars.deploy.local import new_cluster                 # doctest: +SKIP
    >>> with new_cluster(n_worker=2, n_cpu=1):                    # doctest: +SKIP
    ...     with mars.performance_report("report.html"):
    ...         mt.random.rand(1000, 1000, chunk_size=250).sum().execute()
    """

    def __init__(self, filename: str | os.PathLike = "mars-report.html", session: Any = None,
                 title: str = "Mars performance report") -> None:
        self.filename = os.fspath(filename)
        self.title = title
        self._session = session
        self._source: Any = None
        self._sid = ""
        self._before: set[str] = set()
        self.start = 0.0

    def __enter__(self) -> Self:
        session = self._session if self._session is not None else get_default_session()
        if session is None:
            raise RuntimeError("performance_report needs a session: call mars.new_session(...) first, or pass "
                               "session=")
        self._source = _source_for(session)
        self._sid = session.session_id
        self._before = {t["task_id"] for t in self._source.tasks(self._sid)}
        self.start = time.time()
        return self

    def __exit__(self, *exc: object) -> None:
        end = time.time()
        time.sleep(_MARGIN)  # the heartbeats of the block's last second reach the supervisor
        data = self.collect(end)
        with open(self.filename, "w", encoding="utf-8") as f:
            f.write(render_report(data))

    def collect(self, end: float) -> dict:
        """The report's data: the block's tasks with their graphs, their events, the cluster's series."""
        src = self._source
        tasks = [t for t in src.tasks(self._sid) if t["task_id"] not in self._before]
        events: list[dict] = []
        workers: dict[str, dict] = {}
        for t in tasks:
            t["graph"] = src.graph(self._sid, t["task_id"])
            t["profile"] = src.profile(self._sid, t["task_id"])
            stream = src.stream(self._sid, t["task_id"])
            events.extend(stream["events"])
            workers.update((w["address"], w) for w in stream["workers"])
        unique = {e["id"]: e for e in events}  # a spill shared by two tasks' windows comes once
        series = src.series(self.start - _MARGIN)
        return {"title": self.title, "start": self.start, "end": end, "cluster": src.url(),
                "session_id": self._sid, "tasks": tasks, "series": series,
                "stream": {"workers": list(workers.values()),
                           "events": sorted(unique.values(), key=lambda e: (e["start"], e["id"]))}}
