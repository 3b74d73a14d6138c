"""What the session knows of the partitions it holds without reading them: the ranges of the integer columns of a
frame the client uploaded (``HeldData.ranges``), and bounds of those columns in partitions made of its rows (a
selection of its columns, a filter, a merge, an assignment of other columns)."""

from __future__ import annotations

from typing import Any

from ..core.operator import HeldData
from .indexing import SelectColumns

#: a range not known: the partition must be read to learn it
UNKNOWN = object()

#: ops followed down from a partition towards the held data its column comes from
_MAX_DEPTH = 32


def held_source(chunk: Any) -> Any:
    """The held partition ``chunk`` is, or selects columns of (the same rows); None for any other chunk."""
    op = chunk.op
    if isinstance(op, SelectColumns) and len(op.inputs) == 1:
        chunk, op = op.inputs[0], op.inputs[0].op
    return chunk if isinstance(op, HeldData) else None


def held_range(chunk: Any, column: Any) -> Any:
    """The ``(lo, hi)`` of ``column`` in a held partition (or a selection of its columns), None when it has no
    rows, :data:`UNKNOWN` when the session does not know."""
    source = held_source(chunk)
    ranges = source.op.ranges if source is not None else None
    if ranges is None:
        return UNKNOWN
    try:
        return ranges.get(column, UNKNOWN)
    except TypeError:  # an unhashable label
        return UNKNOWN


def held_bound(chunk: Any, column: Any) -> Any:
    """A ``(lo, hi)`` that holds every value of ``column`` in partition ``chunk``; None when it has no rows;
    :data:`UNKNOWN` when the session does not know.

    Ops whose ``kept_column(column)`` names the input a column's values
    come from (a filter, a selection, a merge, setting other columns) are
    followed down to a held partition: the range there (:func:`held_range`)
    holds the values of any partition made of some of its rows. It is a
    bound, exact or wider, and None when the held partition has no rows
    (neither has what is made of them).
    """
    for _ in range(_MAX_DEPTH):
        op = chunk.op
        if isinstance(op, HeldData):
            return held_range(chunk, column)
        kept = getattr(op, "kept_column", None)
        found = kept(column) if kept is not None else None
        if found is None:
            return UNKNOWN
        chunk, column = op.inputs[found[0]], found[1]
    return UNKNOWN
