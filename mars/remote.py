"""Sessions on a running cluster: ``mars.new_session("http://host:web_port")``.

The client sends the tileables it is asked to execute (their graph, pickled)
to the cluster, which tiles and runs them; it waits on the task, drawing a
progress bar; then it gives each executed object the chunk layout the
cluster chose, so that ``fetch()`` can get the chunks and assemble them and
later expressions can build on the held results. When an executed object
dies, the client tells the cluster to release its chunks.

An address without ``http://`` is a supervisor's actor address
(``host:port``, several separated by commas): the client then calls the
session service over the actor protocol, with no web service in between.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import socket
import sys
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, Iterator

from .core import session as registry
from .core.entity import TileableData, has_unknown
from .core.operator import HeldData, Tiled, held_chunks, retiled_unless_held
from .core.pools import thread_pool
from .core.tiling import as_data, planned
from .oscar import close_connections, get_token, set_token
from .oscar.tokenfile import find_token
from .progress import Progress as _Progress
from .services.errors import DataNotFound
from .services.session.api import SessionAPI
from .services.storage.shm import get_object
from .services.task.api import TaskInfo, TaskStatus
from .services.web.client import SyncWebClient
from .services.web.wire import SupervisorUnavailable
from .session import run_in_background

logger = logging.getLogger(__name__)

#: how long a new session waits for a web service's supervisor that is not up yet
SUPERVISOR_WAIT = 30.0
#: a source holding at least this many bytes of the client's data is put into workers' storage directly
UPLOAD_ABOVE = 1 << 20
#: how long one wait on the cluster lasts before the progress bar is redrawn
_POLL_SECONDS = 0.5


class RemoteTraceback(Exception):
    """Carries the traceback of an error raised on the cluster (the ``__cause__`` of the re-raised error)."""

    def __str__(self) -> str:
        return "\n\nThe error was raised on the cluster:\n\n" + str(self.args[0] if self.args else "")


class _LoopThread:
    """An event loop on a daemon thread, for the sync client to run coroutines on."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True, name="mars-client")
        self._thread.start()

    def run(self, coro: Any, timeout: float | None = None) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(5)
        if not self.loop.is_running():
            self.loop.close()


class _DirectBackend:
    """The session service over the actor protocol (``host:port`` addresses)."""

    def __init__(self, supervisors: list[str], token: str | None = None):
        # an argument, then what the supervisor left on this host, then the process's token (MARS_TOKEN)
        token = token or next(filter(None, map(find_token, supervisors)), None) or get_token()
        if token is not None:
            set_token(token)
        self._thread = _LoopThread()
        self.api = SessionAPI(supervisors)

    def call(self, method: str, *args: Any) -> Any:
        return self._thread.run(getattr(self.api, method)(*args))

    def close(self) -> None:
        try:
            self._thread.run(_run_sync(close_connections), timeout=5)
        finally:
            self._thread.close()


def _keep_mapped(data: TileableData, keys: list[str], written: dict) -> None:
    """A source whose partitions this client wrote into the workers' shared memory keeps them as mapped there
    (``op.uploaded``), in place of its own copy: one copy of the data in memory, shared with the workers,
    still there to compute the partitions again if a worker is lost."""
    uploaded = getattr(data.op, "uploaded", None)
    if uploaded is None or not keys or any(k not in written for k in keys):
        return
    try:
        parts = [get_object(written[k]) for k in keys]
    except DataNotFound:  # freed meanwhile (the session closed, say): the client's copy stays
        return
    _return_arrow_pages_after(uploaded(parts))


#: threads that dropped an uploaded frame of the user's since they last called the cluster
_ARROW_PAGES_OWED: set[int] = set()


def _return_arrow_pages_after(frame: Any) -> None:
    """Once the user's ``frame``, now uploaded, is freed, Arrow's allocator hands its idle pages to the OS.

    Arrow's pool (mimalloc or jemalloc) keeps the pages of freed buffers for
    reuse until it next allocates, which an idle client may never do: after
    ``pdf = pd.read_parquet(...)``, uploading ``pdf`` and ``del pdf``, the
    client would go on holding the table's size (1.3 GB for TPC-H's
    lineitem at scale 1) in pages nothing uses. The pool gives back only
    what the calling thread freed, and only once the frame's buffers are
    gone (after its finalizer runs): the thread that dropped it pays at its
    next call into the cluster (:func:`_give_back_arrow_pages`).
    """
    if frame is None or "pyarrow" not in sys.modules:
        return
    with contextlib.suppress(TypeError):  # an object without weak references: nothing to watch
        weakref.finalize(frame, lambda: _ARROW_PAGES_OWED.add(threading.get_ident()))


def _give_back_arrow_pages() -> None:
    ident = threading.get_ident()
    if ident in _ARROW_PAGES_OWED:
        _ARROW_PAGES_OWED.discard(ident)
        sys.modules["pyarrow"].default_memory_pool().release_unused()


async def _run_sync(fn: Callable[[], Any]) -> Any:
    return fn()


class _WebBackend:
    """The session service through the web service (``http://`` URLs)."""

    def __init__(self, url: str, token: str | None = None):
        if token is None and "token=" not in url:
            # an argument, then the URL, then what the supervisor left on this host, then the environment
            token = find_token(url) or os.environ.get("MARS_TOKEN") or None
        self._client = SyncWebClient(url, token=token)  # https: checked as this process's TLS settings say

    def call(self, method: str, *args: Any) -> Any:
        return self._client.call(getattr(self._client.client, method), *args)

    def close(self) -> None:
        self._client.close()


def _backend_for(address: str, token: str | None) -> Any:
    if address.startswith(("http://", "https://")):
        return _WebBackend(address, token)
    supervisors = [a.strip() for a in address.split(",") if a.strip()]
    for a in supervisors:
        scheme, sep, _ = a.partition("://")
        if sep and scheme != "tcp":
            raise ValueError(f"unknown scheme {scheme + '://'!r} in {address!r}: expected http://host:web_port, "
                             f"https://host:web_port, or a supervisor's host:port")
    return _DirectBackend(supervisors, token)


def _unreachable(address: str, error: ConnectionError) -> Exception:
    """The one-line error for a cluster that could not be reached (the library's traceback at debug level)."""
    logger.debug("could not reach a mars cluster at %s", address, exc_info=error)
    if not address.startswith(("http://", "https://")) and "," not in address and _answers_http(address):
        return ValueError(f"{address} answers HTTP: use http://{address}")
    return error.with_traceback(None)  # its message says what was tried and why; the frames are the library's


def _answers_http(address: str, timeout: float = 2.0) -> bool:
    """Whether ``host:port`` is a web server (a user who left out ``http://``)."""
    host, _, port = address.removeprefix("tcp://").rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout) as sock:
            sock.sendall(b"HEAD / HTTP/1.0\r\n\r\n")
            return sock.recv(5) == b"HTTP/"
    except (OSError, ValueError):
        return False


class ClusterSession:
    """A session on a cluster; the same methods as the local :class:`mars.session.Session`."""

    def __init__(self, address: str, token: str | None = None, session_id: str | None = None):
        self.address = address
        self._backend = _backend_for(address, token)
        try:
            self.session_id = self._create_session(session_id)
        except ConnectionError as e:
            self._backend.close()
            raise _unreachable(address, e) from None
        except BaseException:
            self._backend.close()
            raise
        self._values: dict[str, Any] = {}  # small results that came with the task's info
        self._held: weakref.WeakSet = weakref.WeakSet()
        self._lock = threading.RLock()
        self._closed = False
        self._releasing: list[str] = []  # keys of dead objects, to release in one call
        self._releaser: threading.Thread | None = None
        # a client that exits (or drops the session) without close() still frees its data on the cluster
        self._end = weakref.finalize(self, _end_session, self._backend, self.session_id)

    def _create_session(self, session_id: str | None) -> str:
        """A new session; while the web service answers that its supervisor is not up yet, wait for it."""
        deadline = time.monotonic() + SUPERVISOR_WAIT
        said = False
        while True:
            try:
                return self._backend.call("create_session", session_id)  # type: ignore[no-any-return]
            except SupervisorUnavailable:
                if time.monotonic() > deadline:
                    raise
                if not said:
                    print(f"mars: waiting for the supervisor behind {self.address}: it may be starting "
                          f"(up to {SUPERVISOR_WAIT:g} s)", file=sys.stderr, flush=True)
                    said = True
                time.sleep(0.5)

    # ----------------------------------------------------------------- public
    def execute(self, *tileables: Any, wait: bool = True, show_progress: bool | None = None,
                name: str | None = None, **kw: Any) -> Any:
        """Run ``tileables`` together on the cluster; returns them (one, or a list).

        ``name`` is what the dashboard lists the task as (else its chain of operations).
        """
        self._check_open()
        if kw:
            raise TypeError(f"execute() got unexpected arguments {sorted(kw)}")
        ret = tileables[0] if len(tileables) == 1 else list(tileables)
        datas = [as_data(t) for t in tileables]
        if wait:
            self._run(datas, show_progress, None, name)
            return ret
        return run_in_background(lambda d, p, c: self._run(d, p, c, name), datas, show_progress,
                                 lambda: self.fetch(*tileables))

    def fetch(self, *tileables: Any) -> Any:
        """The values of ``tileables`` (executing any not yet executed)."""
        self._check_open()
        _give_back_arrow_pages()
        datas = [as_data(t) for t in tileables]
        missing = [d for d in datas if not self.is_executed(d)]
        if missing:
            self._run(missing, None, None)
        keys = [c.key for d in datas for c in d.chunks if c.key not in self._values]
        fetched = dict(zip(keys, self._backend.call("fetch", self.session_id, keys))) if keys else {}
        values = []
        for d in datas:
            parts = [self._values[c.key] if c.key in self._values else fetched[c.key] for c in d.chunks]
            values.append(d.assemble(parts))
        return values[0] if len(values) == 1 else values

    def run(self, *tileables: Any, **kw: Any) -> Any:
        self.execute(*tileables, **kw)
        return self.fetch(*tileables)

    def is_executed(self, tileable: Any) -> bool:
        return not self._closed and as_data(tileable) in self._held

    def as_default(self) -> ClusterSession:
        registry.set_default_session(self)
        return self

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._end()
        self._values.clear()
        if registry.get_default_session() is self:
            registry.set_default_session(None)

    def __enter__(self) -> ClusterSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<ClusterSession {self.session_id} at {self.address}>"

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this session is closed; make a new one with mars.new_session(address)")

    # ----------------------------------------------------------------- running
    def _run(self, datas: list[TileableData], show_progress: bool | None, cancel: threading.Event | None,
             name: str | None = None) -> None:
        self._check_open()
        _give_back_arrow_pages()
        todo = self._upload_sources([d for d in datas if d not in self._held])
        if not todo:
            return
        # an object executed by another session (or one since closed) is computed again from its lineage
        with retiled_unless_held(todo, self._held.__contains__):
            progress = _Progress(show_progress)
            try:
                sent = planned(todo, self._held.__contains__).stand_ins  # optimized here: pruned columns never travel
                with _held_as_data_only(sent, self._held):
                    first = self._backend.call("submit_and_wait", self.session_id, sent, 0.05, name)
                info = self._wait(first, progress, cancel)
            finally:
                progress.close()
            if info.status is not TaskStatus.succeeded:
                _raise_task_error(info)
            self._values.update(info.inline_values)
            for data, result in zip(todo, info.results):
                self._adopt(data, result)

    def _upload_sources(self, todo: list[TileableData]) -> list[TileableData]:
        """Targets that only hold the client's data (``md.DataFrame(pdf)``) go straight into workers' storage.

        Their partitions are cut here and written into the shared memory of
        the workers on this host (sent to their storage actors otherwise);
        the supervisor only learns where they are, and the rest of ``todo``
        is returned to run as usual. The graph then never carries the data
        through the supervisor and the slots. Over the web API too: only the
        descriptors of what was written here travel, or, from another host,
        the values in binary requests of their own.
        """
        rest = []
        for data in todo:
            nbytes = getattr(data.op, "literal_nbytes", None)
            if nbytes is None or data.op.inputs or nbytes() < UPLOAD_ABOVE:
                rest.append(data)
                continue
            tiled = type(data.op).tile(data.op)
            assert isinstance(tiled, Tiled), "a source with the client's data tiles at once, to one Tiled"
            chunks = [(c.key, tuple(c.shape), c.op.execute()) for c in tiled.chunks]
            # the integer columns' ranges (read here while the client's loop writes the data out) spare a
            # grouping by one of them the stage that would read them on the workers
            ranges = thread_pool("ranges", 1).submit(_int_ranges_of, tiled.chunks)
            written = self._backend.call("upload", self.session_id, chunks)
            self._adopt(data, tiled, ranges.result())
            _keep_mapped(data, [c.key for c in tiled.chunks], written or {})
        return rest

    def _wait(self, info: TaskInfo, progress: Any, cancel: threading.Event | None) -> TaskInfo:
        """Wait on the task ``info`` describes (a tiny job is done already), drawing progress."""
        warned = ""
        while True:
            if info.message and info.message != warned:
                warned = info.message
                print(f"mars: {info.message}", file=sys.stderr, flush=True)
            if info.status.is_done:
                if info.n_subtasks:
                    progress(info.n_finished, info.n_subtasks)
                return info
            if info.n_subtasks:
                progress(info.n_finished, info.n_subtasks)
            if cancel is not None and cancel.is_set():
                self._backend.call("cancel_task", self.session_id, info.task_id)
                cancel = None  # the next wait sees it cancelled
            info = self._backend.call("get_task", self.session_id, info.task_id, _POLL_SECONDS)

    def _adopt(self, data: TileableData, result: Any, ranges: list | None = None) -> None:
        """Give ``data`` the chunk layout the cluster made for it (and its partitions' ``ranges``, see
        :class:`HeldData`), and hold its chunks."""
        data.chunks = held_chunks(data, [(c.key, c.index, c.shape) for c in result.chunks], ranges)
        data.nsplits = tuple(tuple(s) for s in result.nsplits)
        if has_unknown(data.shape) or any(has_unknown(s) for s in data.nsplits):
            data.refresh_shape()
        keys = [c.key for c in result.chunks]
        with self._lock:
            if data in self._held:  # held already: the cluster counted this task's reference too
                self._release(keys)
                return
            self._held.add(data)
        weakref.finalize(data, _release_from_gc, weakref.ref(self), keys)

    def _release(self, keys: list[str]) -> None:
        """Queue ``keys`` for release; one thread sends what has gathered, in one call.

        Called by the garbage collector, in any thread (the client loop's
        too): it never calls the cluster itself, and many objects dying at
        once cost one message, not one each.
        """
        if self._closed:
            return
        with self._lock:
            self._releasing.extend(keys)
            if self._releaser is not None:
                return
            self._releaser = threading.Thread(target=self._send_releases, daemon=True, name="mars-release")
        self._releaser.start()

    def _send_releases(self) -> None:
        while True:
            with self._lock:
                keys, self._releasing = self._releasing, []
                if not keys or self._closed:
                    self._releaser = None
                    return
            for k in keys:
                self._values.pop(k, None)
            try:
                self._backend.call("release", self.session_id, keys)
            except Exception as e:  # noqa: BLE001 - releasing is best effort: the session's end frees all
                logger.debug("could not release %d chunks: %s", len(keys), e)


def _int_ranges_of(chunks: list) -> list | None:
    """Each uploaded partition's integer column ranges (see :class:`HeldData`), or None if a source cannot say.

    They only spare a stage: whatever goes wrong reading them, the upload goes on without them.
    """
    try:
        ranges = [getattr(c.op, "int_ranges", lambda: None)() for c in chunks]
    except Exception as e:  # noqa: BLE001 - an optimisation's failure must not fail the upload
        logger.debug("no column ranges for the uploaded partitions: %s", e)
        return None
    return ranges if any(r for r in ranges) else None


@contextlib.contextmanager
def _held_as_data_only(targets: list[TileableData], held: weakref.WeakSet) -> Iterator[None]:
    """While the graph is sent, executed tileables it reads travel as their chunks only.

    Their ops (which may hold a whole numpy array, for ``mt.tensor(x)``) are
    swapped for a bare :class:`HeldData` op for the time of the call, and put
    back after: the cluster reads their chunks by key and never looks further up.
    """
    swapped: list[tuple[TileableData, Any]] = []
    seen: set[int] = set()
    stack = [inp for t in targets for inp in t.op.inputs]
    while stack:
        node = stack.pop()
        if id(node) in seen or not isinstance(node, TileableData):
            continue
        seen.add(id(node))
        if node in held and node.chunks is not None:
            op = HeldData()
            op.output_keys = [""] * node.output_index + [node.key]
            swapped.append((node, node.op))
            node.op = op
        else:
            stack.extend(node.op.inputs)
    try:
        yield
    finally:
        for node, op in swapped:
            node.op = op


def _end_session(backend: Any, session_id: str) -> None:
    try:
        backend.call("delete_session", session_id)
    except Exception as e:  # noqa: BLE001 - the cluster may be gone already
        logger.debug("could not delete session %s: %s", session_id, e)
    finally:
        backend.close()


def _release_from_gc(session_ref: weakref.ref, keys: list[str]) -> None:
    session = session_ref()
    if session is None or session._closed:
        return
    session._release(keys)


def _raise_task_error(info: TaskInfo) -> None:
    error = info.error
    if error is None:
        raise RuntimeError(f"task {info.task_id} ended as {info.status.value} without an error")
    if info.status is TaskStatus.cancelled:
        raise concurrent.futures.CancelledError("execution was cancelled")
    if info.error_traceback:
        error.__cause__ = RemoteTraceback(info.error_traceback)
    raise error
