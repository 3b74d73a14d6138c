"""Conversions and iteration: ``to_dict``, ``to_records``, ``to_string``, ``info``, ``iterrows``, ``md.to_numeric``...

What pandas returns as plain Python or numpy values (a dict, a record
array, a string, an iterator of rows) is computed: the expression runs, then
pandas converts its value, so the output is pandas' own. Arguments are first
tried on the metadata, so pandas' errors (a bad ``orient``, ``tabulate``
missing for ``to_markdown``) come before anything runs. ``info`` computes only
what it prints: the non-null counts and memory use (reductions) and the
index's ends.

Lazy results stay lazy: ``md.to_numeric`` converts partition by partition,
then casts every partition to the dtype pandas would give the whole (the
partitions' dtypes, joined), known once it has run. Also here: ``md.isna``,
``md.notna``, ``md.unique``, ``md.from_records``/``from_dict``,
``md.NamedAgg``, :class:`CustomReduction` (a user's reduction in three
stages, used by ``agg``) and reductions over both axes (``axis=None``).
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable, Generator, Iterator
from typing import Any

import numpy as np
import pandas as pd

from ..core.operator import Fetch, Tiled
from ..core.tiling import as_data
from ..tensor.core import is_tensor, tensor_data
from .core import (
    DataFrame,
    Index,
    PandasOperator,
    Series,
    chunk_index_of,
    is_pandas_like,
    nsplits_of,
    wrap,
)
from .custom_reduction import CustomReduction
from .custom_reduction import as_tuple as _as_tuple
from .datasource import from_pandas
from .map import map_partitions
from .meta import dtype_of_scalar, empty_meta, fake
from .reduction import tree_reduce
from .reductions import Reducer, as_frame, reduce, run_reducer

__all__ = [
    "CustomReduction",
    "NamedAgg",
    "from_dict",
    "from_records",
    "isna",
    "isnull",
    "notna",
    "notnull",
    "to_numeric",
    "unique",
]

NamedAgg = pd.NamedAgg


# ----------------------------------------------------------------- computed conversions
def _computed(name: str, frame_only: bool = False) -> Callable:
    """A method that runs the expression and returns pandas' ``name`` of its value (pandas' errors first)."""

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("buf") is None:
            getattr(self.meta, name)(*args, **kwargs)  # pandas' errors, before running
        else:
            getattr(self.meta, name)(*args, **{**kwargs, "buf": io.StringIO()})
        return getattr(self.fetch(), name)(*args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"""pandas' ``{name}`` of the computed value (the expression runs first).

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({{"a": [1, 2]}}, chunk_size=1)
    >>> df.{name}() == df.to_pandas().{name}()
    True
    """
    return method


def _to_records(self: DataFrame, index: bool = True, column_dtypes: Any = None, index_dtypes: Any = None) -> Any:
    """The computed rows as a numpy record array, as pandas' ``to_records``.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 2]}, chunk_size=1).to_records().tolist()
    [(0, 1), (1, 2)]
    """
    kw = {"index": index, "column_dtypes": column_dtypes, "index_dtypes": index_dtypes}
    self.meta.to_records(**kw)
    return self.fetch().to_records(**kw)


def _item(self: Series) -> Any:
    """The one value of a one-element Series (pandas' ValueError otherwise).

    >>> import mars.dataframe as md
    >>> md.Series([7]).item()
    7
    """
    return self.fetch().item()


def _part_nbytes(part: Any) -> int:
    return int(part.nbytes)


def _sum_ints(values: list) -> int:
    return int(sum(values))


def _nbytes(self: Any) -> int:
    """Bytes of the values (not the index), summed over the partitions without gathering them.

    >>> import mars.dataframe as md
    >>> md.Series([1, 2, 3], chunk_size=2).nbytes
    24
    """
    return int(tree_reduce(self, _part_nbytes, _sum_ints, _sum_ints, np.dtype(np.int64)).fetch())


# ----------------------------------------------------------------- info
def _dtype_counts(meta: pd.DataFrame) -> pd.Series:
    """How many columns have each dtype, by dtype name (as pandas' ``info`` counts them)."""
    return meta.dtypes.value_counts().groupby(lambda dtype: dtype.name).sum()


class _InfoIndex:
    """What pandas' ``info`` asks of an index: its summary line and whether its memory use is a lower bound."""

    def __init__(self, summary: str, qualified: bool):
        self._summary_text, self._is_memory_usage_qualified = summary, qualified

    def _summary(self, name: Any = None) -> str:
        return self._summary_text


class _InfoData:
    """A stand-in for the pandas object that pandas' ``info`` formats: what it reads, computed here."""

    def __init__(self, obj: Any, deep: bool, counts: bool):
        meta = obj.meta
        self.dtypes, self.name = meta.dtypes, getattr(meta, "name", None)
        self.columns = meta.columns if isinstance(meta, pd.DataFrame) else None
        index = obj.index.fetch()
        self.index = _InfoIndex(index._summary(), index._is_memory_usage_qualified)
        self._len = len(index)
        self._count = obj.count().fetch() if counts else None
        self._memory = _memory_usage(obj, deep)

    def __len__(self) -> int:
        return self._len

    def count(self) -> Any:
        return self._count

    def memory_usage(self, index: bool = True, deep: bool = False) -> Any:
        return self._memory


def _part_memory(part: Any, deep: bool) -> pd.Series:
    usage = part.memory_usage(index=False, deep=deep)
    return usage if isinstance(usage, pd.Series) else pd.Series([usage])


def _add_memory(parts: list) -> pd.Series:
    return functools.reduce(lambda a, b: a.add(b, fill_value=0), parts)


def _memory_usage(obj: Any, deep: bool) -> Any:
    """pandas' ``memory_usage(index=True, deep=deep)`` total: the columns' bytes summed by partition, plus the index's."""
    columns = tree_reduce(obj, functools.partial(_part_memory, deep=deep), _add_memory, _add_memory,
                          pd.Series([], dtype=np.int64)).fetch()
    index = obj.index.fetch().memory_usage(deep=deep)
    total = int(columns.sum()) + int(index)
    return pd.Series([total]) if isinstance(obj, DataFrame) else total


def _info(self: Any, verbose: Any = None, buf: Any = None, max_cols: Any = None, memory_usage: Any = None,
          show_counts: Any = None) -> None:
    """pandas' ``info``: the same text, from counts and memory use computed by reductions (not the whole value).

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 2]}, chunk_size=1).info()  # doctest: +ELLIPSIS
    <class 'pandas.DataFrame'>
    RangeIndex: 2 entries, 0 to 1
    ...
    """
    from pandas.io.formats.info import DataFrameInfo, SeriesInfo

    frame = isinstance(self, DataFrame)
    usage = pd.get_option("display.memory_usage") if memory_usage is None else memory_usage
    stand_in = _InfoData(self, deep=usage == "deep", counts=show_counts is not False)
    counts = _dtype_counts(self.meta if frame else self.meta.to_frame())
    base = DataFrameInfo if frame else SeriesInfo
    info_type = type("Info", (base,), {"dtype_counts": property(lambda _: counts)})
    info = info_type(data=stand_in, memory_usage=memory_usage)
    buffer = io.StringIO()
    info.render(buf=buffer, max_cols=max_cols, verbose=verbose, show_counts=show_counts)
    text = buffer.getvalue().replace(str(_InfoData), str(pd.DataFrame if frame else pd.Series), 1)
    if buf is None:
        print(text, end="")
    else:
        buf.write(text)


# ----------------------------------------------------------------- iteration
def _iterrows(self: DataFrame) -> Iterator[tuple[Any, pd.Series]]:
    """``(label, row Series)`` pairs of the computed frame.

    >>> import mars.dataframe as md
    >>> [label for label, _ in md.DataFrame({"a": [1, 2]}, chunk_size=1).iterrows()]
    [0, 1]
    """
    return self.fetch().iterrows()


def _itertuples(self: DataFrame, index: bool = True, name: str | None = "Pandas") -> Iterator[tuple]:
    """Rows of the computed frame as named tuples (``index``, ``name`` as in pandas).

    >>> import mars.dataframe as md
    >>> list(md.DataFrame({"a": [1, 2]}, chunk_size=1).itertuples(index=False, name=None))
    [(1,), (2,)]
    """
    return self.fetch().itertuples(index=index, name=name)


def _series_items(self: Series) -> Iterator[tuple[Any, Any]]:
    """``(label, value)`` pairs of the computed Series.

    >>> import mars.dataframe as md
    >>> list(md.Series([5, 6], index=["a", "b"], chunk_size=1).items())
    [('a', 5), ('b', 6)]
    """
    return self.fetch().items()


def _series_keys(self: Series) -> Index:
    """The index (pandas' ``Series.keys``), lazy."""
    return self.index


# ----------------------------------------------------------------- md.to_numeric
class ToNumericPart(PandasOperator):
    """``pd.to_numeric`` of one partition (chunk level)."""

    params = ("kwargs",)
    fusible = True

    def execute(self, part: Any) -> Any:
        return pd.to_numeric(part, **self.kwargs)


class DtypeOf(PandasOperator):
    """A partition's dtype and length (what tiling fetches to join the partitions' dtypes)."""

    params = ()

    def execute(self, part: Any) -> tuple:
        return part.dtype, len(part)


class CastPart(PandasOperator):
    params = ("dtype",)
    fusible = True

    def execute(self, part: Any) -> Any:
        return part if part.dtype == self.dtype else part.astype(self.dtype)


def joined_dtype(dtypes: list) -> Any:
    """The dtype pandas gives values of these dtypes together (``pd.concat``'s rule).

    >>> joined_dtype([np.dtype("int8"), np.dtype("uint8")])
    dtype('int16')
    """
    return pd.concat([pd.Series([], dtype=d) for d in dtypes]).dtype if len(dtypes) > 1 else dtypes[0]


class ToNumeric(PandasOperator):
    """``pd.to_numeric`` by partition; then every partition cast to the dtype the whole gets."""

    params = ("kwargs",)

    @classmethod
    def tile(cls, op: ToNumeric) -> Generator[Any, Any, Tiled]:
        data, out = op.inputs[0], op.outputs[0]
        parts = [ToNumericPart(kwargs=op.kwargs).new_chunk([c], index=c.index, shape=c.shape, meta=out.meta)
                 for c in data.chunks]
        yield parts
        facts = yield Fetch([DtypeOf().new_chunk([p], index=p.index, shape=(), meta=None) for p in parts])
        dtypes = [d for d, n in facts if n] or [facts[0][0]]
        dtype = joined_dtype(dtypes)
        out.meta = out.meta.astype(dtype)
        chunks = [CastPart(dtype=dtype).new_chunk([p], index=chunk_index_of(out.meta, i), shape=p.shape, meta=out.meta)
                  for i, p in enumerate(parts)]
        return Tiled(chunks, nsplits_of(out.meta, [c.shape[0] for c in chunks]))


def to_numeric(arg: Any, errors: str = "raise", downcast: Any = None, dtype_backend: Any = pd.api.extensions.no_default
               ) -> Any:
    """``pd.to_numeric``: lazy for a lazy Series or Index (its dtype is known once it has run), else pandas'.

    >>> import mars.dataframe as md
    >>> md.to_numeric(md.Series(["1", "2.5"], chunk_size=1)).to_pandas().tolist()
    [1.0, 2.5]
    """
    kwargs = {"errors": errors, "downcast": downcast}
    if dtype_backend is not pd.api.extensions.no_default:
        kwargs["dtype_backend"] = dtype_backend
    if not is_pandas_like(arg):
        return pd.to_numeric(wrap(tensor_data(arg)).fetch() if is_tensor(arg) else arg, **kwargs)
    data = as_data(arg)
    meta = empty_meta(pd.to_numeric(data.meta, **kwargs))  # pandas' errors for bad arguments or a DataFrame, now
    return ToNumeric(kwargs=kwargs).new_pandas([data], meta, data.shape, partitioning=data.partitioning)


# ----------------------------------------------------------------- top-level functions
def _on_lazy(name: str, pandas_func: Callable) -> Callable:
    def func(obj: Any) -> Any:
        if is_pandas_like(obj):
            return getattr(obj, name)()
        if is_tensor(obj):
            from .. import tensor as mt

            return mt.isnan(obj) if name in ("isna", "isnull") else ~mt.isnan(obj)
        return pandas_func(obj)

    func.__name__ = name
    func.__doc__ = f"""``pd.{name}``: lazy for lazy objects (a numeric tensor gives a lazy tensor), else pandas'.

    >>> import mars.dataframe as md
    >>> md.{name}(md.Series([1.0, None], chunk_size=1)).to_pandas().tolist() == \\
    ...     __import__("pandas").{name}(__import__("pandas").Series([1.0, None])).tolist()
    True
    """
    return func


isna = _on_lazy("isna", pd.isna)
isnull = _on_lazy("isnull", pd.isnull)
notna = _on_lazy("notna", pd.notna)
notnull = _on_lazy("notnull", pd.notnull)


def unique(values: Any) -> Any:
    """``pd.unique``: distinct values in order of appearance; a lazy 1-d tensor for lazy input.

    >>> import mars.dataframe as md
    >>> md.unique(md.Series([3, 1, 3], chunk_size=1)).fetch().tolist()
    [3, 1]
    """
    if is_tensor(values):
        values = Series(values)
    if isinstance(values, DataFrame):
        raise TypeError("unique() of a DataFrame: pandas takes 1-d values; use df.stack() or a column")
    if is_pandas_like(values):
        return values.unique()
    return pd.unique(values)


def from_records(data: Any, index: Any = None, exclude: Any = None, columns: Any = None, coerce_float: bool = False,
                 nrows: Any = None, chunk_size: Any = None) -> DataFrame:
    """``pd.DataFrame.from_records`` as a lazy DataFrame in partitions of ``chunk_size`` rows.

    >>> import mars.dataframe as md
    >>> md.from_records([(1, "a"), (2, "b")], columns=["n", "s"], chunk_size=1).to_pandas()["n"].tolist()
    [1, 2]
    """
    if is_tensor(data):
        data = wrap(tensor_data(data)).fetch()  # a structured tensor's records are made on the client, as pandas does
    pdf = pd.DataFrame.from_records(data, index=index, exclude=exclude, columns=columns, coerce_float=coerce_float,
                                    nrows=nrows)
    return from_pandas(pdf, chunk_size)


def from_dict(data: dict, orient: str = "columns", dtype: Any = None, columns: Any = None,
              chunk_size: Any = None) -> DataFrame:
    """``pd.DataFrame.from_dict`` as a lazy DataFrame in partitions of ``chunk_size`` rows.

    >>> import mars.dataframe as md
    >>> md.from_dict({"r": [1, 2]}, orient="index", chunk_size=1).to_pandas().columns.tolist()
    [0, 1]
    """
    return from_pandas(pd.DataFrame.from_dict(data, orient=orient, dtype=dtype, columns=columns), chunk_size)


# ----------------------------------------------------------------- a user's reduction
class CustomReducer(Reducer):
    """A :class:`CustomReduction` as a tree reducer: per column, ``agg(*pre)`` per partition, ``agg`` across, ``post``."""

    func: CustomReduction
    columns: Any
    scalar: bool
    empty: Any

    def chunk(self, part: Any) -> list | None:
        frame = as_frame(part)
        if not len(frame):
            return None
        return [_as_tuple(self.func.agg(*_as_tuple(self.func.pre(frame.iloc[:, i])))) for i in range(frame.shape[1])]

    def combine(self, partials: list) -> list | None:
        kept = [p for p in partials if p is not None]
        if not kept:
            return None
        out = []
        for i in range(len(kept[0])):
            values = [pd.Series([p[i][k] for p in kept]) for k in range(len(kept[0][i]))]
            out.append(_as_tuple(self.func.agg(*values)))
        return out

    def agg(self, partials: list) -> Any:
        merged = self.combine(partials)
        if merged is None:
            frame = as_frame(self.empty)
            values = [self.func(frame.iloc[:, i]) for i in range(frame.shape[1])]
        else:
            values = [self.func.post(*v) for v in merged]
        return values[0] if self.scalar else pd.Series(values, index=self.columns)


def custom_reduce(obj: Any, func: CustomReduction) -> Any:
    """``obj.agg(func)`` for a :class:`CustomReduction`: a Series by column, or a 0-d tensor for a Series."""
    data = as_data(obj)
    sample = fake(data.meta)
    scalar = not isinstance(sample, pd.DataFrame)
    result = func(sample) if scalar else pd.Series([func(sample.iloc[:, i]) for i in range(sample.shape[1])],
                                                   index=sample.columns)
    reducer = CustomReducer(func=func, columns=data.meta.columns if not scalar else None, scalar=scalar,
                            empty=data.meta)
    return run_reducer(data, reducer, result)


def _with_custom(agg: Callable) -> Callable:
    @functools.wraps(agg)
    def method(self: Any, func: Any = None, axis: Any = 0, *args: Any, **kwargs: Any) -> Any:
        if isinstance(func, CustomReduction):
            if axis not in (0, "index") or args or kwargs:
                raise NotImplementedError("agg with a CustomReduction takes no axis or arguments; it reduces each column")
            return custom_reduce(self, func)
        return agg(self, func, axis, *args, **kwargs)

    return method


# ----------------------------------------------------------------- reductions over both axes
_BOTH_AXES = ("sum", "prod", "product", "min", "max", "mean", "std", "var", "sem", "median", "any", "all", "count")


def _flatten(part: pd.DataFrame, dtype: Any) -> pd.Series:
    """A partition's values as one Series of their common dtype, as pandas reduces ``axis=None``.

    numpy dtypes: ``df.values`` row after row; extension dtypes: the columns end to end.
    """
    if isinstance(dtype, np.dtype):
        return pd.Series(part.to_numpy(dtype=dtype).ravel(), dtype=dtype)
    if not part.shape[1]:
        return pd.Series([], dtype=dtype)
    return pd.concat([part.iloc[:, i].astype(dtype) for i in range(part.shape[1])], ignore_index=True)


def reduce_both_axes(df: DataFrame, name: str, **kwargs: Any) -> Any:
    """``df.<name>(axis=None, **kwargs)``: one value over every cell (pandas 2+), a 0-d tensor.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 2], "b": [3, 4]}, chunk_size=1).sum(axis=None).fetch()
    np.int64(10)
    """
    meta = df.meta
    result = getattr(fake(meta), name)(axis=None, **kwargs)  # pandas' errors, now
    numeric_only = kwargs.pop("numeric_only", False)
    data = df
    if numeric_only:
        keep = [i for i, dt in enumerate(meta.dtypes) if pd.api.types.is_numeric_dtype(dt)]
        data = df.iloc[:, keep]
    dtype = fake(as_data(data).meta).to_numpy().dtype if all(isinstance(d, np.dtype) for d in as_data(data).meta.dtypes) \
        else joined_dtype(list(as_data(data).meta.dtypes))
    flat = map_partitions(_flatten, data, dtype, meta=pd.Series([], dtype=dtype), same_rows=False)
    out = reduce(flat, name, **kwargs)
    expected = dtype_of_scalar(result)
    return out if out.dtype == expected else out.astype(expected)


def _both_axes(name: str, method: Callable) -> Callable:
    @functools.wraps(method)
    def wrapper(self: Any, axis: Any = 0, *args: Any, **kwargs: Any) -> Any:
        if "level" in kwargs:  # pandas 3 has no level= on reductions: its own TypeError
            getattr(fake(self.meta), name)(*args, **kwargs)
        if axis is None and isinstance(self, DataFrame):
            if name == "count":
                self.meta._get_axis_number(axis)  # pandas' ValueError
            return reduce_both_axes(self, "prod" if name == "product" else name, *args, **kwargs)
        return method(self, axis, *args, **kwargs)

    return wrapper


def _install() -> None:
    for cls in (DataFrame, Series):
        for name in _BOTH_AXES:
            if hasattr(cls, name):
                setattr(cls, name, _both_axes(name, getattr(cls, name)))
        cls.agg = cls.aggregate = _with_custom(cls.agg)
        cls.info = _info
        cls.to_string = _computed("to_string")
        cls.to_html = _computed("to_html")
        cls.to_markdown = _computed("to_markdown")
        cls.to_dict = _computed("to_dict")
    DataFrame.to_records = _to_records
    DataFrame.iterrows = _iterrows
    DataFrame.itertuples = _itertuples
    DataFrame.iteritems = DataFrame.items  # Mars' name for items (pandas < 2)
    DataFrame.from_records = staticmethod(from_records)
    DataFrame.from_dict = staticmethod(from_dict)
    Series.items = Series.iteritems = _series_items
    Series.keys = _series_keys
    Series.item = _item
    Series.nbytes = property(_nbytes, doc=_nbytes.__doc__)


_install()
