"""Top-n: ``sort_values(...).head(n)`` keeps ``n`` rows per partition instead of sorting everything.

A full sort samples, cuts and shuffles every row. When only the first
``n`` rows of the sorted result are read, each partition sorts itself and
keeps its first ``n`` rows; a tree then merges the candidates (in partition
order, so a stable sort keeps ties in their original order, as pandas'
stable sort does) and keeps the first ``n`` again. ``nlargest``/``nsmallest``
are built as such a tree already, and ``head`` of an unsorted frame reads
only the partitions it needs (:mod:`mars.dataframe.selection`). A column
selection between the sort and the head (``sort_values(...)[cols].head(n)``)
is made after the top-n.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...core.entity import TileableData
from ..core import concat_values
from ..indexing import SelectColumns
from ..reduction import tree_reduce
from ..selection import RowSlice
from ..sort import SortRows
from .graph import Rebuilder, consumers, rewrite


class TopN:
    """One stage of a top-n: sort by ``spec`` and keep ``n`` rows; ``last`` renumbers when ``ignore_index``."""

    def __init__(self, spec: Any, n: int, stage: str, ignore_index: bool, meta: Any):
        self.spec, self.n, self.stage, self.ignore_index, self.meta = spec, n, stage, ignore_index, meta

    def __call__(self, value: Any) -> Any:
        part = value if self.stage == "chunk" else concat_values(value, self.meta)
        best = self._best(part, runs=self.stage != "chunk")
        if self.stage == "agg" and self.ignore_index:
            best = best.set_axis(pd.RangeIndex(len(best)), axis=0)
        return best

    def _best(self, part: Any, runs: bool) -> Any:
        """The first ``n`` rows in sorted order; a wide frame sorts its key columns only, then takes ``n`` rows."""
        spec = self.spec
        by = spec.by
        if not isinstance(part, pd.DataFrame) or spec.method != "sort_values" or by is None \
                or not part.columns.is_unique or not all(b in part.columns for b in by) or len(by) == part.shape[1]:
            return spec.sort(part, runs=runs).iloc[:self.n]
        keys = part[list(by)].set_axis(pd.RangeIndex(len(part)), axis=0)
        positions = spec.sort(keys, runs=runs).index[:self.n]
        return part.take(np.asarray(positions))

    def __reduce__(self) -> tuple:
        return TopN, (self.spec, self.n, self.stage, self.ignore_index, self.meta)

    def __mars_tokenize__(self) -> tuple:
        return "topn", self.spec, self.n, self.stage, self.ignore_index

    def __repr__(self) -> str:
        return f"TopN({self.stage}, n={self.n})"


def _prefix(key: slice) -> int | None:
    """``n`` when ``key`` is ``[:n]`` (or ``[0:n]``) with ``n >= 0``."""
    if key.start not in (None, 0) or key.step not in (None, 1) or key.stop is None or key.stop < 0:
        return None
    return int(key.stop)


def sort_head_to_topn(targets: list[TileableData]) -> list[TileableData]:
    """Rule: a prefix of a sort read by nothing else becomes a top-n tree reduction."""
    users = consumers(targets)

    def only_reader(node: TileableData, reader: TileableData) -> bool:
        return node.chunks is None and users.get(id(node), []) == [reader]

    def visit(node: TileableData, inputs: list, rb: Rebuilder) -> Any:
        op = node.op
        if not isinstance(op, RowSlice):
            return None
        n = _prefix(op.rows)
        sort, picked = op.inputs[0], None
        if isinstance(sort.op, SelectColumns) and not sort.op.by_position and only_reader(sort, node):
            picked, sort = sort, sort.op.inputs[0]  # ``sort_values(...)[columns].head(n)``: the columns after
        if n is None or not isinstance(sort.op, SortRows) or not only_reader(sort, picked or node):
            return None
        spec, meta = sort.op.spec, sort.meta
        data = rb.new(sort.op.inputs[0])
        rows = data.shape[0]
        size = np.nan if np.isnan(rows) else min(n, int(rows))
        out = tree_reduce(data, TopN(spec, n, "chunk", False, meta), TopN(spec, n, "combine", False, meta),
                          TopN(spec, n, "agg", sort.op.ignore_index, meta), meta,
                          shape=(size,) + tuple(meta.shape[1:])).data
        if picked is not None:
            select = SelectColumns(columns=picked.op.columns, by_position=False)
            out = select.new_pandas([out], node.meta, (size,) + tuple(node.meta.shape[1:]),
                                    partitioning=out.partitioning).data
        rb.retoken(node.partitioning, out.partitioning)
        return out

    return rewrite(targets, visit)
