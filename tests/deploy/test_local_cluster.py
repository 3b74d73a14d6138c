"""new_cluster(): a supervisor and workers as processes on this machine, with its session as the default."""

from __future__ import annotations

import time

import numpy as np
import psutil
import pytest

import mars
import mars.tensor as mt
from mars.deploy.local import new_cluster

pytestmark = pytest.mark.timeout(120)


def _tree(pid: int) -> list[psutil.Process]:
    p = psutil.Process(pid)
    return [p, *p.children(recursive=True)]


def _cpu_seconds(procs: list[psutil.Process]) -> float:
    total = 0.0
    for p in procs:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_new_cluster_runs_jobs_as_the_default_session_and_stops_everything(start_method):
    with new_cluster(n_worker=2, n_cpu=1, start_method=start_method) as cluster:
        session = cluster.session
        assert mars.get_default_session() is session
        assert cluster.web_address.startswith("http://127.0.0.1:")
        assert len(cluster.worker_addresses) == 2
        pids = [p.pid for n in cluster._nodes for p in _tree(n.process.pid)]
        x = np.random.default_rng(0).random((300, 200))
        t = mt.tensor(x, chunk_size=70)
        np.testing.assert_allclose((t @ t.T).execute().fetch(), x @ x.T)
        workers = cluster.session._backend.call("get_workers")
        assert sorted(w["address"] for w in workers) == sorted(cluster.worker_addresses)
        assert all(w["state"] == "alive" and w["n_cpu"] == 1 for w in workers)
    assert mars.get_default_session() is not session
    deadline = time.monotonic() + 10
    while any(psutil.pid_exists(p) and psutil.Process(p).status() != "zombie" for p in pids):
        assert time.monotonic() < deadline, "processes of the cluster outlived stop()"
        time.sleep(0.05)


def test_a_forked_worker_keeps_n_cpu_with_blas(tmp_path):
    """Forked slots inherit the parent's BLAS thread pool: they must still use one core each."""
    with new_cluster(n_worker=1, n_cpu=1, start_method="fork") as cluster:
        procs = _tree(cluster._nodes[1].process.pid)
        a = mt.random.rand(1500, 1500, chunk_size=1500).execute()
        before, start = _cpu_seconds(procs), time.monotonic()
        (a @ a @ a @ a).execute()
        used, wall = _cpu_seconds(procs) - before, time.monotonic() - start
    assert wall > 0.2
    assert used / wall < 1.25, f"a worker with n_cpu=1 kept {used / wall:.2f} cores busy"


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="n_worker must be a positive int, got 0"):
        new_cluster(n_worker=0)
    with pytest.raises(ValueError, match="start_method must be"):
        new_cluster(start_method="threads")


def test_a_slot_process_that_dies_is_restarted_with_its_runner():
    with new_cluster(n_worker=1, n_cpu=1) as cluster:
        worker = psutil.Process(cluster._nodes[1].process.pid)
        assert (mt.arange(10, chunk_size=3) + 1).sum().execute().fetch() == 55
        slot = worker.children()[0]
        slot.kill()
        slot.wait(5)
        deadline = time.monotonic() + 30
        while True:  # jobs sent while it restarts may fail; once it is back they run
            try:
                assert (mt.arange(10, chunk_size=3) * 2).sum().execute().fetch() == 90
                break
            except AssertionError:
                raise
            except Exception:
                assert time.monotonic() < deadline, "the slot never came back"
                time.sleep(0.2)


def test_the_same_services_run_in_this_process():
    threads_before = {t.name for t in __import__("threading").enumerate()}
    with new_cluster(n_worker=2, n_cpu=1, processes=False) as cluster:
        assert mars.get_default_session() is cluster.session
        x = np.arange(100.0).reshape(10, 10)
        t = mt.tensor(x, chunk_size=3)
        np.testing.assert_allclose((t @ t).sum(axis=0).execute().fetch(), (x @ x).sum(axis=0))
        assert len(cluster.session._backend.call("get_workers")) == 2
    time.sleep(0.2)
    assert "mars-nodes" not in {t.name for t in __import__("threading").enumerate()} - threads_before
