"""The tileable graph as the rules see it: walks, consumers, and rebuilding nodes.

Rules never change a node: they build new ones. A node that is already
tiled (an executed result, a held chunk) is a leaf: its op is not looked
into and it is reused as it is. :func:`rewrite` walks a graph inputs first
and gives each untiled node the rebuilt versions of its inputs; a node whose
inputs did not change is kept, so a graph with nothing to optimize comes
back as the very same objects.

A rebuilt node keeps its old ``partitioning`` token (its rows are where
they were) unless a rule says otherwise through :class:`Rebuilder.retoken`:
a source that now reads fewer rows gets a token of its own, and every node
that carried the old token carries the new one.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterable, Sequence
from operator import is_not
from typing import Any

from ...core.entity import TileableData
from ..core import PandasData

#: which tiled nodes hold results the session keeps (set by the driver; unset: all tiled nodes)
HOLDS: contextvars.ContextVar[Callable[[Any], bool] | None] = contextvars.ContextVar("mars_optimizer_holds",
                                                                                      default=None)


#: when set, every rewrite records ``id(old): (old, new)`` here (the driver's map of replacements)
REPLACED: contextvars.ContextVar[dict | None] = contextvars.ContextVar("mars_optimizer_replaced", default=None)


def is_leaf(node: Any) -> bool:
    """Whether the rules treat ``node`` as given: a computed result the session holds, or not a tileable.

    A node tiled by an earlier run whose chunks the session did not keep is
    rewritten like an untiled one (its rewrite is tiled afresh).
    """
    if not isinstance(node, TileableData) or node.chunks is None:
        return not isinstance(node, TileableData)
    holds = HOLDS.get()
    return holds is None or holds(node)


#: while the driver runs, the walks made so far by the ids of their targets (kept alive with them): nodes never
#: change once built, so the rules that leave a graph as it was walk it once between them
WALKS: contextvars.ContextVar[dict | None] = contextvars.ContextVar("mars_optimizer_walks", default=None)


def topo_order(targets: Iterable[TileableData]) -> list[TileableData]:
    """Every untiled node ``targets`` depend on, inputs before their users (leaves left out)."""
    targets = list(targets)
    walks = WALKS.get()
    if walks is None:
        return _walk(targets)
    key = tuple(map(id, targets))
    known = walks.get(key)
    if known is None:
        known = walks[key] = (targets, _walk(targets))
    return list(known[1])


def _walk(targets: list[TileableData]) -> list[TileableData]:
    order: list[TileableData] = []
    seen: set[int] = set()
    stack: list[tuple[Any, bool]] = [(t, False) for t in reversed(list(targets))]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen or is_leaf(node):
            continue
        seen.add(id(node))
        stack.append((node, True))
        for inp in reversed(node.op.inputs):
            if id(inp) not in seen and not is_leaf(inp):
                stack.append((inp, False))
    return order


def consumers(targets: Sequence[TileableData]) -> dict[int, list[TileableData]]:
    """For each node (by id), the nodes that read it; a target counts one extra reader (``None``)."""
    users: dict[int, list[Any]] = {}
    for node in topo_order(targets):
        for inp in node.op.inputs:
            users.setdefault(id(inp), []).append(node)
    for t in targets:
        users.setdefault(id(t), []).append(None)
    return users


class Rebuilder:
    """Makes new nodes from old ones, remapping partitioning tokens consistently."""

    def __init__(self) -> None:
        self.tokens: dict[str, str] = {}
        self.done: dict[int, Any] = {}
        self._ops: dict[int, list] = {}

    def new(self, node: Any) -> Any:
        """The rebuilt version of ``node`` (itself when it was kept or is a leaf)."""
        return self.done.get(id(node), node)

    def retoken(self, old: str, new: str) -> None:
        """Nodes that carried token ``old`` carry ``new`` once rebuilt (a source's rows changed)."""
        if old != new:
            self.tokens[old] = new

    def token(self, value: Any) -> Any:
        return self.tokens.get(value, value) if isinstance(value, str) else value

    def clone(self, node: TileableData, inputs: Sequence[Any], **changes: Any) -> TileableData:
        """``node``'s op applied anew to ``inputs``; ``changes`` replace its metadata (``meta``, ``shape``...).

        Every output of a multi-output op is rebuilt at once (siblings share the new op).
        """
        op = node.op
        outs = op.outputs
        if len(outs) > 1:
            built = self._ops.get(id(op))
            if built is None:
                kws = [self._params(o if o is not None else node, {}) for o in outs]
                built = self._ops[id(op)] = fresh_op(op)._apply(list(inputs), kws, type(node))
            return built[node.output_index]
        new_op = fresh_op(op)
        return new_op._apply(list(inputs), [self._params(node, changes)], type(node))[0]

    def _params(self, node: TileableData, changes: dict) -> dict:
        params = node.params()
        params.update(changes)
        if "partitioning" in params:
            params["partitioning"] = self.token(params["partitioning"])
        return params

    def with_op(self, node: TileableData, op: Any, inputs: Sequence[Any], **changes: Any) -> TileableData:
        """A node like ``node`` made by another (unapplied) ``op``."""
        return op._apply(list(inputs), [self._params(node, changes)], type(node))[0]


def fresh_op(op: Any, **params: Any) -> Any:
    """An unapplied shallow copy of ``op`` (all its attributes kept), with ``params`` changed."""
    new = op.bare()
    new.__dict__.pop("_token", None)
    if params:  # its parameters' part of the key is made again (see Operator._compute_key)
        new.__dict__.pop("_params_key", None)
    new.output_keys = []
    new.key = ""
    for name, value in params.items():
        setattr(new, name, value)
    return new


Visit = Callable[[TileableData, list, Rebuilder], Any]


def rewrite(targets: Sequence[TileableData], visit: Visit | None = None,
            rebuilder: Rebuilder | None = None) -> list[TileableData]:
    """The targets with every node passed through ``visit`` (inputs first).

    ``visit(node, new_inputs, rebuilder)`` returns a replacement node, or
    None for the default: the node itself when its inputs are unchanged,
    else a clone on the new inputs.
    """
    rb = rebuilder or Rebuilder()
    done, replaced = rb.done, REPLACED.get()
    for node in topo_order(targets):
        old = node.op.inputs
        inputs = [done.get(id(i), i) for i in old]
        new = visit(node, inputs, rb) if visit is not None else None
        if new is None:
            same = not any(map(is_not, inputs, old))
            stale = bool(rb.tokens) and isinstance(node, PandasData) and rb.token(node.partitioning) != node.partitioning
            new = node if same and not stale else rb.clone(node, inputs)
        done[id(node)] = new
        if new is not node and replaced is not None:
            replaced[id(node)] = (node, new)
    return [done.get(id(t), t) for t in targets]


def nodes_of(targets: Sequence[TileableData], kind: type | tuple) -> list[TileableData]:
    """The untiled nodes made by ops of class ``kind``."""
    return [n for n in topo_order(targets) if isinstance(n.op, kind)]
