"""Methods whose rows need their neighbours': ``shift``, ``diff``, ``pct_change``, ``interpolate``.

Each partition is extended by the rows of its neighbours that its result
reads, pandas runs on the extended partition, and the extra rows are
dropped (for a fixed reach, ``stitch.py`` runs pandas on the partition and
on its two small edges instead, without copying the partition). What the
extension holds depends on the method:

- ``shift(k)``, ``diff(k)``, ``pct_change(k)``: the ``k`` rows before the
  partition (after it, for negative ``k``), wherever they are: spread over
  several small partitions or behind empty ones. Row counts are computed
  first when unknown (after a filter).
- ``interpolate``: the rows back to the last row where every column has a
  valid value, and forward to the next such row. A chain of small ops
  carries that edge context from partition to partition (its length is the
  run of missing values at the edge, not the partition's), so a partition
  sees exactly the points pandas would interpolate between, and where a run
  of missing values starts (for ``limit``).

The result's dtypes are pandas' on non-empty data (an int column shifted
becomes float even in a partition whose shifted-in rows all exist).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np
import pandas as pd

from ...core.operator import Tiled
from ...core.tiling import as_data
from ..basic import _inplace, _relabelled
from ..core import (
    DataFrame,
    PandasOperator,
    Series,
    chunk_index_of,
    chunk_shape_of,
    nsplits_of,
)
from ..map import call, map_partitions
from ..meta import empty_meta, fake
from ..rows import RowsPiece, known_rows, rows_overlapping
from ..stitch import stitched

__all__: list[str] = []


def cast_like(value: Any, meta: Any) -> Any:
    """``value`` with ``meta``'s dtypes (column by column, by position)."""
    if isinstance(value, pd.Series):
        return value if value.dtype == meta.dtype else value.astype(meta.dtype)
    bad = [i for i, (a, b) in enumerate(zip(value.dtypes, meta.dtypes)) if a != b]
    if not bad:
        return value
    value = value.copy(deep=False)
    for i in bad:
        value.isetitem(i, value.iloc[:, i].astype(meta.dtypes.iloc[i]))
    return value


class ExtendedCall(PandasOperator):
    """``func`` on ``before + own + after``, cut back to ``own``'s rows and cast to the result's dtypes."""

    # the result's meta travels as a parameter: on a worker the op has no outputs to read it from
    # ``reach``: (rows before, rows after) that each row's result reads; None when it depends on the data
    params = ("func", "args", "kwargs", "has_before", "has_after", "meta", "reach")
    unkeyed = ("meta",)  # follows from the function and the input's meta, which the key holds; costly to hash
    fusible = True

    def execute(self, *parts: Any) -> Any:
        before = parts[0] if self.has_before else None
        own = parts[1] if self.has_before else parts[0]
        if self.reach is not None:
            after = parts[-1] if self.has_after else None
            return stitched(self._compute, before, own, after, self.reach)
        pieces = [p for p in parts if len(p)]
        whole = pd.concat(pieces, sort=False) if len(pieces) > 1 else own
        result = call(self.func, (whole, *self.args), self.kwargs)
        if whole is not own:
            start = len(before) if before is not None else 0
            result = result.iloc[start:start + len(own)]
        return cast_like(result, self.meta)

    def _compute(self, frame: Any) -> Any:
        return cast_like(call(self.func, (frame, *self.args), self.kwargs), self.meta)


def _piece(data: Any, pieces: list) -> Any:
    meta = data.meta
    rows = sum(b - a for _, a, b in pieces)
    op = RowsPiece(ranges=tuple((a, b) for _, a, b in pieces))
    return op.new_chunk([data.chunks[j] for j, _, _ in pieces], index=chunk_index_of(meta, 0),
                        shape=chunk_shape_of(meta, rows), meta=meta)


def _extended(op: Any, data: Any, i: int, before: Any, after: Any, rows: float, reach: Any = None) -> Any:
    out = op.outputs[0]
    inputs = ([before] if before is not None else []) + [data.chunks[i]] + ([after] if after is not None else [])
    chunk_op = ExtendedCall(func=op.func, args=op.args, kwargs=op.kwargs, has_before=before is not None, meta=out.meta,
                            has_after=after is not None, reach=reach)
    return chunk_op.new_chunk(inputs, index=chunk_index_of(out.meta, i), shape=chunk_shape_of(out.meta, rows),
                              meta=out.meta)


class RowsAround(PandasOperator):
    """``func`` per partition with the ``before`` rows before it and the ``after`` rows after it."""

    params = ("func", "args", "kwargs", "before", "after")

    @classmethod
    def tile(cls, op: RowsAround) -> Generator[Any, Any, Tiled]:
        data, out = op.inputs[0], op.outputs[0]
        rows = yield from known_rows(data)
        total, lo, chunks = int(sum(rows)), 0, []
        for i, n in enumerate(rows):
            n = int(n)
            ahead = rows_overlapping(rows, max(0, lo - op.before), lo) if n else []
            behind = rows_overlapping(rows, lo + n, min(total, lo + n + op.after)) if n else []
            chunks.append(_extended(op, data, i, _piece(data, ahead) if ahead else None,
                                    _piece(data, behind) if behind else None, n, (op.before, op.after)))
            lo += n
        return Tiled(chunks, nsplits_of(out.meta, rows))


def rows_around(obj: Any, func: Any, args: tuple, kwargs: dict, before: int, after: int) -> Any:
    """``func(part, *args, **kwargs)`` on each partition extended by ``before``/``after`` neighbouring rows."""
    data = as_data(obj)
    meta = empty_meta(call(func, (fake(data.meta), *args), kwargs))
    op = RowsAround(func=func, args=args, kwargs=kwargs, before=int(before), after=int(after))
    return op.new_pandas([data], meta, chunk_shape_of(meta, data.shape[0]), partitioning=data.partitioning)


# ----------------------------------------------------------------- edge context by validity
class ValidEdge(PandasOperator):
    """The rows of ``parts`` (in row order) from the last row where every column is valid to the end.

    ``forward=False`` mirrors it: from the start to the first such row. With
    no such row, all the rows (the context reaches the edge of the data).
    """

    params = ("forward",)
    fusible = True

    def execute(self, *parts: Any) -> Any:
        pieces = [p for p in parts if len(p)]
        whole = pd.concat(pieces, sort=False) if len(pieces) > 1 else (pieces or parts)[0]
        if not len(whole):
            return whole
        valid = whole.notna().to_numpy().reshape(len(whole), -1)
        # per column, the last (first) valid row; the context must reach the farthest of them
        if not valid.any(axis=0).all():
            return whole
        if self.forward:
            last = len(whole) - 1 - valid[::-1].argmax(axis=0)
            return whole.iloc[int(last.min()):]
        return whole.iloc[:int(valid.argmax(axis=0).max()) + 1]


class ValidContext(PandasOperator):
    """``func`` per partition with the edge context of valid values on both sides (see module docs)."""

    params = ("func", "args", "kwargs")

    @classmethod
    def tile(cls, op: ValidContext) -> Tiled:
        data, out = op.inputs[0], op.outputs[0]
        n = len(data.chunks)
        before: list = [None] * n
        after: list = [None] * n
        for forward, order, carries in ((True, range(n), before), (False, range(n - 1, -1, -1), after)):
            carry = None
            for i in order:
                carries[i] = carry
                c = data.chunks[i]
                inputs = [c] if carry is None else ([carry, c] if forward else [c, carry])
                carry = ValidEdge(forward=forward).new_chunk(inputs, index=c.index,
                                                             shape=chunk_shape_of(data.meta, np.nan), meta=data.meta)
        chunks = [_extended(op, data, i, before[i], after[i], c.shape[0]) for i, c in enumerate(data.chunks)]
        return Tiled(chunks, nsplits_of(out.meta, [c.shape[0] for c in data.chunks]))


# ----------------------------------------------------------------- methods
def _axis(self: Any, axis: Any) -> int:
    return self.meta._get_axis_number(axis)


def _shift(self: Any, periods: Any = 1, freq: Any = None, axis: Any = 0, fill_value: Any = pd.api.extensions.no_default,
           suffix: Any = None) -> Any:
    """Values moved down by ``periods`` rows (up when negative), across partitions, as pandas' ``shift``.

    With ``freq``, the index labels move instead (partition-wise).

    >>> import mars.dataframe as md
    >>> md.Series([1, 2, 3, 4], chunk_size=1).shift(2).to_pandas().tolist()
    [nan, nan, 1.0, 2.0]
    """
    kwargs: dict = {} if fill_value is pd.api.extensions.no_default else {"fill_value": fill_value}
    if not isinstance(periods, (int, np.integer)) or isinstance(periods, bool):
        if pd.api.types.is_list_like(periods):
            raise NotImplementedError("shift with a list of periods; call shift once per period and concat")
        raise TypeError(f"Periods must be integer, but {periods} is {type(periods)}.")
    self.meta.shift(periods, freq=freq, axis=axis, **kwargs, **({"suffix": suffix} if suffix else {}))  # pandas' checks
    if freq is not None:
        result = map_partitions("shift", self, periods, freq=freq, axis=axis, **kwargs)
        return _relabelled(result) if _axis(self, axis) == 0 else result
    if _axis(self, axis) == 1:
        return map_partitions("shift", self, periods, axis=1, sample=True, **kwargs)
    return rows_around(self, "shift", (int(periods),), kwargs, max(0, int(periods)), max(0, -int(periods)))


def _diff(self: Any, periods: Any = 1, axis: Any = 0) -> Any:
    """Difference with the row ``periods`` before (after, when negative), across partitions.

    >>> import mars.dataframe as md
    >>> md.Series([1, 4, 9, 16], chunk_size=3).diff().to_pandas().tolist()
    [nan, 3.0, 5.0, 7.0]
    """
    if not pd.api.types.is_integer(periods) and not (pd.api.types.is_float(periods) and float(periods).is_integer()):
        raise ValueError("periods must be an integer")
    periods = int(periods)
    if isinstance(self, DataFrame) and _axis(self, axis) == 1:
        return map_partitions("diff", self, periods, axis=1, sample=True)
    return rows_around(self, "diff", (periods,), {}, max(0, periods), max(0, -periods))


def _pct_change(self: Any, periods: int = 1, fill_method: None = None, freq: Any = None, **kwargs: Any) -> Any:
    """Fractional change from the row ``periods`` before, as pandas 3's ``pct_change`` (no filling).

    >>> import mars.dataframe as md
    >>> md.Series([1.0, 2.0, 3.0], chunk_size=1).pct_change().to_pandas().tolist()
    [nan, 1.0, 0.5]
    """
    if fill_method is not None:
        raise ValueError(f"fill_method must be None; got fill_method={fill_method!r}. Call ffill() first.")
    if freq is not None:
        raise NotImplementedError("pct_change(freq=...); use shift(freq=...) and division")
    self.meta.pct_change(periods=periods, **kwargs)
    periods = int(periods)
    return rows_around(self, "pct_change", (periods,), kwargs, max(0, periods), max(0, -periods))


_LOCAL_METHODS = ("linear", "index", "values", "time", "nearest", "zero", "slinear")


def _interpolate(self: Any, method: str = "linear", *, axis: Any = 0, limit: Any = None, inplace: bool = False,
                 limit_direction: Any = None, limit_area: Any = None, **kwargs: Any) -> Any:
    """Fill missing values by interpolating between the valid values around them, across partitions.

    Methods that read only the valid points next to a gap are supported
    (``linear``, ``index``/``values``, ``time``, ``nearest``, ``zero``, ``slinear``).

    >>> import mars.dataframe as md
    >>> md.Series([1.0, None, None, 4.0], chunk_size=2).interpolate().to_pandas().tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    kw = dict(method=method, limit=limit, limit_direction=limit_direction, limit_area=limit_area, **kwargs)
    fake(self.meta).interpolate(axis=axis, **kw)  # pandas' checks of the arguments
    if method not in _LOCAL_METHODS:
        raise NotImplementedError(f"interpolate(method={method!r}) reads every point; supported are {_LOCAL_METHODS}")
    if isinstance(self, DataFrame) and _axis(self, axis) == 1:
        return _inplace(self, map_partitions("interpolate", self, axis=1, sample=True, **kw), inplace)
    data = as_data(self)
    meta = empty_meta(fake(data.meta).interpolate(**kw))
    op = ValidContext(func="interpolate", args=(), kwargs=kw)
    result = op.new_pandas([data], meta, data.shape, partitioning=data.partitioning)
    return _inplace(self, result, inplace)


for _cls in (DataFrame, Series):
    _cls.shift = _shift
    _cls.diff = _diff
    _cls.pct_change = _pct_change
    _cls.interpolate = _interpolate
