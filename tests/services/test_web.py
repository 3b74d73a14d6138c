"""The web API as clients see it: a server on loopback backed by MockSessionAPI."""

from __future__ import annotations

import asyncio
import statistics
import threading
import time

import aiohttp
import numpy as np
import pytest
import pytest_asyncio

import mars.tensor as mt
from mars.core.options import option_context
from mars.services.errors import DataNotFound, SessionNotFound, TaskCancelled, TaskNotFound
from mars.services.session.mock import MockSessionAPI
from mars.services.task.api import TaskInfo, TaskStatus, TileableResult
from mars.services.web import SyncWebClient, Unauthorized, WebClient, WebConnectionError, start_web_server
from mars.services.web.wire import BINARY, JSON, pack_joined


class Boom(Exception):
    """A user's own exception type, raised inside a chunk function."""


class Bomb:
    def __add__(self, other):
        raise Boom("kaboom in a chunk")

    __radd__ = __add__


class Sleepy:
    """An object whose addition takes a while: a slow chunk function."""

    def __add__(self, other):
        time.sleep(0.1)
        return 1

    __radd__ = __add__


def assemble(result: TileableResult, values: dict) -> np.ndarray:
    """Put a target's chunk values together by their index and the nsplits."""
    offsets = [np.concatenate([[0], np.cumsum(s)]).astype(int) for s in result.nsplits]
    out = np.empty(tuple(int(sum(s)) for s in result.nsplits))
    for c in result.chunks:
        region = tuple(slice(off[i], off[i + 1]) for off, i in zip(offsets, c.index))
        out[region] = values[c.key]
    return out


@pytest_asyncio.fixture
async def web():
    """(server, mock API, WebClient, raw aiohttp session) on 127.0.0.1, all closed afterwards."""
    api = MockSessionAPI()
    server = await start_web_server("127.0.0.1", 0, ["127.0.0.1:1"], lambda sups: api)
    client = WebClient(server.url)
    raw = aiohttp.ClientSession()
    try:
        yield server, api, client, raw
    finally:
        await raw.close()
        await client.close()
        await server.stop()


async def test_a_small_job_is_one_round_trip_with_values_inline(web):
    server, _, client, _ = web
    sid = await client.create_session()
    info = await client.submit_and_wait(sid, [mt.ones((5, 5), chunk_size=3) * 4], wait=30)
    assert info.status is TaskStatus.succeeded and info.progress == 1.0
    (result,) = info.results
    assert result.nsplits == ((3, 2), (3, 2))
    assert [(c.index, c.shape) for c in result.chunks] == [
        ((0, 0), (3, 3)), ((0, 1), (3, 2)), ((1, 0), (2, 3)), ((1, 1), (2, 2))
    ]
    assert set(info.inline_values) == {c.key for c in result.chunks}
    np.testing.assert_array_equal(assemble(result, info.inline_values), np.ones((5, 5)) * 4)
    assert info.end_time is not None and info.end_time >= info.start_time


async def test_big_values_are_fetched_not_inlined(web):
    _, _, client, _ = web
    sid = await client.create_session()
    t = mt.ones((2000, 2000), chunk_size=1000) * mt.arange(2000, chunk_size=1000)
    tid = await client.submit(sid, [t])
    info = await client.get_task(sid, tid, wait=30)
    assert info.status is TaskStatus.succeeded and info.inline_values == {}
    keys = [c.key for c in info.results[0].chunks]
    values = await client.fetch(sid, keys)
    assert all(v.flags.writeable for v in values)
    expected = np.ones((2000, 2000)) * np.arange(2000)
    np.testing.assert_array_equal(assemble(info.results[0], dict(zip(keys, values))), expected)
    # released results are gone; a second reference would have kept them
    await client.release(sid, keys)
    with pytest.raises(DataNotFound, match=keys[0]):
        await client.fetch(sid, keys[:1])


async def test_release_says_which_keys_the_session_did_not_hold(web):
    server, _, client, raw = web
    sid = await client.create_session()
    info = await client.submit_and_wait(sid, [mt.arange(4, chunk_size=2) + 1], wait=30)
    a, b = [c.key for c in info.results[0].chunks]
    async with raw.post(f"{server.url}/api/sessions/{sid}/release", json={"keys": [a, "never-held", a]}) as resp:
        assert await resp.json() == {"released": 1, "not_released": ["never-held", a]}
    assert await client.release(sid, ["never-held", b, b]) == [b]
    with pytest.raises(DataNotFound):
        await client.fetch(sid, [b])


async def test_an_error_in_a_chunk_comes_back_as_itself(web):
    _, _, client, _ = web
    sid = await client.create_session()
    t = mt.tensor(np.array([Bomb(), Bomb()], dtype=object), chunk_size=1) + 1
    info = await client.submit_and_wait(sid, [t], wait=30)
    assert info.status is TaskStatus.failed
    assert isinstance(info.error, Boom) and str(info.error) == "kaboom in a chunk"
    assert "Boom: kaboom in a chunk" in info.error_traceback and "__add__" in info.error_traceback
    assert info.results == [] and info.inline_values == {}


async def test_service_errors_are_404_json_and_raise_their_own_type(web):
    server, _, client, raw = web
    async with raw.get(f"{server.url}/api/sessions/nope/tasks") as resp:
        assert resp.status == 404 and resp.content_type == "application/json"
        err = (await resp.json())["error"]
    assert err["type"] == "SessionNotFound" and "'nope'" in err["message"] and "traceback" in err
    with pytest.raises(SessionNotFound, match="nope"):
        await client.get_task("nope", "t1")
    sid = await client.create_session()
    with pytest.raises(TaskNotFound, match="no-such-task"):
        await client.get_task(sid, "no-such-task")
    with pytest.raises(DataNotFound, match="missing-key"):
        await client.fetch(sid, ["missing-key"])
    async with raw.get(f"{server.url}/api/no/such/route") as resp:
        assert resp.status == 404 and (await resp.json())["error"]["type"] == "NotFound"
    async with raw.put(f"{server.url}/api/sessions") as resp:
        assert resp.status == 405 and (await resp.json())["error"]["type"] == "MethodNotAllowed"


@pytest.mark.parametrize(
    "path, body, needle",
    [
        ("fetch", b'{"keys": [', "not valid JSON"),
        ("fetch", b"[1, 2]", "must be a JSON object"),
        ("fetch", b'{"keys": "abc"}', '"keys"'),
        ("fetch", b"", "needs a JSON object body"),
        ("tasks", b"not a frame at all", "must start with"),
        ("tasks", b"MRS1", "truncated"),
        ("tasks?wait=soon", b"", "wait must be a number"),
        ("tasks?wait=-1", b"", "wait must be a finite number"),
    ],
)
async def test_bad_input_is_400_json_naming_the_problem(web, path, body, needle):
    server, _, client, raw = web
    sid = await client.create_session()
    ctype = BINARY if path.startswith("tasks") else JSON
    async with raw.post(f"{server.url}/api/sessions/{sid}/{path}", data=body, headers={"Content-Type": ctype}) as resp:
        assert resp.status == 400 and resp.content_type == "application/json"
        err = (await resp.json())["error"]
    assert err["type"] == "BadRequest" and needle in err["message"]


async def test_truncated_or_wrong_binary_bodies_are_400(web):
    server, api, client, raw = web
    sid = await client.create_session()
    frame = await pack_joined([(mt.ones(10) + np.arange(10.0)).data])
    url = f"{server.url}/api/sessions/{sid}/tasks"
    for body, needle in [(frame[:-7], "truncated"), (await pack_joined([1, "x"]), "only tileables"),
                         (await pack_joined({"a": 1}), "non-empty list")]:
        async with raw.post(url, data=body, headers={"Content-Type": BINARY}) as resp:
            assert resp.status == 400, await resp.text()
            assert needle in (await resp.json())["error"]["message"]
    assert await api.list_tasks(sid) == []
    async with raw.post(f"{server.url}/api/sessions", json={"session_id": "a/b"}) as resp:
        assert resp.status == 400 and "session_id" in (await resp.json())["error"]["message"]


async def test_json_views_for_people_and_the_dashboard(web):
    server, api, client, raw = web
    sid = await client.create_session("my-session")
    assert sid == "my-session" and await client.has_session(sid) and not await client.has_session("other")
    tid = await client.submit(sid, [mt.ones(4) + 1])
    async with raw.get(f"{server.url}/api/sessions/{sid}/tasks/{tid}?wait=30") as resp:
        body = await resp.json()
    assert body["task_id"] == tid and body["status"] == "succeeded" and body["progress"] == 1.0
    async with raw.get(f"{server.url}/api/sessions/{sid}/tasks") as resp:
        assert [t["task_id"] for t in await resp.json()] == [tid]
    assert [t.task_id for t in await client.list_tasks(sid)] == [tid]
    assert [s["session_id"] for s in await client.list_sessions()] == [sid]
    assert await client.get_supervisors() == ["127.0.0.1:1"]
    (worker,) = await client.get_workers()
    assert worker["address"] == "mock-worker" and worker["state"] == "alive"
    await client.delete_session(sid)
    await client.delete_session(sid)  # as the session manager does: gone is gone
    assert await client.list_sessions() == []
    with pytest.raises(SessionNotFound):
        await client.submit(sid, [mt.ones(2)])


async def test_wait_returns_as_soon_as_the_task_finishes(web):
    _, _, client, _ = web
    sid = await client.create_session()
    t = mt.tensor(np.array([Sleepy()] * 4, dtype=object), chunk_size=1) + 1
    with option_context({"n_threads": 1}):  # the four slow chunks run one after another
        start = time.perf_counter()
        info = await client.submit_and_wait(sid, [t], wait=0.05)
        assert info.status is TaskStatus.running and time.perf_counter() - start < 0.35
        info = await client.get_task(sid, info.task_id, wait=30)
        elapsed = time.perf_counter() - start
    assert info.status is TaskStatus.succeeded and info.n_finished == info.n_subtasks == 4
    assert 0.35 < elapsed < 5
    assert info.inline_values[info.results[0].chunks[0].key].tolist() == [1]


async def test_cancel_stops_a_running_task(web):
    _, _, client, _ = web
    sid = await client.create_session()
    t = mt.tensor(np.array([Sleepy()] * 30, dtype=object), chunk_size=1) + 1
    with option_context({"n_threads": 1}):
        tid = await client.submit(sid, [t])
        await asyncio.sleep(0.15)
        await client.cancel_task(sid, tid)
        info = await client.get_task(sid, tid, wait=30)
    assert info.status is TaskStatus.cancelled and isinstance(info.error, TaskCancelled)
    assert 0 < info.n_finished < 30


@pytest.mark.parametrize("how", ["header", "query", "none", "wrong"])
async def test_a_token_is_required_when_set(how):
    api = MockSessionAPI()
    server = await start_web_server("127.0.0.1", 0, ["s:1"], lambda sups: api, token="s3cret")
    url, headers = f"{server.url}/api/sessions", {}
    if how == "header":
        headers = {"Authorization": "Bearer s3cret"}
    elif how == "query":
        url += "?token=s3cret"
    elif how == "wrong":
        headers = {"Authorization": "Bearer guess"}
    try:
        async with aiohttp.ClientSession() as raw:
            async with raw.post(url, headers=headers, json={}) as resp:
                status, body = resp.status, await resp.json()
    finally:
        await server.stop()
    if how in ("header", "query"):
        assert status == 200 and "session_id" in body and len(await api.list_sessions()) == 1
    else:
        assert status == 401 and body["error"]["type"] == "Unauthorized"
        assert await api.list_sessions() == []  # nothing ran


async def test_clients_carry_the_token_from_the_url_or_argument():
    api = MockSessionAPI()
    server = await start_web_server("127.0.0.1", 0, ["s:1"], lambda sups: api, token="s3cret")
    clients = [WebClient(f"{server.url}/?token=s3cret"), WebClient(server.url, token="s3cret"), WebClient(server.url)]
    try:
        assert await clients[0].create_session("a") == "a"
        assert await clients[1].create_session("b") == "b"
        with pytest.raises(Unauthorized, match="token"):
            await clients[2].create_session("c")
        assert clients[0].url == server.url and "s3cret" not in repr(clients[0])
    finally:
        for c in clients:
            await c.close()
        await server.stop()


async def test_exposed_address_without_token_is_refused_and_bodies_are_capped():
    with pytest.raises(ValueError, match="needs a token"):
        await start_web_server("0.0.0.0", 0, ["s:1"], MockSessionAPI)
    server = await start_web_server("127.0.0.1", 0, ["s:1"], MockSessionAPI, max_body_size=4096)
    client = WebClient(server.url)
    try:
        sid = await client.create_session()
        with pytest.raises(Exception, match="limit of 4096") as info:
            await client.submit(sid, [mt.tensor(np.arange(10_000.0))])
        assert type(info.value).__name__ == "PayloadTooLarge"
    finally:
        await client.close()
        await server.stop()
    with pytest.raises(WebConnectionError, match="cannot reach"):
        async with WebClient(server.url, timeout=2) as gone:
            await gone.list_sessions()


async def test_sync_client_from_a_plain_thread(web):
    server, _, _, _ = web

    def work() -> tuple[TaskInfo, list, float]:
        with SyncWebClient(server.url) as client:
            sid = client.create_session()
            info = client.submit_and_wait(sid, [mt.arange(6, chunk_size=4) * 2], wait=30)
            values = client.fetch(sid, [c.key for c in info.results[0].chunks])
            times = []
            for _ in range(50):
                t0 = time.perf_counter()
                client.has_session(sid)
                times.append(time.perf_counter() - t0)
            return info, values, statistics.median(times)

    info, values, median = await asyncio.to_thread(work)
    assert info.status is TaskStatus.succeeded
    np.testing.assert_array_equal(np.concatenate(values), np.arange(6) * 2)
    assert median < 0.05  # generous: a loopback round trip is about a millisecond
    assert not [t for t in threading.enumerate() if t.name == "mars-web-client"]
