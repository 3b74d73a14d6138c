"""The Actor base class, method decorators, and the re-entrant actor lock.

An actor runs one call at a time. Each call that holds an actor's lock gets a
token, and the tokens of every lock held up a logical call stack travel with
each outgoing call as its *chain* (a context variable locally, a field of the
message across processes). A call that arrives carrying the token of the
lock's current holder is part of that holder's own call stack — A calls B,
B calls A back — so it runs at once instead of waiting for a lock that its
own caller holds. Any other call queues in arrival order.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import os
from collections import deque
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from .ref import ActorRef

# Tokens must differ across processes: a random per-process base plus a counter.
_token_counter = itertools.count(int.from_bytes(os.urandom(6), "little") << 16)
current_chain: contextvars.ContextVar[tuple] = contextvars.ContextVar("mars_oscar_chain", default=())


def new_token() -> int:
    return next(_token_counter)


class Actor:
    """Base class of actors.

    Subclasses define async or plain methods; callers reach them through an
    :class:`~mars.oscar.ref.ActorRef`. ``__post_create__`` runs after the actor
    is constructed in its pool, ``__pre_destroy__`` before it is removed.

    Examples
    --------
    >>> class Counter(Actor):
    ...     def __init__(self):
    ...         self.n = 0
    ...     async def add(self, k):
    ...         self.n += k
    ...         return self.n
    """

    _address: str = ""
    _uid: str = ""

    @property
    def address(self) -> str:
        return self._address

    @property
    def uid(self) -> str:
        return self._uid

    def ref(self) -> ActorRef:
        from .ref import ActorRef

        return ActorRef(self._address, self._uid)

    async def __post_create__(self) -> None:
        """Called once the actor is registered in its pool."""

    async def __pre_destroy__(self) -> None:
        """Called before the actor is removed from its pool."""


def no_lock(func: Callable) -> Callable:
    """Let calls of this method run concurrently with the actor's other calls."""
    func.__oscar_no_lock__ = True  # type: ignore[attr-defined]
    return func


class extensible:
    """Mark a method whose batch form the actor implements itself.

    Examples
    --------
    >>> class Store(Actor):
    ...     def __init__(self):
    ...         self.data = {}
    ...     @extensible
    ...     def put(self, key, value):
    ...         self.data[key] = value
    ...     @put.batch
    ...     def put(self, args_list, kwargs_list):
    ...         for (key, value), _ in zip(args_list, kwargs_list):
    ...             self.data[key] = value
    """

    def __init__(self, func: Callable) -> None:
        self.func = func
        self.batch_func: Callable | None = None
        self.__name__ = func.__name__
        self.__doc__ = func.__doc__

    def batch(self, func: Callable) -> extensible:
        self.batch_func = func
        return self

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        bound = self.func.__get__(instance, owner)
        return _BoundExtensible(bound, self.batch_func, instance)


class _BoundExtensible:
    __slots__ = ("func", "batch_func", "instance")

    def __init__(self, func: Callable, batch_func: Callable | None, instance: Any) -> None:
        self.func, self.batch_func, self.instance = func, batch_func, instance

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)

    def call_batch(self, calls: list[tuple[tuple, dict]]) -> Any:
        args_list = [c[0] for c in calls]
        kwargs_list = [c[1] for c in calls]
        assert self.batch_func is not None
        return self.batch_func(self.instance, args_list, kwargs_list)

    @property
    def __oscar_no_lock__(self) -> bool:
        return getattr(self.func, "__oscar_no_lock__", False)


class ActorLock:
    """FIFO lock whose holder is a call token (see the module docstring)."""

    __slots__ = ("holder", "waiters")

    def __init__(self) -> None:
        self.holder: int | None = None
        self.waiters: deque[tuple[asyncio.Future, int]] = deque()

    def held_by_chain(self, chain: tuple) -> bool:
        return self.holder is not None and self.holder in chain

    def acquire_or_wait(self, token: int) -> asyncio.Future | None:
        """Take the lock now (returns None) or queue: returns a future to await."""
        if self.holder is None and not self.waiters:
            self.holder = token
            return None
        fut = asyncio.get_running_loop().create_future()
        self.waiters.append((fut, token))
        return fut

    def release(self) -> None:
        while self.waiters:
            fut, token = self.waiters.popleft()
            if not fut.done():
                self.holder = token
                fut.set_result(None)
                return
        self.holder = None

    async def wait(self, fut: asyncio.Future) -> None:
        """Await a queued acquisition; a cancelled waiter never keeps the lock."""
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.release()
            raise
