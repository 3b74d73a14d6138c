"""The task stream, the time series, /metrics and the performance report (issue 23).

The recorder, the series store and the metrics text are plain objects tested
alone; the endpoints and the report run on one local cluster of two worker
processes (one slot each).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import urllib.error
import urllib.request

import numpy as np
import pytest

import mars
import mars.tensor as mt
from mars.deploy.local import new_cluster
from mars.services.cluster.core import ALIVE, WorkerInfo, WorkerStats, WorkerStatus
from mars.services.cluster.timeseries import STALE_AFTER, SeriesStore
from mars.services.execution.stream import DurationHistogram, StreamRecorder
from mars.services.session.mock import MockSessionAPI
from mars.services.web import metrics
from mars.services.web.report import _module_body, bundle
from mars.services.web.server import start_web_server

from .openapi_check import check, load_spec, response_schema

pytestmark = pytest.mark.timeout(120)


# ------------------------------------------------------------------ the recorder, alone
def test_ring_keeps_the_newest_events_and_counts_those_dropped():
    rec = StreamRecorder(capacity=3)
    for i in range(5):
        rec.subtask("s", "t1" if i % 2 else "t2", 0, 100.0 + i, 100.5 + i, "Op", i, (f"k{i}",), 8)
    assert [e.subtask_index for e in rec.events()] == [2, 3, 4] and rec.dropped == 2
    assert [e.subtask_index for e in rec.events(task_id="t1")] == [3]
    assert [e.subtask_index for e in rec.events(since=103.5)] == [3, 4]
    assert [e.subtask_index for e in rec.events(limit=1)] == [4]
    assert rec.histogram.snapshot()["counts"][-1] == 5  # the histogram counts every subtask, kept or not


def test_spills_come_with_a_tasks_events_and_transfers_count_bytes_per_peer():
    rec = StreamRecorder()
    rec.transfer("s", "t", 0, 1.0, 2.0, "w2:1", ("a", "b"), 300)
    rec.transfer("s", "t", 0, 3.0, 4.0, "w2:1", ("c",), 100)
    rec.spill("s", "x", 2.0, 2.5, 64)
    rec.spill("other", "y", 2.0, 2.5, 64)
    kinds = [e.kind for e in rec.events("s", "t")]
    assert kinds == ["transfer", "transfer", "spill"]  # in the order recorded; the other session's spill is left out
    assert rec.stats()["received_from"] == {"w2:1": 400} and rec.stats()["bytes_received"] == 400
    with pytest.raises(ValueError, match="capacity must be at least 1 event, got 0"):
        StreamRecorder(capacity=0)


def test_histogram_buckets_are_cumulative_and_reject_bad_bounds():
    h = DurationHistogram((0.01, 0.1, 1.0))
    for d in (0.001, 0.01, 0.05, 2.0):
        h.observe(d)
    assert h.snapshot()["counts"] == [2, 3, 3, 4]  # le=0.01 includes 0.01 itself
    with pytest.raises(ValueError, match=r"increasing and distinct, got \(1.0, 0.5\)"):
        DurationHistogram((1.0, 0.5))


# ------------------------------------------------------------------ the series store, alone
def _stats(cpu=1.0, used=1000, chunks=400, disk=0, received_from=None) -> WorkerStats:
    return WorkerStats(cpu, used, 10_000, storage={"memory_bytes": chunks, "disk_bytes": disk},
                       execution={"received_from": received_from or {}})


def test_series_rates_credit_the_sender_and_sum_over_workers():
    store = SeriesStore()
    store.record("a", _stats(), now=100.0)
    store.record("b", _stats(), now=100.5)
    store.record("a", _stats(received_from={"b": 2000}), now=101.0)  # a got 2000 B from b within 1 s
    store.record("b", _stats(cpu=0.5, disk=77), now=101.5)
    a, b = store.series("a")["columns"], store.series("b")["columns"]
    assert a["bytes_received"] == [0.0, 2000.0] and a["bytes_sent"] == [0.0, 0.0]
    assert b["bytes_sent"] == [0.0, 2000.0] and b["spilled"] == [0, 77]  # credited at b's next sample
    assert a["memory_other"] == [600, 600]  # the processes' memory less what chunks hold
    cluster = store.series(None)["columns"]
    assert cluster["time"] == [100, 101] and cluster["cpu"] == [2.0, 1.5]
    assert store.series(None, since=101)["columns"]["time"] == [101]


def test_cluster_sum_leaves_out_a_worker_gone_silent():
    store = SeriesStore()
    store.record("a", _stats(cpu=1.0), now=100.0)
    store.record("b", _stats(cpu=2.0), now=100.0)
    store.record("b", _stats(cpu=2.0), now=100.0 + STALE_AFTER + 2)
    assert store.series(None)["columns"]["cpu"] == [3.0, 2.0]


def test_series_keep_one_sample_a_second_for_the_capacity():
    store = SeriesStore(seconds=3)
    for t in (10.1, 10.6, 11.0, 12.0, 13.0):
        store.record("a", _stats(cpu=t), now=t)
    cols = store.series("a")["columns"]
    assert cols["time"] == [11, 12, 13] and cols["cpu"] == [11.0, 12.0, 13.0]
    assert store.series("nobody")["columns"]["time"] == []


# ------------------------------------------------------------------ the metrics text, alone
def test_metrics_text_has_each_worker_labelled_and_a_histogram():
    info = WorkerInfo('w"1', 2, 1 << 30, 1, "h")
    hist = DurationHistogram((0.1, 1.0))
    for d in (0.05, 0.5):
        hist.observe(d)
    stats = WorkerStats(0.5, 1 << 20, 1 << 30, storage={"memory_bytes": 5, "disk_bytes": 7},
                        execution={"n_slots": 2, "n_free_slots": 1, "n_queued": 3, "durations": hist.snapshot()})
    text = metrics.render(metrics.cluster_families({"running": 2}, 1)
                          + metrics.worker_families([WorkerStatus(info, stats, ALIVE, 5.0)]))
    assert 'mars_tasks{state="running"} 2' in text and 'mars_tasks{state="failed"} 0' in text
    assert 'mars_worker_slots_busy{worker="w\\"1"} 1' in text
    assert 'mars_worker_queued_subtasks{worker="w\\"1"} 3' in text
    assert 'mars_subtask_duration_seconds_bucket{worker="w\\"1",le="0.1"} 1' in text
    assert 'mars_subtask_duration_seconds_bucket{worker="w\\"1",le="+Inf"} 2' in text
    assert 'mars_subtask_duration_seconds_count{worker="w\\"1"} 2' in text
    assert "# TYPE mars_subtask_duration_seconds histogram" in text


def test_bundler_refuses_what_it_cannot_join():
    with pytest.raises(ValueError, match=r"imports \./dom\.js, which is not bundled before it"):
        _module_body("x", 'import { el } from "./dom.js";\n', [])
    with pytest.raises(ValueError, match="does not read"):
        _module_body("x", 'export default 3;\n', [])
    assert "__modules.report = " in bundle()


# ------------------------------------------------------------------ the metrics token
def _status(url: str, token: str | None) -> int:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as e:
        return e.code


def test_metrics_token_opens_metrics_and_nothing_else():
    async def main():
        server = await start_web_server("127.0.0.1", 0, ["127.0.0.1:1"], MockSessionAPI, token="main-token",
                                        metrics_token="scrape-token")
        try:
            loop = asyncio.get_running_loop()
            ask = lambda path, token: loop.run_in_executor(None, _status, server.url + path, token)
            return [await ask("/metrics", None), await ask("/metrics", "wrong"), await ask("/metrics", "scrape-token"),
                    await ask("/api/sessions", "scrape-token"), await ask("/api/sessions", "main-token")]
        finally:
            await server.stop()

    no_token, wrong, scraper, api_with_scraper, api = asyncio.run(main())
    assert (no_token, wrong, api_with_scraper, api) == (401, 401, 401, 200)
    assert scraper not in (401, 403)  # past the token check (no supervisor behind this server: 503)
    with pytest.raises(ValueError, match="metrics_token must be a non-empty string, got ''"):
        asyncio.run(start_web_server("127.0.0.1", 0, ["s:1"], MockSessionAPI, metrics_token=""))


def test_metrics_token_flag_reaches_the_web_service():
    from mars.deploy.oscar.cmdline import parse_args
    from mars.deploy.oscar.node import _web_options

    cfg = parse_args("supervisor", ["--metrics-token", "scrape"])
    assert cfg["security"]["metrics_token"] == "scrape"
    assert _web_options(cfg, None, None)["metrics_token"] == "scrape"
    assert _web_options(parse_args("supervisor", []), None, None)["metrics_token"] is None


# ------------------------------------------------------------------ on a cluster
@pytest.fixture(scope="module")
def cluster():
    with new_cluster(n_worker=2, n_cpu=1, n_io_process=1) as c:
        yield c


def get(cluster, path: str, raw: bool = False):
    request = urllib.request.Request(cluster.web_address + path, headers={"Authorization": f"Bearer {cluster.token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            body = resp.read()
            return resp.status, body.decode() if raw else json.loads(body)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def ok(cluster, path: str, raw: bool = False):
    status, body = get(cluster, path, raw)
    assert status == 200, body
    return body


@pytest.fixture(scope="module")
def job(cluster):
    """A matrix product that runs on both workers (its inputs cross between them); its task id."""
    a = mt.random.rand(800, 800, chunk_size=200)
    value = (a @ a).sum().execute().fetch()
    assert np.isfinite(value)
    sid = cluster.session.session_id
    tasks = ok(cluster, f"/api/sessions/{sid}/tasks")
    return sid, tasks[-1]["task_id"], tasks[-1]["n_subtasks"]


def test_task_stream_has_every_subtask_on_both_workers_with_transfers(cluster, job):
    sid, tid, n_subtasks = job
    body = ok(cluster, f"/api/sessions/{sid}/tasks/{tid}/stream")
    check(load_spec(), response_schema(load_spec(), "/api/sessions/{sid}/tasks/{tid}/stream"), body)
    subtasks = [e for e in body["events"] if e["kind"] == "subtask"]
    assert len(subtasks) == n_subtasks and body["errors"] == []
    assert {e["worker"] for e in subtasks} == set(cluster.worker_addresses)
    assert {e["index"] for e in subtasks} == set(range(n_subtasks))
    assert all(e["task_id"] == tid and e["start"] <= e["end"] and e["slot"] == 0 for e in subtasks)
    # each block product is summed in its own subtask (the reduction's chunk step reads only it)
    assert any(e["name"].startswith("TensorDotBlock") for e in subtasks), {e["name"] for e in subtasks}
    assert all(e["nbytes"] > 0 and e["keys"] for e in subtasks)
    transfers = [e for e in body["events"] if e["kind"] == "transfer"]
    assert transfers and all(e["peer"] in cluster.worker_addresses and e["peer"] != e["worker"] for e in transfers)
    assert [w["address"] for w in body["workers"]] and all(w["n_slots"] == 1 for w in body["workers"])
    assert [e["start"] for e in body["events"]] == sorted(e["start"] for e in body["events"])


def test_stream_filters_by_time_and_checks_its_query(cluster, job):
    sid, tid, _ = job
    everything = ok(cluster, f"/api/stream?session_id={sid}")["events"]
    assert {e["task_id"] for e in everything if e["kind"] == "subtask"} >= {tid}
    assert ok(cluster, f"/api/stream?since={time.time() + 3600:.0f}")["events"] == []
    status, body = get(cluster, "/api/stream?since=yesterday")
    assert status == 400 and "since must be a unix time in seconds, got 'yesterday'" in body["error"]["message"]
    status, body = get(cluster, "/api/stream?limit=0")
    assert status == 400 and "limit must be between 1 and 50000, got 0" in body["error"]["message"]


def test_series_show_each_worker_and_the_cluster(cluster, job):
    def moved():  # the job moved blocks between workers: some second shows bytes both ways
        cols = ok(cluster, "/api/cluster/series")["columns"]
        return cols["time"] and max(cols["bytes_received"]) > 0 and max(cols["bytes_sent"]) > 0

    deadline = time.monotonic() + 10
    while not moved():
        assert time.monotonic() < deadline, "no sample with bytes received and sent within 10 s"
        time.sleep(0.2)
    body = ok(cluster, "/api/cluster/series")
    check(load_spec(), response_schema(load_spec(), "/api/cluster/series"), body)
    assert body["fields"][0] == "time" and body["n_cpu"] == 2 and body["memory_limit"] > 0
    cols = body["columns"]
    assert all(0 <= c <= 2.0 + 1e-6 for c in cols["cpu"]) and all(m >= 0 for m in cols["memory_other"])
    address = cluster.worker_addresses[0]
    worker = ok(cluster, f"/api/cluster/workers/{urllib.request.quote(address, safe='')}/series")
    assert worker["worker"] == address and worker["n_cpu"] == 1 and worker["columns"]["time"]
    status, body = get(cluster, "/api/cluster/workers/nobody%3A1/series")
    assert status == 404 and "no worker 'nobody:1'" in body["error"]["message"]


def test_metrics_count_the_subtasks_that_ran(cluster, job):  # job: what ran before
    events = ok(cluster, "/api/stream")["events"]
    ran = {w: sum(1 for e in events if e["kind"] == "subtask" and e["worker"] == w) for w in cluster.worker_addresses}
    deadline = time.monotonic() + 10
    while True:  # the histograms travel with the next heartbeat
        text = ok(cluster, "/metrics", raw=True)
        counts = {m.group(1): int(m.group(2)) for m in
                  re.finditer(r'^mars_subtask_duration_seconds_count\{worker="([^"]+)"\} (\d+)$', text, re.MULTILINE)}
        if counts == ran or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert counts == ran
    assert re.search(r'^mars_tasks\{state="succeeded"\} [1-9]\d*$', text, re.MULTILINE)
    for address in cluster.worker_addresses:
        assert f'mars_worker_slots{{worker="{address}"}} 1' in text
        assert re.search(rf'^mars_worker_memory_used_bytes{{worker="{re.escape(address)}"}} \d+$', text, re.MULTILINE)


def test_performance_report_saves_the_block_s_tasks(cluster, tmp_path):
    path = tmp_path / "report.html"
    with mars.performance_report(path, title="two sums"):
        mt.ones((60, 60), chunk_size=20).sum().execute()
        (mt.arange(100, chunk_size=10) * 2).sum().execute()
    page = path.read_text()
    data = json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.DOTALL)
                      .group(1))
    assert data["title"] == "two sums" and len(data["tasks"]) == 2
    assert all(t["status"] == "succeeded" and t["graph"]["nodes"] for t in data["tasks"])
    ran = {e["task_id"] for e in data["stream"]["events"] if e["kind"] == "subtask"}
    assert ran == {t["task_id"] for t in data["tasks"]}
    assert "<script src=" not in page and "<link" not in page


def test_performance_report_needs_a_cluster_session(tmp_path):
    local = mars.new_session(default=False)
    with pytest.raises(NotImplementedError, match="embedded one.*new_cluster"), \
            mars.performance_report(tmp_path / "r.html", session=local):
        pass
    local.close()
