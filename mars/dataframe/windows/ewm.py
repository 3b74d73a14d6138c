"""``obj.ewm(...)``: exponentially weighted windows, partitions in parallel with their state carried.

Each partition summarizes itself as if it began the series (a few numbers
per column, :mod:`.ewm_state`), a chain of tiny ops turns the summaries
into the state before each partition, and each partition finishes from that
state: the same values pandas' recurrence gives, up to rounding, for
``com``/``span``/``halflife``/``alpha``, ``adjust``, ``ignore_na``,
``min_periods`` and ``times``.

>>> import mars.dataframe as md
>>> md.Series([1.0, 2.0, 3.0], chunk_size=1).ewm(alpha=0.5).mean().round(4).to_pandas().tolist()
[1.0, 1.6667, 2.4286]
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ...core.operator import Tiled
from ...core.tiling import as_data
from ..concat import concat
from ..core import (
    DataFrame,
    PandasOperator,
    Series,
    chunk_index_of,
    chunk_shape_of,
    nsplits_of,
)
from ..meta import empty_meta, fake
from .ewm_state import Decay, State, compose, end_state, finish, last_row, local_rows

__all__: list[str] = []

_HOWS = ("mean", "sum", "var", "std", "cov", "corr")


def _center_of_mass(com: Any, span: Any, halflife: Any, alpha: Any, timed: bool) -> float:
    given = [v for v in (com, span, alpha) if v is not None]
    if timed and not given:
        return 1.0
    if com is not None:
        return float(com)
    if span is not None:
        return (float(span) - 1) / 2
    if halflife is not None:
        return 1 / (1 - math.exp(math.log(0.5) / float(halflife))) - 1
    return (1 - float(alpha)) / float(alpha)


def _steps(times: np.ndarray | None, halflife: Any, start: int, stop: int) -> np.ndarray:
    """Per row in ``[start, stop)``: how many decay steps since the row before (time in halflives)."""
    if times is None:
        return np.ones(stop - start)
    span = times[max(start - 1, 0):stop].astype(np.float64)
    unit = np.datetime_data(times.dtype)[0]
    width = float(pd.Timedelta(halflife).as_unit(unit)._value) if unit != "generic" else float(halflife)
    steps = np.diff(span) / width
    return np.concatenate([[0.0], steps]) if start == 0 else steps


def _pairs(meta: Any, how: str, pairwise: bool) -> list[tuple[Any, Any]]:
    """The (x, y) columns each output needs: a column with itself, or every pair for a pairwise frame."""
    columns = list(meta.columns) if isinstance(meta, pd.DataFrame) else [None]
    if how in ("cov", "corr") and pairwise and isinstance(meta, pd.DataFrame):
        return [(a, b) for a in columns for b in columns]
    return [(c, c) for c in columns]


def _values(part: Any, column: Any) -> np.ndarray:
    values = part if column is None else part[column]
    return values.to_numpy(dtype=np.float64, na_value=np.nan)


def _locals(part: Any, other: Any, pairs: list, steps: np.ndarray, decay: Decay, corr: bool) -> list:
    """Per pair: the partition's numbers (and, for corr, those of x with x and y with y)."""
    out = []
    for a, b in pairs:
        x = _values(part, a)
        y = _values(other, b) if other is not None else (x if b == a else _values(part, b))
        if y is not x:  # pandas aligns the two as ``x + 0 * y``: a row missing in either is missing in both
            missing = np.isnan(x) | np.isnan(y)
            x, y = np.where(missing, np.nan, x), np.where(missing, np.nan, y)
        items = [local_rows(x, y, steps, decay)]
        if corr:
            items += [local_rows(x, x, steps, decay), local_rows(y, y, steps, decay)]
        out.append(items)
    return out


class EWMSummary(PandasOperator):
    """A partition's last-row numbers per column pair, as if it began the series."""

    params = ("pairs", "decay", "corr", "row_steps")

    def execute(self, part: Any, other: Any = None) -> list:
        found = _locals(part, other, self.pairs, self.row_steps, self.decay, self.corr)
        return [[last_row(loc) for loc in items] for items in found]


class EWMScan(PandasOperator):
    """The state after one more partition (the first partition's: from no state)."""

    params = ("decay",)

    def execute(self, *args: list) -> list:
        summary = args[-1]
        prior = args[0] if len(args) == 2 else [[State()] * len(items) for items in summary]
        return [[end_state(p, loc, self.decay) for p, loc in zip(ps, ls)] for ps, ls in zip(prior, summary)]


class EWMFinish(PandasOperator):
    """A partition's results, from the state of all partitions before it."""

    params = ("how", "pairs", "decay", "row_steps", "min_periods", "bias", "meta", "has_other")

    def execute(self, part: Any, *rest: Any) -> Any:
        other = rest[0] if self.has_other else None
        prior = rest[-1] if len(rest) > int(bool(self.has_other)) else None
        corr = self.how == "corr"
        found = _locals(part, other, self.pairs, self.row_steps, self.decay, corr)
        columns = []
        for k, items in enumerate(found):
            priors = prior[k] if prior is not None else [State()] * len(items)
            numbers = [compose(p, loc, self.decay) for p, loc in zip(priors, items)]
            if corr:
                cov, vx, vy = (finish("cov", n, self.min_periods, bias=True) for n in numbers)
                with np.errstate(invalid="ignore", divide="ignore"):
                    columns.append(cov / np.sqrt(np.maximum(vx * vy, 0.0)))
            else:
                columns.append(finish(self.how, numbers[0], self.min_periods, self.bias))
        return _assemble(part, columns, self.meta, len(self.pairs))


def _assemble(part: Any, columns: list, meta: Any, n_pairs: int) -> Any:
    if isinstance(meta, pd.Series):
        return pd.Series(columns[0], index=part.index, name=meta.name)
    k = len(meta.columns)
    if isinstance(meta.index, pd.MultiIndex) and n_pairs == k * k:
        # pairwise: for each row, one row per column holding its row of the matrix
        block = np.stack(columns, axis=1).reshape(len(part), k, k).reshape(len(part) * k, k)
        index = pd.MultiIndex.from_arrays([part.index.repeat(k), np.tile(np.asarray(meta.columns, dtype=object),
                                                                          len(part))],
                                          names=meta.index.names)
        return pd.DataFrame(block, index=index, columns=meta.columns)
    return pd.DataFrame(np.stack(columns, axis=1) if columns else np.zeros((len(part), 0)), index=part.index,
                        columns=meta.columns)


class EWMAgg(PandasOperator):
    """The tileable op: summaries, a scan over them, then per-partition results."""

    params = ("how", "pairs", "decay", "times", "halflife", "min_periods", "bias", "has_other")

    @classmethod
    def tile(cls, op: EWMAgg) -> Tiled:
        data, out = op.inputs[0], op.outputs[0]
        others = op.inputs[1].chunks if op.has_other else [None] * len(data.chunks)
        rows = [int(c.shape[0]) for c in data.chunks]
        starts = np.concatenate([[0], np.cumsum(rows)]).astype(int)
        steps = [_steps(op.times, op.halflife, starts[i], starts[i + 1]) for i in range(len(rows))]
        corr = op.how == "corr"
        priors: list = [None]
        for i, (c, o) in enumerate(zip(data.chunks[:-1], others[:-1])):
            summary = EWMSummary(pairs=op.pairs, decay=op.decay, corr=corr, row_steps=steps[i]).new_chunk(
                [c] if o is None else [c, o], index=(i,), shape=(), meta=None)
            scan = EWMScan(decay=op.decay)
            priors.append(scan.new_chunk([summary] if priors[-1] is None else [priors[-1], summary], index=(i,),
                                         shape=(), meta=None))
        chunks = []
        k = len(out.meta.columns) if isinstance(out.meta.index, pd.MultiIndex) else 1
        for i, (c, o, prior) in enumerate(zip(data.chunks, others, priors)):
            finish_op = EWMFinish(how=op.how, pairs=op.pairs, decay=op.decay, row_steps=steps[i],
                                  min_periods=op.min_periods, bias=op.bias, meta=out.meta, has_other=op.has_other)
            inputs = [c] + ([o] if o is not None else []) + ([prior] if prior is not None else [])
            chunks.append(finish_op.new_chunk(inputs, index=chunk_index_of(out.meta, i),
                                              shape=chunk_shape_of(out.meta, rows[i] * k), meta=out.meta))
        return Tiled(chunks, nsplits_of(out.meta, [r * k for r in rows]))


class ExponentialMovingWindow:
    """``obj.ewm(...)``: a lazy exponentially weighted window, as pandas' ``ExponentialMovingWindow``.

    >>> import mars.dataframe as md
    >>> md.Series([1.0, 2.0, 3.0, 4.0], chunk_size=2).ewm(span=3).mean().round(3).to_pandas().tolist()
    [1.0, 1.667, 2.429, 3.267]
    """

    def __init__(self, obj: Any, com: Any = None, span: Any = None, halflife: Any = None, alpha: Any = None,
                 min_periods: int | None = 0, adjust: bool = True, ignore_na: bool = False, times: Any = None,
                 method: str = "single"):
        times = _times_array(times)
        if times is not None and (times.ndim != 1 or times.dtype.kind != "M"):
            raise ValueError("times must be datetime64 dtype.")
        rows = obj.shape[0]
        if times is not None and not math.isnan(rows) and len(times) != rows:
            raise ValueError("times must be the same length as the object.")
        self._kwargs = {"com": com, "span": span, "halflife": halflife, "alpha": alpha,
                        "min_periods": min_periods, "adjust": adjust, "ignore_na": ignore_na, "method": method}
        meta_times = None if times is None else times[:0]
        obj.meta.ewm(**self._kwargs, times=meta_times)  # pandas' checks of the arguments
        self._obj, self._times = obj, times
        com_ = _center_of_mass(com, span, None if times is not None else halflife, alpha, times is not None)
        alpha_ = 1.0 / (1.0 + com_)
        # alpha == 1 forgets at once: a finite stand-in for log(0) keeps the sums free of inf - inf
        self._decay = Decay(max(math.log1p(-alpha_), -1000.0) if alpha_ < 1 else -1000.0, alpha_, bool(adjust),
                            bool(ignore_na))
        self._com = com_

    def _call(self, how: str, other: Any = None, pairwise: Any = None, bias: bool = False, **kwargs: Any) -> Any:
        data = as_data(self._obj)
        meta_kwargs = dict(kwargs)
        if how in ("cov", "corr"):
            meta_kwargs.update(other=None if other is None else as_data(other).meta, pairwise=pairwise)
            if how == "cov":
                meta_kwargs["bias"] = bias
        elif how in ("var", "std"):
            meta_kwargs["bias"] = bias
        sample = fake(data.meta).iloc[:2]
        times = None if self._times is None else np.resize(self._times, len(sample))
        meta = empty_meta(getattr(sample.ewm(**self._kwargs, times=times), how)(**meta_kwargs))
        inputs = [data]
        if other is not None:
            other_data = as_data(other)
            if other_data.partitioning != data.partitioning:
                raise NotImplementedError(f"ewm().{how}(other) needs other partitioned as this object (derived "
                                          f"from the same frame); otherwise concat them into one frame and use "
                                          f"ewm().{how}(pairwise=True)")
            inputs.append(other_data)
        source = data.meta[list(meta.columns)] if isinstance(meta, pd.DataFrame) and not \
            isinstance(meta.index, pd.MultiIndex) else data.meta
        pairwise_ = how in ("cov", "corr") and other is None and isinstance(meta.index, pd.MultiIndex)
        decay = self._decay
        if how == "mean" and not decay.adjust and self._com == 1:
            decay = dataclasses.replace(decay, leftover=True)
        op = EWMAgg(how=how, pairs=_pairs(source, how, pairwise_), decay=decay, times=self._times,
                    halflife=self._kwargs["halflife"], min_periods=int(self._kwargs["min_periods"] or 0),
                    bias=bool(bias), has_other=other is not None)
        rows = data.shape[0] * (len(meta.columns) if pairwise_ else 1)
        partitioning = None if pairwise_ else data.partitioning
        return op.new_pandas(inputs, meta, chunk_shape_of(meta, rows), partitioning=partitioning)

    def mean(self, numeric_only: bool = False) -> Any:
        """The weighted mean at each row."""
        return self._call("mean", numeric_only=numeric_only)

    def sum(self, numeric_only: bool = False) -> Any:
        """The weighted sum at each row (``adjust=True`` only, as in pandas)."""
        return self._call("sum", numeric_only=numeric_only)

    def var(self, bias: bool = False, numeric_only: bool = False) -> Any:
        """The weighted variance at each row (unbiased unless ``bias``)."""
        return self._call("var", bias=bias, numeric_only=numeric_only)

    def std(self, bias: bool = False, numeric_only: bool = False) -> Any:
        """The weighted standard deviation at each row."""
        return self._call("std", bias=bias, numeric_only=numeric_only)

    def cov(self, other: Any = None, pairwise: bool | None = None, bias: bool = False,
            numeric_only: bool = False) -> Any:
        """The weighted covariance with ``other`` (or of every pair of columns)."""
        return self._call("cov", other=other, pairwise=pairwise, bias=bias, numeric_only=numeric_only)

    def corr(self, other: Any = None, pairwise: bool | None = None, numeric_only: bool = False) -> Any:
        """The weighted correlation with ``other`` (or of every pair of columns)."""
        return self._call("corr", other=other, pairwise=pairwise, numeric_only=numeric_only)

    def aggregate(self, func: Any, *args: Any, **kwargs: Any) -> Any:
        """One method by name, or a list of names side by side, as pandas' ``agg``."""
        if isinstance(func, str) and func in _HOWS:
            return getattr(self, func)(*args, **kwargs)
        if isinstance(func, list) and all(isinstance(f, str) and f in ("mean", "sum", "var", "std") for f in func):
            parts = [getattr(self, f)() for f in func]
            if isinstance(self._obj.meta, pd.Series):
                return concat([p.rename(f) for p, f in zip(parts, func)], axis=1)
            return concat(parts, axis=1, keys=func).swaplevel(0, 1, axis=1)[_agg_columns(self._obj.meta, func)]
        raise NotImplementedError(f"ewm().agg({func!r}) is not supported; use the methods by name "
                                  "(mean, sum, var, std, cov, corr)")

    agg = aggregate

    def online(self, *args: Any, **kwargs: Any) -> Any:
        """Not provided: pandas' online EWM keeps state in the client's object."""
        raise NotImplementedError("ewm().online() keeps its state on the client: use s.to_pandas().ewm(...).online()")

    @property
    def ndim(self) -> int:
        """The windowed object's number of dimensions (1: a Series, 2: a DataFrame), as pandas.

        >>> import mars.dataframe as md
        >>> md.DataFrame({"a": [1.0]}).ewm(com=0.5).ndim
        2
        """
        return int(self._obj.ndim)

    @property
    def exclusions(self) -> frozenset:
        """Columns left out of the results: none here (pandas' grouped windows leave out their keys).

        >>> import mars.dataframe as md
        >>> md.Series([1.0]).ewm(com=0.5).exclusions
        frozenset()
        """
        return frozenset()


def _agg_columns(meta: pd.DataFrame, func: list) -> list:
    return [(c, f) for c in meta.columns for f in func]


def _times_array(times: Any) -> np.ndarray | None:
    if times is None:
        return None
    if hasattr(times, "fetch") and hasattr(times, "execute"):
        times = times.fetch()
    values = np.asarray(times)
    if values.dtype.kind == "O" and len(values):
        values = np.asarray(pd.to_datetime(values))
    return values  # pandas' own check (datetime64 of the object's length) runs on the metadata


def _ewm(self: Any, com: float | None = None, span: float | None = None, halflife: Any = None,
         alpha: float | None = None, min_periods: int | None = 0, adjust: bool = True, ignore_na: bool = False,
         times: Any = None, method: str = "single") -> ExponentialMovingWindow:
    """Exponentially weighted windows, as ``pandas.DataFrame.ewm`` (the state carried between partitions).

    >>> import mars.dataframe as md
    >>> md.Series([1.0, None, 3.0], chunk_size=1).ewm(com=1, ignore_na=True).mean().round(4).to_pandas().tolist()
    [1.0, 1.0, 2.3333]
    """
    return ExponentialMovingWindow(self, com, span, halflife, alpha, min_periods, adjust, ignore_na, times, method)


_ewm_fn: Callable = _ewm
DataFrame.ewm = _ewm_fn
Series.ewm = _ewm_fn
