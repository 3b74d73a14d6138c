"""Chaos on a real cluster of processes: workers and IO processes are killed while jobs run.

Every node is a ``mars-supervisor`` or ``mars-worker`` process on loopback
(:class:`process_nodes.ProcessCluster`),
with heartbeats every 0.2 s and workers taken for lost after 2 s of silence.
A worker is killed as a machine dies: SIGKILL to its main process and to
every process under it at once. Each job's result is checked against numpy
or pandas computed from the same seeded data. The seeds fix which worker
dies and at what point of the job (a share of its subtasks done, or a number
of a shuffle's maps done); ``benchmarks/chaos_bench.py`` runs many more
rounds on the same harness and reports the slowdown.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

import mars
import mars.dataframe as md
import mars.tensor as mt
from process_nodes import Node, ProcessCluster

pytestmark = pytest.mark.timeout(240)


def kill_when(cluster: ProcessCluster, session_id: str, future: Any, victim: Node,
              ready: Callable[[int, int], bool], timeout: float = 120) -> int | None:
    """SIGKILL ``victim`` once ``ready(finished, submitted)`` holds for the running task.

    Returns the finished subtasks at the kill, or None when the job ended first (the worker is left alone).
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not future.done():
        counts = cluster.counts(session_id)
        if counts is not None and counts[1] > 0 and ready(*counts):
            victim.kill()
            return counts[0]
        time.sleep(0.02)
    return None


def shuffle_counts(cluster: ProcessCluster, session_id: str, mapper: str, reducer: str) -> tuple[int, ...]:
    """``(maps done, maps, reduces done, reduces)``: the running task's subtasks whose ops name these."""
    counts = [0, 0, 0, 0]
    for task in cluster.get(f"/api/sessions/{session_id}/tasks"):
        if task["status"] != "running":
            continue
        graph = cluster.get(f"/api/sessions/{session_id}/tasks/{task['task_id']}/graph?level=subtask")
        for node in graph["nodes"]:
            for i, label in ((0, mapper), (2, reducer)):
                if label in node["label"]:
                    counts[i] += node["state"] == "succeeded"
                    counts[i + 1] += 1
    return counts[0], counts[1], counts[2], counts[3]


def kill_in_shuffle(cluster: ProcessCluster, session_id: str, future: Any, victim: Node, mapper: str,
                    reducer: str, pick: random.Random, timeout: float = 120) -> tuple | None:
    """SIGKILL ``victim`` between a random number of finished maps and the last reduce.

    Returns the counts of :func:`shuffle_counts` at the kill, or None when the job ended first.
    """
    deadline, threshold = time.monotonic() + timeout, None
    while time.monotonic() < deadline and not future.done():
        maps_done, maps, reduces_done, reduces = counts = shuffle_counts(cluster, session_id, mapper, reducer)
        if maps and threshold is None:
            threshold = pick.randint(1, maps)
        if threshold is not None and maps_done >= threshold and reduces_done < reduces:
            victim.kill()
            return counts
        time.sleep(0.02)
    return None


# ---------------------------------------------------------------------------------------------- the tests
@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("chaos")
    with open(workdir / "nodes.log", "w") as log:
        print(f"the nodes' output: {workdir / 'nodes.log'}")
        nodes = ProcessCluster(str(workdir), n_workers=3, log=log)
        try:
            yield nodes
        finally:
            nodes.stop()


@pytest.fixture
def session(cluster):
    cluster.top_up(3)
    sess = mars.new_session(cluster.url, default=False)
    try:
        yield sess
    finally:
        sess.close()


def _kill_during(cluster: ProcessCluster, session: Any, future: Any, pick: random.Random) -> Node:
    victim, fraction = pick.choice(cluster.alive_workers()), pick.uniform(0.1, 0.7)
    at = kill_when(cluster, session.session_id, future, victim, lambda done, total: done >= fraction * total)
    assert at is not None, "the job ended before the worker was killed: it is too short to test anything"
    return victim


@pytest.mark.parametrize("seed", [1, 2])
def test_a_worker_killed_at_a_random_point_of_a_tensor_job_leaves_its_result_right(cluster, session, seed):
    pick, data = random.Random(seed), np.random.default_rng(seed)
    x, y = data.random((1200, 1200)), data.random((1200, 1200))
    a, b = mt.tensor(x, chunk_size=200), mt.tensor(y, chunk_size=200)
    session.execute(a, b)  # held across the workers: the one killed takes some of their chunks along
    expr = ((a @ b.T) @ a + b).sum(axis=0)
    future = session.execute(expr, wait=False)
    victim = _kill_during(cluster, session, future, pick)
    future.result(120)
    np.testing.assert_allclose(session.fetch(expr), ((x @ y.T) @ x + y).sum(axis=0), rtol=1e-10)
    np.testing.assert_array_equal(session.fetch(b), y)  # held chunks lost with the worker are made again
    cluster.wait_worker(victim.address, "lost")
    assert session.run((a - b).max()) == (x - y).max()  # and the session goes on with the workers left


def _frames_on_the_cluster(session: Any, seed: int, n_left: int, n_right: int, chunk_size: int) -> tuple:
    """Two frames made by the workers (uploading them would take longer than the job), and their values."""
    rs = mt.random.RandomState(seed)
    keys = max(n_left, n_right)
    left_t = mt.concatenate([mt.floor(rs.rand(n_left, 1, chunk_size=(chunk_size, 1)) * keys),
                             rs.rand(n_left, 6, chunk_size=(chunk_size, 6))], axis=1)
    right_t = mt.concatenate([mt.floor(rs.rand(n_right, 1, chunk_size=(chunk_size, 1)) * keys),
                              rs.rand(n_right, 2, chunk_size=(chunk_size, 2))], axis=1)
    left = md.DataFrame(left_t, columns=["k", *[f"x{i}" for i in range(6)]])
    right = md.DataFrame(right_t, columns=["k", "v", "w"])
    session.execute(left, right)
    return left, right, *session.fetch(left, right)


def test_a_worker_killed_during_the_shuffle_of_a_sort_leaves_its_result_right(cluster, session):
    pick = random.Random(3)
    left, _, pleft, _ = _frames_on_the_cluster(session, 3, 1_000_000, 10, 100_000)
    expr = left.sort_values("x0")
    future = session.execute(expr, wait=False)
    at = kill_in_shuffle(cluster, session.session_id, future, pick.choice(cluster.alive_workers()),
                         "SortBucket", "SortMerge", pick)
    assert at is not None, "the sort ended before its shuffle was cut"
    future.result(120)
    pd.testing.assert_frame_equal(session.fetch(expr), pleft.sort_values("x0"))


def test_a_worker_killed_during_the_shuffle_of_a_hash_merge_leaves_its_result_right(cluster, session):
    # over 128 MB in all (options.chunk_store_limit), with the right side too big to broadcast: both shuffle
    pick = random.Random(4)
    left, right, pleft, pright = _frames_on_the_cluster(session, 4, 1_500_000, 1_200_000, 150_000)
    expr = left.merge(right, on="k")
    future = session.execute(expr, wait=False)
    at = kill_in_shuffle(cluster, session.session_id, future, pick.choice(cluster.alive_workers()),
                         "KeySplit", "ConcatPieces", pick)
    assert at is not None, "the merge ended before its shuffle was cut"
    future.result(120)
    pd.testing.assert_frame_equal(session.fetch(expr), pleft.merge(pright, on="k"))


def test_an_io_process_killed_during_a_transfer_leaves_the_job_right(cluster, session):
    x = np.random.default_rng(5).random((1200, 1200))
    a = mt.tensor(x, chunk_size=200)
    session.execute(a)  # held across the workers: the product reads every worker's chunks from the others
    owner = cluster.alive_workers()[0]
    io = cluster.io_process(owner)
    io.suspend()  # reads from the owner now wait, mid-call, until the process dies
    try:
        future = session.execute((a @ a).sum(axis=0), wait=False)
        time.sleep(1.5)
        assert not future.done(), "the job did not need to read from the stopped IO process"
    finally:
        io.kill()
    np.testing.assert_allclose(future.result(120), (x @ x).sum(axis=0), rtol=1e-10)
    assert cluster.io_process(owner).pid != io.pid  # the worker's main pool started it again
    cluster.wait_worker(owner.address, "alive", pid=owner.process.pid)  # and the worker was never lost


def test_a_worker_back_at_its_address_rejoins_as_a_new_one_and_gets_work(cluster, session):
    old = cluster.alive_workers()[0]
    old.kill()
    cluster.wait_worker(old.address, "lost", pid=old.process.pid)
    new = cluster.start_worker(int(old.address.rsplit(":", 1)[1]))
    assert new.address == old.address
    x = np.random.default_rng(6).random((600, 600))
    doubled = mt.tensor(x, chunk_size=50) * 2  # 144 sources: spread over every worker
    session.execute(doubled)
    deadline = time.monotonic() + 10
    while cluster.wait_worker(new.address, "alive", pid=new.process.pid).get("storage_n_chunks", 0) == 0:
        assert time.monotonic() < deadline, f"the worker back at {new.address} was given no chunks"
        time.sleep(0.1)
    np.testing.assert_array_equal(session.fetch(doubled), x * 2)


def test_a_job_survives_losing_all_workers_but_one(cluster, session):
    pick, data = random.Random(7), np.random.default_rng(7)
    x = data.random((1600, 1600))
    a = mt.tensor(x, chunk_size=200)
    expr = ((a @ a) @ a).sum(axis=1)
    future = session.execute(expr, wait=False)
    first, second = pick.sample(cluster.alive_workers(), 2)
    fraction, more = pick.uniform(0.05, 0.25), pick.randint(5, 30)
    at = kill_when(cluster, session.session_id, future, first, lambda done, total: done >= fraction * total)
    assert at is not None, "the job ended before the first kill"
    assert kill_when(cluster, session.session_id, future, second, lambda done, _: done >= at + more) is not None
    future.result(180)
    np.testing.assert_allclose(session.fetch(expr), ((x @ x) @ x).sum(axis=1), rtol=1e-10)
