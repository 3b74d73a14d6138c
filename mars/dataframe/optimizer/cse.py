"""Common subexpressions: one node per distinct expression.

The same expression built twice (``df["a"]`` written in two places) gets the
same key, but two node objects, which would be tiled and run twice. This
rule keeps the first node of each key (with the same partitioning token,
output position and kind of metadata) and points every reader at it.

Keys do not catch a column selected from a selection (``df[["a", "b"]]["a"]``
against ``df["a"]``): :func:`select_of_select` rewrites such a chain to
select from the frame directly, after which the keys agree.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...core.entity import TileableData
from ..core import PandasData
from ..indexing import SelectColumns
from .graph import Rebuilder, rewrite


def _signature(node: TileableData) -> tuple:
    return (node.key, node.output_index, getattr(node, "partitioning", None), type(node))


def dedupe(targets: list[TileableData]) -> list[TileableData]:
    """Rule: nodes with the same key become one node."""
    first: dict[tuple, Any] = {}

    def visit(node: TileableData, inputs: list, rb: Rebuilder) -> Any:
        same = all(a is b for a, b in zip(inputs, node.op.inputs))
        new = node if same else rb.clone(node, inputs)
        return first.setdefault(_signature(new), new)

    return rewrite(targets, visit)


def _labels(op: SelectColumns) -> list | None:
    if op.by_position:
        return None
    return list(op.columns) if isinstance(op.columns, list) else None


def _frame_with(data: Any, columns: list) -> bool:
    meta = getattr(data, "meta", None)
    return isinstance(meta, pd.DataFrame) and meta.columns.is_unique and list(meta.columns) == columns


def select_of_select(targets: list[TileableData]) -> list[TileableData]:
    """Rule: ``frame[list][key]`` reads ``frame[key]``, and ``frame[all its columns]`` is ``frame``.

    (The frame's columns must be unique.)
    """

    def visit(node: TileableData, inputs: list, rb: Rebuilder) -> Any:
        op = node.op
        if not isinstance(op, SelectColumns) or op.by_position:
            return None
        inner = inputs[0]
        if isinstance(op.columns, list) and _frame_with(inner, op.columns):
            return inner  # all the columns, in their order: the frame itself
        if not isinstance(inner, PandasData) or inner.chunks is not None or not isinstance(inner.op, SelectColumns):
            return None
        if _labels(inner.op) is None:
            return None
        base = inner.op.inputs[0]
        if not isinstance(base.meta, pd.DataFrame) or not base.meta.columns.is_unique:
            return None
        wanted = op.columns if isinstance(op.columns, list) else [op.columns]
        if not all(w in inner.op.columns for w in wanted):
            return None
        return rb.clone(node, [base])

    return rewrite(targets, visit)
