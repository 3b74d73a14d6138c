"""The HTTP client of the web API: the session API's methods, over one kept-alive connection.

:class:`WebClient` has the same async methods as
:class:`~mars.services.session.api.SessionAPI` and raises the same errors,
rebuilt from the server's JSON error (a chunk function's own exception comes
back as itself inside ``TaskInfo.error``). :class:`SyncWebClient` runs one on
an event loop thread of its own, for synchronous callers such as the client
session.
"""

from __future__ import annotations

import asyncio
import json
import logging
import mmap
import os
import re
import ssl as ssl_lib
import stat
import threading
import weakref
from typing import Any, Callable, Coroutine, Sequence
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import aiohttp

from ...core.entity import Tileable
from ...oscar.tls import client_context
from ...serialization import deserialize
from ..errors import DataNotFound, SessionNotFound
from ..storage.shm import (
    StoredObject,
    is_local_prefix,
    segment_path,
    segment_size,
    views_of,
)
from ..storage.upload import UploadTarget, upload_chunks
from ..task.api import TaskInfo
from .wire import (
    BINARY,
    BadRequest,
    WebConnectionError,
    WebError,
    exception_from,
    minus_each,
    pack,
    pack_joined,
    read_body,
    unpack,
)

logger = logging.getLogger(__name__)

#: replies are not limited in size: the client asked for them
_NO_LIMIT = 1 << 62


def split_url(url: str) -> tuple[str, str | None]:
    """``url`` without its ``token`` query parameter, and that token.

    >>> split_url("http://h:7103/?token=abc")
    ('http://h:7103', 'abc')
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"a web service URL looks like http://host:port, got {url!r}")
    query = parse_qsl(parts.query, keep_blank_values=True)
    token = next((v for k, v in query if k == "token"), None) or None
    rest = urlencode([(k, v) for k, v in query if k != "token"])
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), rest, "")), token


def _q(part: str) -> str:
    return quote(part, safe="")


def tls_context(ssl: ssl_lib.SSLContext | None = None) -> ssl_lib.SSLContext | None:
    """``ssl``, else the process's TLS settings (:func:`mars.oscar.set_tls`, else ``$MARS_TLS_CA``), else None
    (the system's CAs).

    >>> tls_context() is None or isinstance(tls_context(), ssl_lib.SSLContext)
    True
    """
    if ssl is not None:
        if not isinstance(ssl, ssl_lib.SSLContext):
            raise TypeError(f"ssl must be an ssl.SSLContext, got {type(ssl).__name__}")
        return ssl
    return client_context()


class ForeignSegment(ValueError):
    """A descriptor names no segment of this host's workers that this process may map."""


#: a worker's segment: its prefix (see StorageActor), "-", 32 hex digits; never a path, never a disk file
_SEGMENT = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_.-]*)-[0-9a-f]{32}")


def map_segment(desc: StoredObject) -> Any:
    """The value that ``desc`` describes, mapped from this host's shared memory, its arrays writable.

    Only a segment of a worker of this host is opened: a file named by the
    worker's prefix (one that a worker claimed in this host's shared memory)
    and a unique suffix, in the shared-memory directory, a regular file of
    this user as big as the descriptor says; never a path that the
    descriptor spells out. The mapping is private (copy on write): the
    arrays are writable, as values received over HTTP are, writes stay in
    this process, and the pages stay valid after the worker frees or spills
    the chunk. Raises ForeignSegment for a name that breaks those rules,
    DataNotFound for a segment gone meanwhile.

    Examples
    --------
    >>> from mars.services.storage.shm import StoredObject
    >>> map_segment(StoredObject("k", 9, b"", (9,), "../../etc/passwd"))
    Traceback (most recent call last):
    ...
    mars.services.web.client.ForeignSegment: chunk k: '../../etc/passwd' is not a segment of this host's workers
    """
    name = desc.shm_name or ""
    m = _SEGMENT.fullmatch(name)
    if m is None or desc.device is not None or not is_local_prefix(m.group(1)):
        raise ForeignSegment(f"chunk {desc.key}: {name!r} is not a segment of this host's workers")
    size = segment_size(desc)
    try:  # no link followed, no FIFO waited on
        fd = os.open(segment_path(name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise DataNotFound(f"chunk {desc.key}: its shared memory segment {name} is gone") from None
    except PermissionError:  # the worker runs as another user
        raise ForeignSegment(f"chunk {desc.key}: segment {name} is not a file of this user") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_size < size:
            raise ForeignSegment(f"chunk {desc.key}: segment {name} is not a file of this user as big as its "
                                 "descriptor says")
        mm = mmap.mmap(fd, size, access=mmap.ACCESS_COPY)
    finally:
        os.close(fd)  # the mapping keeps the pages
    return deserialize(*views_of(desc, mm))


def _described(reply: Any, n: int) -> tuple[list[Any], dict[int, StoredObject]]:
    """The values and segment descriptors of a fetch answered with descriptors (see routes._described)."""
    if not (isinstance(reply, dict) and isinstance(reply.get("values"), list) and len(reply["values"]) == n
            and isinstance(reply.get("segments"), dict)
            and all(isinstance(i, int) and 0 <= i < n and isinstance(d, StoredObject)
                    for i, d in reply["segments"].items())):
        raise WebError(f"the web service's answer to a fetch of {n} chunks is malformed")
    return reply["values"], reply["segments"]


class WebClient:
    """The session API over HTTP.

    Parameters
    ----------
    url
        ``http://host:web_port``, optionally with ``?token=...``.
    token
        The cluster's token (overrides one in the URL).
    timeout
        Seconds to connect, and to wait for each reply beyond a request's own ``wait``.
    ssl
        For ``https://`` URLs: the context that checks the server's certificate.
        By default, one trusting the CA file that ``$MARS_TLS_CA`` names, else
        the system's CAs.

    Examples
    --------
    >>> async def demo(url):                              # doctest: +SKIP
    ...     async with WebClient(url) as client:
    ...         sid = await client.create_session()
    ...         return await client.list_sessions()
    """

    #: map what workers of this host hold in shared memory rather than receive it (see :meth:`fetch`)
    map_shared_memory = True

    def __init__(self, url: str, token: str | None = None, timeout: float = 60.0, *,
                 ssl: ssl_lib.SSLContext | None = None):
        self.url, url_token = split_url(url)
        self.token = token or url_token
        self.timeout = float(timeout)
        self._ssl = tls_context(ssl)
        self._http: aiohttp.ClientSession | None = None
        self._headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        self._unmapped: set[str] = set()  # segment prefixes of workers whose shared memory is not this host's
        self._mapped_any = False

    def _client(self) -> aiohttp.ClientSession:
        # made on first use: an aiohttp session belongs to the loop that made it
        if self._http is None or self._http.closed:
            self._http = aiohttp.ClientSession(headers=self._headers, raise_for_status=False)
        return self._http

    async def close(self) -> None:
        if self._http is not None:
            await self._http.close()
            self._http = None

    async def __aenter__(self) -> WebClient:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"<WebClient {self.url}>"

    async def _request(
        self, method: str, path: str, *, json_body: Any = None, data: bytes | aiohttp.payload.Payload | None = None,
        binary: bool = False, wait: float = 0.0,
    ) -> Any:
        headers = {"Accept": BINARY} if binary else {}
        if data is not None:
            headers["Content-Type"] = BINARY
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=self.timeout, sock_read=self.timeout + wait)
        try:
            async with self._client().request(
                method, self.url + path, json=json_body, data=data, headers=headers, timeout=timeout,
                ssl=self._ssl if self._ssl is not None else True,
            ) as resp:
                return await _reply(resp)
        except aiohttp.ClientSSLError as e:
            logger.debug("%s %s%s failed", method, self.url, path, exc_info=True)
            raise WebConnectionError(
                f"TLS with the mars web service at {self.url} failed: {e}. Does this client trust the CA that "
                f"signed the server's certificate? Pass ssl=ssl.create_default_context(cafile=...) or set "
                "$MARS_TLS_CA to that CA's file"
            ) from None
        except aiohttp.ClientConnectionError as e:
            # the message says what was tried and why; aiohttp's frames are kept for debug logging only
            logger.debug("%s %s%s failed", method, self.url, path, exc_info=True)
            raise WebConnectionError(f"cannot reach the mars web service at {self.url}: {e}") from None
        except asyncio.TimeoutError as e:
            raise TimeoutError(f"{method} {self.url}{path}: no answer within {self.timeout + wait:g} s") from e

    # ------------------------------------------------------------------ sessions
    async def create_session(self, session_id: str | None = None) -> str:
        body = {} if session_id is None else {"session_id": session_id}
        return (await self._request("POST", "/api/sessions", json_body=body))["session_id"]  # type: ignore[no-any-return]

    async def delete_session(self, session_id: str) -> None:
        await self._request("DELETE", f"/api/sessions/{_q(session_id)}")

    async def has_session(self, session_id: str) -> bool:
        try:
            await self._request("GET", f"/api/sessions/{_q(session_id)}")
        except SessionNotFound:
            return False
        return True

    async def list_sessions(self) -> list[dict]:
        return await self._request("GET", "/api/sessions")  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ tasks
    async def submit(self, session_id: str, tileables: list, name: str | None = None) -> str:
        """Start a task computing ``tileables``; returns its id."""
        body = await pack_joined([t.data if isinstance(t, Tileable) else t for t in tileables])
        path = f"/api/sessions/{_q(session_id)}/tasks" + (f"?name={_q(name)}" if name else "")
        reply = await self._request("POST", path, data=body)
        return reply["task_id"]  # type: ignore[no-any-return]

    async def submit_and_wait(self, session_id: str, tileables: list, wait: float,
                              name: str | None = None) -> TaskInfo:
        """Submit and wait up to ``wait`` seconds, in one round trip: a small job's values come inline."""
        body = await pack_joined([t.data if isinstance(t, Tileable) else t for t in tileables])
        path = f"/api/sessions/{_q(session_id)}/tasks?wait={wait!r}" + (f"&name={_q(name)}" if name else "")
        return await self._request("POST", path, data=body, binary=True, wait=wait)  # type: ignore[no-any-return]

    async def get_task(self, session_id: str, task_id: str, wait: float = 0.0) -> TaskInfo:
        """The task's state; waits up to ``wait`` seconds for it to finish first."""
        path = f"/api/sessions/{_q(session_id)}/tasks/{_q(task_id)}"
        if wait > 0:
            path += f"?wait={wait!r}"
        return await self._request("GET", path, binary=True, wait=wait)  # type: ignore[no-any-return]

    async def list_tasks(self, session_id: str) -> list[TaskInfo]:
        return await self._request("GET", f"/api/sessions/{_q(session_id)}/tasks", binary=True)  # type: ignore[no-any-return]

    async def cancel_task(self, session_id: str, task_id: str) -> None:
        await self._request("POST", f"/api/sessions/{_q(session_id)}/tasks/{_q(task_id)}/cancel", json_body={})

    # ------------------------------------------------------------------ data
    async def fetch(self, session_id: str, keys: list[str]) -> list[Any]:
        """Values of chunks by key (writable arrays).

        Values that travel are views of one received buffer. What workers of
        this host hold in shared memory is mapped here instead (the server
        answers with descriptors; see :func:`map_segment`), copy on write. A
        segment that cannot be mapped here (another host, another user, gone
        meanwhile) is asked for again as a value.
        """
        keys = list(keys)
        if not self.map_shared_memory or (self._unmapped and not self._mapped_any):
            return await self._fetch_values(session_id, keys)
        body = {"keys": keys, "segments": True, "skip_prefixes": sorted(self._unmapped)}
        reply = await self._request("POST", f"/api/sessions/{_q(session_id)}/fetch", json_body=body, binary=True)
        if isinstance(reply, list):  # a server that sends only values
            return reply
        values, segments = _described(reply, len(keys))
        missed = []
        for i, desc in segments.items():
            try:
                values[i] = map_segment(desc)
                self._mapped_any = True
            except ForeignSegment:
                self._unmapped.add(desc.shm_name.rpartition("-")[0])  # type: ignore[union-attr]
                missed.append(i)
            except (DataNotFound, OSError, ValueError):  # gone meanwhile, or not ours to open
                missed.append(i)
        if missed:
            for i, value in zip(missed, await self._fetch_values(session_id, [keys[i] for i in missed])):
                values[i] = value
        return values

    async def _fetch_values(self, session_id: str, keys: list[str]) -> list[Any]:
        body = {"keys": keys}
        return await self._request("POST", f"/api/sessions/{_q(session_id)}/fetch", json_body=body, binary=True)  # type: ignore[no-any-return]

    async def release(self, session_id: str, keys: list[str]) -> list[str]:
        """Drop one reference per key; returns the keys the session held (as ``SessionAPI.release``)."""
        reply = await self._request("POST", f"/api/sessions/{_q(session_id)}/release", json_body={"keys": list(keys)})
        return minus_each(keys, reply.get("not_released", []))

    async def upload(self, session_id: str, chunks: list[tuple[str, tuple, Any]]) -> dict[str, StoredObject]:
        """Put ``(key, shape, value)`` chunks into workers' storage, held by the session.

        On the workers' host the segments are written here and only their
        descriptors are sent; from elsewhere the values travel in the requests
        (see :func:`~mars.services.storage.upload.upload_chunks`).
        """
        return await upload_chunks(self, session_id, chunks)

    async def upload_targets(self, session_id: str) -> list[UploadTarget]:
        reply = await self._request("GET", f"/api/sessions/{_q(session_id)}/upload")
        return [UploadTarget(w["address"], int(w["n_slots"]), w["prefix"]) for w in reply["workers"]]

    async def adopt_stored(self, session_id: str, worker: str, chunks: list[tuple[str, tuple, Any]]) -> None:
        await self._upload(session_id, {"worker": worker, "stored": [(k, tuple(s), d) for k, s, d in chunks]})

    async def put_chunks(self, session_id: str, worker: str, chunks: list[tuple[str, tuple, Any]]) -> None:
        await self._upload(session_id, {"worker": worker, "values": [(k, tuple(s), v) for k, s, v in chunks]})

    async def _upload(self, session_id: str, body: dict) -> None:
        parts, size = await pack(body)
        await self._request("POST", f"/api/sessions/{_q(session_id)}/upload", data=_Parts(parts, size))

    # ------------------------------------------------------------------ cluster
    async def get_workers(self) -> list[dict]:
        return await self._request("GET", "/api/cluster/workers")  # type: ignore[no-any-return]

    async def get_supervisors(self) -> list[str]:
        return await self._request("GET", "/api/cluster/supervisors")  # type: ignore[no-any-return]


async def _reply(resp: aiohttp.ClientResponse) -> Any:
    if resp.status >= 400:
        raw = await resp.read()
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw.decode(errors="replace")
        raise exception_from(resp.status, body)
    if resp.content_type == BINARY:
        frame = await read_body(resp.content, resp.content_length, _NO_LIMIT)
        try:
            return await unpack(frame)
        except BadRequest as e:
            raise WebError(f"the web service's binary reply is malformed: {e}") from None
    return json.loads(await resp.read())


class _Parts(aiohttp.payload.Payload):
    """A binary frame's parts (see :func:`.wire.pack`) sent as one body, its buffers never joined."""

    def __init__(self, parts: Sequence[Any], size: int):
        super().__init__(parts, content_type=BINARY)
        self._size = size

    def decode(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        raise TypeError("a binary frame is not text")

    async def write(self, writer: Any) -> None:
        for part in self._value:
            await writer.write(part)

    async def write_with_length(self, writer: Any, content_length: int | None) -> None:
        await self.write(writer)


class SyncWebClient:
    """A :class:`WebClient` for synchronous code, run on an event loop thread that this object owns.

    Examples
    --------
    >>> client = SyncWebClient("http://127.0.0.1:7103")   # doctest: +SKIP
    >>> sid = client.create_session()                      # doctest: +SKIP
    >>> client.close()                                     # doctest: +SKIP
    """

    def __init__(self, url: str, token: str | None = None, timeout: float = 60.0, *,
                 ssl: ssl_lib.SSLContext | None = None):
        self.client = WebClient(url, token, timeout, ssl=ssl)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=_serve, args=(self._loop,), daemon=True, name="mars-web-client")
        self._thread.start()
        # closes the connection even when the owner forgets to (and at exit)
        self._closer = weakref.finalize(self, _shutdown, self._loop, self._thread, self.client)

    @property
    def url(self) -> str:
        return self.client.url

    def call(self, coro_fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any, **kw: Any) -> Any:
        """Run ``coro_fn(*args, **kw)`` on the client's loop and return its result."""
        if not self._closer.alive:
            raise RuntimeError("this SyncWebClient is closed")
        if threading.current_thread() is self._thread:
            raise RuntimeError("SyncWebClient.call() from its own loop thread would wait on itself; await the WebClient")
        future = asyncio.run_coroutine_threadsafe(coro_fn(*args, **kw), self._loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()  # e.g. Ctrl-C in the caller: stop waiting on the server too
            raise

    def close(self) -> None:
        """Close the connection and stop the loop thread; idempotent."""
        self._closer()

    def __enter__(self) -> SyncWebClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<SyncWebClient {self.url}>"

    def create_session(self, session_id: str | None = None) -> str:
        return self.call(self.client.create_session, session_id)  # type: ignore[no-any-return]

    def delete_session(self, session_id: str) -> None:
        self.call(self.client.delete_session, session_id)

    def has_session(self, session_id: str) -> bool:
        return self.call(self.client.has_session, session_id)  # type: ignore[no-any-return]

    def list_sessions(self) -> list[dict]:
        return self.call(self.client.list_sessions)  # type: ignore[no-any-return]

    def submit(self, session_id: str, tileables: Sequence, name: str | None = None) -> str:
        return self.call(self.client.submit, session_id, list(tileables), name)  # type: ignore[no-any-return]

    def submit_and_wait(self, session_id: str, tileables: Sequence, wait: float, name: str | None = None) -> TaskInfo:
        return self.call(self.client.submit_and_wait, session_id, list(tileables), wait,  # type: ignore[no-any-return]
                         name)

    def get_task(self, session_id: str, task_id: str, wait: float = 0.0) -> TaskInfo:
        return self.call(self.client.get_task, session_id, task_id, wait)  # type: ignore[no-any-return]

    def list_tasks(self, session_id: str) -> list[TaskInfo]:
        return self.call(self.client.list_tasks, session_id)  # type: ignore[no-any-return]

    def cancel_task(self, session_id: str, task_id: str) -> None:
        self.call(self.client.cancel_task, session_id, task_id)

    def fetch(self, session_id: str, keys: list[str]) -> list[Any]:
        return self.call(self.client.fetch, session_id, keys)  # type: ignore[no-any-return]

    def release(self, session_id: str, keys: list[str]) -> list[str]:
        return self.call(self.client.release, session_id, keys)  # type: ignore[no-any-return]

    def get_workers(self) -> list[dict]:
        return self.call(self.client.get_workers)  # type: ignore[no-any-return]

    def get_supervisors(self) -> list[str]:
        return self.call(self.client.get_supervisors)  # type: ignore[no-any-return]


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    loop.run_forever()


def _shutdown(loop: asyncio.AbstractEventLoop, thread: threading.Thread, client: WebClient) -> None:
    if loop.is_closed():
        return
    if threading.current_thread() is thread:  # collected on its own loop: cannot wait for itself
        loop.create_task(client.close()).add_done_callback(lambda _: loop.stop())
        return
    try:
        asyncio.run_coroutine_threadsafe(client.close(), loop).result(timeout=5)
    except Exception:
        pass
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=5)
    if not thread.is_alive():
        loop.close()
