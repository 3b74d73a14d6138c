"""Real sub pool processes: environments, and where allocation strategies put actors."""

from __future__ import annotations

import asyncio
import os
import uuid

import psutil
import pytest
import pytest_asyncio

import mars.oscar as mo
from oscar_actors import FailsToStart, Info, running

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pool():
    pool = await mo.create_actor_pool(
        "127.0.0.1", n_process=2, labels=["main", "cpu-0", "io-0"], envs=[{"X": "1"}, {"X": "2"}]
    )
    yield pool
    await pool.stop()


async def where(pool, strategy, *args) -> tuple[str | None, int]:
    """(X in the actor's environment, its pid) for an actor placed by ``strategy``."""
    ref = await mo.create_actor(Info, *args, address=pool.address, allocate_strategy=strategy)
    return await ref.where()


def mark() -> str:
    return uuid.uuid4().hex


async def test_each_sub_pool_process_sees_its_own_environment(pool):
    x1, pid1 = await where(pool, mo.ProcessIndex(1))
    x2, pid2 = await where(pool, mo.ProcessIndex(2))
    assert (x1, x2) == ("1", "2")
    assert len({pid1, pid2, os.getpid()}) == 3
    assert {pid1, pid2} <= {p.pid for p in psutil.Process().children()}
    assert os.environ.get("X") not in ("1", "2")  # the parent's environment is untouched


async def test_sub_pools_are_listed_with_label_address_and_pid(pool):
    assert [s.label for s in pool.sub_pools] == ["cpu-0", "io-0"]
    ref = await mo.create_actor(Info, address=pool.address, allocate_strategy=mo.ProcessIndex(2))
    assert ref.address == pool.sub_pools[1].address != pool.address
    assert (await ref.where())[1] == pool.sub_pools[1].pid


@pytest.mark.parametrize("strategy", [None, mo.MainPool(), mo.ProcessIndex(0)])
async def test_main_pool_strategies_keep_the_actor_in_this_process(pool, strategy):
    ref = await mo.create_actor(Info, address=pool.address, allocate_strategy=strategy)
    assert ref.address == pool.address
    assert (await ref.where())[1] == os.getpid()


async def test_process_index_out_of_range_raises_no_matching_pool(pool):
    with pytest.raises(mo.NoMatchingPool, match="3"):
        await mo.create_actor(Info, address=pool.address, allocate_strategy=mo.ProcessIndex(3))


async def test_random_sub_pool_uses_every_sub_pool_and_never_the_main_one(pool):
    placed = [await where(pool, mo.RandomSubPool()) for _ in range(24)]
    assert {x for x, _ in placed} == {"1", "2"}
    assert os.getpid() not in {pid for _, pid in placed}


async def test_random_label_places_only_on_that_label(pool):
    placed = [await where(pool, mo.RandomLabel("io-0")) for _ in range(6)]
    assert {x for x, _ in placed} == {"2"}


@pytest.mark.parametrize(
    "strategy", [mo.RandomLabel("gpu-0"), mo.IdleLabel("gpu-0", "m"), mo.LeastLoaded("gpu-0")]
)
async def test_unknown_label_raises_no_matching_pool_listing_the_labels(pool, strategy):
    with pytest.raises(mo.NoMatchingPool, match="cpu-0"):
        await mo.create_actor(Info, address=pool.address, allocate_strategy=strategy)


async def test_idle_label_puts_one_actor_per_mark_and_frees_the_slot_on_destroy(pool):
    runner = mark()
    first = await mo.create_actor(Info, address=pool.address, allocate_strategy=mo.IdleLabel("cpu-0", runner))
    assert (await first.where())[0] == "1"
    with pytest.raises(mo.NoMatchingPool):
        await mo.create_actor(Info, address=pool.address, allocate_strategy=mo.IdleLabel("cpu-0", runner))
    assert await where(pool, mo.IdleLabel("cpu-0", mark())) is not None  # another mark fits
    await mo.destroy_actor(first)
    assert (await where(pool, mo.IdleLabel("cpu-0", runner)))[0] == "1"  # the slot is free at once


async def test_idle_label_slot_is_free_as_soon_as_destroy_returns(pool):
    # the sub pool must tell the main pool before destroy_actor() returns, even when
    # that needs a new connection (the case that once raced)
    helper = await mo.create_actor(Info, address=pool.address, allocate_strategy=mo.ProcessIndex(2))
    for _ in range(20):
        strategy = mo.IdleLabel("io-0", mark())
        ref = await mo.create_actor(Info, address=pool.address, allocate_strategy=strategy)
        await helper.drop_connections()  # the notice must open a new connection, as on first use
        await mo.destroy_actor(ref)
        await mo.create_actor(Info, address=pool.address, allocate_strategy=strategy)


async def test_failed_duplicate_create_keeps_the_live_actor_s_idle_mark(pool):
    solo, uid = mark(), mark()
    await mo.create_actor(Info, uid=uid, address=pool.address, allocate_strategy=mo.IdleLabel("io-0", solo))
    with pytest.raises(mo.ActorAlreadyExist):
        await mo.create_actor(Info, uid=uid, address=pool.address, allocate_strategy=mo.ProcessIndex(2))
    with pytest.raises(mo.NoMatchingPool):
        await mo.create_actor(Info, address=pool.address, allocate_strategy=mo.IdleLabel("io-0", solo))


async def test_failed_creation_does_not_take_an_idle_slot(pool):
    slot = mark()
    with pytest.raises(RuntimeError, match="refusing to start"):
        await mo.create_actor(FailsToStart, address=pool.address, allocate_strategy=mo.IdleLabel("io-0", slot))
    assert (await where(pool, mo.IdleLabel("io-0", slot)))[0] == "2"


async def test_least_loaded_picks_the_emptier_sub_pool():
    async with await mo.create_actor_pool(
        "127.0.0.1", n_process=2, labels=["cpu-0", "cpu-1"], envs=[{"X": "1"}, {"X": "2"}]
    ) as fresh:
        for _ in range(2):
            await where(fresh, mo.ProcessIndex(1))
        placed = [(await where(fresh, mo.LeastLoaded()))[0] for _ in range(2)]
        assert placed == ["2", "2"]
        assert (await where(fresh, mo.LeastLoaded("cpu-0")))[0] == "1"  # the label wins over load


async def test_actor_in_a_sub_pool_creates_actors_through_the_main_pool(pool):
    maker = await mo.create_actor(Info, address=pool.address, allocate_strategy=mo.ProcessIndex(1))
    made = await maker.create_elsewhere(pool.address, mo.ProcessIndex(2))
    assert (await made.where())[0] == "2" and await made.get_tag() == "made by actor"
    in_main = await maker.create_elsewhere(pool.address, mo.MainPool())
    assert (await in_main.where())[1] == os.getpid()


async def test_a_sub_pool_address_takes_actors_but_refuses_strategies(pool):
    sub_address = pool.sub_pools[0].address
    ref = await mo.create_actor(Info, address=sub_address)
    assert ref.address == sub_address and (await ref.where())[0] == "1"
    with pytest.raises(mo.NoMatchingPool):
        await mo.create_actor(Info, address=sub_address, allocate_strategy=mo.RandomSubPool())


async def test_concurrent_creations_all_land(pool):
    refs = await asyncio.gather(
        *(mo.create_actor(Info, i, address=pool.address, allocate_strategy=mo.RandomSubPool()) for i in range(20))
    )
    assert [await r.get_tag() for r in refs] == list(range(20))


# -- a main pool in a process of its own ---------------------------------------------


async def test_pool_in_its_own_process_places_actors_and_stops_cleanly():
    handle = await mo.create_actor_pool("127.0.0.1", n_process=1, own_process=True, envs=[{"X": "sub"}])
    try:
        in_main = await mo.create_actor(Info, address=handle.address)
        in_sub = await mo.create_actor(Info, address=handle.address, allocate_strategy=mo.ProcessIndex(1))
        assert (await in_main.where())[1] == handle.pid != os.getpid()
        x, sub_pid = await in_sub.where()
        assert x == "sub" and in_sub.address in handle.sub_addresses and sub_pid != handle.pid
    finally:
        await handle.stop()
    assert not psutil.pid_exists(handle.pid)
    orphaned = running(sub_pid)
    if orphaned:  # not our child: the leak check would not see it
        psutil.Process(sub_pid).kill()
    assert not orphaned, "the sub pool outlived its main pool's stop()"


async def test_own_process_pool_rejects_process_callbacks():
    with pytest.raises(ValueError, match="on_process_down"):
        await mo.create_actor_pool(n_process=1, own_process=True, on_process_down=print)
