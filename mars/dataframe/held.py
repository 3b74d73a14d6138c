"""What the session knows of the partitions it holds without reading them: the ranges of the integer columns of a
frame the client uploaded (``HeldData.ranges``), through a selection of its columns too."""

from __future__ import annotations

from typing import Any

from ..core.operator import HeldData
from .indexing import SelectColumns

#: a range not known: the partition must be read to learn it
UNKNOWN = object()


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
