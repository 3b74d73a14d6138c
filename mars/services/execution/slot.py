"""A slot: one sub pool process of a worker that runs subtasks one at a time.

The slot reads its inputs from the worker's shared memory (or, for inputs
held by other workers, through their transfer actors), runs the subtask's op,
and stores the outputs in shared memory, handing back their descriptors. The
chunk function runs on a thread of its own so that the slot's event loop can
still fetch and answer while it computes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import os
import time
import traceback
from typing import Any

from ... import oscar as mo
from ...core.device import is_device_array, run_op, synchronize, to_host
from ...core.shuffle import piece_keys
from ...serialization import serialize
from ..errors import DataNotFound
from ..storage.api import fetch_values
from ..storage.device import holder_name
from ..storage.shm import (
    INLINE_BELOW,
    StoredObject,
    get_object,
    keep_mappings,
    put_object,
    sweep_kept,
)
from .api import ChunkFunctionExit, FetchAhead, SlotOutcome, SubtaskSpec, op_name
from .devicecache import DEVICE_CACHE
from .heap import keep_freed_memory
from .profiler import Profile, StackSampler

logger = logging.getLogger(__name__)

_Key = tuple[str, str]  # (session id, chunk key)

#: how long a slot may keep the mapping of a segment that was deleted or spilled (see shm._KeptMappings)
KEPT_SWEEP_SECONDS = 0.25


class SlotRunnerActor(mo.Actor):
    """Runs batches of subtask specs; ``prefix`` names the worker's shared-memory segments."""

    def __init__(self, prefix: str, one_thread: bool = True) -> None:
        self._prefix = prefix
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="mars-slot")
        self._one_thread = one_thread
        self._cancelled: set[tuple[str, str]] = set()
        #: inputs of queued subtasks read ahead (see FetchAhead): (session, key) -> (task, value)
        self._ahead: dict[_Key, tuple[str, Any]] = {}
        #: and those on their way: (session, key) -> (task, the call's future, the key's place in its answer)
        self._pending: dict[_Key, tuple[str, asyncio.Future, int, str]] = {}  # task, call, position, worker
        self._fetching: set[asyncio.Future] = set()
        #: batches read their inputs and go to the thread one after the other, in the order they came
        self._order = asyncio.Lock()
        #: the statistical profile of what this slot's subtasks ran (see profiler.py)
        self._sampler = StackSampler(root=_run_one.__code__)
        self._sweeper: asyncio.Task | None = None

    async def __post_create__(self) -> None:
        # the partitions of held tables are read by query after query: their mappings stay (see shm._KeptMappings)
        keep_mappings()
        keep_freed_memory()  # columns freed by one subtask are reused by the next, not faulted in again
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep_kept())
        if self._one_thread:
            # a slot is one core: BLAS/OpenMP pools already made (a forked slot inherits its
            # parent's) are cut to one thread; the environment covers those made later
            from threadpoolctl import threadpool_limits

            threadpool_limits(limits=1)

    async def __pre_destroy__(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        for fut in list(self._fetching):
            fut.cancel()
        self._pool.shutdown(wait=False)
        self._sampler.close()

    @staticmethod
    async def _sweep_kept() -> None:
        """Let go of kept mappings of deleted or spilled segments within :data:`KEPT_SWEEP_SECONDS`."""
        while True:
            await asyncio.sleep(KEPT_SWEEP_SECONDS)
            sweep_kept()

    @mo.no_lock
    async def run(self, specs: list[SubtaskSpec], ahead: FetchAhead | None = None) -> list[SlotOutcome]:
        """Run ``specs``; ``ahead`` names inputs of queued subtasks to read with theirs (see :class:`FetchAhead`).

        The worker sends the next batch while one runs: its inputs are read
        meanwhile, and the slot's one thread goes on to it as soon as the
        batch before ends, with no round trip through the worker between them.
        Batches read and start in the order they came (their reads ahead were
        planned in that order).
        """
        async with self._order:
            remote = await self._fetch_remote(specs, ahead)
            done = asyncio.get_running_loop().run_in_executor(
                self._pool, _run_batch, specs, remote, self._prefix, self._cancelled, self._sampler,
                holder_name(self.address, self.uid))
        return await done

    @mo.no_lock
    async def host_copies(self, keys: list[str]) -> list[StoredObject]:
        """Host copies of chunks this GPU slot holds only in device memory (see devicecache); KeyError if gone."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, lambda: [DEVICE_CACHE.host_copy(k, self._prefix) for k in keys])

    @mo.no_lock
    def drop_device(self, keys: list[str]) -> None:
        """Free the device memory of chunks the worker forgot."""
        DEVICE_CACHE.drop(keys)

    async def _fetch_from(self, session_id: str, worker: str, transfer: list[str], keys: list[str]) -> list[Any]:
        """The values of ``keys`` from another worker; failing that, the error in place of each."""
        try:
            return await fetch_values(session_id, keys, worker, transfer)
        except Exception as e:  # noqa: BLE001 - only the subtasks reading these keys fail (see _run_one)
            logger.warning("could not read %d chunks from worker %s: %s", len(keys), worker, e)
            return [InputLost(worker, e)] * len(keys)

    @mo.no_lock
    def drop_ahead(self, session_id: str, keys: list[str]) -> None:
        """Forget inputs read ahead (their subtask runs elsewhere, or not at all)."""
        for key in keys:
            self._ahead.pop((session_id, key), None)
            self._pending.pop((session_id, key), None)

    @mo.no_lock
    def ping(self) -> int:
        """This slot's process id; answering at all says the slot is up (after a restart, say)."""
        return os.getpid()

    @mo.no_lock
    def cancel(self, session_id: str, task_id: str) -> None:
        """Skip the task's subtasks not started yet in the batch in hand (a chained graph, say)."""
        for held in (self._ahead, self._pending):
            for k in [k for k, entry in held.items() if k[0] == session_id and entry[0] == task_id]:
                del held[k]
        self._cancelled.add((session_id, task_id))
        while len(self._cancelled) > 1000:  # old tasks' marks: their batches are long gone
            self._cancelled.pop()

    @mo.no_lock
    def profile(self, session_id: str | None = None, task_id: str | None = None) -> Profile:
        """The sampled stacks of a task's (or a session's, or all) subtasks on this slot so far."""
        return self._sampler.profile(session_id, task_id)

    async def _fetch_remote(self, specs: list[SubtaskSpec], ahead: FetchAhead | None = None) -> dict[str, Any]:
        """Values of every input held by another worker: read ahead already, else fetched side by side, one
        call per worker. Then the inputs ``ahead`` names start coming, one call per worker, while the batch runs."""
        values: dict[str, Any] = {}
        waits: list[tuple[str, asyncio.Future, int]] = []
        by_worker: dict[tuple, list[str]] = {}
        needed: set[_Key] = set()
        for spec in specs:
            for key, where in spec.remote_inputs.items():
                k = (spec.session_id, key)
                if k in needed:
                    continue
                needed.add(k)
                if k in self._ahead:
                    values[key] = self._ahead.pop(k)[1]
                elif k in self._pending and self._pending[k][3] == where.worker:
                    _, fut, i, _ = self._pending.pop(k)
                    waits.append((key, fut, i))
                else:  # not read ahead, or by an earlier run from a worker the chunk is no longer read from
                    by_worker.setdefault((spec.session_id, where.worker, tuple(where.transfer_addresses)),
                                         []).append(key)
        groups = list(by_worker)
        keys = [sorted(by_worker[g]) for g in groups]
        results = await asyncio.gather(*[self._fetch_from(g[0], g[1], list(g[2]), k) for g, k in zip(groups, keys)])
        for group_keys, vals in zip(keys, results):
            values.update(zip(group_keys, vals))
        for key, fut, i in waits:
            values[key] = (await fut)[i]
        self._read_ahead(ahead, needed)
        return values

    def _read_ahead(self, ahead: FetchAhead | None, needed: set[_Key]) -> None:
        """Hold exactly what ``ahead`` keeps, and start the calls that bring what it fetches."""
        keep = {(ahead.session_id, k) for k in ahead.keep} if ahead is not None else set()
        for held in (self._ahead, self._pending):
            for k in [k for k in held if k not in keep]:
                del held[k]
        if ahead is None:
            return
        by_worker: dict[tuple, list[str]] = {}
        for key, where in ahead.fetch.items():
            k = (ahead.session_id, key)
            if k not in self._ahead and k not in self._pending and k not in needed:
                by_worker.setdefault((where.worker, tuple(where.transfer_addresses)), []).append(key)
        for (worker, transfer), keys in by_worker.items():
            keys = sorted(keys)
            fut = asyncio.ensure_future(self._fetch_from(ahead.session_id, worker, list(transfer), keys))
            self._fetching.add(fut)
            for i, key in enumerate(keys):
                self._pending[(ahead.session_id, key)] = (ahead.task_id, fut, i, worker)
            fut.add_done_callback(functools.partial(self._landed, ahead.session_id, keys))

    def _landed(self, session_id: str, keys: list[str], fut: asyncio.Future) -> None:
        """A read-ahead call ended: its values are held (the lost ones not: their subtask fetches them itself)."""
        self._fetching.discard(fut)
        values = fut.result() if not fut.cancelled() else [None] * len(keys)
        for key, value in zip(keys, values):
            k = (session_id, key)
            entry = self._pending.get(k)
            if entry is not None and entry[1] is fut:
                del self._pending[k]
                if not fut.cancelled() and not isinstance(value, InputLost):
                    self._ahead[k] = (entry[0], value)


def _run_batch(specs: list[SubtaskSpec], remote: dict[str, Any], prefix: str,
               cancelled: set[tuple[str, str]], sampler: StackSampler | None = None,
               holder: str | None = None) -> list[SlotOutcome]:
    """Run ``specs`` in order; a spec may read what an earlier one in the batch made (a chained graph).

    ``cancelled`` (filled by the actor's loop meanwhile) names tasks whose
    specs are skipped from then on: they get no outcome. ``holder`` names
    this slot in the descriptors of chunks it keeps in device memory.
    """
    made: dict[str, Any] = {}
    failed: set[tuple[str, int]] = set()
    copied: set[str] = set()
    outcomes = []
    # a chain's value is held in memory until its last reader in the batch ran (a long chain of big
    # partitions would otherwise hold every step's output at once)
    last_read = {k: i for i, spec in enumerate(specs) if spec.chained for k in spec.subtask.input_keys}
    try:
        for i, spec in enumerate(specs):
            if spec.chained and (spec.task_id, spec.chained) in failed:
                continue  # the rest of a failed chain reads what failed: its first error is the report
            if (spec.session_id, spec.task_id) in cancelled:
                continue
            if sampler is not None:
                sampler.enter(spec.session_id, spec.task_id, spec.subtask.op)
            outcome = _run_one(spec, remote, prefix, made, holder)
            outcome.copies = _copy_remote(spec, remote, prefix, copied)
            outcome.moved = DEVICE_CACHE.take_moved() if holder is not None else []
            outcomes.append(outcome)
            if outcome.error is not None and spec.chained:
                failed.add((spec.task_id, spec.chained))
            if made:
                for k in [k for k in made if last_read.get(k, -1) <= i]:
                    del made[k]
    finally:
        if sampler is not None:
            sampler.pause()
    return outcomes


class InputLost:
    """Stands for an input that could not be read from another worker: the subtask reading it fails
    with ``error`` and no traceback, which tells the supervisor to check that worker."""

    def __init__(self, worker: str, error: BaseException):
        self.worker, self.error = worker, error


def _run_one(spec: SubtaskSpec, remote: dict[str, Any], prefix: str, made: dict[str, Any],
             holder: str | None = None) -> SlotOutcome:
    st = spec.subtask
    started = time.perf_counter()
    began = time.time()
    lost = next((remote[k] for k in spec.remote_inputs if isinstance(remote.get(k), InputLost)), None)
    if lost is not None:
        return SlotOutcome(spec.index, spec.task_id, error=_sendable(lost.error), unreachable=lost.worker)
    try:
        try:
            inputs = _read_inputs(spec, remote, made, holder)
        except DataNotFound as e:  # an input's segment is gone (its worker lost, say): not the function's error,
            # so no traceback, and the supervisor checks the workers involved and computes what was lost again
            return SlotOutcome(spec.index, spec.task_id, error=_sendable(e), duration=time.perf_counter() - started)
        result = run_op(st.op, inputs)
        del inputs
        values = (result,) if len(st.output_keys) == 1 else tuple(result)
        if spec.chained:
            made.update(zip(st.output_keys, values))
        descs = [_put(k, v, prefix, spec.session_id, holder) for k, v in zip(st.output_keys, values)]
        shapes = [_shape_of(v) for v in values]
        if st.gpu:
            synchronize()  # done means computed: kernels run asynchronously, and their errors are this subtask's
    except Exception as e:  # noqa: BLE001 - a user's chunk function may raise anything; the report carries it
        return SlotOutcome(spec.index, spec.task_id, error=_sendable(e), traceback=traceback.format_exc(),
                           duration=time.perf_counter() - started)
    except BaseException as e:  # noqa: BLE001 - sys.exit or KeyboardInterrupt in user code: not the slot's end
        return SlotOutcome(spec.index, spec.task_id, error=_exit_error(e, st.op), traceback=traceback.format_exc(),
                           duration=time.perf_counter() - started)
    return SlotOutcome(spec.index, spec.task_id, descs, shapes, duration=time.perf_counter() - started, started=began)


def _put(key: str, value: Any, prefix: str, session_id: str = "", holder: str | None = None) -> Any:
    """Store an output: a device array stays in device memory (a descriptor naming ``holder``; see devicecache)
    unless it is small enough to travel inline; anything else in shared memory (a shuffle's tuples of pieces too)."""
    if is_device_array(value):
        if holder is not None and value.nbytes >= INLINE_BELOW:
            desc = DEVICE_CACHE.keep(key, value, session_id, holder, prefix)
            if desc is not None:
                return desc
        DEVICE_CACHE.put(key, value)
    return put_object(key, to_host(value), prefix)


def _exit_error(error: BaseException, op: Any) -> ChunkFunctionExit:
    """The error that fails a subtask whose chunk function raised ``SystemExit``, ``KeyboardInterrupt``...:
    raised as itself in the client, it would end the client's program."""
    how = f"called sys.exit({error.code!r})" if isinstance(error, SystemExit) else f"raised {type(error).__name__}"
    detail = f": {error}" if not isinstance(error, SystemExit) and str(error) else ""
    return ChunkFunctionExit(f"the chunk function of {op_name(op)} {how}{detail}; a chunk function must return "
                             "its result or raise an Exception (the slot process keeps running)")


def _copy_remote(spec: SubtaskSpec, remote: dict[str, Any], prefix: str, copied: set[str]) -> list[Any]:
    """Keep what was fetched from other workers here too: the next subtask reading it
    on this worker (a row block of a matrix product, say) finds it in shared memory.

    A shuffle's pieces are not kept: their reducer, this subtask, is their only reader.
    """
    out = []
    pieces = piece_keys(spec.subtask.op, spec.subtask.input_keys)
    for key in spec.remote_inputs:
        if key in pieces:
            continue
        if key in remote and key not in copied and not isinstance(remote[key], InputLost):
            copied.add(key)
            try:
                out.append(put_object(key, remote[key], prefix))
            except Exception as e:  # noqa: BLE001 - a copy is an optimization: shared memory may be full
                logger.debug("could not keep a copy of %s: %s", key, e)
    return out


def _read_inputs(spec: SubtaskSpec, remote: dict[str, Any], made: dict[str, Any], holder: str | None) -> list:
    """The subtask's inputs in order; a key read twice is one object (x @ x.T can then use BLAS's symmetric
    product)."""
    read: dict[str, Any] = {}
    for key in spec.subtask.input_keys:
        if key not in read:
            held = DEVICE_CACHE.get(key) if holder is not None else None
            read[key] = held if held is not None else made[key] if key in made else _input(spec, key, remote)
    return [read[key] for key in spec.subtask.input_keys]


def _input(spec: SubtaskSpec, key: str, remote: dict[str, Any]) -> Any:
    desc = spec.local_inputs.get(key)
    if desc is not None:
        return get_object(desc)
    if key in spec.given:
        return spec.given[key]
    if key in remote:
        return remote[key]
    raise KeyError(f"input chunk {key} of subtask {spec.index} is neither on this worker nor on another")


def _shape_of(value: Any) -> tuple | None:
    shape = getattr(value, "shape", None)
    return tuple(shape) if shape is not None else None


def _sendable(error: BaseException) -> BaseException:
    """The error itself when it can cross a process boundary, else a RemoteError that names it."""
    try:
        serialize(error)
        return error
    except Exception:  # noqa: BLE001 - any pickling failure
        return mo.RemoteError(f"{type(error).__module__}.{type(error).__qualname__}: {error}")
