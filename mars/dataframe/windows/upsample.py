"""Resampler methods that put rows on the new labels: ``asfreq``, ``ffill``, ``bfill``, ``nearest``, ``interpolate``.

pandas answers them by reindexing the (sorted) data onto the bin edges of the
whole, ``obj.reindex(edges, method=..., limit=...)``, whether the new
frequency is finer or coarser than the data's. Here:

1. each partition reports its first and last timestamp and whether it is
   sorted (:class:`~mars.dataframe.windows.resample.ResampleSpan`); unsorted
   data is sorted first (stable, as pandas sorts it);
2. pandas upsamples a two-row series at the first and last timestamp of the
   whole: its index is the result's (the edges depend on those two only);
3. the distributed ``reindex`` (:mod:`mars.dataframe.methods.align`) puts the
   rows on those labels: each output partition gathers only the rows it
   needs, from whichever partitions hold them (a fill from a row in an
   earlier partition, a bin edge inside a partition, empty partitions);
4. ``interpolate`` reindexes onto the edges and the data's own timestamps,
   interpolates with carries across partitions (``Series.interpolate``) and
   keeps the edges, as pandas does.

Data holding NaT is pandas' case too: it sorts NaT first and its labels
start with a NaT (so the reindex brings the NaT row, and raises pandas'
errors: duplicate labels for two NaT, "index must be monotonic" for a fill
whose data is not exactly the labels). A column selection first
(``obj.resample(...)["a"].ffill()``) is pandas' groupby of the bins: the
sorted rows filled within each bin (:class:`BinFill`); it has no ``asfreq``,
``nearest`` or ``interpolate`` (pandas' AttributeError).

>>> import mars.dataframe as md, pandas as pd
>>> s = md.Series([1.0, 3.0], index=pd.date_range("2000-01-01", periods=2, freq="h"), chunk_size=1)
>>> s.resample("30min").interpolate().to_pandas().tolist()
[1.0, 2.0, 3.0]
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Generator
from typing import Any

import numpy as np
import pandas as pd

from ...core.operator import Fetch, Tiled
from ...core.tiling import as_data, recursive_tile
from ..align import fetch_indexes
from ..core import PandasOperator, chunk_index_of, chunk_shape_of, nsplits_of, wrap
from ..meta import empty_meta, fake
from ..methods.align import reindex_rows
from ..rows import rows_overlapping
from .resample import (
    DropNaT,
    ResamplePiece,
    Resampler,
    _cuts,
    _span_chunks,
    _times,
    _times_grid,
    grid_of,
    whole_labels,
)

__all__: list[str] = []

_FILLS = {"asfreq": None, "ffill": "ffill", "bfill": "bfill", "nearest": "nearest"}


def upsample_labels(kw: dict, first: pd.Timestamp | None, last: pd.Timestamp | None, dtype: Any,
                    nat: bool = False, name: Any = None) -> pd.DatetimeIndex:
    """The labels pandas gives the whole data's upsampling, from its first and last timestamp.

    With ``nat`` (the data holds NaT) pandas' labels start with a NaT (with ``closed="right"`` it
    takes the place of the first edge, which then stays); with no timestamp at all there are none.
    """
    stamps = [pd.NaT] if nat else []
    stamps += [] if first is None else ([first, last] if last != first else [first])
    index = pd.DatetimeIndex(stamps, dtype=dtype, name=name)
    return pd.Series(0, index=index).resample(**_times_grid(kw)).asfreq().index


class Upsample(PandasOperator):
    """``obj.resample(**kw)[selection].how(...)`` for a method of :data:`_FILLS` or ``interpolate`` (module docs)."""

    params = ("kw", "selection", "how", "limit", "fill_value", "interp")  # interp: interpolate's keywords

    @classmethod
    def tile(cls, op: Upsample) -> Generator[Any, Any, Tiled]:
        data, out = op.inputs[0], op.outputs[0]
        spans = yield Fetch(_span_chunks(list(data.chunks), None, None))
        obj = wrap(data) if op.selection is None else wrap(data)[op.selection]
        kept = [s for s in spans if s.first is not None]
        nat = any(s.nat for s in spans)
        if not kept and not nat:  # no rows: pandas' answer on the empty data, in one partition
            result = _literal(run_upsample(fake(data.meta, 0), op))
        else:
            in_order = all(s.sorted for s in kept) and all(a.last <= b.first for a, b in itertools.pairwise(kept))
            if nat:  # pandas sorts them first, and reindexes onto its labels: NaT's row, or its errors
                obj = obj.sort_index(kind="stable", na_position="first")
            elif not in_order:
                obj = obj.sort_index(kind="stable")
            first, last = (min(s.first for s in kept), max(s.last for s in kept)) if kept else (None, None)
            labels = upsample_labels(op.kw, first, last, data.meta.index.dtype, nat, data.meta.index.name)
            result = yield from _upsampled(obj, labels, op)
        result = yield from recursive_tile(result)
        tiled = as_data(result)
        out.meta, out.shape = tiled.meta, tiled.shape
        return Tiled(list(tiled.chunks), tiled.nsplits)


def _literal(value: Any) -> Any:
    from ..datasource import from_pandas

    return wrap(from_pandas(value, chunk_size=max(1, len(value))).data)


def run_upsample(part: Any, op: Upsample) -> Any:
    """pandas' own answer on in-memory data (the metadata and the empty case)."""
    r = part.resample(**op.kw)
    if op.selection is not None:
        r = r[op.selection]
    if op.how == "interpolate":
        return r.interpolate(**op.interp)
    if op.how == "asfreq":
        return r.asfreq(fill_value=op.fill_value)
    return getattr(r, op.how)(limit=op.limit)


def _upsampled(obj: Any, labels: pd.DatetimeIndex, op: Upsample) -> Generator[Any, Any, Any]:
    if op.how != "interpolate":
        return reindex_rows(obj, labels, _FILLS[op.how], op.fill_value, op.limit, None)
    tiled = yield from recursive_tile(obj)
    (index,) = yield from fetch_indexes([as_data(tiled)])
    extra = index.difference(labels)
    every = labels.append(extra).sort_values() if len(extra) else labels
    spread = yield from _interpolated(reindex_rows(obj, every, None, np.nan, None, None), op)
    return reindex_rows(spread, labels, None, np.nan, None, None) if len(extra) else spread


def _interpolated(obj: Any, op: Upsample) -> Generator[Any, Any, Any]:
    # the reindex is tiled first: its dtypes (ints become floats where a label has no row) are known then
    obj = yield from recursive_tile(obj)
    return obj.interpolate(**op.interp)


# ----------------------------------------------------------------- a selection's fills: pandas' groupby of the bins
class OnlyNaT(PandasOperator):
    """A partition's rows at ``NaT`` (pandas' groupby of the bins gives them NaN)."""

    params = ("on",)
    fusible = True

    def execute(self, part: Any) -> Any:
        return part[_times(part, self.on).isna()]


class BinFill(PandasOperator):
    """``obj.resample(**kw)[selection].ffill/bfill(limit)``: each bin's rows filled within the bin.

    pandas answers a column selection with a groupby of the bins: the rows
    sorted by time (NaT first, stable), each bin's missing values filled
    from its own rows only, the rows at NaT all missing. The sorted rows are
    cut so that no bin spans two partitions and each partition is pandas'
    own answer; the NaT rows are one more partition in front.
    """

    params = ("kw", "selection", "how", "limit")

    @classmethod
    def tile(cls, op: BinFill) -> Generator[Any, Any, Tiled]:
        data, out = op.inputs[0], op.outputs[0]
        on = op.kw.get("on")
        spans = yield Fetch(_span_chunks(list(data.chunks), on, None))
        kept = [s for s in spans if s.first is not None]
        nat = any(s.nat for s in spans)
        out.meta = _bin_fill_meta(data.meta, op, nat)
        chunks = list(data.chunks)
        if not kept:  # nothing to bin: pandas' answer on all rows, in one partition
            return _tiled(op, [(chunks, [(0, None)] * len(chunks), op.kw)], [sum(s.rows for s in spans)])
        in_order = all(s.sorted for s in kept) and all(a.last <= b.first for a, b in itertools.pairwise(kept))
        if nat or not in_order:
            ordered = wrap(data).sort_index(kind="stable", na_position="first") if on is None else \
                wrap(data).sort_values(on, kind="stable", na_position="first")
            chunks = list(as_data((yield from recursive_tile(ordered))).chunks)
        pieces, sizes = [], []
        if nat:
            pieces.append(([_like(OnlyNaT(on=on), c) for c in chunks], [(0, None)] * len(chunks), op.kw))
            sizes.append(sum(s.nat for s in spans))
            chunks = [_like(DropNaT(on=on), c) for c in chunks]
        dtype = data.meta.index.dtype if on is None else data.meta[on].dtype
        grid = grid_of(op.kw, whole_labels(op.kw, min(s.first for s in kept), max(s.last for s in kept), dtype))
        spans = yield Fetch(_span_chunks(chunks, on, _times_grid(grid)))
        rows = [s.rows for s in spans]
        for start, stop in itertools.pairwise(_cuts(spans)[0]):
            cover = rows_overlapping(rows, start, stop)
            pieces.append(([chunks[j] for j, _, _ in cover], [(a, b) for _, a, b in cover], grid))
            sizes.append(stop - start)
        return _tiled(op, pieces, sizes)


def _like(op: PandasOperator, chunk: Any) -> Any:
    return op.new_chunk([chunk], index=chunk.index, shape=chunk_shape_of(chunk.meta, np.nan), meta=chunk.meta)


def _tiled(op: BinFill, pieces: list, sizes: list) -> Tiled:
    """One partition per piece ``(input chunks, row range in each, resample keywords)``, pandas' fill in each."""
    out, chunks = op.outputs[0], []
    for i, (inputs, ranges, grid) in enumerate(pieces):
        piece = ResamplePiece(ranges=tuple(ranges), grid=grid, on=op.kw.get("on"), selection=op.selection,
                              how=op.how, args=(), kwargs={"limit": op.limit}, labels=None, guards=(None, None),
                              like=out.meta, had_nat=False)
        chunks.append(piece.new_chunk(inputs, index=chunk_index_of(out.meta, i),
                                      shape=chunk_shape_of(out.meta, sizes[i]), meta=out.meta))
    out.shape = chunk_shape_of(out.meta, sum(sizes))
    return Tiled(chunks, nsplits_of(out.meta, sizes))


def _bin_fill_meta(meta: Any, op: BinFill, nat: bool) -> Any:
    """pandas' result dtypes on a small sample (with a row at NaT when ``nat``: its values become missing)."""
    on = op.kw.get("on")
    dtype = meta.index.dtype if on is None else meta[on].dtype
    sample = fake(meta, 2)
    stamps = pd.DatetimeIndex([pd.NaT if nat else "2000-01-01", "2000-01-01"][-len(sample):], dtype=dtype,
                              name=meta.index.name if on is None else None)
    if on is None:
        sample.index = stamps
    else:
        sample[on] = pd.Series(stamps, index=sample.index)
    r = sample.resample(**op.kw)[op.selection]
    return empty_meta(getattr(r, op.how)(limit=op.limit))


def _bin_fill(self: Resampler, how: str, limit: Any) -> Any:
    getattr(self._pandas()[self._selection], how)(limit=limit)  # pandas' checks of the arguments
    op = BinFill(kw=self._kw, selection=self._selection, how=how, limit=limit)
    meta = _bin_fill_meta(self._obj.meta, op, False)
    return op.new_pandas([as_data(self._obj)], meta, chunk_shape_of(meta, np.nan))


def _upsample(self: Resampler, how: str, limit: Any = None, fill_value: Any = None,
              interp: dict | None = None) -> Any:
    op = Upsample(kw=self._kw, selection=self._selection, how=how, limit=limit, fill_value=fill_value,
                  interp=interp)
    if self._selection is not None:
        # pandas answers a selection with a groupby of the bins: it fills within bins and has no asfreq,
        # nearest or interpolate (pandas' AttributeError)
        if how in ("ffill", "bfill"):
            return _bin_fill(self, how, limit)
        getattr(self._pandas()[self._selection], how)
        raise NotImplementedError(f"resample(...)[{self._selection!r}].{how}(); upsample first and select after")
    if self._kw.get("on") is not None:
        raise ValueError("Upsampling from level= or on= selection is not supported, use .set_index(...) to "
                         "explicitly set index to datetime-like")
    meta = empty_meta(_upsampled_sample(self._obj.meta, op))
    return op.new_pandas([as_data(self._obj)], meta, chunk_shape_of(meta, np.nan))


def _upsampled_sample(meta: Any, op: Upsample) -> Any:
    """pandas' upsampling of a sample like ``meta``: its checks of the arguments, and the result's columns.

    The sample has a bin edge without a row; there pandas' interpolation
    puts a NaN in a bool column, which then (object) cannot be interpolated:
    pandas' TypeError. Data with a row at every edge interpolates, keeping
    the bool column, so the metadata is taken from the sample's own
    interpolation; data lacking an edge raises when it is run.
    """
    try:
        return run_upsample(fake(meta, 2), op)
    except TypeError:
        if op.how != "interpolate" or not any(pd.api.types.is_bool_dtype(d) for d in _dtypes(meta)):
            raise
    return fake(meta, 2).interpolate(**op.interp)


def _dtypes(meta: Any) -> list:
    return list(meta.dtypes) if isinstance(meta, pd.DataFrame) else [meta.dtype]


def _filler(how: str) -> Callable:
    def method(self: Resampler, limit: int | None = None) -> Any:
        return _upsample(self, how, limit=limit)

    method.__name__ = how
    method.__doc__ = (f"pandas' ``Resampler.{how}``: the rows reindexed onto the bin edges of the whole "
                      f"(``reindex(method={_FILLS[how]!r})``), across partitions.")
    return method


def _asfreq(self: Resampler, fill_value: Any = None) -> Any:
    """The value at each bin edge (``fill_value`` where there is none), as pandas' ``Resampler.asfreq``.

    >>> import mars.dataframe as md, pandas as pd
    >>> s = md.Series([1, 2], index=pd.date_range("2000-01-01", periods=2, freq="h"), chunk_size=1)
    >>> s.resample("30min").asfreq(fill_value=0).to_pandas().tolist()
    [1, 0, 2]
    """
    return _upsample(self, "asfreq", fill_value=fill_value)


def _interpolate(self: Resampler, method: str = "linear", *, axis: Any = 0, limit: Any = None,
                 limit_direction: str = "forward", limit_area: Any = None, **kwargs: Any) -> Any:
    """Values at the bin edges interpolated between the data's, as pandas' ``Resampler.interpolate``.

    >>> import mars.dataframe as md, pandas as pd
    >>> s = md.Series([0.0, 4.0], index=pd.to_datetime(["2000-01-01 00:00", "2000-01-01 02:00"]), chunk_size=1)
    >>> s.resample("h").interpolate().to_pandas().tolist()
    [0.0, 2.0, 4.0]
    """
    if kwargs.pop("inplace", False):
        raise ValueError("Cannot interpolate inplace on a resampled object.")
    interp = {"method": method, "axis": axis, "limit": limit, "limit_direction": limit_direction,
              "limit_area": limit_area, **kwargs}
    return _upsample(self, "interpolate", interp=interp)


def _install() -> None:
    for how in ("ffill", "bfill", "nearest"):
        setattr(Resampler, how, _filler(how))
    Resampler.asfreq = _asfreq
    Resampler.interpolate = _interpolate


_install()
