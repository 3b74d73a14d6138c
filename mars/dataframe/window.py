"""Moving windows: ``rolling`` and ``expanding`` on Series and DataFrames.

``rolling(window)`` is pandas' rolling on each partition *extended by the
rows its windows reach into*: the ``window`` rows before it (and, with
``center=True``, the rows after it), wherever they are — spread over several
small partitions, or behind empty ones. The extension is cut from the
neighbouring partitions at tiling (row counts are computed first when
unknown), and pandas' result for the partition is stitched from the
partition alone and its two edges with the carried rows (``stitch.py``: the
partition is not copied with its neighbours). Time-based windows
(``rolling("2s")``, on a monotonic datetime index or ``on=`` column) take
the neighbouring partitions whose labels lie within one window of the
partition's own; their label ranges are fetched first.

``expanding()`` carries state instead: ``sum``, ``mean``, ``min``, ``max``,
``var``, ``std`` and ``count`` reduce each partition to a few numbers per
column (count, sum, min, max, mean, sum of squared deviations), a chain of
tiny ops gives each partition the state of all partitions before it, and
each partition finishes with cumulative numpy operations from that state.
Other methods (``median``, ``apply``, ``quantile``, ``agg``...) run pandas on
each partition extended by all rows before it (quadratic; fine for a few
partitions).

Results equal pandas' up to floating-point rounding: pandas' running sums
start at the first row of the whole object, ours at the first row of the
extension, so the last bits can differ.
"""

from __future__ import annotations

import datetime
import itertools
import threading
from collections.abc import Callable, Generator
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.indexers import BaseIndexer

from ..core.operator import Fetch, Tiled
from ..core.tiling import as_data
from .core import (
    DataFrame,
    PandasOperator,
    Series,
    chunk_index_of,
    chunk_shape_of,
    nsplits_of,
)
from .meta import fake, infer
from .rows import RowsPiece, known_rows, rows_overlapping
from .stitch import stitched
from .windows import ewm as _ewm  # noqa: F401 - installs ewm (and, with it, the other window families)

__all__: list[str] = []


# ----------------------------------------------------------------- pandas on extended partitions
def _window_result(whole: Any, method: str, kwargs: dict, how: str, args: tuple, agg_kwargs: dict) -> Any:
    return getattr(getattr(whole, method)(**kwargs), how)(*args, **agg_kwargs)


class WindowChunk(PandasOperator):
    """pandas' window ``how`` on rows ``[n_before, n_before + len(own))`` of ``before + own + after``."""

    # ``reach``: (rows before, rows after) that a window of rows reads; None for windows of time or all rows
    params = ("method", "kwargs", "how", "args", "agg_kwargs", "n_before", "has_before", "has_after", "factor",
              "reach")

    def execute(self, *parts: Any) -> Any:
        own = parts[1] if self.has_before else parts[0]
        if not len(own) or len(parts) == 1:
            return self._compute(own)
        if self.reach is not None and not self.factor:
            before, after = parts[0] if self.has_before else None, parts[-1] if self.has_after else None
            return stitched(self._compute, before, own, after, self.reach)
        whole = pd.concat([p for p in parts if len(p)], sort=False)
        result = _window_result(whole, self.method, self.kwargs, self.how, self.args, self.agg_kwargs)
        k = self.factor or 1  # a pairwise corr/cov gives one row per column for each input row
        return result.iloc[self.n_before * k:(self.n_before + len(own)) * k]

    def _compute(self, frame: Any) -> Any:
        kwargs = self.kwargs
        if self.method == "rolling" and self.how in _KEPT_BOUNDS_METHODS and kwargs.get("win_type") is None \
                and kwargs.get("method", "single") == "single" and isinstance(kwargs["window"], (int, np.integer)):
            kwargs = {**kwargs, "window": RowBounds(window_size=int(kwargs["window"]))}
        return _window_result(frame, self.method, kwargs, self.how, self.args, self.agg_kwargs)


# ----------------------------------------------------------------- window bounds kept between partitions
#: the aggregations that read a window of rows only through its bounds (and give the same result with RowBounds)
_KEPT_BOUNDS_METHODS = frozenset(("sum", "mean", "min", "max", "std", "var", "count", "median", "sem", "skew",
                                  "kurt", "quantile", "first", "last"))
_BOUNDS_BUDGET = 64 << 20  # bytes of bounds kept per process
_kept_bounds: dict = {}
_kept_lock = threading.Lock()


class RowBounds(BaseIndexer):
    """The bounds of a fixed window of rows, as pandas computes them, kept for the next partition of the same length.

    Equal partitions make the same bounds; computing them (two fresh arrays
    of the partition's length, and two clipped copies) costs a third of a
    rolling mean's time.

    >>> import pandas as pd
    >>> pd.Series([1.0, 2.0, 3.0]).rolling(RowBounds(window_size=2)).sum().tolist()
    [nan, 3.0, 5.0]
    """

    def get_window_bounds(self, num_values: int = 0, min_periods: int | None = None, center: bool | None = None,
                          closed: str | None = None, step: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        key = (int(num_values), int(self.window_size), bool(center), closed, step)
        kept = _kept_bounds.get(key)
        if kept is None:
            kept = _row_bounds(*key)
            _keep(key, kept)
        return kept


def _row_bounds(n: int, size: int, center: bool, closed: str | None, step: int | None) -> tuple:
    """Start and stop (exclusive) of each row's window: the ``size`` rows up to it, or around it when centred."""
    shift = (size - 1) // 2 if center or size == 0 else 0
    end = np.arange(1 + shift, n + 1 + shift, step, dtype=np.int64)
    start = end - size
    if closed in ("left", "both"):
        start -= 1
    if closed in ("left", "neither"):
        end -= 1
    np.clip(end, 0, n, out=end)
    np.clip(start, 0, n, out=start)
    start.flags.writeable = end.flags.writeable = False  # shared by the partitions that read them
    return start, end


def _keep(key: tuple, bounds: tuple) -> None:
    size = sum(b.nbytes for b in bounds)
    if size > _BOUNDS_BUDGET:
        return
    with _kept_lock:
        while _kept_bounds and size + sum(b.nbytes for v in _kept_bounds.values() for b in v) > _BOUNDS_BUDGET:
            del _kept_bounds[next(iter(_kept_bounds))]
        _kept_bounds[key] = bounds


class LabelBounds(PandasOperator):
    """A partition's smallest and largest label (index or ``on`` column) and its monotonicity."""

    params = ("on",)

    def execute(self, value: Any) -> tuple:
        labels = pd.Index(value[self.on]) if self.on is not None else value.index
        if not len(labels):
            return None
        return (labels.min(), labels.max(), labels.is_monotonic_increasing, labels.is_monotonic_decreasing)


def _piece(data: Any, pieces: list) -> Any:
    """One chunk of the rows ``pieces`` ((chunk, start, stop) each) of ``data``, end to end."""
    meta = data.meta
    rows = sum(b - a for _, a, b in pieces)
    op = RowsPiece(ranges=tuple((a, b) for _, a, b in pieces))
    return op.new_chunk([data.chunks[j] for j, _, _ in pieces], index=chunk_index_of(meta, 0),
                        shape=chunk_shape_of(meta, rows), meta=meta)


def _whole_chunks(data: Any, chunk_ids: list) -> list:
    return [(j, 0, int(data.chunks[j].shape[0])) for j in chunk_ids]


class WindowAgg(PandasOperator):
    """The tileable op of a rolling aggregation (or an expanding one, over all the rows before)."""

    params = ("method", "kwargs", "how", "args", "agg_kwargs", "before", "after", "offset", "on", "factor")

    @classmethod
    def tile(cls, op: WindowAgg) -> Generator[Any, Any, Tiled]:
        data, out = op.inputs[0], op.outputs[0]
        rows = yield from known_rows(data)
        k = op.factor or 1
        if op.offset is not None:
            plans = yield from _label_plans(data, op)
        else:
            plans = _row_plans(rows, op.before, op.after)
        chunks = []
        for i, (before, after) in enumerate(plans):
            inputs = ([_piece(data, before)] if before else []) + [data.chunks[i]] + \
                ([_piece(data, after)] if after else [])
            chunk_op = WindowChunk(method=op.method, kwargs=op.kwargs, how=op.how, args=op.args,
                                   agg_kwargs=op.agg_kwargs, n_before=sum(b - a for _, a, b in before),
                                   has_before=bool(before), has_after=bool(after), factor=op.factor,
                                   reach=_row_reach(op))
            chunks.append(chunk_op.new_chunk(inputs, index=chunk_index_of(out.meta, i),
                                             shape=chunk_shape_of(out.meta, rows[i] * k), meta=out.meta))
        return Tiled(chunks, nsplits_of(out.meta, [r * k for r in rows]))


def _row_reach(op: WindowAgg) -> tuple[int, int] | None:
    """The rows before and after a row that its window of rows reads (None: a window of time, or all rows)."""
    if op.offset is not None or op.before == np.inf:
        return None
    return int(op.before), int(op.after)


def _row_plans(rows: tuple, before: float, after: int) -> list[tuple[list, list]]:
    """Per partition: the row pieces before it and after it that its windows reach."""
    total = int(sum(rows))
    plans, lo = [], 0
    for n in rows:
        n = int(n)
        if n == 0:
            plans.append(([], []))
            continue
        start = 0 if before == np.inf else max(0, lo - int(before))
        plans.append((rows_overlapping(rows, start, lo), rows_overlapping(rows, lo + n, min(total, lo + n + after))))
        lo += n
    return plans


def _label_plans(data: Any, op: WindowAgg) -> Generator[Any, Any, list[tuple[list, list]]]:
    """Per partition: the partitions before (and after) it whose labels lie within one window of its own."""
    probes = [LabelBounds(on=op.on).new_chunk([c], index=(i,), shape=(), meta=None) for i, c in enumerate(data.chunks)]
    bounds = yield Fetch(probes)
    _check_monotonic([b for b in bounds if b is not None], op.on)
    width = op.offset
    plans = []
    for i, own in enumerate(bounds):
        if own is None:
            plans.append(([], []))
            continue
        lo, hi = own[0] - width, own[1] + width
        near = [j for j, b in enumerate(bounds) if j != i and b is not None and b[1] >= lo and b[0] <= hi]
        after = [j for j in near if j > i] if op.after else []
        plans.append((_whole_chunks(data, [j for j in near if j < i]), _whole_chunks(data, after)))
    return plans


def _check_monotonic(bounds: list, on: Any) -> None:
    what = "index" if on is None else on
    inc = all(b[2] for b in bounds) and all(a[1] <= b[0] for a, b in itertools.pairwise(bounds))
    dec = all(b[3] for b in bounds) and all(a[0] >= b[1] for a, b in itertools.pairwise(bounds))
    if not (inc or dec):
        raise ValueError(f"{what} values must be monotonic")


def window_agg(obj: Any, method: str, kwargs: dict, how: str, args: tuple, agg_kwargs: dict,
               before: float, after: int, offset: Any = None, on: Any = None) -> Any:
    """pandas' ``obj.<method>(**kwargs).<how>(*args, **agg_kwargs)`` on extended partitions."""
    data = as_data(obj)
    meta = infer(_window_result, data.meta, method, kwargs, how, args, agg_kwargs)
    pairwise = isinstance(meta.index, pd.MultiIndex) and meta.index.nlevels > data.meta.index.nlevels
    factor = len(meta.columns) if pairwise else None
    op = WindowAgg(method=method, kwargs=kwargs, how=how, args=args, agg_kwargs=agg_kwargs, before=before,
                   after=after, offset=offset, on=on, factor=factor)
    shape = chunk_shape_of(meta, data.shape[0] * (factor or 1))
    return op.new_pandas([data], meta, shape, partitioning=None if pairwise else data.partitioning)


# ----------------------------------------------------------------- rolling
_ROLLING_METHODS = ("sum", "mean", "min", "max", "std", "var", "count", "median", "sem", "skew", "kurt",
                    "quantile", "rank", "apply", "agg", "aggregate", "first", "last", "nunique")
#: the methods pandas' weighted windows (``win_type=``) have
_WEIGHTED_METHODS = ("sum", "mean", "var", "std")


class Rolling:
    """``obj.rolling(...)``: a lazy moving window, as ``pandas.core.window.Rolling``.

    >>> import mars.dataframe as md
    >>> md.Series([1.0, 2.0, 3.0, 4.0], chunk_size=1).rolling(2).sum().to_pandas().tolist()
    [nan, 3.0, 5.0, 7.0]
    """

    def __init__(self, obj: Any, window: Any, min_periods: int | None = None, center: bool = False,
                 win_type: str | None = None, on: Any = None, closed: str | None = None, step: int | None = None,
                 method: str = "single"):
        if step not in (None, 1):
            raise NotImplementedError("rolling(step=...) is not supported; use step=None")
        kwargs = {"window": window, "min_periods": min_periods, "center": center, "win_type": win_type, "on": on,
                      "closed": closed, "method": method}
        obj.meta.rolling(**kwargs)  # pandas' checks of the arguments
        self._obj, self._kwargs = obj, kwargs
        self._offset = _offset_width(window)

    def _agg(self, how: str, *args: Any, **kwargs: Any) -> Any:
        if self._kwargs["win_type"] is not None and how not in _WEIGHTED_METHODS + ("agg", "aggregate"):
            raise AttributeError(f"'Window' object has no attribute '{how}'")
        if how in ("corr", "cov"):
            other = kwargs.get("other", args[0] if args else None)
            if other is not None:
                raise NotImplementedError(f"rolling().{how}(other) is not supported; put both in one frame "
                                          f"and use rolling().{how}(pairwise=True), or map_partitions")
        if how not in ("apply", "agg", "aggregate"):
            # pandas' errors for data it cannot aggregate (strings), which empty input does not raise
            _window_result(fake(self._obj.meta), "rolling", self._kwargs, how, args, kwargs)
        window, center = self._kwargs["window"], self._kwargs["center"]
        if self._offset is not None:
            return window_agg(self._obj, "rolling", self._kwargs, how, args, kwargs, 0, int(center),
                              offset=self._offset, on=self._kwargs["on"])
        after = int(window) // 2 + 1 if center else 0
        return window_agg(self._obj, "rolling", self._kwargs, how, args, kwargs, int(window), after)

    def __getitem__(self, key: Any) -> Rolling:
        return Rolling(self._obj[key], **self._kwargs)

    def corr(self, other: Any = None, pairwise: bool | None = None, ddof: int = 1, numeric_only: bool = False) -> Any:
        """Moving correlation of each pair of columns (``other=None``), as pandas' ``corr``."""
        return self._agg("corr", other=other, pairwise=pairwise, ddof=ddof, numeric_only=numeric_only)

    def cov(self, other: Any = None, pairwise: bool | None = None, ddof: int = 1, numeric_only: bool = False) -> Any:
        """Moving covariance of each pair of columns (``other=None``), as pandas' ``cov``."""
        return self._agg("cov", other=other, pairwise=pairwise, ddof=ddof, numeric_only=numeric_only)

    def pipe(self, func: Callable, *args: Any, **kwargs: Any) -> Any:
        """``func(self, *args, **kwargs)``."""
        return func(self, *args, **kwargs)

    @property
    def ndim(self) -> int:
        """The dimensions of the object the window runs over."""
        return self._obj.meta.ndim

    @property
    def exclusions(self) -> frozenset:
        """Columns left out of the results (none, as in pandas without ``on=``)."""
        return frozenset([self._kwargs["on"]]) if self._kwargs.get("on") is not None else frozenset()


def _offset_width(window: Any) -> pd.Timedelta | None:
    """A time-based window's width, or None for a window of rows."""
    if isinstance(window, (int, np.integer)):
        return None
    if isinstance(window, (str, pd.Timedelta, datetime.timedelta, pd.DateOffset)):
        return pd.Timedelta(pd.tseries.frequencies.to_offset(window).nanos, unit="ns")
    raise NotImplementedError(f"rolling windows of type {type(window).__name__} are not supported; "
                              "use a number of rows or a time offset such as '2s'")


def _window_method(name: str) -> Callable:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return self._agg(name, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"``{name}`` over each window, as pandas' ``{name}``."
    return method


for _name in _ROLLING_METHODS:
    setattr(Rolling, _name, _window_method(_name))


def _rolling(self: Any, window: Any, min_periods: int | None = None, center: bool = False,
             win_type: str | None = None, on: Any = None, closed: str | None = None, step: int | None = None,
             method: str = "single") -> Rolling:
    """A moving window over rows (an int) or time (``"2s"``), as ``pandas.DataFrame.rolling``.

    >>> import mars.dataframe as md
    >>> md.Series([1.0, 2.0, 3.0], chunk_size=1).rolling(2, min_periods=1).mean().to_pandas().tolist()
    [1.0, 1.5, 2.5]
    """
    return Rolling(self, window, min_periods, center, win_type, on, closed, step, method)


# ----------------------------------------------------------------- expanding: carried state
_STATS = {
    "count": ("rows", "count"),
    "sum": ("count", "sum"),
    "mean": ("count", "sum"),
    "min": ("count", "min"),
    "max": ("count", "max"),
    "var": ("count", "mean", "m2"),
    "std": ("count", "mean", "m2"),
}


def _numbers(part: Any) -> np.ndarray:
    values = part.to_numpy(dtype=np.float64, na_value=np.nan)
    return values.reshape(-1, 1) if values.ndim == 1 else values


def _summary(x: np.ndarray, stats: tuple) -> dict:
    """The state of rows ``x`` (n x columns) for ``stats``."""
    valid = ~np.isnan(x)
    count = valid.sum(axis=0).astype(np.float64)
    out: dict = {"rows": np.full(x.shape[1], float(len(x))), "count": count}
    with np.errstate(invalid="ignore", divide="ignore"):
        if "sum" in stats:
            out["sum"] = np.where(valid, x, 0.0).sum(axis=0)
        if "min" in stats:
            out["min"] = np.fmin.reduce(x, axis=0) if len(x) else np.full(x.shape[1], np.nan)
        if "max" in stats:
            out["max"] = np.fmax.reduce(x, axis=0) if len(x) else np.full(x.shape[1], np.nan)
        if "m2" in stats:
            mean = np.where(valid, x, 0.0).sum(axis=0) / count
            out["mean"] = np.where(count > 0, mean, 0.0)
            out["m2"] = np.where(valid, (x - out["mean"]) ** 2, 0.0).sum(axis=0)
    return out


def _merged(a: dict | None, b: dict) -> dict:
    """The state of rows ``a`` then rows ``b``."""
    if a is None:
        return b
    out = {"rows": a["rows"] + b["rows"], "count": a["count"] + b["count"]}
    if "sum" in a:
        out["sum"] = a["sum"] + b["sum"]
    if "min" in a:
        out["min"] = np.fmin(a["min"], b["min"])
    if "max" in a:
        out["max"] = np.fmax(a["max"], b["max"])
    if "m2" in a:
        out["mean"], out["m2"] = _chan(a["count"], a["mean"], a["m2"], b["count"], b["mean"], b["m2"])
    return out


def _chan(na: Any, ma: Any, m2a: Any, nb: Any, mb: Any, m2b: Any) -> tuple:
    """Mean and squared deviations of two groups together (Chan et al.); works elementwise on arrays."""
    n = na + nb
    with np.errstate(invalid="ignore", divide="ignore"):
        delta = mb - ma
        mean = np.where(n > 0, ma + delta * nb / n, 0.0)
        m2 = m2a + m2b + np.where(n > 0, delta * delta * na * nb / n, 0.0)
    return mean, m2


def _finished(x: np.ndarray, prior: dict | None, how: str, min_periods: int, ddof: int) -> np.ndarray:
    """Expanding ``how`` of each row of ``x``, after the rows summarized in ``prior``."""
    n, k = x.shape
    zeros = np.zeros(k)
    prior = prior or {"rows": zeros, "count": zeros, "sum": zeros, "min": np.full(k, np.nan),
                      "max": np.full(k, np.nan), "mean": zeros, "m2": zeros}
    valid = ~np.isnan(x)
    count = prior["count"] + np.cumsum(valid, axis=0)
    if how == "count":
        rows = prior["rows"] + np.arange(1, n + 1, dtype=np.float64)[:, None]
        return np.where(rows >= min_periods, count, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        if how in ("sum", "mean"):
            total = prior["sum"] + np.cumsum(np.where(valid, x, 0.0), axis=0)
            out = total if how == "sum" else total / count
        elif how in ("min", "max"):
            acc = np.fmin if how == "min" else np.fmax
            out = acc(acc.accumulate(x, axis=0), prior[how]) if n else x
        else:
            out = _expanding_var(x, valid, prior, count, ddof)
            out = np.sqrt(out) if how == "std" else out
    return np.where(count >= min_periods, out, np.nan)


def _expanding_var(x: np.ndarray, valid: np.ndarray, prior: dict, count: np.ndarray, ddof: int) -> np.ndarray:
    # shifted by each column's first value, so that the sums of squares do not cancel out
    shift = np.zeros(x.shape[1])
    if len(x):
        first = x[valid.argmax(axis=0), np.arange(x.shape[1])]
        shift = np.where(valid.any(axis=0), first, 0.0)
    d = np.where(valid, x - shift, 0.0)
    nb = np.cumsum(valid, axis=0)
    s1 = np.cumsum(d, axis=0)
    s2 = np.cumsum(d * d, axis=0)
    mean_b = np.where(nb > 0, shift + s1 / nb, 0.0)
    m2_b = np.maximum(np.where(nb > 0, s2 - s1 * s1 / nb, 0.0), 0.0)
    _, m2 = _chan(prior["count"], prior["mean"], prior["m2"], nb, mean_b, m2_b)
    return np.where(count - ddof > 0, m2 / (count - ddof), np.nan)


class ExpandingSummary(PandasOperator):
    """A partition's state for an expanding aggregation."""

    params = ("stats", "columns")
    fusible = True

    def execute(self, part: Any) -> dict:
        part = part[self.columns] if self.columns is not None else part
        return _summary(_numbers(part), self.stats)


class ExpandingScan(PandasOperator):
    """The state of all partitions up to one: the previous state and one more partition's."""

    params = ()

    def execute(self, prior: dict, summary: dict) -> dict:
        return _merged(prior, summary)


class ExpandingFinish(PandasOperator):
    """A partition's expanding results, from the state of the partitions before it."""

    params = ("how", "min_periods", "ddof", "columns")
    fusible = True

    def execute(self, part: Any, prior: dict | None = None) -> Any:
        part = part[self.columns] if self.columns is not None else part
        out = _finished(_numbers(part), prior, self.how, self.min_periods, self.ddof)
        if isinstance(part, pd.Series):
            return pd.Series(out[:, 0], index=part.index, name=part.name)
        return pd.DataFrame(out, index=part.index, columns=part.columns)


class ExpandingAgg(PandasOperator):
    """An expanding aggregation by carried state: summaries, a scan over them, then per-partition results."""

    params = ("how", "min_periods", "ddof", "columns")

    @classmethod
    def tile(cls, op: ExpandingAgg) -> Tiled:
        data, out = op.inputs[0], op.outputs[0]
        stats = _STATS[op.how]
        priors: list = [None]
        for i, c in enumerate(data.chunks[:-1]):
            summary = ExpandingSummary(stats=stats, columns=op.columns).new_chunk([c], index=(i,), shape=(), meta=None)
            prior = priors[-1]
            priors.append(summary if prior is None else
                          ExpandingScan().new_chunk([prior, summary], index=(i,), shape=(), meta=None))
        chunks = []
        for i, (c, prior) in enumerate(zip(data.chunks, priors)):
            finish = ExpandingFinish(how=op.how, min_periods=op.min_periods, ddof=op.ddof, columns=op.columns)
            chunks.append(finish.new_chunk([c] if prior is None else [c, prior], index=chunk_index_of(out.meta, i),
                                           shape=chunk_shape_of(out.meta, c.shape[0]), meta=out.meta))
        return Tiled(chunks, nsplits_of(out.meta, [c.shape[0] for c in data.chunks]))


class Expanding:
    """``obj.expanding(...)``: windows from the first row to each row, as ``pandas.core.window.Expanding``.

    >>> import mars.dataframe as md
    >>> md.Series([1.0, 2.0, 3.0], chunk_size=1).expanding().sum().to_pandas().tolist()
    [1.0, 3.0, 6.0]
    """

    def __init__(self, obj: Any, min_periods: int = 1, method: str = "single"):
        obj.meta.expanding(min_periods=min_periods, method=method)  # pandas' checks of the arguments
        self._obj, self._kwargs = obj, {"min_periods": min_periods, "method": method}

    def _agg(self, how: str, *args: Any, **kwargs: Any) -> Any:
        if how in ("corr", "cov") and kwargs.get("other", args[0] if args else None) is not None:
            raise NotImplementedError(f"expanding().{how}(other) is not supported; put both in one frame "
                                      f"and use expanding().{how}(pairwise=True), or map_partitions")
        if how not in ("apply", "agg", "aggregate"):
            _window_result(fake(self._obj.meta), "expanding", self._kwargs, how, args, kwargs)
        allowed = {"numeric_only", "ddof"} if how in ("var", "std") else {"numeric_only"}
        if how in _STATS and not args and set(kwargs) <= allowed and self._kwargs["method"] == "single":
            return self._by_state(how, kwargs)
        return window_agg(self._obj, "expanding", self._kwargs, how, args, kwargs, np.inf, 0)

    corr = Rolling.corr
    cov = Rolling.cov
    pipe = Rolling.pipe
    ndim = Rolling.ndim

    @property
    def exclusions(self) -> frozenset:
        """Columns left out of the results (none)."""
        return frozenset()

    def _by_state(self, how: str, kwargs: dict) -> Any:
        data = as_data(self._obj)
        meta = infer(_window_result, data.meta, "expanding", self._kwargs, how, (), kwargs)
        columns = list(meta.columns) if isinstance(meta, pd.DataFrame) and kwargs.get("numeric_only") else None
        op = ExpandingAgg(how=how, min_periods=self._kwargs["min_periods"], ddof=kwargs.get("ddof", 1),
                          columns=columns)
        return op.new_pandas([data], meta, chunk_shape_of(meta, data.shape[0]), partitioning=data.partitioning)


for _name in _ROLLING_METHODS:
    setattr(Expanding, _name, _window_method(_name))


def _expanding(self: Any, min_periods: int = 1, method: str = "single") -> Expanding:
    """Windows from the first row to each row, as ``pandas.DataFrame.expanding``.

    >>> import mars.dataframe as md
    >>> md.Series([3.0, 1.0, 2.0], chunk_size=1).expanding().min().to_pandas().tolist()
    [3.0, 1.0, 1.0]
    """
    return Expanding(self, min_periods, method)


DataFrame.rolling = _rolling
Series.rolling = _rolling
DataFrame.expanding = _expanding
Series.expanding = _expanding


