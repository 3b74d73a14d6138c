"""Jobs on an in-process cluster: results equal numpy, errors come back as themselves."""

from __future__ import annotations

import numpy as np
import pytest

import mars.tensor as mt


@pytest.mark.parametrize("chunk_size", [5, 3, 1])
def test_elementwise_and_reduction_equal_numpy(session, chunk_size):
    x = np.arange(30.0).reshape(5, 6)
    t = mt.tensor(x, chunk_size=chunk_size)
    np.testing.assert_allclose(session.run((t * 2 + 1).sum(axis=0)), (x * 2 + 1).sum(axis=0))
    np.testing.assert_allclose(session.run(mt.inner(t, t)), np.inner(x, x))


def test_tiny_job_returns_the_value(session):
    assert session.run((mt.ones((5, 5), chunk_size=3) * 4).sum()) == 100.0


def test_executed_results_feed_later_expressions(session):
    a = mt.random.RandomState(0).rand(40, 40, chunk_size=7)
    session.execute(a)
    values = session.fetch(a)
    b = (a @ a.T).sum()
    np.testing.assert_allclose(session.run(b), (values @ values.T).sum())


def test_sizes_known_only_after_running(session):
    x = np.arange(20)
    t = mt.tensor(x, chunk_size=3)
    filtered = t[t % 3 == 0]
    np.testing.assert_array_equal(session.run(filtered), x[x % 3 == 0])
    assert filtered.shape == (7,)
    np.testing.assert_array_equal(session.run(mt.sort(mt.tensor(x[::-1], chunk_size=4))), np.sort(x))


class Boom:
    """An object whose arithmetic fails inside a chunk function, on the worker."""

    def __add__(self, other):
        raise ZeroDivisionError("boom in a chunk")


def test_a_user_error_comes_back_as_itself_and_the_cluster_stays_healthy(session):
    bad = mt.tensor(np.array([Boom(), Boom(), Boom()], dtype=object), chunk_size=2) + 1
    with pytest.raises(ZeroDivisionError, match="boom in a chunk") as info:
        session.run(bad)
    assert "__add__" in str(info.value.__cause__)  # the worker's traceback travels with it
    assert session.run(mt.ones(4, chunk_size=2).sum()) == 4.0


def test_released_results_are_freed_on_the_workers(cluster, session):
    from mars.services.session.api import SessionAPI

    t = mt.random.RandomState(1).rand(100, 100, chunk_size=10) + 1  # 100 distinct chunks
    session.execute(t)
    api = SessionAPI([cluster.supervisor.address])
    summary = cluster.run(api.list_sessions())
    held = next(s for s in summary if s["session_id"] == session.session_id)["n_chunks"]
    assert held == 100
    del t
    import gc
    import time

    gc.collect()
    for _ in range(200):
        summary = cluster.run(api.list_sessions())
        if next(s for s in summary if s["session_id"] == session.session_id)["n_chunks"] == 0:
            break
        time.sleep(0.01)
    else:
        raise AssertionError("released chunks stayed in the session's meta")


def test_execute_wait_false_returns_a_future(session):
    t = mt.arange(10, chunk_size=3) * 2
    future = session.execute(t, wait=False)
    np.testing.assert_array_equal(future.result(30), np.arange(10) * 2)  # what fetch() gives
    np.testing.assert_array_equal(session.fetch(t), np.arange(10) * 2)


class Slow:
    """Arithmetic that takes a while, to keep a job running."""

    def __add__(self, other):
        import time

        time.sleep(0.05)
        return 1


def test_cancelling_a_job_stops_it_and_the_cluster_runs_the_next(session):
    import concurrent.futures
    import time

    slow = mt.tensor(np.array([Slow() for _ in range(200)], dtype=object), chunk_size=1) + 1
    future = session.execute(slow, wait=False)
    time.sleep(0.3)
    started = time.monotonic()
    assert future.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        future.result(30)
    assert time.monotonic() - started < 5, "cancel took too long: queued subtasks were not dropped"
    assert session.run(mt.arange(5, chunk_size=2).sum()) == 10


def test_cancelling_stops_a_chained_graph_inside_its_slot(cluster, session):
    """A small graph of slow Python functions runs as one chain in one slot: cancel reaches into it."""
    import time

    import mars.oscar as mo
    from mars.services.execution.api import EXECUTION_UID

    slow = mt.tensor(np.array([Slow() for _ in range(100)], dtype=object), chunk_size=1) + 1  # 5 s of work
    future = session.execute(slow, wait=False)
    time.sleep(0.3)
    future.cancel()
    deadline = time.monotonic() + 2
    while True:
        stats = [cluster.run(mo.ActorRef(w.address, EXECUTION_UID).stats()) for w in cluster.workers]
        if all(s["n_running"] == 0 and s["n_queued"] == 0 for s in stats):
            break
        assert time.monotonic() < deadline, f"workers still busy with a cancelled job: {stats}"
        time.sleep(0.05)


def test_fetching_a_released_or_unknown_chunk_names_it(cluster, session):
    from mars.services.errors import DataNotFound
    from mars.services.session.api import SessionAPI

    api = SessionAPI([cluster.supervisor.address])
    with pytest.raises(DataNotFound, match="no-such-key"):
        cluster.run(api.fetch(session.session_id, ["no-such-key"]))


def test_a_task_whose_worker_is_lost_computes_what_was_lost_on_the_others():
    import time

    import mars

    from .conftest import InProcessCluster

    cluster = InProcessCluster(n_worker=2, worker_timeout=0.6)
    try:
        sess = mars.new_session(cluster.supervisor.address, default=False)
        held = mt.arange(160, chunk_size=10) * 3
        sess.execute(held)  # a result held on both workers before one is lost
        slow = mt.tensor(np.array([Slow() for _ in range(160)], dtype=object), chunk_size=1) + 1
        total = (slow + held).sum()
        future = sess.execute(total, wait=False)
        time.sleep(0.5)
        doomed = cluster.workers.pop()
        cluster.run(doomed.pool.stop())  # gone without a goodbye: its heartbeats stop
        started = time.monotonic()
        future.result(60)
        assert sess.fetch(total) == 160 + 3 * sum(range(160))
        assert time.monotonic() - started < 30
        np.testing.assert_array_equal(sess.fetch(held), np.arange(160) * 3)  # its lost chunks made again
        sess.close()
    finally:
        cluster.stop()


def test_executed_inputs_travel_as_chunks_not_as_their_data(session):
    import pickle

    from mars.remote import _held_as_data_only

    x = np.random.default_rng(0).random((1000, 1000))  # 8 MB
    a = mt.tensor(x, chunk_size=250)
    session.execute(a)
    expr = (a * 2).sum()
    source_op = a.data.op
    assert len(pickle.dumps(expr.data)) > 8_000_000
    with _held_as_data_only([expr.data], session._held):
        assert len(pickle.dumps(expr.data)) < 200_000
    assert a.data.op is source_op  # put back after the call
    np.testing.assert_allclose(session.run(expr), (x * 2).sum())


def test_a_session_dropped_without_close_is_deleted_on_the_cluster(cluster):
    import gc

    import mars
    from mars.services.session.api import SessionAPI

    api = SessionAPI([cluster.supervisor.address])
    sess = mars.new_session(cluster.supervisor.address, default=False)
    sid = sess.session_id
    assert cluster.run(api.has_session(sid))
    del sess
    gc.collect()
    assert not cluster.run(api.has_session(sid))


def test_many_results_dying_at_once_are_released_in_few_calls(cluster, session):
    import gc
    import time

    from mars.services.session.api import SessionAPI

    results = [mt.tensor(np.full(3, i), chunk_size=3) + 1 for i in range(50)]
    session.execute(*results)
    calls = []
    backend_call = session._backend.call

    def counting(method, *args):
        calls.append(method)
        return backend_call(method, *args)

    session._backend.call = counting
    api = SessionAPI([cluster.supervisor.address])

    def held() -> int:
        return next(s for s in cluster.run(api.list_sessions()) if s["session_id"] == session.session_id)["n_chunks"]

    assert held() == 50
    del results
    gc.collect()
    deadline = time.monotonic() + 5
    while held():
        assert time.monotonic() < deadline, "released results stayed on the cluster"
        time.sleep(0.01)
    assert 1 <= calls.count("release") <= 5


def test_a_client_on_the_workers_machine_maps_their_shared_memory_and_others_go_through_the_supervisor(cluster):
    from mars.services.session.api import SessionAPI

    import mars

    x = np.random.default_rng(3).random((600, 400))  # segments, not inline values
    with mars.new_session(cluster.supervisor.address, default=False) as sess:
        t = sess.execute(mt.tensor(x, chunk_size=200) + 1)
        keys = [c.key for c in t.chunks]
        api = SessionAPI([cluster.supervisor.address])
        local = cluster.run(api.fetch(sess.session_id, keys))
        assert not api._not_local and not local[0].flags.writeable  # zero-copy views of the segments
        api._not_local.update(w.address for w in cluster.workers)  # as a client on another machine
        remote = cluster.run(api.fetch(sess.session_id, keys))
        for a, b in zip(local, remote):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(sess.fetch(t), x + 1)
