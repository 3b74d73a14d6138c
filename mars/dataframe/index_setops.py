"""Set operations of lazy Indexes: ``union``, ``intersection``, ``difference``, ``symmetric_difference``.

Each is built from distributed pieces: distinct labels (``unique``),
membership in the other Index (``isin``, the other sent whole to every
partition, so it should be the smaller), counts of repeated labels
(``value_counts``) and the distributed sort. pandas' order rules follow:
``sort=None`` sorts when the labels compare, ``sort=False`` keeps the
labels in order of first appearance.

>>> import mars.dataframe as md
>>> md.Index([3, 1, 2], chunk_size=2).union([2, 5]).to_pandas().tolist()
[1, 2, 3, 5]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from pandas.core.algorithms import safe_sort

from ..core.operator import Tiled
from ..core.tiling import as_data
from .core import Index, PandasOperator
from .index_methods import lazy_index
from .map import Whole, map_partitions
from .meta import empty_meta, fake
from .reshape import MapOne
from .rows import single_chunk

__all__: list[str] = []


def _lazy_other(other: Any) -> tuple[Index, Any]:
    """``other`` as a lazy Index, and what pandas' result on a sample is computed with (in-memory values as given)."""
    if isinstance(other, Index):
        return other, fake(other.meta)
    return lazy_index(other if isinstance(other, pd.Index) else pd.Index(other)), other


def _first_seen(part: pd.Index) -> pd.Index:
    return part.unique()


def _named(part: pd.Index, name: Any, dtype: Any) -> pd.Index:
    out = part if part.dtype == dtype else part.astype(dtype)
    return out.rename(name)


def _common(self: Index, given: Any, how: str, sort: Any) -> tuple:
    """pandas' result on samples: the name and dtype of the result (and pandas' argument errors)."""
    if sort not in (None, False, True):
        raise ValueError(f"The 'sort' keyword only takes the values of None, True, or False; {sort} was passed.")
    sample = getattr(fake(self.meta), how)(given, sort=sort)
    return sample.name, sample.dtype


def _distinct(idx: Index) -> Index:
    """Distinct labels in order of first appearance (the distributed ``drop_duplicates``)."""
    return idx.drop_duplicates()


def _outside(part: pd.Index, other: Any) -> pd.Index:
    return part[~part.isin(other)]


def _inside(part: pd.Index, other: Any) -> pd.Index:
    return part[part.isin(other)]


def _safe_sorted(part: pd.Index) -> pd.Index:
    # pandas' own order for set operations: numbers before strings, unsorted when the labels do not compare
    return pd.Index(safe_sort(part), dtype=part.dtype, name=part.name) if len(part) else part


def _sorted_if(idx: Index, sort: Any) -> Index:
    """Sorted for ``sort=None``/``True`` as pandas sorts set results (labels that do not compare stay as they are).

    Object labels may mix kinds that pandas orders by kind: they are sorted in one task.
    """
    if sort is False:
        return idx
    if idx.meta.dtype == object:
        return SortInOneTask().new_pandas([as_data(idx)], idx.meta, idx.shape)
    return idx.sort_values()


class SortInOneTask(PandasOperator):
    """All the labels in one chunk, sorted as pandas sorts set results."""

    @classmethod
    def tile(cls, op: SortInOneTask) -> Tiled:
        data, out = op.inputs[0], op.outputs[0]
        whole = single_chunk(data)
        chunk = MapOne(func=_safe_sorted, args=()).new_chunk([whole], index=(0,), shape=whole.shape, meta=out.meta)
        return Tiled([chunk], (whole.shape,))


def _finish(idx: Index, name: Any, dtype: Any) -> Index:
    meta = empty_meta(pd.Index([], dtype=dtype, name=name))
    return map_partitions(_named, idx, name, dtype, meta=meta)


def _cast(idx: Index, dtype: Any) -> Index:
    if idx.meta.dtype == dtype:
        return idx
    return map_partitions(_named, idx, idx.meta.name, dtype, meta=empty_meta(idx.meta.astype(dtype)))


def _intersection(self: Index, other: Any, sort: Any = False) -> Index:
    """Distinct labels in both, in this Index's order (``sort=None``: sorted), as pandas.

    >>> import mars.dataframe as md
    >>> md.Index([3, 1, 2, 1], chunk_size=2).intersection([1, 3, 9]).to_pandas().tolist()
    [3, 1]
    """
    other, given = _lazy_other(other)
    name, dtype = _common(self, given, "intersection", sort)
    left = _cast(self, dtype)
    _, _, equal = _facts(left, other)
    if equal:
        distinct = _distinct(left)
        return _finish(distinct.sort_values() if sort is True else distinct, name, dtype)
    found = map_partitions(_inside, _distinct(left), Whole(_cast(other, dtype)), same_rows=False, meta=left.meta)
    return _finish(_sorted_if(found, sort), name, dtype)


def _difference(self: Index, other: Any, sort: Any = None) -> Index:
    """Distinct labels not in ``other`` (``sort=None``: sorted when they compare), as pandas.

    >>> import mars.dataframe as md
    >>> md.Index([3, 1, 2, 1], chunk_size=2).difference([2]).to_pandas().tolist()
    [1, 3]
    """
    other, given = _lazy_other(other)
    name, dtype = _common(self, given, "difference", sort)
    left = _cast(self, dtype)
    if not _length(other):
        distinct = _distinct(left)
        return _finish(distinct.sort_values() if sort is True else distinct, name, dtype)
    kept = map_partitions(_outside, _distinct(left), Whole(_cast(other, dtype)), same_rows=False, meta=left.meta)
    return _finish(_sorted_if(kept, sort), name, dtype)


def _symmetric_difference(self: Index, other: Any, result_name: Any = None, sort: Any = None) -> Index:
    """Distinct labels in exactly one of the two, this Index's first (``sort=None``: sorted), as pandas.

    >>> import mars.dataframe as md
    >>> md.Index([3, 1, 2], chunk_size=2).symmetric_difference([2, 5]).to_pandas().tolist()
    [1, 3, 5]
    """
    other, given = _lazy_other(other)
    name, dtype = _common(self, given, "symmetric_difference", sort)
    if result_name is not None:
        name = result_name
    left, right = _cast(self, dtype), _cast(other, dtype)
    a = map_partitions(_outside, _distinct(left), Whole(right), same_rows=False, meta=left.meta)
    b = map_partitions(_outside, _distinct(right), Whole(left), same_rows=False, meta=right.meta)
    return _finish(_sorted_if(a.append(b), sort), name, dtype)


def _repeat_counts(part: pd.Series, dtype: Any) -> pd.Index:
    return pd.Index(np.repeat(part.index.to_numpy(), part.to_numpy().astype(np.int64)), dtype=dtype)


def _max_count(part: pd.Series, left: pd.Series, right: pd.Series) -> pd.Series:
    return np.maximum(left.reindex(part.index, fill_value=0), right.reindex(part.index, fill_value=0))


def _length(idx: Index) -> int:
    return len(idx.execute()) if np.isnan(idx.shape[0]) else len(idx)


def _facts(left: Index, right: Index) -> tuple[int, int, bool]:
    """(length of each, whether equal): pandas answers some set operations early from them, so they come first."""
    n, m = _length(left), _length(right)
    return n, m, bool(n == m and n and left.equals(right))


def _union(self: Index, other: Any, sort: Any = None) -> Index:
    """Labels of either; a repeated label keeps its larger count (``sort=None``: sorted), as pandas.

    Whether one side is empty or both are equal (pandas then returns one side as it is) is found first.

    >>> import mars.dataframe as md
    >>> md.Index([3, 1, 1], chunk_size=2).union([1, 2]).to_pandas().tolist()
    [1, 1, 2, 3]
    """
    other, given = _lazy_other(other)
    name, dtype = _common(self, given, "union", sort)
    left, right = _cast(self, dtype), _cast(other, dtype)
    n, m, equal = _facts(left, right)
    if not m or equal or not n:
        early = right if not n and m else left
        return _finish(early.sort_values() if sort is True else early, name, dtype)
    order = _distinct(left.append(right))
    counts = [x.value_counts(dropna=False, sort=False) for x in (left, right)]
    wanted = map_partitions(_labels_with, order, meta=pd.Series([], dtype=np.int64, index=pd.Index([], dtype=dtype)))
    most = map_partitions(_max_count, wanted, Whole(counts[0]), Whole(counts[1]), meta=wanted.meta)
    labels = map_partitions(_repeat_counts, most, dtype, meta=pd.Index([], dtype=dtype), same_rows=False)
    return _finish(_sorted_if(labels, sort), name, dtype)


def _labels_with(part: pd.Index) -> pd.Series:
    return pd.Series(np.zeros(len(part), dtype=np.int64), index=part)


class AppendIndexes(PandasOperator):
    """Indexes end to end: every input's partitions in order, cast to the result's dtype and name."""

    @classmethod
    def tile(cls, op: AppendIndexes) -> Tiled:
        meta = op.outputs[0].meta
        chunks, rows = [], []
        for data in op.inputs:
            for c in data.chunks:
                chunks.append(MapOne(func=_named, args=(meta.name, meta.dtype)).new_chunk(
                    [c], index=(len(chunks),), shape=c.shape, meta=meta))
                rows.append(c.shape[0])
        return Tiled(chunks, (tuple(rows),))


def _append(self: Index, other: Any) -> Index:
    """This Index followed by ``other`` (an Index, or a list of them), as ``pandas.Index.append``.

    >>> import mars.dataframe as md
    >>> md.Index([1, 2], chunk_size=1).append(md.Index([2.5])).to_pandas().tolist()
    [1.0, 2.0, 2.5]
    """
    many = isinstance(other, (list, tuple))
    others = [lazy_index(o) for o in (other if many else [other])]
    meta = self.meta.append([o.meta for o in others])
    inputs = [as_data(self)] + [as_data(o) for o in others]
    rows = sum(d.shape[0] for d in inputs)
    return AppendIndexes().new_pandas(inputs, meta, (rows,))


def _install() -> None:
    Index.append = _append
    Index.union = _union
    Index.intersection = _intersection
    Index.difference = _difference
    Index.symmetric_difference = _symmetric_difference


_install()
