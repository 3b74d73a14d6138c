"""Moving rows between partitions by position: rechunking and gathering.

``rechunk_rows(obj, chunk_size)`` re-cuts a tileable into partitions of the
given row counts (sizes unknown after a filter are computed first).
``concat_chunks`` makes one chunk of many, for inputs that every partition
of another tileable needs whole (a broadcast).
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable, Generator, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..core.entity import has_unknown
from ..core.operator import Tiled
from ..core.tiling import as_data
from ..tensor.chunks import offsets
from .core import (
    PandasOperator,
    chunk_index_of,
    chunk_shape_of,
    concat_values,
    nsplits_of,
    row_splits,
    wrap,
)


def known_rows(data: Any) -> Generator[Any, Any, tuple]:
    """For generator ``tile()``s: the row counts of ``data``'s chunks, computing them first if unknown."""
    (rows,) = yield from known_rows_of(data)
    return rows


def known_rows_of(*datas: Any) -> Generator[Any, Any, list]:
    """The row counts of each of ``datas``, computed in one stage where any are unknown (inputs that share
    upstream work, such as a merge's two sides, then run it once and together)."""
    unknown = [d for d in datas if any(has_unknown(c.shape[:1]) for c in d.chunks)]
    if unknown:
        yield list({c.key: c for d in unknown for c in d.chunks}.values())
    return [rows_known_now(data) for data in datas]


def rows_known_now(data: Any) -> tuple:
    """``data``'s row counts as far as known without a stage: chunks computed earlier (a stage before, a head's)
    may know the sizes its ``nsplits`` lacks."""
    if has_unknown(row_splits(data)) and not any(has_unknown(c.shape[:1]) for c in data.chunks):
        data.refresh_shape()
    return row_splits(data)


class RowsPiece(PandasOperator):
    """One output partition made of row ranges of input partitions, end to end."""

    params = ("ranges",)

    def execute(self, *parts: Any) -> Any:
        pieces = [_rows(p, a, b) for p, (a, b) in zip(parts, self.ranges)]
        if len(pieces) == 1:
            return pieces[0]
        if isinstance(pieces[0], pd.Index):
            return pieces[0].append(pieces[1:])
        return pd.concat(pieces)


def _rows(value: Any, a: int, b: int) -> Any:
    if a == 0 and b == len(value):
        return value
    return value[a:b] if isinstance(value, pd.Index) else value.iloc[a:b]


def rows_overlapping(old: Sequence[int], lo: int, hi: int) -> list[tuple[int, int, int]]:
    """(old chunk, start, stop within it) covering global rows [lo, hi)."""
    starts = offsets(old)
    i = max(0, bisect.bisect_right(starts, lo) - 1)
    out = []
    while i < len(old) and starts[i] < hi:
        a, b = max(lo, starts[i]), min(hi, starts[i] + old[i])
        if b > a:
            out.append((i, a - starts[i], b - starts[i]))
        i += 1
    return out


def recut_chunks(data: Any, new_rows: Sequence[int]) -> list:
    """``data``'s chunks re-cut to ``new_rows`` (known sizes), reusing chunks that already fit."""
    old = row_splits(data)
    chunks, lo = [], 0
    meta = data.meta
    for i, n in enumerate(new_rows):
        pieces = rows_overlapping(old, lo, lo + n) or [(0, 0, 0)]
        if len(pieces) == 1 and pieces[0][1] == 0 and pieces[0][2] == old[pieces[0][0]] and n:
            src = data.chunks[pieces[0][0]]
            op = RowsPiece(ranges=((0, n),))
        else:
            src = None
            op = RowsPiece(ranges=tuple((a, b) for _, a, b in pieces))
        inputs = [src] if src is not None else [data.chunks[j] for j, _, _ in pieces]
        chunks.append(op.new_chunk(inputs, index=chunk_index_of(meta, i), shape=chunk_shape_of(meta, n), meta=meta))
        lo += n
    return chunks


class RechunkRows(PandasOperator):
    params = ("chunk_size",)

    @classmethod
    def tile(cls, op: RechunkRows) -> Generator[Any, Any, Tiled]:
        from .datasource import auto_rows

        data = op.inputs[0]
        rows = yield from known_rows(data)
        new_rows = auto_rows(data.meta, int(sum(rows)), op.chunk_size)
        if tuple(new_rows) == tuple(rows):
            return Tiled(list(data.chunks), nsplits_of(data.meta, rows))
        return Tiled(recut_chunks(data, new_rows), nsplits_of(data.meta, new_rows))


def rechunk_rows(obj: Any, chunk_size: Any) -> Any:
    """``obj`` in partitions of ``chunk_size`` rows (an int, or the list of row counts)."""
    data = as_data(obj)
    op = RechunkRows(chunk_size=chunk_size)
    return op.new_pandas([data], data.meta, data.shape)


class ConcatChunks(PandasOperator):
    """Many partitions as one chunk (pandas concat).

    With ``position``, a column of that name holds each row's position in
    the whole, from 0 (a join's hidden column, see :mod:`.merge_order`).
    """

    params = ("position",)
    #: on a cluster, runs in the subtask of its one reader when that reader takes in its producers (a merge,
    #: a grouped call): the whole is never written out and read back (see mars.core.fusion)
    gather = True

    def execute(self, *parts: Any) -> Any:
        meta = self.outputs[0].meta if self.outputs and self.outputs[0] is not None else None
        out = concat_values(list(parts), meta)
        if self.position is not None:  # the concatenation is a new frame: the column is added in place
            out[self.position] = np.arange(len(out), dtype=np.int64)
        return out


def single_chunk(data: Any) -> Any:
    """One chunk holding all of ``data`` (its only chunk when it has one)."""
    return concat_chunks(list(data.chunks), data.meta)


def concat_chunks(chunks: list, meta: Any) -> Any:
    """One chunk holding ``chunks`` (partitions of a tileable whose metadata is ``meta``) end to end."""
    if len(chunks) == 1:
        return chunks[0]
    rows = sum(c.shape[0] for c in chunks)
    return ConcatChunks().new_chunk(chunks, index=chunk_index_of(meta, 0), shape=chunk_shape_of(meta, rows), meta=meta)


def rewrap(data: Any) -> Any:
    return wrap(data)


# ----------------------------------------------------------------- a RangeIndex across partitions
class RenumberRows(PandasOperator):
    """A chunk given the ``RangeIndex`` from ``start`` by ``step`` (rows numbered across chunks).

    With ``start=None`` the start is the sum of the other inputs' values: the
    rows of the chunks before this one, counted when they ran (see :func:`renumber_rows`).
    """

    params = ("start", "step", "name")
    fusible = True

    def execute(self, df: Any, *counts: Any) -> Any:
        start = self.start if self.start is not None else sum(int(c) for c in counts) * self.step
        index = pd.RangeIndex(start, start + len(df) * self.step, self.step, name=self.name)
        if isinstance(df.index, pd.RangeIndex) and df.index.equals(index) and df.index.name == self.name:
            return df
        return df.set_axis(index, axis=0)


class CountRows(PandasOperator):
    """A chunk's number of rows (what the chunks after it need for their index)."""

    params = ()
    #: runs in the subtask that makes its input (see mars.core.fusion)
    tap = True

    def execute(self, df: Any) -> int:
        return len(df)


class AddRows(PandasOperator):
    """Rows before chunk ``i + 1``: rows before chunk ``i`` plus chunk ``i``'s own."""

    params = ()

    def execute(self, before: int, count: int) -> int:
        return int(before) + int(count)


def numbered(chunks: list, rows: Sequence[int], meta: Any, start: int = 0, step: int = 1, name: Any = None,
             renumber: Callable[..., Any] | None = None) -> list:
    """``chunks`` (``rows`` each) renumbered so the index runs from ``start`` by ``step`` across them
    (``renumber(start=...)`` makes the op; :class:`RenumberRows` by default)."""
    out = []
    for i, (c, n) in enumerate(zip(chunks, rows)):
        op = RenumberRows(start=start, step=step, name=name) if renumber is None else renumber(start=start)
        out.append(op.new_chunk([c], index=chunk_index_of(meta, i), shape=chunk_shape_of(meta, n), meta=meta))
        start += n * step
    return out


#: up to this many chunks, each renumbered chunk sums its predecessors' counts itself (else a chain of sums)
_FAN_IN = 32


def renumber_rows(chunks: list, meta: Any, first_numbered: bool = False,
                  renumber: Callable[[int | None], Any] | None = None) -> tuple[list, tuple]:
    """``chunks`` (each indexed from 0) numbered ``0..n-1`` across, and the nsplits (sizes unknown until run).

    Each chunk's start is the running count of the rows before it: a chain of
    tiny ops on the chunks' row counts, not a tiling stage, so chunks are
    parsed, numbered and consumed one after another and the whole never has
    to sit in memory. Chunks whose sizes are known already are numbered
    directly. With ``first_numbered`` the first chunk holds ``0..k-1`` as a
    ``RangeIndex`` already (as pandas' merge numbers its result) and is kept
    as it is: a copy fewer, and on a cluster a subtask fewer. ``renumber(start)``
    makes the op that numbers a chunk from ``start`` (None: from the sum of its
    count inputs); :class:`RenumberRows` by default.
    """
    rows = [c.shape[0] for c in chunks]
    if not has_unknown(rows):
        return numbered(chunks, rows, meta, renumber=renumber), nsplits_of(meta, rows)
    if renumber is None:
        renumber = functools.partial(RenumberRows, step=1, name=None)
    out, before, counts = [], None, []
    for i, c in enumerate(chunks):
        shape = chunk_shape_of(meta, np.nan)
        if i == 0 and first_numbered:
            out.append(c)
        elif before is None:
            out.append(renumber(start=0).new_chunk([c], index=chunk_index_of(meta, i), shape=shape, meta=meta))
        else:
            # few chunks: each sums the counts of those before it, so none waits on a chain of sums
            summed = counts if len(chunks) <= _FAN_IN else [before]
            out.append(renumber(start=None).new_chunk([c, *summed], index=chunk_index_of(meta, i), shape=shape,
                                                      meta=meta))
        if i + 1 < len(chunks):
            count = CountRows().new_chunk([c], index=(i,), shape=(), meta=None)
            counts.append(count)
            if len(chunks) > _FAN_IN:
                before = count if before is None else AddRows().new_chunk([before, count], index=(i,), shape=(),
                                                                          meta=None)
            else:
                before = count
    return out, nsplits_of(meta, (np.nan,) * len(chunks))


class Renumbered(PandasOperator):
    """``obj`` with a default ``RangeIndex`` running across its partitions (``ignore_index=True``)."""

    params = ()

    @classmethod
    def tile(cls, op: Renumbered) -> Tiled:
        data, out = op.inputs[0], op.outputs[0]
        chunks, nsplits = renumber_rows(list(data.chunks), out.meta)
        return Tiled(chunks, nsplits)


def renumbered(obj: Any) -> Any:
    """``obj`` numbered ``0..n-1`` across its partitions, whatever its index was."""
    data = as_data(obj)
    meta = data.meta.set_axis(pd.RangeIndex(0), axis=0)
    return Renumbered().new_pandas([data], meta, data.shape, partitioning=None)
