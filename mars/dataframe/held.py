"""What the session knows of the partitions it holds without reading them: the ranges of the integer columns of a
frame the client uploaded (``HeldData.ranges``), through a selection of its columns too."""

from __future__ import annotations

from typing import Any

from ..core.operator import HeldData
from .indexing import SelectColumns

#: a range not known: the partition must be read to learn it
UNKNOWN = object()


def held_range(chunk: Any, column: Any) -> Any:
    """The ``(lo, hi)`` of ``column`` in a held partition (or a selection of its columns), None when it has no
    rows, :data:`UNKNOWN` when the session does not know."""
    op = chunk.op
    if isinstance(op, SelectColumns) and len(op.inputs) == 1 and isinstance(op.inputs[0].op, HeldData):
        chunk = op.inputs[0]  # a selection keeps the rows
    ranges = chunk.op.ranges if isinstance(chunk.op, HeldData) else None
    if ranges is None:
        return UNKNOWN
    try:
        return ranges.get(column, UNKNOWN)
    except TypeError:  # an unhashable label
        return UNKNOWN
