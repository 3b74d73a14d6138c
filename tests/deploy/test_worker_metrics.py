"""A worker's own GET /metrics (``--metrics-port``): Prometheus text, behind the cluster's token."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request

import pytest
from process_nodes import one_worker_cluster

from mars.oscar.tokenfile import find_token

pytestmark = pytest.mark.timeout(120)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, token: str | None) -> tuple[int, str, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as resp:
            return resp.status, resp.headers["Content-Type"], resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode()


def test_a_worker_serves_its_own_metrics_to_whoever_holds_the_token():
    port = _free_port()
    with one_worker_cluster("--n-cpu", "1", "--metrics-port", str(port)) as (url, worker):
        token = find_token(url)
        status, kind, text = _get(f"http://127.0.0.1:{port}/metrics", token)
        assert status == 200 and kind.startswith("text/plain; version=0.0.4"), (status, kind, text[:300])
        assert f'mars_worker_up{{worker="{worker.address}"}} 1' in text
        assert f'mars_worker_slots{{worker="{worker.address}"}} 1' in text
        assert "# TYPE mars_subtask_duration_seconds histogram" in text
        # no token, or the wrong one: nothing is served
        assert _get(f"http://127.0.0.1:{port}/metrics", None)[0] == 401
        assert _get(f"http://127.0.0.1:{port}/metrics", "not-the-token")[0] == 401
        # the port serves nothing else
        assert _get(f"http://127.0.0.1:{port}/api/sessions", token)[0] == 404
