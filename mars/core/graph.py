"""Chunk graphs as plain data: subtasks in a depth-first topological order.

A :class:`Subtask` is the unit the executor runs: one op (possibly a fused
group, see :mod:`mars.core.fusion`) with the keys of the chunks it reads and
the keys of the chunks it writes. ``build_subtasks`` walks back from the
target chunks and stops at chunks whose data is already available.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

from .entity import ChunkData


@dataclass
class Subtask:
    op: Any
    input_keys: list[str]
    output_keys: list[str]
    #: metadata of the outputs known before running (chunk shapes), by key
    output_shapes: list[tuple] = field(default_factory=list)
    #: and their dtypes where the entity has one (tensors), else None
    output_dtypes: list[Any] = field(default_factory=list)

    @property
    def gpu(self) -> bool:
        """Whether it runs on a GPU slot (its op, or a step of its fused op, is a GPU op)."""
        return bool(getattr(self.op, "gpu", None))

    def __reduce__(self) -> tuple:
        # a subtask travels without the graph behind its op: a bare copy of the
        # op (parameters only) and the keys of what it reads and writes; fields
        # by position, as thousands of subtasks go out in one message
        bare = getattr(self.op, "bare", None)
        op = bare() if callable(bare) else self.op
        return Subtask, (op, self.input_keys, self.output_keys, self.output_shapes, self.output_dtypes)

    def __repr__(self) -> str:
        return f"Subtask({type(self.op).__name__}, in={[k[:6] for k in self.input_keys]}, out={[k[:6] for k in self.output_keys]})"


def _subtask_of(op: Any) -> Subtask:
    outputs = op.outputs
    return Subtask(
        op,
        [c.key for c in op.inputs],
        list(op.output_keys),
        [c.shape if c is not None else () for c in outputs],
        [getattr(c, "dtype", None) for c in outputs],
    )


def build_subtasks(targets: Sequence[ChunkData], available: Callable[[str], bool],
                   lineage: Callable[[str], ChunkData | None] | None = None) -> list[Subtask]:
    """Subtasks needed to compute ``targets``, inputs first, in depth-first order from the targets.

    Depth-first order keeps the executor finishing one branch (say, the four
    chunks of one combine) before starting the next, so intermediates are
    freed early. ``lineage(key)``, when given, is the chunk that first made
    ``key``: a chunk that is not available is computed by that chunk's op
    instead of its own (a held result, whose op only reads it, that was lost
    with a worker is computed again from its inputs).
    """

    def op_of(chunk: ChunkData) -> Any:
        origin = lineage(chunk.key) if lineage is not None else None
        return chunk.op if origin is None else origin.op

    order: list[Subtask] = []
    seen_ops: set[int] = set()
    stack: list[tuple[Any, bool]] = []
    for chunk in reversed(list(targets)):
        if not available(chunk.key):
            stack.append((op_of(chunk), False))
    while stack:
        op, expanded = stack.pop()
        if expanded:
            order.append(_subtask_of(op))
            continue
        if id(op) in seen_ops:
            continue
        seen_ops.add(id(op))
        stack.append((op, True))
        for inp in reversed(op.inputs):
            if not available(inp.key):
                inp_op = op_of(inp)
                if id(inp_op) not in seen_ops:
                    stack.append((inp_op, False))
    return _dedupe_by_key(order)


def _dedupe_by_key(subtasks: list[Subtask]) -> list[Subtask]:
    """Ops built twice with the same key compute the same thing: run one of them."""
    seen: set[tuple[str, ...]] = set()
    unique = []
    for st in subtasks:
        outs = tuple(st.output_keys)
        if outs not in seen:
            seen.add(outs)
            unique.append(st)
    return unique


@dataclass
class GraphIndex:
    """Who reads what in a subtask list: what a runner needs to know which subtasks are ready."""

    #: keys made by the list
    producer: set[str]
    #: subtasks reading each key (once per subtask)
    refs: dict[str, int]
    #: subtasks reading each key made by the list
    consumers: dict[str, list[int]]
    #: inputs each subtask still waits for
    waiting: list[int]


def index_graph(subtasks: Sequence[Subtask], available: Callable[[str], bool]) -> GraphIndex:
    """Index ``subtasks``; an input neither made by them nor ``available`` is an error."""
    producer = {k for st in subtasks for k in st.output_keys}
    refs: dict[str, int] = {}
    consumers: dict[str, list[int]] = {}
    waiting: list[int] = []
    for i, st in enumerate(subtasks):
        missing = 0
        for k in set(st.input_keys):
            refs[k] = refs.get(k, 0) + 1
            if k in producer:
                consumers.setdefault(k, []).append(i)
                missing += 1
            elif not available(k):
                raise KeyError(f"chunk {k} is neither computed nor produced by this graph")
        waiting.append(missing)
    return GraphIndex(producer, refs, consumers, waiting)


def describe(subtasks: Sequence[Subtask]) -> str:
    """A printable view of a subtask list, one line each."""
    return "\n".join(f"{i}: {st!r}" for i, st in enumerate(subtasks))


_gc_lock = threading.Lock()
_gc_pauses = 0
_gc_was_enabled = False


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while graphs are built (nestable, from any thread).

    Graph building makes many small objects and no cycles worth collecting
    mid-way: the collector would rescan them again and again (a third of the
    time for a 10,000-chunk graph).
    """
    global _gc_pauses, _gc_was_enabled
    with _gc_lock:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()
