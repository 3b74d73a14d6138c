"""Tiling: tileable graph → chunk graph, in stages when an op needs data first.

``tile()`` of an op is a plain function, or a generator that yields

- a list of chunks: they are computed first and their shapes filled in
  (e.g. sizes after a boolean filter), then ``tile()`` goes on;
- a :class:`~mars.core.operator.Fetch`: the chunks are computed and the
  ``yield`` expression evaluates to their values (e.g. samples for a sort).

The :class:`Tiler` drives this; whoever runs it (the local session now, the
task service later) supplies ``run_chunks`` to compute what is asked for.
"""

from __future__ import annotations

import contextvars
import heapq
import inspect
from collections.abc import Callable, Generator, Iterable, Sequence
from typing import Any

from .device import to_host
from .entity import ChunkData, Tileable, TileableData
from .operator import Fetch, Tiled
from .options import options

#: computes ``chunks``; ``want`` says whose values to return: all (True), none (False), or those of a
#: list of some of them (a shared round: only the ops that fetch get values, in the list's order)
RunChunks = Callable[[Sequence[ChunkData], "bool | Sequence[ChunkData]"], "list[Any] | None"]


def wanted(chunks: Sequence[ChunkData], want: bool | Sequence[ChunkData]) -> Sequence[ChunkData]:
    """The chunks whose values a :data:`RunChunks` call returns (see there).

    >>> wanted(["a", "b"], True), wanted(["a", "b"], False), wanted(["a", "b"], ["b"])
    (['a', 'b'], [], ['b'])
    """
    return chunks if want is True else want or []


#: a stage to compute, as a :data:`RunChunks` call's arguments
Stage = tuple[Sequence[ChunkData], "bool | Sequence[ChunkData]"]

#: true while a Tiler runs: tileables built inside ``tile()`` are never executed eagerly
TILING: contextvars.ContextVar[bool] = contextvars.ContextVar("mars_tiling", default=False)


class TilingError(RuntimeError):
    """An op's ``tile()`` broke the tiling protocol."""


def as_data(t: Any) -> Any:
    return t.data if isinstance(t, Tileable) else t


def upstream_untiled(targets: Iterable[TileableData]) -> list[TileableData]:
    """Untiled tileables that ``targets`` depend on (themselves included), inputs before users."""
    order: list[TileableData] = []
    seen: set[int] = set()
    stack: list[tuple[TileableData, bool]] = [(t, False) for t in reversed(list(targets))]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen or node.is_tiled:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for inp in reversed(node.op.inputs):
            if isinstance(inp, TileableData) and id(inp) not in seen and not inp.is_tiled:
                stack.append((inp, False))
    return order


def _assign(op: Any, result: Tiled | list[Tiled]) -> None:
    results = [result] if isinstance(result, Tiled) else list(result)
    # an op unpickled on a cluster links only its outputs up to the last one still held (its keys name them
    # all): tile() may give a result for every output, or for the linked ones only
    n_outputs = max(len(op.outputs), len(getattr(op, "output_keys", ())))
    if len(results) not in (n_outputs, len(op.outputs)):
        raise TilingError(f"{type(op).__name__}.tile returned {len(results)} results for {n_outputs} outputs")
    for out, res in zip(op.outputs, results):
        if out is None:  # an output nobody holds any more
            continue
        out.chunks = res.chunks
        out.nsplits = tuple(tuple(s) for s in res.nsplits)
    if getattr(op, "gpu", None):
        _mark_gpu(op, results)


def _mark_gpu(op: Any, results: list[Tiled]) -> None:
    """Every chunk op that tiling GPU op ``op`` made runs on the GPU too (the stages of a sort, say)."""
    inputs = {id(c) for inp in op.inputs if inp.chunks for c in inp.chunks}
    stack = [c for res in results for c in res.chunks]
    seen: set[int] = set()
    while stack:
        chunk = stack.pop()
        if id(chunk) in seen or id(chunk) in inputs:
            continue
        seen.add(id(chunk))
        if chunk.op.gpu is None or chunk.op.gpu:
            chunk.op.gpu = True
            stack.extend(chunk.op.inputs)


def tile_op(op: Any) -> Generator[Any, Any, None]:
    """Tile one op (its inputs already tiled), as a generator of stage requests."""
    result = op.tile(op)
    if inspect.isgenerator(result):
        result = yield from result
    _assign(op, result)


def recursive_tile(tileable: Any) -> Generator[Any, Any, Any]:
    """For use inside a generator ``tile()``: ``t = yield from recursive_tile(t)``."""
    data = as_data(tileable)
    for node in upstream_untiled([data]):
        if not node.is_tiled:
            yield from tile_op(node.op)
    return tileable


def tile_now(tileable: Any) -> Any:
    """Tile a tileable built inside a plain ``tile()`` (e.g. a rechunk of an input).

    Its ops must not need data first; use :func:`recursive_tile` from a
    generator ``tile()`` when they might.
    """
    gen = recursive_tile(tileable)
    try:
        request = next(gen)
    except StopIteration as stop:
        return stop.value
    gen.close()
    raise TilingError(f"tile_now: tiling needs computed chunks first ({request!r}); tile() must be a generator")


#: rewriters of the tileable graph run before tiling, ``(targets, holds) -> (stand-ins, pairs)`` (the
#: dataframe optimizer adds itself when mars.dataframe is imported: core knows no operator family)
PLANNERS: list[Callable[[list, Callable[[TileableData], bool]], tuple[list, list]]] = []


class Plan:
    """What the planners made of some targets: ``stand_ins`` to tile in their place.

    ``pairs`` are ``(node, stand-in)`` for the nodes (targets first) that
    take their stand-in's chunk layout once it is tiled (:meth:`adopt`).
    """

    def __init__(self, targets: Sequence[TileableData], stand_ins: Sequence[TileableData], pairs: Sequence[tuple]):
        self.targets, self.stand_ins, self.pairs = list(targets), list(stand_ins), list(pairs)

    def adopt(self) -> None:
        """Give each target its stand-in's chunks, and each other untiled node of ``pairs`` its own.

        The metadata that tiling refined on the stand-in (a meta learnt from
        the data) comes along; the partitioning token stays the node's own.
        """
        for t, s in zip(self.targets, self.stand_ins):
            if t is not s:
                _take_layout(t, s)
        for node, s in self.pairs:
            if node is not s and node.chunks is None and s.chunks is not None:
                _take_layout(node, s)


def _take_layout(node: TileableData, stand_in: TileableData) -> None:
    node.chunks, node.nsplits = stand_in.chunks, stand_in.nsplits
    for name, value in stand_in.params().items():
        if name != "partitioning":
            setattr(node, name, value)


def planned(targets: Sequence[TileableData], holds: Callable[[TileableData], bool]) -> Plan:
    """The registered planners' rewrite of ``targets`` (each stand-in has its target's metadata).

    ``holds(t)`` says whether the session keeps tiled ``t``'s results
    (planners take those as given). With ``options.optimize = False`` the
    targets are their own stand-ins.
    """
    out: list = list(targets)
    pairs: list[tuple] = []
    if not options.optimize:
        return Plan(targets, out, pairs)
    token = TILING.set(True)  # nodes a planner builds never run eagerly
    try:
        for planner in PLANNERS:
            out, more = planner(out, holds)
            pairs += more
    finally:
        TILING.reset(token)
    return Plan(targets, out, pairs)


class Tiler:
    """Tiles target tileables, computing upstream chunks when an op asks for them.

    Ops whose ``tile()`` waits for computed chunks wait together: every op
    whose inputs are tiled is advanced until it finishes or asks for chunks,
    and then one stage computes what all of them asked for. Independent
    branches (two tables filtered before a merge, say) thus share their
    stages, which run in parallel, instead of taking one round each.
    """

    def __init__(self, run_chunks: RunChunks):
        self._run_chunks = run_chunks

    def tile(self, targets: Sequence[Any]) -> None:
        steps = TileSteps(targets)
        request = steps.step()
        while request is not None:
            try:
                values = self._run_chunks(*request)
            except BaseException as e:  # noqa: BLE001 - raised where the op's tile() waits, as it would be inline
                request = steps.throw(e)
            else:
                request = steps.step(values)


class TileSteps:
    """The tiling of ``targets`` one step at a time, for a caller that runs the stages itself.

    Each :meth:`step` tiles until a stage must run, and returns it as
    ``(chunks, want)`` (see :data:`RunChunks`), or None once all is tiled;
    the next step takes the values of the chunks that ``want`` names (None
    when it names none). Steps may run on different threads, one at a time.
    The task service runs a step on its event loop when the one before was
    quick, and so saves two thread hops per stage.

    >>> import mars.tensor as mt
    >>> x = mt.ones(4, chunk_size=2).data
    >>> steps = TileSteps([x])
    >>> steps.step() is None, len(x.chunks)
    (True, 2)
    """

    def __init__(self, targets: Sequence[Any]):
        self._gen = self._run([as_data(t) for t in targets])
        self._started = False

    def step(self, values: list[Any] | None = None) -> Stage | None:
        """Tile on with the values of the last stage; the next stage to run, or None once all is tiled."""
        if not self._started:
            self._started = True
            return self._resume(lambda: next(self._gen))
        return self._resume(lambda: self._gen.send(values))

    def throw(self, error: BaseException) -> Stage | None:
        """The last stage failed with ``error``: it is raised where the ops' ``tile()`` wait (and out of
        here, unless one of them takes it and goes on)."""
        return self._resume(lambda: self._gen.throw(error))

    def _resume(self, resume: Callable[[], Stage]) -> Stage | None:
        token = TILING.set(True)  # per step: a step may run in another thread's context than the last
        try:
            return resume()
        except StopIteration:
            return None
        finally:
            TILING.reset(token)

    def close(self) -> None:
        """Stop tiling half-way (a stage failed, the task was cancelled): the ops' tilings end too
        (unless a step runs right now on another thread: that one ends with its step)."""
        if inspect.getgeneratorstate(self._gen) != inspect.GEN_RUNNING:
            self._gen.close()

    def _run(self, targets: list[TileableData]) -> Generator[tuple, Any, None]:
        yield from _Rounds(upstream_untiled(targets), _run_together).run()


def _run_together(requests: list[Any]) -> Generator[tuple, Any, list[Any]]:
    """Run the chunks of several ops' requests as one stage; each request's reply, in order."""
    for request in requests:
        _check_request(request)
    if len(requests) == 1:
        request = requests[0]
        if isinstance(request, Fetch):
            # tile() plans on the host: GPU chunks' values come to it as NumPy
            return [[to_host(v) for v in (yield request.chunks, True) or []]]
        yield list(request), False
        return [None]
    chunks: list[ChunkData] = []
    seen: set[int] = set()
    for request in requests:
        for c in _request_chunks(request):
            if id(c) not in seen:  # equal keys in two objects: both get their shapes filled in
                seen.add(id(c))
                chunks.append(c)
    # only the values that ops fetch: the other chunks of the round are computed and stay where they are
    fetched = list({c.key: c for r in requests if isinstance(r, Fetch) for c in r.chunks}.values())
    values = (yield chunks, fetched) if fetched else (yield chunks, False)
    by_key = dict(zip((c.key for c in fetched), values)) if fetched and values is not None else {}
    return [[to_host(by_key[c.key]) for c in r.chunks] if isinstance(r, Fetch) else None for r in requests]


def _check_request(request: Any) -> None:
    if isinstance(request, Fetch):
        return
    if not (isinstance(request, (list, tuple)) and all(isinstance(c, ChunkData) for c in request)):
        raise TilingError(f"tile() yielded {request!r}; expected a list of chunks or a Fetch")


def _request_chunks(request: Any) -> Sequence[ChunkData]:
    return request.chunks if isinstance(request, Fetch) else request


class _Rounds:
    """The tiling of ``order`` (inputs before users) in rounds: each round starts every op whose
    inputs are tiled, then runs one stage for all the ops that wait for chunks."""

    def __init__(self, order: list[TileableData], run_together: Callable[[list], Generator[tuple, Any, list]]):
        self.order = order
        self.run_together = run_together
        self.position = position = {id(n): i for i, n in enumerate(order)}
        self.users: dict[int, list[int]] = {}
        self.missing = [0] * len(order)  # untiled inputs of each node (among ``order``)
        for i, node in enumerate(order):
            for inp in {id(x): x for x in node.op.inputs}.values():
                j = position.get(id(inp))
                if j is not None:
                    self.users.setdefault(j, []).append(i)
                    self.missing[i] += 1
        self.ready = [i for i, n in enumerate(self.missing) if n == 0]  # a heap: the first in ``order`` first
        self.started: set[int] = set()  # ops (by id) being tiled or tiled
        self.waiting: list[tuple[Any, Generator, Any]] = []  # (op, its tiling, its request)

    def run(self) -> Generator[tuple, Any, None]:
        """Yields each stage to run as ``(chunks, want)``, and is sent its values (see :class:`TileSteps`)."""
        while True:
            self._start_ready()
            if not self.waiting:
                break
            current, self.waiting = self.waiting, []
            replies = yield from self.run_together([request for _, _, request in current])
            for (op, gen, _), reply in zip(current, replies):
                self._advance(op, gen, reply)
        untiled = [n for n in self.order if not n.is_tiled]
        if untiled:  # an input that no op tiled: a broken graph, not a state to leave silently
            raise TilingError(f"{type(untiled[0].op).__name__} was never tiled: its inputs were not")

    def _start_ready(self) -> None:
        # in the order a one-at-a-time tiling would take, so that an op's tile() sees the same graph state
        while self.ready:
            i = heapq.heappop(self.ready)
            op = self.order[i].op
            if id(op) in self.started:
                continue
            self.started.add(id(op))
            if self.order[i].is_tiled:  # tiled already, by another op's recursive_tile
                self._done(op)
                continue
            self._advance(op, tile_op(op), None)

    def _advance(self, op: Any, gen: Generator, reply: Any) -> None:
        try:
            request = gen.send(reply)
        except StopIteration:
            self._done(op)
            return
        self.waiting.append((op, gen, request))

    def _done(self, op: Any) -> None:
        """The users of ``op``'s outputs have one untiled input fewer."""
        for out in op.outputs:
            i = self.position.get(id(out))
            for u in self.users.get(i, ()) if i is not None else ():
                self.missing[u] -= 1
                if self.missing[u] == 0:
                    heapq.heappush(self.ready, u)
