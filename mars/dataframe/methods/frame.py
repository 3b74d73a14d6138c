"""Partition-wise and metadata methods: ``query``/``eval``, ``select_dtypes``, ``filter``, ``pipe``,
``squeeze``, ``take``, ``truncate``, level methods, ``set_axis``, ``get``, ``pop``, ``size``,
``memory_usage``, ``combine_first``, ``update``, ``equals``.

Column-wise choices (``select_dtypes``, ``filter`` on columns) are decided on
the metadata; row-wise work runs per partition. Expressions of ``query`` and
``eval`` are evaluated by pandas on each partition, with the ``@names`` they
use taken from the caller's frame when they are built.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ...core.entity import has_unknown
from ...core.tiling import as_data
from ..basic import _relabelled
from ..core import DataFrame, Series
from ..indexing import iloc_columns
from ..map import map_partitions
from ..reductions import Reducer, as_frame, run_reducer
from ..rows import rechunk_rows
from ..selection import rows_arg_map

__all__: list[str] = []

_NO_DEFAULT = pd.api.extensions.no_default


# ----------------------------------------------------------------- query / eval
def _caller_names(expr: str, depth: int) -> dict:
    """The values of the ``@name``s in ``expr``, from the frame ``depth`` calls up."""
    frame = sys._getframe(depth + 1)
    out = {}
    for name in set(re.findall(r"@([A-Za-z_]\w*)", expr)):
        if name in frame.f_locals:
            out[name] = frame.f_locals[name]
        elif name in frame.f_globals:
            out[name] = frame.f_globals[name]
    return out


def _query_part(part: pd.DataFrame, expr: str, names: dict, kwargs: dict) -> pd.DataFrame:
    return part.query(expr, local_dict=names, **kwargs)


def _eval_part(part: pd.DataFrame, expr: str, names: dict, kwargs: dict) -> Any:
    return part.eval(expr, local_dict=names, **kwargs)


def _query(self: DataFrame, expr: str, *, inplace: Any = _NO_DEFAULT, **kwargs: Any) -> Any:
    """Rows where the boolean expression ``expr`` holds, evaluated per partition, as ``pandas.DataFrame.query``.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 5, 9]}, chunk_size=2).query("a > 2").to_pandas()["a"].tolist()
    [5, 9]
    """
    if not isinstance(expr, str):
        raise ValueError(f"expr must be a string to be evaluated, {type(expr)} given")  # noqa: TRY004 - pandas' error
    names = {**(kwargs.pop("local_dict", None) or {}), **_caller_names(expr, 1 + kwargs.pop("level", 0))}
    result = map_partitions(_query_part, self, expr, names, kwargs, same_rows=False)
    if inplace is True:
        self.data = as_data(result)
        return None
    return result


def _df_eval(self: DataFrame, expr: str, *, inplace: Any = _NO_DEFAULT, **kwargs: Any) -> Any:
    """``expr`` evaluated per partition, as ``pandas.DataFrame.eval``; assignments (``"c = a + b"``) add columns.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 2], "b": [3, 4]}, chunk_size=1).eval("c = a + b").to_pandas()["c"].tolist()
    [4, 6]
    """
    names = {**(kwargs.pop("local_dict", None) or {}), **_caller_names(expr, 1 + kwargs.pop("level", 0))}
    result = map_partitions(_eval_part, self, expr, names, kwargs)
    if inplace is True:
        if not isinstance(result, DataFrame):
            raise ValueError("Cannot operate inplace if there is no assignment")
        self.data = as_data(result)
        return None
    return result


def _top_eval(names: list, expr: str, scope: dict, kwargs: dict, *parts: Any) -> Any:
    return pd.eval(expr, local_dict={**scope, **dict(zip(names, parts))}, **kwargs)


def eval(expr: str, local_dict: dict | None = None, global_dict: dict | None = None, level: int = 0,
         **kwargs: Any) -> Any:
    """``pandas.eval`` of an expression over lazy DataFrames/Series, evaluated per partition.

    Names in ``expr`` are looked up in ``local_dict``/``global_dict`` or the
    caller's frame; lazy objects among them are aligned by row.

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"a": [1, 2], "b": [3, 4]}, chunk_size=1)
    >>> md.eval("df.a * 2 + df.b").to_pandas().tolist()
    [5, 8]
    """
    frame = sys._getframe(level + 1)
    scope = {**(global_dict if global_dict is not None else frame.f_globals),
             **(local_dict if local_dict is not None else frame.f_locals)}
    used = set(re.findall(r"[A-Za-z_]\w*", expr))
    lazy = [n for n in sorted(used) if isinstance(scope.get(n), (DataFrame, Series))]
    if not lazy:
        return pd.eval(expr, local_dict=scope, **kwargs)
    plain = {n: scope[n] for n in used if n in scope and n not in lazy and not callable(scope[n])}
    return map_partitions(_top_eval, lazy, expr, plain, kwargs, *[scope[n] for n in lazy])


# ----------------------------------------------------------------- column choices on the metadata
def _columns_at(self: DataFrame, positions: list) -> DataFrame:
    return iloc_columns(self, positions)


def _select_dtypes(self: DataFrame, include: Any = None, exclude: Any = None) -> DataFrame:
    """The columns of the dtypes in ``include`` and not in ``exclude``, as pandas.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1], "b": ["x"]}).select_dtypes("number").columns.tolist()
    ['a']
    """
    chosen = self.meta.set_axis(range(self.meta.shape[1]), axis=1).select_dtypes(include=include, exclude=exclude)
    return _columns_at(self, list(chosen.columns))


def _filter(self: Any, items: Any = None, like: Any = None, regex: Any = None, axis: Any = None) -> Any:
    """Columns (or rows, ``axis=0``) whose labels are in ``items``, contain ``like`` or match ``regex``.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"ab": [1], "b": [2]}).filter(like="a").columns.tolist()
    ['ab']
    """
    if sum(x is not None for x in (items, like, regex)) != 1:
        raise TypeError("Keyword arguments `items`, `like`, or `regex` are mutually exclusive")
    if axis is None:
        axis = "columns" if isinstance(self, DataFrame) else "index"
    if self.meta._get_axis_number(axis) == 1:
        chosen = self.meta.filter(items=items, like=like, regex=regex, axis=1)
        if items is not None:
            return self[list(chosen.columns)]
        positions = [i for i, c in enumerate(self.meta.columns) if c in set(chosen.columns)]
        return _columns_at(self, positions)
    if items is not None:
        raise NotImplementedError("filter(items=..., axis=0) reorders rows by the items; use .loc[items]")
    return map_partitions("filter", self, like=like, regex=regex, axis=0, same_rows=False)


def _pipe(self: Any, func: Callable | tuple, *args: Any, **kwargs: Any) -> Any:
    """``func(self, *args, **kwargs)``; with ``(func, name)``, self is passed as keyword ``name``.

    >>> import mars.dataframe as md
    >>> md.Series([1, 2]).pipe(lambda s, k: s * k, 3).to_pandas().tolist()
    [3, 6]
    """
    if isinstance(func, tuple):
        func, target = func
        if target in kwargs:
            raise ValueError(f"{target} is both the pipe target and a keyword argument")
        kwargs[target] = self
        return func(*args, **kwargs)
    return func(self, *args, **kwargs)


def _rows_known(self: Any) -> int:
    if has_unknown(self.shape[:1]):
        self.execute()
    return int(self.shape[0])


def _squeeze(self: Any, axis: Any = None) -> Any:
    """One-column frames as a Series, one-row objects as a scalar or row, as pandas.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 2]}).squeeze().to_pandas().tolist()
    [1, 2]
    """
    axes = [0, 1] if axis is None else [self.meta._get_axis_number(axis)]
    out = self
    if isinstance(self, DataFrame) and 1 in axes and self.meta.shape[1] == 1:
        out = iloc_columns(self, 0)
    if 0 in axes and _rows_known(out) == 1:
        return out.iloc[0]
    return out


def _take(self: Any, indices: Any, axis: Any = 0, **kwargs: Any) -> Any:
    """Rows (or columns, ``axis=1``) at the given positions, as pandas.

    >>> import mars.dataframe as md
    >>> md.Series([5, 6, 7], chunk_size=2).take([2, 0]).to_pandas().tolist()
    [7, 5]
    """
    if self.meta._get_axis_number(axis) == 1:
        return self.iloc[:, list(indices)]
    return self.iloc[list(indices) if not isinstance(indices, slice) else indices]


def _truncate(self: Any, before: Any = None, after: Any = None, axis: Any = None, copy: Any = _NO_DEFAULT) -> Any:
    """Rows (or columns) with labels between ``before`` and ``after`` of a sorted axis, as pandas.

    >>> import mars.dataframe as md
    >>> md.Series([1, 2, 3, 4], chunk_size=2).truncate(1, 2).to_pandas().tolist()
    [2, 3]
    """
    if before is not None and after is not None and before > after:
        raise ValueError(f"Truncate: {after} must be after {before}")
    if axis is not None and self.meta._get_axis_number(axis) == 1:
        return self.loc[:, before:after]
    return self.loc[before:after]


def _level_method(name: str) -> Callable:
    def method(self: Any, *args: Any, axis: Any = 0, **kwargs: Any) -> Any:
        getattr(self.meta, name)(*args, axis=axis, **kwargs)  # pandas' errors, now
        result = map_partitions(name, self, *args, axis=axis, **kwargs)
        return _relabelled(result) if self.meta._get_axis_number(axis) == 0 else result

    method.__name__ = name
    method.__doc__ = f"""``{name}`` of the index (or of the columns, ``axis=1``), per partition, as pandas.

    >>> import mars.dataframe as md, pandas as pd
    >>> s = md.Series([1, 2], index=pd.MultiIndex.from_tuples([("a", 1), ("b", 2)], names=["x", "y"]))
    >>> s.{name}({'"x"' if name == "droplevel" else '[1, 0]' if name == "reorder_levels" else ''}).to_pandas().index.names
    {"['y']" if name == "droplevel" else "['y', 'x']"}
    """
    return method


def _set_piece(part: Any, labels: Any) -> Any:
    return part.set_axis(labels, axis=0)


def _set_axis(self: Any, labels: Any, *, axis: Any = 0, copy: Any = _NO_DEFAULT) -> Any:
    """New row labels (or column labels, ``axis=1``), as ``pandas.DataFrame.set_axis``.

    >>> import mars.dataframe as md
    >>> md.Series([1, 2], chunk_size=1).set_axis(["a", "b"]).to_pandas().index.tolist()
    ['a', 'b']
    """
    if self.meta._get_axis_number(axis) == 1:
        new = self.meta.set_axis(labels, axis=1).columns  # pandas' length error, now
        return map_partitions("set_axis", self, new, axis=1)
    index = labels if isinstance(labels, pd.Index) else pd.Index(labels)
    return _relabelled(rows_arg_map(self, _set_piece, (), index))


def _get(self: DataFrame, key: Any, default: Any = None) -> Any:
    """Column(s) ``key``, or ``default`` when missing, as pandas.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1]}).get("b", "none")
    'none'
    """
    try:
        self.meta[key]
    except (KeyError, ValueError, IndexError, TypeError):
        return default
    return self[key]


def _pop(self: DataFrame, item: Any) -> Series:
    """Column ``item``, removed from this frame (which is rebound), as pandas.

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"a": [1], "b": [2]})
    >>> df.pop("a").to_pandas().tolist(), df.columns.tolist()
    ([1], ['b'])
    """
    result = self[item]
    self.data = as_data(self.drop(columns=item))
    return result


def _size(self: Any) -> int:
    """The number of values (rows × columns): computes the row count first when unknown."""
    rows = _rows_known(self)
    return rows * (self.meta.shape[1] if isinstance(self, DataFrame) else 1)


class MemoryUsage(Reducer):
    """Bytes per column (and of the index) summed over partitions."""

    index: bool
    deep: bool
    scalar: bool

    def chunk(self, part: Any) -> Any:
        kw = {"index": False, "deep": self.deep}
        values = as_frame(part).memory_usage(**kw) if not self.scalar else part.memory_usage(**kw)
        index = part.index.memory_usage(deep=self.deep) if not isinstance(part.index, pd.RangeIndex) else 0
        return values, index, isinstance(part.index, pd.RangeIndex)

    def combine(self, partials: list) -> tuple:
        return (sum(p[0] for p in partials), sum(p[1] for p in partials), all(p[2] for p in partials))

    def agg(self, partials: list) -> Any:
        values, index, ranges = self.combine(partials)
        if ranges:  # the whole's RangeIndex is one range, whatever its length
            index = pd.RangeIndex(0).memory_usage(deep=self.deep)
        if self.scalar:
            return np.int64(values + (index if self.index else 0))
        values = values.astype(np.int64)
        if self.index:
            return pd.concat([pd.Series([index], index=["Index"]), values])
        return values


def _memory_usage(self: Any, index: bool = True, deep: bool = False) -> Any:
    """Bytes used per column (and by the index), summed over partitions, as pandas.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 2]}, chunk_size=1).memory_usage(index=False).to_pandas().tolist()
    [16]
    """
    scalar = isinstance(self, Series)
    sample = self.meta.memory_usage(index=index, deep=deep)
    return run_reducer(as_data(self), MemoryUsage(index=bool(index), deep=bool(deep), scalar=scalar), sample)


def _combine_first(self: Any, other: Any) -> Any:
    """Values of this object, holes filled from ``other`` (rows aligned by label), as pandas.

    >>> import mars.dataframe as md
    >>> md.Series([1.0, None]).combine_first(md.Series([5.0, 6.0])).to_pandas().tolist()
    [1.0, 6.0]
    """
    return map_partitions("combine_first", self, other)


def _update_part(part: pd.DataFrame, other: Any, kwargs: dict) -> pd.DataFrame:
    out = part.copy()
    out.update(other, **kwargs)
    return out


def _update(self: Any, other: Any, join: str = "left", overwrite: bool = True, filter_func: Any = None,
            errors: str = "ignore") -> None:
    """Values of ``other`` (aligned by label) written into this object in place (it is rebound), as pandas.

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"a": [1.0, 2.0]})
    >>> df.update(md.DataFrame({"a": [None, 9.0]}))
    >>> df.to_pandas()["a"].tolist()
    [1.0, 9.0]
    """
    if join != "left":
        raise NotImplementedError("Only left join is supported")
    kwargs = {"overwrite": overwrite, "filter_func": filter_func, "errors": errors}
    if isinstance(self, Series):
        kwargs = {}
    result = map_partitions(_update_part, self, other, kwargs, how="left")
    self.data = as_data(result)


def _part_equals(a: Any, b: Any) -> pd.Series:
    return pd.Series([a.equals(b)])


def _equals(self: Any, other: Any) -> bool:
    """Whether ``other`` holds the same values, labels and dtypes (runs both), as pandas.

    >>> import mars.dataframe as md
    >>> md.Series([1, 2], chunk_size=1).equals(md.Series([1, 2]))
    True
    """
    if not isinstance(other, type(self)):
        return False
    if isinstance(self, DataFrame):
        if not (self.meta.columns.equals(other.meta.columns) and list(self.meta.dtypes) == list(other.meta.dtypes)):
            return False
    elif self.meta.dtype != other.meta.dtype:
        return False
    rows, other_rows = _rows_known(self), _rows_known(other)
    if rows != other_rows:
        return False
    splits = [int(n) for n in as_data(self).nsplits[0]] if as_data(self).nsplits else None
    if splits is None:
        self.execute()
        splits = [int(n) for n in as_data(self).nsplits[0]]
    cut = rechunk_rows(other, splits)
    as_data(cut).partitioning = as_data(self).partitioning  # the same rows, chunk by chunk
    return bool(map_partitions(_part_equals, self, cut, same_rows=False).all().fetch())


for _cls in (DataFrame, Series):
    _cls.filter = _filter
    _cls.pipe = _pipe
    _cls.squeeze = _squeeze
    _cls.take = _take
    _cls.truncate = _truncate
    _cls.droplevel = _level_method("droplevel")
    _cls.reorder_levels = _level_method("reorder_levels")
    _cls.swaplevel = _level_method("swaplevel")
    _cls.set_axis = _set_axis
    _cls.size = property(_size)
    _cls.memory_usage = _memory_usage
    _cls.combine_first = _combine_first
    _cls.update = _update
    _cls.equals = _equals
DataFrame.query = _query
DataFrame.eval = _df_eval
DataFrame.select_dtypes = _select_dtypes
DataFrame.get = _get
DataFrame.pop = _pop
