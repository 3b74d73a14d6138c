"""The typed messages that travel between pools.

A frame on the wire carries a :class:`FrameKind`, a message id, and one
pickled payload. Requests are the message classes below; replies carry the
returned value (``RESULT``) or an :class:`ErrorPayload` (``ERROR``). Keeping the
kind and the id outside the pickle lets a receiver fail the right caller even
when a payload cannot be unpickled.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any


class FrameKind(IntEnum):
    REQUEST = 1  # expects a RESULT or ERROR with the same id
    TELL = 2  # fire and forget
    RESULT = 3
    ERROR = 4
    CANCEL = 5  # cancel the request with this id


class _Message:
    """Slotted message whose pickle is a plain tuple of its fields."""

    __slots__ = ()

    def __init__(self, *values: Any) -> None:
        for name, value in zip(self.__slots__, values):
            object.__setattr__(self, name, value)

    def __reduce__(self):
        return type(self), tuple(getattr(self, name) for name in self.__slots__)

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"{type(self).__name__}({fields})"


class CallMessage(_Message):
    """Call ``method`` of actor ``uid``; ``chain`` names the locks held up the call stack."""

    __slots__ = ("uid", "method", "args", "kwargs", "chain")
    uid: str
    method: str
    args: tuple
    kwargs: dict
    chain: tuple


class BatchCallMessage(_Message):
    """Several calls of one method, run under one lock acquisition."""

    __slots__ = ("uid", "method", "calls", "chain")
    uid: str
    method: str
    calls: list  # of (args, kwargs)
    chain: tuple


class CreateActorMessage(_Message):
    __slots__ = ("actor_cls", "args", "kwargs", "uid", "strategy")
    actor_cls: type
    args: tuple
    kwargs: dict
    uid: str
    strategy: Any


class DestroyActorMessage(_Message):
    __slots__ = ("uid",)
    uid: str


class HasActorMessage(_Message):
    __slots__ = ("uid",)
    uid: str


class ActorDestroyedNotice(_Message):
    """A sub pool tells its main pool that an actor it placed is gone."""

    __slots__ = ("uid",)
    uid: str


class StopPoolMessage(_Message):
    """Ask a pool to destroy its actors and exit."""

    __slots__ = ()


class ErrorPayload(_Message):
    """An exception raised remotely, with where and the formatted remote traceback."""

    __slots__ = ("exc", "where", "traceback")
    exc: BaseException
    where: str
    traceback: str
