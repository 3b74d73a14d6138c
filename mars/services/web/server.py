"""The web service: the cluster's REST API, served by aiohttp in the supervisor process.

Requests pass three middlewares before a handler (see :mod:`.routes`): one
turns every error into the API's JSON error format; the guard (:mod:`.guard`)
refuses foreign Hosts and Origins, CORS preflights and bodies of the wrong
Content-Type; the last refuses requests without the cluster's token. All of
them answer before anything is read or unpickled.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hmac
import ipaddress
import logging
import ssl
from typing import Any, Awaitable, Callable, Sequence

from aiohttp import web

from ...oscar.errors import ServerClosed
from ..session.api import SessionAPI
from . import dashboard, guard, metrics, observe
from .routes import API_KEY, BODY_LIMIT_KEY, BODY_TYPES, SUPERVISORS_KEY, is_probe, routes
from .site import DeadlineSite
from .wire import SupervisorUnavailable, Unauthorized, WebError, error_json, status_of

logger = logging.getLogger(__name__)

#: graphs may embed numpy data, so bodies may be big
DEFAULT_MAX_BODY = 1 << 30
#: on stop, requests still running (a long ``wait``) get this long before they are cut
SHUTDOWN_TIMEOUT = 1.0
#: the cookie that lets the dashboard's other tabs read the API (GET and HEAD only)
TOKEN_COOKIE = "mars_token"
#: seconds a wrong token waits for its 401: guessing costs the guesser
FAILED_TOKEN_DELAY = 0.2

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_HTTP_NAMES = {404: "NotFound", 405: "MethodNotAllowed", 413: "PayloadTooLarge"}
_READS = ("GET", "HEAD")


class WebServer:
    """A running web service: ``address`` ("host:port" as bound), ``url``, ``await stop()``."""

    def __init__(self, runner: web.AppRunner, host: str, port: int, api: Any, scheme: str = "http"):
        self._runner = runner
        self.api = api
        self.host, self.port = host, port
        bracketed = f"[{host}]" if ":" in host else host  # an IPv6 literal
        self.address = f"{bracketed}:{port}"
        self.url = f"{scheme}://{bracketed}:{port}"

    async def stop(self) -> None:
        """Close the listening socket and every connection; idempotent."""
        await self._runner.cleanup()

    async def __aenter__(self) -> WebServer:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()

    def __repr__(self) -> str:
        return f"<WebServer {self.url}>"


async def start_web_server(
    host: str,
    port: int,
    supervisors: Sequence[str],
    api_factory: Callable[[Sequence[str]], Any] = SessionAPI,
    *,
    token: str | None = None,
    insecure: bool = False,
    max_body_size: int = DEFAULT_MAX_BODY,
    allow_origins: Sequence[str] = (),
    allow_hosts: Sequence[str] = (),
    advertise: str | None = None,
    header_timeout: float = 30.0,
    keepalive_timeout: float = 75.0,
    ssl_context: ssl.SSLContext | None = None,
    metrics_token: str | None = None,
) -> WebServer:
    """Serve the web API on ``host:port`` (0: any free port) for a cluster's ``supervisors``.

    Parameters
    ----------
    host, port
        Where to listen.
    supervisors
        The cluster's supervisor addresses, handed to ``api_factory``.
    api_factory
        Makes the object whose async methods serve the requests (``SessionAPI``;
        tests pass ``MockSessionAPI``).
    token
        When set, every request must carry it (``Authorization: Bearer <token>``,
        ``?token=``, or for GET and HEAD the dashboard's cookie) or gets 401 and nothing runs.
    insecure
        Serve a non-loopback address without a token (anyone who can reach the
        port can then run code in the cluster).
    max_body_size
        Largest request body accepted, in bytes (413 above it), counted decoded.
    allow_origins
        Origins (``scheme://host[:port]``) of web pages allowed to call the API
        besides the server's own; ``"*"`` allows any.
    allow_hosts
        Host names that requests may name besides IP literals, ``localhost``,
        this machine's names and ``host``/``advertise``; ``"*"`` allows any.
    advertise
        The name clients use for this server, when it is none of the above.
    header_timeout
        Seconds a new connection has to send its first request's headers (and
        its TLS handshake); a slower one is closed.
    keepalive_timeout
        Seconds an idle kept-alive connection stays open.
    ssl_context
        Serve HTTPS with this server-side context.
    metrics_token
        A second, read-only token that opens ``GET /metrics`` and nothing else
        (for a Prometheus scraper, which then needs no cluster token).

    Examples
    --------
    >>> from mars.services.session.mock import MockSessionAPI
    >>> async def demo():
    ...     server = await start_web_server("127.0.0.1", 0, ["sup:1"], MockSessionAPI)
    ...     await server.stop()
    ...     return server.url.startswith("http://127.0.0.1:")
    >>> import asyncio; asyncio.run(demo())
    True
    """
    _check_security(host, token, insecure)
    if metrics_token is not None and (not isinstance(metrics_token, str) or not metrics_token):
        raise ValueError(f"metrics_token must be a non-empty string, got {metrics_token!r}")
    _check_limits(max_body_size=max_body_size, header_timeout=header_timeout, keepalive_timeout=keepalive_timeout)
    if ssl_context is not None and not isinstance(ssl_context, ssl.SSLContext):
        raise TypeError(f"ssl_context must be an ssl.SSLContext, got {type(ssl_context).__name__}")
    policy = guard.make_policy(host, advertise, allow_hosts, allow_origins, BODY_TYPES)
    middlewares: list[Any] = [_errors, guard.middleware(policy)]
    if token is not None:
        middlewares.append(_auth(token, metrics_token))
    app = web.Application(middlewares=middlewares, client_max_size=max_body_size)
    api = api_factory(list(supervisors))
    app[API_KEY] = api
    app[SUPERVISORS_KEY] = list(supervisors)
    app[BODY_LIMIT_KEY] = max_body_size
    app[observe.VIEW_KEY] = observe.ObservabilityView(list(supervisors))
    app.add_routes(routes)
    app.add_routes(observe.routes)
    app.add_routes(dashboard.routes)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=SHUTDOWN_TIMEOUT,
                           keepalive_timeout=keepalive_timeout)
    await runner.setup()
    try:
        await DeadlineSite(runner, host, port, header_timeout=header_timeout, ssl_context=ssl_context).start()
    except BaseException:
        await runner.cleanup()
        raise
    bound = runner.addresses[0]
    return WebServer(runner, host, int(bound[1]), api, "https" if ssl_context is not None else "http")


async def start_metrics_server(
    host: str,
    port: int,
    render: Callable[[], Awaitable[str]],
    *,
    token: str | None = None,
    insecure: bool = False,
    metrics_token: str | None = None,
    advertise: str | None = None,
    allow_hosts: Sequence[str] = (),
    ssl_context: ssl.SSLContext | None = None,
) -> WebServer:
    """Serve only ``GET /metrics`` (``render()``'s text) on ``host:port``: a worker's own figures.

    The same rules as the web API guard it: the cluster's token (or the
    read-only ``metrics_token``), and the Host and Origin checks.
    """
    _check_security(host, token, insecure)
    policy = guard.make_policy(host, advertise, allow_hosts, (), BODY_TYPES)
    middlewares: list[Any] = [_errors, guard.middleware(policy)]
    if token is not None:
        middlewares.append(_auth(token, metrics_token))

    async def page(request: web.Request) -> web.StreamResponse:
        return web.Response(body=(await render()).encode(), headers={"Content-Type": metrics.CONTENT_TYPE})

    app = web.Application(middlewares=middlewares, client_max_size=1 << 10)
    app.router.add_get(observe.METRICS_PATH, page)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=SHUTDOWN_TIMEOUT)
    await runner.setup()
    try:
        await DeadlineSite(runner, host, port, header_timeout=30.0, ssl_context=ssl_context).start()
    except BaseException:
        await runner.cleanup()
        raise
    return WebServer(runner, host, int(runner.addresses[0][1]), None, "https" if ssl_context is not None else "http")


def _check_limits(**limits: float) -> None:
    for name, value in limits.items():
        if not value > 0:
            raise ValueError(f"{name} must be positive, got {value}")


def _check_security(host: str, token: str | None, insecure: bool) -> None:
    if token is not None and (not isinstance(token, str) or not token):
        raise ValueError(f"token must be a non-empty string, got {token!r}")
    if token is None and not insecure and not _is_loopback(host):
        raise ValueError(
            f"a web service on {host!r} needs a token: anyone who reaches it can run code "
            "(pass token=..., or insecure=True to serve without one)"
        )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


@web.middleware
async def _errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every failure leaves as ``{"error": {"type", "message", "traceback"}}`` with its status."""
    resp = await _answer(request, handler)
    if not request.content.is_eof():
        # answered without reading the whole body (a 401, 413, 405...): close rather than read on through
        # a body that may be huge or broken, and that would otherwise end the kept-alive connection later
        resp.force_close()
    return resp


async def _answer(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except web.HTTPException as e:
        if e.status < 400:
            raise
        name = _HTTP_NAMES.get(e.status, "HTTPError")
        message = f"no route {request.method} {request.path} (see docs/web-api.md)" if e.status == 404 else e.reason
        body = {"error": {"type": name, "message": message, "traceback": ""}}
        return web.json_response(body, status=e.status)
    except ServerClosed as e:  # a supervisor not (yet, or any longer) there: no server stack explains that
        logger.warning("%s %s: the supervisor cannot be reached: %s", request.method, request.path, e)
        unavailable = SupervisorUnavailable(f"the cluster's supervisor cannot be reached ({e}): it may be "
                                            "starting, or have stopped")
        return web.json_response(error_json(unavailable, with_traceback=False), status=503)
    except Exception as e:
        status = status_of(e)
        if status >= 500:
            logger.exception("%s %s failed", request.method, request.path)
        # a client's own mistake needs no server stack to explain it
        body = error_json(e, with_traceback=not isinstance(e, WebError))
        headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
        return web.json_response(body, status=status, headers=headers)


def _auth(token: str, metrics_token: str | None = None) -> Any:
    expected = token.encode()

    def matches(offered: str, wanted: bytes = expected) -> bool:
        # surrogatepass: a query may decode to lone surrogates, which are simply a wrong token
        return hmac.compare_digest(offered.encode("utf-8", "surrogatepass"), wanted)

    def scraper(request: web.Request) -> bool:
        """A read of /metrics with the read-only metrics token (it opens nothing else)."""
        if metrics_token is None or request.path != observe.METRICS_PATH or request.method not in _READS:
            return False
        offered = _offered(request)
        return offered is not None and matches(offered, metrics_token.encode())

    @web.middleware
    async def check_token(request: web.Request, handler: Handler) -> web.StreamResponse:
        if is_probe(request) or scraper(request):
            return await handler(request)
        if dashboard.is_public(request):
            resp = await handler(request)
            offered = request.query.get("token")
            if dashboard.is_page(request) and offered is not None and matches(offered):
                # the dashboard's other tabs have no ?token= in their URL: the cookie lets them read
                resp.set_cookie(TOKEN_COOKIE, token, path="/", httponly=True, samesite="Strict",
                                secure=request.secure)
            return resp
        problem = _token_problem(request, matches)
        if problem is not None:
            if problem.wrong:
                await asyncio.sleep(FAILED_TOKEN_DELAY)
            raise Unauthorized(problem.message)
        return await handler(request)

    return check_token


@dataclasses.dataclass(frozen=True)
class _Problem:
    message: str
    wrong: bool  # a token was offered, and it is not the cluster's


_NO_TOKEN = "this cluster needs its token: send 'Authorization: Bearer <token>' or add ?token=<token> to the URL"


def _offered(request: web.Request) -> str | None:
    """The token a request offers in its header (which wins) or its query; None when neither has one."""
    header = request.headers.get("Authorization", "")
    if header.startswith("Bearer "):
        return header[len("Bearer ") :].strip()
    return request.query.get("token")


def _token_problem(request: web.Request, matches: Callable[[str], bool]) -> _Problem | None:
    """Why ``request`` is not authenticated, or None when it is.

    A token offered in the header or the query decides. The cookie counts only
    for reading: a browser attaches it by itself, so it tells who the browser
    is, not that the dashboard (rather than some other page) sent the request.
    """
    offered = _offered(request)
    if offered is not None:
        return None if matches(offered) else _Problem(f"the token sent is wrong; {_NO_TOKEN}", wrong=True)
    cookie = request.cookies.get(TOKEN_COOKIE)
    if cookie is None:
        return _Problem(_NO_TOKEN, wrong=False)
    if not matches(cookie):
        return _Problem(f"the {TOKEN_COOKIE} cookie holds a wrong token; {_NO_TOKEN}", wrong=True)
    if request.method not in _READS:
        return _Problem(f"{request.method} needs the token in the 'Authorization: Bearer <token>' header: the "
                        f"{TOKEN_COOKIE} cookie authenticates only GET and HEAD", wrong=False)
    return None
