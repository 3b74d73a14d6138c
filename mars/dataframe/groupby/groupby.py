"""``df.groupby(...)`` and ``s.groupby(...)``: lazy DataFrameGroupBy and SeriesGroupBy.

A groupby object holds the lazy frame, its lazy keys and a
:class:`~.keys.GroupSpec`; each method builds one operator. Metadata is
pandas' own: the same call on a small fake sample of the same dtypes (so
pandas raises its errors, for a missing column or a mean of strings, when
the expression is built).

>>> import mars.dataframe as md
>>> df = md.DataFrame({"k": [1, 2, 1], "v": [1.0, 2.0, 3.0]}, chunk_size=2)
>>> df.groupby("k").agg(total=("v", "sum")).to_pandas()["total"].to_dict()
{1: 4.0, 2: 2.0}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ...core.entity import Tileable, has_unknown
from ...core.tokenize import normalize
from ...tensor.core import TensorData
from ..core import DataFrame, PandasData, Series, as_pandas_data
from ..custom_reduction import CustomReduction
from ..datasource import from_pandas, from_tensor
from ..indexing import SelectColumns
from ..map import Slot
from ..meta import METAS, empty_meta, fake, signature
from .agg import GroupByAgg, keys_as_columns, sizes_as_frame
from .keys import ALIGNED, INDEX, VALUES, GroupSpec
from .named import call_on
from .plan import TREE_FUNCS, partials_of, tree_plan
from .scan import scannable
from .shuffle import round_trip_spec
from .transform import GroupByRows


class _KeyCollector:
    """Turns ``by`` into plain data: lazy and array keys become slots, each with its lazy data."""

    def __init__(self, data: PandasData):
        self.data = data
        self.keys: list[PandasData] = []
        self.modes: list[str] = []

    def _add(self, data: Any, mode: str) -> Slot:
        if mode != ALIGNED and not has_unknown(data.shape[:1]) and not has_unknown(self.data.shape[:1]) \
                and data.shape[0] != self.data.shape[0]:
            raise ValueError("Grouper and axis must be same length")
        self.keys.append(data)
        self.modes.append(mode)
        return Slot(len(self.keys) - 1)

    def convert(self, key: Any) -> Any:
        if isinstance(key, (Tileable, PandasData, TensorData)):
            data = key.data if isinstance(key, Tileable) else key
            if isinstance(data, TensorData):
                return self._add(from_tensor(data, kind="series").data, VALUES)
            if data.kind == "dataframe":
                raise ValueError("Grouper for '<class 'pandas.DataFrame'>' not 1-dimensional")
            if data.kind == "index":
                return self._add(data, INDEX)
            label = _column_selected(self.data, data)
            return label if label is not None else self._add(data, ALIGNED)
        if isinstance(key, pd.Series):
            return self._add(from_pandas(key).data, ALIGNED)
        if isinstance(key, pd.Index):
            return self._add(from_pandas(key).data, INDEX)
        if isinstance(key, (np.ndarray, pd.api.extensions.ExtensionArray)):
            return self._add(from_pandas(pd.Series(key)).data, VALUES)
        if isinstance(key, pd.Grouper):
            raise NotImplementedError("groupby with pd.Grouper is not supported; group by a column or a computed key")
        return key

    def by(self, by: Any) -> Any:
        if type(by) is list:
            if _is_one_array(self.data, by):
                return self.convert(np.asarray(by))
            return [self.convert(b) for b in by]
        return self.convert(by)


def _column_selected(obj: PandasData, key: PandasData) -> Any:
    """The label when ``key`` is column ``label`` of ``obj`` or of the frame ``obj`` selects from.

    pandas leaves such a column out of results (it holds the same values as the key).
    """
    op = key.op
    if obj.kind != "dataframe" or not isinstance(op, SelectColumns) or op.by_position or not op.inputs \
            or isinstance(op.columns, list):
        return None
    label = op.columns
    if label in obj.meta.columns and _selection_root(op.inputs[0]) is _selection_root(obj):
        return label
    return None


def _selection_root(data: PandasData) -> PandasData:
    while isinstance(data.op, SelectColumns) and not data.op.by_position and data.op.inputs:
        data = data.op.inputs[0]
    return data


def _is_one_array(data: PandasData, by: list) -> bool:
    """pandas' rule: a list of scalars as long as the frame, not all labels, is one array key."""
    if has_unknown(data.shape[:1]) or len(by) != data.shape[0]:
        return False
    if any(isinstance(b, (list, tuple, np.ndarray, pd.Series, pd.Index, Tileable, PandasData)) or callable(b)
           or isinstance(b, dict) for b in by):
        return False
    names = set(data.meta.index.names)
    columns = data.meta.columns if isinstance(data.meta, pd.DataFrame) else ()
    return not all(b in columns or b in names for b in by)


def groupby(obj: Any, by: Any = None, level: Any = None, as_index: bool = True, sort: bool = True,
            group_keys: bool = True, observed: bool = True, dropna: bool = True) -> Any:
    """``obj.groupby(...)``: a lazy DataFrameGroupBy or SeriesGroupBy.

    ``by`` is a column label, a list of them, a lazy Series aligned on the
    index, a pandas Series, an array of the frame's length, a function or a
    mapping of index labels; or ``level=`` names index levels.

    >>> import mars.dataframe as md
    >>> s = md.Series([1, 2, 3, 4], chunk_size=2)
    >>> s.groupby([0, 1, 0, 1]).sum().to_pandas().tolist()
    [4, 6]
    """
    data = as_pandas_data(obj)
    if by is None and level is None:
        raise TypeError("You have to supply one of 'by' and 'level'")
    collector = _KeyCollector(data)
    spec = GroupSpec(by=collector.by(by) if by is not None else None, level=level, modes=tuple(collector.modes),
                     sort=bool(sort), dropna=bool(dropna), as_index=bool(as_index), observed=bool(observed),
                     group_keys=bool(group_keys))
    cls = DataFrameGroupBy if data.kind == "dataframe" else SeriesGroupBy
    gb = cls(data, collector.keys, spec)
    gb._pandas(sample=False)  # pandas' errors for bad keys, now
    return gb


class GroupBy:
    """What DataFrameGroupBy and SeriesGroupBy share."""

    def __init__(self, data: PandasData, keys: list, spec: GroupSpec):
        self._data = data
        self._keys = list(keys)
        self._spec = spec

    def __repr__(self) -> str:
        return f"<mars {type(self).__name__} of {self._data.kind} {self._data.key[:8]}>"

    # ----------------------------------------------------------------- pandas on stand-ins
    def _pandas(self, sample: bool = True, select: bool = True, columns: list | None = None,
                numbered: bool = False, **overrides: Any) -> Any:
        """pandas' groupby of a stand-in of the data: a fake sample, or the empty metas.

        The sample has two groups of three rows (a group of one row would give
        NaN where real groups do not, e.g. a ``min_count``, and change dtypes).
        ``columns`` (the keys and the columns a call reads) narrow the stand-in:
        faking and grouping the others costs time and changes nothing.
        ``numbered``: the sample's rows are labelled ``0..5`` (its own labels repeat).
        """
        rows = _SAMPLE_ROWS if sample else slice(0, 0)
        meta = self._data.meta if columns is None else self._data.meta[columns]
        part = _stand_in(meta, rows)
        if numbered and sample:
            part.index = pd.RangeIndex(len(rows), name=meta.index.name)
        keys = []
        for data, mode in zip(self._keys, self._spec.modes):
            key = _stand_in(data.meta, rows)
            keys.append(key.set_axis(part.index, axis=0) if mode == ALIGNED else key)
        return self._spec.groupby(part, keys, select=select, **overrides)

    def _infer(self, fn: Callable, user: bool = False, columns: list | None = None, **overrides: Any) -> Any:
        """The meta of ``fn(pandas groupby)``; a user's function may fail on the sample, then empty input is tried."""
        try:
            return empty_meta(fn(self._pandas(sample=True, columns=columns, **overrides)))
        except Exception as e:
            if not user:
                raise
            error = e
        try:
            return empty_meta(fn(self._pandas(sample=False, columns=columns, **overrides)))
        except Exception:  # noqa: BLE001 - the sample's error is the one to report
            raise error from None

    def _values_meta(self, columns: list | None = None) -> Any:
        # what pandas aggregates: the selection without the key columns (pandas has no public name for it)
        return self._pandas(sample=False, as_index=True, columns=columns)._obj_with_exclusions

    def _key_labels(self) -> list:
        """Which grouping levels are columns of the frame (by label)."""
        spec = self._spec
        if spec.by is None or self._data.kind != "dataframe":
            return []
        items = spec.by if type(spec.by) is list else [spec.by]
        columns = self._data.meta.columns
        return [i for i, b in enumerate(items) if not isinstance(b, Slot) and _hashable(b) and b in columns]

    def _n_levels(self) -> int:
        return self._pandas(sample=False, select=False, as_index=True).size().index.nlevels

    def _travel_columns(self, extra: list | None = None) -> list | None:
        """Columns a shuffle moves: the key columns and those the call reads (None: all)."""
        if self._data.kind != "dataframe":
            return None
        spec = self._spec
        if spec.selection:
            used = spec.selection[0] if isinstance(spec.selection[0], list) else [spec.selection[0]]
        elif extra is not None:
            used = list(extra)
        else:
            return None
        items = spec.by if type(spec.by) is list else [spec.by]
        labels = [items[i] for i in self._key_labels()]
        columns = self._data.meta.columns
        wanted = set()
        for c in labels + used:
            if _hashable(c) and c in columns:
                wanted.add(c)
        kept = [c for c in columns if c in wanted]
        return None if len(kept) == len(columns) or columns.has_duplicates else kept

    def _new(self, op: Any, meta: Any, same_rows: bool = False) -> Any:
        rows = self._data.shape[0] if same_rows else np.nan
        shape = (rows, meta.shape[1]) if isinstance(meta, pd.DataFrame) else (rows,)
        partitioning = self._data.partitioning if same_rows else None
        return op.new_pandas([self._data] + self._keys, meta, shape, partitioning=partitioning)

    # ----------------------------------------------------------------- builders
    def _aggregate(self, method: str, args: tuple = (), kwargs: dict | None = None, user: bool = False,
                   extra: list | None = None) -> Any:
        kwargs = dict(kwargs or {})
        columns = self._travel_columns(extra)
        # the columns a dict or named aggregation reads are all its result depends on
        read = columns if extra is not None else None
        spec = self._spec
        metas = METAS.get(self._metas_key(method, args, kwargs, user, read),
                          lambda: self._agg_metas(method, args, kwargs, user, read))
        meta, index_meta, values_meta = metas
        plan = layout = None
        if values_meta is not None:
            plan = tree_plan(method, args, kwargs, values_meta, index_meta)
            if not spec.as_index:
                layout = sizes_as_frame if method == "size" else keys_as_columns
        op = GroupByAgg(spec=spec, call=(method, args, kwargs), plan=plan,
                        partials=partials_of(plan) if plan else None, index_meta=index_meta, layout=layout,
                        columns=columns)
        data = self._source_reading(columns)
        shape = (np.nan, meta.shape[1]) if isinstance(meta, pd.DataFrame) else (np.nan,)
        return op.new_pandas([data] + self._keys, meta, shape)

    def _agg_metas(self, method: str, args: tuple, kwargs: dict, user: bool, read: list | None) -> tuple:
        """The aggregation's meta, with the index meta and the values' meta its tree plan reads (or None, None)."""
        meta = self._infer(lambda g: call_on(g, method, args, kwargs), user=user, columns=read)
        if user or not isinstance(meta, (pd.DataFrame, pd.Series)):
            return meta, None, None
        index_meta = meta if self._spec.as_index else self._infer(lambda g: call_on(g, method, args, kwargs),
                                                                  as_index=True, columns=read)
        return meta, index_meta, self._values_meta(read)

    def _metas_key(self, method: str, args: tuple, kwargs: dict, user: bool, read: list | None) -> tuple | None:
        """What :meth:`_agg_metas` depends on, or None where it cannot be told exactly (a user's function)."""
        if user:
            return None
        sigs = (signature(self._data.meta),) + tuple(signature(k.meta) for k in self._keys)
        if None in sigs:
            return None
        return ("groupby-agg", sigs, normalize((self._spec, method, args, kwargs, read)))

    def _source_reading(self, columns: list | None) -> PandasData:
        """The data, or its source reading only ``columns`` when it can (a file read skips the others)."""
        hook = getattr(self._data.op, "with_columns", None)
        if columns is None or hook is None or self._keys:
            return self._data
        pruned = hook(list(columns))
        if pruned is None:
            return self._data
        pruned = as_pandas_data(pruned)
        return pruned if list(pruned.meta.columns) == list(columns) else self._data

    def _rows(self, method: str, args: tuple = (), kwargs: dict | None = None, user: bool = False,
              same_rows: bool = True) -> Any:
        kwargs = dict(kwargs or {})
        meta = self._infer(lambda g: getattr(g, method)(*args, **kwargs), user=user)
        plan = agg_meta = None
        if method == "transform" and isinstance(args[0], str) and args[0] in TREE_FUNCS and len(args) == 1:
            func = args[0]
            agg_meta = self._infer(lambda g: getattr(g, func)(**kwargs), as_index=True)
            plan = tree_plan(func, (), kwargs, self._values_meta(), agg_meta)
        rt_spec, travel = round_trip_spec(self._spec, self._key_labels(), self._n_levels())
        scan = not user and scannable(method, args, kwargs, self._values_meta())
        op = GroupByRows(spec=self._spec, call=(method, args, kwargs), plan=plan,
                         partials=partials_of(plan) if plan else None, agg_meta=agg_meta, rt_spec=rt_spec,
                         travel=travel, columns=self._travel_columns(), same_rows=same_rows, scan=scan)
        return self._new(op, meta, same_rows=same_rows)

    # ----------------------------------------------------------------- the API
    def agg(self, func: Any = None, *args: Any, **kwargs: Any) -> Any:
        """Aggregate with a function name, a list, a dict per column, or named aggregations.

        >>> import mars.dataframe as md
        >>> df = md.DataFrame({"k": [1, 1, 2], "v": [1.0, 2.0, 3.0]}, chunk_size=2)
        >>> df.groupby("k").agg({"v": ["sum", "mean"]}).to_pandas().to_dict()
        {('v', 'sum'): {1: 3.0, 2: 3.0}, ('v', 'mean'): {1: 1.5, 2: 3.0}}
        """
        extra = _agg_columns(func, kwargs)
        return self._aggregate("agg", (func,) + args, kwargs, user=_has_callable(func, kwargs), extra=extra)

    aggregate = agg

    def size(self) -> Any:
        """Rows per group (``size`` column with ``as_index=False``)."""
        return self._aggregate("size")

    def transform(self, func: Any, *args: Any, **kwargs: Any) -> Any:
        """``func`` per group, broadcast to the group's rows; the result keeps the input's rows and partitions.

        >>> import mars.dataframe as md
        >>> df = md.DataFrame({"k": [1, 1, 2], "v": [1.0, 2.0, 3.0]}, chunk_size=2)
        >>> df.groupby("k").v.transform("sum").to_pandas().tolist()
        [3.0, 3.0, 3.0]
        """
        return self._rows("transform", (func,) + args, kwargs, user=not isinstance(func, str))

    def apply(self, func: Callable, *args: Any, **kwargs: Any) -> Any:
        """``func`` per group (whole groups meet in one partition after a shuffle on the keys).

        >>> import mars.dataframe as md
        >>> df = md.DataFrame({"k": [1, 1, 2], "v": [1.0, 2.0, 3.0]}, chunk_size=2)
        >>> df.groupby("k").apply(lambda g: g.v.max() - g.v.min()).to_pandas().tolist()
        [1.0, 0.0]
        """
        if not self._spec.group_keys and self._transform_like(func, args, kwargs):
            return self._rows("apply", (func,) + args, kwargs, user=True, same_rows=False)
        return self._aggregate("apply", (func,) + args, kwargs, user=True)

    def _transform_like(self, func: Callable, args: tuple, kwargs: dict) -> bool:
        # pandas puts a function's results back in row order when each keeps its group's index; it cannot
        # when labels repeat, as the sample's do unless the data's index is a range
        g = self._pandas(sample=True)
        if not g.obj.index.is_unique:
            g = self._pandas(sample=True, numbered=True)
        try:
            result = g.apply(func, *args, **kwargs)
        except Exception:  # noqa: BLE001 - the real call reports it
            return False
        return isinstance(result, (pd.DataFrame, pd.Series)) and result.index.equals(g.obj.index)

    def pipe(self, func: Callable, *args: Any, **kwargs: Any) -> Any:
        """``func(self, *args, **kwargs)``."""
        return func(self, *args, **kwargs)

    def filter(self, func: Callable, dropna: bool = True, *args: Any, **kwargs: Any) -> Any:
        """The rows of groups for which ``func(group)`` is true, in their original order."""
        return self._rows("filter", (func, dropna) + args, kwargs, user=True, same_rows=False)

    def head(self, n: int = 5) -> Any:
        """The first ``n`` rows of each group, in their original order."""
        return self._rows("head", (n,), same_rows=False)

    def tail(self, n: int = 5) -> Any:
        """The last ``n`` rows of each group, in their original order."""
        return self._rows("tail", (n,), same_rows=False)

    def nth(self, n: Any, dropna: Any = None) -> Any:
        """The ``n``-th row(s) of each group, in their original order."""
        return self._rows("nth", (n, dropna), same_rows=False)

    def cumcount(self, ascending: bool = True) -> Any:
        """Each row's number within its group (from 0)."""
        return self._rows("cumcount", (ascending,))


_SAMPLE_ROWS = [0, 1, 0, 1, 0, 1]


def _stand_in(meta: Any, rows: Any) -> Any:
    if isinstance(rows, slice):
        return meta
    sample = fake(meta)
    sample = sample[rows] if isinstance(sample, pd.Index) else sample.take(rows)
    if isinstance(meta, (pd.DataFrame, pd.Series)) and isinstance(meta.index, pd.RangeIndex):
        sample.index = pd.RangeIndex(len(rows), name=meta.index.name)
    return sample


def _hashable(x: Any) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


def _has_callable(func: Any, kwargs: dict) -> bool:
    def walk(f: Any) -> bool:
        if isinstance(f, (str, CustomReduction)):  # a CustomReduction runs in stages, like pandas' named functions
            return False
        if isinstance(f, dict):
            return any(walk(v) for v in f.values())
        if isinstance(f, (list, tuple)):
            return any(walk(v) for v in f)
        return f is not None
    return walk(func) or any(walk(v) for v in kwargs.values())


def _agg_columns(func: Any, kwargs: dict) -> list | None:
    """The columns a dict or named aggregation reads (None: all selected)."""
    if isinstance(func, dict):
        return list(func)
    if func is None and kwargs and all(isinstance(v, tuple) and len(v) == 2 for v in kwargs.values()):
        return [v[0] for v in kwargs.values()]
    return None


def _agg_method(name: str, row_wise: bool = False) -> Callable:
    def method(self: GroupBy, *args: Any, **kwargs: Any) -> Any:
        if row_wise:
            return self._rows(name, args, kwargs)
        return self._aggregate(name, args, kwargs)

    method.__name__ = name
    kind = "per row (the input's rows and partitions)" if row_wise else "per group"
    method.__doc__ = f"pandas' ``{name}`` {kind}; arguments as pandas takes them."
    return method


#: aggregations (one row per group)
_AGGREGATIONS = ("sum", "prod", "mean", "median", "count", "min", "max", "std", "var", "sem", "first", "last",
                 "nunique", "quantile", "any", "all", "idxmax", "idxmin", "describe", "ohlc")
#: functions giving one row per input row
_ROW_WISE = ("cumsum", "cumprod", "cummax", "cummin", "shift", "diff", "rank", "pct_change", "ffill", "bfill")

for _name in _AGGREGATIONS:
    setattr(GroupBy, _name, _agg_method(_name))
for _name in _ROW_WISE:
    setattr(GroupBy, _name, _agg_method(_name, row_wise=True))


class DataFrameGroupBy(GroupBy):
    """A lazy ``pandas.core.groupby.DataFrameGroupBy``; ``gb[col]`` / ``gb[[cols]]`` select columns."""

    def __getitem__(self, key: Any) -> Any:
        if self._spec.selection:
            raise IndexError(f"Column(s) {self._spec.selection[0]} already selected")
        self._pandas(sample=False)[key]  # pandas' KeyError for missing columns
        spec = self._spec.replace(selection=(key,))
        cls = DataFrameGroupBy if isinstance(key, list) else SeriesGroupBy
        return cls(self._data, self._keys, spec)

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("_") and not self._spec.selection and name in self._data.meta.columns:
            return self[name]
        raise AttributeError(f"'DataFrameGroupBy' object has no attribute {name!r}")


class SeriesGroupBy(GroupBy):
    """A lazy ``pandas.core.groupby.SeriesGroupBy``."""

    def value_counts(self, *args: Any, **kwargs: Any) -> Any:
        """Counts of each value per group."""
        return self._aggregate("value_counts", args, kwargs)

    def unique(self) -> Any:
        """The distinct values of each group."""
        return self._aggregate("unique")


def _df_groupby(self: DataFrame, by: Any = None, level: Any = None, as_index: bool = True, sort: bool = True,
                group_keys: bool = True, observed: bool = True, dropna: bool = True) -> DataFrameGroupBy:
    return groupby(self, by, level, as_index, sort, group_keys, observed, dropna)


def _series_groupby(self: Series, by: Any = None, level: Any = None, as_index: bool = True, sort: bool = True,
                    group_keys: bool = True, observed: bool = True, dropna: bool = True) -> SeriesGroupBy:
    return groupby(self, by, level, as_index, sort, group_keys, observed, dropna)


_df_groupby.__doc__ = groupby.__doc__
_series_groupby.__doc__ = groupby.__doc__
DataFrame.groupby = _df_groupby
Series.groupby = _series_groupby
