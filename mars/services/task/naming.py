"""A task's readable name: what each target computes, as the chain of operations that makes it.

The dashboard lists tasks by these names rather than by their hex ids. The
chain follows each target's first input down to its source, e.g.
``FromPandas → MapPartitions → GroupByAgg → SortRows → RowSlice``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: a chain longer than this keeps its first and last operations
MOST_OPS = 6
#: targets named; the rest are counted
MOST_TARGETS = 3


#: the longest name a caller may give a task
MAX_NAME = 200


def check_task_name(name: Any) -> str | None:
    """``name`` as given to ``execute(name=...)``: None, or a string of 1 to 200 printable characters.

    >>> check_task_name("nightly report")
    'nightly report'
    """
    if name is None:
        return None
    if not isinstance(name, str) or not 0 < len(name) <= MAX_NAME or not name.isprintable():
        raise ValueError(f"a task name must be 1-{MAX_NAME} printable characters, got {str(name)[:50]!r}")
    return name


def task_name(targets: Sequence[Any]) -> str:
    """The name of a task computing ``targets`` (tileable data objects).

    >>> class Op: pass
    >>> class FromPandas(Op): pass
    >>> class GroupByAgg(Op): pass
    >>> class T:
    ...     def __init__(self, op, inputs=()): self.op, self.inputs = op, list(inputs)
    >>> task_name([T(GroupByAgg(), [T(FromPandas())])])
    'FromPandas → GroupByAgg'
    """
    try:
        names = [_chain(t) for t in targets[:MOST_TARGETS]]
    except Exception:  # noqa: BLE001 - a malformed graph fails where it runs, not here: it gets no name
        return ""
    more = len(targets) - MOST_TARGETS
    return " | ".join(names) + (f" (+{more} more)" if more > 0 else "")


def _chain(tileable: Any) -> str:
    ops: list[str] = []
    node, seen = tileable, 0
    while node is not None and seen < 1000:  # a bound, not a limit any real graph meets
        name = type(getattr(node, "op", None)).__name__
        if not ops or ops[-1] != name:
            ops.append(name)
        inputs = getattr(node, "inputs", None)
        node, seen = (inputs[0] if isinstance(inputs, (list, tuple)) and inputs else None), seen + 1
    ops.reverse()
    if len(ops) > MOST_OPS:
        ops = [*ops[:2], "…", *ops[-(MOST_OPS - 3):]]
    return " → ".join(ops)
