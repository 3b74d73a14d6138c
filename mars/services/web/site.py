"""The listening socket of the web service, whose connections must send their headers in time.

aiohttp closes a connection that stays idle past ``keepalive_timeout`` but has
no limit of its own on how long a new connection may take to send a request's
headers: a client sending one byte every few seconds (slowloris) holds its
connection, and a few thousand such clients hold every file descriptor. Here
each connection gets a timer when it is accepted, cancelled when aiohttp has
parsed its first request's headers; on a kept-alive connection aiohttp's own
``keepalive_timeout`` then bounds the wait for each next request (it closes a
connection still waiting for a request's headers at that time).
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

from aiohttp import web
from yarl import URL


class HeaderDeadlines:
    """A protocol factory for ``loop.create_server``: aiohttp's, plus a timer per connection.

    It also wraps ``server.request_factory`` (which aiohttp calls once a
    request's headers are parsed) to cancel that connection's timer.
    """

    def __init__(self, server: web.Server, timeout: float, loop: asyncio.AbstractEventLoop):
        self._server, self._timeout, self._loop = server, timeout, loop
        self._timers: dict[web.RequestHandler, asyncio.TimerHandle] = {}
        parse_done = server.request_factory

        def make_request(message: Any, payload: Any, protocol: web.RequestHandler, writer: Any, task: Any) -> Any:
            timer = self._timers.pop(protocol, None)
            if timer is not None:
                timer.cancel()
            return parse_done(message, payload, protocol, writer, task)

        # each connection's handler copies this attribute when it is made, so it is set before any
        server.request_factory = make_request

    def __call__(self) -> web.RequestHandler:
        protocol = self._server()
        self._timers[protocol] = self._loop.call_later(self._timeout, self._expire, protocol)
        return protocol

    def cancel_all(self) -> None:
        """Drop every timer (the server is stopping: its connections are being closed anyway)."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()

    def _expire(self, protocol: web.RequestHandler) -> None:
        self._timers.pop(protocol, None)
        if protocol.transport is not None:  # None: the client left already (or TLS never finished)
            protocol.force_close()


class DeadlineSite(web.BaseSite):
    """Like ``web.TCPSite``, with :class:`HeaderDeadlines` on each connection (and on the TLS handshake)."""

    __slots__ = ("_header_timeout", "_host", "_port", "deadlines")

    def __init__(self, runner: web.BaseRunner, host: str, port: int, *, header_timeout: float,
                 ssl_context: ssl.SSLContext | None = None):
        super().__init__(runner, ssl_context=ssl_context)
        self._host, self._port, self._header_timeout = host, port, header_timeout
        self.deadlines: HeaderDeadlines | None = None

    @property
    def name(self) -> str:
        scheme = "https" if self._ssl_context else "http"
        return str(URL.build(scheme=scheme, host=self._host or "0.0.0.0", port=self._port))

    async def start(self) -> None:
        await super().start()
        loop = asyncio.get_running_loop()
        server = self._runner.server
        assert server is not None  # BaseSite refuses a runner that is not set up
        self.deadlines = HeaderDeadlines(server, self._header_timeout, loop)
        self._server = await loop.create_server(
            self.deadlines, self._host, self._port, ssl=self._ssl_context, backlog=self._backlog,
            # a TLS handshake is sent before the headers: the same time bounds it
            ssl_handshake_timeout=self._header_timeout if self._ssl_context else None,
        )

    async def stop(self) -> None:
        await super().stop()
        if self.deadlines is not None:
            self.deadlines.cancel_all()
