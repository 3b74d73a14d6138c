"""Aligning row-partitioned inputs on their index, as pandas aligns operands.

Inputs with different partitionings are aligned at tiling time:

1. the inputs' indexes are computed and fetched (indexes only, not data);
2. if they are all equal, the other inputs are re-cut by position to the
   first one's partitions (no join needed);
3. otherwise pandas itself joins them (``Index.join``, outer for arithmetic,
   or a reindex onto the first input for ``how="left"``), and each output
   partition gathers its rows from the input partitions that hold them.
   Missing rows become NaN in every partition, and dtypes widen the way
   pandas widens them (ints to float), the same for all partitions.
"""

from __future__ import annotations

from typing import Any, Generator, Sequence

import numpy as np
import pandas as pd

from ..core.operator import Fetch
from ..tensor.chunks import offsets
from .core import PandasOperator, chunk_index_of, chunk_shape_of, row_splits
from .meta import empty_meta, fake
from .rows import known_rows, recut_chunks


class ChunkIndex(PandasOperator):
    """A partition's index (what alignment fetches)."""

    params = ()

    def execute(self, value: Any) -> pd.Index:
        return value if isinstance(value, pd.Index) else value.index


def _index_chunks(data: Any) -> list:
    meta = data.meta if isinstance(data.meta, pd.Index) else data.meta.index
    return [ChunkIndex().new_chunk([c], index=(i,), shape=(c.shape[0],), meta=meta) for i, c in enumerate(data.chunks)]


def fetch_indexes(datas: Sequence[Any]) -> Generator[Any, Any, list[pd.Index]]:
    """For generator ``tile()``s: the whole index of each of ``datas``, computed and fetched (indexes only)."""
    for d in datas:
        yield from known_rows(d)
    per_input = [_index_chunks(d) for d in datas]
    values = yield Fetch([c for chunks in per_input for c in chunks])
    indexes, start = [], 0
    for chunks in per_input:
        parts = values[start:start + len(chunks)]
        start += len(chunks)
        indexes.append(parts[0].append(parts[1:]) if len(parts) > 1 else parts[0])
    return indexes


def align_chunks(datas: Sequence[Any], how: str = "outer") -> Generator[Any, Any, list[tuple[list, tuple, Any]]]:
    """Per input: chunks, row splits and meta (None: unchanged), with the same rows in the same partitions."""
    indexes = yield from fetch_indexes(datas)
    first = datas[0]
    if all(ix.equals(indexes[0]) for ix in indexes[1:]):
        splits = row_splits(first)
        out = [(list(first.chunks), splits, None)]
        out += [(recut_chunks(d, splits), splits, None) for d in datas[1:]]
        return out
    joined, positions = _join(indexes, how)
    splits = row_splits(first) if how == "left" else _even_splits(len(joined), len(first.chunks))
    return [_gather(d, pos, joined, splits) if pos is not None else (list(d.chunks), splits, None)
            for d, pos in zip(datas, positions)]


def _join(indexes: list[pd.Index], how: str) -> tuple[pd.Index, list]:
    """The joined index and, per input, the position of each joined row in it (-1: missing; None: identity)."""
    if how == "left":
        base = indexes[0]
        positions: list = [None]
        for ix in indexes[1:]:
            if not ix.is_unique:
                raise ValueError("cannot reindex on an axis with duplicate labels")
            positions.append(ix.get_indexer(base))
        return base, positions
    if how != "outer":
        raise ValueError(f"unknown alignment {how!r}; expected 'outer' or 'left'")
    joined = indexes[0]
    positions = [np.arange(len(joined))]
    for ix in indexes[1:]:
        joined, left, right = joined.join(ix, how="outer", return_indexers=True)
        left = np.arange(len(joined)) if left is None else left
        positions = [np.where(left >= 0, p[np.maximum(left, 0)], -1) if len(p) else np.full(len(joined), -1)
                     for p in positions]
        positions.append(np.arange(len(joined)) if right is None else right)
    return joined, positions


def _even_splits(n: int, parts: int) -> tuple:
    parts = max(1, min(parts, n)) if n else 1
    base, extra = divmod(n, parts)
    return tuple(base + (1 if i < extra else 0) for i in range(parts))


def _widened(meta: Any) -> Any:
    """The meta pandas gives this object after a reindex that introduced missing rows."""
    sample = fake(meta)
    if isinstance(sample, pd.Index):
        return meta
    return empty_meta(sample.reset_index(drop=True).reindex([0, -1]))


class GatherRows(PandasOperator):
    """One aligned partition: rows taken by position from several input partitions, NaN where missing."""

    params = ("positions", "labels", "dtypes")

    def execute(self, *parts: Any) -> Any:
        whole = parts[0] if len(parts) == 1 else pd.concat(parts)
        pos = self.positions
        if isinstance(whole, pd.Index):
            result = whole.take(pos)
            return result
        if (pos < 0).any():
            result = whole.reset_index(drop=True).reindex(pos)
        else:
            result = whole.iloc[pos]
        result = result.set_axis(self.labels, axis=0)
        if self.dtypes is not None:
            result = result.astype(self.dtypes)
        return result


def _gather(data: Any, pos: np.ndarray, joined: pd.Index, splits: tuple) -> tuple[list, tuple, Any]:
    meta = _widened(data.meta) if (pos < 0).any() else data.meta
    dtypes = None
    if meta is not data.meta:
        dtypes = meta.dtypes if isinstance(meta, pd.DataFrame) else meta.dtype
    meta = meta.set_axis(joined[:0], axis=0) if not isinstance(meta, pd.Index) else meta
    starts = np.asarray(offsets(row_splits(data)) + [int(sum(row_splits(data)))])
    chunks, lo = [], 0
    for p, n in enumerate(splits):
        sel = pos[lo:lo + n]
        owner = np.searchsorted(starts, sel, side="right") - 1
        valid = sel >= 0
        used = np.unique(owner[valid]) if valid.any() else np.array([0])
        lookup = np.zeros(len(starts), dtype=np.int64)
        lookup[used] = offsets((starts[used + 1] - starts[used]).tolist())
        local = np.where(valid, lookup[owner] + sel - starts[owner], -1).astype(np.int64)
        op = GatherRows(positions=local, labels=joined[lo:lo + n], dtypes=dtypes)
        chunks.append(op.new_chunk([data.chunks[j] for j in used.tolist()], index=chunk_index_of(meta, p),
                                   shape=chunk_shape_of(meta, n), meta=meta))
        lo += n
    return chunks, splits, meta
