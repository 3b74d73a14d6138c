"""``rank`` by a tree of sorted value counts.

A value's rank depends on how many values are smaller than it and how many
equal it, over all partitions. Each partition reduces each column to its
sorted distinct values with their counts (and its count of missing values);
a tree merges those tables into the global one (as large as the number of
distinct values, not the rows; a merge is one sort of its tables' values and
a sum of the counts of equal ones); the root adds the running counts once;
every partition then ranks its own rows against the global table with
binary searches of its values in sorted order, in place, keeping its index.
``method="first"`` also needs the number of equal values in the partitions
before: those partitions' local tables are searched too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...core.operator import Tiled
from ...core.options import options
from ...core.tiling import as_data
from ..core import DataFrame, PandasOperator, Series, nsplits_of
from ..map import map_partitions
from ..meta import empty_meta, fake

__all__: list[str] = []


def _sortable(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """A column's values as a numpy array that sorts like pandas ranks them, and the mask of valid ones."""
    dtype = values.dtype
    valid = values.notna().to_numpy()
    if isinstance(dtype, pd.CategoricalDtype):
        return values.cat.codes.to_numpy(), valid
    if dtype.kind in "mM":
        return values.to_numpy().view(np.int64), valid
    if isinstance(dtype, np.dtype) and dtype.kind in "biuf":
        return values.to_numpy(), valid
    return values.to_numpy(dtype=object), valid


def _column(part: Any, j: int) -> pd.Series:
    return part if isinstance(part, pd.Series) else part.iloc[:, j]


def _width(part: Any) -> int:
    return 1 if isinstance(part, pd.Series) else part.shape[1]


class RankTables(PandasOperator):
    """Per column of a partition: (sorted distinct valid values, their counts, missing count, rows)."""

    params = ()
    fusible = True

    def execute(self, part: Any) -> list:
        out = []
        for j in range(_width(part)):
            x, valid = _sortable(_column(part, j))
            u, c = np.unique(x[valid], return_counts=True)
            out.append((u, c, int((~valid).sum()), len(valid)))
        return out


def _merged(cols: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values of several tables and their summed counts (one sort of the tables' values)."""
    if len(cols) == 1:
        return cols[0][0], cols[0][1]
    values = np.concatenate([t[0] for t in cols])
    counts = np.concatenate([t[1] for t in cols])
    if not len(values):
        return values, counts
    if counts.max() == 1:  # distinct values in each table (floats, mostly): a value's count is its repeats
        ordered = np.sort(values)
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        return ordered[starts], np.diff(np.r_[starts, len(ordered)])
    order = np.argsort(values)  # ties (a value in several tables) are summed, so any order of them does
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    return ordered[starts], np.add.reduceat(counts[order], starts)


class RankMerge(PandasOperator):
    """Tables of several partitions as one; the root (``final``) adds the running counts (the ranks' base)."""

    params = ("final",)

    def execute(self, *tables: list) -> list:
        out = []
        for cols in zip(*tables):
            u, c = _merged(cols)
            table = (u, c.astype(np.int64, copy=False), sum(t[2] for t in cols), sum(t[3] for t in cols))
            out.append(table + (np.cumsum(table[1]),) if self.final else table)
        return out


def _occurrence(x: np.ndarray) -> np.ndarray:
    """For each value, how many equal values come before it (in order)."""
    order = np.argsort(x, kind="stable")
    ordered = x[order]
    starts = np.r_[True, ordered[1:] != ordered[:-1]] if len(x) else np.zeros(0, bool)
    first = np.maximum.accumulate(np.where(starts, np.arange(len(x)), 0))
    out = np.empty(len(x), dtype=np.int64)
    out[order] = np.arange(len(x)) - first
    return out


def _positions(u: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Where each of ``x`` is in the sorted ``u``: searched in sorted order, which walks ``u`` once
    (a search of values in random order misses the cache at every step of a large table)."""
    order = np.argsort(x)
    pos = np.empty(len(x), dtype=np.intp)
    pos[order] = np.searchsorted(u, x[order])
    return pos


def _count_in(table: tuple, x: np.ndarray) -> np.ndarray:
    u, c = table[0], table[1]
    if not len(u):
        return np.zeros(len(x), dtype=np.int64)
    pos = np.minimum(np.searchsorted(u, x), len(u) - 1)
    return np.where(u[pos] == x, c[pos], 0)


class RankApply(PandasOperator):
    """A partition's ranks against the global tables (and, for ``first``, the earlier partitions' tables)."""

    params = ("method", "ascending", "na_option", "pct")
    fusible = True

    def execute(self, part: Any, tables: list, *earlier: list) -> Any:
        ranks = [self._column(_column(part, j), tables[j], [e[j] for e in earlier]) for j in range(_width(part))]
        if isinstance(part, pd.Series):
            return pd.Series(ranks[0], index=part.index, name=part.name)
        out = pd.DataFrame(dict(enumerate(ranks)), index=part.index)
        return out.set_axis(part.columns, axis=1)

    def _column(self, values: pd.Series, table: tuple, earlier: list) -> np.ndarray:
        u, c, n_nan, rows, cum = table
        x, valid = _sortable(values)
        xv = x[valid]
        total = int(cum[-1]) if len(cum) else 0
        pos = _positions(u, xv)
        cnt = c[pos] if len(xv) else np.zeros(0, np.int64)
        below = (cum[pos] - cnt) if self.ascending else (total - cum[pos] if len(xv) else cnt)
        method = self.method
        if method == "average":
            r = below + (cnt + 1) / 2.0
        elif method == "min":
            r = below + 1.0
        elif method == "max":
            r = (below + cnt).astype(np.float64)
        elif method == "dense":
            r = (pos + 1.0) if self.ascending else (len(u) - pos).astype(np.float64)
        else:
            before = sum((_count_in(e, xv) for e in earlier), np.zeros(len(xv), dtype=np.int64))
            r = below + before + _occurrence(xv) + 1.0
        out = np.full(len(x), np.nan)
        dense = method == "dense"
        if self.na_option == "top" and n_nan:
            r = r + (1 if dense else n_nan)
        out[valid] = r
        if self.na_option != "keep" and n_nan:
            offset = 0 if self.na_option == "top" else (len(u) if dense else total)
            out[~valid] = offset + self._missing_ranks(n_nan, int((~valid).sum()), sum(e[2] for e in earlier))
        if self.pct:
            extra = self.na_option != "keep" and n_nan > 0
            out = out / ((len(u) + extra) if dense else (rows if self.na_option != "keep" else total))
        return out

    def _missing_ranks(self, n_nan: int, here: int, before: int) -> Any:
        if self.method == "average":
            return (n_nan + 1) / 2.0
        if self.method in ("min", "dense"):
            return 1.0
        if self.method == "max":
            return float(n_nan)
        return before + np.arange(here) + 1.0


class Rank(PandasOperator):
    """The tileable op: local tables, a tree merging them, then ranks per partition."""

    params = ("method", "ascending", "na_option", "pct")

    @classmethod
    def tile(cls, op: Rank) -> Tiled:
        data, out = op.inputs[0], op.outputs[0]
        local = [RankTables().new_chunk([c], index=(i,), shape=(), meta=None) for i, c in enumerate(data.chunks)]
        level, size = local, max(2, options.combine_size)
        while True:
            final = len(level) <= size
            level = [RankMerge(final=final).new_chunk(level[i:i + size], index=(i // size,), shape=(), meta=None)
                     for i in range(0, len(level), size)]
            if final:
                break
        chunks = []
        for i, c in enumerate(data.chunks):
            earlier = local[:i] if op.method == "first" else []
            apply = RankApply(method=op.method, ascending=op.ascending, na_option=op.na_option, pct=op.pct)
            chunks.append(apply.new_chunk([c, level[0], *earlier], index=c.index, shape=c.shape, meta=out.meta))
        return Tiled(chunks, nsplits_of(out.meta, [c.shape[0] for c in data.chunks]))


def _rank(self: Any, axis: Any = 0, method: str = "average", numeric_only: bool = False, na_option: str = "keep",
          ascending: bool = True, pct: bool = False) -> Any:
    """Ranks of the values down each column (``method``, ``na_option``, ``ascending``, ``pct``), as pandas.

    >>> import mars.dataframe as md
    >>> md.Series([3, 1, 3, 2], chunk_size=2).rank().to_pandas().tolist()
    [3.5, 1.0, 3.5, 2.0]
    """
    kw = {"method": method, "na_option": na_option, "ascending": ascending, "pct": pct}
    if isinstance(self, DataFrame):
        kw["numeric_only"] = numeric_only
        if self.meta._get_axis_number(axis) == 1:
            return map_partitions("rank", self, axis=1, sample=True, **kw)
    result = fake(self.meta).rank(axis=axis, **kw)  # pandas' errors for bad arguments
    obj = self
    if isinstance(self, DataFrame) and numeric_only:
        obj = self[list(result.columns)]
    data = as_data(obj)
    op = Rank(method=method, ascending=bool(ascending), na_option=na_option, pct=bool(pct))
    return op.new_pandas([data], empty_meta(result), data.shape, partitioning=data.partitioning)


DataFrame.rank = _rank
Series.rank = _rank
