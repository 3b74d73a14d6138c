"""Errors raised by actors, and payloads that cannot cross the wire.

Exceptions must arrive as themselves with the remote traceback attached, or
as a RemoteError that says what happened, and never leave the caller hanging.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import traceback

import pytest

import mars.oscar as mo
from mars.serialization import SerializationError
from oscar_actors import AppError, BadReduce, Failer, LoadsBadly, Node, TwoArgError, spawn

pytestmark = pytest.mark.asyncio(loop_scope="module")

REMOTE = ["tcp", "subpool"]
NO_HANG = 5.0  # seconds; every error below arrives well within this


@pytest.fixture
def pool(two_sub_pools):
    return two_sub_pools


@pytest.fixture(params=REMOTE)
def remote(request) -> str:
    return request.param


def shown_to_user(exc: BaseException) -> str:
    """What Python prints for an uncaught ``exc``: traceback, notes, causes."""
    return "".join(traceback.format_exception(exc))


async def raised_by(call) -> BaseException:
    with pytest.raises(BaseException) as info:
        await asyncio.wait_for(call, NO_HANG)
    assert not isinstance(info.value, asyncio.TimeoutError), "the error never arrived"
    return info.value


# -- exceptions that survive the trip ---------------------------------------------


async def test_exception_arrives_with_its_type_args_and_actor_traceback(pool, where):
    ref = await spawn(pool, Failer, where)
    exc = await raised_by(ref.raise_value("bad input"))
    assert type(exc) is ValueError and exc.args == ("bad input", 42)
    assert "raise_value" in shown_to_user(exc)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception notes arrived in Python 3.11")
async def test_remote_traceback_is_a_note_naming_the_actor_method(pool, remote):
    ref = await spawn(pool, Failer, remote)
    exc = await raised_by(ref.raise_value("noted"))
    notes = getattr(exc, "__notes__", [])
    assert any("raise_value" in note and "ValueError" in note for note in notes), notes


async def test_user_exception_class_and_attributes_survive(pool, where):
    ref = await spawn(pool, Failer, where)
    exc = await raised_by(ref.raise_app_error())
    assert type(exc) is AppError and exc.args == ("app failed", {"code": 7})


async def test_plain_method_exception_arrives(pool, where):
    ref = await spawn(pool, Failer, where)
    exc = await raised_by(ref.raise_key_plain())
    assert type(exc) is KeyError and exc.args == ("plain-method-key",)


async def test_actor_serves_calls_after_raising(pool, where):
    ref = await spawn(pool, Failer, where)
    for _ in range(3):
        await raised_by(ref.raise_value("again"))
    assert await ref.echo("still alive") == "still alive"


async def test_error_passing_through_two_actors_shows_both(pool):
    a = await mo.create_actor(Node, address=pool.address, allocate_strategy=mo.ProcessIndex(1))
    b = await mo.create_actor(Failer, address=pool.address, allocate_strategy=mo.ProcessIndex(2))
    exc = await raised_by(a.call_failing(b))
    assert type(exc) is ValueError and exc.args == ("from peer", 42)
    text = shown_to_user(exc)
    assert "raise_value" in text and "call_failing" in text


async def test_missing_method_raises_attribute_error_naming_it(pool, where):
    ref = await spawn(pool, Failer, where)
    exc = await raised_by(ref.no_such_method(1))
    assert isinstance(exc, AttributeError) and "no_such_method" in str(exc)


async def test_calling_a_missing_actor_raises_actor_not_exist(pool, where):
    ref = await spawn(pool, Failer, where)
    ghost = mo.ActorRef(ref.address, "ghost-uid")
    exc = await raised_by(ghost.echo(1))
    assert isinstance(exc, mo.ActorNotExist) and "ghost-uid" in str(exc)


async def test_calling_a_destroyed_actor_raises_actor_not_exist(pool, where):
    ref = await spawn(pool, Failer, where)
    await mo.destroy_actor(ref)
    assert not await mo.has_actor(ref)
    exc = await raised_by(ref.echo(1))
    assert isinstance(exc, mo.ActorNotExist)


# -- exceptions that cannot make the trip as themselves -----------------------------


async def test_exception_that_cannot_be_unpickled_arrives_as_remote_error(pool, remote):
    ref = await spawn(pool, Failer, remote)
    exc = await raised_by(ref.raise_two_arg())
    assert isinstance(exc, mo.RemoteError)
    assert "TwoArgError" in str(exc) and "first" in str(exc)
    assert "raise_two_arg" in shown_to_user(exc)


async def test_exception_holding_an_unpicklable_value_arrives_as_remote_error(pool, remote):
    ref = await spawn(pool, Failer, remote)
    exc = await raised_by(ref.raise_lock_holding())
    assert isinstance(exc, mo.RemoteError)
    assert "LockHoldingError" in str(exc) and "holding a lock" in str(exc)


async def test_in_process_exceptions_are_not_pickled_at_all(pool):
    ref = await spawn(pool, Failer, "local")
    exc = await raised_by(ref.raise_two_arg())
    assert type(exc) is TwoArgError and exc.b == "second"


# -- results and arguments that cannot be pickled -----------------------------------


async def test_unpicklable_result_arrives_as_serialization_error(pool, remote):
    ref = await spawn(pool, Failer, remote)
    exc = await raised_by(ref.return_lock())
    assert isinstance(exc, SerializationError)
    assert "return_lock" in str(exc) and "lock" in str(exc).replace("return_lock", "")
    assert await ref.echo("usable") == "usable"


async def test_result_that_cannot_be_unpickled_arrives_as_serialization_error(pool, remote):
    ref = await spawn(pool, Failer, remote)
    exc = await raised_by(ref.return_loads_badly())
    assert isinstance(exc, SerializationError) and "refuses to be unpickled" in str(exc)


async def test_unpicklable_argument_raises_at_the_caller(pool, remote):
    ref = await spawn(pool, Failer, remote)
    exc = await raised_by(ref.echo({"lock": threading.Lock()}))
    assert isinstance(exc, SerializationError) and "lock" in str(exc)
    assert await ref.echo("next call works") == "next call works"


async def test_argument_that_cannot_be_unpickled_fails_the_call(pool, remote):
    ref = await spawn(pool, Failer, remote)
    exc = await raised_by(ref.echo(LoadsBadly()))
    assert isinstance(exc, SerializationError) and "refuses to be unpickled" in str(exc)
    assert await ref.echo(1) == 1


async def test_unpicklable_argument_to_tell_raises_at_the_caller(pool, remote):
    ref = await spawn(pool, Failer, remote)
    with pytest.raises(SerializationError):
        await ref.echo.tell(threading.Lock())


async def test_lambdas_travel_as_arguments_and_results(pool, remote):
    ref = await spawn(pool, Failer, remote)
    offset = 5
    func = await ref.echo(lambda x: x + offset)
    assert func(1) == 6


async def test_result_whose_pickling_raises_value_error_does_not_hang(pool, remote):
    ref = await spawn(pool, Failer, remote)
    exc = await raised_by(ref.return_bad_reduce())
    assert isinstance(exc, SerializationError)
    assert "BadReduce" in str(exc) and "return_bad_reduce" in str(exc)


async def test_argument_whose_pickling_raises_fails_at_the_caller(pool, remote):
    ref = await spawn(pool, Failer, remote)
    exc = await raised_by(ref.echo(BadReduce()))
    assert isinstance(exc, SerializationError) and "BadReduce" in str(exc)
    assert await ref.echo(2) == 2


async def test_unpicklable_result_error_does_not_repeat_the_arguments(pool, remote):
    ref = await spawn(pool, Failer, remote)
    big_argument = list(range(20_000))
    exc = await raised_by(ref.return_lock_after(big_argument))
    assert isinstance(exc, SerializationError) and "return_lock_after" in str(exc)
    assert len(str(exc)) < 2_000
