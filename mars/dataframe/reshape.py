"""Reshaping and conversions: ``to_datetime``, ``get_dummies``, ``cut``/``qcut``, ``pivot_table``, ``melt``.

Several of these have outputs shaped by the data's values, not its dtypes:
``get_dummies`` makes a column per distinct value, ``cut(x, 4)`` labels by
the data's range, ``pivot_table`` makes a column per value of ``columns``.
Their tiling computes what it needs first (the distinct values, the range,
the aggregated table: small) and sets the output's ``meta`` then, so a lazy
result's ``.columns`` (or categories) before it runs are known only where
the dtypes decide them: categorical columns for ``get_dummies``, explicit
bin edges for ``cut``.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import is_list_like
from pandas.tseries.api import guess_datetime_format

from ..core.operator import Fetch, Tiled
from ..core.tiling import as_data, recursive_tile
from ..tensor.core import TensorChunkData, TensorData, is_tensor
from .apply import unify_meta
from .core import (
    DataFrame,
    Index,
    PandasOperator,
    chunk_index_of,
    chunk_shape_of,
    is_pandas_like,
    nsplits_of,
    wrap,
)
from .datasource import from_pandas
from .map import map_partitions
from .meta import empty_meta, fake
from .reduction import tree_reduce
from .rows import known_rows

__all__ = ["cut", "date_range", "get_dummies", "melt", "qcut", "to_datetime"]


def _lazy(obj: Any) -> Any:
    """A lazy object for ``obj`` (pandas objects are partitioned as they are)."""
    if is_pandas_like(obj):
        return obj
    return wrap(from_pandas(obj).data)


# ----------------------------------------------------------------- to_datetime
_NAT_STRINGS = ["", "NaT", "nat", "NAT", "nan", "NaN", "NAN", "now", "today"]


def _first_parsed(part: Any) -> Any:
    """The value pandas would guess a format from: the first that is neither missing nor a NaT string."""
    usable = np.asarray(part.notna() & ~part.isin(_NAT_STRINGS))
    where = np.flatnonzero(usable)
    if not len(where):
        return None
    return (part[where[0]] if isinstance(part, pd.Index) else part.iloc[where[0]],)


def _first_of(parts: list) -> Any:
    return next((p for p in parts if p is not None), None)


def _first_value(parts: list) -> Any:
    first = _first_of(parts)
    return None if first is None else first[0]


_ISO_DATE = re.compile(r"\d{4}-\d\d-\d\d")


def _same_guess(value: Any, first: Any, dayfirst: bool) -> bool:
    """Whether pandas guesses the same format from ``value`` as from ``first`` (asked only of ISO dates,
    which guessing does not warn about)."""
    if value == first:
        return True
    iso = all(type(v) is str and _ISO_DATE.match(v) for v in (value, first))
    return bool(iso) and guess_datetime_format(value, dayfirst) == guess_datetime_format(first, dayfirst)


def _to_datetime_part(part: Any, first: Any, kwargs: dict) -> Any:
    if first is None or not len(part):
        return pd.to_datetime(part, **kwargs)
    own = _first_parsed(part)
    if own is None or _same_guess(own[0], first, kwargs["dayfirst"]):
        return pd.to_datetime(part, **kwargs)
    # pandas guesses the format from the first value of the whole: lead with it here too
    values = np.concatenate([np.array([first], dtype=object), np.asarray(part, dtype=object)])
    if isinstance(part, pd.Index):
        return pd.to_datetime(pd.Index(values, dtype=part.dtype, name=part.name), **kwargs)[1:]
    result = pd.to_datetime(pd.Series(values, dtype=part.dtype, name=part.name), **kwargs).iloc[1:]
    return result.set_axis(part.index)


def to_datetime(arg: Any, errors: str = "raise", dayfirst: bool = False, yearfirst: bool = False,
                utc: bool = False, format: str | None = None, unit: str | None = None, origin: Any = "unix",
                cache: bool = True, **kwargs: Any) -> Any:
    """Values converted to datetimes, as ``pandas.to_datetime``.

    A lazy (or pandas) Series gives a lazy Series, an Index, list or array a
    lazy Index, a DataFrame of year/month/day columns a lazy Series; a
    scalar gives pandas' scalar. The resolution and time zone are found when
    it runs (they depend on the values).

    >>> import mars.dataframe as md
    >>> md.to_datetime(md.Series(["2020-01-02", "2021-03-04"], chunk_size=1)).to_pandas().dt.year.tolist()
    [2020, 2021]
    """
    options = dict(errors=errors, dayfirst=dayfirst, yearfirst=yearfirst, utc=utc, format=format, unit=unit,
                   origin=origin, cache=cache, **kwargs)
    if is_tensor(arg):
        arg = Index(arg)
    elif not is_pandas_like(arg):
        if not is_list_like(arg) or isinstance(arg, dict):
            return pd.to_datetime(arg, **options)
        arg = wrap(from_pandas(arg if isinstance(arg, (pd.Series, pd.DataFrame, pd.Index)) else pd.Index(arg)).data)
    meta = arg.meta
    pd.to_datetime(meta, **options)  # pandas' argument errors, raised now
    strings = not isinstance(meta, pd.DataFrame) and (meta.dtype == object or pd.api.types.is_string_dtype(meta))
    if strings and format is None and unit is None:
        first = tree_reduce(arg, _first_parsed, _first_of, _first_value, np.dtype(object))
        out = map_partitions(_to_datetime_part, arg, first, options)
    else:
        out = map_partitions(_to_datetime_part, arg, None, options)
    return unify_meta(out)


# ----------------------------------------------------------------- get_dummies
def _unique(values: pd.Series) -> pd.Series:
    # ``unique`` hashes without building an index: several times faster than ``drop_duplicates``
    return pd.Series(values.unique(), dtype=values.dtype).dropna()


def _distinct(part: Any, columns: list) -> dict:
    if isinstance(part, pd.Series):
        return {None: _unique(part)}
    return {c: _unique(part[c]) for c in columns}


def _merge_distinct(parts: list) -> dict:
    keys = parts[0].keys()
    return {k: _unique(pd.concat([p[k] for p in parts], ignore_index=True)) for k in keys}


def _distinct_frame(meta: Any, distinct: dict) -> Any:
    """A small frame (or Series) holding every distinct value of the encoded columns (other columns faked)."""
    length = max([1] + [len(v) for v in distinct.values()])

    def padded(values: pd.Series) -> np.ndarray:
        values = values if len(values) else pd.Series([np.nan], dtype=values.dtype)
        return values.iloc[np.arange(length) % len(values)].to_numpy()

    if isinstance(meta, pd.Series):
        return pd.Series(padded(distinct[None]), dtype=distinct[None].dtype, name=meta.name)
    sample = fake(meta).iloc[[0] * length].reset_index(drop=True)
    for col, values in distinct.items():
        sample[col] = pd.Series(padded(values), dtype=values.dtype)
    return sample


def _dummies_part(part: Any, options: dict, meta: pd.DataFrame) -> pd.DataFrame:
    # this partition's dummies, laid out as the whole's: columns of values it lacks are all zero
    result = pd.get_dummies(part, **dict(options, drop_first=False)).reindex(columns=meta.columns, fill_value=0)
    return result if result.dtypes.equals(meta.dtypes) else result.astype(meta.dtypes.to_dict())


class GetDummies(PandasOperator):
    """``get_dummies`` of columns whose distinct values are found first (a reduction fetched at tiling)."""

    params = ("encode", "options")

    @classmethod
    def tile(cls, op: GetDummies) -> Generator[Any, Any, Tiled]:
        data, out = op.inputs[0], op.outputs[0]
        distinct = tree_reduce(data, partial(_distinct, columns=op.encode), _merge_distinct, _merge_distinct, np.dtype(object))
        yield from recursive_tile(distinct)
        (values,) = yield Fetch(distinct.chunks)
        # pandas on every distinct value names and orders the columns as on the whole data
        meta = empty_meta(pd.get_dummies(_distinct_frame(data.meta, values), **op.options))
        if isinstance(data.meta, pd.DataFrame):
            kept = [c for c in data.meta.columns if c in meta.columns]
            meta = meta.astype(data.meta[kept].dtypes.to_dict())
        rows = [c.shape[0] for c in data.chunks]
        chunks = [MapOne(func=_dummies_part, args=(op.options, meta)).new_chunk(
            [c], index=chunk_index_of(meta, i), shape=chunk_shape_of(meta, rows[i]), meta=meta)
            for i, c in enumerate(data.chunks)]
        if out is not None:
            out.meta, out.shape = meta, chunk_shape_of(meta, data.shape[0])
        return Tiled(chunks, nsplits_of(meta, rows))


class MapOne(PandasOperator):
    """``func(value, *args)`` of one chunk (the chunk op of ops that decide ``args`` at tiling)."""

    params = ("func", "args")
    fusible = True

    def execute(self, value: Any) -> Any:
        return self.func(value, *self.args)


def get_dummies(data: Any, prefix: Any = None, prefix_sep: Any = "_", dummy_na: bool = False, columns: Any = None,
                sparse: bool = False, drop_first: bool = False, dtype: Any = None) -> DataFrame:
    """One indicator column per distinct value, as ``pandas.get_dummies``.

    Categorical columns give a column per category, known before running;
    other columns' distinct values are computed first, so the result's
    ``columns`` are known only once it ran.

    >>> import mars.dataframe as md
    >>> md.get_dummies(md.Series(["a", "b", "a"], chunk_size=2)).to_pandas().columns.tolist()
    ['a', 'b']
    """
    if sparse:
        raise NotImplementedError("get_dummies(sparse=True) is not supported")
    data = _lazy(data)
    meta = data.meta
    options = {"prefix": prefix, "prefix_sep": prefix_sep, "dummy_na": dummy_na, "drop_first": drop_first, "dtype": dtype}
    if isinstance(meta, pd.DataFrame):
        if columns is not None and not is_list_like(columns):
            raise TypeError("Input must be a list-like for parameter `columns`")
        encode = list(meta.select_dtypes(include=["object", "string", "category"]).columns) if columns is None \
            else list(columns)
        options["columns"] = encode
        pd.get_dummies(fake(meta), **options)  # pandas' argument errors (missing columns, prefix lengths)
        needed = [c for c in encode if not isinstance(meta[c].dtype, pd.CategoricalDtype)]
    else:
        pd.get_dummies(fake(meta), **options)
        needed = [] if isinstance(meta.dtype, pd.CategoricalDtype) else [None]
    if not needed:
        return map_partitions(pd.get_dummies, data, **options)
    out_meta = pd.get_dummies(meta, **options)
    op = GetDummies(encode=needed, options=options)
    return op.new_pandas([as_data(data)], out_meta, (data.shape[0], np.nan), partitioning=data.partitioning)


# ----------------------------------------------------------------- cut / qcut
def _range_part(part: pd.Series) -> pd.Series:
    """The partition's smallest and largest value (none for no rows: pandas cannot cut nothing)."""
    return pd.Series([part.min(), part.max()], dtype=part.dtype) if len(part) else part


def _range_merge(parts: list) -> pd.Series:
    kept = [p for p in parts if len(p)]
    if not kept:
        return parts[0]
    both = pd.concat(kept, ignore_index=True)
    return pd.Series([both.min(), both.max()], dtype=both.dtype)


def _cut_edges(parts: list, bins: int, right: bool) -> pd.Series:
    """pandas' edges of ``bins`` equal-width bins over the data's range (what ``cut`` computes)."""
    return pd.Series(pd.cut(_range_merge(parts), bins, right=right, retbins=True)[1])


def _values_part(part: pd.Series) -> pd.Series:
    return part.dropna()


def _values_merge(parts: list) -> pd.Series:
    return pd.concat(parts, ignore_index=True)


def _qcut_edges(parts: list, q: Any, duplicates: str) -> pd.Series:
    """pandas' quantile edges of all the values (what ``qcut`` computes; exact, so the values meet in one place)."""
    return pd.Series(pd.qcut(_values_merge(parts), q, retbins=True, duplicates=duplicates)[1])


def _bins_value(edges: pd.Series) -> Any:
    """Edges as pandas returns them from ``retbins``: a DatetimeIndex for datetimes, else an array."""
    return pd.Index(edges) if edges.dtype.kind in "mM" or isinstance(edges.dtype, pd.DatetimeTZDtype) \
        else edges.to_numpy()


def _cut_part(part: pd.Series, bins: Any, options: dict) -> Any:
    return pd.cut(part, bins, **options)


class Cut(PandasOperator):
    """``cut`` with edges computed from the data first (``edges`` is a one-chunk Series of them)."""

    params = ("options",)

    @classmethod
    def tile(cls, op: Cut) -> Generator[Any, Any, Tiled]:
        data, edges, out = op.inputs[0], op.inputs[1], op.outputs[0]
        (value,) = yield Fetch(edges.chunks)
        bins = _bins_value(value)
        meta = _cut_part(data.meta, bins, op.options)
        rows = [c.shape[0] for c in data.chunks]
        chunks = [MapOne(func=_cut_part, args=(bins, op.options)).new_chunk(
            [c], index=(i,), shape=(rows[i],), meta=meta) for i, c in enumerate(data.chunks)]
        if out is not None:
            out.meta = meta
        return Tiled(chunks, (tuple(rows),))


class BinEdges(PandasOperator):
    """The computed bin edges as a 1-d tensor (``retbins=True``)."""

    params = ()

    @classmethod
    def tile(cls, op: BinEdges) -> Generator[Any, Any, Tiled]:
        (value,) = yield Fetch(op.inputs[0].chunks)
        edges = np.asarray(_bins_value(value))
        chunk = HeldArray(value=edges)._apply([], [{"index": (0,), "shape": edges.shape, "dtype": edges.dtype,
                                                    "order": "C"}], TensorChunkData)[0]
        return Tiled([chunk], ((len(edges),),))


class HeldArray(PandasOperator):
    """A small array computed at tiling."""

    params = ("value",)

    def execute(self) -> np.ndarray:
        return self.value


def _binned(x: Any, edges: Any, options: dict, retbins: bool) -> Any:
    """``cut`` of lazy ``x`` by the edges in the one-chunk Series ``edges`` (and those edges as a tensor)."""
    data = as_data(x)
    guess = empty_meta(pd.cut(fake(data.meta), 2, **{k: v for k, v in options.items() if k != "labels"}))
    if options.get("labels") is False:
        guess = pd.Series([], dtype=np.int64, index=data.meta.index, name=data.meta.name)
    out = Cut(options=options).new_pandas([data, as_data(edges)], guess, data.shape, partitioning=data.partitioning)
    if options.get("labels") is False:
        out = unify_meta(out)  # codes are int64, or float64 where values fall outside the bins
    if not retbins:
        return out
    dtype = edges.meta.dtype if isinstance(edges.meta.dtype, np.dtype) else np.dtype(object)
    tensor = BinEdges()._apply([as_data(edges)], [{"shape": (np.nan,), "dtype": dtype, "order": "C"}], TensorData)[0]
    return out, wrap(tensor)


def _one_column(x: Any) -> Any:
    """``x`` as a lazy Series for ``cut``, with pandas' error for frames."""
    x = _lazy(x)
    if isinstance(x.meta, pd.DataFrame):
        raise ValueError("Input array must be 1 dimensional")  # noqa: TRY004 - pandas raises ValueError
    if isinstance(x.meta, pd.Index):
        raise NotImplementedError("cut/qcut of a lazy Index (a Categorical) is not supported; cut a Series")
    return x


def _edges_meta(sample_bins: Any) -> pd.Series:
    return pd.Series(np.asarray(sample_bins)).iloc[:0]


def cut(x: Any, bins: Any, right: bool = True, labels: Any = None, retbins: bool = False, precision: int = 3,
        include_lowest: bool = False, duplicates: str = "raise", ordered: bool = True) -> Any:
    """Values binned into intervals, as ``pandas.cut``.

    With a number of bins the data's range is computed first (so the
    categories are known once it ran); with edges they are known now.
    ``retbins=True`` also returns the edges (a 1-d tensor when computed).

    >>> import mars.dataframe as md
    >>> md.cut(md.Series([1, 5, 9], chunk_size=2), [0, 5, 10]).to_pandas().astype(str).tolist()
    ['(0, 5]', '(0, 5]', '(5, 10]']
    """
    if not is_pandas_like(x) and not isinstance(x, pd.Series):
        return pd.cut(x, bins, right, labels, retbins, precision, include_lowest, duplicates, ordered)
    x = _one_column(x)
    options = {"right": right, "labels": labels, "precision": precision, "include_lowest": include_lowest,
                   "duplicates": duplicates, "ordered": ordered}
    if is_list_like(bins):
        pd.cut(x.meta, bins, **options)  # pandas' errors for the edges and labels, raised now
        out = map_partitions(_cut_part, x, bins, options)
        out = unify_meta(out) if labels is False else out
        return (out, pd.cut(pd.Series([], dtype=np.float64), bins, retbins=True, **options)[1]) if retbins else out
    sample_bins = pd.cut(fake(x.meta), bins, retbins=True, **options)[1]
    edges = tree_reduce(x, _range_part, _range_merge, partial(_cut_edges, bins=bins, right=right), _edges_meta(sample_bins))
    return _binned(x, edges, options, retbins)


def qcut(x: Any, q: Any, labels: Any = None, retbins: bool = False, precision: int = 3,
         duplicates: str = "raise") -> Any:
    """Values binned at their quantiles, as ``pandas.qcut`` (the quantiles are computed first).

    >>> import mars.dataframe as md
    >>> md.qcut(md.Series([1, 2, 3, 4], chunk_size=2), 2, labels=False).to_pandas().tolist()
    [0, 0, 1, 1]
    """
    if not is_pandas_like(x) and not isinstance(x, pd.Series):
        return pd.qcut(x, q, labels, retbins, precision, duplicates)
    x = _one_column(x)
    sample_bins = pd.qcut(fake(x.meta), q, labels=labels, retbins=True, precision=precision, duplicates="drop")[1]
    edges = tree_reduce(x, _values_part, _values_merge, partial(_qcut_edges, q=q, duplicates=duplicates), _edges_meta(sample_bins))
    options = {"labels": labels, "precision": precision, "include_lowest": True, "duplicates": duplicates}
    return _binned(x, edges, options, retbins)


def _convert_by(by: Any) -> list:
    if by is None:
        return []
    if pd.api.types.is_scalar(by) or isinstance(by, (np.ndarray, pd.Index, pd.Series, pd.Grouper)) or callable(by):
        return [by]
    return list(by)


# ----------------------------------------------------------------- melt, date_range
class Melt(PandasOperator):
    """``melt``: one output partition per (value column, input partition), value columns outermost as pandas."""

    params = ("options", "value_vars")

    @classmethod
    def tile(cls, op: Melt) -> Generator[Any, Any, Tiled]:
        data, out = op.inputs[0], op.outputs[0]
        rows = yield from known_rows(data)
        chunks, splits, start = [], [], 0
        for var in op.value_vars:
            for c, n in zip(data.chunks, rows):
                args = (dict(op.options, value_vars=[var]), out.meta, start if op.options["ignore_index"] else None)
                chunks.append(MapOne(func=_melt_part, args=args).new_chunk(
                    [c], index=(len(chunks), 0), shape=(n, out.meta.shape[1]), meta=out.meta))
                splits.append(n)
                start += int(n)
        return Tiled(chunks, (tuple(splits), (out.meta.shape[1],)))


def _melt_part(part: pd.DataFrame, options: dict, meta: pd.DataFrame, start: int | None) -> pd.DataFrame:
    result = pd.melt(part, **options)
    if start is not None:
        result.index = pd.RangeIndex(start, start + len(result))
    # one value column alone keeps its dtype; together pandas gives them their common dtype
    return result.astype(meta.dtypes.to_dict()) if not result.dtypes.equals(meta.dtypes) else result


def melt(frame: Any, id_vars: Any = None, value_vars: Any = None, var_name: Any = None, value_name: Any = "value",
         col_level: Any = None, ignore_index: bool = True) -> DataFrame:
    """Unpivot columns into rows, as ``pandas.melt``.

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"k": ["a", "b"], "x": [1, 2], "y": [3, 4]}, chunk_size=1)
    >>> md.melt(df, id_vars="k").to_pandas()["value"].tolist()
    [1, 2, 3, 4]
    """
    frame = _lazy(frame)
    meta = frame.meta
    if col_level is not None or isinstance(meta.columns, pd.MultiIndex):
        raise NotImplementedError("melt of MultiIndex columns (col_level) is not supported")
    options = {"id_vars": id_vars, "var_name": var_name, "value_name": value_name, "ignore_index": ignore_index}
    sample = pd.melt(fake(meta), value_vars=value_vars, **options)  # pandas' errors; dtypes of real values
    out_meta = empty_meta(sample)
    ids = _convert_by(id_vars) if id_vars is not None else []
    if value_vars is None:
        value_list = [c for c in meta.columns if c not in ids]
    else:
        value_list = list(value_vars) if is_list_like(value_vars) else [value_vars]
    if not value_list:
        out = map_partitions(pd.melt, frame, value_vars=value_vars, **options)
        return out if not ignore_index else wrap(from_pandas(pd.melt(meta, **options)).data)
    rows = frame.shape[0] * len(value_list)
    op = Melt(options=options, value_vars=value_list)
    return op.new_pandas([as_data(frame)], out_meta, (rows, out_meta.shape[1]))


def _df_melt(self: DataFrame, id_vars: Any = None, value_vars: Any = None, var_name: Any = None,
             value_name: Any = "value", col_level: Any = None, ignore_index: bool = True) -> DataFrame:
    """Unpivot columns into rows, as ``pandas.DataFrame.melt`` (see :func:`melt`)."""
    return melt(self, id_vars, value_vars, var_name, value_name, col_level, ignore_index)


DataFrame.melt = _df_melt


def date_range(start: Any = None, end: Any = None, periods: int | None = None, freq: Any = None, tz: Any = None,
               normalize: bool = False, name: Any = None, inclusive: str = "both", *, unit: str | None = None,
               chunk_size: Any = None) -> Any:
    """A lazy DatetimeIndex, as ``pandas.date_range`` (built here, then partitioned by ``chunk_size``).

    >>> import mars.dataframe as md
    >>> md.date_range("2020-01-01", periods=3, chunk_size=2).to_pandas().day.tolist()
    [1, 2, 3]
    """
    index = pd.date_range(start, end, periods, freq, tz, normalize, name, inclusive, unit=unit)
    return wrap(from_pandas(index, chunk_size).data)
