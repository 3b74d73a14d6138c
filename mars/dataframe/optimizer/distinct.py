"""Distinct rows, then a grouped aggregation on some of their columns: one shuffle instead of two.

``df.drop_duplicates(subset).groupby(keys).agg(...)`` with ``keys`` among
``subset`` (or any columns when ``subset`` is all of them): rows that repeat
each other have the same group keys, so the aggregation's shuffle on the
keys already brings every repeat into the reducer of its group, in the
partitions' order. Each reducer then drops its repeats (keeping the same
row as ``drop_duplicates``) and aggregates, and the distinct rows' own
shuffles (their partial merges, and sending the kept positions back) are
not needed.

Only sorted groupings (``sort=True``, the default) are rewritten: their
output order does not depend on where rows were.

:func:`unordered_distinct_for_merges`: distinct rows that only the right
side of ``inner`` or ``left`` merges read, on all their columns (SQL's
``IN``/``EXISTS`` as a semi-join), need no order: each left row meets at
most one of them, and the merge numbers its rows afresh. Their repeats are
then dropped without keeping positions (no shuffle sending them back).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...core.entity import TileableData
from ..groupby.agg import GroupByAgg
from ..map import Slot
from ..merge import Merge
from ..uniques import Distinct
from .graph import Rebuilder, consumers, fresh_op, rewrite


def _group_labels(op: GroupByAgg) -> list | None:
    """The column labels ``op`` groups by, when it groups by columns only."""
    spec = op.spec
    if spec.level is not None or spec.modes or len(op.inputs) != 1:
        return None
    by = spec.by if type(spec.by) is list else [spec.by]
    if any(isinstance(b, Slot) or callable(b) for b in by):
        return None
    return by


def merged_distinct(op: GroupByAgg, source: TileableData) -> tuple | None:
    """``(distinct, columns)`` of the aggregation reading ``source`` directly, or None when it cannot.

    ``source`` is the distinct rows' node (``op``'s input).
    """
    dop = source.op
    if not isinstance(dop, Distinct) or dop.mask or not op.spec.sort or not isinstance(source.meta, pd.DataFrame):
        return None
    columns = source.meta.columns
    labels = _group_labels(op)
    if labels is None or not columns.is_unique or any(b not in columns for b in labels):
        return None
    subset = None if dop.subset is None else [columns[i] for i in dop.subset]
    if subset is not None and not set(labels) <= set(subset):
        return None
    if op.columns is None or subset is None:
        travel = None if subset is None else op.columns
    else:
        wanted = set(op.columns) | set(subset)
        travel = [c for c in columns if c in wanted]
    return (subset, dop.keep), travel


def distinct_into_groupby(targets: list[TileableData]) -> list[TileableData]:
    """Rule: distinct rows read only by a sorted grouped aggregation become part of its shuffle."""
    users = consumers(targets)

    def visit(node: TileableData, inputs: list, rb: Rebuilder) -> Any:
        op = node.op
        if not isinstance(op, GroupByAgg) or op.distinct is not None:
            return None
        source = op.inputs[0]
        if source.chunks is not None or users.get(id(source), []) != [node]:
            return None
        merged = merged_distinct(op, source)
        if merged is None:
            return None
        distinct, travel = merged
        new_op = fresh_op(op, distinct=distinct, columns=travel)
        return rb.with_op(node, new_op, [rb.new(source.op.inputs[0])])

    return rewrite(targets, visit)


def _keys_of(value: Any) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def semi_join_side(node: TileableData, user: Any) -> bool:
    """Whether ``user`` reads ``node`` only as the right side of an inner or left merge keyed on all its columns."""
    if user is None or not isinstance(user.op, Merge):
        return False
    left, right = user.op.inputs
    kw = user.op.kwargs
    if right is not node or left is node or kw.get("how") not in ("inner", "left") or kw.get("right_index"):
        return False
    keys = _keys_of(kw.get("on")) + _keys_of(kw.get("right_on"))
    return set(node.meta.columns) <= {k for k in keys if isinstance(k, (str, int, tuple))}


def unordered_distinct_for_merges(targets: list[TileableData]) -> list[TileableData]:
    """Rule: distinct rows read only as a semi-join's right side drop their repeats in any order."""
    users = consumers(targets)

    def visit(node: TileableData, inputs: list, rb: Rebuilder) -> Any:
        op = node.op
        if not isinstance(op, Distinct) or op.mask or op.unordered or op.keep is False or node.chunks is not None:
            return None
        meta = node.meta
        if not isinstance(meta, pd.DataFrame) or not meta.columns.is_unique:
            return None
        if op.subset is not None and len(op.subset) != meta.shape[1]:
            return None  # which of the repeats is kept would matter
        readers = users.get(id(node), [])
        if not readers or not all(semi_join_side(node, u) for u in readers):
            return None
        return rb.with_op(node, fresh_op(op, unordered=True), inputs)

    return rewrite(targets, visit)
