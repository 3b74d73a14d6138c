"""Sessions: the client. Graphs in, results out.

``new_session()`` with no address gives a local session that tiles, fuses and
runs chunk graphs in this process on a thread pool. (The distributed runtime
will run the same steps in services; a session with an address talks to it.)
Results stay in the session while the user's objects that own them live.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from .core import session as _registry
from .core.entity import ChunkData, TileableData, has_unknown
from .core.executor import ExecutionCancelled, execute_subtasks
from .core.fusion import fuse
from .core.graph import build_subtasks, gc_paused
from .core.operator import retiled_unless_held
from .core.options import options
from .core.tiling import Tiler, as_data, planned, wanted
from .progress import Progress as _Progress

__all__ = ["Session", "ExecutionFuture", "new_session", "get_default_session", "execute", "fetch"]


class ExecutionFuture:
    """What ``execute(wait=False)`` returns: ``done()``, ``result()``, ``cancel()``.

    ``result()`` gives what ``fetch()`` would (the values, fetched on the
    runner's thread), and ``done()`` is true once it is available.
    """

    def __init__(self, future: concurrent.futures.Future, cancel_event: threading.Event):
        self._future = future
        self._cancel = cancel_event

    def done(self) -> bool:
        return self._future.done()

    def result(self, timeout: float | None = None) -> Any:
        try:
            return self._future.result(timeout)
        except ExecutionCancelled:
            raise concurrent.futures.CancelledError("execution was cancelled") from None

    def exception(self, timeout: float | None = None) -> BaseException | None:
        return self._future.exception(timeout)

    def cancel(self) -> bool:
        """Stop the run (between chunks); ``result()`` then raises ``CancelledError``."""
        if self._future.done():
            return False
        self._cancel.set()
        return True

    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def add_done_callback(self, fn: Any) -> None:
        self._future.add_done_callback(lambda _: fn(self))


def run_in_background(run: Any, datas: list, show_progress: bool | None,
                      fetch: Callable[[], Any]) -> ExecutionFuture:
    """``run(datas, show_progress, cancel_event)`` on a thread of its own; its future gives ``fetch()``."""
    cancel = threading.Event()
    future: concurrent.futures.Future = concurrent.futures.Future()

    def target() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            run(datas, False if show_progress is None else show_progress, cancel)
            value = fetch()
        except BaseException as e:  # noqa: BLE001 - delivered through the future
            future.set_exception(e)
        else:
            future.set_result(value)

    threading.Thread(target=target, daemon=True, name="mars-execute").start()
    return ExecutionFuture(future, cancel)


class Session:
    """A local session: tiles, fuses and runs chunk graphs on a thread pool in this process."""

    def __init__(self, address: str | None = None):
        if address is not None:
            raise NotImplementedError(f"sessions on a cluster ({address!r}) need the distributed runtime")
        self.address = address
        self._store: dict[str, Any] = {}
        self._key_refs: dict[str, int] = {}
        self._held: weakref.WeakSet = weakref.WeakSet()
        self._lock = threading.RLock()
        self._closed = False
        self._pending: collections.deque = collections.deque()  # releases waiting for the run to end
        self._running = 0

    # ----------------------------------------------------------------- public
    def execute(self, *tileables: Any, wait: bool = True, show_progress: bool | None = None,
                name: str | None = None, **kw: Any) -> Any:
        """Run ``tileables`` together (shared work runs once); returns them (one, or a list).

        ``name`` names the task on a cluster's dashboard; this in-process session has none to show it on.
        """
        self._check_open()
        if kw:
            raise TypeError(f"execute() got unexpected arguments {sorted(kw)}")
        ret = tileables[0] if len(tileables) == 1 else list(tileables)
        if wait:
            self._run([as_data(t) for t in tileables], show_progress, None)
            return ret
        return run_in_background(self._run, [as_data(t) for t in tileables], show_progress,
                                 lambda: self.fetch(*tileables))

    def fetch(self, *tileables: Any) -> Any:
        """The values of ``tileables`` (executing any not yet executed)."""
        self._check_open()
        datas = [as_data(t) for t in tileables]
        missing = [d for d in datas if not self._is_computed(d)]
        if missing:
            self._run(missing, None, None)
        values = [d.assemble([self._store[c.key] for c in d.chunks]) for d in datas]
        return values[0] if len(values) == 1 else values

    def run(self, *tileables: Any, **kw: Any) -> Any:
        """Execute and fetch: numpy results."""
        self.execute(*tileables, **kw)
        return self.fetch(*tileables)

    def is_executed(self, tileable: Any) -> bool:
        return not self._closed and self._is_computed(as_data(tileable))

    def as_default(self) -> Session:
        _registry.set_default_session(self)
        return self

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._store.clear()
            self._key_refs.clear()
            self._held = weakref.WeakSet()
        if _registry.get_default_session() is self:
            _registry.set_default_session(None)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Session local, {len(self._store)} chunks held>"

    # ----------------------------------------------------------------- running
    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this session is closed; make a new one with mars.new_session()")

    def _is_computed(self, data: TileableData) -> bool:
        return data.chunks is not None and all(c.key in self._store for c in data.chunks)

    def _run(self, targets: list[TileableData], show_progress: bool | None, cancel: threading.Event | None) -> None:
        with self._lock:
            self._check_open()
            stage_keys: set[str] = set()
            progress = _Progress(show_progress)
            self._running += 1
            try:
                with retiled_unless_held(targets, self._is_computed):  # another session's results: from lineage
                    self._tile_and_compute(targets, stage_keys, cancel, progress)
            finally:
                self._running -= 1
                progress.close()
                self._drop_unheld(stage_keys)
                if self._running == 0:
                    self._apply_releases()
            for t in targets:
                if has_unknown(t.shape) or any(has_unknown(s) for s in t.nsplits or ()):
                    t.refresh_shape()

    def _tile_and_compute(self, targets: list[TileableData], stage_keys: set[str], cancel: threading.Event | None,
                          progress: Any) -> None:
        tiler = Tiler(lambda chunks, want: self._run_stage(chunks, want, stage_keys, cancel))
        with gc_paused():
            plan = planned(targets, self._is_computed)  # the optimizer's rewrite (mars.dataframe.optimizer)
            tiler.tile(plan.stand_ins)
            plan.adopt()
        chunks = [c for t in targets for c in t.chunks or ()]
        try:
            # a stage's chunks are freed as soon as the last step that reads them ran
            self._compute(chunks, cancel, progress, {k for k in stage_keys if k not in self._key_refs})
        except BaseException:
            # a failed or cancelled run leaves nothing half-made behind
            self._drop_unheld({c.key for c in chunks})
            raise
        for t in targets:
            self._hold(t)

    def _run_stage(self, chunks: Sequence[ChunkData], want_values: Any, stage_keys: set, cancel: Any) -> Any:
        self._compute(chunks, cancel, None)
        stage_keys.update(c.key for c in chunks)
        return [self._store[c.key] for c in wanted(chunks, want_values)] if want_values else None

    def _compute(self, chunks: Sequence[ChunkData], cancel: threading.Event | None, progress: Any,
                 release: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        store = self._store
        keep = {c.key for c in chunks}
        with gc_paused():
            subtasks = fuse(build_subtasks(chunks, store.__contains__), keep)
        n_threads = options.effective_threads()
        with _blas_threads(subtasks, n_threads):
            shapes = execute_subtasks(subtasks, store, keep, n_threads=n_threads, on_done=progress, cancel=cancel,
                                      release=release)
        for c in chunks:
            if has_unknown(c.shape) and c.key in shapes:
                c.shape = tuple(shapes[c.key])

    # ----------------------------------------------------------------- lifetime
    def _hold(self, data: TileableData) -> None:
        if data in self._held:
            return
        self._held.add(data)
        keys = [c.key for c in data.chunks or ()]
        for k in keys:
            self._key_refs[k] = self._key_refs.get(k, 0) + 1
        weakref.finalize(data, _release, weakref.ref(self), keys)

    def _drop_unheld(self, keys: set[str]) -> None:
        for k in keys:
            if k not in self._key_refs:
                self._store.pop(k, None)

    def _release(self, keys: list[str]) -> None:
        """Called when an executed object dies, possibly in any thread (the GC's).

        It never waits for the session: a run in progress (whose helper thread
        may be the one collecting) applies the release when it ends.
        """
        self._pending.append(keys)
        if self._running == 0 and self._lock.acquire(blocking=False):
            try:
                if self._running == 0:
                    self._apply_releases()
            finally:
                self._lock.release()

    def _apply_releases(self) -> None:
        while self._pending:
            for k in self._pending.popleft():
                n = self._key_refs.get(k, 0) - 1
                if n <= 0:
                    self._key_refs.pop(k, None)
                    self._store.pop(k, None)
                else:
                    self._key_refs[k] = n


def _uses_blas(op: Any) -> bool:
    steps = getattr(op, "steps", None)
    if steps is not None:
        return any(_uses_blas(st.op) for st in steps)
    return getattr(op, "blas", False)


@contextlib.contextmanager
def _blas_threads(subtasks: Sequence[Any], n_threads: int):  # type: ignore[no-untyped-def]
    """Chunk ops running BLAS side by side share the cores instead of each taking all of them.

    With one thread, BLAS gets one too: the session was asked for one core, and a BLAS pool of
    several threads on the small products of a row pass costs more than it gives (10x, measured).
    """
    n_blas = sum(1 for st in subtasks if _uses_blas(st.op))
    if n_blas == 0:
        yield
        return
    n_threads = max(1, n_threads)
    with _blas_controller().limit(limits=max(1, n_threads // min(n_threads, n_blas)), user_api="blas"):
        yield


_CONTROLLER: dict[int, Any] = {}


def _blas_controller() -> Any:
    """threadpoolctl's view of the loaded BLAS libraries, kept while no module was imported since.

    Making one scans the process's loaded libraries (~15 ms): once per run it
    was most of the cost of a small pass (an iteration of an estimator).
    """
    import sys

    n_modules = len(sys.modules)  # a new import may have loaded another BLAS
    controller = _CONTROLLER.get(n_modules)
    if controller is None:
        # loaded only for BLAS-heavy graphs
        from threadpoolctl import ThreadpoolController

        controller = ThreadpoolController()
        _CONTROLLER.clear()
        _CONTROLLER[len(sys.modules)] = controller
    return controller


def _release(session_ref: weakref.ref, keys: list[str]) -> None:
    session = session_ref()
    if session is not None and not session._closed:
        session._release(keys)


def new_session(address: str | None = None, default: bool = True, **kw: Any) -> Any:
    """A session: local with no ``address``, else one on the cluster there.

    ``address`` is a web URL (``http://host:web_port``, may carry ``?token=``)
    or a supervisor's ``host:port``. The session becomes the default unless
    ``default=False``.

    >>> import mars, mars.tensor as mt
    >>> sess = mars.new_session()
    >>> sess.run(mt.ones(3) + 1)
    array([2., 2., 2.])
    """
    token = kw.pop("token", None)
    if kw:
        raise TypeError(f"new_session() got unexpected arguments {sorted(kw)}")
    if address is None:
        session: Any = Session(None)
    else:
        from .remote import ClusterSession  # the client stack loads only for clusters

        session = ClusterSession(address, token=token)
    if default:
        session.as_default()
    return session


def get_default_session() -> Session | None:
    return _registry.get_default_session()


def execute(*tileables: Any, session: Session | None = None, wait: bool = True, **kw: Any) -> Any:
    """Run several tileables at once, sharing their common work."""
    return _registry.resolve_session(session).execute(*tileables, wait=wait, **kw)


def fetch(*tileables: Any, session: Session | None = None) -> Any:
    return _registry.resolve_session(session).fetch(*tileables)
