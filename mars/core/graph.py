"""Chunk graphs as plain data: subtasks in a depth-first topological order.

A :class:`Subtask` is the unit the executor runs: one op (possibly a fused
group, see :mod:`mars.core.fusion`) with the keys of the chunks it reads and
the keys of the chunks it writes. ``build_subtasks`` walks back from the
target chunks and stops at chunks whose data is already available.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

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

    def __getstate__(self) -> dict:
        # a subtask travels without the graph behind its op: a bare copy of the
        # op (parameters only) and the keys of what it reads and writes
        state = dict(self.__dict__)
        copy = getattr(self.op, "copy", None)
        if callable(copy) and hasattr(self.op, "params"):
            state["op"] = copy()
        return state

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


def build_subtasks(targets: Sequence[ChunkData], available: Callable[[str], bool]) -> list[Subtask]:
    """Subtasks needed to compute ``targets``, inputs first, in depth-first order from the targets.

    Depth-first order keeps the executor finishing one branch (say, the four
    chunks of one combine) before starting the next, so intermediates are
    freed early.
    """
    order: list[Subtask] = []
    seen_ops: set[int] = set()
    stack: list[tuple[Any, bool]] = []
    for chunk in reversed(list(targets)):
        if not available(chunk.key):
            stack.append((chunk.op, False))
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
            if id(inp.op) not in seen_ops and not available(inp.key):
                stack.append((inp.op, False))
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


def describe(subtasks: Sequence[Subtask]) -> str:
    """A printable view of a subtask list, one line each."""
    return "\n".join(f"{i}: {st!r}" for i, st in enumerate(subtasks))
