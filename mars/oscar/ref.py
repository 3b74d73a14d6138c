"""References to actors, and the calls made through them."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from .actor import current_chain
from .context import get_context, local_pool
from .message import BatchCallMessage, CallMessage

logger = logging.getLogger(__name__)


class ActorRef:
    """The address of an actor: its pool's ``address`` and its ``uid``.

    Attribute access gives a method reference: ``await ref.method(*args)``
    calls it and returns its result, ``await ref.method.tell(*args)`` sends the
    call without waiting for it, ``ref.method.options(timeout=5)`` bounds the
    wait, and ``await ref.method.batch(ref.method.delay(a), ...)`` sends many
    calls in one message.

    Examples
    --------
    >>> ref = ActorRef("127.0.0.1:12345", "counter")
    >>> ref
    ActorRef(address='127.0.0.1:12345', uid='counter')
    """

    __slots__ = ("address", "uid", "_methods")

    def __init__(self, address: str, uid: str) -> None:
        self.address = address
        self.uid = uid
        self._methods: dict[str, ActorRefMethod] = {}

    def __getattr__(self, name: str) -> ActorRefMethod:
        if name.startswith("__"):
            raise AttributeError(name)
        method = self._methods.get(name)
        if method is None:
            method = self._methods[name] = ActorRefMethod(self, name)
        return method

    def __reduce__(self):
        return ActorRef, (self.address, self.uid)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ActorRef) and (self.address, self.uid) == (other.address, other.uid)

    def __hash__(self) -> int:
        return hash((self.address, self.uid))

    def __repr__(self) -> str:
        return f"ActorRef(address={self.address!r}, uid={self.uid!r})"


class DelayedCall:
    """One call of a batch, made by ``ref.method.delay(*args, **kwargs)``."""

    __slots__ = ("method", "args", "kwargs")

    def __init__(self, method: str, args: tuple, kwargs: dict) -> None:
        self.method, self.args, self.kwargs = method, args, kwargs


class ActorRefMethod:
    __slots__ = ("ref", "name", "timeout")

    def __init__(self, ref: ActorRef, name: str, timeout: float | None = None) -> None:
        self.ref, self.name, self.timeout = ref, name, timeout

    def options(self, *, timeout: float | None = None) -> ActorRefMethod:
        """The same method with a per-call timeout in seconds (``TimeoutError`` past it)."""
        if timeout is not None and timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout!r}")
        return ActorRefMethod(self.ref, self.name, timeout)

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        ref = self.ref
        pool = local_pool(ref.address)
        if pool is not None:
            coro = pool.call_direct(ref.uid, self.name, args, kwargs)
            return await (coro if self.timeout is None else asyncio.wait_for(coro, self.timeout))
        message = CallMessage(ref.uid, self.name, args, kwargs, current_chain.get())
        return await get_context().request(ref.address, message, self.timeout)

    async def tell(self, *args: Any, **kwargs: Any) -> None:
        """Send the call and return once it is sent; errors are logged by the actor's pool."""
        ref = self.ref
        pool = local_pool(ref.address)
        if pool is not None:
            pool.tell_direct(ref.uid, self.name, args, kwargs)
            return
        await get_context().tell(ref.address, CallMessage(ref.uid, self.name, args, kwargs, ()))

    def delay(self, *args: Any, **kwargs: Any) -> DelayedCall:
        return DelayedCall(self.name, args, kwargs)

    async def batch(self, *calls: DelayedCall) -> list:
        """Run several delayed calls of this method in one message; returns their results."""
        for call in calls:
            if not isinstance(call, DelayedCall) or call.method != self.name:
                raise TypeError(f"batch of {self.name!r} takes {self.name}.delay(...) calls, got {call!r}")
        pairs = [(c.args, c.kwargs) for c in calls]
        ref = self.ref
        pool = local_pool(ref.address)
        if pool is not None:
            coro = pool.batch_direct(ref.uid, self.name, pairs)
            return await (coro if self.timeout is None else asyncio.wait_for(coro, self.timeout))
        message = BatchCallMessage(ref.uid, self.name, pairs, current_chain.get())
        return await get_context().request(ref.address, message, self.timeout)

    def __repr__(self) -> str:
        return f"<method {self.name!r} of {self.ref!r}>"
