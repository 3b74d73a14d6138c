"""Closed sessions stay listed with their tasks (names, states, tileable graphs); their data does not."""

from __future__ import annotations

import asyncio

import pandas as pd
import pytest

import mars
import mars.dataframe as md
import mars.tensor as mt
from mars.oscar import close_connections
from mars.services.errors import SessionNotFound, TaskNotFound
from mars.services.session.api import SessionAPI
from mars.services.session.history import SessionHistory


def _api(cluster, method, *args):
    async def call():
        try:
            return await getattr(SessionAPI([cluster.supervisor.address]), method)(*args)
        finally:
            close_connections()  # this loop's connections end with it

    return asyncio.run(call())


def test_a_closed_session_keeps_its_named_tasks_and_their_graphs_but_not_its_data(cluster):
    sess = mars.new_session(cluster.supervisor.address, default=False)
    df = md.DataFrame(pd.DataFrame({"k": [1, 2, 1, 3], "v": [1.0, 2.0, 3.0, 4.0]}), chunk_size=2)
    expected = pd.DataFrame({"k": [1, 2, 1, 3], "v": [1.0, 2.0, 3.0, 4.0]}).groupby("k").agg("sum")
    pd.testing.assert_frame_equal(sess.run(df.groupby("k").agg("sum")), expected)
    assert sess.run((mt.ones((4, 4), chunk_size=2) * 2).sum()) == 32
    sid = sess.session_id
    live = {s["session_id"]: s for s in _api(cluster, "list_sessions")}
    assert live[sid]["state"] == "open"
    sess.close()

    closed = {s["session_id"]: s for s in _api(cluster, "list_sessions")}[sid]
    assert closed["state"] == "closed" and closed["closed"] >= closed["created"] and closed["n_tasks"] == 2
    tasks = _api(cluster, "list_tasks", sid)
    assert [t.status.value for t in tasks] == ["succeeded", "succeeded"]
    assert "FromPandas" in tasks[0].name and "GroupBy" in tasks[0].name, tasks[0].name
    assert tasks[1].name.endswith("TensorSum"), tasks[1].name
    assert _api(cluster, "get_task", sid, tasks[0].task_id).name == tasks[0].name
    graph = _api(cluster, "get_task_graph", sid, tasks[0].task_id, "tileable")
    assert graph["nodes"] and graph["status"] == "succeeded"
    with pytest.raises(TaskNotFound, match="only its tasks' tileable graphs are kept"):
        _api(cluster, "get_task_graph", sid, tasks[0].task_id, "subtask")
    with pytest.raises(SessionNotFound):
        _api(cluster, "fetch", sid, ["any-key"])
    with pytest.raises(SessionNotFound):
        _api(cluster, "list_tasks", "never-made")


def test_the_history_keeps_the_last_n_and_a_reopened_id_is_live_again():
    history = SessionHistory(2)
    for sid in "abc":
        history.add({"session_id": sid, "created": 0.0}, [], {})
    assert [s["session_id"] for s in history.summaries()] == ["b", "c"]
    history.discard("b")
    assert [s["session_id"] for s in history.summaries()] == ["c"] and history.get("b") is None
    assert SessionHistory(0).summaries() == []
    with pytest.raises(ValueError, match="history size must be >= 0, got -1"):
        SessionHistory(-1)


def test_execute_name_is_the_tasks_name_and_a_bad_one_is_refused(cluster):
    with mars.new_session(cluster.supervisor.address, default=False) as sess:
        t = (mt.arange(8, chunk_size=3) + 1).sum()
        sess.execute(t, name="nightly sums")
        assert [x.name for x in _api(cluster, "list_tasks", sess.session_id)] == ["nightly sums"]
        with pytest.raises(ValueError, match="a task name must be 1-200 printable characters"):
            sess.execute(mt.ones(3) * 2, name="bad\nname")
    with mars.new_session() as local:  # the in-process session takes it too, and has no dashboard
        assert local.execute(mt.ones(3).sum(), name="ignored").fetch() == 3


async def test_a_name_travels_through_the_web_api_and_a_bad_one_is_a_400():
    from mars.services.session.mock import MockSessionAPI
    from mars.services.web import WebClient, start_web_server
    from mars.services.web.wire import BadRequest

    async with await start_web_server("127.0.0.1", 0, ["sup:1"], MockSessionAPI) as server:
        async with WebClient(server.url) as client:
            sid = await client.create_session()
            info = await client.submit_and_wait(sid, [mt.ones(4).sum()], 5.0, name="weekly / report")
            assert info.name == "weekly / report"
            tid = await client.submit(sid, [mt.ones(4).sum()])
            assert (await client.get_task(sid, tid)).name == "TensorFull → TensorSum"
            with pytest.raises(BadRequest, match="a task name must be"):
                await client.submit(sid, [mt.ones(4).sum()], name="x" * 201)
