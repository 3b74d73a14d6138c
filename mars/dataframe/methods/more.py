"""More DataFrame/Series methods: dtype inference (``infer_objects``, ``convert_dtypes``), ``combine``,
``compare``, ``transpose``/``T``, ``dot``/``@``, ``divmod``/``rdivmod``, ``case_when``, ``xs``,
``isetitem``, ``select``, ``axes``, ``Series.get``/``pop``, ``from_arrow``, ``to_orc``/``to_feather``.

Dtypes that pandas infers from the values (``infer_objects`` of an object
column, ``combine``'s results) would differ from partition to partition
if each decided alone: one partition of ints says ``int64`` where the whole,
with a ``None`` elsewhere, is ``float64``. So each partition runs pandas,
and a few *witness* rows per partition (for each column: the first value of
each Python type, the extremes, the first missing and the first
non-integral value) are fetched at tiling; pandas run on the witnesses of
all partitions gives the whole's dtypes, and every partition is cast to
them.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import numpy as np
import pandas as pd

from ...core.operator import Fetch, Tiled
from ...core.tiling import as_data
from ..align import fetch_indexes
from ..basic import _local
from ..core import (
    DataFrame,
    PandasOperator,
    Series,
    chunk_index_of,
    chunk_shape_of,
    nsplits_of,
)
from ..io.writers import ToFiles, WritePart, choose_how, lazy_write
from ..map import Whole, align_row_inputs, call, map_partitions
from ..meta import empty_meta, fake
from ..rows import single_chunk
from .carry import cast_like

__all__: list[str] = []

_NO_DEFAULT = pd.api.extensions.no_default


# ----------------------------------------------------------------- dtypes decided by all partitions
def _witness_positions(col: pd.Series) -> set[int]:
    """Rows of ``col`` that decide what pandas infers from it (see module docs)."""
    values = col.to_numpy()
    out = {0} if len(values) else set()
    missing = pd.isna(values) if values.ndim == 1 else np.zeros(len(values), bool)
    if missing.any():
        kinds = pd.Series([type(v) for v in values[missing]])
        out |= set(np.flatnonzero(missing)[~kinds.duplicated().to_numpy()].tolist())
    if values.dtype == object:
        kinds = pd.Series([type(v) for v in values])
        out |= set(np.flatnonzero(~kinds.duplicated().to_numpy() & ~missing).tolist())
        numeric = np.flatnonzero(kinds.map(lambda t: issubclass(t, (int, float, np.number))).to_numpy() & ~missing)
        if len(numeric):
            nums = pd.to_numeric(pd.Series(values[numeric]), errors="coerce").to_numpy(dtype=float)
            out |= {int(numeric[np.nanargmin(nums)]), int(numeric[np.nanargmax(nums)])} if np.isfinite(nums).any() \
                else set()
            fractional = np.flatnonzero(nums != np.round(nums))
            out |= {int(numeric[fractional[0]])} if len(fractional) else set()
    elif values.dtype.kind in "iuf" and (~missing).any():
        valid = np.flatnonzero(~missing)
        out |= {int(valid[np.argmin(values[valid])]), int(valid[np.argmax(values[valid])])}
        fractional = valid[values[valid] != np.round(values[valid])] if values.dtype.kind == "f" else []
        out |= {int(fractional[0])} if len(fractional) else set()
    return out


class Witnesses(PandasOperator):
    """A partition's witness rows (all its columns, the rows that decide inferred dtypes)."""

    params = ()

    def execute(self, part: Any) -> Any:
        cols = [part] if isinstance(part, pd.Series) else [part.iloc[:, i] for i in range(part.shape[1])]
        rows: set[int] = set()
        for c in cols:
            rows |= _witness_positions(c)
        return part.iloc[sorted(rows)]


class CallChunk(PandasOperator):
    """``func(*parts, *args, **kwargs)`` on one partition of each input, cast to ``like``'s dtypes when given."""

    params = ("func", "args", "kwargs", "like")

    def execute(self, *parts: Any) -> Any:
        result = call(self.func, (*parts, *self.args), self.kwargs)
        return result if self.like is None else cast_like(result, self.like)


def unified_chunks(aligned: list, func: Any, args: tuple, kwargs: dict, of_inputs: bool,
                   guess: Any) -> Generator[Any, Any, tuple[list, Any]]:
    """For generator ``tile()``s: ``func`` per row-aligned partition (``aligned`` as
    :func:`~..map.align_row_inputs` gives) cast to the whole's dtypes, and the whole's meta."""
    n = len(aligned[0][1])
    parts = [[a[0][p] for a in aligned] for p in range(n)]
    if of_inputs:
        sources = [ps[0] for ps in parts]
    else:
        sources = [CallChunk(func=func, args=args, kwargs=kwargs, like=None).new_chunk(
            ps, index=chunk_index_of(guess, p), shape=chunk_shape_of(guess, np.nan), meta=guess)
            for p, ps in enumerate(parts)]
    witnesses = [Witnesses().new_chunk([c], index=c.index, shape=chunk_shape_of(c.meta, np.nan), meta=c.meta)
                 for c in sources]
    values = yield Fetch(witnesses)
    # an empty result counts too (its rows were dropped after pandas chose dtypes), unless it fell back to
    # object, as pandas does on empty input
    kept = [v for v in values if len(v) or not _any_object(v)] or values[:1]
    sample = pd.concat(kept) if len(kept) > 1 else kept[0]
    meta = empty_meta(call(func, (sample, *args), kwargs) if of_inputs else sample)
    chunks = [CallChunk(func=func, args=args, kwargs=kwargs, like=meta).new_chunk(
        ps, index=chunk_index_of(meta, p), shape=chunk_shape_of(meta, np.nan), meta=meta)
        for p, ps in enumerate(parts)]
    return chunks, meta


def _any_object(value: Any) -> bool:
    dtypes = value.dtypes if isinstance(value, pd.DataFrame) else [value.dtype]
    return any(d == object for d in dtypes)


class Unified(PandasOperator):
    """``func`` per row-aligned partition, every partition cast to the dtypes pandas gives the whole.

    The whole's dtypes: ``func`` on the witness rows of the input
    (``of_inputs=True``, for functions that infer from their input's values)
    or the witness rows of the partitions' results, end to end.
    """

    params = ("func", "args", "kwargs", "of_inputs")

    @classmethod
    def tile(cls, op: Unified) -> Generator[Any, Any, Tiled]:
        aligned = yield from align_row_inputs(list(op.inputs), "outer")
        out = op.outputs[0]
        chunks, out.meta = yield from unified_chunks(aligned, op.func, op.args, op.kwargs, op.of_inputs, out.meta)
        return Tiled(chunks, nsplits_of(out.meta, (np.nan,) * len(chunks)))


def unified(func: Any, inputs: list, args: tuple = (), kwargs: dict | None = None, of_inputs: bool = False,
            same_rows: bool = True) -> Any:
    """``func`` per partition with the whole's dtypes (see :class:`Unified`); metadata is a guess until run."""
    kwargs = kwargs or {}
    datas = [as_data(i) for i in inputs]
    meta = empty_meta(call(func, (*[fake(d.meta) for d in datas], *args), kwargs))
    op = Unified(func=func, args=args, kwargs=kwargs, of_inputs=of_inputs)
    first = datas[0]
    same = same_rows and all(d.partitioning == first.partitioning for d in datas)
    shape = chunk_shape_of(meta, first.shape[0] if same else np.nan)
    return op.new_pandas(datas, meta, shape, partitioning=first.partitioning if same else None)


def _infer_objects(self: Any, copy: Any = _NO_DEFAULT) -> Any:
    """Object columns given the dtype their values have, decided over all partitions, as pandas.

    >>> import mars.dataframe as md
    >>> s = md.Series([1, 2, None], dtype=object, chunk_size=2)
    >>> s.infer_objects().to_pandas().dtype
    dtype('float64')
    """
    return unified("infer_objects", [self], of_inputs=True)


def _convert_dtypes(self: Any, infer_objects: Any = _NO_DEFAULT, convert_string: Any = _NO_DEFAULT,
                    convert_integer: Any = _NO_DEFAULT, convert_boolean: Any = _NO_DEFAULT,
                    convert_floating: Any = _NO_DEFAULT, dtype_backend: str = "numpy_nullable") -> Any:
    """Columns as the best nullable dtypes for their values, decided over all partitions, as pandas.

    >>> import mars.dataframe as md
    >>> md.Series([1.0, None, 3.0], chunk_size=1).convert_dtypes().to_pandas().dtype
    Int64Dtype()
    """
    given = {"infer_objects": infer_objects, "convert_string": convert_string, "convert_integer": convert_integer,
             "convert_boolean": convert_boolean, "convert_floating": convert_floating}
    kw = {k: v for k, v in given.items() if v is not _NO_DEFAULT}
    self.meta.convert_dtypes(dtype_backend=dtype_backend, **kw)  # pandas' checks
    return unified("convert_dtypes", [self], kwargs={"dtype_backend": dtype_backend, **kw}, of_inputs=True)


def _combine_part(left: Any, right: Any, func: Any, fill_value: Any, kw: dict) -> Any:
    return left.combine(right, func, fill_value=fill_value, **kw)


def _combine(self: Any, other: Any, func: Callable, fill_value: Any = None, overwrite: bool = True) -> Any:
    """``func`` of the aligned values (a Series) or columns (a DataFrame), as pandas' ``combine``.

    >>> import mars.dataframe as md
    >>> a = md.Series([1, 5], index=["x", "y"], chunk_size=1)
    >>> a.combine(md.Series([3, 2], index=["x", "y"]), max).to_pandas().tolist()
    [3, 5]
    """
    kw = {} if isinstance(self, Series) else {"overwrite": overwrite}
    if not isinstance(other, (DataFrame, Series)):
        if isinstance(self, DataFrame):
            raise TypeError(f"other must be a DataFrame, got {type(other).__name__}")
        return unified(lambda part: part.combine(other, func, fill_value=fill_value), [self])
    if fill_value is not None and as_data(other).partitioning != as_data(self).partitioning:
        raise NotImplementedError("combine(fill_value=...) of objects with different labels: align them first, "
                                  "a, b = s.align(other, fill_value=...), then a.combine(b, func)")
    return unified(_combine_part, [self, other], (func, fill_value, kw), same_rows=False)


def _differing_columns(left: pd.DataFrame, right: pd.DataFrame) -> np.ndarray:
    differ = ~((left == right) | (left.isna() & right.isna()))
    return differ.any(axis=0).to_numpy()


class DifferingColumns(PandasOperator):
    params = ()

    def execute(self, left: Any, right: Any) -> np.ndarray:
        return _differing_columns(left, right)


def _compare_part(left: Any, right: Any, columns: Any, kw: dict) -> Any:
    """One partition of ``compare``: pandas masks equal values over all the rows first (which is what makes
    ints float), and drops the rows without a difference after."""
    if columns is not None:
        left, right = left.iloc[:, columns], right.iloc[:, columns]
    side_by_side = left.compare(right, **{**kw, "keep_shape": True, "align_axis": 1})
    if not kw["keep_shape"]:
        differ = ~((left == right) | (left.isna() & right.isna()))
        rows = differ.any(axis=1) if differ.ndim == 2 else differ
        side_by_side = side_by_side[rows.to_numpy()]
    if kw["align_axis"] in (1, "columns"):
        return side_by_side
    if isinstance(left, pd.Series):
        return side_by_side.stack(future_stack=True).rename(left.name)
    return side_by_side.stack(level=-1, future_stack=True)


class CompareFrames(PandasOperator):
    """``DataFrame.compare`` without ``keep_shape``: which columns differ anywhere is fetched first."""

    params = ("kw",)

    @classmethod
    def tile(cls, op: CompareFrames) -> Generator[Any, Any, Tiled]:
        aligned = yield from align_row_inputs(list(op.inputs), "outer")
        flags = [DifferingColumns().new_chunk([a, b], index=(p,), shape=(np.nan,), meta=None)
                 for p, (a, b) in enumerate(zip(aligned[0][0], aligned[1][0]))]
        values = yield Fetch(flags)
        columns = np.flatnonzero(np.logical_or.reduce(values)).tolist()
        out = op.outputs[0]
        guess = empty_meta(_compare_part(fake(op.inputs[0].meta), fake(op.inputs[1].meta), columns, op.kw))
        chunks, out.meta = yield from unified_chunks(aligned, _compare_part, (columns, op.kw), {}, False, guess)
        return Tiled(chunks, nsplits_of(out.meta, (np.nan,) * len(chunks)))


def _compare(self: Any, other: Any, align_axis: Any = 1, keep_shape: bool = False, keep_equal: bool = False,
             result_names: tuple = ("self", "other")) -> Any:
    """Where two identically-labelled objects differ, side by side, as pandas' ``compare``.

    >>> import mars.dataframe as md
    >>> a = md.Series([1, 2, 3], chunk_size=2)
    >>> a.compare(md.Series([1, 0, 3], chunk_size=2)).to_pandas().values.tolist()
    [[2.0, 0.0]]
    """
    if type(other) is not type(self):
        raise TypeError(f"can only compare '{type(self).__name__}' (not '{type(other).__name__}') with "
                        f"'{type(self).__name__}'")
    if isinstance(self, DataFrame) and not self.meta.columns.equals(other.meta.columns):
        raise ValueError("Can only compare identically-labeled (both index and columns) DataFrame objects")
    kw = {"align_axis": align_axis, "keep_shape": keep_shape, "keep_equal": keep_equal, "result_names": result_names}
    meta = empty_meta(self.meta.compare(other.meta, **kw))  # pandas' checks of the arguments
    if isinstance(self, Series) or keep_shape:
        return unified(_compare_part, [self, other], (None, kw), same_rows=False)
    op = CompareFrames(kw=kw)
    return op.new_pandas([as_data(self), as_data(other)], meta, chunk_shape_of(meta, np.nan))


# ----------------------------------------------------------------- shape and products
class Transposed(PandasOperator):
    """All partitions gathered and transposed (a frame with few rows: its rows become columns)."""

    params = ()

    @classmethod
    def tile(cls, op: Transposed) -> Generator[Any, Any, Tiled]:
        data, out = op.inputs[0], op.outputs[0]
        (labels,) = yield from fetch_indexes([data])
        out.meta = pd.DataFrame(index=out.meta.index, columns=labels).astype(_transposed_dtype(data.meta))
        out.shape = (data.meta.shape[1], len(labels))
        chunk = Transposed().new_chunk([single_chunk(data)], index=(0, 0), shape=out.shape, meta=out.meta)
        return Tiled([chunk], ((out.shape[0],), (out.shape[1],)))

    def execute(self, part: Any) -> Any:
        return part.T


def _transposed_dtype(meta: pd.DataFrame) -> Any:
    dtypes = fake(meta, 1).T.dtypes
    return dtypes.iloc[0] if len(dtypes) else np.dtype(object)


def _transpose(self: Any, *args: Any, copy: Any = _NO_DEFAULT) -> Any:
    """Rows as columns, as pandas' ``transpose``: gathered into one task, for frames with few rows.

    The result's columns are the rows' labels: its metadata has them once it runs.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 2], "b": [3, 4]}, chunk_size=1).T.to_pandas().values.tolist()
    [[1, 2], [3, 4]]
    """
    if isinstance(self, Series):
        return self
    meta = pd.DataFrame(index=self.meta.columns[:0], columns=self.meta.index[:0]).astype(
        _transposed_dtype(self.meta))
    return Transposed().new_pandas([as_data(self)], meta, (self.meta.shape[1], np.nan))


def _dot(self: Any, other: Any) -> Any:
    """Matrix product with ``other`` (DataFrame, Series, array or mars tensor), as pandas' ``dot``.

    ``other`` is small (as many rows as this frame has columns): every partition gets it whole.

    >>> import mars.dataframe as md, numpy as np
    >>> df = md.DataFrame([[1, 2], [3, 4]], chunk_size=1)
    >>> df.dot(np.array([1, 1])).to_pandas().tolist()
    [3, 7]
    """
    from ...tensor.core import Tensor

    if isinstance(self, Series):
        return _series_dot(self, other)
    if isinstance(other, Tensor):
        other = DataFrame(other) if other.ndim == 2 else Series(other)
        return map_partitions(lambda part, o: part.dot(o.to_numpy()), self, Whole(other))
    if isinstance(other, (DataFrame, Series)):
        return map_partitions("dot", self, Whole(other))
    return map_partitions("dot", self, other)


def _series_dot(self: Series, other: Any) -> Any:
    if isinstance(other, DataFrame):
        return other.mul(self, axis=0).sum(skipna=False).rename(self.name)
    if isinstance(other, (Series, pd.Series)):
        return (self * other).sum(skipna=False)
    return self.to_tensor().dot(other)


def _rmatmul(self: Any, other: Any) -> Any:
    if isinstance(self, Series) and not isinstance(other, (DataFrame, Series)):
        return _dot(self, other)
    return _dot(other if isinstance(other, (DataFrame, Series)) else DataFrame(other), self)


def _divmod(self: Series, other: Any, level: Any = None, fill_value: Any = None, axis: Any = 0) -> tuple:
    """``(self // other, self % other)``, as pandas' ``Series.divmod``.

    >>> import mars.dataframe as md
    >>> [r.to_pandas().tolist() for r in md.Series([7, 8], chunk_size=1).divmod(3)]
    [[2, 2], [1, 2]]
    """
    return (self.floordiv(other, level=level, fill_value=fill_value, axis=axis),
            self.mod(other, level=level, fill_value=fill_value, axis=axis))


def _rdivmod(self: Series, other: Any, level: Any = None, fill_value: Any = None, axis: Any = 0) -> tuple:
    """``(other // self, other % self)``, as pandas' ``Series.rdivmod``.

    >>> import mars.dataframe as md
    >>> [r.to_pandas().tolist() for r in md.Series([3, 5], chunk_size=1).rdivmod(7)]
    [[2, 1], [1, 2]]
    """
    return (self.rfloordiv(other, level=level, fill_value=fill_value, axis=axis),
            self.rmod(other, level=level, fill_value=fill_value, axis=axis))


def _case_when_part(part: pd.Series, n: int, *flat: Any) -> pd.Series:
    return part.case_when(list(zip(flat[:n], flat[n:])))


def _case_when(self: Series, caselist: list) -> Series:
    """Values replaced where conditions hold (the first that holds wins), as pandas' ``case_when``.

    Conditions and replacements are Series (mars or pandas, aligned on the
    index), scalars, or callables of this Series.

    >>> import mars.dataframe as md
    >>> s = md.Series([1, 5, 9], chunk_size=2)
    >>> s.case_when([(s > 6, 0), (s > 2, -1)]).to_pandas().tolist()
    [1, -1, 0]
    """
    if not isinstance(caselist, list):
        raise TypeError(f"The caselist argument should be a list; instead got {type(caselist)}")
    if not caselist:
        raise ValueError("provide at least one boolean condition, with a corresponding replacement.")
    conds, repls = [], []
    for num, entry in enumerate(caselist):
        if not isinstance(entry, tuple) or len(entry) != 2:
            raise ValueError(f"Argument {num} must be a tuple of length 2, instead got {entry!r}")
        for value, into in zip(entry, (conds, repls)):
            value = value(self) if callable(value) else value
            if isinstance(value, pd.Series):
                value = Series(value)
            elif pd.api.types.is_list_like(value) and not isinstance(value, (Series, DataFrame)):
                raise NotImplementedError("case_when with an array: pass a Series (mars or pandas) with this "
                                          "Series' index, so that each partition takes its rows")
            into.append(value)
    return map_partitions(_case_when_part, self, len(conds), *conds, *repls, how="left")


def _xs_part(part: Any, key: Any, level: Any, drop_level: bool, empty: Any) -> Any:
    try:
        return part.xs(key, level=level, drop_level=drop_level)
    except KeyError:  # this partition has no such row; others may
        return empty


def _xs_meta(meta: Any, key: Any, level: Any, drop_level: bool) -> Any:
    """What ``xs`` gives ``meta``'s kind of object: pandas on a sample whose labels hold ``key``."""
    sample = fake(meta)
    keys = key if isinstance(key, tuple) else (key,)
    levels = list(level) if isinstance(level, (list, tuple)) else ([level] if level is not None else
                                                                   list(range(len(keys))))
    index = sample.index
    arrays = [index.get_level_values(i) for i in range(index.nlevels)]
    for lv, k in zip(levels, keys):
        arrays[index._get_level_number(lv)] = pd.Index([k] * len(sample))
    sample.index = pd.MultiIndex.from_arrays(arrays, names=index.names)
    return empty_meta(sample.xs(key, level=level, drop_level=drop_level))


def _xs(self: Any, key: Any, axis: Any = 0, level: Any = None, drop_level: bool = True) -> Any:
    """A cross-section: the rows with label ``key`` (of ``level``), or a column (``axis=1``), as pandas' ``xs``.

    >>> import mars.dataframe as md, pandas as pd
    >>> ix = pd.MultiIndex.from_tuples([("a", 1), ("a", 2), ("b", 1)])
    >>> md.DataFrame({"v": [1, 2, 3]}, index=ix, chunk_size=2).xs("a").to_pandas()["v"].tolist()
    [1, 2]
    """
    axis = self.meta._get_axis_number(axis)
    if axis == 1:
        return _local(self, "xs", key, axis=1, level=level, drop_level=drop_level)
    index = self.meta.index
    if not isinstance(index, pd.MultiIndex):
        if level is not None:
            index._get_level_number(level)  # pandas' error for a level a flat index lacks
        return self.loc[key]
    if level is None and isinstance(key, tuple) and len(key) == index.nlevels:
        return self.loc[key]  # every level given: pandas' answer is loc's
    empty = _xs_meta(self.meta, key, level, drop_level)
    return map_partitions(_xs_part, self, key, level, drop_level, empty, meta=empty, same_rows=False)


def _isetitem(self: DataFrame, loc: Any, value: Any) -> None:
    """Column(s) at position ``loc`` set to ``value``, in place (this frame is rebound), as pandas.

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"a": [1, 2], "b": [3, 4]}, chunk_size=1)
    >>> df.isetitem(1, 0)
    >>> df.to_pandas()["b"].tolist()
    [0, 0]
    """
    if isinstance(value, pd.Series):
        value = Series(value)
    elif isinstance(value, pd.DataFrame):
        value = DataFrame(value)
    result = map_partitions(_isetitem_part, self, loc, value, how="left")
    self.data = as_data(result)


def _isetitem_part(part: pd.DataFrame, loc: Any, value: Any) -> pd.DataFrame:
    part = part.copy(deep=False)
    part.isetitem(loc, value)
    return part


def _select(self: DataFrame, *args: Any, **kwargs: Any) -> DataFrame:
    """Columns by label, and computed columns by keyword, as pandas' ``DataFrame.select``.

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"a": [1, 2], "b": [3, 4]}, chunk_size=1)
    >>> df.select("b", c=lambda d: d.a * 10).to_pandas().values.tolist()
    [[3, 10], [4, 20]]
    """
    labels = list(args[0]) if len(args) == 1 and pd.api.types.is_list_like(args[0]) \
        and not isinstance(args[0], tuple) else list(args)
    if any(not pd.api.types.is_hashable(a) for a in labels):
        raise NotImplementedError("select with pandas.col expressions: pass them as keywords, df.select(name=expr)")
    self.meta.select(*labels)  # pandas' checks of the labels
    result = self.assign(**kwargs) if kwargs else self
    return result[labels + list(kwargs)]


def _axes(self: Any) -> list:
    """``[index]`` of a Series, ``[index, columns]`` of a DataFrame (the index lazy), as pandas."""
    return [self.index] if isinstance(self, Series) else [self.index, self.columns]


def _series_get(self: Series, key: Any, default: Any = None) -> Any:
    """The value(s) at label ``key``, or ``default`` when missing, as pandas' ``Series.get``: computed now
    (only the matching rows are fetched).

    >>> import mars.dataframe as md
    >>> s = md.Series([1, 2], index=["a", "b"], chunk_size=1)
    >>> int(s.get("b")), s.get("z", -1)
    (2, -1)
    """
    keys = list(key) if pd.api.types.is_list_like(key) else [key]
    try:
        hits = self[self.index.isin(keys)].to_pandas()
    except TypeError:
        return default
    return hits.get(key, default)


def _series_pop(self: Series, item: Any) -> Any:
    """The value at label ``item``, removed from this Series (which is rebound), as pandas: computed now.

    >>> import mars.dataframe as md
    >>> s = md.Series([1, 2], index=["a", "b"])
    >>> int(s.pop("a")), s.to_pandas().tolist()
    (1, [2])
    """
    hits = self[self.index.isin([item])].to_pandas()
    value = hits[item]
    self.data = as_data(self.drop(item))
    return value


def _from_arrow(cls: type, data: Any) -> Any:
    """A mars object from an Arrow table or array (through pandas' ``from_arrow``).

    >>> import mars.dataframe as md, pyarrow as pa
    >>> md.DataFrame.from_arrow(pa.table({"a": [1, 2]})).to_pandas()["a"].tolist()
    [1, 2]
    """
    pandas_cls = pd.DataFrame if cls is DataFrame else pd.Series
    return cls(pandas_cls.from_arrow(data))


# ----------------------------------------------------------------- ORC and Feather files
class WriteOrc(WritePart):
    def write(self, part: Any, path: Any, kwargs: dict) -> Any:
        return _write_binary(part, path, kwargs, "to_orc", self.storage_options)


class WriteFeather(WritePart):
    def write(self, part: Any, path: Any, kwargs: dict) -> Any:
        return _write_binary(part, path, kwargs, "to_feather", self.storage_options)


def _write_binary(part: pd.DataFrame, path: str, kwargs: dict, method: str, storage_options: Any) -> None:
    from ..io.fs import open_file

    kwargs = {k: v for k, v in kwargs.items() if k != "storage_options"}
    if isinstance(part.index, pd.RangeIndex) and part.index.step == 1:
        # a partition of a default index: its file holds no index, as the whole's would not
        part = part.reset_index(drop=True)
    with open_file(path, "wb", storage_options) as f:
        getattr(part, method)(f, **kwargs)


class ToOrc(ToFiles):
    writer = WriteOrc


class ToFeather(ToFiles):
    writer = WriteFeather


def _to_binary(self: DataFrame, to: type, path: Any, single_file: Any, storage_options: Any, name_function: Any,
               kwargs: dict) -> Any:
    if not isinstance(path, str):
        raise TypeError(f"path must be a string (a '*' in it writes one file per partition), got {path!r}")
    how = choose_how(path, single_file)
    return lazy_write(as_data(self), to, kwargs, path, how, storage_options, appendable=False,
                      name_function=name_function)


def _to_orc(self: DataFrame, path: Any = None, *, engine: str = "pyarrow", index: Any = None,
            engine_kwargs: Any = None, single_file: Any = None, storage_options: Any = None,
            name_function: Any = None) -> Any:
    """Lazy ORC writer: ``.execute()`` writes one file per partition (a ``*`` in ``path``) or one file.

    With no path, the bytes of the whole (computed now), as pandas returns.

    >>> import mars.dataframe as md, pandas as pd, tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> _ = md.DataFrame({"a": [1, 2, 3]}, chunk_size=2).to_orc(os.path.join(d, "part-*.orc")).execute()
    >>> sorted(os.listdir(d))
    ['part-0.orc', 'part-1.orc']
    """
    self.meta.to_orc(engine=engine, index=index, engine_kwargs=engine_kwargs)  # pandas' checks
    if path is None:
        return self.to_pandas().to_orc(engine=engine, index=index, engine_kwargs=engine_kwargs)
    kwargs = {"engine": engine, "index": index, "engine_kwargs": engine_kwargs}
    return _to_binary(self, ToOrc, path, single_file, storage_options, name_function, kwargs)


def _to_feather(self: DataFrame, path: Any, *, single_file: Any = None, storage_options: Any = None,
                name_function: Any = None, **kwargs: Any) -> Any:
    """Lazy Feather writer: ``.execute()`` writes one file per partition (a ``*`` in ``path``) or one file.

    >>> import mars.dataframe as md, pandas as pd, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.feather")
    >>> _ = md.DataFrame({"a": [1, 2, 3]}, chunk_size=2).to_feather(path).execute()
    >>> pd.read_feather(path)["a"].tolist()
    [1, 2, 3]
    """
    return _to_binary(self, ToFeather, path, single_file, storage_options, name_function, kwargs)


for _cls in (DataFrame, Series):
    _cls.infer_objects = _infer_objects
    _cls.convert_dtypes = _convert_dtypes
    _cls.combine = _combine
    _cls.compare = _compare
    _cls.transpose = _transpose
    _cls.T = property(_transpose)
    _cls.dot = _dot
    _cls.__matmul__ = _dot
    _cls.__rmatmul__ = _rmatmul
    _cls.xs = _xs
    _cls.axes = property(_axes)
    _cls.from_arrow = classmethod(_from_arrow)
Series.divmod = _divmod
Series.rdivmod = _rdivmod
Series.__rdivmod__ = lambda self, other: _rdivmod(self, other)
Series.case_when = _case_when
Series.get = _series_get
Series.pop = _series_pop
DataFrame.isetitem = _isetitem
DataFrame.select = _select
DataFrame.to_orc = _to_orc
DataFrame.to_feather = _to_feather
