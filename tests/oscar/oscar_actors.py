"""Actors and helpers shared by the oscar tests.

Everything here lives at module level: sub pool processes are started with
``spawn`` and unpickle actor classes and exceptions by reference.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import psutil

import mars.oscar as mo

# -- processes -----------------------------------------------------------------


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie is not)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def live_children() -> list[psutil.Process]:
    """Running child processes of this process, leaving out the multiprocessing
    resource tracker, which lives as long as this process does."""
    children = []
    for child in psutil.Process().children(recursive=True):
        try:
            if not running(child.pid) or "resource_tracker" in " ".join(child.cmdline()):
                continue
        except psutil.Error:  # exited while we looked
            continue
        children.append(child)
    return children


# -- waiting -------------------------------------------------------------------


async def eventually(
    probe: Callable[[], Awaitable[Any]], check: Callable[[Any], bool], timeout: float = 5.0
) -> Any:
    """Await ``probe()`` until ``check`` accepts its value; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = await probe()
        if check(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s; last value: {value!r}")
        await asyncio.sleep(0.02)


# -- placing actors ------------------------------------------------------------

# "local": in the caller's own pool, called directly; "tcp": the same pool reached
# over a TCP socket; "subpool": a sub pool process, reached over its Unix socket.
WHERE = ["local", "tcp", "subpool"]


async def spawn(pool: mo.MainActorPool, cls: type, where: str, *args: Any, **kwargs: Any) -> mo.ActorRef:
    """Create a ``cls`` actor placed as ``where`` says; returns the ref to call it through."""
    strategy = mo.ProcessIndex(1) if where == "subpool" else mo.MainPool()
    ref = await mo.create_actor(cls, *args, address=pool.address, allocate_strategy=strategy, **kwargs)
    if where == "tcp":
        return mo.ActorRef("tcp://" + ref.address, ref.uid)
    return ref


# -- actors --------------------------------------------------------------------


class Sleeper(mo.Actor):
    """Records what its calls did: started, finished, cancelled, overlap."""

    def __init__(self) -> None:
        self.started: list[Any] = []
        self.finished: list[Any] = []
        self.cancelled: list[Any] = []
        self.active = 0
        self.max_active = 0

    async def sleep(self, seconds: float, tag: Any = None) -> Any:
        self.started.append(tag)
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            self.cancelled.append(tag)
            raise
        finally:
            self.active -= 1
        self.finished.append(tag)
        return tag

    @mo.no_lock
    async def sleep_unlocked(self, seconds: float, tag: Any = None) -> Any:
        return await self.sleep(seconds, tag)

    @mo.no_lock
    def stats(self) -> dict[str, Any]:
        return {
            "started": list(self.started),
            "finished": list(self.finished),
            "cancelled": list(self.cancelled),
            "max_active": self.max_active,
        }

    def pid(self) -> int:
        return os.getpid()


class Gate(mo.Actor):
    """A method that blocks until released, and an append log."""

    def __init__(self) -> None:
        self.opened = asyncio.Event()
        self.items: list[Any] = []

    async def append_when_open(self, item: Any) -> None:
        await self.opened.wait()
        self.items.append(item)

    def append(self, item: Any) -> None:
        self.items.append(item)

    async def append_async(self, item: Any) -> None:
        await asyncio.sleep(0)
        self.items.append(item)

    def fail(self, message: str) -> None:
        raise ValueError(message)

    @mo.no_lock
    def open(self) -> None:
        self.opened.set()

    @mo.no_lock
    def get_items(self) -> list[Any]:
        return list(self.items)

    def locked_items(self) -> list[Any]:
        return list(self.items)


class Store(mo.Actor):
    """``put`` has a batch implementation, ``put_one`` does not."""

    def __init__(self) -> None:
        self.data: dict[Any, Any] = {}
        self.single_calls = 0
        self.batch_calls = 0

    @mo.extensible
    def put(self, key: Any, value: Any = None) -> Any:
        self.single_calls += 1
        self.data[key] = value
        return key

    @put.batch
    def put(self, args_list: list, kwargs_list: list) -> list:
        self.batch_calls += 1
        keys = []
        for args, kwargs in zip(args_list, kwargs_list):
            key, value = (*args, kwargs.get("value"))[:2]
            self.data[key] = value
            keys.append(key)
        return keys

    async def put_one(self, key: Any, value: Any = None) -> Any:
        self.single_calls += 1
        self.data[key] = value
        return key

    def state(self) -> dict[str, Any]:
        return {"data": dict(self.data), "single": self.single_calls, "batch": self.batch_calls}


class Node(mo.Actor):
    """Calls other actors, and itself, back while holding its own lock."""

    def __init__(self) -> None:
        self.busy = False

    async def bounce(self, peer: mo.ActorRef, depth: int) -> list[str]:
        await asyncio.sleep(0.01)  # give an unrelated caller a chance to slip in
        if depth == 0:
            return [self.uid]
        return [self.uid, *await peer.bounce(self.ref(), depth - 1)]

    async def countdown(self, n: int) -> int:
        if n == 0:
            return 0
        return 1 + await self.ref().countdown(n - 1)

    async def hold(self, peer: mo.ActorRef, seconds: float) -> None:
        self.busy = True
        try:
            await peer.sleep(seconds)
        finally:
            self.busy = False

    async def is_busy(self) -> bool:
        return self.busy

    @mo.no_lock
    def peek_busy(self) -> bool:
        return self.busy

    async def call_failing(self, peer: mo.ActorRef) -> None:
        await peer.raise_value("from peer")


class Info(mo.Actor):
    """Reports where it runs; creates actors elsewhere on request."""

    def __init__(self, tag: Any = None) -> None:
        self.tag = tag

    def where(self) -> tuple[str | None, int]:
        return os.environ.get("X"), os.getpid()

    def get_tag(self) -> Any:
        return self.tag

    async def create_elsewhere(self, address: str, strategy: mo.AllocateStrategy) -> mo.ActorRef:
        return await mo.create_actor(Info, "made by actor", address=address, allocate_strategy=strategy)

    async def drop_connections(self) -> None:
        mo.close_connections()


class FailsToStart(mo.Actor):
    async def __post_create__(self) -> None:
        raise RuntimeError("refusing to start")


# -- errors that cross (or fail to cross) the wire -----------------------------


class AppError(Exception):
    """A user exception that pickles fine."""


class TwoArgError(Exception):
    """Pickles, but cannot be unpickled: ``args`` holds only ``a``."""

    def __init__(self, a: Any, b: Any) -> None:
        super().__init__(a)
        self.b = b


class LockHoldingError(Exception):
    """Cannot be pickled at all: it holds a lock."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.lock = threading.Lock()


class BadReduce:
    """Pickling it raises a ValueError (not a PicklingError/TypeError)."""

    def __reduce__(self):
        raise ValueError("BadReduce refuses to be pickled")


def _refuse_to_load() -> None:
    raise RuntimeError("LoadsBadly refuses to be unpickled")


class LoadsBadly:
    """Pickles fine; unpickling it raises."""

    def __reduce__(self):
        return _refuse_to_load, ()


class Failer(mo.Actor):
    async def raise_value(self, message: str) -> None:
        raise ValueError(message, 42)

    def raise_key_plain(self) -> None:
        raise KeyError("plain-method-key")

    async def raise_app_error(self) -> None:
        raise AppError("app failed", {"code": 7})

    async def raise_two_arg(self) -> None:
        raise TwoArgError("first", "second")

    async def raise_lock_holding(self) -> None:
        raise LockHoldingError("holding a lock")

    async def return_lock(self) -> threading.Lock:
        return threading.Lock()

    async def return_lock_after(self, argument: Any) -> threading.Lock:
        return threading.Lock()

    async def return_bad_reduce(self) -> BadReduce:
        return BadReduce()

    async def return_loads_badly(self) -> LoadsBadly:
        return LoadsBadly()

    async def echo(self, value: Any) -> Any:
        return value
