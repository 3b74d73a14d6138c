"""An actor pool: the actors of one process, served over TCP and a Unix socket.

Request frames arrive from :mod:`.transport`; a plain (non-async) method whose
actor is free runs at once inside the frame handler, everything else runs in
a task of its own so that the caller can cancel it.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import traceback
import uuid
from typing import Any, Callable

from ..serialization import SerializationError, deserialize, deserialize_async, looks_heavy, serialize
from ..serialization.core import HEAVY_HEADER_BYTES
from .actor import Actor, ActorLock, current_chain, new_token
from .context import get_context, register_pool, unregister_pool
from .allocate import MainPool
from .auth import set_token
from .errors import ActorAlreadyExist, ActorNotExist, NoMatchingPool, RemoteError
from .message import (
    ActorDestroyedNotice,
    BatchCallMessage,
    CallMessage,
    CreateActorMessage,
    DestroyActorMessage,
    ErrorPayload,
    FrameKind,
    HasActorMessage,
    StopPoolMessage,
    decode,
    encode,
)
from .ref import ActorRef
from .tls import TLSConfig, set_tls
from .transport import Connection, remove_unix_socket, serve

logger = logging.getLogger(__name__)
_HERE = os.path.dirname(os.path.abspath(__file__))


class _Slot:
    """An actor, its lock, and its methods as looked up once."""

    __slots__ = ("actor", "lock", "methods")

    def __init__(self, actor: Actor) -> None:
        self.actor = actor
        self.lock = ActorLock()
        # name -> (bound method, is a coroutine function, runs without the lock)
        self.methods: dict[str, tuple[Callable, bool, bool]] = {}

    def method(self, name: str, uid: str) -> tuple[Callable, bool, bool]:
        entry = self.methods.get(name)
        if entry is None:
            func = None if name.startswith("__") else getattr(self.actor, name, None)
            if func is None or not callable(func):
                raise AttributeError(f"actor {type(self.actor).__name__} ({uid!r}) has no method {name!r}")
            inner = getattr(func, "func", func)
            entry = self.methods[name] = (
                func,
                inspect.iscoroutinefunction(inner),
                bool(getattr(inner, "__oscar_no_lock__", False)),
            )
        return entry


class ActorPool:
    """The actors living in one process, and the servers that reach them."""

    def __init__(
        self, address: str, label: str = "main", main_address: str | None = None, token: str | None = None,
        tls: TLSConfig | None = None,
    ) -> None:
        self.address = address
        self.token = token
        self.tls = tls
        self.label = label
        self.main_address = main_address
        self.loop: asyncio.AbstractEventLoop | None = None
        self._actors: dict[str, _Slot] = {}
        self._servers: list[asyncio.AbstractServer] = []
        self._conns: set[Connection] = set()
        self._stopped: asyncio.Event | None = None
        self._tasks: set[asyncio.Task] = set()
        self._stop_task: asyncio.Task | None = None
        self._handlers: dict[type, Callable] = {
            CallMessage: self._handle_call,
            BatchCallMessage: self._handle_batch,
            CreateActorMessage: self._handle_create,
            DestroyActorMessage: self._handle_destroy,
            HasActorMessage: self._handle_has,
            ActorDestroyedNotice: self._handle_destroyed_notice,
            StopPoolMessage: self._handle_stop,
        }

    # -- life cycle ---------------------------------------------------------
    async def start(self) -> ActorPool:
        self.loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        if self.token is not None:
            set_token(self.token)  # this process's own calls to its peers show it too
        if self.tls is not None:
            set_tls(self.tls)  # and reach them over TLS
        server_tls = self.tls.server_context() if self.tls is not None and self.tls.serves else None
        self.address, self._servers = await serve(self.address, self._new_connection, server_tls)
        register_pool(self)
        return self

    async def stop(self) -> None:
        """Destroy every actor, close servers and connections."""
        if self._stopped is None or self._stopped.is_set():
            return
        unregister_pool(self)
        for server in self._servers:
            server.close()
        for uid in list(self._actors):
            try:
                await self._destroy(uid, notify=False)
            except Exception:
                logger.exception("__pre_destroy__ of actor %s failed while stopping %s", uid, self.address)
        for conn in list(self._conns):
            conn.close()
        for task in list(self._tasks):
            task.cancel()
        remove_unix_socket(self.address)
        self._stopped.set()

    async def wait_stopped(self) -> None:
        assert self._stopped is not None
        await self._stopped.wait()

    @property
    def stopped(self) -> bool:
        return self._stopped is not None and self._stopped.is_set()

    async def __aenter__(self) -> ActorPool:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()

    def _spawn(self, coro) -> asyncio.Task:
        task = self.loop.create_task(coro)  # type: ignore[union-attr]
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- actors -------------------------------------------------------------
    def actor_count(self) -> int:
        return len(self._actors)

    def has_actor(self, uid: str) -> bool:
        return uid in self._actors

    async def create_actor(
        self, actor_cls: type, args: tuple, kwargs: dict, uid: str | None, strategy: Any = None
    ) -> ActorRef:
        """Create an actor in this process (a main pool also honours ``strategy``)."""
        if not (isinstance(actor_cls, type) and issubclass(actor_cls, Actor)):
            raise TypeError(f"actor class must be a subclass of mars.oscar.Actor, got {actor_cls!r}")
        if strategy is not None and not isinstance(strategy, MainPool):
            raise NoMatchingPool(
                f"pool {self.address} has no sub pools to place an actor by {strategy!r}; "
                "pass the main pool's address"
            )
        uid = uid or f"{actor_cls.__name__}-{uuid.uuid4().hex[:16]}"
        if uid in self._actors:
            raise ActorAlreadyExist(f"actor {uid!r} already exists in pool {self.address}")
        actor = actor_cls(*args, **kwargs)
        actor._address, actor._uid = self.address, uid
        slot = self._actors[uid] = _Slot(actor)
        token = new_token()
        slot.lock.holder = token  # calls arriving during __post_create__ wait for it
        reset = current_chain.set(current_chain.get() + (token,))
        try:
            await actor.__post_create__()
        except BaseException:
            self._actors.pop(uid, None)
            raise
        finally:
            current_chain.reset(reset)
            slot.lock.release()
        return ActorRef(self.address, uid)

    async def destroy_actor(self, uid: str) -> None:
        if uid not in self._actors:
            raise ActorNotExist(f"no actor {uid!r} in pool {self.address}")
        await self._destroy(uid, notify=True)

    async def _destroy(self, uid: str, notify: bool) -> None:
        slot = self._actors.pop(uid, None)
        if slot is None:
            return
        try:
            await slot.actor.__pre_destroy__()
        finally:
            if notify and self.main_address:
                try:  # awaited, so the main pool's records are current when destroy returns
                    await get_context().request(self.main_address, ActorDestroyedNotice(uid), timeout=10)
                except Exception:  # the main pool may be stopping
                    logger.debug("cannot notify main pool of %s's destruction", uid, exc_info=True)

    def _resolve(self, uid: str, method: str) -> tuple[_Slot, tuple[Callable, bool, bool]]:
        slot = self._actors.get(uid)
        if slot is None:
            raise ActorNotExist(f"no actor {uid!r} in pool {self.address}")
        return slot, slot.method(method, uid)

    # -- in-process calls ---------------------------------------------------
    async def call_direct(self, uid: str, method: str, args: tuple, kwargs: dict) -> Any:
        slot, (func, _, unlocked) = self._resolve(uid, method)
        chain = current_chain.get()
        if unlocked or slot.lock.held_by_chain(chain):
            return await _invoke(func, args, kwargs, chain, None)
        token = new_token()
        waiter = slot.lock.acquire_or_wait(token)
        if waiter is not None:
            await slot.lock.wait(waiter)
        try:
            return await _invoke(func, args, kwargs, chain, token)
        finally:
            slot.lock.release()

    async def batch_direct(self, uid: str, method: str, calls: list) -> list:
        slot, (func, _, unlocked) = self._resolve(uid, method)
        chain = current_chain.get()
        token = None
        if not (unlocked or slot.lock.held_by_chain(chain)):
            token = new_token()
            waiter = slot.lock.acquire_or_wait(token)
            if waiter is not None:
                await slot.lock.wait(waiter)
        try:
            return await _invoke_batch(func, calls, chain, token)
        finally:
            if token is not None:
                slot.lock.release()

    def tell_direct(self, uid: str, method: str, args: tuple, kwargs: dict) -> None:
        """Queue the call now, so that it keeps its place before later calls."""
        slot, (func, _, unlocked) = self._resolve(uid, method)
        token = waiter = None
        if not unlocked:  # a tell never runs inside its sender's lock: no chain
            token = new_token()
            waiter = slot.lock.acquire_or_wait(token)
        told = self._run_told(slot, func, args, kwargs, token, waiter)
        self._spawn(_logged(told, f"actor {uid!r} method {method!r}"))

    async def _run_told(self, slot, func, args, kwargs, token, waiter) -> None:
        if waiter is not None:
            await slot.lock.wait(waiter)
        try:
            await _invoke(func, args, kwargs, (), token)
        finally:
            if token is not None:
                slot.lock.release()

    # -- frames from other processes ---------------------------------------
    def _new_connection(self) -> Connection:
        conn = Connection(self._on_frame, self._conns.discard)
        if self.token is not None:  # the connection hands over no frame before it has shown the token
            conn.expect_token(self.token, f"pool {self.address}")
        self._conns.add(conn)
        return conn

    def _on_frame(self, conn: Connection, kind: int, msg_id: int, header: Any, buffers: list) -> None:
        if kind >= FrameKind.CANCEL:
            task = conn.running.pop(msg_id, None) if kind == FrameKind.CANCEL else None
            if task is not None:
                task.cancel()
            return  # an AUTH frame to a pool that needs no token is ignored
        if len(header) > HEAVY_HEADER_BYTES:
            task = self._spawn(self._decode_heavy(conn, kind, msg_id, header, buffers))
            if kind == FrameKind.REQUEST:
                conn.running[msg_id] = task
            return
        try:
            message = decode(deserialize(header, buffers))
        except (SerializationError, TypeError) as e:
            self._fail(conn, kind, msg_id, e, f"pool {self.address}")
            return
        handler = self._handlers.get(type(message))
        if handler is None:
            self._dispatch(conn, kind, msg_id, message)
        else:
            handler(conn, kind, msg_id, message)

    async def _decode_heavy(self, conn, kind, msg_id, header, buffers) -> None:
        try:
            message = decode(await deserialize_async(header, buffers))
        except (SerializationError, TypeError) as e:
            self._fail(conn, kind, msg_id, e, f"pool {self.address}")
            return
        conn.running.pop(msg_id, None)
        self._dispatch(conn, kind, msg_id, message)

    def _dispatch(self, conn: Connection, kind: int, msg_id: int, message: Any) -> None:
        handler = self._handlers.get(type(message))
        if handler is None:
            error = TypeError(f"pool {self.address} cannot handle message {type(message).__name__}")
            self._fail(conn, kind, msg_id, error, f"pool {self.address}")
            return
        handler(conn, kind, msg_id, message)

    def _handle_call(self, conn: Connection, kind: int, msg_id: int, msg: CallMessage) -> None:
        where = msg  # described only if something fails
        try:
            slot, (func, is_async, unlocked) = self._resolve(msg.uid, msg.method)
        except Exception as e:
            self._fail(conn, kind, msg_id, e, where)
            return
        token = waiter = None
        if not (unlocked or slot.lock.held_by_chain(msg.chain)):
            token = new_token()
            waiter = slot.lock.acquire_or_wait(token)
        if waiter is None and not is_async:
            self._call_inline(conn, kind, msg_id, slot, func, msg, token, where)
            return
        self._run_in_task(conn, kind, msg_id, self._locked_call(slot, func, msg, token, waiter), where)

    def _call_inline(self, conn, kind, msg_id, slot, func, msg, token, where) -> None:
        try:
            result = func(*msg.args, **msg.kwargs)
        except Exception as e:
            self._fail(conn, kind, msg_id, e, where)
            return
        finally:
            if token is not None:
                slot.lock.release()
        if result is not None and inspect.isawaitable(result):  # a plain method returned a coroutine
            self._run_in_task(conn, kind, msg_id, _awaited(result), where)
        elif kind == FrameKind.REQUEST:
            self._reply(conn, msg_id, result, where)

    @staticmethod
    async def _locked_call(slot: _Slot, func: Callable, msg: CallMessage, token, waiter) -> Any:
        if waiter is not None:
            await slot.lock.wait(waiter)
        try:
            return await _invoke(func, msg.args, msg.kwargs, msg.chain, token)
        finally:
            if token is not None:
                slot.lock.release()

    def _handle_batch(self, conn: Connection, kind: int, msg_id: int, msg: BatchCallMessage) -> None:
        where = f"actor {msg.uid!r} method {msg.method!r} (batch) in pool {self.address}"

        async def run() -> list:
            reset = current_chain.set(msg.chain)
            try:
                return await self.batch_direct(msg.uid, msg.method, msg.calls)
            finally:
                current_chain.reset(reset)

        self._run_in_task(conn, kind, msg_id, run(), where)

    def _run_in_task(self, conn: Connection, kind: int, msg_id: int, coro: Any, where: Any) -> None:
        """Run ``coro`` in a task the caller can cancel, and reply with its outcome."""

        async def run() -> None:
            try:
                result = await coro
            except asyncio.CancelledError:
                return  # the caller cancelled: it no longer waits for a reply
            except Exception as e:
                self._fail(conn, kind, msg_id, e, where)
            else:
                if kind == FrameKind.REQUEST:
                    self._reply(conn, msg_id, result, where)
            finally:
                conn.running.pop(msg_id, None)

        task = self._spawn(run())
        if kind == FrameKind.REQUEST:
            conn.running[msg_id] = task

    # -- control messages ---------------------------------------------------
    def _handle_create(self, conn, kind, msg_id, msg: CreateActorMessage) -> None:
        coro = self.create_actor(msg.actor_cls, msg.args, msg.kwargs, msg.uid, msg.strategy)
        self._run_in_task(conn, kind, msg_id, coro, f"creating actor {msg.uid!r} in pool {self.address}")

    def _handle_destroy(self, conn, kind, msg_id, msg: DestroyActorMessage) -> None:
        coro = self.destroy_actor(msg.uid)
        self._run_in_task(conn, kind, msg_id, coro, f"destroying actor {msg.uid!r} in pool {self.address}")

    def _handle_has(self, conn, kind, msg_id, msg: HasActorMessage) -> None:
        if kind == FrameKind.REQUEST:
            self._reply(conn, msg_id, msg.uid in self._actors, f"pool {self.address}")

    def _handle_destroyed_notice(self, conn, kind, msg_id, msg: ActorDestroyedNotice) -> None:
        self.actor_destroyed(msg.uid)
        if kind == FrameKind.REQUEST:
            self._reply(conn, msg_id, None, f"pool {self.address}")

    def actor_destroyed(self, uid: str) -> None:
        """Called on a main pool when a sub pool destroyed an actor it placed."""

    def _handle_stop(self, conn, kind, msg_id, msg: StopPoolMessage) -> None:
        if kind == FrameKind.REQUEST:
            self._reply(conn, msg_id, None, f"pool {self.address}")
        self._stop_task = self.loop.create_task(self.stop())  # type: ignore[union-attr]

    # -- replies ------------------------------------------------------------
    def _reply(self, conn: Connection, msg_id: int, value: Any, where: Any) -> None:
        if conn.closed:
            return
        if looks_heavy(value):
            self._spawn(self._reply_heavy(conn, msg_id, value, where))
            return
        try:
            header, buffers = serialize(value)
        except Exception as e:
            self._fail_result(conn, msg_id, e, where)
            return
        conn.send(FrameKind.RESULT, msg_id, header, buffers)

    async def _reply_heavy(self, conn: Connection, msg_id: int, value: Any, where: Any) -> None:
        try:
            header, buffers = await self.loop.run_in_executor(None, serialize, value)  # type: ignore
        except Exception as e:
            self._fail_result(conn, msg_id, e, where)
            return
        if not conn.closed and conn.send(FrameKind.RESULT, msg_id, header, buffers):
            await conn.drain()

    def _describe(self, where: Any) -> str:
        if isinstance(where, CallMessage):
            return f"actor {where.uid!r} method {where.method!r} in pool {self.address}"
        return str(where)

    def _fail_result(self, conn: Connection, msg_id: int, exc: Exception, where: Any) -> None:
        where = self._describe(where)
        error = SerializationError(f"the result of {where} cannot be sent back: {exc}")
        self._fail(conn, FrameKind.REQUEST, msg_id, error, where)

    def _fail(self, conn: Connection, kind: int, msg_id: int, exc: BaseException, where: Any) -> None:
        where = self._describe(where)
        if kind != FrameKind.REQUEST:
            logger.error("%s failed", where, exc_info=exc)
            return
        if conn.closed:
            return
        header, buffers = _encode_error(exc, where)
        conn.send(FrameKind.ERROR, msg_id, header, buffers)


def _encode_error(exc: BaseException, where: str) -> tuple[bytes, list]:
    """Pickle an error reply; an exception that does not survive pickling is described instead."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None and tb.tb_frame.f_code.co_filename.startswith(_HERE):
        tb = tb.tb_next  # the frames of the pool's own dispatch say nothing to the caller
    text = "".join(traceback.format_exception(type(exc), exc, tb))
    try:
        header, buffers = serialize(encode(ErrorPayload(exc, where, text)))
        deserialize(header, buffers)
        return header, buffers
    except Exception as e:
        name = f"{type(exc).__module__}.{type(exc).__qualname__}"
        error = RemoteError(f"{where} raised {name}: {exc}; it cannot be sent back as itself ({e})")
        return serialize(encode(ErrorPayload(error, where, text)))


async def _invoke(func: Callable, args: tuple, kwargs: dict, chain: tuple, token: int | None) -> Any:
    reset = current_chain.set(chain if token is None else chain + (token,))
    try:
        result = func(*args, **kwargs)
        if inspect.isawaitable(result):
            result = await result
        return result
    finally:
        current_chain.reset(reset)


async def _invoke_batch(func: Callable, calls: list, chain: tuple, token: int | None) -> list:
    batch = getattr(func, "call_batch", None)
    if batch is not None and func.batch_func is not None:  # type: ignore[attr-defined]
        results = await _invoke(batch, (calls,), {}, chain, token)
        return list(results) if results is not None else [None] * len(calls)
    return [await _invoke(func, args, kwargs, chain, token) for args, kwargs in calls]


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


async def _logged(coro, where: str) -> None:
    try:
        await coro
    except asyncio.CancelledError:
        pass
    except Exception:
        logger.exception("%s (sent with tell) failed", where)
