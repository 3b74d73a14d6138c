"""Joins whose row order nothing reads: no second shuffle to put their rows in pandas' order.

A hash join, or a small left side broadcast to the right's partitions,
gives its rows in another order than pandas'; putting them back costs a
shuffle by position (see :mod:`mars.dataframe.merge_order`). When every
reader of the join (through row-wise steps) is a sorted grouped
aggregation, a reduction to one value, or another such join, the order
shows nowhere in the result, and :func:`unordered_merges` marks the join
``unordered``: its rows stay where they were merged, and each partition
keeps the labels pandas' merge gave it (``0..k-1``: no chain of row counts
numbers them across).

What counts as a row-wise step here never reads a row's index label or
place either (so the labels show nowhere): column selections, elementwise arithmetic and comparisons,
masks and filters, ``assign`` of such values, ``where``, ``isin`` and the
``str``/``dt`` accessors. Anything else between the join and its readers
(an index read as values, an array set as a column, a cumulative sum, a
join on the index, a target the user fetches) keeps the join ordered.

A join whose order does show but whose index labels do not (its readers,
through such steps, are those readers or joins on columns, which label
their result afresh: TPC-H Q2's offers, joined again with their cheapest
prices and then sorted) is marked ``unlabelled``: its rows stay in pandas'
order, and each partition keeps the labels ``0..k-1`` with no chain of row
counts numbering them across. So is a ``reset_index`` whose new labels no
reader sees (TPC-H Q18's quantities per order, filtered and joined to the
orders).
"""

from __future__ import annotations

import datetime
from typing import Any

import numpy as np
import pandas as pd

from ...core.entity import TileableData
from ..accessors import _dt_attr, _str_call
from ..apply import UnifyMeta
from ..arithmetic import apply_op
from ..basic import ResetIndex, _call_row_local
from ..groupby.agg import GroupByAgg
from ..indexing import SelectColumns, _set_column
from ..map import MapPartitions, Slot
from ..merge import Merge
from ..reduction import TreeReduce
from ..reductions import Moments, Simple, Stage
from ..selection import _filter_rows
from .distinct import _group_labels
from .fusion import partition_wise
from .graph import Rebuilder, consumers, fresh_op, rewrite, topo_order

__all__ = ["unordered_merges"]

#: partials of a grouped aggregation whose merged value does not depend on the rows' order
_ORDER_FREE_PARTIALS = frozenset({"sum", "prod", "count", "size", "min", "max", "mean", "m2"})
#: functions of a MapPartitions that work row by row and never read an index label
_BLIND_FUNCS = (apply_op, _filter_rows, _set_column, _dt_attr, _str_call)
#: pandas methods (a MapPartitions' func given by name, or called row-locally) of the same kind
_BLIND_METHODS = frozenset({"isin", "where", "mask", "__invert__", "__neg__", "__abs__", "abs", "isna", "notna",
                            "isnull", "notnull", "between", "round", "astype"})
_SCALARS = (type(None), bool, int, float, complex, str, bytes, np.generic, pd.Timestamp, pd.Timedelta,
            datetime.date, datetime.timedelta, type(pd.NaT), pd.Interval, pd.Period)


def _scalar_like(value: Any) -> bool:
    """Whether ``value`` is a plain value (or a tuple/dict of them): no list or array matched by position."""
    if isinstance(value, Slot) or isinstance(value, _SCALARS):
        return True
    if isinstance(value, tuple):
        return all(_scalar_like(v) for v in value)
    if isinstance(value, dict):
        return all(_scalar_like(v) for v in value.values())
    return False


def _blind_call(op: MapPartitions) -> bool:
    """Whether a MapPartitions' function is one of the row-wise, index-blind ones, with plain arguments."""
    func, args = op.func, op.args
    if isinstance(func, str):
        if func not in _BLIND_METHODS:
            return False
        return func == "isin" or _scalar_like(args)  # isin's values are a set: their order is no matter
    if func is _call_row_local:
        name, call_args, kwargs = args[1], args[2], args[3]
        if name == "rename":
            return kwargs.get("index") is None and kwargs.get("axis") in (None, 1, "columns") and \
                kwargs.get("mapper") is None
        return name in _BLIND_METHODS and _scalar_like(call_args) and _scalar_like(kwargs)
    return func in _BLIND_FUNCS and _scalar_like(args) and _scalar_like(op.kwargs)


def row_wise_blind(node: TileableData) -> bool:
    """Whether ``node`` is made row by row from aligned partitions without reading index labels."""
    op = node.op
    if isinstance(op, UnifyMeta):
        return True
    if not partition_wise(node):
        return False
    if isinstance(op, SelectColumns):
        return True
    return isinstance(op, MapPartitions) and op.declared is None and _blind_call(op)


def _order_free_sink(user: TileableData, node: TileableData) -> bool:
    """Whether ``user`` gives the same result whatever the order (and index labels) of ``node``'s rows."""
    op = user.op
    if isinstance(op, GroupByAgg):
        return op.spec.sort and op.plan is not None and _distinct_free(op) and op.inputs[0] is node and \
            _group_labels(op) is not None and \
            all(isinstance(kind, str) and kind in _ORDER_FREE_PARTIALS for kind, _ in op.partials or ())
    if isinstance(op, TreeReduce):
        stage = op.chunk
        return isinstance(stage, Stage) and isinstance(stage.reducer, (Simple, Moments))
    return False


def _distinct_free(op: GroupByAgg) -> bool:
    """Whether the rows an aggregation's distinct step keeps (``drop_duplicates`` merged into it) do not depend on
    their order: there is none, repeats go altogether (``keep=False``), or repeats are whole rows."""
    if op.distinct is None:
        return True
    subset, keep = op.distinct
    return keep is False or subset is None or set(op.inputs[0].meta.columns) <= set(subset)


def _joined_on_columns(user: TileableData) -> bool:
    kwargs = user.op.kwargs
    return not kwargs["left_index"] and not kwargs["right_index"]


def order_free_nodes(targets: list[TileableData]) -> set[int]:
    """Ids of the nodes whose rows' order and index labels no reader's result depends on."""
    users = consumers(targets)
    free: set[int] = set()
    for node in reversed(topo_order(targets)):  # readers before what they read
        readers = users.get(id(node), [])
        if readers and all(_reads_freely(u, node, free) for u in readers):
            free.add(id(node))
    return free


def label_free_nodes(targets: list[TileableData]) -> set[int]:
    """Ids of the nodes whose index labels no reader's result depends on (their rows' order may)."""
    users = consumers(targets)
    free: set[int] = set()
    for node in reversed(topo_order(targets)):
        readers = users.get(id(node), [])
        if readers and all(_reads_no_labels(u, node, free) for u in readers):
            free.add(id(node))
    return free


def _reads_no_labels(user: Any, node: TileableData, free: set[int]) -> bool:
    if user is None:
        return False
    if _order_free_sink(user, node):
        return True
    if isinstance(user.op, Merge):  # on columns of ``node``: the result is labelled 0..n-1 afresh
        side = user.op.keys.left if user.op.inputs[0] is node else user.op.keys.right
        return _joined_on_columns(user) and all(kind == "column" for kind, _ in side)
    if id(user) not in free:
        return False
    if isinstance(user.op, MapPartitions) and any(d is node and r != "rows" for d, r in zip(user.op.inputs,
                                                                                          user.op.roles)):
        return False
    return row_wise_blind(user)


def _reads_freely(user: Any, node: TileableData, free: set[int]) -> bool:
    if user is None:
        return False  # a target: the user sees its rows
    if _order_free_sink(user, node):
        return True
    if id(user) not in free:
        return False
    if isinstance(user.op, Merge):
        return _joined_on_columns(user)
    if isinstance(user.op, MapPartitions) and any(d is node and r != "rows" for d, r in zip(user.op.inputs,
                                                                                          user.op.roles)):
        return False
    return row_wise_blind(user)


def unordered_merges(targets: list[TileableData]) -> list[TileableData]:
    """Rule: a join whose row order no reader sees keeps its rows where they were merged; one whose labels no
    reader sees, or a ``reset_index`` whose labels none sees, is not numbered across its partitions (see the
    module)."""
    free = order_free_nodes(targets)
    unlabelled = label_free_nodes(targets)

    def visit(node: TileableData, inputs: list, rb: Rebuilder) -> Any:
        op = node.op
        if isinstance(op, ResetIndex) and id(node) in unlabelled and not op.unlabelled:
            return rb.with_op(node, fresh_op(op, unlabelled=True), inputs)
        if not isinstance(op, Merge) or op.unordered or not _joined_on_columns(node):
            return None
        if id(node) in free:
            return rb.with_op(node, fresh_op(op, unordered=True), inputs)
        if id(node) in unlabelled and not op.unlabelled:
            return rb.with_op(node, fresh_op(op, unlabelled=True), inputs)
        return None

    return rewrite(targets, visit)
