"""The JSON API the dashboard reads, on a real local cluster (a supervisor and two worker processes)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request

import numpy as np
import pandas as pd
import pytest

import mars.dataframe as md
import mars.tensor as mt
from mars.deploy.local import new_cluster

from .openapi_check import check, load_spec, response_schema

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def cluster():
    with new_cluster(n_worker=2, n_cpu=1, n_io_process=1) as c:
        yield c


def get(cluster, path: str) -> tuple[int, dict]:
    try:
        # every cluster has a token; the dashboard sends it as this header too
        headers = {"Authorization": f"Bearer {cluster.token}"}
        request = urllib.request.Request(cluster.web_address + path, headers=headers)
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def ok(cluster, path: str) -> dict:
    status, body = get(cluster, path)
    assert status == 200, body
    return body


def q(address: str) -> str:
    return urllib.parse.quote(address, safe="")


def wait_until(predicate, timeout: float = 30.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"{what} not reached within {timeout} s")


def test_overview_lists_the_supervisor_and_both_workers_with_figures(cluster):
    body = ok(cluster, "/api/cluster")
    [sup] = body["supervisors"]
    assert sup["state"] == "alive" and sup["address"] == cluster.endpoint
    assert sup["pid"] > 0 and sup["memory_used"] > 0 and 0 <= sup["cpu_usage"] <= sup["n_cpu"]
    assert sorted(w["address"] for w in body["workers"]) == sorted(cluster.worker_addresses)
    assert body["n_workers"] == {"alive": 2, "lost": 0}
    for w in body["workers"]:
        assert w["state"] == "alive" and w["n_cpu"] == 1 and len(w["slot_addresses"]) == 1
        assert len(w["io_addresses"]) == 1 and w["memory_limit"] > 0


def test_cpu_usage_stays_within_zero_and_n_cpu_under_load(cluster):
    a = mt.random.rand(3000, 3000, chunk_size=1000)
    job = (a @ a).sum().execute(wait=False)
    seen: list[float] = []
    deadline = None
    while deadline is None or time.monotonic() < deadline:  # heartbeats come each second: look past the end
        for w in ok(cluster, "/api/cluster/workers"):
            if w["cpu_usage"] is not None:
                seen.append(w["cpu_usage"])
                assert 0.0 <= w["cpu_usage"] <= w["n_cpu"], w
        if deadline is None and job.done():
            deadline = time.monotonic() + 2.5
        time.sleep(0.1)
    job.result()
    assert max(seen) > 0.2


def test_one_worker_and_unknown_nodes_are_json_404s(cluster):
    address = cluster.worker_addresses[0]
    assert ok(cluster, f"/api/cluster/workers/{q(address)}")["address"] == address
    for path in ("/api/cluster/workers/10.9.9.9%3A1", "/api/cluster/workers/10.9.9.9%3A1/logs",
                 "/api/cluster/supervisors/10.9.9.9%3A1/stacks"):
        status, body = get(cluster, path)
        assert status == 404 and body["error"]["type"] == "NodeNotFound" and "10.9.9.9:1" in body["error"]["message"]


def test_logs_come_from_the_node_newest_last_and_limit_is_checked(cluster):
    address = cluster.worker_addresses[0]
    body = ok(cluster, f"/api/cluster/workers/{q(address)}/logs?limit=50")
    assert body["errors"] == []
    assert any("registered with supervisor" in r["message"] and r["process"] == "main" for r in body["records"])
    times = [r["time"] for r in body["records"]]
    assert times == sorted(times)
    sup = ok(cluster, f"/api/cluster/supervisors/{q(cluster.endpoint)}/logs")
    assert any(f"worker {address} joined" in r["message"] for r in sup["records"])
    assert ok(cluster, f"/api/cluster/workers/{q(address)}/logs?limit=0")["records"] == []
    for bad in ("-1", "x", "10001"):
        status, err = get(cluster, f"/api/cluster/workers/{q(address)}/logs?limit={bad}")
        assert status == 400 and bad in err["error"]["message"]


def test_stacks_show_every_process_and_a_slot_inside_the_users_function(cluster):
    def dashboard_sleeper(part: pd.DataFrame) -> pd.DataFrame:
        time.sleep(1.5)
        return part

    frame = pd.DataFrame({"x": np.arange(4.0)})
    job = md.DataFrame(frame, chunk_size=2).map_partitions(dashboard_sleeper, meta=frame.iloc[:0]).execute(wait=False)

    def in_sleeper():
        for address in cluster.worker_addresses:
            body = ok(cluster, f"/api/cluster/workers/{q(address)}/stacks")
            assert body["errors"] == [] and {p["process"] for p in body["processes"]} == {"main", "slot-0", "io-0"}
            for p in body["processes"]:
                assert any(t["name"] == "MainThread" for t in p["threads"])
                if any("dashboard_sleeper" in t["stack"] for t in p["threads"]):
                    return p["process"]
        return None

    assert wait_until(in_sleeper, what="a slot's stack inside dashboard_sleeper") == "slot-0"
    job.result()


def _task_ids(cluster) -> tuple[str, list[dict]]:
    [session] = [s for s in ok(cluster, "/api/sessions")]
    return session["session_id"], ok(cluster, f"/api/sessions/{session['session_id']}/tasks")


def test_graphs_of_a_finished_task_at_both_levels(cluster):
    (mt.random.rand(400, 400, chunk_size=100) + 1).sum().execute()
    sid, tasks = _task_ids(cluster)
    tid = tasks[-1]["task_id"]
    tileable = ok(cluster, f"/api/sessions/{sid}/tasks/{tid}/graph")
    assert tileable["level"] == "tileable" and tileable["status"] == "succeeded" and not tileable["truncated"]
    labels = [n["label"] for n in tileable["nodes"]]
    assert labels[0] == "TensorDistribution" and len(labels) == tileable["n_nodes"] == 3
    ids = {n["id"] for n in tileable["nodes"]}
    assert len(tileable["edges"]) == 2 and all(a in ids and b in ids for a, b in tileable["edges"])
    assert {n["state"] for n in tileable["nodes"]} == {"succeeded"} and tileable["nodes"][0]["shape"] == "(400, 400)"
    sub = ok(cluster, f"/api/sessions/{sid}/tasks/{tid}/graph?level=subtask")
    assert sub["n_nodes"] == len(sub["nodes"]) > 16 and {n["state"] for n in sub["nodes"]} == {"succeeded"}
    assert {n["worker"] for n in sub["nodes"]} <= set(cluster.worker_addresses)
    ids = {n["id"] for n in sub["nodes"]}
    assert sub["edges"] and all(a in ids and b in ids for a, b in sub["edges"])


def test_graph_states_follow_a_running_task_and_a_failed_one(cluster):
    def slow(part: pd.DataFrame) -> pd.DataFrame:
        time.sleep(0.5)
        if part["x"].iloc[0] >= 6:
            raise ValueError("dashboard boom")
        return part

    frame = pd.DataFrame({"x": np.arange(8.0)})
    before = len(_task_ids(cluster)[1])
    job = md.DataFrame(frame, chunk_size=2).map_partitions(slow, meta=frame.iloc[:0]).execute(wait=False)
    sid, tasks = wait_until(lambda: (lambda t: t if len(t[1]) > before else None)(_task_ids(cluster)),
                            what="the task submitted")  # execute(wait=False) submits from a thread
    tid = tasks[-1]["task_id"]

    def states():
        graph = ok(cluster, f"/api/sessions/{sid}/tasks/{tid}/graph?level=subtask")
        return {n["state"] for n in graph["nodes"]}

    assert wait_until(lambda: "scheduled" in states(), what="a scheduled subtask")
    with pytest.raises(ValueError, match="dashboard boom"):
        job.result()
    assert "failed" in states()
    tileable = ok(cluster, f"/api/sessions/{sid}/tasks/{tid}/graph")
    assert tileable["status"] == "failed" and "failed" in {n["state"] for n in tileable["nodes"]}
    task = ok(cluster, f"/api/sessions/{sid}/tasks/{tid}")
    assert task["status"] == "failed" and "dashboard boom" in task["error"]


def test_graph_of_an_unknown_task_or_level_is_an_error(cluster):
    (mt.ones(3) + 1).execute()
    sid, tasks = _task_ids(cluster)
    status, body = get(cluster, f"/api/sessions/{sid}/tasks/nope/graph")
    assert status == 404 and body["error"]["type"] == "TaskNotFound"
    status, body = get(cluster, f"/api/sessions/{sid}/tasks/{tasks[-1]['task_id']}/graph?level=chunk")
    assert status == 400 and "'chunk'" in body["error"]["message"]


def test_answers_match_the_openapi_document(cluster):
    (mt.random.rand(40, 40, chunk_size=10) * 2).sum().execute()
    spec = load_spec()
    sid, tasks = _task_ids(cluster)
    tid, worker, sup = tasks[-1]["task_id"], q(cluster.worker_addresses[0]), q(cluster.endpoint)
    cases = {
        "/api/sessions": "/api/sessions",
        "/api/sessions/{sid}/tasks": f"/api/sessions/{sid}/tasks",
        "/api/sessions/{sid}/tasks/{tid}": f"/api/sessions/{sid}/tasks/{tid}",
        "/api/cluster": "/api/cluster",
        "/api/cluster/workers": "/api/cluster/workers",
        "/api/cluster/workers/{address}": f"/api/cluster/workers/{worker}",
        "/api/cluster/workers/{address}/logs": f"/api/cluster/workers/{worker}/logs",
        "/api/cluster/workers/{address}/stacks": f"/api/cluster/workers/{worker}/stacks",
        "/api/cluster/supervisors": "/api/cluster/supervisors",
        "/api/cluster/supervisors/{address}/logs": f"/api/cluster/supervisors/{sup}/logs",
        "/api/cluster/supervisors/{address}/stacks": f"/api/cluster/supervisors/{sup}/stacks",
    }
    for template, path in cases.items():
        check(spec, response_schema(spec, template), ok(cluster, path), path)
    for level in ("tileable", "subtask"):
        path = f"/api/sessions/{sid}/tasks/{tid}/graph?level={level}"
        check(spec, response_schema(spec, "/api/sessions/{sid}/tasks/{tid}/graph"), ok(cluster, path), path)
    status, body = get(cluster, "/api/sessions/nope")
    assert status == 404
    check(spec, spec["components"]["schemas"]["Error"], body)
