"""Methods that put rows on new labels: ``reindex``, ``reindex_like``, ``align``, ``asfreq``, ``asof``.

How it runs: at tiling, only the inputs' *indexes* are computed and fetched
(plus, for ``asof``, one boolean per row saying whether it holds a valid
value). pandas itself then answers "which old row lands on each new label"
by running the very method the user called on a Series of row *positions*
indexed like the data (``pd.Series(range(n), index=old).reindex(new,
method=..., limit=..., tolerance=...)``), so every keyword, check and error
is pandas' own. The new labels are cut into partitions, and each output
partition gathers just its rows from the input partitions that hold them
(no input partition is read by an output that does not need it, and the
data never passes through one task). Labels with no row get ``fill_value``;
the result's dtypes are what pandas gives the whole, known once the
positions are (ints become float only when some label is missing).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import numpy as np
import pandas as pd

from ...core.operator import Fetch, Tiled
from ...core.tiling import as_data
from ...tensor.chunks import offsets
from ..align import fetch_indexes
from ..basic import _relabelled
from ..core import (
    DataFrame,
    PandasOperator,
    Series,
    chunk_index_of,
    chunk_shape_of,
    nsplits_of,
    row_splits,
)
from ..meta import empty_meta, fake
from .carry import cast_like

__all__: list[str] = []

_NO_DEFAULT = pd.api.extensions.no_default


# ----------------------------------------------------------------- chunk level
class TakeRows(PandasOperator):
    """One output partition: rows of its inputs (end to end) at ``positions`` (-1: ``fill_value``), on ``labels``."""

    params = ("positions", "labels", "fill_value", "like")  # like: the output's empty meta, cast to

    def execute(self, *parts: Any) -> Any:
        kept = [p for p in parts if len(p)]
        whole = pd.concat(kept) if len(kept) > 1 else (kept or list(parts))[0]
        pos = self.positions
        if len(pos) and (pos >= 0).all():
            result = whole.iloc[pos]
        else:
            absent = np.where(pos < 0, len(whole), pos)  # a label past the end: pandas fills it
            result = whole.reset_index(drop=True).reindex(absent, fill_value=self.fill_value)
        return cast_like(result.set_axis(self.labels, axis=0), self.like)


class RowValidity(PandasOperator):
    """A partition's rows as booleans: True where every column (of ``subset``) holds a value."""

    params = ("subset",)

    def execute(self, part: Any) -> np.ndarray:
        if isinstance(part, pd.Series):
            return part.notna().to_numpy()
        part = part if self.subset is None else part[self.subset]
        return part.notna().all(axis=1).to_numpy()


def _even_splits(n: int, parts: int) -> tuple:
    parts = max(1, min(parts, n))
    base, extra = divmod(n, parts)
    return tuple(base + (1 if i < extra else 0) for i in range(parts))


def taken_meta(meta: Any, labels: pd.Index, missing: bool, fill_value: Any) -> Any:
    """What pandas gives ``meta``'s object reindexed onto ``labels`` (``missing``: some label has no row)."""
    sample = fake(meta).reset_index(drop=True)
    taken = sample.reindex([0, len(sample)] if missing else [0], fill_value=fill_value)
    return empty_meta(taken).set_axis(labels[:0], axis=0)


def gather_chunks(data: Any, pos: np.ndarray, labels: pd.Index, splits: tuple, fill_value: Any,
                  meta: Any) -> list:
    """Output partitions of ``splits`` rows: each takes its rows of ``data`` (by global ``pos``) from the
    input partitions that hold them."""
    rows = row_splits(data)
    starts = np.asarray([*offsets(rows), int(sum(rows))])
    chunks, lo = [], 0
    for p, n in enumerate(splits):
        sel = pos[lo:lo + n]
        valid = sel >= 0
        owner = np.searchsorted(starts, sel, side="right") - 1
        used = np.unique(owner[valid]) if valid.any() else np.array([0])
        lookup = np.zeros(len(starts), dtype=np.int64)
        lookup[used] = offsets((starts[used + 1] - starts[used]).tolist())
        local = np.where(valid, lookup[owner] + sel - starts[owner], -1).astype(np.int64)
        op = TakeRows(positions=local, labels=labels[lo:lo + n], fill_value=fill_value, like=meta)
        chunks.append(op.new_chunk([data.chunks[j] for j in used.tolist()], index=chunk_index_of(meta, p),
                                   shape=chunk_shape_of(meta, n), meta=meta))
        lo += n
    return chunks


def _as_positions(ps: pd.Series) -> np.ndarray:
    return np.asarray(ps.fillna(-1), dtype=np.int64)


def _numbered(index: pd.Index, valid: np.ndarray | None = None) -> pd.Series:
    """Row positions indexed like the data (NaN where the row is not valid): what pandas is asked about."""
    values = np.arange(len(index), dtype=np.float64 if valid is not None else np.int64)
    if valid is not None:
        values[~valid] = np.nan
    return pd.Series(values, index=index)


# ----------------------------------------------------------------- plans: pandas on positions
def plan_reindex(indexes: list, valids: list, labels: Any, **kw: Any) -> tuple[pd.Index, list]:
    """New labels given (or, as None, the index of the last input) → positions in the first input."""
    target = indexes[-1] if labels is None else labels
    taken = _numbered(indexes[0]).reindex(target, **kw)
    return taken.index, [_as_positions(taken)]


def plan_asfreq(indexes: list, valids: list, **kw: Any) -> tuple[pd.Index, list]:
    taken = _numbered(indexes[0]).asfreq(**kw)
    return taken.index, [_as_positions(taken)]


def plan_align(indexes: list, valids: list, join: str) -> tuple[pd.Index, list]:
    left, right = _numbered(indexes[0]).align(_numbered(indexes[1]), join=join)
    return left.index, [_as_positions(left), _as_positions(right)]


def plan_asof(indexes: list, valids: list, where: Any) -> tuple[pd.Index, list]:
    taken = _numbered(indexes[0], valids[0]).asof(where)
    return taken.index, [_as_positions(taken)]


class TakeByPlan(PandasOperator):
    """Outputs ``i`` = input ``i``'s rows on the labels ``plan`` finds (see module docs).

    The first ``len(outputs)`` inputs are gathered from; a further input
    stands for target labels (its index is fetched). ``validity`` asks for
    the rows' validity (``asof``): ``(subset,)``.
    """

    params = ("plan", "plan_kwargs", "fill_value", "validity")

    @classmethod
    def tile(cls, op: TakeByPlan) -> Generator[Any, Any, list[Tiled] | Tiled]:
        indexes = yield from fetch_indexes(op.inputs)
        valids = []
        if op.validity is not None:
            data = op.inputs[0]
            checks = [RowValidity(subset=op.validity[0]).new_chunk([c], index=(i,), shape=(c.shape[0],), meta=None)
                      for i, c in enumerate(data.chunks)]
            parts = yield Fetch(checks)
            valids = [np.concatenate(parts) if parts else np.zeros(0, dtype=bool)]
        labels, positions = op.plan(indexes, valids, **op.plan_kwargs)
        splits = _even_splits(len(labels), len(op.inputs[0].chunks))  # the same for all: one partitioning
        tiled = []
        for out, data, pos in zip(op.outputs, op.inputs, positions):
            out.meta = taken_meta(data.meta, labels, bool((pos < 0).any()), op.fill_value)
            out.shape = chunk_shape_of(out.meta, len(labels))
            tiled.append(Tiled(gather_chunks(data, pos, labels, splits, op.fill_value, out.meta),
                               nsplits_of(out.meta, splits)))
        return tiled if len(tiled) > 1 else tiled[0]


def take_by_plan(sources: list, plan: Callable, plan_kwargs: dict, fill_value: Any = np.nan, target: Any = None,
                 labels_meta: pd.Index | None = None, validity: tuple | None = None) -> Any:
    """Each of ``sources`` on the labels ``plan`` finds (a list when there are several)."""
    datas = [as_data(s) for s in sources]
    inputs = datas + ([as_data(target)] if target is not None else [])
    index_meta = labels_meta if labels_meta is not None else datas[0].meta.index
    kws = []
    for d in datas:
        meta = d.meta.set_axis(index_meta[:0], axis=0)
        kws.append({"shape": chunk_shape_of(meta, np.nan), "meta": meta})
    op = TakeByPlan(plan=plan, plan_kwargs=plan_kwargs, fill_value=fill_value, validity=validity)
    outs = op.new_pandas_many(inputs, kws)
    for o in outs[1:]:
        as_data(o).partitioning = as_data(outs[0]).partitioning
    return outs if len(outs) > 1 else outs[0]


# ----------------------------------------------------------------- methods
_METHODS = (None, "backfill", "bfill", "pad", "ffill", "nearest")


def _check_method(method: Any) -> None:
    if method not in _METHODS:
        raise ValueError(f"Invalid fill method. Expecting pad (ffill), backfill (bfill) or nearest. Got {method}")


def _target(labels: Any) -> tuple[Any, Any]:
    """``(literal labels, lazy object whose index they are)``: one of the two is None."""
    from ..core import Index

    if isinstance(labels, Index):
        return None, labels
    if isinstance(labels, (DataFrame, Series)):
        raise TypeError("new labels as a lazy Series: pass its values as an Index, md.Index(s) or s.to_pandas()")
    return labels, None


def reindex_rows(obj: Any, labels: Any, method: Any, fill_value: Any, limit: Any, tolerance: Any) -> Any:
    """``obj``'s rows on ``labels`` (literal, or a lazy Index fetched at tiling), as pandas' ``reindex``."""
    _check_method(method)
    literal, lazy = _target(labels)
    kw = {"method": method, "limit": limit, "tolerance": tolerance}
    meta = _numbered(as_data(obj).meta.index).reindex(literal).index if lazy is None else lazy.meta
    result = take_by_plan([obj], plan_reindex, {"labels": literal, **kw}, fill_value, target=lazy,
                          labels_meta=meta)
    return _relabelled(result)


def _reindex_columns(self: DataFrame, columns: Any, method: Any, fill_value: Any, limit: Any,
                     tolerance: Any) -> DataFrame:
    from ..basic import _local

    return _local(self, "reindex", columns=columns, method=method, fill_value=fill_value, limit=limit,
                  tolerance=tolerance)


def _df_reindex(self: DataFrame, labels: Any = None, *, index: Any = None, columns: Any = None, axis: Any = None,
                method: Any = None, copy: Any = _NO_DEFAULT, level: Any = None, fill_value: Any = np.nan,
                limit: Any = None, tolerance: Any = None) -> DataFrame:
    """The rows (and columns) on new labels, as ``pandas.DataFrame.reindex``; each new partition gathers
    only its rows.

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"a": [1, 2, 3]}, index=[10, 20, 30], chunk_size=2)
    >>> df.reindex([30, 15, 10], method="ffill").to_pandas()["a"].tolist()
    [3, 1, 1]
    """
    if level is not None:
        raise NotImplementedError("reindex(level=...); reset_index() and merge on the level instead")
    if labels is not None:
        if index is not None or columns is not None:
            raise TypeError("Cannot specify both 'labels' and 'index'/'columns'")
        if self.meta._get_axis_number(axis or 0) == 1:
            columns = labels
        else:
            index = labels
    result = self
    if index is not None:
        result = reindex_rows(result, index, method, fill_value, limit, tolerance)
    if columns is not None:
        result = _reindex_columns(result, columns, method, fill_value, limit, tolerance)
    return result


def _series_reindex(self: Series, index: Any = None, *, axis: Any = None, method: Any = None, copy: Any = _NO_DEFAULT,
                    level: Any = None, fill_value: Any = None, limit: Any = None, tolerance: Any = None) -> Series:
    """The values on new labels, as ``pandas.Series.reindex``.

    >>> import mars.dataframe as md
    >>> md.Series([1.0, 2.0], index=["a", "b"], chunk_size=1).reindex(["b", "c"]).to_pandas().tolist()
    [2.0, nan]
    """
    if level is not None:
        raise NotImplementedError("reindex(level=...); reset_index() and merge on the level instead")
    if index is None:
        return self
    return reindex_rows(self, index, method, fill_value, limit, tolerance)


def _reindex_like(self: Any, other: Any, method: Any = None, copy: Any = _NO_DEFAULT, limit: Any = None,
                  tolerance: Any = None) -> Any:
    """The rows (and a DataFrame's columns) on ``other``'s labels, as pandas' ``reindex_like``.

    >>> import mars.dataframe as md
    >>> s = md.Series([1, 2, 3], index=[0, 1, 2], chunk_size=2)
    >>> s.reindex_like(md.Series([0, 0], index=[2, 0])).to_pandas().tolist()
    [3, 1]
    """
    index = other.index if isinstance(other, (DataFrame, Series, pd.DataFrame, pd.Series)) else None
    if index is None:
        raise TypeError(f"reindex_like needs a DataFrame or Series, got {type(other).__name__}")
    rows = reindex_rows(self, index, method, np.nan, limit, tolerance)
    if isinstance(self, DataFrame):
        return _reindex_columns(rows, other.columns, method, np.nan, limit, tolerance)
    return rows


def _as_mars(other: Any) -> Any:
    if isinstance(other, pd.DataFrame):
        return DataFrame(other)
    if isinstance(other, pd.Series):
        return Series(other)
    if not isinstance(other, (DataFrame, Series)):
        raise TypeError(f"unsupported type: {type(other)}")
    return other


def _align(self: Any, other: Any, join: str = "outer", axis: Any = None, level: Any = None, copy: Any = _NO_DEFAULT,
           fill_value: Any = None) -> tuple[Any, Any]:
    """Both objects on the joined labels, as pandas' ``align``: rows gathered per partition, columns
    from the metadata.

    >>> import mars.dataframe as md
    >>> a = md.Series([1, 2], index=["x", "y"], chunk_size=1)
    >>> b = md.Series([3, 4], index=["y", "z"])
    >>> [r.to_pandas().tolist() for r in a.align(b, fill_value=0)]
    [[1.0, 2.0, 0.0], [0.0, 3.0, 4.0]]
    """
    other = _as_mars(other)
    if join not in ("outer", "inner", "left", "right"):
        raise ValueError(f"join must be 'outer', 'inner', 'left' or 'right', got {join!r}")
    if level is not None:
        raise NotImplementedError("align(level=...); reset_index() and merge on the level instead")
    both_frames = isinstance(self, DataFrame) and isinstance(other, DataFrame)
    if axis is None and not both_frames and isinstance(self, DataFrame) != isinstance(other, DataFrame):
        raise ValueError("Must specify axis=0 or 1")
    axis = None if axis is None else self.meta._get_axis_number(axis)
    if axis == 1 and not both_frames:
        raise NotImplementedError("align(axis=1) of a DataFrame with a Series: use df.columns and s.reindex()")
    left, right = self, other
    if axis in (None, 0):
        left, right = take_by_plan([self, other], plan_align, {"join": join}, np.nan)
    if both_frames and axis in (None, 1):
        lm, rm = self.meta.align(other.meta, join=join, axis=1)
        left = _reindex_columns(left, lm.columns, None, np.nan, None, None)
        right = _reindex_columns(right, rm.columns, None, np.nan, None, None)
    if fill_value is not None:  # pandas fills every missing value then, those the inputs had too
        left, right = left.fillna(fill_value), right.fillna(fill_value)
    return left, right


for _cls in (DataFrame, Series):
    _cls.reindex_like = _reindex_like
    _cls.align = _align
DataFrame.reindex = _df_reindex
Series.reindex = _series_reindex
