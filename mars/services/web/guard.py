"""Refusals made before the token is looked at and before a body is read: keeping browsers out.

A web page on any site can make its visitor's browser send requests to a
cluster that the visitor's machine reaches (a cross-site request), and with a
DNS name its owner points at the cluster's address (DNS rebinding) it can even
read the answers. The web API unpickles what it is sent, so either would run
the page's code in the cluster. Three rules stop that:

* **Host**: the request must name this server by an IP literal, ``localhost``,
  this machine's own names, the bound or advertised host, or a name in
  ``allow_hosts``. A rebinding page's requests carry the attacker's DNS name.
* **Origin**: a request that a browser sends for a page of another site
  carries that site's origin; only the server's own origin and those in
  ``allow_origins`` pass. Python clients and curl send no Origin.
* **Content-Type**: a body must be the type its route reads (JSON or the
  binary frame). Neither is one that a browser sends cross-site without first
  asking with an ``OPTIONS`` preflight, and every ``OPTIONS`` gets 403.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from .wire import BadRequest, Forbidden, UnsupportedMediaType

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
#: (scheme, host, port) with the scheme's default port filled in
Origin = tuple[str, str, int]
_DEFAULT_PORTS = {"http": 80, "https": 443}
#: binds that listen everywhere: they name no host that a request would use
_WILDCARDS = frozenset({"", "0.0.0.0", "::"})


@dataclasses.dataclass(frozen=True)
class Policy:
    """Which Host names and Origins the server takes, and the body type each route reads.

    ``body_types`` maps ``(method, route)`` (the route as declared, e.g.
    ``/api/sessions/{sid}/tasks``) to the one Content-Type its body may have.
    """

    hosts: frozenset[str]
    origins: frozenset[Origin]
    any_host: bool = False
    any_origin: bool = False
    body_types: Mapping[tuple[str, str], str] = dataclasses.field(default_factory=dict)


def make_policy(
    bound_host: str,
    advertise: str | None = None,
    allow_hosts: Sequence[str] = (),
    allow_origins: Sequence[str] = (),
    body_types: Mapping[tuple[str, str], str] | None = None,
) -> Policy:
    """The policy of a server bound to ``bound_host``; ``"*"`` in a list allows anything.

    Examples
    --------
    >>> policy = make_policy("127.0.0.1", allow_origins=["https://ops.example"])
    >>> host_allowed(policy, "localhost"), host_allowed(policy, "evil.example")
    (True, False)
    >>> ("https", "ops.example", 443) in policy.origins
    True
    """
    for name, values in (("allow_hosts", allow_hosts), ("allow_origins", allow_origins)):
        if isinstance(values, str):
            raise TypeError(f"{name} must be a list of strings, got the string {values!r}")
    hosts = {"localhost", socket.gethostname(), socket.getfqdn(), bound_host}
    if advertise:
        hosts.add(split_host(advertise, "advertise")[0])
    names = [h for h in allow_hosts if h != "*"]
    hosts.update(split_host(h, "allow_hosts")[0] for h in names)
    origins = frozenset(_allowed_origin(o) for o in allow_origins if o != "*")
    return Policy(
        hosts=frozenset(_norm(h) for h in hosts if h not in _WILDCARDS),
        origins=origins,
        any_host="*" in allow_hosts,
        any_origin="*" in allow_origins,
        body_types=dict(body_types or {}),
    )


def _norm(host: str) -> str:
    # "LocalHost." and "localhost" are one name to DNS
    return host.strip("[]").lower().rstrip(".")


def split_host(value: str, what: str = "Host") -> tuple[str, int | None]:
    """``host[:port]`` (an IPv6 literal in brackets) as ``(host, port)``; ValueError naming ``what``.

    >>> split_host("[::1]:7103"), split_host("Example.org")
    (('::1', 7103), ('example.org', None))
    """
    text = value.strip()
    host, port = text, ""
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        if rest and not rest.startswith(":"):
            raise ValueError(f"{what} must be host[:port], got {value!r}")
        port = rest[1:]
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    if not host or any(c in host for c in "/@ \t\\") or (port and not port.isdigit()):
        raise ValueError(f"{what} must be host[:port], got {value!r}")
    return _norm(host), int(port) if port else None


def parse_origin(value: str) -> Origin | None:
    """An Origin header as ``(scheme, host, port)``; None when it is no http(s) origin (``null``, say)."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/"):
        return None
    return parts.scheme, _norm(parts.hostname), port or _DEFAULT_PORTS[parts.scheme]


def _allowed_origin(value: str) -> Origin:
    origin = parse_origin(value) if isinstance(value, str) else None
    if origin is None:
        raise ValueError(f"allow_origins entries must be '*' or scheme://host[:port] (http or https), got {value!r}")
    return origin


def host_allowed(policy: Policy, host: str) -> bool:
    """Whether ``host`` (no port) names this server: any IP literal does, a name only when listed.

    A DNS-rebinding page reaches the server through a DNS name its author
    controls, so a request naming an IP address cannot be one.
    """
    if policy.any_host:
        return True
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return _norm(host) in policy.hosts


# ---------------------------------------------------------------------- the checks
def check_request(policy: Policy, request: web.Request) -> None:
    """Raise the error (400, 403, 415) that ``request`` earns before anything else looks at it."""
    host, port = _request_host(policy, request)
    if request.method == "OPTIONS":
        raise Forbidden("OPTIONS is refused: this API answers no CORS preflight, so browsers on other sites "
                        "cannot call it")
    origin = _only(request, "Origin")
    if origin is not None:
        _check_origin(policy, origin, (request.scheme, host, port or _DEFAULT_PORTS[request.scheme]))
    _check_body_type(policy, request)


def _only(request: web.Request, name: str) -> str | None:
    values = request.headers.getall(name, [])
    if len(values) > 1:
        raise BadRequest(f"a request may carry one {name} header, got {len(values)}: {values[:3]}")
    return values[0] if values else None


def _request_host(policy: Policy, request: web.Request) -> tuple[str, int | None]:
    raw = _only(request, "Host")
    if raw is None:
        raise BadRequest("the request has no Host header (HTTP/1.1 needs one)")
    try:
        host, port = split_host(raw)
    except ValueError as e:
        raise BadRequest(str(e)) from None
    if not host_allowed(policy, host):
        raise Forbidden(f"Host {raw!r} does not name this server: use its IP address or a name in allow_hosts "
                        "(a foreign name is how DNS rebinding reaches a server)")
    return host, port


def _check_origin(policy: Policy, raw: str, own: Origin) -> None:
    origin = parse_origin(raw)
    if policy.any_origin or (origin is not None and (origin == own or origin in policy.origins)):
        return
    scheme, host, port = own
    host = f"[{host}]" if ":" in host else host
    raise Forbidden(f"a request from Origin {raw!r} is refused: it is not this server's own origin "
                    f"({scheme}://{host}:{port}) nor in allow_origins (pages of other sites may not call this API)")


def _check_body_type(policy: Policy, request: web.Request) -> None:
    if not request.body_exists:
        return  # nothing to misread: the route answers a missing body itself
    resource = request.match_info.route.resource
    route = resource.canonical if resource is not None else None
    expected = policy.body_types.get((request.method, route or ""))
    if expected is None:
        return
    raw = _content_type(request)
    if raw is None or raw.split(";", 1)[0].strip().lower() != expected:
        got = "no Content-Type" if raw is None else f"Content-Type {raw!r}"
        raise UnsupportedMediaType(f"{request.method} {route} takes a body of Content-Type {expected}, got {got}")


def _content_type(request: web.Request) -> str | None:
    try:
        return _only(request, "Content-Type")
    except BadRequest as e:
        raise UnsupportedMediaType(str(e)) from None


def middleware(policy: Policy) -> Any:
    """The aiohttp middleware applying ``policy`` to every request, the dashboard's files included."""

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        check_request(policy, request)
        return await handler(request)

    return guard
