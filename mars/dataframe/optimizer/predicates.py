"""Predicate pushdown: Parquet row groups that no filter can keep are not read.

A ``read_parquet`` source qualifies when every reader either filters it
(``df[mask]``, the source as the filtered frame) or computes such a filter's
mask (column selections and elementwise ops whose only use is a mask).
Each filter's mask is split on ``&``; the terms that compare one of the
source's columns with a literal (``df.a < 24``, ``df.d >= Timestamp(...)``)
are checked against each row group's min/max statistics. A row group is
skipped when, for every filter, some term cannot hold anywhere in it.

Pushdown prunes, it does not filter: the mask still runs on the rows read,
so the result is exactly the filter's. The skipped rows keep their place in
the index numbering (:meth:`~mars.dataframe.io.parquet.ReadParquet.with_skipped`).
"""

from __future__ import annotations

import operator
from typing import Any

import pandas as pd

from ...core.entity import TileableData
from ..arithmetic import apply_op
from ..indexing import SelectColumns
from ..io.parquet import ReadParquet, open_parquet
from ..map import MapPartitions, Slot
from .graph import Rebuilder, consumers, rewrite, topo_order
from .projection import _is_filter

#: can ``column <op> literal`` hold for some value in ``[lo, hi]``?
_CAN_HOLD = {
    "lt": lambda lo, hi, v: lo < v,
    "le": lambda lo, hi, v: lo <= v,
    "gt": lambda lo, hi, v: hi > v,
    "ge": lambda lo, hi, v: hi >= v,
    "eq": lambda lo, hi, v: lo <= v <= hi,
}
_FLIPPED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq"}


def _comparison(node: Any, source: TileableData) -> tuple | None:
    """``(column, op, literal)`` when ``node`` compares a column of ``source`` with a literal."""
    op = node.op
    if not isinstance(op, MapPartitions) or op.func is not apply_op or len(op.inputs) != 1 or op.declared is not None:
        return None
    _, name, literal, kw = op.args
    name = name.strip("_")
    if kw or name not in _CAN_HOLD or isinstance(literal, Slot):
        return None
    if not isinstance(literal, (int, float, pd.Timestamp)) or isinstance(literal, bool):
        return None
    col = op.inputs[0]
    if not isinstance(col.op, SelectColumns) or col.op.by_position or col.op.inputs[0] is not source:
        return None
    return col.op.columns, name, literal


def conjuncts(mask: Any, source: TileableData) -> list[tuple]:
    """The ``(column, op, literal)`` terms of ``mask`` that are ``&``-ed together (others are left out)."""
    op = mask.op
    if isinstance(op, MapPartitions) and op.func is apply_op and len(op.inputs) == 2 \
            and op.args[1].strip("_") == "and" and not op.args[3] and isinstance(op.args[2], Slot):
        return conjuncts(op.inputs[0], source) + conjuncts(op.inputs[1], source)
    term = _comparison(mask, source)
    return [term] if term is not None else []


def _mask_side(source: TileableData, users: dict, order: list) -> tuple[list, set] | None:
    """The filters of ``source`` and the nodes that only feed their masks; None when it is read otherwise."""
    filters = [u for u in users.get(id(source), []) if u is not None and _is_filter(u.op) and u.op.inputs[0] is source]
    fids = {id(f) for f in filters}
    side: set[int] = set()
    for node in reversed(order):
        if node is source or id(node) in fids:
            continue
        readers = users.get(id(node), [])
        if readers and all(u is not None and ((id(u) in fids and u.op.inputs[1] is node and u.op.inputs[0] is not node)
                                              or id(u) in side) for u in readers):
            side.add(id(node))
    for u in users.get(id(source), []):
        if u is None or (id(u) not in fids and id(u) not in side):
            return None
    return (filters, side) if filters else None


def _row_group_can_hold(stats: dict, terms: list[tuple]) -> bool:
    for column, name, literal in terms:
        st = stats.get(column)
        if st is None:
            continue
        try:
            if not _CAN_HOLD[name](st[0], st[1], literal):
                return False
        except TypeError:
            continue
    return True


def _stats(pf: Any, group: int, columns: set) -> dict:
    """``{column: (min, max)}`` of a row group, for the columns whose statistics are there."""
    out = {}
    rg = pf.metadata.row_group(group)
    for i in range(rg.num_columns):
        col = rg.column(i)
        name = col.path_in_schema
        st = col.statistics
        if name in columns and st is not None and st.has_min_max:
            lo, hi = st.min, st.max
            if hasattr(lo, "tzinfo") and not isinstance(lo, pd.Timestamp):
                lo, hi = pd.Timestamp(lo), pd.Timestamp(hi)
            out[name] = (lo, hi)
    return out


def skipped_groups(op: ReadParquet, dnf: list[list[tuple]]) -> tuple | None:
    """Per file, the row groups that no filter (an OR of AND-ed terms) can keep; None when none is skipped."""
    columns = {t[0] for terms in dnf for t in terms}
    skip, any_skipped = [], False
    for path, _, _, rows, _, _ in op.files:
        pf = open_parquet(path, op.storage_options)
        dropped = [g for g in range(len(rows))
                   if not any(_row_group_can_hold(_stats(pf, g, columns), terms) for terms in dnf)]
        any_skipped |= bool(dropped)
        skip.append(tuple(dropped))
    return tuple(skip) if any_skipped else None


def _candidate(node: TileableData) -> bool:
    op = node.op
    return isinstance(op, ReadParquet) and op.filters is None and op.head is None and not op.hive and not op.skip


def push_predicates(targets: list[TileableData]) -> list[TileableData]:
    """Rule: Parquet sources skip the row groups their filters cannot keep (see the module's text)."""
    order = topo_order(targets)
    users = consumers(targets)
    plans: dict[int, tuple] = {}
    for node in order:
        if not _candidate(node):
            continue
        found = _mask_side(node, users, order)
        if found is None:
            continue
        filters, side = found
        dnf = [conjuncts(f.op.inputs[1], node) for f in filters]
        if any(not terms for terms in dnf):
            continue
        skip = skipped_groups(node.op, dnf)
        if skip is not None:
            plans[id(node)] = (skip, side)
    if not plans:
        return list(targets)
    resized: dict[int, Any] = {}

    def visit(node: TileableData, inputs: list, rb: Rebuilder) -> Any:
        plan = plans.get(id(node))
        if plan is not None:
            new = node.op.with_skipped(plan[0])
            rb.retoken(node.partitioning, new.partitioning)
            for i in plan[1]:
                resized[i] = (node.shape[0], new.shape[0])
            return new
        change = resized.get(id(node))
        if change is not None and node.shape[0] == change[0] and not all(map(operator.is_, inputs, node.op.inputs)):
            return rb.clone(node, inputs, shape=(change[1],) + tuple(node.shape[1:]))
        return None

    return rewrite(targets, visit)
