"""Grouped operations whose result rows are the input's rows: ``transform``, ``cumsum``, ``head``, ...

Three ways, chosen at tile time (few groups or many, counted as for
aggregations):

- **broadcast** (``transform`` of a function that splits into partials, few
  groups): the aggregation is computed by a tree into one small chunk, and
  every partition looks its rows' groups up in it.
- **scan** (``cumsum``, ``cummax``, ``cumcount``, ``head``..., few groups):
  see :mod:`.scan`.
- **round trip** (everything else: callables, ``shift``, ``rank``, and any of
  the above over many groups): rows go to the partition of their group (a
  hash shuffle) carrying their positions; each partition runs pandas' call on
  whole groups; the result rows go back to the partition they came from and
  are put back in order. Keys that depend on the index travel as values,
  since the reducer may number its rows ``0..n-1`` to know where each result
  row came from (a user's function sees the rows' own labels).

The result keeps the input's partitions (and its partitioning token when
every row stays). Rows with a NaN key (``dropna=True``) get what pandas gives
them: NaN in a transform, no row in ``head``.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np
import pandas as pd

from ...core.operator import Tiled
from ...core.shuffle import ShuffleMap, ShuffleReduce, shuffle_chunks
from ..core import (
    PandasOperator,
    chunk_index_of,
    chunk_shape_of,
    nsplits_of,
)
from .agg import BLOCK_GROUPS, aligned_partitions, probe_groups
from .keys import key_codes, missing_rows, row_keys
from .scan import scan_tiled
from .shuffle import (
    BLOCK_ROWS,
    POSITION_BITS,
    GroupCall,
    KeySplit,
    concat_pieces,
    split_rows,
    take_rows,
)
from .tree import FinishPartials, GroupPartial

_LOCAL = (1 << POSITION_BITS) - 1


class GroupByRows(PandasOperator):
    """A grouped call whose result rows are input rows (all of them when ``same_rows``).

    ``plan``/``partials``/``agg_meta`` describe the aggregation a broadcast
    transform looks up; ``scan`` says a cumulative function or ``head`` may
    be scanned (:mod:`.scan`); without either, rows take a round trip, for
    which ``rt_spec`` and ``travel`` are the reducer's spec and the key
    levels that travel as values.
    """

    params = ("spec", "call", "plan", "partials", "agg_meta", "rt_spec", "travel", "columns", "same_rows", "scan")

    @classmethod
    def tile(cls, op: GroupByRows) -> Generator[Any, Any, Tiled]:
        parts = yield from aligned_partitions(op.inputs, op.spec.modes)
        out = op.outputs[0]
        rows = [p[0].shape[0] for p in parts] if op.same_rows else [np.nan] * len(parts)
        if len(parts) == 1:
            chunk = GroupCall(spec=op.spec, call=op.call, meta=None).new_chunk(
                parts[0], index=chunk_index_of(out.meta, 0), shape=chunk_shape_of(out.meta, rows[0]), meta=out.meta)
            return Tiled([chunk], nsplits_of(out.meta, rows))
        groups = (yield from probe_groups(op.spec, parts)) if op.plan is not None or op.scan else None
        if groups is not None:
            spec = op.spec.replace(sort=False, as_index=True, observed=True)
            if op.scan:
                method, args, _ = op.call
                return scan_tiled(spec, method, args[0] if args else None, parts, out.meta, rows)
            block = BLOCK_ROWS if groups <= BLOCK_GROUPS else None
            partials = [GroupPartial(spec=spec, partials=op.partials, block_rows=block).new_chunk(
                p, index=(i,), shape=(np.nan,), meta=None) for i, p in enumerate(parts)]
            return _broadcast(op, parts, partials, spec, rows)
        return _round_trip(op, parts, rows)


def _broadcast(op: GroupByRows, parts: list, partials: list, spec: Any, rows: list) -> Tiled:
    out = op.outputs[0]
    finish = FinishPartials(partials=op.partials, outs=op.plan, meta=op.agg_meta, spec=spec, layout=None)
    agg = finish.new_chunk(partials, index=chunk_index_of(op.agg_meta, 0), shape=chunk_shape_of(op.agg_meta, np.nan),
                           meta=op.agg_meta)
    chunks = [LookUpGroups(spec=spec).new_chunk(p + [agg], index=chunk_index_of(out.meta, i),
                                                 shape=chunk_shape_of(out.meta, rows[i]), meta=out.meta)
              for i, p in enumerate(parts)]
    return Tiled(chunks, nsplits_of(out.meta, rows))


class LookUpGroups(PandasOperator):
    """Each row of a partition gets its group's row of an aggregation (NaN for a dropped NaN key)."""

    params = ("spec",)

    def execute(self, part: Any, *rest: Any) -> Any:
        *keys, agg = rest
        columns = row_keys(self.spec, part, keys)
        if columns is not None:
            rows = columns[0] if len(columns) == 1 else pd.MultiIndex.from_arrays(columns)
            codes = agg.index.get_indexer(rows)
        else:
            codes, uniq = key_codes(self.spec.groupby(part, keys, select=False))
            codes = np.where(codes >= 0, agg.index.get_indexer(uniq)[codes], -1) if len(uniq) else codes
        per_group = agg.reset_index(drop=True)
        looked = per_group.take(codes) if len(codes) == 0 or codes.min() >= 0 else per_group.reindex(codes)
        return looked.set_axis(part.index, axis=0)


def _round_trip(op: GroupByRows, parts: list, rows: list) -> Tiled:
    out = op.outputs[0]
    n = len(parts)
    pieces = [KeySplit(spec=op.spec, bounds=None, columns=op.columns, chunk=i, travel=op.travel).new_chunks(
        p, [{"index": (i, r), "shape": (np.nan,), "meta": None} for r in range(n)]) for i, p in enumerate(parts)]
    meta = out.meta
    chunks = shuffle_chunks(
        [[pieces[i][r] for i in range(n)] for r in range(n)], n,
        lambda r: CallAndReturn(spec=op.rt_spec, call=op.call, same_rows=op.same_rows, meta=meta,
                                labelled=_user_call(op.call)),
        lambda j: PutBack(meta=meta),
        [{"index": chunk_index_of(meta, j), "shape": chunk_shape_of(meta, rows[j]), "meta": meta} for j in range(n)],
        lambda r, j: {"index": (r, j), "shape": (np.nan,), "meta": None},
    )
    return Tiled(chunks, nsplits_of(meta, rows))


def _user_call(call: tuple) -> bool:
    """Whether ``call`` runs a user's function on the groups (which may read their index labels)."""
    method, args, _ = call
    return method in ("filter", "apply") or (method == "transform" and not isinstance(args[0], str))


class CallAndReturn(ShuffleMap, PandasOperator):
    """Whole groups in; the call's result rows out, cut by the partition each row came from.

    A user's function (``labelled``: ``filter``, ``apply``, a callable ``transform``) sees its groups under
    their own index labels, as in pandas; a result row's origin is then its place (a ``same_rows`` result
    is in row order) or its label. Other calls, and a user's function that keeps only some rows of a
    partition holding repeated labels, run on rows numbered ``0..n-1``, the numbers naming their origin.
    """

    params = ("spec", "call", "same_rows", "meta", "labelled")
    labelled = False

    def split(self, *pieces: Any) -> list:
        n = len(self.output_keys)
        part, pos, *keys = concat_pieces(pieces)
        if len(part) == 0:
            return [None] * n
        labels = part.index
        if self.labelled and (self.same_rows or labels.is_unique):
            result, rows = self._call(part, keys)
        else:
            result, rows = self._call(part.set_axis(pd.RangeIndex(len(part)), axis=0), keys)
            result = result.set_axis(labels.take(rows), axis=0)
        at = pos[rows]
        return split_rows([result, at & _LOCAL], at >> POSITION_BITS, n)

    def _call(self, part: Any, keys: list) -> tuple[Any, np.ndarray]:
        """The call, and per result row its row in ``part``; rows whose key ``dropna`` drops get pandas' NaN
        (or no row)."""
        method, args, kwargs = self.call
        dropped = missing_rows(row_keys(self.spec, part, keys)) if self.spec.dropna else None
        if dropped is None or not dropped.any():
            result = getattr(self.spec.groupby(part, keys), method)(*args, **kwargs)
            return result, self._origins(result, part.index, np.arange(len(part)))
        # pandas fails on a partition holding only such rows: call it on the others, then put NaN rows in
        kept = np.flatnonzero(~dropped)
        if len(kept):
            sub = part.take(kept)
            result = getattr(self.spec.groupby(sub, [take_rows(k, kept) for k in keys]), method)(*args, **kwargs)
            rows = self._origins(result, sub.index, kept)
        else:
            result, rows = self.meta.iloc[:0], np.zeros(0, dtype=np.int64)
        if not self.same_rows:
            return result, rows
        everything = result.set_axis(rows, axis=0).reindex(pd.RangeIndex(len(part)))
        return everything.set_axis(part.index, axis=0), np.arange(len(part))

    def _origins(self, result: Any, index: pd.Index, rows: np.ndarray) -> np.ndarray:
        """Per row of ``result`` (called on rows ``rows`` of the partition, labelled ``index``), its row."""
        if not self.labelled:  # the partition's rows were numbered 0..n-1: the labels are the rows
            return result.index.to_numpy()
        if self.same_rows:
            if len(result) != len(index):
                raise ValueError(f"{self.call[0]} gave {len(result)} rows for {len(index)}")
            return rows
        return rows[index.get_indexer(result.index)]


class PutBack(ShuffleReduce, PandasOperator):
    """A partition's result rows from every reducer, back in their original order."""

    params = ("meta",)

    def combine(self, pieces: list) -> Any:
        got = [p for p in pieces if p is not None]
        if not got:
            return self.meta
        # empty pieces take part in the concat: their dtypes (float where a reducer had NaN) widen all alike
        result = pd.concat([p[0] for p in got]) if len(got) > 1 else got[0][0]
        local = np.concatenate([p[1] for p in got])
        order = np.argsort(local, kind="stable")
        return result.take(order)
