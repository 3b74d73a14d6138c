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
import inspect
from typing import Any, Callable, Generator, Iterable, Sequence

from .device import to_host
from .entity import ChunkData, Tileable, TileableData
from .operator import Fetch, Tiled
from .options import options

RunChunks = Callable[[Sequence[ChunkData], bool], "list[Any] | None"]


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
    """Tiles target tileables, computing upstream chunks when an op asks for them."""

    def __init__(self, run_chunks: RunChunks):
        self._run_chunks = run_chunks

    def tile(self, targets: Sequence[Any]) -> None:
        token = TILING.set(True)
        try:
            for node in upstream_untiled([as_data(t) for t in targets]):
                if not node.is_tiled:
                    self._drive(tile_op(node.op))
        finally:
            TILING.reset(token)

    def _drive(self, gen: Generator) -> None:
        reply: Any = None
        while True:
            try:
                request = gen.send(reply)
            except StopIteration:
                return
            if isinstance(request, Fetch):
                # tile() plans on the host: GPU chunks' values come to it as NumPy
                reply = [to_host(v) for v in self._run_chunks(request.chunks, True) or []]
            elif isinstance(request, (list, tuple)) and all(isinstance(c, ChunkData) for c in request):
                self._run_chunks(list(request), False)
                reply = None
            else:
                raise TilingError(f"tile() yielded {request!r}; expected a list of chunks or a Fetch")
