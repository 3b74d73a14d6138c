"""The statistical profile (issue 23): slots sample their running subtask's stack; a task's flame graph data.

The table, the sampler and the merge are plain objects tested alone; the
API, the report and the slot wiring run on one local cluster of two worker
processes (one slot each).
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.request

import numpy as np
import pytest

import mars
import mars.tensor as mt
from mars.deploy.local import new_cluster
from mars.services.execution.profiler import (
    MAX_DEPTH,
    TRUNCATED,
    Profile,
    ProfileTable,
    StackSampler,
    merge_profiles,
)

from .openapi_check import check, load_spec, response_schema

pytestmark = pytest.mark.timeout(120)


def spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def run_one(seconds: float) -> None:
    """Stands for the slot's function that runs one subtask: the sampler's root."""
    spin(seconds)


def names(profile: Profile, row: tuple) -> list[str]:
    return [profile.frames[i][0] for i in row[1]]


# ------------------------------------------------------------------ alone
def test_table_forgets_the_oldest_tasks_first_and_counts_what_it_dropped():
    t = ProfileTable(max_rows=3)
    for i in range(3):
        t.add("s", "old", "Op", ((f"f{i}", "a.py", i),))
    t.add("s", "new", "Op", (("g", "a.py", 1),))  # full: the old task's rows go, all of them
    assert t.profile("s", "old").samples == 0 and t.dropped == 3
    for i in range(5):  # one task alone past the bound: its new stacks are dropped, its known ones still count
        t.add("s", "new", "Op", ((f"h{i}", "a.py", i),))
    t.add("s", "new", "Op", (("g", "a.py", 1),))
    p = t.profile("s", "new")
    assert len(p.rows) == 3 and p.samples == 4 and t.dropped == 6
    assert t.profile("other", None).samples == 0 and t.profile(None, None).samples == 4
    with pytest.raises(ValueError, match="at least 1 row, got max_rows=0"):
        ProfileTable(max_rows=0)


def test_sampler_counts_the_running_function_below_its_root_every_interval():
    s = StackSampler(root=run_one.__code__, interval=0.005)
    try:
        s.enter("s", "t", "MyOp")
        run_one(0.4)
        s.pause()
        p = s.profile("s", "t")
    finally:
        s.close()
    # a loaded machine and the wait for the GIL stretch the interval; it is measured, so counts still tell time
    assert 5 <= p.samples <= 0.4 / 0.005 + 1 and p.interval >= 0.005
    assert 0.4 * 0.6 < p.samples * p.interval < 0.4 * 1.3
    assert {op for op, _, _ in p.rows} == {"MyOp"}
    stacks = [names(p, r) for r in p.rows]
    assert all(st[0] == "spin" for st in stacks)  # nothing of run_one or what called it
    assert p.frames[0][1] == __file__ and p.frames[0][2] == spin.__code__.co_firstlineno
    assert s.profile("s", "other").samples == 0


def test_sampler_counts_nothing_while_paused_or_outside_a_subtask():
    s = StackSampler(root=run_one.__code__, interval=0.005)
    try:
        s.enter("s", "t", "Op")
        spin(0.1)  # busy, but not under run_one: between subtasks
        assert s.sample() is False
        s.pause()
        run_one(0.1)  # under run_one, but paused
        assert s.sample() is False and s.profile().samples == 0
    finally:
        s.close()
    s._thread.join(1)
    assert not s._thread.is_alive()
    with pytest.raises(ValueError, match="between 0 and 10 seconds, got 0"):
        StackSampler(interval=0)


def test_a_deep_stack_keeps_its_root_end_and_marks_the_cut():
    def down(k: int) -> None:
        spin(0.3) if k == 0 else down(k - 1)

    def root() -> None:
        down(MAX_DEPTH + 20)

    s = StackSampler(root=root.__code__, interval=0.005)

    def slot_thread() -> None:  # as a slot's thread does: enter, run, pause
        s.enter("s", "t", "Op")
        root()
        s.pause()

    try:
        worker = threading.Thread(target=slot_thread)
        worker.start()
        worker.join()
        p = s.profile()
    finally:
        s.close()
    assert p.samples > 0
    for row in p.rows:
        assert len(row[1]) == MAX_DEPTH and p.frames[row[1][-1]] == TRUNCATED
        assert names(p, row)[0] == "test_a_deep_stack_keeps_its_root_end_and_marks_the_cut.<locals>.down"


def test_merge_joins_frames_by_label_across_slots():
    a = Profile(0.01, 3, [("f", "a.py", 1), ("g", "a.py", 9)], [("Op", (0, 1), 3)])
    b = Profile(0.01, 4, [("g", "a.py", 9), ("f", "a.py", 1)], [("Op", (1, 0), 1), ("Add", (0,), 3)], dropped=2)
    m = merge_profiles([a, b])
    assert m.samples == 7 and m.dropped == 2 and m.frames == [("f", "a.py", 1), ("g", "a.py", 9)]
    assert sorted(m.rows) == [("Add", (1,), 3), ("Op", (0, 1), 4)]
    assert merge_profiles([]).samples == 0


# ------------------------------------------------------------------ on a cluster
def make_slow(seconds: float = 0.3):
    """A chunk function that busy-loops ``seconds``; nested, so that it travels by value to the workers."""

    def slow_function(chunk: np.ndarray) -> np.ndarray:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass
        return chunk * 2

    return slow_function


@pytest.fixture(scope="module")
def cluster():
    with new_cluster(n_worker=2, n_cpu=1, n_io_process=0) as c:
        yield c


def ok(cluster, path: str):
    request = urllib.request.Request(cluster.web_address + path, headers={"Authorization": f"Bearer {cluster.token}"})
    with urllib.request.urlopen(request, timeout=30) as resp:
        assert resp.status == 200
        return json.loads(resp.read())


def last_task(cluster) -> str:
    return ok(cluster, f"/api/sessions/{cluster.session.session_id}/tasks")[-1]["task_id"]


def slow_rows(body: dict) -> list[dict]:
    frames = body["frames"]
    return [r for r in body["rows"] if any(frames[i]["name"].endswith(".slow_function") for i in r["stack"])]


def test_profile_names_the_chunk_function_of_a_slow_job(cluster):
    np.testing.assert_array_equal(mt.arange(8, chunk_size=2, dtype=float).map_chunk(make_slow(), dtype=float)
                                  .execute().fetch(), np.arange(8.0) * 2)
    sid, tid = cluster.session.session_id, last_task(cluster)
    body = ok(cluster, f"/api/sessions/{sid}/tasks/{tid}/profile")
    check(load_spec(), response_schema(load_spec(), "/api/sessions/{sid}/tasks/{tid}/profile"), body)
    assert body["task_id"] == tid and body["errors"] == [] and 0.01 <= body["interval"] < 0.1
    rows = slow_rows(body)
    slow = sum(r["count"] for r in rows)
    assert slow * body["interval"] >= 0.6 * 4 * 0.3  # 4 chunks of 0.3 s: the samples tell about 1.2 s
    assert slow >= 0.8 * body["samples"]  # nearly all of the task's time is in the slow function
    assert {r["op"] for r in rows} == {"TensorMapChunk"}
    assert all(body["frames"][r["stack"][-1]]["name"] == "make_slow.<locals>.slow_function" for r in rows)
    assert {w["address"] for w in body["workers"]} == set(cluster.worker_addresses)  # each was asked
    assert sum(w["samples"] for w in body["workers"]) == body["samples"]
    # another task's profile holds none of it
    mt.ones(10, chunk_size=5).sum().execute()
    other = ok(cluster, f"/api/sessions/{sid}/tasks/{last_task(cluster)}/profile")
    assert slow_rows(other) == []


def test_performance_report_carries_each_task_s_profile(cluster, tmp_path):
    path = tmp_path / "report.html"
    with mars.performance_report(path, title="slow"):
        mt.tensor(np.arange(4.0), chunk_size=2).map_chunk(make_slow()).execute()
    page = path.read_text()
    data = json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.DOTALL)
                      .group(1))
    (task,) = data["tasks"]
    assert sum(r["count"] for r in slow_rows(task["profile"])) * task["profile"]["interval"] >= 0.6 * 2 * 0.3
    assert "FlameGraph" in page
