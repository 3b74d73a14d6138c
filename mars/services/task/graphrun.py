"""One chunk graph running on the cluster: dispatch ready subtasks, take reports, free as it goes.

A task runs one graph per tiling stage and one for its targets. The
:class:`GraphRun` sends each ready subtask to the worker the placer picks,
with the locations of inputs held elsewhere; takes the workers' reports;
records meta; frees intermediates; and resolves its future when the last
subtask is done or the first one fails.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from ...core.executor import estimated_elements
from ...core.graph import Subtask
from ..errors import WorkerLost
from ..execution.api import RemoteInput, SubtaskReport, SubtaskSpec
from ..meta.core import ChunkMeta
from .graphstate import GraphState

if TYPE_CHECKING:
    from .processor import SessionProcessor, TaskRecord

#: a chained subtask reads at most this much from workers other than its chain's (see GraphRun._add_followers)
_FOLLOW_MAX_REMOTE_BYTES = 1 << 20
#: a graph this small runs whole on one slot (see GraphRun._is_small)
_CHAIN_MAX_SUBTASKS = 256
_CHAIN_MAX_ELEMENTS = 100_000
_CHAIN_MAX_INPUT_BYTES = 1 << 20
#: a graph whose computed inputs sit on one worker goes whole to a slot there while they come to no more
#: than this, and the outputs of known size to no more than _GATHER_MAX_ELEMENTS (see GraphRun._is_gathered)
_GATHER_MAX_INPUT_BYTES = 4 << 20
_GATHER_MAX_ELEMENTS = 1e7
#: a GPU graph on one device goes whole to its slot while its outputs stay below this many elements
_CHAIN_MAX_GPU_ELEMENTS = 1e9
#: inputs held elsewhere whose values the supervisor has (see SubtaskSpec.given) go by value below this size
_GIVEN_BELOW = 4096


class SubtaskLost(WorkerLost):
    """A subtask failed outside its chunk function (its slot, or a read of an input from another worker).

    The task service checks ``suspects`` (the worker that ran it and those it
    read from): when one is gone, the run is cut short and runs again; when
    all answer, ``error`` is the subtask's own failure and the task fails with it.
    """

    def __init__(self, message: str, error: BaseException, suspects: set[str]):
        super().__init__(message)
        self.error = error
        self.suspects = suspects


class GraphRun:
    def __init__(self, proc: SessionProcessor, task: TaskRecord, subtasks: Sequence[Subtask], keep: set[str], base: int,
                 stage: bool = False):
        self.proc = proc
        #: a stage's graph (tiling goes on after it): its intermediates may be kept for the graphs after it
        self.stage = stage
        self.task = task
        self.keep = keep
        self.base = base
        self.state = GraphState(subtasks, proc.meta.__contains__, keep)
        self.future: asyncio.Future = asyncio.get_running_loop().create_future()
        self.placed: dict[int, str] = {}
        #: workers each dispatched subtask reads inputs from
        self.sources: dict[int, set[str]] = {}
        #: workers that will hold a copy of a key once the subtask sent there reading it runs (a slot keeps what it
        #: fetched): the placer counts them as holders, so a broadcast side moves once per worker, not once per read
        self.copies: dict[str, set[str]] = {}
        self.chained = False
        #: the rest of each chain by its head (see :func:`chains`), and the subtasks sent with their head
        self.chains = chains(self.state.subtasks)
        self.followers: set[int] = set()
        self.view = proc.task_graph(task).add_run(base, subtasks)
        #: keys this run reads or makes and still needs: other runs of the session do not free them meanwhile
        self.pinned = {k for st in self.state.subtasks for k in (*st.input_keys, *st.output_keys)}
        proc.pins.pin(self.pinned)

    @property
    def total(self) -> int:
        return self.state.total

    async def start(self) -> None:
        if self.state.total == 0:
            self.future.set_result(None)
            return
        if self._is_small() or self._is_local_path() or self._is_gathered() or await self._is_one_device():
            await self._dispatch_chained()
        else:
            await self.dispatch(self.state.initial_ready(), sources=True)

    def _is_small(self) -> bool:
        """Small graphs go whole to one slot: one round trip instead of one per level."""
        if self.state.total > _CHAIN_MAX_SUBTASKS:
            return False
        input_bytes = 0
        for st in self.state.subtasks:
            for k in st.input_keys:
                m = self.proc.meta.get(k)
                input_bytes += m.nbytes if m is not None else 0
        return input_bytes < _CHAIN_MAX_INPUT_BYTES and estimated_elements(self.state.subtasks, {}) < _CHAIN_MAX_ELEMENTS

    def _is_local_path(self) -> bool:
        """Each subtask reads what the one before it made (a filter, a projection, a sort of one partition,
        say), and what they read that is computed already is nearly all on one worker: they would run one
        after the other there anyway, so the graph goes whole to one slot, whatever its size (one round
        trip to a worker instead of one per subtask)."""
        subtasks = self.state.subtasks
        if not 1 < len(subtasks) <= _CHAIN_MAX_SUBTASKS or any(st.gpu for st in subtasks):
            return False
        if any(set(before.output_keys).isdisjoint(after.input_keys) for before, after in pairwise(subtasks)):
            return False
        return self._computed_inputs()[1] <= _FOLLOW_MAX_REMOTE_BYTES

    def _is_gathered(self) -> bool:
        """Every subtask reads something, and what the graph reads that is computed already is small and
        (nearly all) on one worker: the last steps of a join or a groupby on their few partitions, say. The
        graph goes whole to a slot there: level by level, each level would cost a round trip through the
        supervisor, and the work they do on so little data is small. A graph with sources (which may make
        much from nothing) or with outputs known to be big is left to the placer."""
        subtasks = self.state.subtasks
        if not 1 < len(subtasks) <= _CHAIN_MAX_SUBTASKS or any(st.gpu or not st.input_keys for st in subtasks):
            return False
        total, elsewhere = self._computed_inputs()
        if total > _GATHER_MAX_INPUT_BYTES or elsewhere > _FOLLOW_MAX_REMOTE_BYTES:
            return False
        made = sum(math.prod(shape) for st in subtasks for shape in st.output_shapes  # sizes known before run
                   if not any(math.isnan(d) for d in shape))
        return made <= _GATHER_MAX_ELEMENTS

    def _computed_inputs(self) -> tuple[int, int]:
        """Bytes of the computed chunks the graph reads, and of those not on the worker holding most of them."""
        held: dict[str, int] = {}
        total = 0
        for k in {k for st in self.state.subtasks for k in st.input_keys}:
            m = self.proc.meta.get(k)
            if m is not None:
                total += m.nbytes
                for w in m.holders:
                    held[w] = held.get(w, 0) + m.nbytes
        return total, total - max(held.values(), default=0)

    async def _is_one_device(self) -> bool:
        """A GPU graph whose inputs all sit on one worker with one GPU goes there whole: its subtasks would run
        one after the other on that GPU slot anyway, and one round trip replaces one per level. Its outputs,
        kept on the device until the chain ends, must stay below :data:`_CHAIN_MAX_GPU_ELEMENTS`."""
        subtasks = self.state.subtasks
        if self.state.total > _CHAIN_MAX_SUBTASKS or not all(st.gpu for st in subtasks):
            return False
        holders: set[str] = set()
        for st in subtasks:
            for k in st.input_keys:
                m = self.proc.meta.get(k)
                if m is not None:
                    holders |= m.holders
        if len(holders) != 1:
            return False
        worker = (await self.proc.placer(self.task)).workers.get(next(iter(holders)))
        if worker is None or worker.n_gpu != 1:
            return False
        made = 0.0
        for st in subtasks:
            for shape in st.output_shapes:
                made += math.prod(d if d == d else 1e6 for d in shape)  # NaN: not known until run, say large
        return made < _CHAIN_MAX_GPU_ELEMENTS

    async def _dispatch_chained(self) -> None:
        self.chained = True
        placer = await self.proc.placer(self.task)
        held: dict[str, int] = {}
        for st in self.state.subtasks:
            for k in st.input_keys:
                m = self.proc.meta.get(k)
                if m is not None:
                    for w in m.holders:
                        held[w] = held.get(w, 0) + m.nbytes
        gpu = any(st.gpu for st in self.state.subtasks)
        address = placer.place(held, gpu=gpu)
        specs = [self._spec(i, address, placer) for i in range(self.state.total)]
        for spec in specs:
            spec.chained = 1
        placer.add_load(address, len(specs) - 1, gpu=gpu)  # place() counted one; each spec is reported
        await self.proc.send_specs(address, specs)

    async def dispatch(self, ready: list[int], sources: bool = False) -> None:
        if not ready or self.future.done():
            return
        placer = await self.proc.placer(self.task)
        subtasks = self.state.subtasks
        by_worker: dict[str, list[SubtaskSpec]] = {}
        no_inputs = [i for i in ready if not subtasks[i].input_keys and not subtasks[i].gpu] if sources else []
        if no_inputs:
            for i, address in zip(no_inputs, placer.place_sources(len(no_inputs))):
                by_worker.setdefault(address, []).append(self._spec(i, address, placer))
        if no_inputs:
            sourced = set(no_inputs)
            rest = [i for i in ready if i not in sourced]
        else:
            rest = ready
        for i in rest:
            address = placer.place(self._held_by(i), gpu=subtasks[i].gpu)
            by_worker.setdefault(address, []).append(self._spec(i, address, placer))
        for specs in by_worker.values():
            self._add_followers(specs, placer)
        if len(by_worker) == 1:  # no task to wrap the send in: it leaves in this loop turn
            await self.proc.send_specs(*next(iter(by_worker.items())))
        else:
            await asyncio.gather(*[self.proc.send_specs(address, specs) for address, specs in by_worker.items()])

    def _add_followers(self, specs: list[SubtaskSpec], placer: Any) -> None:
        """Send with each spec heading a chain (see :func:`chains`) the rest of the chain, to run after it in
        its slot: one round trip through the supervisor per chain instead of one per subtask."""
        for spec in list(specs):
            i = spec.index - self.base
            rest = self.chains.get(i)
            if not rest:
                continue
            address = self.placed[i]
            # a subtask reading much from another worker is left to the placer (it may go where that is)
            # and heads the rest of the chain
            n = next((n for n, j in enumerate(rest) if self._remote_bytes(j, address) > _FOLLOW_MAX_REMOTE_BYTES),
                     len(rest))
            if n < len(rest) - 1:
                self.chains[rest[n]] = rest[n + 1:]
            if not n:
                continue
            spec.chained = spec.index + 1
            for j in rest[:n]:
                follower = self._spec(j, address, placer)
                follower.chained = spec.chained
                specs.append(follower)
                self.followers.add(j)
            placer.add_load(address, n, gpu=False)  # place() counted the head; each spec is reported

    def _remote_bytes(self, i: int, address: str) -> int:
        """Bytes of subtask ``i``'s computed inputs that ``address`` does not hold."""
        meta = self.proc.meta
        return sum(m.nbytes for k in self.state.subtasks[i].input_keys
                   if (m := meta.get(k)) is not None and address not in m.holders)

    def _held_by(self, i: int) -> dict[str, int]:
        """Bytes of subtask ``i``'s inputs by the worker holding them (or soon holding a copy)."""
        held: dict[str, int] = {}
        meta, copies = self.proc.meta, self.copies
        for k in self.state.subtasks[i].input_keys:
            m = meta.get(k)
            if m is None:
                continue
            for w in (m.holders | copies[k]) if k in copies else m.holders:
                held[w] = held.get(w, 0) + m.nbytes
        return held

    def _spec(self, i: int, address: str, placer: Any) -> SubtaskSpec:
        st = self.state.subtasks[i]
        self.placed[i] = address
        self.view.scheduled(i, address)
        remote, given = {}, {}
        for k in st.input_keys:
            m = self.proc.meta.get(k)
            if m is None or address in m.holders:
                continue
            if m.has_value and m.nbytes < _GIVEN_BELOW:
                given[k] = m.value
            else:
                remote[k] = RemoteInput(m.worker, placer.transfer_addresses(m.worker), m.nbytes)
                self.copies.setdefault(k, set()).add(address)
        self.sources[i] = {r.worker for r in remote.values()}
        report_values = any(k in self.keep for k in st.output_keys)
        return SubtaskSpec(self.proc.session_id, self.task.task_id, self.base + i, st,
                           (self.task.order, self.base + i), remote, report_values, given=given)

    def is_gpu(self, report: SubtaskReport) -> bool:
        """Whether the reported subtask ran on a GPU slot (the placer counts those apart)."""
        i = report.index - self.base
        return self.chained and any(st.gpu for st in self.state.subtasks) or (
            0 <= i < len(self.state.subtasks) and self.state.subtasks[i].gpu)

    def on_report(self, report: SubtaskReport) -> tuple[list[int], list[str]]:
        """Record a finished subtask; returns (ready subtasks, keys to free)."""
        i = report.index - self.base
        if report.error is not None:
            self.proc.task_graph(self.task).subtask_failed(self.view, i)
            if not self.future.done():
                self.task.error_traceback = report.traceback
                self.future.set_exception(self._failure(i, report))
            return [], []
        for o in report.outputs:
            self.proc.meta.put(ChunkMeta(o.key, report.worker, o.shape, o.nbytes, o.value, o.has_value))
        for key in report.copies:
            self.proc.meta.add_copy(key, report.worker)
        if self.future.done():  # the run failed or was cancelled meanwhile: what it made goes (at its end)
            return [], self.proc.pins.doom(o.key for o in report.outputs if o.key in self.state.owned)
        self.task.n_finished += 1
        self.proc.task_graph(self.task).subtask_done(self.view, i)
        ready, free, released = self.state.complete_releasing(i)
        free = self._let_go(released, free)
        if self.stage and free:
            free = self.proc.keep_for_tiling(self.task, free)
        if self.chained:
            ready = []  # sent already, with the rest of the chain
        elif self.followers:
            ready = [j for j in ready if j not in self.followers]  # sent with the head of their chain
        if self.state.is_finished:
            self.future.set_result(None)
        return ready, free

    def _failure(self, i: int, report: SubtaskReport) -> BaseException:
        """A chunk function's error as itself; a failure around it (no traceback from the function) as lost."""
        if report.traceback:
            if isinstance(report.error, (StopIteration, StopAsyncIteration)):  # a future refuses these as errors
                error = RuntimeError(f"a chunk function raised {type(report.error).__name__}: {report.error}")
                error.__cause__ = report.error
                return error
            return report.error  # type: ignore[return-value]
        suspects = {report.worker, *self.sources.get(i, ())}
        if report.unreachable:  # read from a worker other than its sources (a read ahead of an earlier run)
            suspects.add(report.unreachable)
        assert report.error is not None
        return SubtaskLost(f"subtask {report.index} failed on {report.worker}: {report.error!r}", report.error,
                           suspects)

    def hit_by(self, lost: set[str], gone: set[str]) -> bool:
        """Whether losing ``lost`` workers, and ``gone`` chunks with them, stops this run from finishing."""
        if self.future.done():
            return False
        st = self.state
        for i, sub in enumerate(st.subtasks):
            if st.done[i]:
                if any(k in gone and k in self.keep for k in sub.output_keys):
                    return True
            elif self.placed.get(i) in lost or any(k in gone for k in sub.input_keys):
                return True
        return False

    def fail(self, error: BaseException) -> None:
        if not self.future.done():
            self.future.set_exception(error)

    def _let_go(self, keys: Sequence[str], doomed: Sequence[str]) -> list[str]:
        """This run no longer needs ``keys`` and would free ``doomed``: returns what to free now
        (a key another run of the session still needs waits for it)."""
        pinned = self.pinned
        mine = [k for k in keys if k in pinned]
        pinned.difference_update(mine)
        pins = self.proc.pins
        return pins.unpin(mine) + pins.doom(doomed)

    def leftovers(self) -> list[str]:
        """Intermediates this run would make and still holds: freed when it stops early."""
        return [k for k in self.state.owned if k in self.pinned]

    def carry(self) -> list[str]:
        """The leftovers, still pinned, handed to the caller (a run cut short: the next one reads them)."""
        keys = self.leftovers()
        self.pinned.difference_update(keys)
        return keys

    def finish(self, doomed: Sequence[str] = ()) -> list[str]:
        """The run ended: it lets go of every key it still pins; returns what to free now."""
        return self._let_go(list(self.pinned), doomed)


def chains(subtasks: Sequence[Subtask]) -> dict[int, list[int]]:
    """Runs of subtasks in which each reads, of what the graph makes, only what the one before made, and is
    the only subtask to read it: each waits for the one before anyway, so a run goes whole to the slot its
    first subtask goes to. By the index of the first, the others in order (GPU subtasks are never chained).

    >>> from mars.core.graph import Subtask
    >>> a, b, c = Subtask("op", [], ["a"]), Subtask("op", ["a"], ["b"]), Subtask("op", ["b", "x"], ["c"])
    >>> chains([a, b, c]), chains([a, b, Subtask("op", ["a"], ["d"])])
    ({0: [1, 2]}, {})
    """
    made_by = {k: i for i, st in enumerate(subtasks) for k in st.output_keys}
    readers: dict[int, set[int]] = {}
    reads: list[set[int]] = []
    for j, st in enumerate(subtasks):
        sources = {made_by[k] for k in st.input_keys if k in made_by}
        reads.append(sources)
        for i in sources:
            readers.setdefault(i, set()).add(j)
    after = {}
    for j, sources in enumerate(reads):
        if len(sources) == 1:
            i = next(iter(sources))
            if readers[i] == {j} and not subtasks[i].gpu and not subtasks[j].gpu:
                after[i] = j
    out: dict[int, list[int]] = {}
    for head in sorted(set(after) - set(after.values())):
        rest: list[int] = []
        i = head
        while i in after and len(rest) < _CHAIN_MAX_SUBTASKS:
            i = after[i]
            rest.append(i)
        out[head] = rest
    return out
