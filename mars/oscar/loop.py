"""Event loops: uvloop when it is installed, unless asked not to."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def resolve_uvloop(use_uvloop: bool | str | None = "auto") -> bool:
    """Whether to use uvloop: ``"auto"``/None means when importable."""
    if use_uvloop in ("auto", None):
        try:
            import uvloop  # noqa: F401
        except ImportError:
            return False
        return True
    if use_uvloop in (True, "yes", "true", "1"):
        try:
            import uvloop  # noqa: F401
        except ImportError as e:
            raise ImportError("use_uvloop=True but uvloop is not installed (pip install uvloop)") from e
        return True
    if use_uvloop in (False, "no", "false", "0"):
        return False
    raise ValueError(f"use_uvloop must be 'auto', True or False, got {use_uvloop!r}")


def new_event_loop(use_uvloop: bool | str | None = "auto") -> asyncio.AbstractEventLoop:
    """A new event loop, uvloop's when :func:`resolve_uvloop` says so."""
    if resolve_uvloop(use_uvloop):
        import uvloop

        return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def run(coro: Coroutine[Any, Any, T], use_uvloop: bool | str | None = "auto") -> T:
    """Run ``coro`` to completion on a new loop (uvloop when available), like ``asyncio.run``.

    Examples
    --------
    >>> async def answer():
    ...     return 42
    >>> run(answer())
    42
    """
    with asyncio.Runner(loop_factory=lambda: new_event_loop(use_uvloop)) if hasattr(
        asyncio, "Runner"
    ) else _Runner310(use_uvloop) as runner:
        return runner.run(coro)


class _Runner310:
    """``asyncio.Runner`` for Python 3.10."""

    def __init__(self, use_uvloop: bool | str | None) -> None:
        self.loop = new_event_loop(use_uvloop)

    def __enter__(self) -> _Runner310:
        asyncio.set_event_loop(self.loop)
        return self

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coro)

    def __exit__(self, *exc: Any) -> None:
        try:
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        finally:
            asyncio.set_event_loop(None)
            self.loop.close()
