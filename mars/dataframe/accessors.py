"""``Series.str``, ``Index.str`` and ``Series.dt``: pandas' accessors, partition by partition.

Each method is pandas' own method run on every partition; its output's
metadata is pandas' output on the metadata. Some outputs depend on the
values, not just the dtypes: ``str.len()`` is int64 without missing values
and float64 with them, ``dt.year`` is int32 or float64, ``str.split(expand=True)``
has as many columns as the longest split. Those are unified when they run
(see :func:`mars.dataframe.apply.unify_meta`): the tileable's ``meta`` is
pandas' answer for data without missing values until then.

>>> import mars.dataframe as md
>>> md.Series(["a", "bb"], chunk_size=1).str.upper().to_pandas().tolist()
['A', 'BB']
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Generator
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from ..core.entity import Tileable
from ..core.operator import Fetch, Tiled
from ..core.tiling import as_data, recursive_tile
from .apply import unify_meta
from .core import (
    Index,
    PandasOperator,
    Series,
    chunk_index_of,
    chunk_shape_of,
    nsplits_of,
    wrap,
)
from .datasource import from_pandas
from .map import map_partitions
from .meta import fake, infer
from .metakey import cached_meta, meta_key
from .reduction import tree_reduce
from .reshape import MapOne

__all__: list[str] = []


def _str_call(part: Any, name: str, args: tuple, kwargs: dict) -> Any:
    if len(part) and part.dtype == object and pd.isna(part[:1]).all() and part.isna().all():
        # pandas types the result of nothing but missing values apart (NaN, not None; float, not object):
        # run it behind a placeholder string, as those rows would run among others in the whole
        try:
            return _behind_placeholder(part, name, args, kwargs)
        except Exception:  # noqa: BLE001 - the method rejects the placeholder (``str.index``): run it plainly
            return getattr(part.str, name)(*args, **kwargs)
    return getattr(part.str, name)(*args, **kwargs)


def _behind_placeholder(part: Any, name: str, args: tuple, kwargs: dict) -> Any:
    if isinstance(part, pd.Index):
        extended = pd.Index(["a"], dtype=object).append(part)
        return getattr(extended.str, name)(*args, **kwargs)[1:]
    extended = pd.concat([pd.Series(["a"], dtype=object, name=part.name), part.reset_index(drop=True)])
    result = getattr(extended.reset_index(drop=True).str, name)(*args, **kwargs)
    return result.iloc[1:].set_axis(part.index)


def _dt_call(part: Any, name: str, args: tuple, kwargs: dict) -> Any:
    return getattr(part.dt, name)(*args, **kwargs)


def _dt_attr(part: Any, name: str) -> Any:
    return getattr(part.dt, name)


def _with_missing(sample: Any) -> Any:
    """``sample`` with its last value missing, when its dtype can hold a missing value."""
    dtype = sample.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iub":
        return None
    keep = np.arange(len(sample)) < len(sample) - 1
    return sample.where(keep)


def _meta_key(meta: Any) -> Any:
    if isinstance(meta, pd.DataFrame):
        return ("frame", tuple(meta.columns), tuple(map(str, meta.dtypes)))
    if isinstance(meta, (pd.Series, pd.Index)):
        return (type(meta).__name__, str(meta.dtype))
    return (type(meta).__name__,)


def varies_with_missing(func: Callable, meta: Any, *args: Any) -> bool:
    """Whether ``func`` gives other dtypes when some input values are missing (``str.len``: int or float)."""
    sample = fake(meta)
    holed = _with_missing(sample)
    if holed is None:
        return False
    try:
        return _meta_key(func(sample, *args)) != _meta_key(func(holed, *args))
    except Exception:  # noqa: BLE001 - a method failing on one sample: let running decide
        return True


def _apply_method(obj: Any, func: Callable, *args: Any, same_rows: bool = True, checked: bool = False) -> Any:
    """``func(partition, *args)`` per partition; ``checked``: first run it on the meta, for pandas' argument errors.

    The meta and whether it varies with missing values are worked out once per
    expression shape (see :mod:`.metakey`).
    """
    key = meta_key("accessor", (obj.meta,), func, args, same_rows, checked)
    meta, varies = cached_meta(key, lambda: _method_meta(obj.meta, func, args, checked))
    out = map_partitions(func, obj, *args, meta=meta, same_rows=same_rows)
    return unify_meta(out) if varies else out


def _method_meta(meta: Any, func: Callable, args: tuple, checked: bool) -> tuple[Any, bool]:
    if checked:
        func(meta, *args)  # pandas' argument errors, raised now
    try:
        # typical values, not empty input: on no rows pandas cannot tell ``str.partition``'s three columns
        out = infer(func, meta, *args, sample=True)
    except Exception:  # noqa: BLE001 - e.g. ``str.index`` of a substring the sample lacks
        out = infer(func, meta, *args)
    return out, varies_with_missing(func, meta, *args)


# ----------------------------------------------------------------- str
_STR_METHODS = (
    "capitalize", "casefold", "center", "contains", "count", "decode", "encode", "endswith", "extract",
    "find", "findall", "fullmatch", "get", "index", "isalnum", "isalpha", "isascii", "isdecimal", "isdigit",
    "islower", "isnumeric", "isspace", "istitle", "isupper", "join", "len", "ljust", "lower", "lstrip", "match",
    "normalize", "pad", "partition", "removeprefix", "removesuffix", "repeat", "replace", "rfind", "rindex",
    "rjust", "rpartition", "rstrip", "slice", "slice_replace", "startswith", "strip", "swapcase", "title",
    "translate", "upper", "wrap", "zfill",
)


class StringMethods:
    """``obj.str``: vectorized string methods of a lazy Series or Index, as ``pandas.Series.str``."""

    def __init__(self, obj: Any):
        obj.meta.str  # noqa: B018 - pandas' own check: AttributeError for non-string values
        self._obj = obj

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return _apply_method(self._obj, _str_call, name, args, kwargs, checked=True)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return self.slice(key.start, key.stop, key.step)
        return self.get(key)

    def __iter__(self) -> Any:
        raise TypeError(f"'{type(self).__name__}' object is not iterable")

    def split(self, pat: Any = None, *, n: int = -1, expand: bool = False, regex: Any = None) -> Any:
        """Split each string, as ``pandas.Series.str.split``; ``expand=True`` has as many columns as the longest."""
        return self._split("split", pat, n, expand, regex)

    def rsplit(self, pat: Any = None, *, n: int = -1, expand: bool = False) -> Any:
        """Split each string from the right, as ``pandas.Series.str.rsplit``."""
        return self._split("rsplit", pat, n, expand, None)

    def _split(self, name: str, pat: Any, n: int, expand: bool, regex: Any) -> Any:
        kwargs: dict = {"n": n, "expand": expand}
        if name == "split":
            kwargs["regex"] = regex
        meta = self._obj.meta
        if expand and isinstance(meta, pd.Index):
            raise NotImplementedError(f"Index.str.{name}(expand=True) (a MultiIndex) is not supported; "
                                      "use a Series")
        getattr(meta.str, name)(pat, **kwargs)
        if not expand:
            return _apply_method(self._obj, _str_call, name, (pat,), kwargs)
        out = map_partitions(_str_call, self._obj, name, (pat,), kwargs, same_rows=True)
        # partitions have as many columns as their own longest split: pad with pandas' missing value
        probe = getattr(pd.Series(["a b", "a"], dtype=meta.dtype).str, name)(" ", n=-1, expand=True)
        return unify_meta(out, pad_none=probe.iloc[1, 1] is None, dtype=probe.dtypes.iloc[0])

    def extractall(self, pat: str, flags: int = 0) -> Any:
        """All matches of each group, one row per match, as ``pandas.Series.str.extractall``."""
        self._obj.meta.str.extractall(pat, flags)
        return _apply_method(self._obj, _str_call, "extractall", (pat,), {"flags": flags}, same_rows=False)

    def cat(self, others: Any = None, sep: str | None = None, na_rep: str | None = None, join: str = "left") -> Any:
        """Concatenate strings, as ``pandas.Series.str.cat``.

        With no ``others``: all values joined into one string (a 0-d tensor).
        ``others``: a Series (lazy or pandas, aligned on the index) or a list of them.
        """
        if others is None:
            self._obj.meta.str.cat(sep=sep, na_rep=na_rep)
            return tree_reduce(self._obj, partial(_cat_chunk, na_rep=na_rep), _concat_lists,
                               partial(_join_all, sep=sep), np.dtype(object))
        many = isinstance(others, (list, tuple))
        items = [_lazy_other(o) for o in (others if many else [others])]
        self._obj.meta.str.cat([o.meta for o in items] if many else items[0].meta, sep=sep, na_rep=na_rep, join=join)
        return map_partitions(_cat_with, self._obj, items, many, sep, na_rep, join, how="left")


    def get_dummies(self, sep: str = "|", dtype: Any = None) -> Any:
        """One indicator column per token of the strings split at ``sep``, as ``pandas.Series.str.get_dummies``.

        The tokens are found first (a tree of each partition's set), then each
        partition is encoded on its own: the columns are known once it ran.

        >>> import mars.dataframe as md
        >>> md.Series(["a|b", None, "c"], chunk_size=2).str.get_dummies().execute().fetch().columns.tolist()
        ['a', 'b', 'c']
        """
        meta = self._obj.meta
        if isinstance(meta, pd.Index):
            raise NotImplementedError("Index.str.get_dummies (a MultiIndex) is not supported; use a Series")
        empty = meta.str.get_dummies(sep, dtype=dtype)  # pandas' argument errors, raised now
        op = StrDummies(sep=sep, dtype=dtype)
        return op.new_pandas([as_data(self._obj)], empty, (self._obj.shape[0], np.nan),
                             partitioning=self._obj.partitioning)


def _tokens(part: pd.Series, sep: str) -> frozenset:
    # missing values have no tokens (and pandas' pyarrow strings fail on nothing but missing values)
    return frozenset(part.str.get_dummies(sep).columns) if part.notna().any() else frozenset()


def _union(parts: list) -> frozenset:
    return frozenset().union(*parts)


def _dummies_meta(meta: pd.Series, tokens: frozenset, sep: str, dtype: Any) -> pd.DataFrame:
    """pandas' empty result for strings holding every token: its column order, names and dtypes."""
    sample = pd.Series([sep.join(sorted(tokens))] if tokens else [], dtype=meta.dtype, name=meta.name)
    return sample.str.get_dummies(sep, dtype=dtype).iloc[:0]


def _dummies_of(part: pd.Series, sep: str, dtype: Any, meta: pd.DataFrame) -> pd.DataFrame:
    # this partition's tokens, laid out as the whole's: the tokens it lacks are all zero
    if not part.notna().any():
        return pd.DataFrame(0, index=part.index, columns=meta.columns).astype(meta.dtypes.to_dict())
    result = part.str.get_dummies(sep, dtype=dtype).reindex(columns=meta.columns, fill_value=0)
    return result.astype(meta.dtypes.to_dict()) if len(meta.columns) else result.set_axis(meta.columns, axis=1)


class StrDummies(PandasOperator):
    """``str.get_dummies``: the tokens are a reduction fetched at tiling, then one encoding per partition."""

    params = ("sep", "dtype")

    @classmethod
    def tile(cls, op: StrDummies) -> Generator[Any, Any, Tiled]:
        data, out = op.inputs[0], op.outputs[0]
        tokens = tree_reduce(data, partial(_tokens, sep=op.sep), _union, _union, np.dtype(object))
        yield from recursive_tile(tokens)
        (found,) = yield Fetch(as_data(tokens).chunks)
        meta = _dummies_meta(data.meta, found, op.sep, op.dtype)
        rows = [c.shape[0] for c in data.chunks]
        chunks = [MapOne(func=_dummies_of, args=(op.sep, op.dtype, meta)).new_chunk(
            [c], index=chunk_index_of(meta, i), shape=chunk_shape_of(meta, rows[i]), meta=meta)
            for i, c in enumerate(data.chunks)]
        if out is not None:
            out.meta, out.shape = meta, chunk_shape_of(meta, data.shape[0])
        return Tiled(chunks, nsplits_of(meta, rows))


def _lazy_other(other: Any) -> Any:
    if isinstance(other, Tileable):
        return other
    if isinstance(other, (pd.Series, pd.Index)):
        return wrap(from_pandas(other).data)
    raise NotImplementedError(f"str.cat(others=...) takes Series (lazy or pandas), got {type(other).__name__}; "
                              "make it a Series with the same index first")


def _cat_with(part: Any, others: list, many: bool, sep: Any, na_rep: Any, join: str) -> Any:
    return part.str.cat(others if many else others[0], sep=sep, na_rep=na_rep, join=join)


def _cat_chunk(part: Any, na_rep: Any) -> list:
    """A partition's strings to join (missing values dropped, or replaced by ``na_rep``)."""
    return list(part.dropna() if na_rep is None else part.fillna(na_rep))


def _concat_lists(parts: list) -> list:
    return [v for p in parts for v in p]


def _join_all(parts: list, sep: Any) -> str:
    return ("" if sep is None else sep).join(_concat_lists(parts))


def _str_method(name: str) -> Callable:
    def method(self: StringMethods, *args: Any, **kwargs: Any) -> Any:
        return self._call(name, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"``str.{name}`` of each value, as ``pandas.Series.str.{name}``."
    return method


for _name in _STR_METHODS:
    setattr(StringMethods, _name, _str_method(_name))


# ----------------------------------------------------------------- dt
_DT_PROPERTIES = (
    "year", "month", "day", "hour", "minute", "second", "microsecond", "nanosecond", "dayofweek", "day_of_week",
    "weekday", "dayofyear", "day_of_year", "quarter", "is_month_start", "is_month_end", "is_quarter_start",
    "is_quarter_end", "is_year_start", "is_year_end", "is_leap_year", "daysinmonth", "days_in_month", "date",
    "time", "timetz", "days", "seconds", "microseconds", "nanoseconds", "components", "start_time", "end_time",
    "qyear", "week", "weekofyear",
)
_DT_METHODS = (
    "normalize", "strftime", "floor", "ceil", "round", "tz_localize", "tz_convert", "to_period", "total_seconds",
    "day_name", "month_name", "isocalendar", "as_unit", "to_timestamp", "asfreq",
)
#: deprecated names: pandas warns once when the expression is built, partitions use the new name
_DT_ALIASES = {"dayofweek": "day_of_week", "weekday": "day_of_week", "dayofyear": "day_of_year",
               "daysinmonth": "days_in_month"}
#: attributes that are one value for the whole Series, known from its dtype
_DT_SCALARS = ("tz", "unit")


class DatetimeMethods:
    """``series.dt``: datetime, timedelta and period properties and methods, as ``pandas.Series.dt``."""

    def __init__(self, obj: Any):
        self._accessor = obj.meta.dt  # pandas' own check: AttributeError for other values
        self._obj = obj

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in _DT_SCALARS:
            return getattr(self._accessor, name)
        if name in _DT_PROPERTIES:
            getattr(self._accessor, name)  # AttributeError for other kinds of values; pandas' deprecation warning
            return _apply_method(self._obj, _dt_attr, _DT_ALIASES.get(name, name))
        if name in _DT_METHODS:
            getattr(self._accessor, name)
            return _DtMethod(self._obj, name)
        raise AttributeError(f"'{type(self._accessor).__name__}' object has no attribute {name!r}")

    def __dir__(self) -> list:
        names = (*_DT_PROPERTIES, *_DT_METHODS, *_DT_SCALARS, "freq", "to_pydatetime", "to_pytimedelta")
        return sorted(n for n in names if hasattr(self._accessor, n))

    @property
    def to_pydatetime(self) -> Callable[[], Any]:
        """``dt.to_pydatetime()``: an object Series of ``datetime.datetime``, as pandas 3."""
        self._accessor.to_pydatetime  # noqa: B018 - AttributeError for other kinds of values
        return _DtMethod(self._obj, "to_pydatetime")

    @property
    def to_pytimedelta(self) -> Callable[[], Any]:
        """``dt.to_pytimedelta()``: a lazy object tensor of ``datetime.timedelta`` (pandas gives an array)."""
        self._accessor.to_pytimedelta  # noqa: B018 - AttributeError for other kinds of values
        return partial(_to_pytimedelta, self._obj, self._accessor)

    @property
    def freq(self) -> Any:
        """A period's frequency is its dtype's; datetimes' and timedeltas' is inferred from all the values.

        Inferred, it is a lazy 0-d object tensor; pandas' inference needs the values in order, so they meet in
        one task. pandas' Pandas4Warning about the future offset result (given only when a frequency is found)
        is not repeated; ``future.infer_freq_returns_offset`` is honoured.
        """
        if isinstance(self._obj.meta.dtype, pd.PeriodDtype):
            return self._accessor.freq
        offset = pd.get_option("future.infer_freq_returns_offset")
        # which values repeat how, month ends, business days...: pandas' inference needs the values in order
        return tree_reduce(self._obj, _as_values, None, partial(_inferred_freq, offset=offset), np.dtype(object))


def _as_values(part: pd.Series) -> pd.Series:
    return part.reset_index(drop=True)


def _inferred_freq(parts: list, offset: Any) -> Any:
    values = pd.concat(parts, ignore_index=True)
    with warnings.catch_warnings(), pd.option_context("future.infer_freq_returns_offset", offset):
        warnings.simplefilter("ignore")
        return values.dt.freq


def _pytimedeltas(part: pd.Series) -> pd.Series:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas' deprecation warning came when the expression was built
        return pd.Series(part.dt.to_pytimedelta(), index=part.index, dtype=object)


def _to_pytimedelta(obj: Any, accessor: Any) -> Any:
    accessor.to_pytimedelta()  # pandas' deprecation warning, when the expression is built
    return map_partitions(_pytimedeltas, obj, meta=pd.Series([], dtype=object, name=obj.meta.name)).to_tensor()


class _DtMethod:
    """A bound ``dt`` method: ``s.dt.floor("h")``."""

    def __init__(self, obj: Any, name: str):
        self._obj, self._name = obj, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _apply_method(self._obj, _dt_call, self._name, args, kwargs, checked=True)


Series.str = property(StringMethods, doc="Vectorized string methods (``pandas.Series.str``).")
Index.str = property(StringMethods, doc="Vectorized string methods (``pandas.Index.str``).")
Series.dt = property(DatetimeMethods, doc="Datetime-like properties and methods (``pandas.Series.dt``).")
