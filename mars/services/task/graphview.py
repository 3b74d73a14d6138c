"""A task's graphs as the dashboard draws them: tileables and subtasks, coloured by state.

A :class:`TaskGraph` follows one task. At the tileable level it is the graph
of the tileables the task computes (the targets and everything they read);
at the subtask level, the subtasks of every graph the task ran (one per
tiling stage, then the final one). States are kept as the task runs and
frozen when it ends, when the task lets go of its tileables; at most
:data:`MAX_NODES` nodes per level are kept for drawing.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from typing import Any

from ...core.entity import TileableData
from ...core.graph import Subtask
from ..execution.api import op_name

logger = logging.getLogger(__name__)

#: nodes kept per level for drawing; a bigger graph is cut (its states are still counted)
MAX_NODES = 2000

WAITING, SCHEDULED, SUCCEEDED, FAILED, CANCELLED = range(5)
SUBTASK_STATES = ("waiting", "scheduled", "succeeded", "failed", "cancelled")


def op_label(op: Any) -> str:
    """A short name for a subtask's op: a fused one lists its steps' op names (at most three)."""
    steps = getattr(op, "steps", None)
    if not steps:
        return type(op).__name__
    names: list[str] = []
    for step in steps:
        name = type(step.op).__name__
        if name not in names:
            names.append(name)
    return "+".join(names[:3]) + ("+..." if len(names) > 3 else "")


def _keys_made(subtask: Subtask) -> list[str]:
    """Every chunk a subtask computes, its fused steps' included."""
    steps = getattr(subtask.op, "steps", None) or ()
    return [*subtask.output_keys, *(k for step in steps for k in step.output_keys)]


class RunView:
    """The subtasks of one graph run: labels and edges of the first ``kept``, and every state."""

    def __init__(self, stage: int, base: int, subtasks: Sequence[Subtask], kept: int) -> None:
        self.stage, self.base, self.total = stage, base, len(subtasks)
        shown = subtasks[:kept]
        names: dict[str, str] = {}  # one string per distinct label: thousands of subtasks share a few
        self.labels = [names.setdefault(label, label) for label in (op_label(st.op) for st in shown)]
        # every op as the task stream names it, so that a stream bar and its node can be matched by eye
        self.ops = [names.setdefault(name, name) for name in (op_name(st.op) for st in shown)]
        producer = {k: i for i, st in enumerate(shown) for k in st.output_keys}
        self.edges = sorted({(producer[k], i) for i, st in enumerate(shown) for k in st.input_keys if k in producer})
        self.states = bytearray(len(subtasks))
        self.workers: dict[int, str] = {}
        #: the subtasks, and those finished since the task graph last read them (see TaskGraph._fold)
        self.subtasks: Sequence[Subtask] | None = subtasks
        self.unread: list[int] = []

    def scheduled(self, i: int, worker: str) -> None:
        if self.states[i] == WAITING:
            self.states[i] = SCHEDULED
        if i < len(self.labels):
            self.workers[i] = worker

    def finished(self, i: int, ok: bool) -> None:
        self.states[i] = SUCCEEDED if ok else FAILED
        if self.subtasks is not None:
            self.unread.append(i)

    def stop(self) -> None:
        """The run ended: what never finished was cancelled."""
        for i, state in enumerate(self.states):
            if state in (WAITING, SCHEDULED):
                self.states[i] = CANCELLED

    def trim(self) -> None:
        """Keep the states (counts), drop what drawing needs."""
        self.labels, self.ops, self.edges, self.workers = [], [], [], {}

    def nodes(self) -> list[dict]:
        return [{"id": str(self.base + i), "label": label, "op": op, "state": SUBTASK_STATES[self.states[i]],
                 "worker": self.workers.get(i), "stage": self.stage}
                for i, (label, op) in enumerate(zip(self.labels, self.ops))]


def _tileable_graph(targets: Sequence[TileableData]) -> tuple[list[TileableData], list[tuple[str, str]], int]:
    """Tileables the targets read, inputs first (at most MAX_NODES), the edges among them, and the count."""
    order: list[TileableData] = []
    seen: set[str] = set()
    edges: set[tuple[str, str]] = set()
    stack: list[tuple[TileableData, bool]] = [(t, False) for t in reversed(list(targets))]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if node.key in seen:
            continue
        seen.add(node.key)
        stack.append((node, True))
        for inp in reversed(node.op.inputs):
            if isinstance(inp, TileableData):
                edges.add((inp.key, node.key))
                if inp.key not in seen:
                    stack.append((inp, False))
    kept = order[:MAX_NODES]
    keys = {t.key for t in kept}
    return kept, sorted(e for e in edges if e[0] in keys and e[1] in keys), len(order)


class TaskGraph:
    """The graphs of one task, for the dashboard."""

    def __init__(self, targets: Sequence[TileableData]) -> None:
        try:
            self._tileables, self._edges, self._n_tileables = _tileable_graph(targets)
        except Exception as e:  # noqa: BLE001 - a malformed graph fails in tiling, with its own error; not here
            logger.debug("no tileable graph to draw: %r", e)
            self._tileables, self._edges, self._n_tileables = [], [], 0
        self.runs: list[RunView] = []
        self._done: set[str] = set()
        self._failed: set[str] = set()
        self._frozen: list[dict] | None = None

    def add_run(self, base: int, subtasks: Sequence[Subtask]) -> RunView:
        kept = max(0, MAX_NODES - sum(len(r.labels) for r in self.runs))
        run = RunView(len(self.runs), base, subtasks, kept)
        self.runs.append(run)
        return run

    def subtask_done(self, run: RunView, i: int) -> None:
        run.finished(i, True)

    def subtask_failed(self, run: RunView, i: int) -> None:
        run.finished(i, False)

    def _fold(self) -> None:
        """The chunks finished subtasks made, read only when the tileable graph is asked for (rarely,
        next to the thousands of reports a big task takes)."""
        for run in self.runs:
            if run.subtasks is None:
                continue
            for i in run.unread:
                (self._done if run.states[i] == SUCCEEDED else self._failed).update(_keys_made(run.subtasks[i]))
            run.unread.clear()

    def freeze(self, status: str, computed: Callable[[str], bool]) -> None:
        """The task ended with ``status``: keep the tileables' final states and let go of the tileables."""
        self._frozen = self._tileable_nodes(status, computed)
        self._tileables, self._done, self._failed = [], set(), set()
        for run in self.runs:
            run.stop()
            run.subtasks, run.unread = None, []

    def trim(self) -> None:
        """An old task: its subtask graphs go (a session keeps them for its latest tasks only)."""
        for run in self.runs:
            run.trim()

    def _tileable_nodes(self, status: str, computed: Callable[[str], bool]) -> list[dict]:
        if status != "succeeded":
            self._fold()
        nodes = []
        for t in self._tileables:
            chunks = t.chunks if isinstance(t.chunks, list) else None
            if status == "succeeded":
                progress = 1.0
            elif chunks:
                progress = sum(1 for c in chunks if _key(c) in self._done or computed(_key(c))) / len(chunks)
            else:
                progress = 0.0
            state = "succeeded" if progress >= 1.0 else "running" if progress > 0 else "pending"
            if state != "succeeded" and status in ("failed", "cancelled"):
                # red where the failing subtask was; what it stopped was cancelled
                state = "failed" if any(_key(c) in self._failed for c in chunks or ()) else "cancelled"
            nodes.append({"id": t.key, "label": type(t.op).__name__, "state": state, "progress": progress,
                          "shape": _shape_text(t.shape)})
        return nodes

    def to_json(self, level: str, status: str, computed: Callable[[str], bool]) -> dict:
        """``{"level", "nodes", "edges", "n_nodes", "truncated"}`` at ``level`` ("tileable" or "subtask")."""
        if level == "tileable":
            nodes = self._frozen if self._frozen is not None else self._tileable_nodes(status, computed)
            edges = [list(e) for e in self._edges]
            total = self._n_tileables
        else:
            nodes, edges = [], []
            for run in self.runs:
                nodes.extend(run.nodes())
                edges.extend([str(run.base + a), str(run.base + b)] for a, b in run.edges)
            total = sum(r.total for r in self.runs)
        return {"level": level, "nodes": nodes, "edges": edges, "n_nodes": total, "truncated": len(nodes) < total}


def _key(chunk: Any) -> str:
    """A chunk's key; a malformed one (a job sent with junk in it) as its text, so that it matches nothing."""
    key = getattr(chunk, "key", None)
    return key if isinstance(key, str) else f"<no key: {key!r}>"


def _shape_text(shape: tuple) -> str:
    """``(1000, nan)`` → ``"(1000, ?)"``: sizes known only after running show as ``?``."""
    if not isinstance(shape, (tuple, list)):
        return "?"
    parts = ["?" if isinstance(s, float) and math.isnan(s) else str(s) for s in shape]
    return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"
