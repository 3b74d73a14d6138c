"""What the web server and its client agree on: binary frames and the error format.

A binary body (``application/octet-stream``) is one serialized Python object::

    b"MRS1" | u32 header length | u32 buffer count | u64 size of each buffer
    | header (the pickle stream) | each out-of-band buffer, starting at a multiple of 64

so numpy/pandas buffers go to the socket as they are and come back as views
of the received body, aligned for SIMD kernels. An error is always JSON::

    {"error": {"type": "SessionNotFound", "message": "...", "traceback": "..."}}

and the client raises the class that ``type`` names again.
"""

from __future__ import annotations

import builtins
import collections
import struct
import traceback
from typing import Any, Sequence, Union

import aiohttp

from ...serialization import SerializationError, deserialize_async, serialize_async
from .. import errors as service_errors
from ..errors import ServiceError

BINARY = "application/octet-stream"
JSON = "application/json"
MAGIC = b"MRS1"
_PREFIX = struct.Struct("<4sII")
_SIZE = struct.Struct("<Q")
_ALIGN = 64
#: a body this small is sent as one joined bytes object: one write, one syscall
JOIN_BELOW = 1 << 20

Part = Union[bytes, bytearray, memoryview]


class WebError(ServiceError):
    """The web service answered with an error (or could not be reached)."""


class BadRequest(WebError, ValueError):
    """A request's body, query or path broke the web API's rules (HTTP 400)."""


class Unauthorized(WebError, PermissionError):
    """A request did not carry the cluster's token (HTTP 401)."""


class Forbidden(WebError, PermissionError):
    """A request came from where the server takes none: a foreign Origin or Host, a CORS preflight (HTTP 403)."""


class UnsupportedMediaType(WebError, ValueError):
    """A request body's Content-Type is not the one its route reads (HTTP 415)."""


class PayloadTooLarge(WebError, ValueError):
    """A request body was larger than the server accepts (HTTP 413)."""


class SupervisorUnavailable(WebError, ConnectionError):
    """The web service is up but cannot reach the cluster's supervisor: starting, or gone (HTTP 503)."""


class WebConnectionError(WebError, ConnectionError):
    """The web service could not be reached, or dropped the connection."""


# ---------------------------------------------------------------------- frames
def _pad(offset: int) -> int:
    return -offset % _ALIGN


async def pack(obj: Any) -> tuple[list[Part], int]:
    """``obj`` as the parts of a binary frame (buffers not copied) and their total size.

    Examples
    --------
    >>> import asyncio, numpy as np
    >>> parts, size = asyncio.run(pack([np.arange(3)]))
    >>> asyncio.run(unpack(b"".join(parts)))[0].tolist()
    [0, 1, 2]
    """
    header, buffers = await serialize_async(obj)
    prefix = _PREFIX.pack(MAGIC, len(header), len(buffers)) + b"".join(_SIZE.pack(b.nbytes) for b in buffers)
    parts: list[Part] = [prefix, header]
    offset = len(prefix) + len(header)
    for buf in buffers:
        pad = _pad(offset)
        if pad:
            parts.append(bytes(pad))
        parts.append(buf)
        offset += pad + buf.nbytes
    return parts, offset


async def pack_joined(obj: Any) -> bytes:
    parts, _ = await pack(obj)
    return b"".join(parts)


async def unpack(body: bytes | bytearray | memoryview) -> Any:
    """The object in a binary frame; :class:`BadRequest` naming what is wrong with it.

    Buffers come back as views of ``body``: pass a bytearray to get writable arrays.
    """
    view = memoryview(body).cast("B")
    if view.nbytes < _PREFIX.size:
        raise BadRequest(f"binary body is truncated: {view.nbytes} bytes, shorter than the {_PREFIX.size}-byte prefix")
    magic, header_len, n_buffers = _PREFIX.unpack_from(view)
    if magic != MAGIC:
        raise BadRequest(f"binary body must start with {MAGIC!r} (see docs/web-api.md), got {bytes(magic)!r}")
    offset = _PREFIX.size + n_buffers * _SIZE.size
    if offset > view.nbytes:
        raise BadRequest(f"binary body is truncated: {n_buffers} buffer sizes declared, body has {view.nbytes} bytes")
    sizes = [_SIZE.unpack_from(view, _PREFIX.size + i * _SIZE.size)[0] for i in range(n_buffers)]
    header = view[offset : offset + header_len]
    offset += header_len
    buffers = []
    for size in sizes:
        offset += _pad(offset)
        buffers.append(view[offset : offset + size])
        offset += size
    if offset > view.nbytes:
        raise BadRequest(f"binary body is truncated: its header declares {offset} bytes, the body has {view.nbytes}")
    try:
        # a memoryview header is read like bytes, without copying it out of the body
        return await deserialize_async(header, buffers)  # type: ignore[arg-type]
    except SerializationError as e:
        raise BadRequest(f"binary body does not unpickle: {e}") from e


async def read_body(stream: aiohttp.StreamReader, length: int | None, limit: int) -> bytearray:
    """Read a whole HTTP body into one writable buffer, refusing more than ``limit`` bytes.

    aiohttp's own ``read()`` returns immutable bytes, so arrays unpickled from
    it would be read-only; reading into a bytearray costs the same one copy.
    The buffer grows only as bytes arrive: a declared ``length`` is a claim,
    and allocating it up front let a few idle connections announcing 1 GiB
    each take gigabytes of memory. ``length`` is None where the stream hands
    over decoded bytes (a Content-Encoding), which the limit then counts.
    """
    if length is not None and length > limit:
        raise PayloadTooLarge(f"body of {length} bytes is over the server's limit of {limit} bytes")
    data = bytearray()
    while True:
        chunk = await stream.readany()
        if not chunk:
            break
        data += chunk  # a big bytearray grows by realloc, which moves pages rather than copying them
        if len(data) > limit:
            raise PayloadTooLarge(f"body is over the server's limit of {limit} bytes")
    if length is not None and len(data) != length:
        raise BadRequest(f"body ended after {len(data)} of the {length} bytes its Content-Length declares")
    return data


def minus_each(keys: Sequence[str], drop: Sequence[str]) -> list[str]:
    """``keys`` less ``drop``, one for one (a key twice in ``keys`` and once in ``drop`` stays once).

    A release answers with the keys it did not release; each side recovers the other list with this.

    >>> minus_each(["a", "b", "a", "c"], ["a", "c"])
    ['b', 'a']
    """
    left = collections.Counter(drop)
    out = []
    for k in keys:
        if left[k] > 0:
            left[k] -= 1
        else:
            out.append(k)
    return out


# ---------------------------------------------------------------------- errors
#: JSON error type → HTTP status; anything else is a 500
STATUS_OF = {
    "SessionNotFound": 404,
    "TaskNotFound": 404,
    "DataNotFound": 404,
    "NodeNotFound": 404,
    "NotFound": 404,
    "BadRequest": 400,
    "Unauthorized": 401,
    "Forbidden": 403,
    "MethodNotAllowed": 405,
    "PayloadTooLarge": 413,
    "UnsupportedMediaType": 415,
    "TaskCancelled": 409,
    "NoWorkersError": 503,
    "SupervisorUnavailable": 503,
}

_WEB_ERRORS: dict[str, type[BaseException]] = {
    "BadRequest": BadRequest,
    "Unauthorized": Unauthorized,
    "PayloadTooLarge": PayloadTooLarge,
    "Forbidden": Forbidden,
    "UnsupportedMediaType": UnsupportedMediaType,
    "SupervisorUnavailable": SupervisorUnavailable,
    "NotFound": WebError,
    "MethodNotAllowed": WebError,
}
#: builtin errors that the API may raise itself; they come back as themselves
_BUILTINS = ("ValueError", "TypeError", "KeyError", "TimeoutError", "NotImplementedError", "RuntimeError")


def error_json(exc: BaseException, with_traceback: bool = True) -> dict:
    """The ``{"error": {...}}`` body for ``exc``."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)) if with_traceback else ""
    return {"error": {"type": type(exc).__name__, "message": str(exc), "traceback": text}}


def status_of(exc: BaseException) -> int:
    return STATUS_OF.get(type(exc).__name__, 500)


def error_class(name: str) -> type[BaseException] | None:
    """The class that a JSON error ``type`` names on this side, if it is one we raise again."""
    if name in _WEB_ERRORS:
        return _WEB_ERRORS[name]
    cls = getattr(service_errors, name, None)
    if isinstance(cls, type) and issubclass(cls, ServiceError):
        return cls
    if name in _BUILTINS:
        return getattr(builtins, name)  # type: ignore[no-any-return]
    return None


def exception_from(status: int, body: Any) -> BaseException:
    """Rebuild the error a server answered with; its traceback rides along as a note."""
    err = body.get("error") if isinstance(body, dict) else None
    if not isinstance(err, dict):
        return WebError(f"HTTP {status} with a body that is not the web API's error format: {str(body)[:200]!r}")
    name, message = str(err.get("type", "")), str(err.get("message", ""))
    cls = error_class(name)
    exc = cls(message) if cls is not None else WebError(f"{name}: {message}")
    remote_tb = str(err.get("traceback") or "").rstrip()
    if remote_tb:
        note = f"[remote traceback from the web service, HTTP {status}]\n{remote_tb}"
        if hasattr(exc, "add_note"):
            exc.add_note(note)
        else:  # Python 3.10: show it as the cause
            exc.__cause__ = WebError(note)
    return exc
