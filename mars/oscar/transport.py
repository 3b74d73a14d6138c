"""Framed, multiplexed connections over TCP and Unix sockets.

A frame is a fixed prefix (kind, message id, header length, buffer count),
the buffer lengths, the pickled header, then the out-of-band buffers. Small
frames leave at once when they are alone; replies to frames parsed together,
and requests sent while others are in flight, share one write. A large
frame is received straight into freshly allocated buffers of the right size
(``get_buffer`` of a :class:`asyncio.BufferedProtocol`), so a numpy array
crosses the socket with no copy beyond the kernel's.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import os
import socket
import ssl
import struct
import sys
import tempfile
from collections.abc import Callable
from typing import Any

from .errors import ServerClosed

logger = logging.getLogger(__name__)

_PREFIX = struct.Struct("<BQIH")
#: the kind of the frame that carries a token (``message.FrameKind.AUTH``); a server that refuses a
#: connection answers with one too, its header the reason as UTF-8 text (nothing to unpickle)
AUTH_KIND = 6
#: the longest token a server reads from a connection that has not authenticated
MAX_TOKEN_BYTES = 512
#: a refused connection is closed this long after the refusal, so guessing tokens is slow
REFUSAL_DELAY = 0.5
_RECV_BUFFER = 256 * 1024
# Frames up to this size are copied into one bytes object and coalesced.
_SMALL_FRAME = 64 * 1024
_HIGH_WATER = 4 * 1024 * 1024

FrameHandler = Callable[["Connection", int, int, Any, list], None]


def _alloc(nbytes: int) -> Any:
    """A writable buffer of ``nbytes``; uninitialised when numpy is loaded."""
    numpy = sys.modules.get("numpy")
    if numpy is not None and nbytes >= _SMALL_FRAME:
        return numpy.empty(nbytes, dtype=numpy.uint8).data
    return bytearray(nbytes)


class _LargeFrame:
    """A frame being received directly into its destination buffers."""

    __slots__ = ("kind", "msg_id", "parts", "index", "offset")

    def __init__(self, kind: int, msg_id: int, sizes: list[int]) -> None:
        self.kind, self.msg_id = kind, msg_id
        self.parts = [_alloc(n) for n in sizes]
        self.index = self.offset = 0

    def fill(self, data: memoryview) -> None:
        """Copy already-received bytes into the parts."""
        while len(data) and not self.complete:
            part = self.parts[self.index]
            n = min(len(data), len(part) - self.offset)
            part[self.offset : self.offset + n] = data[:n]
            data = data[n:]
            self.advance(n)

    def advance(self, nbytes: int) -> None:
        self.offset += nbytes
        while self.index < len(self.parts) and self.offset == len(self.parts[self.index]):
            self.index += 1
            self.offset = 0

    @property
    def complete(self) -> bool:
        return self.index == len(self.parts)

    def target(self) -> memoryview:
        return memoryview(self.parts[self.index])[self.offset :]


class Connection(asyncio.BufferedProtocol):
    """One end of a framed connection.

    The client end keeps a future per outstanding request and resolves it when
    the reply frame arrives; the server end hands request frames to the pool.
    ``on_frame(conn, kind, msg_id, header, buffers)`` receives every frame.
    """

    def __init__(self, on_frame: FrameHandler, on_lost: Callable[[Connection], None] | None = None):
        self.on_frame = on_frame
        self.on_lost = on_lost
        self.address = ""
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.authenticated = True  # cleared by expect_token(): a pool with a token reads nothing else first
        self.same_user_only = False  # Unix sockets: refuse peers running as another OS user
        self._expected: bytes | None = None
        self._owner = ""
        self.pending: dict[int, asyncio.Future] = {}  # client side: msg_id -> reply future
        self.running: dict[int, asyncio.Task] = {}  # server side: msg_id -> running call
        self._next_id = 0
        self._buf = bytearray(_RECV_BUFFER)
        self._start = self._end = 0
        self._large: _LargeFrame | None = None
        self._out: list[bytes] = []
        self._corked = False
        self._paused = False
        self._drain_waiters: list[asyncio.Future] = []
        self._loop = asyncio.get_running_loop()

    def expect_token(self, token: str, owner: str) -> None:
        """Read nothing from this connection but one small ``AUTH`` frame showing ``token``, first.

        Anything else first, or a wrong token, is refused: a short text frame
        says why, reading stops, and the connection closes after a delay. So
        a stranger's bytes are neither buffered beyond a few hundred nor unpickled.
        """
        self.authenticated = False
        self._expected = token.encode()
        self._owner = owner

    # -- connection events -------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        if self.same_user_only and not _peer_is_this_user(transport):
            logger.warning("%s refused a Unix socket connection from another OS user", self._owner or "a pool")
            transport.abort()  # type: ignore[attr-defined]
            return
        transport.set_write_buffer_limits(high=_HIGH_WATER)  # type: ignore[attr-defined]

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        reason = f"connection to {self.address or 'peer'} closed" + (f": {exc}" if exc else "")
        pending, self.pending = self.pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(ServerClosed(reason))
        for task in list(self.running.values()):
            task.cancel()
        self._wake_drainers()
        if self.on_lost is not None:
            self.on_lost(self)

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        self._wake_drainers()

    def _wake_drainers(self) -> None:
        waiters, self._drain_waiters = self._drain_waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)

    async def drain(self) -> None:
        if self._paused and not self.closed:
            fut = self._loop.create_future()
            self._drain_waiters.append(fut)
            await fut

    # -- receiving ---------------------------------------------------------
    def get_buffer(self, sizehint: int) -> memoryview:
        if self._large is not None:
            return self._large.target()
        if self._end == len(self._buf):
            self._compact()
        return memoryview(self._buf)[self._end :]

    def _compact(self) -> None:
        """Move unparsed bytes to the front, growing the buffer if they fill it."""
        pending = self._buf[self._start : self._end]
        if len(pending) * 2 > len(self._buf):
            self._buf = bytearray(len(pending) * 2)
        # same-length slice assignment: allowed while get_buffer's views live
        self._buf[: len(pending)] = pending
        self._start, self._end = 0, len(pending)

    def buffer_updated(self, nbytes: int) -> None:
        large = self._large
        if large is not None:
            large.advance(nbytes)
            if large.complete:
                self._large = None
                self._deliver(large.kind, large.msg_id, large.parts[0], large.parts[1:])
            return
        self._end += nbytes
        if self._corked:
            self._parse()
            return
        self._corked = True  # replies sent while parsing leave in one write
        try:
            self._parse()
        finally:
            self._corked = False
            self._flush()

    def _parse(self) -> None:
        if not self.authenticated and not self._check_token():
            return
        buf = self._buf
        while self._end - self._start >= _PREFIX.size:
            start = self._start
            kind, msg_id, header_len, nbuf = _PREFIX.unpack_from(buf, start)
            pos = start + _PREFIX.size
            if nbuf == 0 and pos + header_len <= self._end:  # the common small message
                self._start = pos + header_len
                self._deliver(kind, msg_id, buf[pos : self._start], [])
                continue
            if self._end < pos + 8 * nbuf:
                break
            sizes = [header_len, *struct.unpack_from(f"<{nbuf}Q", buf, pos)]
            pos += 8 * nbuf
            total = pos - start + sum(sizes)
            if total > _RECV_BUFFER:
                self._begin_large(kind, msg_id, sizes, pos)
                return
            if self._end - start < total:
                break
            parts = []
            for size in sizes:
                parts.append(buf[pos : pos + size])
                pos += size
            self._start = pos
            self._deliver(kind, msg_id, parts[0], parts[1:])
        if self._start == self._end:
            self._start = self._end = 0
        elif len(self._buf) - self._end < _PREFIX.size:
            self._compact()

    def _check_token(self) -> bool:
        """Whether the first frame, an ``AUTH`` frame, showed the expected token (False: not yet, or refused)."""
        if self._end - self._start < _PREFIX.size or self.closed:
            return False
        kind, _, length, nbuf = _PREFIX.unpack_from(self._buf, self._start)
        if kind != AUTH_KIND or nbuf or length > MAX_TOKEN_BYTES:
            self.refuse(f"{self._owner} requires a token: set MARS_TOKEN or call mars.oscar.set_token() with "
                        "the cluster's token before connecting")
            return False
        end = self._start + _PREFIX.size + length
        if self._end < end:
            return False
        offered = bytes(self._buf[end - length : end])
        self._start = end
        assert self._expected is not None
        if not hmac.compare_digest(offered, self._expected):
            self.refuse(f"{self._owner} refused the token this process showed: it is not the cluster's")
            return False
        self.authenticated, self._expected = True, None
        return True

    def refuse(self, reason: str) -> None:
        """Say why in a text frame, stop reading, and close after :data:`REFUSAL_DELAY`."""
        logger.warning("%s", reason)
        self._start = self._end = 0
        if self.transport is None or self.transport.is_closing():
            return
        self.transport.write(_PREFIX.pack(AUTH_KIND, 0, len(reason.encode()), 0) + reason.encode())
        self.transport.pause_reading()  # type: ignore[attr-defined]
        self._loop.call_later(REFUSAL_DELAY, self.close)

    def _begin_large(self, kind: int, msg_id: int, sizes: list[int], pos: int) -> None:
        large = _LargeFrame(kind, msg_id, sizes)
        with memoryview(self._buf) as view:
            large.fill(view[pos : self._end])
        self._start = self._end = 0
        if large.complete:
            self._deliver(kind, msg_id, large.parts[0], large.parts[1:])
        else:
            self._large = large

    def _deliver(self, kind: int, msg_id: int, header: Any, buffers: list) -> None:
        try:
            self.on_frame(self, kind, msg_id, header, buffers)
        except Exception:  # a handler bug must not kill the connection silently
            import logging

            logging.getLogger(__name__).exception("error handling frame %s on %s", kind, self.address)

    # -- sending -----------------------------------------------------------
    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def send(self, kind: int, msg_id: int, header: bytes, buffers: list | tuple = ()) -> bool:
        """Queue one frame; returns True when it was large and the caller should drain."""
        if self.closed or self.transport is None:
            raise ServerClosed(f"connection to {self.address or 'peer'} is closed")
        if buffers:
            sizes = [b.nbytes for b in buffers]
            prefix = _PREFIX.pack(kind, msg_id, len(header), len(buffers))
            prefix += struct.pack(f"<{len(buffers)}Q", *sizes)
            small = len(header) + sum(sizes) <= _SMALL_FRAME
        else:
            prefix = _PREFIX.pack(kind, msg_id, len(header), 0)
            small = len(header) <= _SMALL_FRAME
        if small:
            data = b"".join((prefix, header, *buffers))
            if self._corked:
                self._out.append(data)
            elif len(self.pending) > 1:
                # other requests are in flight, so more frames are likely to
                # follow in this loop iteration: send them in one write
                self._corked = True
                self._out.append(data)
                self._loop.call_soon(self._uncork)
            else:
                self.transport.write(data)
            return False
        self._flush()
        self.transport.write(prefix + header)
        for b in buffers:
            self.transport.write(b)
        return True

    def _uncork(self) -> None:
        self._corked = False
        self._flush()

    def _flush(self) -> None:
        out, self._out = self._out, []
        if out and not self.closed and self.transport is not None:
            self.transport.write(out[0] if len(out) == 1 else b"".join(out))

    def close(self) -> None:
        if self.transport is not None and not self.closed:
            self._flush()
            self.transport.close()


# -- addresses, servers and connecting ---------------------------------------

def unix_path(address: str) -> str:
    """The Unix socket a pool listening on TCP ``address`` also listens on."""
    if sys.platform.startswith("linux"):
        return "\0mars-oscar/" + address
    safe = address.replace(":", "_").replace("/", "_").replace("[", "").replace("]", "")
    return f"{tempfile.gettempdir()}/mars-oscar-{safe}.sock"


def split_address(address: str) -> tuple[str, int]:
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"actor pool address must be 'host:port', got {address!r}")
    return host.strip("[]"), int(port)


async def serve(
    address: str, factory: Callable[[], Connection], tls: ssl.SSLContext | None = None
) -> tuple[str, list]:
    """Listen on TCP ``address`` (port 0 picks one; TLS with ``tls``) and on its Unix socket.

    Returns the address actually bound and the servers.
    """
    loop = asyncio.get_running_loop()
    host, port = split_address(address)
    try:
        tcp = await loop.create_server(factory, host, port, reuse_address=True, ssl=tls)
    except OSError as e:
        raise OSError(e.errno, f"cannot listen on {address}: {e.strerror or e}") from None
    bound_port = tcp.sockets[0].getsockname()[1]
    address = f"[{host}]:{bound_port}" if ":" in host else f"{host}:{bound_port}"
    servers: list[asyncio.AbstractServer] = [tcp]
    unix = await _serve_unix(loop, unix_path(address), factory)
    if unix is not None:
        servers.append(unix)
    return address, servers


async def _serve_unix(loop, path: str, factory) -> asyncio.AbstractServer | None:
    def same_user_factory() -> Connection:
        conn = factory()
        conn.same_user_only = True  # an abstract socket has no file permissions to keep others out
        return conn

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        if not path.startswith("\0") and os.path.exists(path):
            os.unlink(path)  # left by a pool that was killed
        sock.bind(path)
        sock.listen(1024)
        sock.setblocking(False)
        return await loop.create_unix_server(same_user_factory, sock=sock)
    except OSError:
        sock.close()  # Unix sockets are only a fast path: TCP still serves
        return None


def remove_unix_socket(address: str) -> None:
    path = unix_path(address)
    if not path.startswith("\0"):
        try:
            os.unlink(path)
        except OSError:
            pass


def _peer_is_this_user(transport: asyncio.BaseTransport) -> bool:
    """Whether the process at the other end of a Unix socket runs as this process's user."""
    sock = transport.get_extra_info("socket")
    if sock is None or not hasattr(socket, "SO_PEERCRED"):
        return True  # no way to ask here (not Linux): the socket file's directory guards it
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _, uid, _ = struct.unpack("3i", creds)
    return uid == os.geteuid()


async def open_connection(
    address: str, factory: Callable[[], Connection], timeout: float = 30.0, tls: ssl.SSLContext | None = None
) -> Connection:
    """Connect to a pool: its Unix socket when it is on this host, else TCP (with ``tls``, TLS).

    ``tcp://host:port`` forces TCP.
    """
    loop = asyncio.get_running_loop()
    force_tcp = address.startswith("tcp://")
    target = address[6:] if force_tcp else address
    host, port = split_address(target)
    if not force_tcp:
        unix_conn = await _try_unix(loop, target, factory)
        if unix_conn is not None:
            unix_conn.address = address
            return unix_conn
    try:
        _, conn = await asyncio.wait_for(
            loop.create_connection(factory, host, port, ssl=tls, server_hostname=host if tls else None), timeout
        )
    except (OSError, asyncio.TimeoutError) as e:  # ssl.SSLError is an OSError
        raise ServerClosed(f"cannot connect to actor pool at {address}: {e or type(e).__name__}") from e
    conn.address = address
    return conn


_UNIX_BACKLOG_WAIT = 5.0


async def _try_unix(loop: asyncio.AbstractEventLoop, address: str, factory) -> Connection | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.setblocking(False)
    path = unix_path(address)
    try:
        try:
            sock.connect(path)
        except BlockingIOError:
            # The listener's backlog is full: wait for room in a thread, never on the loop.
            sock.settimeout(_UNIX_BACKLOG_WAIT)
            await loop.run_in_executor(None, sock.connect, path)
            sock.setblocking(False)
    except OSError:
        sock.close()
        return None
    _, conn = await loop.create_unix_connection(factory, sock=sock)
    return conn
