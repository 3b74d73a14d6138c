"""``obj.resample(rule, ...)``: time bins of a datetime index (or ``on=`` column), partitions in parallel.

How it runs (every bin is computed by pandas itself, in the partition that holds it):

1. each partition reports its first and last timestamp, whether it is
   sorted and whether it holds ``NaT``; unsorted data is sorted first
   (stable, as pandas sorts it) and ``NaT`` rows are dropped (pandas puts
   them in no bin);
2. pandas resamples a two-row series at the first and last timestamp of the
   whole: its labels are the result's, bin for bin. For fixed-length rules
   (``'5min'``, ``'h'``, tz-naive ``'D'``) whose bins are anchored on the
   data (``origin='start_day'``, ``'start'``, ``'end'``, ``'end_day'``),
   the partitions are then given the first label as their ``origin``, so
   each bins on the same grid as the whole; calendar rules (``'W'``,
   ``'ME'``, ``'QE'``, ...) bin the same way wherever they start;
3. each partition reports the label and row count of its first and last
   bin; a cut between two partitions that falls inside a bin moves forward
   past that bin's rows, so no bin spans two partitions;
4. each partition runs pandas' resample and keeps its own labels: the bins
   after the previous partition's last one, up to its own last. Empty bins
   before its first row (a gap between partitions) come from pandas too: a
   row of the previous bin is put in front, so pandas fills the gap with its
   own fill values (0 for ``sum``/``count``, NaN for ``mean``, ...), and is
   dropped again. Result dtypes are those pandas gives the whole (ints become
   float where some bin of the whole is empty).

>>> import mars.dataframe as md, pandas as pd
>>> s = md.Series(range(6), index=pd.date_range("2000-01-01", periods=6, freq="h"), chunk_size=4)
>>> s.resample("2h").sum().to_pandas().tolist()
[1, 5, 9]
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Generator
from typing import Any

import numpy as np
import pandas as pd
from pandas.tseries.frequencies import to_offset
from pandas.tseries.offsets import Day, Tick

from ...core.operator import Fetch, Tiled
from ...core.tiling import as_data, recursive_tile
from ..core import (
    DataFrame,
    PandasOperator,
    Series,
    chunk_index_of,
    chunk_shape_of,
    nsplits_of,
    wrap,
)
from ..meta import empty_meta, fake
from ..methods.carry import cast_like
from ..rows import rows_overlapping

__all__ = ["Resampler"]

#: pandas' resampler methods that reduce each bin, with the functions users pass (agg/apply/pipe)
_REDUCERS = ("sum", "mean", "min", "max", "count", "size", "first", "last", "median", "std", "var", "sem",
             "prod", "ohlc", "nunique", "quantile")
_USER = ("agg", "aggregate", "apply", "pipe")
_UPSAMPLERS = ("fillna", "transform")  # asfreq, ffill, bfill, nearest, interpolate: :mod:`.upsample`
#: origins whose grid depends on the data's first or last timestamp
_DATA_ORIGINS = ("start", "start_day", "end", "end_day")


# ----------------------------------------------------------------- chunk level
@dataclasses.dataclass
class Span:
    """What one partition says about its timestamps (``NaT`` left out); bins only when asked for."""

    rows: int
    nat: int
    sorted: bool
    first: pd.Timestamp | None = None
    last: pd.Timestamp | None = None
    first_label: pd.Timestamp | None = None
    n_first: int = 0
    last_label: pd.Timestamp | None = None
    bins: int = 0


def _times(part: Any, on: Any) -> pd.DatetimeIndex:
    return part.index if on is None else pd.DatetimeIndex(part[on])


class ResampleSpan(PandasOperator):
    """A partition's :class:`Span`; with ``grid`` (pandas' resample keywords), its first and last bin too."""

    params = ("on", "grid")

    def execute(self, part: Any) -> Span:
        times = _times(part, self.on)
        valid = times[times.notna()] if times.hasnans else times
        span = Span(rows=len(part), nat=len(times) - len(valid), sorted=bool(valid.is_monotonic_increasing))
        if not len(valid):
            return span
        span.first, span.last = valid.min(), valid.max()
        if self.grid is not None:
            sizes = pd.Series(np.zeros(len(valid)), index=valid).resample(**self.grid).size()
            kept = sizes[sizes.to_numpy() > 0]
            span.first_label, span.n_first = kept.index[0], int(kept.iloc[0])
            span.last_label, span.bins = kept.index[-1], len(kept)
        return span


class DropNaT(PandasOperator):
    """A partition without its rows at ``NaT`` (pandas puts them in no bin)."""

    params = ("on",)
    fusible = True

    def execute(self, part: Any) -> Any:
        return part[_times(part, self.on).notna()]


def _guard_rows(part: Any, on: Any, stamp: Any) -> Any:
    """A copy of ``part``'s first row at ``stamp`` (a row in a bin the caller drops)."""
    row = part.iloc[[0]].copy()
    if on is None:
        row.index = pd.DatetimeIndex([stamp], dtype=part.index.dtype, name=part.index.name)
    else:
        row[on] = pd.Series([stamp], index=row.index, dtype=part[on].dtype)
    return row


def _guarded(part: Any, on: Any, before: Any, after: Any) -> Any:
    """``part`` with guard rows at ``before`` and ``after`` (None: none there)."""
    pieces = [part]
    if before is not None:
        pieces.insert(0, _guard_rows(part, on, before))
    if after is not None:
        pieces.append(_guard_rows(part, on, after))
    return pd.concat(pieces) if len(pieces) > 1 else part


def run_method(part: Any, grid: dict, selection: Any, how: str, args: tuple, kwargs: dict) -> Any:
    """pandas' ``part.resample(**grid)[selection].how(*args, **kwargs)``."""
    r = part.resample(**grid)
    if selection is not None:
        r = r[selection]
    return getattr(r, how)(*args, **kwargs)


class ResamplePiece(PandasOperator):
    """One output partition: row ranges of its inputs, resampled by pandas, cut to ``labels``.

    ``guards`` are timestamps (or None) in the bins just before and after its
    own labels; a row put at each makes pandas emit (and fill) the empty bins
    between them and the partition's rows.
    """

    params = ("ranges", "grid", "on", "selection", "how", "args", "kwargs", "labels", "guards", "like", "had_nat")

    def execute(self, *parts: Any) -> Any:
        pieces = [p.iloc[a:b] for p, (a, b) in zip(parts, self.ranges)]
        part = pd.concat(pieces) if len(pieces) > 1 else pieces[0]
        part = _guarded(part, self.on, *self.guards)
        result = run_method(part, self.grid, self.selection, self.how, self.args, self.kwargs)
        if self.labels is not None:
            lo, hi = result.index.get_indexer(self.labels[[0, -1]])
            assert lo >= 0 and hi - lo + 1 == len(self.labels), "a partition's bins must be the whole's"
            result = result.iloc[lo:hi + 1]
        if self.had_nat:  # pandas' labels lose their freq when the data held NaT
            result = result.set_axis(pd.DatetimeIndex(result.index, freq=None), axis=0)
        return result if self.like is None else cast_like(result, self.like)


# ----------------------------------------------------------------- planning
def _fixed(freq: Any, tz: Any) -> bool:
    """Bins of a fixed length anchored on an origin (else calendar bins that ignore it)."""
    return isinstance(freq, Tick) or (isinstance(freq, Day) and tz is None)


def resolved(kw: dict) -> dict:
    """``kw`` with ``closed`` and ``label`` made explicit (their defaults depend on the rule)."""
    grouper = pd.Grouper(freq=kw["rule"], closed=kw.get("closed"), label=kw.get("label"),
                         origin=kw.get("origin", "start_day"), offset=kw.get("offset"))
    return {**kw, "closed": grouper.closed, "label": grouper.label}


def whole_labels(kw: dict, first: pd.Timestamp, last: pd.Timestamp, dtype: Any) -> pd.DatetimeIndex:
    """The labels pandas gives the whole data, from its first and last timestamp."""
    two = pd.Series([0, 0], index=pd.DatetimeIndex([first, last], dtype=dtype))
    return two.resample(**_times_grid(kw)).size().index


def grid_of(kw: dict, labels: pd.DatetimeIndex) -> dict:
    """Keywords that bin any partition on the whole's grid."""
    freq = to_offset(kw["rule"])
    if _fixed(freq, labels.tz) and isinstance(kw.get("origin", "start_day"), str) and \
            kw.get("origin", "start_day") in _DATA_ORIGINS:
        return {**kw, "origin": labels[0], "offset": None}
    return dict(kw)


def bin_middle(label: pd.Timestamp, kw: dict) -> pd.Timestamp:
    """A timestamp well inside the bin with ``label``."""
    freq = to_offset(kw["rule"])
    left, right = (label, label + freq) if kw["label"] == "left" else (label - freq, label)
    return left + (right - left) / 2


@dataclasses.dataclass
class Part:
    """One output partition: its rows ``[start, stop)`` of the sorted data, its labels and guard stamps."""

    start: int
    stop: int
    first: int  # position of its first label in the whole's
    last: int
    guards: tuple  # (before, after), each a timestamp or None


def _cuts(spans: list[Span]) -> tuple[list[int], list[Any], list[Any]]:
    """Where partitions start (rows) so that no bin spans two, each one's last label and the row before it."""
    cuts, ends, before, pos, prev = [], [], [], 0, None
    for s in spans:
        if not s.rows:
            continue
        if prev is not None and s.first_label == prev[0]:
            if s.last_label == s.first_label:
                pos += s.rows
                prev = (prev[0], s.last)
                continue
            cuts.append(pos + s.n_first)
            ends.append(prev[0])
            before.append(s.first)
        else:
            if prev is not None:
                ends.append(prev[0])
                before.append(prev[1])
            cuts.append(pos)
        prev = (s.last_label, s.last)
        pos += s.rows
    ends.append(prev[0])
    return cuts + [pos], ends, before


def plan_parts(spans: list[Span], labels: pd.DatetimeIndex, kw: dict) -> list[Part]:
    """The output partitions (see module docs)."""
    cuts, ends, before = _cuts(spans)
    last = labels.get_indexer(pd.DatetimeIndex(ends, dtype=labels.dtype))
    assert (last >= 0).all(), "a partition's bins must be the whole's"
    parts, first_row = [], next(s for s in spans if s.rows)
    for k in range(len(ends)):
        first = 0 if k == 0 else int(last[k - 1]) + 1
        stop = len(labels) - 1 if k == len(ends) - 1 else int(last[k])
        ahead = before[k - 1] if k else None
        if k == 0 and labels[0] != first_row.first_label:
            ahead = bin_middle(labels[0] - to_offset(kw["rule"]), kw)
        behind = bin_middle(labels[-1] + to_offset(kw["rule"]), kw) if stop > last[k] else None
        parts.append(Part(cuts[k], cuts[k + 1], first, stop, (ahead, behind)))
    return parts


def empty_bins(spans: list[Span], labels: pd.DatetimeIndex) -> bool:
    """Whether some bin of the whole holds no row (a bin split by a partition cut counts once)."""
    kept = [s for s in spans if s.rows]
    shared = sum(a.last_label == b.first_label for a, b in itertools.pairwise(kept))
    return sum(s.bins for s in kept) - shared < len(labels)


def result_meta(meta: Any, kw: dict, on: Any, call: tuple, gap: bool) -> Any:
    """pandas' result dtypes on a small sample, with an empty bin (``gap``) or without."""
    t0 = pd.Timestamp("2000-01-01 12:00")
    dtype = meta.index.dtype if on is None else meta[on].dtype
    t0 = t0.tz_localize(dtype.tz) if getattr(dtype, "tz", None) is not None else t0
    stamps = [t0, t0 + 3 * to_offset(kw["rule"])] if gap else [t0, t0]
    sample = fake(meta, 2)
    if on is None:
        sample.index = pd.DatetimeIndex(stamps, dtype=dtype, name=meta.index.name)
    else:
        sample[on] = pd.Series(stamps, index=sample.index, dtype=dtype)
    return empty_meta(run_method(sample, kw, *call))


# ----------------------------------------------------------------- the operator
class Resample(PandasOperator):
    """``obj.resample(**kw)[selection].how(*args, **kwargs)`` (see module docs)."""

    params = ("kw", "on", "selection", "how", "args", "kwargs", "cast")

    @classmethod
    def tile(cls, op: Resample) -> Generator[Any, Any, Tiled]:
        data, out = op.inputs[0], op.outputs[0]
        spans = first_spans = yield Fetch(_span_chunks(list(data.chunks), op.on, None))
        chunks = list(data.chunks)
        kept = [s for s in spans if s.first is not None]
        if not kept:  # no timestamp at all: pandas' answer for empty (or all-NaT) data, in one partition
            return _one_piece(op, chunks, [s.rows for s in spans])
        in_order = all(s.sorted for s in kept) and all(a.last <= b.first for a, b in itertools.pairwise(kept))
        if not in_order:
            chunks = yield from _sorted_chunks(data, op.on)
        if any(s.nat for s in spans):
            meta = data.meta
            chunks = [DropNaT(on=op.on).new_chunk([c], index=c.index, shape=chunk_shape_of(meta, np.nan),
                                                  meta=meta) for c in chunks]
        dtype = data.meta.index.dtype if op.on is None else data.meta[op.on].dtype
        labels = whole_labels(op.kw, min(s.first for s in kept), max(s.last for s in kept), dtype)
        grid = grid_of(op.kw, labels)
        spans = yield Fetch(_span_chunks(chunks, op.on, _times_grid(grid)))
        out.meta = out.meta if not op.cast else result_meta(data.meta, op.kw, op.on, _call(op),
                                                           empty_bins(spans, labels))
        parts = plan_parts(spans, labels, grid)
        rows = [s.rows for s in spans]
        had_nat = any(s.nat for s in first_spans)
        pieces = [_piece(op, chunks, rows, p, labels, grid, i, had_nat) for i, p in enumerate(parts)]
        out.shape = chunk_shape_of(out.meta, len(labels))
        return Tiled(pieces, nsplits_of(out.meta, [p.last - p.first + 1 for p in parts]))


def _call(op: Resample) -> tuple:
    return op.selection, op.how, op.args, op.kwargs


def _times_grid(grid: dict) -> dict:
    """The keywords that bin a partition's timestamps alone (an ``on`` column is their index there)."""
    return {k: v for k, v in grid.items() if k not in ("on", "group_keys")}


def _span_chunks(chunks: list, on: Any, grid: dict | None) -> list:
    return [ResampleSpan(on=on, grid=grid).new_chunk([c], index=(i,), shape=(), meta=None)
            for i, c in enumerate(chunks)]


def _sorted_chunks(data: Any, on: Any) -> Generator[Any, Any, list]:
    """``data``'s chunks stably sorted by its timestamps, as pandas sorts before binning."""
    obj = wrap(data)
    ordered = obj.sort_index(kind="stable") if on is None else obj.sort_values(on, kind="stable")
    tiled = yield from recursive_tile(ordered)
    return list(as_data(tiled).chunks)


def _one_piece(op: Resample, chunks: list, rows: list) -> Tiled:
    out = op.outputs[0]
    piece = ResamplePiece(ranges=tuple((0, int(n)) for n in rows), grid=op.kw, on=op.on, selection=op.selection,
                          how=op.how, args=op.args, kwargs=op.kwargs, labels=None, guards=(None, None), like=None,
                          had_nat=False)
    chunk = piece.new_chunk(chunks, index=chunk_index_of(out.meta, 0), shape=chunk_shape_of(out.meta, np.nan),
                            meta=out.meta)
    return Tiled([chunk], nsplits_of(out.meta, (np.nan,)))


def _piece(op: Resample, chunks: list, rows: list, part: Part, labels: pd.DatetimeIndex, grid: dict,
           i: int, had_nat: bool) -> Any:
    out = op.outputs[0]
    pieces = rows_overlapping(rows, part.start, part.stop)
    own = labels[part.first:part.last + 1]
    piece = ResamplePiece(ranges=tuple((a, b) for _, a, b in pieces), grid=grid, on=op.on, selection=op.selection,
                          how=op.how, args=op.args, kwargs=op.kwargs, labels=own, guards=part.guards,
                          like=out.meta if op.cast else None, had_nat=had_nat)
    return piece.new_chunk([chunks[j] for j, _, _ in pieces], index=chunk_index_of(out.meta, i),
                           shape=chunk_shape_of(out.meta, len(own)), meta=out.meta)


# ----------------------------------------------------------------- what users call
class Resampler:
    """A lazy ``obj.resample(...)``: each method is pandas' resampler method, over all partitions.

    >>> import mars.dataframe as md, pandas as pd
    >>> df = md.DataFrame({"v": [1.0, 2.0, 4.0]}, index=pd.date_range("2000-01-01", periods=3, freq="D"),
    ...                   chunk_size=1)
    >>> df.resample("2D").mean().to_pandas()["v"].tolist()
    [1.5, 4.0]
    """

    def __init__(self, obj: Any, kw: dict, selection: Any = None):
        self._obj, self._kw, self._selection = obj, kw, selection

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self._kw.items() if v is not None)
        return f"<mars Resampler [{shown}]>"

    def __getitem__(self, key: Any) -> Resampler:
        self._pandas()[key]  # pandas' checks of the columns
        return Resampler(self._obj, self._kw, key)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if isinstance(self._obj, DataFrame) and self._selection is None and name in self._obj.meta.columns:
            return self[name]
        raise AttributeError(f"'Resampler' object has no attribute {name!r}")

    def _pandas(self) -> Any:
        return self._obj.meta.resample(**self._kw)

    def _run(self, how: str, *args: Any, **kwargs: Any) -> Any:
        user = how in _USER and not (how in ("agg", "aggregate") and _named_only(args, kwargs))
        call = (self._selection, how, args, kwargs)
        meta_obj = self._obj.meta
        try:
            meta = result_meta(meta_obj, self._kw, self._kw.get("on"), call, False)
        except Exception:
            if not user:
                raise
            meta = empty_meta(run_method(meta_obj, self._kw, *call))
        if user and not isinstance(meta, (pd.DataFrame, pd.Series)):
            raise NotImplementedError(f"resample(...).{how} returning {type(meta).__name__}; "
                                      "return a Series or DataFrame per bin")
        data = as_data(self._obj)
        op = Resample(kw=self._kw, on=self._kw.get("on"), selection=self._selection, how=how, args=args,
                      kwargs=kwargs, cast=not user)
        return op.new_pandas([data], meta, chunk_shape_of(meta, np.nan))


def _named_only(args: tuple, kwargs: dict) -> bool:
    """An ``agg`` of pandas' methods by name only (a str, a list of them, a dict of those)."""
    spec = args[0] if args else kwargs.get("func", kwargs.get("arg"))
    if len(args) > 1 or set(kwargs) - {"func", "arg"} or spec is None:
        return False
    items = list(spec.values()) if isinstance(spec, dict) else [spec]
    return all(isinstance(v, str) or (isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v))
               for v in items)


def _method(name: str) -> Callable:
    def method(self: Resampler, *args: Any, **kwargs: Any) -> Any:
        return self._run(name, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"pandas' ``Resampler.{name}``, bin by bin across partitions."
    return method


def _not_yet(name: str) -> Callable:
    def method(self: Resampler, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"resample(...).{name} is not supported: its rows come from neighbouring bins; use obj.asfreq(freq, "
            f"method=...) or obj.reindex(...) (lazy), or obj.to_pandas().resample(...).{name}(...)")

    method.__name__ = name
    return method


for _name in _REDUCERS + _USER:
    setattr(Resampler, _name, _method(_name))
for _name in _UPSAMPLERS:
    setattr(Resampler, _name, _not_yet(_name))


def _resample(self: Any, rule: Any, closed: str | None = None, label: str | None = None,
              convention: Any = pd.api.extensions.no_default, on: Any = None, level: Any = None,
              origin: Any = "start_day", offset: Any = None, group_keys: bool = False) -> Resampler:
    """Time bins of the datetime index (or of column ``on``), as pandas' ``resample``.

    The data may be unsorted (it is sorted first, as pandas does); bins never
    span two partitions in the computation, so every method is pandas' own.

    >>> import mars.dataframe as md, pandas as pd
    >>> s = md.Series([1, 2, 3], index=pd.to_datetime(["2000-01-01", "2000-01-02", "2000-01-05"]), chunk_size=2)
    >>> s.resample("2D").count().to_pandas().tolist()
    [2, 0, 1]
    """
    if level is not None:
        raise NotImplementedError("resample(level=...) on a MultiIndex; use reset_index() and resample(on=...)")
    if convention is not pd.api.extensions.no_default:
        raise NotImplementedError("resample(convention=...) applies to a PeriodIndex; convert with to_timestamp()")
    kw = {"rule": rule, "closed": closed, "label": label, "on": on, "origin": origin, "offset": offset,
          "group_keys": group_keys}
    kw = {k: v for k, v in kw.items() if v is not None or k == "rule"}
    self.meta.resample(**kw)  # pandas' checks of the rule and keywords
    axis = self.meta.index if on is None else self.meta[on]
    if not isinstance(axis.dtype, (np.dtype, pd.DatetimeTZDtype)) or axis.dtype.kind != "M":
        raise NotImplementedError(f"resample of a {type(axis).__name__} of {axis.dtype} labels; only datetimes "
                                  "are supported (use to_pandas().resample(...))")
    return Resampler(self, resolved(kw))


for _cls in (DataFrame, Series):
    _cls.resample = _resample
