"""What a new user does first works the first time: scripts' own functions on a real cluster,
``execute(wait=False)``, a script that never stops its cluster, objects used across sessions,
and address mistakes answered in one line."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
import traceback

import numpy as np
import psutil
import pytest
from process_nodes import start_supervisor, start_worker

import mars
import mars.tensor as mt
from mars.deploy.local import new_cluster

pytestmark = pytest.mark.timeout(180)


def _run_script(tmp_path, source: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    script = tmp_path / "user_script.py"
    script.write_text(textwrap.dedent(source))
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=timeout,
                          check=False)


@pytest.fixture(scope="module")
def cluster():
    with new_cluster(n_cpu=1) as c:
        yield c


# ----------------------------------------------------------------- __main__ travels by value
_MAIN_SCRIPT = """
    import sys
    import numpy as np
    import pandas as pd
    import mars
    import mars.dataframe as md
    import mars.tensor as mt

    def double(x):
        return x * 2

    class Scaler:
        def __init__(self, k):
            self.k = k

        def __call__(self, x):
            return x * self.k

    def add_total(part):
        return part.assign(total=part.a + part.b)

    mars.new_session(sys.argv[1])
    pdf = pd.DataFrame({"a": np.arange(10.0), "b": np.arange(10.0) * 3})
    df = md.DataFrame(pdf, chunk_size=4)
    pd.testing.assert_frame_equal(df.apply(double).execute().fetch(), pdf.apply(double))
    pd.testing.assert_series_equal(df.a.map(Scaler(3)).execute().fetch(), pdf.a.map(Scaler(3)))
    pd.testing.assert_frame_equal(df.map(double).execute().fetch(), pdf.map(double))
    pd.testing.assert_frame_equal(df.map_partitions(add_total).execute().fetch(), add_total(pdf))
    tensor = mt.tensor(np.arange(6.0), chunk_size=4)
    np.testing.assert_array_equal(md.Series(tensor).map(double).execute().fetch().to_numpy(), np.arange(6.0) * 2)
    scaler = Scaler(5)  # an instance of a __main__ class, reached through a lambda's closure
    pd.testing.assert_frame_equal(df.apply(lambda col: scaler(col)).execute().fetch(), pdf * 5)
    print("all results equal pandas")
"""


def test_a_scripts_own_functions_and_classes_run_on_a_cli_started_cluster(tmp_path):
    sup, address, url = start_supervisor()
    try:
        worker = start_worker(address, "--n-cpu", "1")
        try:
            done = _run_script(tmp_path, _MAIN_SCRIPT, url)
        finally:
            worker.stop()
    finally:
        sup.stop()
    assert done.returncode == 0, done.stderr[-4000:]
    assert "all results equal pandas" in done.stdout


# ----------------------------------------------------------------- execute(wait=False)
def _check_future(session):
    a = mt.random.rand(100, 10)
    future = a.mean().execute(session=session, wait=False)
    value = future.result(60)
    assert future.done()
    assert isinstance(value, float)
    assert value == a.mean().fetch(session=session)
    both = session.execute(a.sum(), a.max(axis=0), wait=False).result(60)
    np.testing.assert_allclose(both[1], session.fetch(a).max(axis=0))


def test_execute_wait_false_gives_the_fetched_value_embedded():
    with mars.new_session(default=False) as session:
        _check_future(session)


def test_execute_wait_false_gives_the_fetched_value_on_a_cluster(cluster):
    with mars.new_session(cluster.web_address, default=False) as session:
        _check_future(session)


# ----------------------------------------------------------------- a cluster that is never stopped
_NEVER_STOPPED = """
    import psutil
    from mars.deploy.local import new_cluster
    from mars import new_session
    import mars.tensor as mt

    cluster = new_cluster()
    a = mt.random.rand(10, 10)
    a.dot(a.T).execute()
    cluster.session.run(a + 1)
    session2 = new_session(cluster.endpoint)
    session2.run(a * 2)
    print("PIDS", *[p.pid for p in psutil.Process().children(recursive=True)], flush=True)
"""


def test_a_script_that_never_stops_its_cluster_exits_and_leaves_no_process(tmp_path):
    done = _run_script(tmp_path, _NEVER_STOPPED, timeout=20)
    assert done.returncode == 0, done.stderr[-4000:]
    pids = [int(p) for line in done.stdout.splitlines() if line.startswith("PIDS") for p in line.split()[1:]]
    assert pids, done.stdout  # the supervisor, the worker and their sub pools
    left = psutil.wait_procs([p for p in map(_process, pids) if p is not None], timeout=5)[1]
    assert not [p for p in left if p.status() != psutil.STATUS_ZOMBIE], f"left behind: {left}"


def _process(pid: int) -> psutil.Process | None:
    try:
        return psutil.Process(pid)
    except psutil.NoSuchProcess:
        return None


# ----------------------------------------------------------------- objects across sessions
def _executed_in(session):
    a = mt.random.rand(10, 10, chunk_size=4)
    session.execute(a)
    return a, session.fetch(a)


def test_an_object_executed_on_a_cluster_is_computed_again_in_another_session(cluster):
    with mars.new_session(cluster.web_address, default=False) as first:
        a, values = _executed_in(first)
        with mars.new_session(cluster.endpoint, default=False) as second:
            np.testing.assert_array_equal(second.run(a * 2), values * 2)
        with mars.new_session(default=False) as embedded:
            np.testing.assert_array_equal(embedded.run(a + 1), values + 1)
        np.testing.assert_array_equal(first.fetch(a), values)  # the session that holds it still reads it
    with mars.new_session(cluster.web_address, default=False) as after:  # its session is closed now
        np.testing.assert_array_equal(after.fetch(a), values)
        np.testing.assert_allclose(after.run(a.sum(axis=0)), values.sum(axis=0), rtol=1e-12)


def test_an_object_executed_embedded_is_computed_again_in_another_session(cluster):
    first = mars.new_session(default=False)
    a, values = _executed_in(first)
    with mars.new_session(default=False) as second:
        np.testing.assert_array_equal(second.run(a * 2), values * 2)
    first.close()
    with mars.new_session(default=False) as after:
        np.testing.assert_array_equal(after.fetch(a), values)
    with mars.new_session(cluster.web_address, default=False) as on_cluster:
        np.testing.assert_array_equal(on_cluster.run(a - 1), values - 1)


# ----------------------------------------------------------------- address mistakes
def _one_line_error(address: str, error_type: type) -> str:
    with pytest.raises(error_type) as info:
        mars.new_session(address, default=False)
    error = info.value
    assert "\n" not in str(error)
    assert error.__cause__ is None, "the library's own error came along"
    assert error.__context__ is None or error.__suppress_context__, "the library's own error came along"
    frames = traceback.extract_tb(error.__traceback__)
    assert all("aiohttp" not in f.filename and "asyncio" not in f.filename for f in frames), frames
    return str(error)


def test_a_web_port_without_http_says_to_add_it(cluster):
    bare = cluster.web_address.split("://", 1)[1]
    assert _one_line_error(bare, ValueError) == f"{bare} answers HTTP: use http://{bare}"


def test_an_unknown_scheme_names_it_and_what_is_expected(cluster):
    bare = cluster.web_address.split("://", 1)[1]
    message = _one_line_error("htp://" + bare, ValueError)
    assert "'htp://'" in message and "http://host:web_port" in message and "host:port" in message


@pytest.mark.parametrize("address", ["http://127.0.0.1:1", "127.0.0.1:1"])
def test_nothing_listening_is_one_line_saying_what_was_tried(address):
    message = _one_line_error(address, ConnectionError)
    assert "127.0.0.1:1" in message
    assert "refused" in message.lower() or "failed" in message.lower(), message


def test_a_client_of_mars_web_waits_for_a_supervisor_that_is_starting():
    """mars-web up first (the legacy roles start in any order): a new session waits, with a message, then runs."""
    import concurrent.futures
    import socket

    from process_nodes import Node

    def free_port() -> int:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]

    env = {"MARS_TOKEN": "first-contact-web-token"}
    sup_port = free_port()
    web = Node("web", "-H", "127.0.0.1", "-p", "0", "-s", f"127.0.0.1:{sup_port}", env=env)
    sup = worker = None
    try:
        url = web.wait_for("Mars Web started at").rsplit(" ", 1)[1]
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            opening = pool.submit(mars.new_session, url, default=False)
            time.sleep(1.5)
            assert not opening.done()  # waiting, not failed
            sup = Node("supervisor", "-H", "127.0.0.1", "-p", str(sup_port), "-w", "0", env=env)
            sup.wait_for("Mars supervisor started at")
            worker = Node("worker", "-H", "127.0.0.1", "-s", f"127.0.0.1:{sup_port}", "--n-cpu", "1", env=env)
            worker.wait_for("Mars worker started at")
            with opening.result(60) as sess:
                assert sess.run(mt.arange(5, chunk_size=2).sum()) == 10
    finally:
        for node in (worker, sup, web):
            if node is not None:
                node.stop()
