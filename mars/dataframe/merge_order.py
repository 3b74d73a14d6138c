"""A join's merged partitions put in pandas' row order and final form.

:mod:`mars.dataframe.merge` decides which rows meet in which partition; this
module finishes the result. When the partitions' rows are not in pandas'
order end to end (a hash join, or the small left side of an ``inner`` or
``left`` join broadcast to the right's partitions), each merged row carries
its position in the side pandas' order follows as a hidden column, and each
partition is sorted by it. :func:`ordered_by_position` then cuts every
partition at the same position bounds and sends each run to the output
partition of its range, whose reducer sorts its runs by position (a stable
sort, so the rows of one position keep their partitions' order, which is
pandas' order); when the partitions' position spans already follow one
another, the shuffle is skipped.

pandas turns an int column to float when some row finds no partner; a
partition without such rows stays int. So every partition's dtypes are
fetched first and every partition cast to the dtypes pandas gives the whole
(:func:`final_form`); a default index is numbered across partitions.
"""

from __future__ import annotations

import itertools
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..core.operator import Fetch, Tiled
from ..core.shuffle import ShuffleMap, ShuffleReduce, shuffle_chunks
from ..tensor.chunks import offsets
from .core import PandasOperator, nsplits_of
from .rows import renumber_rows

__all__: list[str] = []


@dataclass(frozen=True)
class PartInfo:
    """What the tiling learns of a merged partition.

    Its size, dtypes and index, where position bounds cut it (``cuts``) and
    its first and last position (``span``, empty when it has no rows or no
    positions).
    """

    rows: int
    dtypes: tuple
    index_dtype: Any
    index_names: tuple
    cuts: tuple
    span: tuple = ()


@dataclass(frozen=True)
class FinalForm:
    """What every partition of the result is made to match.

    ``index_dtype``/``index_names`` are None for a default index (numbered
    instead); ``index_dtype`` is None for a MultiIndex too.
    """

    dtypes: tuple
    index_dtype: Any
    index_names: tuple | None

    def __mars_tokenize__(self) -> tuple:
        return (self.dtypes, self.index_dtype, self.index_names)

    def matches(self, info: PartInfo) -> bool:
        return info.dtypes == self.dtypes and self.index_dtype in (None, info.index_dtype) and \
            self.index_names in (None, info.index_names)


class MergeInfo(PandasOperator):
    """A merged partition's :class:`PartInfo`; ``bounds`` cut it by the hidden ``position`` column."""

    params = ("position", "bounds")
    #: runs in the subtask that makes its input (see mars.core.fusion)
    tap = True

    def execute(self, part: pd.DataFrame) -> PartInfo:
        cuts: tuple = ()
        span: tuple = ()
        dtypes = part.dtypes
        if self.position is not None:
            at = part[self.position].to_numpy()
            cuts = tuple(np.searchsorted(at, self.bounds, side="left").tolist())
            span = (int(at[0]), int(at[-1])) if len(at) else ()
            dtypes = dtypes.drop(self.position)
        index_dtype = None if isinstance(part.index, pd.MultiIndex) else part.index.dtype
        return PartInfo(len(part), tuple(dtypes), index_dtype, tuple(part.index.names), cuts, span)


def conform(part: pd.DataFrame, form: FinalForm, start: int | None, drop: str | None = None) -> pd.DataFrame:
    """``part`` in the result's final form, numbered from ``start`` when it has a default index."""
    if drop is not None:
        part = part.drop(columns=drop)
    changed = [i for i, (have, want) in enumerate(zip(part.dtypes, form.dtypes)) if have != want]
    if changed:
        part = part.copy(deep=False)  # the input stays as it was: other readers may hold it
        for i in changed:
            part.isetitem(i, part.iloc[:, i].astype(form.dtypes[i]))
    index = part.index
    if start is not None:
        index = pd.RangeIndex(start, start + len(part))
    if form.index_dtype is not None and index.dtype != form.index_dtype:
        index = index.astype(form.index_dtype)
    if form.index_names is not None and tuple(index.names) != form.index_names:
        index = index.set_names(list(form.index_names))
    return part if index is part.index else part.set_axis(index, axis=0)


class Conform(PandasOperator):
    """A merged partition in the result's final form, less the hidden ``drop`` column (see :func:`conform`)."""

    params = ("form", "start", "drop")
    fusible = True

    def execute(self, part: pd.DataFrame) -> pd.DataFrame:
        return conform(part, self.form, self.start, self.drop)


class PositionSplit(ShuffleMap, PandasOperator):
    """A merged partition (in position order) cut into runs of position ranges, one per output partition."""

    params = ("cuts",)

    def split(self, part: pd.DataFrame) -> list:
        bounds = [0, *self.cuts, len(part)]
        return [part.iloc[a:b] for a, b in itertools.pairwise(bounds)]


class PositionRangeSplit(ShuffleMap, PandasOperator):
    """A merged partition (in position order) cut at the position ``bounds``: one run per output partition."""

    params = ("position", "bounds")

    def split(self, part: pd.DataFrame) -> list:
        cuts = np.searchsorted(part[self.position].to_numpy(), self.bounds, side="left").tolist()
        return [part.iloc[a:b] for a, b in itertools.pairwise([0, *cuts, len(part)])]


class PositionOrder(ShuffleReduce, PandasOperator):
    """One output partition: the runs of one position range, in position order, in final form.

    Each run is in position order and the runs come in their partitions'
    order, so a stable sort by position gives pandas' order: a position's
    rows stay in the order of the partitions they were merged in.
    """

    params = ("position", "form", "start")

    def combine(self, pieces: list) -> pd.DataFrame:
        kept = [p for p in pieces if len(p)] or pieces[:1]
        whole = kept[0] if len(kept) == 1 else pd.concat(kept)
        if len(kept) > 1:
            whole = whole.take(np.argsort(whole[self.position].to_numpy(), kind="stable"))
        return conform(whole, self.form, self.start, drop=self.position)


def final_form(meta: pd.DataFrame, infos: Sequence[PartInfo], names: tuple | None) -> tuple[pd.DataFrame, FinalForm]:
    """The result's meta and final form given its partitions': the dtypes pandas' concat of them gives."""
    kept = [i for i in infos if i.rows] or list(infos[:1])
    frames = []
    for info in kept:
        frame = pd.DataFrame({j: pd.Series([], dtype=d) for j, d in enumerate(info.dtypes)})
        index = meta.index if names is None or info.index_dtype is None else pd.Index([], dtype=info.index_dtype)
        frames.append(frame.set_axis(meta.columns, axis=1).set_axis(index, axis=0))
    meta = frames[0] if len(frames) == 1 else pd.concat(frames)
    if names is not None:
        meta.index = meta.index.set_names(list(names))
    index_dtype = None if names is None or isinstance(meta.index, pd.MultiIndex) else meta.index.dtype
    return meta, FinalForm(tuple(meta.dtypes), index_dtype, names)


def spans_follow(infos: Sequence[PartInfo]) -> bool:
    """Whether the partitions' rows, end to end, are in position order already.

    Equal positions in two partitions are in order too: the earlier
    partition's rows come first in pandas' order.

    >>> spans_follow([PartInfo(2, (), None, (), (), (0, 3)), PartInfo(0, (), None, (), ()),
    ...               PartInfo(1, (), None, (), (), (3, 3))])
    True
    """
    spans = [i.span for i in infos if i.rows]
    return all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


def ordered_by_position(out: Any, merged: list, merged_meta: pd.DataFrame, position: str, total: int,
                        names: tuple | None, numbered: bool) -> Generator[Any, Any, Tiled]:
    """The tiling of ``out`` from ``merged`` partitions, each in order of the hidden ``position`` column.

    ``total`` is the number of positions; there are as many output
    partitions as merged ones, each a range of positions. ``names`` are the
    result's index names (None: a default index, numbered across).
    """
    n = len(merged)
    bounds = _position_bounds(total, n)
    info_chunks = [MergeInfo(position=position, bounds=bounds).new_chunk([c], index=(i,), shape=(), meta=None)
                   for i, c in enumerate(merged)]
    yield merged
    infos = yield Fetch(info_chunks)
    meta, form = final_form(out.meta, infos, names)
    out.meta = meta
    if spans_follow(infos):
        starts = offsets([i.rows for i in infos])
        chunks = [Conform(form=form, start=int(s) if numbered else None, drop=position).new_chunk(
            [c], index=(i, 0), shape=(info.rows, meta.shape[1]), meta=meta)
            for i, (c, info, s) in enumerate(zip(merged, infos, starts))]
        return Tiled(chunks, nsplits_of(meta, [i.rows for i in infos]))
    sizes = np.zeros(n, dtype=np.int64)
    for info in infos:
        sizes += np.diff([0, *info.cuts, info.rows])
    starts = offsets(sizes.tolist())
    chunks = shuffle_chunks(
        merged, n,
        lambda m: PositionSplit(cuts=infos[m].cuts),
        lambda r: PositionOrder(position=position, form=form, start=int(starts[r]) if numbered else None),
        [{"index": (r, 0), "shape": (int(sizes[r]), meta.shape[1]), "meta": meta} for r in range(n)],
        lambda m, r: {"index": (m, r), "shape": (np.nan,), "meta": merged_meta},
    )
    return Tiled(chunks, nsplits_of(meta, sizes.tolist()))


def _position_bounds(total: int, n: int) -> np.ndarray:
    """Where ``n`` output partitions of ``total`` positions start (the first's start, 0, left out)."""
    return np.array([total * p // n for p in range(1, n)], dtype=np.int64)


def ordered_in_meta_dtypes(out: Any, merged: list, merged_meta: pd.DataFrame, position: str, total: int) -> Tiled:
    """:func:`ordered_by_position` for a result numbered from 0 whose partitions all have ``out``'s dtypes.

    Nothing is fetched first, so no tiling stage waits for the merges: each
    partition is cut at fixed position bounds whatever its rows (the shuffle
    runs even where the partitions' spans already follow one another), and
    the rows are numbered by a chain of row counts.
    """
    n, meta = len(merged), out.meta
    bounds = _position_bounds(total, n)
    form = FinalForm(tuple(meta.dtypes), None, None)
    chunks = shuffle_chunks(
        merged, n,
        lambda m: PositionRangeSplit(position=position, bounds=bounds),
        lambda r: PositionOrder(position=position, form=form, start=None),
        [{"index": (r, 0), "shape": (np.nan, meta.shape[1]), "meta": meta} for r in range(n)],
        lambda m, r: {"index": (m, r), "shape": (np.nan,), "meta": merged_meta},
    )
    return Tiled(*renumber_rows(chunks, meta))


# ----------------------------------------------------------------- a small left side broadcast
class WithPositions(PandasOperator):
    """A frame with its rows' positions (from 0) in the hidden column ``position``."""

    params = ("position",)

    def execute(self, part: pd.DataFrame) -> pd.DataFrame:
        return part.assign(**{self.position: np.arange(len(part), dtype=np.int64)})


class MatchedRows(PandasOperator):
    """Which of ``size`` positions a merged partition's hidden ``position`` column holds, as a mask."""

    params = ("position", "size")

    def execute(self, part: pd.DataFrame) -> np.ndarray:
        mask = np.zeros(self.size, dtype=bool)
        mask[part[self.position].to_numpy()] = True
        return mask


class UnmatchedRows(PandasOperator):
    """A left join's rows for the left rows no partition matched: pandas' left merge with an empty right.

    Inputs: the whole left side (with positions), any partition of the
    right (for its columns and dtypes), and every partition's
    :class:`MatchedRows`.
    """

    params = ("kwargs",)

    def execute(self, left: pd.DataFrame, right: pd.DataFrame, *masks: np.ndarray) -> pd.DataFrame:
        matched = np.logical_or.reduce(masks) if masks else np.zeros(len(left), dtype=bool)
        return pd.merge(left[~matched], right.iloc[:0], **self.kwargs)
