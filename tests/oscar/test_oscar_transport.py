"""Pools in one process reached over sockets: TCP (``tcp://``) and the Unix
socket (from another event loop), with payloads large and small."""

from __future__ import annotations

import asyncio
import socket
import time

import numpy as np
import pandas as pd
import psutil
import pytest

import mars.oscar as mo
from oscar_actors import Failer, Sleeper, Store

BIG = 8 * 2**20  # float64 items: 64 MiB


@pytest.fixture
async def pools():
    a = await mo.create_actor_pool("127.0.0.1", n_process=0)
    b = await mo.create_actor_pool("127.0.0.1", n_process=0)
    yield a, b
    await a.stop()
    await b.stop()


def tcp(ref: mo.ActorRef) -> mo.ActorRef:
    return mo.ActorRef("tcp://" + ref.address, ref.uid)


async def from_other_loop(func, *args):
    """Run ``func(*args)`` on a fresh event loop in another thread: no pool of
    this process belongs to that loop, so its calls go through sockets."""

    async def run():
        try:
            return await func(*args)
        finally:
            mo.close_connections()

    return await asyncio.to_thread(lambda: asyncio.run(run()))


def tcp_connections_to(address: str) -> int:
    port = int(address.rsplit(":", 1)[1])
    return sum(
        1
        for c in psutil.Process().net_connections(kind="tcp")
        if c.raddr and c.raddr.port == port and c.status == psutil.CONN_ESTABLISHED
    )


async def test_actors_in_two_pools_of_one_process_call_each_other(pools):
    a, b = pools
    store = await mo.create_actor(Store, address=b.address)
    caller = await mo.create_actor(Failer, address=a.address)
    assert await caller.echo(store) == store  # refs travel as values
    assert await store.put_one("k", 1) == "k"
    assert (await tcp(store).state())["data"] == {"k": 1}


async def test_tcp_address_forces_a_tcp_connection(pools):
    _, b = pools
    ref = tcp(await mo.create_actor(Failer, address=b.address))
    before = tcp_connections_to(b.address)
    assert await ref.echo("over tcp") == "over tcp"
    assert tcp_connections_to(b.address) > before


async def test_caller_on_another_loop_uses_the_unix_socket(pools):
    _, b = pools
    ref = await mo.create_actor(Failer, address=b.address)

    async def call_and_count():
        return await ref.echo("via unix"), tcp_connections_to(b.address)

    before = tcp_connections_to(b.address)
    assert await from_other_loop(call_and_count) == ("via unix", before)


async def test_socket_calls_copy_arguments_direct_calls_do_not(pools):
    _, b = pools
    ref = await mo.create_actor(Failer, address=b.address)
    payload = {"list": [1, 2]}
    assert await ref.echo(payload) is payload
    returned = await tcp(ref).echo(payload)
    assert returned == payload and returned is not payload


@pytest.mark.parametrize("route", ["tcp", "unix"])
async def test_64_mib_array_round_trips_intact(pools, route):
    _, b = pools
    ref = await mo.create_actor(Failer, address=b.address)
    array = np.random.default_rng(0).random(BIG)
    if route == "tcp":
        result = await tcp(ref).echo(array)
    else:
        result = await from_other_loop(ref.echo, array)
    assert result.dtype == array.dtype and result.shape == array.shape
    assert np.array_equal(result, array)


@pytest.mark.parametrize(
    "array",
    [
        np.asfortranarray(np.arange(600_000, dtype=np.int32).reshape(600, 1000)),
        np.arange(2_000_000, dtype=np.int64)[::3],  # not contiguous
        np.array(3.5),
        np.empty((0, 7), dtype=np.float32),
        np.array([b"ab", b"cde"] * 50_000),
        np.array([("x", 1.5)] * 1000, dtype=[("name", "U4"), ("value", "f8")]),
    ],
    ids=["fortran", "strided", "0-d", "empty", "bytes", "structured"],
)
async def test_arrays_of_every_layout_round_trip_over_tcp(pools, array):
    _, b = pools
    ref = tcp(await mo.create_actor(Failer, address=b.address))
    result = await ref.echo(array)
    assert result.dtype == array.dtype and result.shape == array.shape
    np.testing.assert_array_equal(result, array)
    if array.flags.f_contiguous and not array.flags.c_contiguous:
        assert result.flags.f_contiguous  # Fortran order is kept


async def test_pandas_frames_and_series_round_trip_over_tcp(pools):
    _, b = pools
    ref = tcp(await mo.create_actor(Failer, address=b.address))
    n = 200_000
    frame = pd.DataFrame(
        {
            "i": np.arange(n),
            "f": np.linspace(0, 1, n),
            "s": pd.Series([f"row{i % 100}" for i in range(n)], dtype=object),
            "c": pd.Categorical(["a", "b", "c", "d"] * (n // 4)),
            "t": pd.date_range("2024-01-01", periods=n, freq="s", tz="UTC"),
        },
        index=pd.RangeIndex(n, 2 * n),
    )
    pd.testing.assert_frame_equal(await ref.echo(frame), frame)
    series = pd.Series(np.arange(10.0), index=list("abcdefghij"), name="values")
    pd.testing.assert_series_equal(await ref.echo(series), series)


async def test_large_python_containers_round_trip(pools):
    _, b = pools
    ref = tcp(await mo.create_actor(Failer, address=b.address))
    big_list = [(i, str(i)) for i in range(300_000)]  # pickles to several MiB in-band
    assert await ref.echo(big_list) == big_list
    nested = {"arrays": [np.arange(i) for i in range(50)], "bytes": b"x" * 100_000, "set": {1, 2}}
    result = await ref.echo(nested)
    np.testing.assert_equal(result, nested)


async def test_concurrent_large_and_small_calls_do_not_mix_up(pools):
    _, b = pools
    ref = tcp(await mo.create_actor(Failer, address=b.address, uid="mixer"))
    arrays = [np.full(2**20, i, dtype=np.int64) for i in range(4)]  # 8 MiB each
    calls = [ref.echo(x) for x in arrays] + [ref.echo(i) for i in range(200)]
    results = await asyncio.gather(*calls)
    for i, result in enumerate(results[:4]):
        assert np.array_equal(result, arrays[i])
    assert results[4:] == list(range(200))


async def test_pending_call_fails_when_its_pool_stops(pools):
    _, b = pools
    ref = tcp(await mo.create_actor(Sleeper, address=b.address))
    task = asyncio.create_task(ref.sleep(30))
    await asyncio.sleep(0.1)
    start = time.monotonic()
    await b.stop()
    with pytest.raises(mo.ServerClosed):
        await asyncio.wait_for(task, 5)
    assert time.monotonic() - start < 3


async def test_stopped_pool_is_unreachable(pools):
    _, b = pools
    ref = tcp(await mo.create_actor(Failer, address=b.address))
    assert await ref.echo(1) == 1
    await b.stop()
    with pytest.raises(mo.ServerClosed):
        await asyncio.wait_for(ref.echo(2), 5)


async def test_calling_an_address_where_nothing_listens_raises_server_closed():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ref = mo.ActorRef(f"127.0.0.1:{port}", "nobody")
    with pytest.raises(mo.ServerClosed, match=str(port)):
        await asyncio.wait_for(ref.echo(1), 5)
    with pytest.raises(mo.ServerClosed):
        await asyncio.wait_for(mo.has_actor(tcp(ref)), 5)


async def test_lookups_and_destroy_work_over_sockets(pools):
    _, b = pools
    ref = await mo.create_actor(Failer, uid="remote", address=b.address)
    remote = tcp(ref)
    assert await mo.has_actor(remote)
    assert await mo.actor_ref(remote.address, "remote") == remote
    with pytest.raises(mo.ActorNotExist):
        await mo.actor_ref(remote.address, "absent")
    await mo.destroy_actor(remote)
    assert not await mo.has_actor(remote)


async def test_actor_can_be_created_over_sockets(pools):
    _, b = pools
    ref = await mo.create_actor(Store, uid="made-remotely", address="tcp://" + b.address)
    assert await tcp(ref).put_one("a", 1) == "a"
    with pytest.raises(mo.ActorAlreadyExist):
        await mo.create_actor(Store, uid="made-remotely", address="tcp://" + b.address)


async def test_a_caller_cancelled_while_connecting_leaves_the_others_waiting_for_it_connected(pool, monkeypatch):
    """A call cancelled while it opens a connection (its own caller went away) must not cancel the calls
    of other coroutines waiting for that same connection: they connect by themselves."""
    from mars.oscar import context as context_module

    real = context_module.open_connection

    async def slow(address, factory, **kw):
        await asyncio.sleep(0.2)
        return await real(address, factory, **kw)

    monkeypatch.setattr(context_module, "open_connection", slow)
    ctx = context_module.CallerContext(asyncio.get_running_loop())
    first = asyncio.ensure_future(ctx.connection(pool.external_address))
    await asyncio.sleep(0.05)
    second = asyncio.ensure_future(ctx.connection(pool.external_address))
    await asyncio.sleep(0.05)
    first.cancel()
    conn = await asyncio.wait_for(second, 5)
    assert first.cancelled() and not conn.closed
    conn.close()
