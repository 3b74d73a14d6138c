"""The caller's side: one connection per destination pool, per event loop.

A call to a pool running in this process and loop is a direct method call
with no serialization; any other call is a frame on a multiplexed
connection, over a Unix socket when the pool is on this host, else TCP.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from typing import TYPE_CHECKING, Any

from ..serialization import SerializationError, deserialize, deserialize_async, looks_heavy, serialize
from ..serialization.core import HEAVY_HEADER_BYTES
from .auth import get_token
from .errors import AuthenticationError, RemoteError
from .message import ErrorPayload, FrameKind, decode, encode
from .tls import client_context
from .transport import Connection, open_connection

if TYPE_CHECKING:
    from .pool import ActorPool

logger = logging.getLogger(__name__)

# Pools running in this process, by address; each is bound to one event loop.
_local_pools: dict[str, ActorPool] = {}


def register_pool(pool: ActorPool) -> None:
    _local_pools[pool.address] = pool


def unregister_pool(pool: ActorPool) -> None:
    if _local_pools.get(pool.address) is pool:
        del _local_pools[pool.address]


def local_pool(address: str) -> ActorPool | None:
    pool = _local_pools.get(address)
    if pool is not None and pool.loop is asyncio.get_running_loop():
        return pool
    return None


def remote_exception(payload: Any) -> BaseException:
    """Turn an error reply into the exception to raise at the caller."""
    if not isinstance(payload, ErrorPayload):
        return RemoteError(f"malformed error reply: {payload!r}")
    exc = payload.exc
    note = f"[remote traceback from {payload.where}]\n{payload.traceback.rstrip()}"
    if hasattr(exc, "add_note"):
        exc.add_note(note)
    else:  # Python 3.10: show it as the cause
        exc.__cause__ = RemoteError(note)
    return exc


class CallerContext:
    """Connections from this event loop to other pools, and the calls on them."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.conns: dict[str, Connection] = {}
        self._connecting: dict[str, asyncio.Future] = {}

    async def connection(self, address: str) -> Connection:
        conn = self.conns.get(address)
        if conn is not None and not conn.closed:
            return conn
        waiting = self._connecting.get(address)
        if waiting is not None:
            try:
                return await asyncio.shield(waiting)
            except asyncio.CancelledError:
                if not waiting.cancelled():
                    raise  # this caller was cancelled
                # the caller that was connecting was cancelled, not this one: connect anew
                return await self.connection(address)
        fut = self.loop.create_future()
        self._connecting[address] = fut
        try:
            conn = await open_connection(address, self._new_connection, tls=client_context())
            token = get_token()
            if token is not None:
                conn.send(FrameKind.AUTH, 0, token.encode())
        except asyncio.CancelledError:
            fut.cancel()  # the others waiting for it connect by themselves
            raise
        except BaseException as e:
            fut.set_exception(e)
            fut.exception()  # retrieved: no warning when nobody else waited
            raise
        finally:
            del self._connecting[address]
        self.conns[address] = conn
        fut.set_result(conn)
        return conn

    def _new_connection(self) -> Connection:
        return Connection(self._on_frame, self._on_lost)

    def _on_lost(self, conn: Connection) -> None:
        if self.conns.get(conn.address) is conn:
            del self.conns[conn.address]

    def _on_frame(self, conn: Connection, kind: int, msg_id: int, header: Any, buffers: list) -> None:
        if kind == FrameKind.AUTH:  # the pool refused this connection; the reason is plain text
            self._refused(conn, bytes(header).decode("utf-8", "replace"))
            return
        fut = conn.pending.pop(msg_id, None)
        if fut is None or fut.done():
            return  # the caller gave up (cancelled or timed out)
        if len(header) > HEAVY_HEADER_BYTES:
            self.loop.create_task(self._resolve_heavy(conn, fut, kind, header, buffers))
            return
        try:
            value = deserialize(header, buffers)
            if kind == FrameKind.ERROR:
                value = decode(value)
        except (SerializationError, TypeError) as e:
            fut.set_exception(SerializationError(f"reply from {conn.address} could not be decoded: {e}"))
            return
        self._resolve(fut, kind, value)

    def _refused(self, conn: Connection, reason: str) -> None:
        pending, conn.pending = conn.pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(AuthenticationError(reason))
        self._on_lost(conn)  # the next call connects anew, with whatever token is set by then
        conn.close()

    async def _resolve_heavy(self, conn, fut, kind, header, buffers) -> None:
        try:
            value = await deserialize_async(header, buffers)
            if kind == FrameKind.ERROR:
                value = decode(value)
        except (SerializationError, TypeError) as e:
            value, kind = SerializationError(f"reply from {conn.address} could not be decoded: {e}"), -1
        if not fut.done():
            self._resolve(fut, kind, value)

    @staticmethod
    def _resolve(fut: asyncio.Future, kind: int, value: Any) -> None:
        if kind == FrameKind.RESULT:
            fut.set_result(value)
        elif kind == FrameKind.ERROR:
            fut.set_exception(remote_exception(value))
        else:
            fut.set_exception(value)

    async def request(self, address: str, message: Any, timeout: float | None = None) -> Any:
        """Send ``message`` to the pool at ``address`` and await its reply."""
        conn = self.conns.get(address)
        if conn is None or conn.closed:
            conn = await self.connection(address)
        if _heavy(message):
            header, buffers = await self.loop.run_in_executor(None, serialize, encode(message))
        else:
            header, buffers = serialize(encode(message))
        msg_id = conn.next_id()
        fut = self.loop.create_future()
        conn.pending[msg_id] = fut
        try:
            if conn.send(FrameKind.REQUEST, msg_id, header, buffers):
                await conn.drain()
            if timeout is None:
                return await fut
            return await asyncio.wait_for(fut, timeout)
        except (asyncio.CancelledError, asyncio.TimeoutError):
            conn.pending.pop(msg_id, None)
            if not conn.closed:
                conn.send(FrameKind.CANCEL, msg_id, b"")
            raise

    async def tell(self, address: str, message: Any) -> None:
        """Send ``message`` without waiting for it to run."""
        conn = await self.connection(address)
        if _heavy(message):
            header, buffers = await self.loop.run_in_executor(None, serialize, encode(message))
        else:
            header, buffers = serialize(encode(message))
        if conn.send(FrameKind.TELL, conn.next_id(), header, buffers):
            await conn.drain()

    def close(self) -> None:
        for conn in list(self.conns.values()):
            conn.close()
        self.conns.clear()


def _heavy(message: Any) -> bool:
    payload = getattr(message, "args", None) or getattr(message, "calls", None)
    return payload is not None and looks_heavy(payload)


_contexts: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, CallerContext] = weakref.WeakKeyDictionary()
_last: tuple[Any, CallerContext | None] = (None, None)


def get_context() -> CallerContext:
    """The caller context of the running event loop (created on first use)."""
    global _last
    loop = asyncio.get_running_loop()
    if _last[0] is loop:
        return _last[1]  # type: ignore[return-value]
    ctx = _contexts.get(loop)
    if ctx is None:
        ctx = _contexts[loop] = CallerContext(loop)
    _last = (loop, ctx)
    return ctx


def close_connections() -> None:
    """Close this loop's connections to other pools (they reopen on the next call)."""
    with contextlib.suppress(RuntimeError):
        get_context().close()
