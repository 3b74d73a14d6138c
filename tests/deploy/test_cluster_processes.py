"""A real cluster: ``mars-supervisor`` and ``mars-worker`` processes on loopback, driven like a user would."""

from __future__ import annotations

import time

import numpy as np
import psutil
import pytest

import mars
import mars.tensor as mt
from process_nodes import Node, start_supervisor, start_worker, start_workers

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def cluster():
    sup, address, url = start_supervisor()
    workers = start_workers(address, 2, "--n-cpu", "1")
    yield address, url, workers
    codes = [w.stop() for w in workers] + [sup.stop()]
    assert codes == [0, 0, 0], f"nodes did not stop cleanly: {codes}"
    for node in workers + [sup]:
        assert not psutil.pid_exists(node.process.pid) or psutil.Process(node.process.pid).status() == "zombie"


def test_the_seeds_inner_product_over_http(cluster):
    _, url, _ = cluster
    with mars.new_session(url, default=False) as sess:
        a = mt.random.rand(2000, 2000, chunk_size=200)
        product = sess.execute(mt.inner(a, a))
        values = sess.fetch(a)
        np.testing.assert_allclose(sess.fetch(product), np.inner(values, values), rtol=1e-10)


def test_the_seeds_dataframe_sum_and_a_groupby_merge_sort_over_http(cluster):
    import pandas as pd
    import mars.dataframe as md

    _, url, _ = cluster
    with mars.new_session(url, default=False) as sess:
        a = mt.ones((2000, 2000), chunk_size=200)
        pd.testing.assert_series_equal(sess.run(md.DataFrame(a).sum()), pd.DataFrame(np.ones((2000, 2000))).sum())
        rng = np.random.default_rng(0)
        pdf = pd.DataFrame({"k": rng.integers(0, 50, 5000), "x": rng.random(5000)})
        right = pd.DataFrame({"k": np.arange(50), "name": [f"n{i}" for i in range(50)]})
        df = md.DataFrame(pdf, chunk_size=700)
        expr = df.merge(md.DataFrame(right, chunk_size=20), on="k").groupby("name").x.sum().sort_values()
        expected = pdf.merge(right, on="k").groupby("name").x.sum().sort_values()
        pd.testing.assert_series_equal(sess.run(expr), expected)


def test_a_user_error_fails_the_job_and_the_cluster_stays_healthy(cluster):
    _, url, _ = cluster
    with mars.new_session(url, default=False) as sess:
        with pytest.raises(ValueError):
            sess.run(mt.tensor(np.array(["a", "b"]), chunk_size=1).astype(float))
        assert sess.run(mt.arange(10, chunk_size=3).sum()) == 45


def test_sessions_of_the_actor_protocol_and_of_the_web_share_the_cluster(cluster):
    address, url, _ = cluster
    with mars.new_session(address, default=False) as direct, mars.new_session(url, default=False) as web:
        x = np.arange(100.0)
        assert direct.run(mt.tensor(x, chunk_size=7).sum()) == web.run(mt.tensor(x, chunk_size=9).sum()) == x.sum()


def test_n_cpu_holds_for_blas_heavy_work():
    """A worker with --n-cpu 1 keeps at most one core busy, BLAS threads included."""
    sup, address, url = start_supervisor()
    worker = start_worker(address, "--n-cpu", "1", "--n-io-process", "1")
    try:
        tree = psutil.Process(worker.process.pid)

        def cpu_seconds() -> float:
            total = 0.0
            for p in [tree, *tree.children(recursive=True)]:
                try:
                    t = p.cpu_times()
                    total += t.user + t.system
                except psutil.NoSuchProcess:
                    pass
            return total

        with mars.new_session(url, default=False) as sess:
            a = mt.random.rand(1500, 1500, chunk_size=1500)
            sess.execute(a)
            _wait_idle(tree)  # what the worker does as it starts is not the job's CPU
            before, start = cpu_seconds(), time.monotonic()
            sess.execute(a @ a @ a @ a)
            used, wall = cpu_seconds() - before, time.monotonic() - start
        assert wall > 0.2, "the job was too short to measure"
        assert used / wall < 1.25, f"the worker kept {used / wall:.2f} cores busy with --n-cpu 1"
    finally:
        worker.stop()
        sup.stop()


def _wait_idle(process: psutil.Process, timeout: float = 30) -> None:
    """Until ``process`` uses under a tenth of a core over half a second."""
    deadline = time.monotonic() + timeout
    process.cpu_percent()
    while time.monotonic() < deadline:
        time.sleep(0.5)
        if process.cpu_percent() < 10:
            return
    raise AssertionError(f"process {process.pid} stayed busy for {timeout:g} s")


def test_a_job_without_workers_says_so_then_runs_once_one_joins(tmp_path):
    sup, address, url = start_supervisor()
    worker = None
    try:
        with mars.new_session(url, default=False) as sess:
            future = sess.execute(mt.arange(6, chunk_size=2) * 2, wait=False)
            time.sleep(1.0)
            assert not future.done()
            worker = start_worker(address, "--n-cpu", "1")
            np.testing.assert_array_equal(future.result(60), np.arange(6) * 2)
    finally:
        if worker is not None:
            worker.stop()
        sup.stop()


def test_a_job_without_workers_fails_after_the_timeout_naming_the_supervisor(tmp_path, capfd):
    config = tmp_path / "config.yml"
    config.write_text("task:\n  no_worker_timeout: 3\n  no_worker_warning: 0.5\n")
    sup, address, url = start_supervisor("-f", str(config))
    try:
        with mars.new_session(url, default=False) as sess:
            start = time.monotonic()
            with pytest.raises(TimeoutError, match=f"none registered with supervisor {address}"):
                sess.execute(mt.ones(3) + 1)
            assert time.monotonic() - start < 10
        assert "waiting for workers: none registered" in capfd.readouterr().err
    finally:
        sup.stop()


def test_two_supervisors_spread_sessions_and_either_web_port_serves_any(tmp_path):
    import socket

    ports = []
    for _ in range(2):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
    both = ",".join(f"127.0.0.1:{p}" for p in ports)
    sups = [Node("supervisor", "-H", "127.0.0.1", "-p", str(p), "-w", "0", "-s", both) for p in ports]
    worker = None
    try:
        urls = [s.wait_for("Mars Web started at").rsplit(" ", 1)[1] for s in sups]
        worker = start_worker(both, "--n-cpu", "1")
        owners = set()
        from mars.services.session.api import owner_of

        for i in range(12):  # owners are picked by a hash of the session id: all on one is 1 in 2,048
            with mars.new_session(urls[i % 2], default=False) as sess:
                owners.add(owner_of(sess.session_id, both.split(",")))
                assert sess.run(mt.arange(10, chunk_size=4).sum()) == 45
        assert len(owners) == 2, "all sessions landed on one supervisor"
    finally:
        if worker is not None:
            worker.stop()
        for s in sups:
            s.stop()


def test_mars_web_alone_serves_the_cluster_it_points_at_and_prints_its_advertised_address():
    sup, address, _ = start_supervisor()
    worker = start_worker(address, "--n-cpu", "1")
    web = Node("web", "-H", "127.0.0.1", "-p", "0", "-s", address, "-a", "localhost")
    try:
        url = web.wait_for("Mars Web started at").rsplit(" ", 1)[1]
        assert url.startswith("http://localhost:")
        with mars.new_session(url, default=False) as sess:
            assert sess.run(mt.arange(10, chunk_size=4).sum()) == 45
    finally:
        assert web.stop() == 0
        worker.stop()
        sup.stop()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_restarted_supervisor_answers_old_sessions_with_a_clear_error_not_a_hang():
    from mars.services.errors import SessionNotFound
    from mars.services.web import WebConnectionError

    port, web_port = _free_port(), _free_port()
    ports = ("-p", str(port), "-w", str(web_port))
    sup, address, url = start_supervisor(*ports)
    worker = start_worker(address, "--n-cpu", "1")
    try:
        sess = mars.new_session(url, default=False)
        assert sess.run(mt.arange(10, chunk_size=3).sum()) == 45
        a = mt.random.rand(3000, 3000, chunk_size=500)
        running = sess.execute((a @ a).sum(), wait=False)
        time.sleep(0.5)
        sup.process.kill()  # gone at once, with its sessions
        sup.process.wait(30)
        started = time.monotonic()
        with pytest.raises(WebConnectionError, match="cannot reach"):
            running.result(60)
        assert time.monotonic() - started < 10
        sup, _, _ = start_supervisor(*ports)
        with pytest.raises(SessionNotFound, match="supervisor that has restarted"):
            sess.run(mt.arange(10, chunk_size=3).sum())
        with mars.new_session(url, default=False) as fresh:  # the worker registered again: new sessions run
            assert fresh.run(mt.arange(10, chunk_size=3).sum()) == 45
    finally:
        worker.stop()
        sup.stop()
