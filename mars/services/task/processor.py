"""A session's tasks on the supervisor: tile, split into graphs, run them, keep results.

:class:`SessionProcessor` holds one session's state: its tasks, the meta of
its chunks, and the references that keep results alive. A task tiles its
targets on a thread (tiling is plain synchronous code); when an op needs
chunks computed first, the tiling thread hands a graph to the event loop and
waits for it. The final graph computes the targets' chunks; small target
values come back with the workers' reports and travel with the task's info.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import logging
import time
import traceback
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ... import oscar as mo
from ...core.entity import ChunkData, TileableData
from ...core.fusion import fuse
from ...core.graph import build_subtasks, gc_paused
from ...core.tiling import Stage, TileSteps, wanted
from ..cluster.api import ClusterAPI
from ...core.operator import HeldData
from ..errors import DataNotFound, NoWorkersError, TaskCancelled, TaskNotFound, WorkerLost
from ..execution.api import EXECUTION_UID, SubtaskReport, SubtaskSpec
from ..lifecycle.core import Pins, RefCounts
from ..meta.core import ChunkMeta, MetaStore
from ..scheduling.placement import Placer, WorkerLoad
from ..storage.api import fetch_values
from ..storage.worker import STORAGE_UID
from .naming import task_name
from .api import ChunkResult, TaskInfo, TaskStatus, TileableResult
from .graphrun import GraphRun, SubtaskLost
from .graphview import TaskGraph

logger = logging.getLogger(__name__)
_task_order = itertools.count()


@dataclass
class TaskConfig:
    no_worker_timeout: float = 60.0
    #: how long a task waits for a worker before saying so
    no_worker_warning: float = 2.0
    #: re-read the cluster's workers at most this often while dispatching
    membership_ttl: float = 0.5
    #: times one graph runs again after losing a worker (what was lost is computed again)
    max_retries: int = 3
    #: a worker that does not answer a check within this long is taken for gone
    probe_timeout: float = 5.0
    #: a tiling step after a stage runs on the event loop while the one before took less than this (seconds)
    inline_tile_below: float = 0.005
    #: a stage's intermediates, up to this many bytes per task, stay until tiling ends: a later graph of
    #: the task that reads one (two branches of a query over one join) does not compute it again
    keep_stage_intermediates: int = 128 << 20


@dataclass
class TaskRecord:
    task_id: str
    targets: list[TileableData]
    order: int = field(default_factory=lambda: next(_task_order))
    status: TaskStatus = TaskStatus.pending
    start_time: float = field(default_factory=time.time)
    end_time: float | None = None
    message: str = ""
    error: BaseException | None = None
    error_traceback: str = ""
    n_finished: int = 0
    n_subtasks: int = 0
    runs: list[GraphRun] = field(default_factory=list)
    #: keys the task asked for (stage results, targets): kept while it runs, whoever else frees them
    pinned: set[str] = field(default_factory=set)
    workers_used: set[str] = field(default_factory=set)
    results: list[TileableResult] = field(default_factory=list)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    next_index: int = 0
    cancelled: bool = False
    graph: TaskGraph | None = None
    name: str = ""
    #: bytes of stage intermediates kept in ``pinned`` for later graphs (see TaskConfig.keep_stage_intermediates)
    kept_bytes: int = 0


class SessionProcessor:
    def __init__(self, session_id: str, supervisor: str, reply_to: mo.ActorRef, config: TaskConfig):
        self.session_id = session_id
        self.supervisor = supervisor
        self.reply_to = reply_to
        self.config = config
        self.meta = MetaStore()
        self.refs = RefCounts()
        #: keys live runs and tasks still need (concurrent tasks share chunks: one must not free another's)
        self.pins = Pins()
        self.tasks: dict[str, TaskRecord] = {}
        self._cluster = ClusterAPI(supervisor)
        self._placer: Placer | None = None
        self._placer_time = 0.0
        self._pending_release: list[str] = []
        self._runs_by_task: dict[str, list[GraphRun]] = {}
        self._freeing: dict[str, list[str]] = {}
        #: deletes on their way to workers, by (worker, key): a key made there again is sent after
        self._deleting: dict[tuple[str, str], asyncio.Future] = {}
        self._free_scheduled = False
        self._background: set[asyncio.Task] = set()
        self._watcher: asyncio.Task | None = None
        self.created = time.time()
        #: held results by key: the chunk that made each, to compute it again if its worker is lost
        self.lineage: dict[str, ChunkData] = {}

    # ------------------------------------------------------------------ tasks
    def submit(self, targets: list[TileableData], name: str | None = None) -> str:
        """Start a task computing ``targets``; ``name`` (else one made from them) is what the dashboard shows."""
        task = TaskRecord(uuid.uuid4().hex[:16], list(targets), name=name or task_name(targets))
        task.graph = TaskGraph(task.targets)
        self.tasks[task.task_id] = task
        self._spawn(self._run_task(task))
        if self._watcher is None or self._watcher.done():
            self._watcher = self._spawn(self._watch_workers())
        return task.task_id

    def _spawn(self, coro: Any) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def _watch_workers(self) -> None:
        """While tasks run, watch the cluster's workers: those lost (gone, or back as a new process) take
        their chunks with them, and the runs that needed them stop to run again (see :meth:`_on_lost`)."""
        version = -1
        alive: set[tuple] | None = None
        while any(not t.done.is_set() for t in self.tasks.values()):
            try:
                version, workers = await self._cluster.watch(version, 2.0)
            except Exception as e:  # noqa: BLE001 - the cluster service is stopping with this supervisor
                logger.debug("membership watch ended: %s", e)
                return
            # a worker that came back under its address is a new process: the old one is lost all the same
            now = {(w.info.address, w.info.pid, w.info.started) for w in workers}
            if alive is not None:
                self._on_lost({address for address, _, _ in alive - now})
            alive = now

    def _on_lost(self, lost: set[str]) -> None:
        """Workers are gone with their chunks: the runs that needed them stop, to run again (see _run_chunks)."""
        if not lost:
            return
        self._placer_time = 0.0
        gone: set[str] = set()
        for w in lost:
            gone.update(self.meta.forget_worker(w))
        if gone:
            logger.warning("session %s lost %d chunks with worker(s) %s", self.session_id, len(gone), sorted(lost))
        for task_id, runs in self._runs_by_task.items():
            for run in runs:
                if run.hit_by(lost, gone):
                    run.fail(WorkerLost(f"worker {sorted(lost)[0]} was lost while task {task_id} of session "
                                        f"{self.session_id} ran"))

    async def check_workers(self, suspects: set[str]) -> set[str]:
        """Those of ``suspects`` that do not answer: they are declared lost (to the cluster too)."""
        async def gone(worker: str) -> bool:
            try:
                await mo.ActorRef(worker, EXECUTION_UID).stats.options(timeout=self.config.probe_timeout)()
                return False
            except Exception:  # noqa: BLE001 - unreachable, refused, timed out: gone for our purposes
                return True

        ordered = sorted(suspects)
        dead = {w for w, is_gone in zip(ordered, await asyncio.gather(*[gone(w) for w in ordered])) if is_gone}
        for worker in dead:
            try:
                await self._cluster.mark_lost(worker)
            except Exception as e:  # noqa: BLE001 - the membership learns it from the heartbeats anyway
                logger.debug("could not mark %s lost: %s", worker, e)
        self._on_lost(dead)
        return dead

    def task(self, task_id: str) -> TaskRecord:
        try:
            return self.tasks[task_id]
        except KeyError:
            raise TaskNotFound(f"no task {task_id!r} in session {self.session_id!r}") from None

    async def wait(self, task_id: str, timeout: float) -> TaskInfo:
        task = self.task(task_id)
        if timeout > 0 and not task.done.is_set():
            try:
                await asyncio.wait_for(task.done.wait(), timeout)
            except asyncio.TimeoutError:
                pass
        return self.info(task)

    def info(self, task: TaskRecord) -> TaskInfo:
        n = max(task.n_subtasks, 1)
        progress = 1.0 if task.status is TaskStatus.succeeded else min(task.n_finished / n, 1.0)
        info = TaskInfo(task.task_id, self.session_id, task.status, progress, task.n_subtasks, task.n_finished,
                        task.start_time, task.end_time, task.message, task.error, task.error_traceback,
                        list(task.results))
        if task.status is TaskStatus.succeeded:
            for r in task.results:
                for c in r.chunks:
                    m = self.meta.get(c.key)
                    if m is not None and m.has_value:
                        info.inline_values[c.key] = m.value
        info.tileable_progress = self._tileable_progress(task)
        info.name = task.name
        return info

    def _tileable_progress(self, task: TaskRecord) -> dict[str, float]:
        if task.done.is_set():
            return {r.key: 1.0 for r in task.results} if task.status is TaskStatus.succeeded else {}
        out = {}
        for t in task.targets:
            chunks = t.chunks if isinstance(t.chunks, list) else ()
            if isinstance(t.key, str):
                out[t.key] = sum(1 for c in chunks if c.key in self.meta) / len(chunks) if chunks else 0.0
        return out

    def task_graph(self, task: TaskRecord) -> TaskGraph:
        assert task.graph is not None, "a task's graph is made when it is submitted"
        return task.graph

    def graph_json(self, task_id: str, level: str) -> dict:
        """The task's graph at ``level`` ("tileable" or "subtask") with each node's state, for the dashboard."""
        task = self.task(task_id)
        out = self.task_graph(task).to_json(level, task.status.value, self.meta.__contains__)
        return {"task_id": task_id, "session_id": self.session_id, "status": task.status.value, **out}

    async def cancel(self, task_id: str) -> None:
        task = self.task(task_id)
        if task.status.is_done:
            return
        task.cancelled = True
        for run in self._runs_by_task.get(task_id, ()):
            run.fail(TaskCancelled(f"task {task_id} was cancelled"))
        await self._cancel_on_workers(task)

    async def _run_task(self, task: TaskRecord) -> None:
        task.status = TaskStatus.running
        loop = asyncio.get_running_loop()
        try:
            started = time.perf_counter()
            await self._tile(task, loop)
            tiled = time.perf_counter()
            if task.cancelled:
                raise TaskCancelled(f"task {task.task_id} was cancelled")
            chunks = [c for t in task.targets for c in t.chunks or ()]
            keep = {c.key for c in chunks}
            await self._run_chunks(task, chunks, keep, final=True)
            self._finish_success(task)
            logger.debug("task %s: tiled in %.3f s, ran %d subtasks in %.3f s", task.task_id, tiled - started,
                         task.n_subtasks, time.perf_counter() - tiled)
        except BaseException as e:  # noqa: BLE001 - the task's outcome, handed to whoever waits on it
            self._finish_failure(task, e)
            await self._cancel_on_workers(task)  # what is still queued for it goes
        finally:
            task.end_time = time.time()
            try:
                self.task_graph(task).freeze(task.status.value, self.meta.__contains__)
            except Exception:  # noqa: BLE001 - the dashboard's view must never keep a task from ending
                logger.exception("task %s: could not keep its graph's final states", task.task_id)
            task.targets = []  # the tiled graph goes: a session may run thousands of tasks
            await self._let_go_of(task)
            self._runs_by_task.pop(task.task_id, None)
            task.done.set()
            self._forget_old_tasks()
            await self._apply_releases()

    def _forget_old_tasks(self, keep: int = 1000, keep_graphs: int = 100) -> None:
        """A long session keeps the last ``keep`` finished tasks' records, not every one it ran,
        and the subtask graphs of the last ``keep_graphs``."""
        done = [tid for tid, t in self.tasks.items() if t.done.is_set()]
        for tid in done[:max(0, len(done) - keep)]:
            del self.tasks[tid]
        for tid in done[max(0, len(done) - keep):max(0, len(done) - keep_graphs)]:
            self.task_graph(self.tasks[tid]).trim()

    def _finish_success(self, task: TaskRecord) -> None:
        for t in task.targets:
            for c in t.chunks or ():
                if not isinstance(c.op, HeldData):  # a held result keeps the lineage it has
                    self.lineage[c.key] = c
            chunks = [ChunkResult(c.key, tuple(c.index), tuple(self._shape(c))) for c in t.chunks or ()]
            task.results.append(TileableResult(t.key, _nsplits(t, chunks), chunks))
            self.refs.incref(c.key for c in chunks)
        task.status = TaskStatus.succeeded
        task.message = ""

    def _finish_failure(self, task: TaskRecord, e: BaseException) -> None:
        if task.cancelled or isinstance(e, TaskCancelled):
            task.status = TaskStatus.cancelled
            task.error = TaskCancelled(f"task {task.task_id} was cancelled")
        else:
            task.status = TaskStatus.failed
            task.error = e
            if not task.error_traceback:
                task.error_traceback = "".join(traceback.format_exception(type(e), e, e.__traceback__))
            logger.info("task %s of session %s failed: %r", task.task_id, self.session_id, e)

    def _shape(self, chunk: ChunkData) -> tuple:
        m = self.meta.get(chunk.key)
        if m is not None and m.shape is not None:
            return m.shape
        return chunk.shape

    # ------------------------------------------------------------------ graphs
    async def _tile(self, task: TaskRecord, loop: asyncio.AbstractEventLoop) -> None:
        """Tile the task's targets, running on the cluster the stages that tiling asks for on the way.

        The first step (most of the tiling, as a rule) runs on a thread: the loop serves workers' reports
        meanwhile. A step after a stage (an op's ``tile()`` going on with a few values) runs on the loop
        itself while the step before took under ``inline_tile_below`` seconds: a stage then costs no hop
        to the thread and back, each of which waits for the other thread to be scheduled (and for the
        GIL). A step that takes longer sends the next ones back to the thread.
        """
        steps = TileSteps(task.targets)
        try:
            stage, took = await loop.run_in_executor(None, _step_without_gc, steps.step)
            inline = took < self.config.inline_tile_below
            while stage is not None:
                chunks, want = stage
                try:
                    if task.cancelled:
                        raise TaskCancelled(f"task {task.task_id} was cancelled")
                    values = await self._run_stage(task, chunks, {c.key for c in chunks}, want)
                except BaseException as e:  # noqa: BLE001 - raised where the ops' tile() wait, as a stage's error
                    stage = steps.throw(e)
                    continue
                self._learn_shapes(chunks)
                if inline:
                    stage, took = _step_without_gc(steps.step, values)
                else:
                    stage, took = await loop.run_in_executor(None, _step_without_gc, steps.step, values)
                inline = took < self.config.inline_tile_below
        finally:
            steps.close()

    def _learn_shapes(self, chunks: Sequence[ChunkData]) -> None:
        """A stage ran: its chunks take the shapes they turned out to have (sizes after a filter, say)."""
        for c in chunks:
            shape = self._shape(c)
            if tuple(shape) != tuple(c.shape):
                c.shape = tuple(shape)

    async def _run_stage(self, task: TaskRecord, chunks: Sequence[ChunkData], keep: set[str],
                         want_values: Any) -> list[Any] | None:
        await self._run_chunks(task, chunks, keep)
        return await self.fetch([c.key for c in wanted(chunks, want_values)]) if want_values else None

    async def _run_chunks(self, task: TaskRecord, chunks: Sequence[ChunkData], keep: set[str],
                          final: bool = False) -> None:
        """Compute ``chunks``; when a worker is lost meanwhile, run again what is missing, from lineage.

        A run cut short keeps what it made on the workers still alive: the next
        run reads it and computes only what was lost or not made yet. The
        ``final`` graph of a task (its targets: tiling is over) lets go of the
        stage results it does not read as it starts, and of those it reads once read.
        """
        carried: list[str] = []
        self.pins.pin(keep - task.pinned)
        task.pinned |= keep
        try:
            for attempt in itertools.count(1):
                try:
                    return await self._run_graph(task, chunks, keep, carried, final)
                except WorkerLost as e:
                    if isinstance(e, SubtaskLost) and not await self.check_workers(e.suspects):
                        raise e.error from None  # every worker involved answers: the subtask's own failure
                    if task.cancelled or attempt > self.config.max_retries:
                        raise
                    logger.warning("task %s of session %s: %s; computing what is missing again (retry %d of %d)",
                                   task.task_id, self.session_id, e, attempt, self.config.max_retries)
        finally:
            await self.free(self.pins.unpin(carried) + [k for k in carried if k not in keep])

    async def _run_graph(self, task: TaskRecord, chunks: Sequence[ChunkData], keep: set[str],
                         carried: list[str], final: bool = False) -> None:
        self._forget_dead(await self.placer(task))
        started = time.perf_counter()
        with gc_paused():
            subtasks = fuse(build_subtasks(chunks, self.meta.__contains__, self.lineage.get), keep, in_process=False)
        logger.debug("task %s: %d chunks made %d subtasks in %.3f s", task.task_id, len(chunks), len(subtasks),
                     time.perf_counter() - started)
        run = GraphRun(self, task, subtasks, keep, task.next_index, stage=not final)
        task.next_index += len(subtasks)
        task.n_subtasks += len(subtasks)
        self._runs_by_task.setdefault(task.task_id, []).append(run)
        doomed: list[str] = []
        try:
            if final:  # the run pins what it reads: the rest of the task's stage results goes now
                self._release_stage_results(task, keep)
            await run.start()
            await run.future
        except WorkerLost:
            carried.extend(run.carry())  # the next run reads them
            self._spawn(self._drop_queued(run))
            raise
        except BaseException:
            run.fail(TaskCancelled("stopped"))
            doomed = run.leftovers()
            raise
        finally:
            run.view.stop()
            self._runs_by_task[task.task_id].remove(run)
            await self.free(run.finish(doomed))

    def _forget_dead(self, placer: Placer) -> None:
        """Chunks on workers that are no longer in the cluster are gone (lost while no task watched)."""
        self._on_lost(self.meta.workers() - set(placer.workers))

    # ------------------------------------------------------------------ workers
    async def placer(self, task: TaskRecord) -> Placer:
        """The placer over the cluster's live workers (re-read at most every ``membership_ttl``)."""
        now = time.monotonic()
        if self._placer is not None and now - self._placer_time < self.config.membership_ttl:
            return self._placer
        workers = await self._live_workers(task)
        loads = [WorkerLoad(w.info.address, max(1, w.info.n_cpu), list(w.info.io_addresses),
                            n_gpu=len(w.info.cuda_devices)) for w in workers]
        if self._placer is None:
            self._placer = Placer(loads)
        else:
            self._placer.update(loads)
        self._placer_time = now
        return self._placer

    async def _live_workers(self, task: TaskRecord) -> list:
        workers = await self._cluster.get_workers()
        if workers:
            return workers
        # workers starting beside the supervisor join within moments: say nothing for those
        quiet = min(self.config.no_worker_warning, self.config.no_worker_timeout)
        workers = await self._cluster.wait_for_workers(1, quiet)
        if workers:
            return workers
        message = f"waiting for workers: none registered with supervisor {self.supervisor}"
        task.message = message
        logger.warning("task %s: %s", task.task_id, message)
        workers = await self._cluster.wait_for_workers(1, self.config.no_worker_timeout - quiet)
        if not workers:
            raise NoWorkersError(f"{message} (waited {self.config.no_worker_timeout:g} s)")
        task.message = ""
        return workers

    async def send_specs(self, address: str, specs: list[SubtaskSpec]) -> None:
        task = self.tasks.get(specs[0].task_id)
        if task is not None:
            task.workers_used.add(address)
        try:
            await self._deletes_done(address, specs)
            await mo.ActorRef(address, EXECUTION_UID).submit(specs, self.reply_to)
        except Exception as e:  # noqa: BLE001 - the worker is unreachable: the runs waiting on it fail
            logger.warning("could not send %d subtasks to worker %s: %s", len(specs), address, e)
            self._placer_time = 0.0
            if not await self.check_workers({address}):  # it answers: not a lost worker, a failure
                for run in self._runs_by_task.get(specs[0].task_id, ()):
                    run.fail(e)

    def run_whole(self, coro: Any) -> asyncio.Future:
        """Await this to run ``coro`` to its end even when the awaiting call is cancelled (a worker
        that sent reports died, a client that released results went away): half-handled reports or
        frees would leave the session's state torn."""
        return asyncio.shield(self._spawn(coro))

    async def on_reports(self, reports: list[SubtaskReport]) -> None:
        """Workers' reports: record, free, and dispatch what became ready."""
        to_free: list[str] = []
        to_dispatch: list[tuple[GraphRun, list[int]]] = []
        for report in reports:
            run = self._run_of(report)
            if self._placer is not None:
                self._placer.done(report.worker, gpu=run is not None and run.is_gpu(report),
                                  seconds=report.duration if report.error is None else None)
            if run is None:  # its run ended (failed, cancelled or cut short)
                self._on_late_report(report)
                continue
            try:
                ready, free = run.on_report(report)
            except Exception as e:  # noqa: BLE001 - a report we cannot take ends its run, never hangs it
                logger.exception("task %s: report of subtask %d could not be taken", report.task_id, report.index)
                run.fail(e)
                continue
            to_free.extend(free)
            if ready:
                to_dispatch.append((run, ready))
        if len(to_dispatch) == 1:  # as a rule: no task to wrap it in, and one loop turn less before it is sent
            await to_dispatch[0][0].dispatch(to_dispatch[0][1])
        else:
            await asyncio.gather(*[run.dispatch(ready) for run, ready in to_dispatch])
        if to_free:
            self._free_soon(to_free)

    def _on_late_report(self, report: SubtaskReport) -> None:
        """What a run that has ended made: kept where some live run or result needs the key, else dropped."""
        for key in report.copies:
            self.meta.add_copy(key, report.worker)  # still held by someone: a copy is a copy
        dropped = [k for k in report.copies if k not in self.meta]
        for o in report.outputs:
            if o.key in self.pins or o.key in self.refs:
                self.meta.put(ChunkMeta(o.key, report.worker, o.shape, o.nbytes, o.value, o.has_value))
            elif not self._held_on(o.key, report.worker):
                dropped.append(o.key)
        if dropped:  # not awaited: the reports after this one must not wait on a worker that may be gone
            self._start_delete(report.worker, dropped)

    def _held_on(self, key: str, worker: str) -> bool:
        """Whether meta has ``key`` on ``worker`` (a later run made it there again: it must stay)."""
        m = self.meta.get(key)
        return m is not None and worker in m.holders

    def _run_of(self, report: SubtaskReport) -> GraphRun | None:
        for run in self._runs_by_task.get(report.task_id, ()):
            if run.base <= report.index < run.base + run.total:
                return run
        return None

    # ------------------------------------------------------------------ data
    async def recover(self, keys: Sequence[str]) -> None:
        """Compute again held results lost with a worker, from their lineage, before they are read."""
        lost = sorted({k for k in keys if k not in self.meta and k in self.lineage})
        if not lost:
            return
        logger.warning("session %s: %d held chunks were lost with a worker; computing them again",
                       self.session_id, len(lost))
        task = TaskRecord(f"recover-{uuid.uuid4().hex[:8]}", [])
        task.graph = TaskGraph([])
        try:
            await self._run_chunks(task, [self.lineage[k] for k in lost], set(lost))
        finally:
            await self._let_go_of(task)

    async def fetch(self, keys: list[str]) -> list[Any]:
        """Values of held chunks; those lost with a worker are computed again first."""
        for attempt in range(2):
            await self.recover(keys)
            try:
                return await self._fetch_held(keys)
            except (OSError, mo.ActorNotExist, DataNotFound):
                holders = {w for k in keys if (m := self.meta.get(k)) is not None for w in m.holders}
                if attempt or not await self.check_workers(holders):
                    raise
        raise AssertionError("unreachable")

    async def _fetch_held(self, keys: list[str]) -> list[Any]:
        values: dict[str, Any] = {}
        by_worker: dict[str, list[str]] = {}
        for k in keys:
            m = self.meta.get(k)
            if m is None:
                raise DataNotFound(f"chunk {k} is not held by session {self.session_id!r} (freed, or never computed)")
            if m.has_value:
                values[k] = m.value
            else:
                by_worker.setdefault(m.worker, []).append(k)
        placer = self._placer
        groups = list(by_worker.items())
        results = await asyncio.gather(*[
            fetch_values(self.session_id, ks, w, placer.transfer_addresses(w) if placer else []) for w, ks in groups
        ])
        for (_, ks), vals in zip(groups, results):
            values.update(zip(ks, vals))
        return [values[k] for k in keys]

    async def locate(self, keys: list[str]) -> list[tuple[str | None, Any]]:
        """Per key, ``(None, value)`` for a value kept in meta, else ``(worker, None)``: where to read it."""
        await self.recover(keys)
        out: list[tuple[str | None, Any]] = []
        for k in keys:
            m = self.meta.get(k)
            if m is None:
                raise DataNotFound(f"chunk {k} is not held by session {self.session_id!r} (freed, or never computed)")
            out.append((None, m.value) if m.has_value else (m.worker, None))
        return out

    def adopt(self, metas: list[ChunkMeta]) -> None:
        """Chunks a client put into workers' storage itself: held from now on, as a task's results are.

        They have no lineage: lost with their worker, they cannot be computed again, and what
        reads them then fails with DataNotFound.
        """
        for m in metas:
            self.meta.put(m)
        self.refs.incref(m.key for m in metas)

    async def release(self, keys: list[str]) -> list[str]:
        """The client dropped objects holding ``keys``; frees wait until no task runs.

        Returns the keys that had a reference left to drop (releases still pending count as dropped).
        """
        pending = collections.Counter(self._pending_release)
        held = []
        for k in keys:
            if self.refs.count(k) > pending[k]:
                held.append(k)
                pending[k] += 1
        self._pending_release.extend(keys)
        await self._apply_releases()
        return held

    async def _apply_releases(self) -> None:
        if not self._pending_release or any(not t.done.is_set() for t in self.tasks.values()):
            return
        keys, self._pending_release = self._pending_release, []
        await self.free(self.refs.decref(keys))

    async def free(self, keys: list[str]) -> None:
        """Drop chunks from meta and from the workers that hold them (held results stay; a key a live
        run still needs goes when it is done with it)."""
        keys = self.pins.doom(keys)
        for k in keys:
            if k not in self.refs:
                self.lineage.pop(k, None)
        by_worker: dict[str, list[str]] = {}
        for m in self.meta.pop_many(k for k in keys if k not in self.refs):
            for w in m.holders:
                by_worker.setdefault(w, []).append(m.key)
        await asyncio.gather(*[self._start_delete(w, ks) for w, ks in by_worker.items()])

    def _free_soon(self, keys: list[str]) -> None:
        """Free intermediates with one message per worker per event-loop turn, not one per report."""
        keys = self.pins.doom(keys)
        for m in self.meta.pop_many(k for k in keys if k not in self.refs):
            for w in m.holders:
                self._freeing.setdefault(w, []).append(m.key)
        if self._freeing and not self._free_scheduled:
            self._free_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush_frees)

    def _flush_frees(self) -> None:
        self._free_scheduled = False
        batches, self._freeing = self._freeing, {}
        for worker, keys in batches.items():
            self._start_delete(worker, keys)

    def _start_delete(self, worker: str, keys: list[str]) -> asyncio.Task:
        """Delete ``keys`` on ``worker``; until it is done, a subtask making one of them there waits."""
        done = asyncio.get_running_loop().create_future()
        for k in keys:
            self._deleting[worker, k] = done

        async def delete() -> None:
            try:
                await self._delete_on(worker, keys)
            finally:
                done.set_result(None)
                for k in keys:
                    if self._deleting.get((worker, k)) is done:
                        del self._deleting[worker, k]

        return self._spawn(delete())

    async def _delete_on(self, worker: str, keys: list[str]) -> None:
        try:
            await mo.ActorRef(worker, STORAGE_UID).delete(self.session_id, keys)
        except Exception as e:  # noqa: BLE001 - a lost worker took its chunks with it
            logger.debug("could not free %d chunks on %s: %s", len(keys), worker, e)

    async def _deletes_done(self, worker: str, specs: list[SubtaskSpec]) -> None:
        """Wait for the deletes on ``worker`` of keys that ``specs`` make again (a chunk freed, then
        computed anew by a later stage): a delete arriving after the new copy would take that instead."""
        keys = {k for spec in specs for k in spec.subtask.output_keys}
        pending = self._freeing.get(worker)
        if pending and not keys.isdisjoint(pending):
            self._flush_frees()
        if self._deleting:
            waits = {id(f): f for k in keys if (f := self._deleting.get((worker, k))) is not None}
            if waits:
                await asyncio.gather(*waits.values())

    def keep_for_tiling(self, task: TaskRecord, keys: list[str]) -> list[str]:
        """A stage's run is done with intermediates ``keys``: those that fit the task's budget stay pinned
        with its stage results until tiling ends (the final graph reads them, or they go as it starts);
        returns the rest, to free now."""
        rest = []
        for k in keys:
            m = self.meta.get(k)
            if m is None or task.cancelled or k in task.pinned \
                    or task.kept_bytes + m.nbytes > self.config.keep_stage_intermediates:
                rest.append(k)
                continue
            task.kept_bytes += m.nbytes
            task.pinned.add(k)
            self.pins.pin([k])
        return rest

    def _release_stage_results(self, task: TaskRecord, keep: set[str]) -> None:
        """Tiling is over: no later ``tile()`` reads the task's stage results, so those not in ``keep``
        go now, or, where a live run still reads them, once it has (instead of when the task ends)."""
        stage = task.pinned - keep
        if stage:
            task.pinned -= stage
            self._free_soon(self.pins.unpin(stage) + list(stage))

    async def _let_go_of(self, task: TaskRecord) -> None:
        """The task ended: its stage results, and targets it did not deliver, go unless held or needed."""
        results = {c.key for r in task.results for c in r.chunks}
        pinned, task.pinned = task.pinned, set()
        await self.free(self.pins.unpin(pinned) + [k for k in pinned if k not in results])

    async def _drop_queued(self, run: GraphRun) -> None:
        """What a run cut short still has queued on the workers left goes: the next run makes what is missing."""
        async def drop_on(worker: str) -> None:
            try:
                await mo.ActorRef(worker, EXECUTION_UID).drop_queued(self.session_id, run.task.task_id, run.base,
                                                                     run.base + run.total)
            except Exception as e:  # noqa: BLE001 - a lost worker queues nothing
                logger.debug("could not drop queued subtasks of task %s on %s: %s", run.task.task_id, worker, e)

        await asyncio.gather(*[drop_on(w) for w in set(run.placed.values())])

    async def _cancel_on_workers(self, task: TaskRecord) -> None:
        async def cancel_on(worker: str) -> None:
            try:
                await mo.ActorRef(worker, EXECUTION_UID).cancel(self.session_id, task.task_id)
            except Exception as e:  # noqa: BLE001
                logger.debug("could not cancel task %s on %s: %s", task.task_id, worker, e)

        await asyncio.gather(*[cancel_on(w) for w in task.workers_used])

    async def close(self) -> None:
        for task in self.tasks.values():
            if not task.status.is_done:
                await self.cancel(task.task_id)
        if self._watcher is not None:
            self._watcher.cancel()
        self.lineage.clear()
        workers = {w for m in self.meta.pop_all() for w in m.holders}
        workers |= {w for t in self.tasks.values() for w in t.workers_used}

        async def drop(worker: str) -> None:
            try:
                await mo.ActorRef(worker, EXECUTION_UID).drop_session(self.session_id)
                await mo.ActorRef(worker, STORAGE_UID).delete_session(self.session_id)
            except Exception as e:  # noqa: BLE001
                logger.debug("could not drop session %s on %s: %s", self.session_id, worker, e)

        await asyncio.gather(*[drop(w) for w in workers])


def _step_without_gc(step: Callable[..., Stage | None], *args: Any) -> tuple[Stage | None, float]:
    """What ``step(*args)`` returns, and the seconds it took (on whichever thread it ran)."""
    started = time.perf_counter()
    with gc_paused():
        return step(*args), time.perf_counter() - started


def _nsplits(t: TileableData, chunks: list[ChunkResult]) -> tuple:
    """nsplits from the chunks' real shapes (sizes unknown at tiling are known now)."""
    if not t.nsplits:
        return tuple(t.nsplits or ())
    ndim = len(t.nsplits)
    splits: list[dict[int, int]] = [{} for _ in range(ndim)]
    for c in chunks:
        for d in range(min(ndim, len(c.index), len(c.shape))):
            splits[d].setdefault(c.index[d], c.shape[d])
    return tuple(tuple(s[i] for i in sorted(s)) if s else tuple(t.nsplits[d]) for d, s in enumerate(splits))
