"""Calls on actors: tell, batch, timeouts, cancellation, locking and re-entrancy.

Most tests run three times: on an actor in the caller's own pool (a direct
call), on the same actor reached over TCP, and on an actor in a sub pool
process (Unix socket).
"""

from __future__ import annotations

import asyncio
import time

import pytest

import mars.oscar as mo
from oscar_actors import Gate, Node, Sleeper, Store, eventually, spawn

pytestmark = pytest.mark.asyncio(loop_scope="module")

DEADLOCK_TIMEOUT = 5.0


@pytest.fixture
def pool(two_sub_pools):
    return two_sub_pools


# -- tell ------------------------------------------------------------------------


async def test_tell_returns_before_the_method_runs_and_its_effect_shows_later(pool, where):
    ref = await spawn(pool, Gate, where)
    await asyncio.wait_for(ref.append_when_open.tell("told"), 2)
    assert await ref.get_items() == []  # tell did not wait for the method
    await ref.open()
    await eventually(ref.get_items, lambda items: items == ["told"])


async def test_tells_from_one_caller_run_in_the_order_sent(pool, where):
    ref = await spawn(pool, Gate, where)
    for i in range(30):
        await (ref.append if i % 2 else ref.append_async).tell(i)
    await eventually(ref.get_items, lambda items: len(items) == 30)
    assert await ref.get_items() == list(range(30))


async def test_call_after_tell_sees_the_effect_of_the_tell(pool, where):
    ref = await spawn(pool, Gate, where)
    await ref.append.tell("plain")
    await ref.append_async.tell("async")
    assert await ref.locked_items() == ["plain", "async"]


async def test_failing_tell_leaves_the_actor_usable(pool, where):
    ref = await spawn(pool, Gate, where)
    assert await ref.fail.tell("ignored failure") is None
    await ref.append.tell("after")
    await eventually(ref.get_items, lambda items: items == ["after"])


# -- batch -----------------------------------------------------------------------


async def test_batch_calls_the_batch_implementation_once(pool, where):
    ref = await spawn(pool, Store, where)
    calls = [ref.put.delay("a", 1), ref.put.delay("b", value=2), ref.put.delay("c")]
    assert await ref.put.batch(*calls) == ["a", "b", "c"]
    state = await ref.state()
    assert state == {"data": {"a": 1, "b": 2, "c": None}, "single": 0, "batch": 1}


async def test_extensible_method_called_alone_uses_the_single_form(pool, where):
    ref = await spawn(pool, Store, where)
    assert await ref.put("solo", 9) == "solo"
    assert await ref.state() == {"data": {"solo": 9}, "single": 1, "batch": 0}


async def test_batch_without_batch_implementation_calls_each_in_order(pool, where):
    ref = await spawn(pool, Store, where)
    keys = [f"k{i}" for i in range(5)]
    results = await ref.put_one.batch(*(ref.put_one.delay(k, value=i) for i, k in enumerate(keys)))
    assert results == keys
    state = await ref.state()
    assert list(state["data"].items()) == [(k, i) for i, k in enumerate(keys)]
    assert (state["single"], state["batch"]) == (5, 0)


async def test_batch_rejects_calls_of_another_method(pool, where):
    ref = await spawn(pool, Store, where)
    with pytest.raises(TypeError, match="put_one"):
        await ref.put_one.batch(ref.put.delay("a", 1))


# -- timeouts and cancellation ---------------------------------------------------


async def test_timeout_raises_and_cancels_the_method(pool, where):
    ref = await spawn(pool, Sleeper, where)
    start = time.monotonic()
    with pytest.raises(asyncio.TimeoutError):
        await ref.sleep.options(timeout=0.2)(30, tag="slow")
    assert time.monotonic() - start < 2
    await eventually(ref.stats, lambda s: s["cancelled"] == ["slow"])
    assert await asyncio.wait_for(ref.sleep(0, tag="next"), 2) == "next"  # the lock was released


async def test_call_finishing_within_its_timeout_returns_normally(pool, where):
    ref = await spawn(pool, Sleeper, where)
    assert await ref.sleep.options(timeout=5)(0.01, tag="quick") == "quick"


async def test_cancelling_the_caller_cancels_the_method(pool, where):
    ref = await spawn(pool, Sleeper, where)
    task = asyncio.create_task(ref.sleep(30, tag="long"))
    await eventually(ref.stats, lambda s: s["started"] == ["long"])
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    stats = await eventually(ref.stats, lambda s: s["cancelled"] == ["long"])
    assert stats["finished"] == []


async def test_cancelled_queued_call_never_runs_and_frees_its_place(pool, where):
    ref = await spawn(pool, Sleeper, where)
    first = asyncio.create_task(ref.sleep(0.3, tag="first"))
    await eventually(ref.stats, lambda s: s["started"] == ["first"])
    queued = asyncio.create_task(ref.sleep(0, tag="queued"))
    await asyncio.sleep(0.05)
    queued.cancel()
    assert await first == "first"
    with pytest.raises(asyncio.CancelledError):
        await queued
    assert await asyncio.wait_for(ref.sleep(0, tag="third"), 2) == "third"
    assert (await ref.stats())["finished"] == ["first", "third"]


# -- one call at a time ----------------------------------------------------------


async def test_calls_to_one_actor_never_overlap(pool, where):
    ref = await spawn(pool, Sleeper, where)
    await asyncio.gather(*(ref.sleep(0.05, tag=i) for i in range(4)))
    stats = await ref.stats()
    assert stats["max_active"] == 1 and sorted(stats["finished"]) == [0, 1, 2, 3]


async def test_no_lock_methods_run_concurrently(pool, where):
    ref = await spawn(pool, Sleeper, where)
    await asyncio.gather(*(ref.sleep_unlocked(0.3, tag=i) for i in range(4)))
    assert (await ref.stats())["max_active"] == 4


async def test_calls_from_one_caller_run_in_arrival_order(pool, where):
    ref = await spawn(pool, Sleeper, where)
    await ref.sleep(0)  # connected before the burst
    await asyncio.gather(*(ref.sleep(0.001 * (i % 3), tag=i) for i in range(20)))
    assert (await ref.stats())["finished"][1:] == list(range(20))


async def test_many_concurrent_small_calls_get_their_own_results(pool, where):
    ref = await spawn(pool, Store, where)
    keys = [f"key-{i}" for i in range(500)]
    assert await asyncio.gather(*(ref.put_one(k, i) for i, k in enumerate(keys))) == keys


# -- re-entrancy -----------------------------------------------------------------

PLACEMENTS = {
    "same-pool": (mo.MainPool(), mo.MainPool()),
    "main-and-sub": (mo.MainPool(), mo.ProcessIndex(1)),
    "two-subs": (mo.ProcessIndex(1), mo.ProcessIndex(2)),
}


@pytest.fixture(params=list(PLACEMENTS))
def placement(request) -> tuple[mo.AllocateStrategy, mo.AllocateStrategy]:
    return PLACEMENTS[request.param]


async def _pair(pool, placement) -> tuple[mo.ActorRef, mo.ActorRef]:
    a_at, b_at = placement
    a = await mo.create_actor(Node, address=pool.address, allocate_strategy=a_at)
    b = await mo.create_actor(Node, address=pool.address, allocate_strategy=b_at)
    return a, b


async def test_a_calls_b_calls_a_back_without_deadlock(pool, placement):
    a, b = await _pair(pool, placement)
    result = await asyncio.wait_for(a.bounce(b, 4), DEADLOCK_TIMEOUT)
    assert result == [a.uid, b.uid, a.uid, b.uid, a.uid]


async def test_actor_calls_itself_without_deadlock(pool, where):
    ref = await spawn(pool, Node, where)
    assert await asyncio.wait_for(ref.countdown(5), DEADLOCK_TIMEOUT) == 5


async def test_actor_stays_locked_for_others_while_it_awaits_another_actor(pool, placement):
    a_at, b_at = placement
    a = await mo.create_actor(Node, address=pool.address, allocate_strategy=a_at)
    sleeper = await mo.create_actor(Sleeper, address=pool.address, allocate_strategy=b_at)
    holding = asyncio.create_task(a.hold(sleeper, 0.3))
    await eventually(a.peek_busy, bool)
    assert await asyncio.wait_for(a.is_busy(), DEADLOCK_TIMEOUT) is False  # waited for hold()
    await holding


async def test_unrelated_caller_waits_while_a_re_entrant_chain_runs(pool, placement):
    a, b = await _pair(pool, placement)
    chain = asyncio.create_task(a.bounce(b, 6))
    await asyncio.sleep(0.015)
    assert await asyncio.wait_for(a.is_busy(), DEADLOCK_TIMEOUT) is False
    assert chain.done()  # is_busy() only ran once the whole chain finished
    assert len(await chain) == 7
