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
from ..core import PandasOperator, chunk_shape_of, wrap
from ..meta import empty_meta, fake
from ..methods.align import reindex_rows
from .resample import Resampler, _span_chunks, _times_grid

__all__: list[str] = []

_FILLS = {"asfreq": None, "ffill": "ffill", "bfill": "bfill", "nearest": "nearest"}


def upsample_labels(kw: dict, first: pd.Timestamp, last: pd.Timestamp, dtype: Any) -> pd.DatetimeIndex:
    """The labels pandas gives the whole data's upsampling, from its first and last timestamp."""
    stamps = pd.DatetimeIndex([first, last] if last != first else [first], dtype=dtype)
    return pd.Series(0, index=stamps).resample(**_times_grid(kw)).asfreq().index


class Upsample(PandasOperator):
    """``obj.resample(**kw)[selection].how(...)`` for a method of :data:`_FILLS` or ``interpolate`` (module docs)."""

    params = ("kw", "selection", "how", "limit", "fill_value", "interp")  # interp: interpolate's keywords

    @classmethod
    def tile(cls, op: Upsample) -> Generator[Any, Any, Tiled]:
        data, out = op.inputs[0], op.outputs[0]
        spans = yield Fetch(_span_chunks(list(data.chunks), None, None))
        if any(s.nat for s in spans):
            raise NotImplementedError(f"resample(...).{op.how} of data with NaT timestamps; drop them first "
                                      "(obj[obj.index.notna()])")
        obj = wrap(data) if op.selection is None else wrap(data)[op.selection]
        kept = [s for s in spans if s.first is not None]
        if not kept:  # no rows: pandas' answer on the empty data, in one partition
            result = _literal(run_upsample(fake(data.meta, 0), op))
        else:
            in_order = all(s.sorted for s in kept) and all(a.last <= b.first for a, b in itertools.pairwise(kept))
            if not in_order:
                obj = obj.sort_index(kind="stable")
            labels = upsample_labels(op.kw, min(s.first for s in kept), max(s.last for s in kept),
                                     data.meta.index.dtype)
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


def _upsample(self: Resampler, how: str, limit: Any = None, fill_value: Any = None,
              interp: dict | None = None) -> Any:
    op = Upsample(kw=self._kw, selection=self._selection, how=how, limit=limit, fill_value=fill_value,
                  interp=interp)
    if self._selection is not None:
        # pandas answers a selection through a groupby of the bins (a fill of the original rows within each bin)
        raise NotImplementedError(f"resample(...)[{self._selection!r}].{how}(); upsample first and select after: "
                                  f"obj.resample(...).{how}()[{self._selection!r}]")
    if self._kw.get("on") is not None:
        raise ValueError("Upsampling from level= or on= selection is not supported, use .set_index(...) to "
                         "explicitly set index to datetime-like")
    meta = empty_meta(run_upsample(fake(self._obj.meta, 2), op))  # pandas' checks and the result's columns
    return op.new_pandas([as_data(self._obj)], meta, chunk_shape_of(meta, np.nan))


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
