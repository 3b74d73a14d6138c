"""What a lazy object shows before it runs: its metadata and its chunk layout.

A tileable knows its chunk layout only once tiled, and tiling happens when it
runs. To show the layout before that, :func:`planned_nsplits` tiles a *copy*
of the untiled part of the graph (the user's objects are never touched, so a
repr cannot race a run in another thread) and stops, answering None, where an
op needs computed data first (a sort samples its input, say).
"""

from __future__ import annotations

import html
import math
import weakref
from collections.abc import Sequence
from typing import Any

from .entity import TileableData
from .tiling import TILING, recursive_tile, upstream_untiled

#: graphs with more untiled nodes than this are not planned for a repr (it would be slow)
MAX_PLANNED_NODES = 200
#: nor graphs whose sources declare more chunks than this (tiling 100,000 chunks takes seconds)
MAX_PLANNED_CHUNKS = 2_000
#: a sizes tuple longer than this is shown as its head, "...", and its tail
MAX_SIZES_SHOWN = 6

_planned: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def planned_nsplits(data: TileableData) -> tuple | None:
    """Chunk sizes per axis that ``data`` has, or would get when run; None if that needs data first.

    Examples
    --------
    >>> import mars.tensor as mt
    >>> planned_nsplits(mt.ones((7, 5), chunk_size=3).data)
    ((3, 3, 1), (3, 2))
    """
    if data.nsplits is not None:
        return data.nsplits
    try:
        return _planned[data]
    except KeyError:
        pass
    try:
        nsplits = _tile_a_copy(data)
    except Exception:  # noqa: BLE001 - a repr shows "?" rather than fail
        nsplits = None
    _planned[data] = nsplits
    return nsplits


def _tile_a_copy(data: TileableData) -> tuple | None:
    nodes = upstream_untiled([data])
    if len(nodes) > MAX_PLANNED_NODES or any(_declared_chunks(n.op) > MAX_PLANNED_CHUNKS for n in nodes):
        return None
    copies: dict[int, Any] = {}
    for node in nodes:  # inputs come before their users
        if id(node) in copies:
            continue
        op = node.op.bare()
        op.inputs = [copies.get(id(i), i) for i in node.op.inputs]
        for index, out in enumerate(node.op.outputs):
            if out is None:
                continue
            twin = _copy_entity(out)
            twin.op, twin.chunks, twin.nsplits = op, None, None
            op.link_output(twin, index)
            copies[id(out)] = twin
    target = copies[id(data)]
    token = TILING.set(True)  # nothing built while tiling runs eagerly
    try:
        gen = recursive_tile(target)
        try:
            next(gen)
        except StopIteration:
            return target.nsplits
        gen.close()  # the op asked for computed chunks: the layout depends on data
        return None
    finally:
        TILING.reset(token)


def _declared_chunks(op: Any) -> int:
    """The chunks a source op says it will make (its ``nsplits``, or its partitions' ``rows``); 0 if it says not."""
    nsplits = getattr(op, "nsplits", None)
    if isinstance(nsplits, tuple) and all(isinstance(s, tuple) for s in nsplits):
        return math.prod(len(s) for s in nsplits)
    rows = getattr(op, "rows", None)
    return len(rows) if isinstance(rows, (tuple, list)) else 0


def _copy_entity(entity: Any) -> Any:
    twin = object.__new__(type(entity))
    for klass in type(entity).__mro__:
        for name in getattr(klass, "__slots__", ()):
            if name != "__weakref__" and hasattr(entity, name):
                setattr(twin, name, getattr(entity, name))
    return twin


def is_nan(x: Any) -> bool:
    return isinstance(x, float) and math.isnan(x)


def size_text(n: Any) -> str:
    """A size, or "?" for one known only after running."""
    return "?" if is_nan(n) else str(int(n))


def sizes_text(sizes: Sequence[Any]) -> str:
    """``(3, 3, 1)``; a long one as ``(3, 3, 3, <28 more>, 3, 1)``."""
    shown = [size_text(s) for s in sizes]
    if len(shown) > MAX_SIZES_SHOWN:
        shown = shown[:3] + [f"<{len(shown) - 5} more>"] + shown[-2:]
    return "(" + ", ".join(shown) + ("," if len(shown) == 1 else "") + ")"


def chunks_text(nsplits: Sequence[Sequence[Any]] | None) -> str:
    if nsplits is None:
        return "?"
    return "(" + ", ".join(sizes_text(s) for s in nsplits) + ("," if len(nsplits) == 1 else "") + ")"


def fields_text(kind: str, fields: Sequence[tuple[str, str]]) -> str:
    return f"{kind}(" + ", ".join(f"{k}={v}" for k, v in fields) + ")"


def fields_html(kind: str, fields: Sequence[tuple[str, str]], extra: str = "") -> str:
    """A small two-column table: the same facts as the text repr."""
    rows = "".join(f"<tr><th style='text-align: left'>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
                   for k, v in fields)
    return (f"<div><strong>mars {html.escape(kind)}</strong> (not executed)"
            f"<table>{rows}</table>{extra}</div>")
