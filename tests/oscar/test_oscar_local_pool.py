"""Actors in an in-process pool (n_process=0): life cycle, lookups, and misuse."""

from __future__ import annotations

import asyncio
import logging
import traceback

import pytest

import mars.oscar as mo
from oscar_actors import Failer, FailsToStart, Gate, Sleeper, eventually


class Counter(mo.Actor):
    def __init__(self, start: int = 0, events: list | None = None) -> None:
        self.value = start
        self.events = events if events is not None else []
        self.created_seen = False

    async def __post_create__(self) -> None:
        self.created_seen = True
        self.events.append(("post_create", self.uid, self.address))

    async def __pre_destroy__(self) -> None:
        self.events.append(("pre_destroy", self.uid))

    async def add(self, k: int) -> int:
        await asyncio.sleep(0)
        self.value += k
        return self.value

    def get(self) -> int:
        return self.value

    def post_create_ran(self) -> bool:
        return self.created_seen

    def not_a_method_but(self) -> str:
        return "callable"

    attribute = 5


async def test_create_actor_with_uid_and_call_async_and_plain_methods(pool):
    ref = await mo.create_actor(Counter, 10, uid="counter", address=pool.address)
    assert ref == mo.ActorRef(pool.address, "counter")
    assert await ref.add(5) == 15
    assert await ref.add(k=1) == 16
    assert await ref.get() == 16


async def test_auto_uids_are_distinct_and_name_the_class(pool):
    refs = [await mo.create_actor(Counter, i, address=pool.address) for i in range(3)]
    assert len({r.uid for r in refs}) == 3
    assert all("Counter" in r.uid for r in refs)
    assert [await r.get() for r in refs] == [0, 1, 2]


async def test_duplicate_uid_raises_and_keeps_the_first_actor(pool):
    ref = await mo.create_actor(Counter, 1, uid="dup", address=pool.address)
    with pytest.raises(mo.ActorAlreadyExist, match="dup"):
        await mo.create_actor(Counter, 2, uid="dup", address=pool.address)
    assert await ref.get() == 1


async def test_actor_ref_finds_existing_actor_and_rejects_missing_uid(pool):
    await mo.create_actor(Counter, 3, uid="found", address=pool.address)
    ref = await mo.actor_ref(pool.address, "found")
    assert await ref.get() == 3
    with pytest.raises(mo.ActorNotExist, match="missing-uid"):
        await mo.actor_ref(pool.address, "missing-uid")


async def test_has_actor_tracks_creation_and_destruction(pool):
    ref = mo.ActorRef(pool.address, "c")
    assert not await mo.has_actor(ref)
    await mo.create_actor(Counter, uid="c", address=pool.address)
    assert await mo.has_actor(ref)
    await mo.destroy_actor(ref)
    assert not await mo.has_actor(ref)


async def test_hooks_run_on_create_and_destroy(pool):
    events: list = []
    ref = await mo.create_actor(Counter, events=events, uid="hooked", address=pool.address)
    assert events == [("post_create", "hooked", pool.address)]
    assert await ref.post_create_ran()
    await mo.destroy_actor(ref)
    assert events[-1] == ("pre_destroy", "hooked")


async def test_stopping_the_pool_destroys_its_actors():
    events: list = []
    async with await mo.create_actor_pool("127.0.0.1") as pool:
        await mo.create_actor(Counter, events=events, uid="a", address=pool.address)
        await mo.create_actor(Counter, events=events, uid="b", address=pool.address)
    assert sorted(e for e in events if e[0] == "pre_destroy") == [("pre_destroy", "a"), ("pre_destroy", "b")]


async def test_failing_post_create_raises_and_leaves_no_actor(pool):
    with pytest.raises(RuntimeError, match="refusing to start"):
        await mo.create_actor(FailsToStart, uid="broken", address=pool.address)
    assert not await mo.has_actor(mo.ActorRef(pool.address, "broken"))
    ref = await mo.create_actor(Counter, uid="broken", address=pool.address)  # the uid is free again
    assert await ref.get() == 0


async def test_missing_method_raises_attribute_error_naming_it(pool):
    ref = await mo.create_actor(Counter, address=pool.address)
    with pytest.raises(AttributeError, match="no_such_method"):
        await ref.no_such_method()
    with pytest.raises(AttributeError, match="attribute"):
        await ref.attribute()  # an attribute that is not callable
    assert await ref.not_a_method_but() == "callable"


async def test_private_dunder_methods_cannot_be_called(pool):
    ref = await mo.create_actor(Counter, address=pool.address)
    with pytest.raises(AttributeError):
        await getattr(ref, "__pre_destroy__")()


async def test_calling_a_destroyed_actor_raises_actor_not_exist(pool):
    ref = await mo.create_actor(Counter, uid="gone", address=pool.address)
    await mo.destroy_actor(ref)
    with pytest.raises(mo.ActorNotExist, match="gone"):
        await ref.get()
    with pytest.raises(mo.ActorNotExist):
        await mo.destroy_actor(ref)


async def test_tell_to_a_missing_actor_raises_at_the_caller(pool):
    with pytest.raises(mo.ActorNotExist):
        await mo.ActorRef(pool.address, "nobody").get.tell()


async def test_tell_failure_is_logged_not_raised(pool, caplog):
    ref = await mo.create_actor(Gate, address=pool.address)
    with caplog.at_level(logging.ERROR):
        await ref.fail.tell("told to fail")
        await eventually(lambda: asyncio.sleep(0, caplog.text), lambda text: "told to fail" in text)
    assert await ref.get_items() == []


async def test_in_process_exception_keeps_its_traceback(pool):
    ref = await mo.create_actor(Failer, address=pool.address)
    with pytest.raises(ValueError) as info:
        await ref.raise_value("direct")
    assert info.value.args == ("direct", 42)
    frames = [frame.name for frame in traceback.extract_tb(info.value.__traceback__)]
    assert "raise_value" in frames


async def test_actor_knows_its_address_and_uid(pool):
    class WhoAmI(mo.Actor):
        def me(self):
            return self.address, self.uid, self.ref()

    ref = await mo.create_actor(WhoAmI, uid="me", address=pool.address)
    assert await ref.me() == (pool.address, "me", ref)


async def test_pools_get_distinct_addresses_on_port_zero():
    async with await mo.create_actor_pool("127.0.0.1") as a, await mo.create_actor_pool("127.0.0.1:0") as b:
        assert a.address != b.address
        assert a.address.startswith("127.0.0.1:") and not a.address.endswith(":0")


async def test_a_pool_cannot_bind_a_port_in_use(pool):
    with pytest.raises(OSError, match=pool.address.rsplit(":", 1)[1]):
        await mo.create_actor_pool(pool.address)


# -- misuse is reported with the values that broke the rule ---------------------


async def test_create_actor_rejects_non_actor_classes(pool):
    with pytest.raises(TypeError, match="Actor"):
        await mo.create_actor(dict, address=pool.address)


async def test_create_actor_rejects_a_strategy_of_the_wrong_type(pool):
    with pytest.raises(TypeError, match="allocate_strategy"):
        await mo.create_actor(Counter, address=pool.address, allocate_strategy="main")


@pytest.mark.parametrize(
    "strategy", [mo.ProcessIndex(1), mo.RandomSubPool(), mo.RandomLabel("cpu-0"), mo.LeastLoaded()]
)
async def test_strategies_needing_a_sub_pool_fail_without_one(pool, strategy):
    with pytest.raises(mo.NoMatchingPool):
        await mo.create_actor(Counter, address=pool.address, allocate_strategy=strategy)


async def test_main_pool_strategies_place_in_a_pool_without_sub_pools(pool):
    for strategy in (mo.MainPool(), mo.ProcessIndex(0)):
        ref = await mo.create_actor(Counter, 7, address=pool.address, allocate_strategy=strategy)
        assert ref.address == pool.address and await ref.get() == 7


async def test_timeout_must_be_positive(pool):
    ref = await mo.create_actor(Sleeper, address=pool.address)
    for bad in (0, -1):
        with pytest.raises(ValueError, match="positive"):
            ref.sleep.options(timeout=bad)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_process": -1}, "n_process"),
        ({"n_process": 1, "labels": ["a", "b", "c"]}, "labels"),
        ({"n_process": 1, "envs": [{}, {}]}, "envs"),
    ],
)
async def test_bad_pool_arguments_raise_value_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        await mo.create_actor_pool("127.0.0.1", **kwargs)


def test_run_executes_a_coroutine_on_a_fresh_loop():
    async def main():
        async with await mo.create_actor_pool("127.0.0.1") as pool:
            ref = await mo.create_actor(Counter, 41, address=pool.address)
            return await ref.add(1)

    assert mo.run(main()) == 42
    assert mo.run(main(), use_uvloop=False) == 42


def test_framework_errors_share_one_root():
    errors = [mo.ActorAlreadyExist, mo.ActorNotExist, mo.NoMatchingPool, mo.PoolStartError,
              mo.RemoteError, mo.ServerClosed]
    assert all(issubclass(e, mo.OscarError) for e in errors)
    assert issubclass(mo.ActorNotExist, LookupError) and issubclass(mo.ServerClosed, ConnectionError)
