"""A broadcast join's small side looked up, not hashed again, by every partition of the big side.

An ``inner`` join on one integer column whose small (right) side is
broadcast to every partition of the left would otherwise have pandas hash
the whole right side's keys once per partition. Here the right side is
gathered once into a :class:`KeyTable`: its rows grouped by key over the
keys' range (a table of where each key's rows start, like a sparse
matrix's row pointers). Each left partition then finds its partners with
array look-ups and takes the columns it needs; the rows come out as
pandas orders them: in the left's order, each left row's partners in the
right's order. When the keys span too wide a range for a table, the
partitions fall back to pandas' merge of the gathered side.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .core import PandasOperator, concat_values
from .merge_semi import semi_reduced

__all__: list[str] = []

#: the widest key range a table covers: at most this many slots, and at most ``_SLOTS_PER_ROW`` per right row
_MAX_SLOTS = 1 << 24
_SLOTS_PER_ROW = 8


@dataclass(frozen=True)
class KeyTable:
    """The right side of an inner join, its rows grouped by their integer ``key``.

    The rows of key ``low + j`` are ``order[starts[j]:starts[j + 1]]``
    (``order`` is None when every key is unique: then ``starts[j]`` is the
    row, or -1). ``starts`` is None when the keys span too wide a range.
    ``rest`` is the frame less its key column.
    """

    frame: pd.DataFrame
    rest: pd.DataFrame
    low: int
    starts: np.ndarray | None
    order: np.ndarray | None


def key_table(frame: pd.DataFrame, key: Any) -> KeyTable:
    """``frame`` (an inner join's right side) with its rows grouped by the integer column ``key``.

    >>> t = key_table(pd.DataFrame({"k": [12, 10, 12], "v": [1, 2, 3]}), "k")
    >>> t.low, t.starts.tolist(), t.order.tolist()
    (10, [0, 1, 1, 3], [1, 0, 2])
    """
    rest = frame.drop(columns=[key])
    keys = frame[key].to_numpy()
    if not len(keys):
        return KeyTable(frame, rest, 0, None, None)
    low, high = int(keys.min()), int(keys.max())
    span = high - low + 1
    if span > min(_MAX_SLOTS, _SLOTS_PER_ROW * len(keys) + 1024) or low < -(2**62) or high >= 2**62:
        return KeyTable(frame, rest, low, None, None)
    at = keys.astype(np.int64, copy=False) - low
    counts = np.bincount(at, minlength=span)
    if counts.max() <= 1:
        rows = np.full(span, -1, dtype=np.int64)
        rows[at] = np.arange(len(keys), dtype=np.int64)
        return KeyTable(frame, rest, low, rows, None)
    starts = np.zeros(span + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    return KeyTable(frame, rest, low, starts, np.argsort(at, kind="stable"))


def partners(table: KeyTable, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (left row, right row) pairs an inner join of ``keys`` with ``table`` makes, in pandas' order.

    >>> t = key_table(pd.DataFrame({"k": [12, 10, 12]}), "k")
    >>> [a.tolist() for a in partners(t, np.array([12, 11, 10, 99]))]
    [[0, 0, 2], [0, 2, 1]]
    """
    assert table.starts is not None
    span = len(table.starts) - (table.order is not None)
    # wrapping arithmetic: a key outside [low, low + span) gives an offset at least span, as unsigned
    offsets = (keys.astype(np.int64, copy=False) - np.int64(table.low)).view(np.uint64)
    inside = offsets < np.uint64(span)
    slots = np.where(inside, offsets, 0).astype(np.int64, copy=False)
    if table.order is None:
        rows = np.where(inside, table.starts[slots], -1)
        left = np.flatnonzero(rows >= 0)
        return left, rows[left]
    first = table.starts[slots]
    counts = np.where(inside, table.starts[slots + 1] - first, 0)
    left = np.repeat(np.arange(len(keys), dtype=np.int64), counts)
    ends = np.cumsum(counts)
    within = np.arange(ends[-1] if len(ends) else 0, dtype=np.int64) - np.repeat(ends - counts, counts)
    return left, table.order[first[left] + within]


def partner_count(table: KeyTable, keys: pd.Series) -> int:
    """How many rows the inner join of ``keys`` with ``table`` makes.

    >>> t = key_table(pd.DataFrame({"k": [12, 10, 12]}), "k")
    >>> partner_count(t, pd.Series([12, 11, 10, 99]))
    3
    """
    if table.starts is None:  # keys too wide for a table: count with a hash of the right side's keys
        counts = table.frame[keys.name].value_counts()
        return int(keys.map(counts).fillna(0).sum()) if len(counts) else 0
    span = len(table.starts) - (table.order is not None)
    offsets = (keys.to_numpy().astype(np.int64, copy=False) - np.int64(table.low)).view(np.uint64)
    slots = offsets[offsets < np.uint64(span)].astype(np.int64, copy=False)
    if table.order is None:
        return int(np.count_nonzero(table.starts[slots] >= 0))
    return int((table.starts[slots + 1] - table.starts[slots]).sum())


def joined(left: pd.DataFrame, table: KeyTable, key: Any, columns: pd.Index, start: int = 0) -> pd.DataFrame:
    """pandas' inner merge of ``left`` with the table's frame on column ``key`` (its columns named ``columns``),
    its rows numbered from ``start``."""
    lrows, rrows = partners(table, left[key].to_numpy())
    n = len(lrows)
    index = pd.RangeIndex(start, start + n)
    # unique right keys give each left row at most one partner: as many rows as the left's are all of them
    lpart = left if table.order is None and n == len(left) else left.take(lrows)
    rpart = table.rest.take(rrows)
    out = pd.concat([lpart.set_axis(index, axis=0), rpart.set_axis(index, axis=0)], axis=1)
    return out.set_axis(columns, axis=1)


class BuildKeyTable(PandasOperator):
    """The right side's partitions gathered into one :class:`KeyTable` on column ``on``."""

    params = ("on", "meta")

    def execute(self, *parts: pd.DataFrame) -> KeyTable:
        return key_table(concat_values(list(parts), self.meta), self.on)


class PartnerCount(PandasOperator):
    """The rows a left partition's join with a :class:`KeyTable` on column ``on`` makes (see :class:`TableMerge`)."""

    params = ("on",)

    def execute(self, left: pd.DataFrame, table: KeyTable) -> int:
        return partner_count(table, left[self.on])


class TableMerge(PandasOperator):
    """pandas' inner merge (``kwargs``) of a left partition with a :class:`KeyTable`, the result's columns
    named ``columns``.

    With ``numbered``, the rows are numbered on from the sum of the further
    inputs (the :class:`PartnerCount` of every partition before), as pandas
    numbers the whole result: each merge's output is written once, in its
    final form.
    """

    params = ("kwargs", "on", "columns", "numbered")

    def kept_column(self, column: Any) -> tuple[int, Any] | None:
        """``(0, column)`` for a column of the left partition: each result row is one of its rows (only the key
        is shared, so no column is renamed: see :func:`table_key`). See :meth:`.map.MapPartitions.kept_column`."""
        meta = getattr(self.inputs[0], "meta", None) if self.inputs else None
        try:
            return (0, column) if isinstance(meta, pd.DataFrame) and column in meta.columns else None
        except (TypeError, ValueError):
            return None

    def execute(self, left: pd.DataFrame, table: KeyTable, *counts: int) -> pd.DataFrame:
        start = sum(int(c) for c in counts) if self.numbered else 0
        if table.starts is not None:
            return joined(left, table, self.on, self.columns, start)
        out = pd.merge(left, table.frame, **self.kwargs)
        return out.set_axis(pd.RangeIndex(start, start + len(out)), axis=0) if start else out


def table_key(op: Any) -> Any:
    """The key column when the broadcast right side can be a :class:`KeyTable` every merge looks up (None: it
    cannot): an inner join on one integer column of one dtype, unsorted, without indicator or validation."""
    kwargs, keys = op.kwargs, op.keys
    lmeta, rmeta = (d.meta for d in op.inputs)
    if kwargs["how"] != "inner" or kwargs["sort"] or kwargs["indicator"] or kwargs["validate"] \
            or kwargs["left_index"] or kwargs["right_index"] or len(keys.left) != 1 or keys.left != keys.right:
        return None
    kind, label = keys.left[0]
    if kind != "column" or any(isinstance(m.columns, pd.MultiIndex) or not m.columns.is_unique
                               for m in (lmeta, rmeta)):
        return None
    dtype = lmeta[label].dtype
    if dtype != rmeta[label].dtype or not isinstance(dtype, np.dtype) or dtype.kind not in "iu":
        return None
    return label if op.outputs[0].meta.shape[1] == lmeta.shape[1] + rmeta.shape[1] - 1 else None


def table_merges(op: Any, key: Any, lrows: Sequence[int], rrows: Sequence[int], numbered: bool = False) -> list:
    """Every left partition merged with one :class:`KeyTable` of the whole right side;
    ``numbered``: each numbers its rows on from the partitions' before it (their :class:`PartnerCount`)."""
    left, right = op.inputs
    meta = op.outputs[0].meta
    cut = semi_reduced(op.kwargs, op.keys, left, right, lrows, rrows)
    table = BuildKeyTable(on=key, meta=right.meta).new_chunk(cut, index=(0,), shape=(), meta=None)
    merge_op = TableMerge(kwargs=op.kwargs, on=key, columns=meta.columns, numbered=numbered)
    counts = [PartnerCount(on=key).new_chunk([c, table], index=(i,), shape=(), meta=None)
              for i, c in enumerate(left.chunks[:-1])] if numbered else []
    return [merge_op.copy().new_chunk([c, table, *counts[:i]], index=(i, 0), shape=(np.nan, meta.shape[1]), meta=meta)
            for i, c in enumerate(left.chunks)]
