"""Everyday methods: dtypes, labels, missing values, conditions, sampling, conversions.

Most are one pandas call per partition (``astype``, ``rename``, ``isna``,
``replace``, ``where``...). The rest need something across partitions:

- ``reset_index`` numbers rows across partitions: the partitions' row counts
  give each partition its offset;
- ``ffill``/``bfill`` carry the last (first) valid values from partition to
  partition through a chain of small "edge" chunks, so partitions still fill
  in parallel;
- ``sample`` draws how many rows each partition gives (the law of a uniform
  sample), then samples within each partition;
- ``drop``/``rename`` of index labels with ``errors="raise"`` check that the
  labels exist somewhere, by a small reduction every partition waits for;
- ``astype("category")`` and ``dropna(axis=1)`` need data to know their
  output's dtypes or columns: they compute that when they are built.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Iterator

import numpy as np
import pandas as pd
from pandas.api.types import is_dict_like, is_list_like

from ..core.entity import Tileable
from ..core.operator import Tiled
from ..core.tiling import as_data
from ..tensor.core import TensorOperator
from .core import (
    DataFrame, Index, PandasOperator, Series, chunk_index_of, chunk_shape_of, is_pandas_like, nsplits_of,
    row_splits, wrap,
)
from .datasource import from_pandas
from .indexing import iloc_columns, row_local
from .map import Whole, map_partitions
from .meta import empty_meta, fake
from .reduction import tree_reduce
from .rows import renumber_rows
from .selection import rows_arg_map

__all__: list[str] = []

_NO_DEFAULT = pd.api.extensions.no_default


def _given(**kwargs: Any) -> dict:
    """The keyword arguments a caller gave (pandas' ``no_default`` left out)."""
    return {k: v for k, v in kwargs.items() if v is not _NO_DEFAULT}


def _inplace(self: Any, result: Any, inplace: Any) -> Any:
    if inplace is True:
        self.data = as_data(result)
        return None
    return result


def _relabelled(result: Any) -> Any:
    """``result``, whose row labels changed, with a partitioning of its own.

    Objects sharing a partitioning token are combined chunk by chunk; after
    new labels, pandas would align by label instead, so the token must go.
    """
    as_data(result).partitioning = as_data(result).key
    return result


def _lazy_or_whole(value: Any) -> Any:
    """A pandas object as a lazy one-partition input every partition gets whole."""
    if isinstance(value, (pd.Series, pd.DataFrame)):
        return Whole(from_pandas(value, chunk_size=max(1, len(value))))
    return value


# ----------------------------------------------------------------- partition functions
def _call(part: Any, name: str, args: tuple, kwargs: dict) -> Any:
    return getattr(part, name)(*args, **kwargs)


@row_local
def _call_row_local(part: Any, name: str, args: tuple, kwargs: dict) -> Any:
    return getattr(part, name)(*args, **kwargs)


def _local(obj: Any, method: str, /, *args: Any, **kwargs: Any) -> Any:
    """Pandas ``method`` on every partition, marked row-local (``head`` can go below it).

    Arguments travel packed, so none can clash with ``map_partitions``' own
    (``how``, ``meta``).
    """
    return map_partitions(_call_row_local, obj, method, args, kwargs)


def _partitionwise(obj: Any, method: str, /, *args: Any, **kwargs: Any) -> Any:
    """Pandas ``method`` on every partition, which may drop rows."""
    return map_partitions(_call, obj, method, args, kwargs, same_rows=False)


@row_local
def _index_of(part: Any) -> pd.Index:
    return part.index


@row_local
def _set_axis(part: Any, labels: Any, axis: int) -> Any:
    return part.set_axis(labels, axis=axis)


# ----------------------------------------------------------------- astype
def _needs_categories(dtype: Any) -> bool:
    if isinstance(dtype, str):
        return dtype == "category"
    return isinstance(dtype, pd.CategoricalDtype) and dtype.categories is None


def _uniques(part: Any, columns: list) -> dict:
    if isinstance(part, pd.Series):
        return {None: part.drop_duplicates()}
    return {c: part[c].drop_duplicates() for c in columns}


def _merge_uniques(parts: list) -> dict:
    return {k: pd.concat([p[k] for p in parts]).drop_duplicates() for k in parts[0]}


def _categories(obj: Any, columns: list) -> dict:
    """The categories pandas would give each column (Series: key None), computed now."""
    merged = tree_reduce(obj, functools.partial(_uniques, columns=columns), _merge_uniques, _merge_uniques,
                         np.dtype(object)).fetch()
    return {k: v.astype("category").cat.categories for k, v in merged.items()}


def _with_categories(obj: Any, dtype: Any) -> Any:
    """``dtype`` with categories filled in where it asks for ``category`` without them."""
    if is_dict_like(dtype):
        wanted = [c for c, d in dtype.items() if _needs_categories(d)]
        if not wanted:
            return dtype
        cats = _categories(obj, wanted)
        return {c: pd.CategoricalDtype(cats[c], getattr(d, "ordered", False)) if c in cats else d for c, d in dtype.items()}
    if not _needs_categories(dtype):
        return dtype
    if isinstance(obj, DataFrame):
        cats = _categories(obj, list(obj.columns))
        return {c: pd.CategoricalDtype(cats[c], getattr(dtype, "ordered", False)) for c in obj.columns}
    return pd.CategoricalDtype(_categories(obj, [])[None], getattr(dtype, "ordered", False))


def _astype(self: Any, dtype: Any, copy: Any = _NO_DEFAULT, errors: str = "raise") -> Any:
    """Cast to ``dtype`` (one dtype, or a dict of column → dtype).

    ``"category"`` without categories takes them from the data: they are
    computed when this is called, so the result's dtype is known.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 2]}, chunk_size=1).astype({"a": "float32"}).dtypes["a"]
    dtype('float32')
    """
    if isinstance(self, Index):
        return map_partitions("astype", self, dtype)
    if is_dict_like(dtype) and isinstance(self, DataFrame):
        missing = [k for k in dtype if k not in self.meta.columns]
        if missing:
            raise KeyError("Only a column name can be used for the key in a dtype mappings argument. "
                           f"'{missing[0]}' not found in columns.")
    return _local(self, "astype", _with_categories(self, dtype), errors=errors)


# ----------------------------------------------------------------- labels
def _labels_found(part: Any, labels: list) -> np.ndarray:
    return pd.Index(labels).isin(part.index)


def _any_found(found: list) -> np.ndarray:
    return np.logical_or.reduce(found)


def _all_found(found: list, labels: list) -> bool:
    hit = _any_found(found)
    if not hit.all():
        raise KeyError(f"{[lb for lb, h in zip(labels, hit) if not h]} not found in axis")
    return True


def labels_check(obj: Any, labels: list) -> Any:
    """A lazy scalar that raises pandas' KeyError when some of ``labels`` are not in ``obj``'s index."""
    labels = list(labels)
    # partials, not bound methods: their labels are part of the key, so two checks never share a result
    return tree_reduce(obj, functools.partial(_labels_found, labels=labels), _any_found,
                       functools.partial(_all_found, labels=labels), np.dtype(bool))


def _checked(part: Any, name: str, kwargs: dict, check: Any) -> Any:
    return getattr(part, name)(**kwargs)


def _index_labels(mapper: Any) -> list | None:
    return list(mapper.keys()) if is_dict_like(mapper) else None


def _df_rename(self: DataFrame, mapper: Any = None, *, index: Any = None, columns: Any = None, axis: Any = None,
               copy: Any = _NO_DEFAULT, inplace: bool = False, level: Any = None, errors: str = "ignore") -> Any:
    """Rename columns or index labels with a mapping or a function (``errors="raise"``: all must exist).

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1]}).rename(columns={"a": "b"}).columns.tolist()
    ['b']
    """
    kw = dict(mapper=mapper, index=index, columns=columns, axis=axis, level=level)
    on_index = index if index is not None else (mapper if mapper is not None and axis in (None, 0, "index") else None)
    on_columns = columns if columns is not None else (mapper if axis in (1, "columns") else None)
    if errors == "raise" and on_columns is not None:
        self.meta.rename(columns=on_columns, level=level, errors="raise")
    labels = _index_labels(on_index) if errors == "raise" else None
    result = _rename_with_check(self, kw, labels)
    return _inplace(self, _relabelled(result) if on_index is not None else result, inplace)


def _rename_with_check(obj: Any, kw: dict, labels: list | None) -> Any:
    if labels:
        return map_partitions(_checked, obj, "rename", kw, labels_check(obj, labels))
    return _local(obj, "rename", **kw)


def _series_rename(self: Series, index: Any = None, *, axis: Any = None, copy: Any = _NO_DEFAULT,
                   inplace: bool = False, level: Any = None, errors: str = "ignore") -> Any:
    """A new name (a scalar), or index labels renamed (a mapping or function).

    >>> import mars.dataframe as md
    >>> md.Series([1, 2], name="a").rename("b").name
    'b'
    """
    labels = _index_labels(index) if errors == "raise" else None
    result = _rename_with_check(self, dict(index=index, level=level), labels)
    return _inplace(self, _relabelled(result) if callable(index) or is_dict_like(index) else result, inplace)


def _index_rename(self: Index, name: Any, *, inplace: bool = False) -> Any:
    return _inplace(self, _local(self, "rename", name), inplace)


def _drop(self: Any, labels: Any = None, *, axis: Any = 0, index: Any = None, columns: Any = None,
          level: Any = None, inplace: bool = False, errors: str = "raise") -> Any:
    """Drop columns, or rows by index label (``errors="raise"``: they must exist).

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1], "b": [2]}).drop(columns="a").columns.tolist()
    ['b']
    """
    if labels is not None:
        if index is not None or columns is not None:
            raise ValueError("Cannot specify both 'labels' and 'index'/'columns'")
        index, columns = (labels, None) if axis in (0, "index") else (None, labels)
    if index is None and columns is None:
        raise ValueError("Need to specify at least one of 'labels', 'index' or 'columns'")
    result = self
    if is_pandas_like(columns):
        columns = wrap(as_data(columns)).fetch()  # the columns must be known before running: the labels are computed
    if columns is not None:
        self.meta.drop(columns=columns, level=level, errors=errors)  # pandas' KeyError, now
        result = _local(result, "drop", columns=columns, level=level, errors=errors)
    if is_pandas_like(index):
        return _inplace(self, wrap(as_data(_drop_lazy_labels(self, result, index, level, errors))), inplace)
    if index is not None:
        kw = dict(index=index, level=level, errors="ignore")
        wanted = list(index) if is_list_like(index) and not isinstance(index, tuple) else [index]
        if errors == "raise" and level is None:
            result = map_partitions(_checked, result, "drop", kw, labels_check(self, wanted), same_rows=False)
        else:
            result = _partitionwise(result, "drop", **kw)
    return _inplace(self, wrap(as_data(result)), inplace)


def _found_labels(part: Any, labels: Any, level: Any) -> pd.DataFrame:
    index = part.index if level is None else part.index.get_level_values(level)
    values = pd.Index(labels)
    return pd.DataFrame({"label": values.astype(object), "found": values.isin(index)})


def _first_frame(part: pd.DataFrame) -> pd.DataFrame:
    return part


def _or_found(parts: list) -> pd.DataFrame:
    return parts[0].assign(found=np.logical_or.reduce([p["found"].to_numpy() for p in parts]))


def _all_found_frames(parts: list) -> bool:
    found = _or_found(parts)
    if not found["found"].all():
        raise KeyError(f"{found['label'][~found['found']].tolist()} not found in axis")
    return True


def _drop_lazy_labels(self: Any, result: Any, labels: Any, level: Any, errors: str) -> Any:
    """``drop(index=lazy)``: every partition drops the labels (the lazy object's values) it holds.

    With ``errors="raise"``, each partition reports which labels it holds and a small reduction raises
    pandas' KeyError for labels found nowhere, before any partition drops rows.
    """
    kw = {"index": Whole(labels), "level": level, "errors": "ignore"}
    if errors != "raise":
        return map_partitions(_call, result, "drop", (), kw, same_rows=False)
    found = map_partitions(_found_labels, self, Whole(labels), level, same_rows=False,
                           meta=pd.DataFrame({"label": pd.Series([], dtype=object), "found": pd.Series([], dtype=bool)}))
    check = tree_reduce(found, _first_frame, _or_found, _all_found_frames, np.dtype(bool))
    return map_partitions(_checked, result, "drop", kw, check, same_rows=False)


def _set_index(self: DataFrame, keys: Any, *, drop: bool = True, append: bool = False, inplace: bool = False,
               verify_integrity: bool = False) -> Any:
    """Make column(s) the index.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 2], "b": [3, 4]}).set_index("a").to_pandas().index.tolist()
    [1, 2]
    """
    many = is_list_like(keys) and not isinstance(keys, tuple)
    if any(isinstance(k, Tileable) or isinstance(k, (np.ndarray, pd.Series, pd.Index)) for k in (keys if many else [keys])):
        raise NotImplementedError("set_index with arrays or lazy objects; assign them as columns first")
    self.meta.set_index(keys, drop=drop, append=append)  # pandas' KeyError, now
    result = _relabelled(map_partitions("set_index", self, keys, drop=drop, append=append))
    if verify_integrity:
        check = tree_reduce(result, _index_part, _append_indexes, _unique_or_raise, np.dtype(bool))
        result = map_partitions(_checked, result, "copy", {}, check)
    return _inplace(self, result, inplace)


def _index_part(part: Any) -> pd.Index:
    return part.index


def _append_indexes(parts: list) -> pd.Index:
    return parts[0].append(parts[1:]) if len(parts) > 1 else parts[0]


def _unique_or_raise(parts: list) -> bool:
    index = _append_indexes(parts)
    if not index.is_unique:
        raise ValueError(f"Index has duplicate keys: {index[index.duplicated()].unique()}")
    return True


class ResetIndex(PandasOperator):
    """``reset_index``; when the new index is the default one, numbered across partitions (unless
    ``unlabelled``: no reader sees the labels, see :mod:`.optimizer.order`; each partition from 0)."""

    params = ("kwargs", "start", "unlabelled")
    fusible = True
    unlabelled = False

    @classmethod
    def tile(cls, op: ResetIndex) -> Tiled:
        data, out = op.inputs[0], op.outputs[0]
        if isinstance(out.meta.index, pd.RangeIndex) and not op.unlabelled:
            # where the sizes are unknown, each partition's start is counted as the partitions before it run
            # (a chain of tiny ops, not a tiling stage that would compute them first)
            return Tiled(*renumber_rows(list(data.chunks), out.meta, renumber=lambda start: op.copy(start=start)))
        chunks = [op.copy(start=None).new_chunk([c], index=chunk_index_of(out.meta, i),
                                               shape=chunk_shape_of(out.meta, c.shape[0]), meta=out.meta)
                  for i, c in enumerate(data.chunks)]
        return Tiled(chunks, nsplits_of(out.meta, row_splits(data)))

    def execute(self, value: Any, *counts: Any) -> Any:
        """``counts``: the row counts of the partitions before this one, when its start was not known at tiling."""
        out = value.reset_index(**self.kwargs)
        start = sum(int(c) for c in counts) if counts else self.start
        if start is not None:
            out.index = pd.RangeIndex(start, start + len(out))
        return out


def reset_index(obj: Any, **kwargs: Any) -> Any:
    data = as_data(obj)
    meta = data.meta.reset_index(**kwargs)
    shape = (data.shape[0], meta.shape[1]) if isinstance(meta, pd.DataFrame) else (data.shape[0],)
    return ResetIndex(kwargs=kwargs, start=None).new_pandas([data], meta, shape)


def _df_reset_index(self: DataFrame, level: Any = None, *, drop: bool = False, inplace: bool = False,
                    col_level: Any = 0, col_fill: Any = "", allow_duplicates: bool = False, names: Any = None) -> Any:
    """The index back to columns (or dropped), with a default index numbered across partitions.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 2, 3]}, index=[7, 8, 9], chunk_size=2).reset_index(drop=True).to_pandas().index
    RangeIndex(start=0, stop=3, step=1)
    """
    kw = dict(level=level, drop=drop, col_level=col_level, col_fill=col_fill, allow_duplicates=allow_duplicates,
              names=names)
    return _inplace(self, reset_index(self, **kw), inplace)


def _series_reset_index(self: Series, level: Any = None, *, drop: bool = False, name: Any = _NO_DEFAULT,
                        inplace: bool = False, allow_duplicates: bool = False) -> Any:
    """The index back to a column (a DataFrame), or dropped (``drop=True``: a Series)."""
    if inplace and not drop:
        raise TypeError("Cannot reset_index inplace on a Series to create a DataFrame")
    kw = _given(level=level, drop=drop, name=name, allow_duplicates=allow_duplicates)
    return _inplace(self, reset_index(self, **kw), inplace)


# ----------------------------------------------------------------- missing values
class EdgeRows(PandasOperator):
    """What a fill carries past a partition edge: the last valid values (``limit``: the last rows).

    Given several parts (in row order), they are taken end to end first;
    ``forward=False`` is the mirror image, for ``bfill``.
    """

    params = ("forward", "limit")
    fusible = True

    def execute(self, *parts: Any) -> Any:
        whole = pd.concat(parts) if len(parts) > 1 else parts[0]
        if self.limit is not None:
            return whole.iloc[-self.limit:] if self.forward else whole.iloc[:self.limit]
        # the last valid values are near the edge: fill growing edge pieces, not the whole partition
        size = 1
        while True:
            piece = whole.iloc[-size:] if self.forward else whole.iloc[:size]
            edge = piece.ffill().iloc[-1:] if self.forward else piece.bfill().iloc[:1]
            if size >= len(whole) or not edge.isna().to_numpy().any():
                return edge
            size *= 16


class DirectionalFill(PandasOperator):
    """``ffill``/``bfill`` with a carry: each partition is filled with its neighbours' edge values."""

    params = ("forward", "limit")
    fusible = True

    @classmethod
    def tile(cls, op: DirectionalFill) -> Tiled:
        data, out = op.inputs[0], op.outputs[0]
        n = len(data.chunks)
        order = list(range(n)) if op.forward else list(range(n - 1, -1, -1))
        carries: dict[int, Any] = {}
        carry = None
        for k, i in enumerate(order):
            carries[i] = carry
            chunk = data.chunks[i]
            edge = EdgeRows(forward=op.forward, limit=op.limit)
            inputs = [chunk] if carry is None else ([carry, chunk] if op.forward else [chunk, carry])
            if k < n - 1:
                carry = edge.new_chunk(inputs, index=chunk.index, shape=chunk_shape_of(data.meta, np.nan),
                                       meta=data.meta)
        chunks = []
        for i, c in enumerate(data.chunks):
            inputs = [c] if carries[i] is None else [c, carries[i]]
            chunks.append(op.copy().new_chunk(inputs, index=c.index, shape=c.shape, meta=out.meta))
        return Tiled(chunks, nsplits_of(out.meta, row_splits(data)))

    def execute(self, value: Any, carry: Any = None) -> Any:
        fill = "ffill" if self.forward else "bfill"
        filled = getattr(value, fill)(limit=self.limit)
        if carry is None or not len(carry) or not len(value):
            return filled
        # holes left after filling within the partition are only at its edge: only that run needs the carry
        edge = (filled.iloc[:1] if self.forward else filled.iloc[-1:]).isna().to_numpy()
        if not edge.any():
            return filled
        holes = value.isna().to_numpy().reshape(len(value), -1).any(axis=1)
        run = _edge_run(holes if self.forward else holes[::-1], self.limit)
        if self.forward:
            head = getattr(pd.concat([carry, value.iloc[:run]]), fill)(limit=self.limit).iloc[len(carry):]
            return pd.concat([head, filled.iloc[run:]])
        tail = getattr(pd.concat([value.iloc[len(value) - run:], carry]), fill)(limit=self.limit).iloc[:run]
        return pd.concat([filled.iloc[:len(value) - run], tail])


def _edge_run(holes: np.ndarray, limit: int | None) -> int:
    """How many leading rows a carry can reach: up to the first row without holes (``limit`` rows at most)."""
    full = np.flatnonzero(~holes)
    run = int(full[0]) if len(full) else len(holes)
    return run if limit is None else min(run, limit)


def _directional(self: Any, forward: bool, axis: Any, inplace: bool, limit: Any, limit_area: Any) -> Any:
    name = "ffill" if forward else "bfill"
    if limit_area is not None:
        raise NotImplementedError(f"{name} with limit_area")
    if limit is not None and (not isinstance(limit, (int, np.integer)) or limit <= 0):
        raise ValueError("Limit must be greater than 0")
    if axis in (1, "columns"):
        return _inplace(self, map_partitions(name, self, axis=1, limit=limit), inplace)
    data = as_data(self)
    meta = getattr(data.meta, name)()
    result = DirectionalFill(forward=forward, limit=limit).new_pandas([data], meta, data.shape,
                                                                      partitioning=data.partitioning)
    return _inplace(self, result, inplace)


def _ffill(self: Any, *, axis: Any = None, inplace: bool = False, limit: Any = None, limit_area: Any = None) -> Any:
    """Fill missing values with the last valid one before them, across partitions.

    >>> import mars.dataframe as md
    >>> md.Series([1, None, None, 4], chunk_size=2).ffill().to_pandas().tolist()
    [1.0, 1.0, 1.0, 4.0]
    """
    return _directional(self, True, axis, inplace, limit, limit_area)


def _bfill(self: Any, *, axis: Any = None, inplace: bool = False, limit: Any = None, limit_area: Any = None) -> Any:
    """Fill missing values with the next valid one after them, across partitions."""
    return _directional(self, False, axis, inplace, limit, limit_area)


def _fillna(self: Any, value: Any = None, *, axis: Any = None, inplace: bool = False, limit: Any = None,
            method: Any = None) -> Any:
    """Fill missing values with a scalar, a dict/Series per column (a Series: per label), or by ``method``.

    ``method="ffill"``/``"bfill"`` (pandas 2's spelling) fills as ``ffill()``/``bfill()``.

    >>> import mars.dataframe as md
    >>> md.Series([1, None], chunk_size=1).fillna(0).to_pandas().tolist()
    [1.0, 0.0]
    """
    if method is not None:
        if value is not None:
            raise ValueError("Cannot specify both 'value' and 'method'.")
        if method not in ("ffill", "pad", "bfill", "backfill"):
            raise ValueError(f"Invalid fill method. Expecting pad (ffill) or backfill (bfill). Got {method}")
        return _directional(self, method in ("ffill", "pad"), axis, inplace, limit, None)
    if value is None:
        raise ValueError("Must specify a fill 'value'.")
    if limit is not None:
        raise NotImplementedError("fillna with a value and a limit (the first `limit` holes of the whole column)")
    if isinstance(self, DataFrame) and isinstance(value, Series):
        value = Whole(value)  # a Series fills a DataFrame per column, not per row
    elif isinstance(value, pd.DataFrame) or (isinstance(self, Series) and isinstance(value, pd.Series)):
        value = _lazy_or_whole(value)  # aligned by pandas in each partition
    how = "left" if is_pandas_like(value) else "outer"
    result = map_partitions("fillna", self, value, axis=axis, how=how)
    return _inplace(self, result, inplace)


def _dropna(self: Any, *, axis: Any = 0, how: Any = _NO_DEFAULT, thresh: Any = _NO_DEFAULT, subset: Any = None,
            inplace: bool = False, ignore_index: bool = False) -> Any:
    """Drop rows (or columns, ``axis=1``) with missing values.

    ``axis=1`` computes the non-missing counts when called, so the result's
    columns are known.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, None, 3]}, chunk_size=2).dropna().to_pandas()["a"].tolist()
    [1.0, 3.0]
    """
    kw = _given(how=how, thresh=thresh)
    if isinstance(self, DataFrame):
        kw["subset"] = subset
    self.meta.dropna(axis=axis, **kw)  # pandas' errors, now
    if axis in (1, "columns"):
        result = _dropna_columns(self, kw)
    else:
        result = _partitionwise(self, "dropna", **kw)
        if ignore_index:
            result = reset_index(result, drop=True)
    return _inplace(self, result, inplace)


def _count_part(part: pd.DataFrame) -> dict:
    return {"counts": part.count(), "rows": len(part)}


def _sum_counts(parts: list) -> dict:
    return {"counts": functools.reduce(lambda a, b: a + b, [p["counts"] for p in parts]),
            "rows": sum(p["rows"] for p in parts)}


def _dropna_columns(df: DataFrame, kw: dict) -> Any:
    if kw.get("subset") is not None:
        raise NotImplementedError("dropna(axis=1, subset=...)")
    total = tree_reduce(df, _count_part, _sum_counts, _sum_counts, np.dtype(object)).fetch()
    counts = total["counts"]
    if "thresh" in kw:
        keep = counts >= kw["thresh"]
    elif kw.get("how", "any") == "all":
        keep = counts > 0
    else:
        keep = counts == total["rows"]
    return iloc_columns(df, np.flatnonzero(keep.to_numpy()))


def _missing(name: str) -> Callable:
    def method(self: Any) -> Any:
        return _local(self, name)

    method.__name__ = name
    method.__doc__ = f"Partition-wise ``{name}()``: a boolean object of the same shape."
    return method


def _replace(self: Any, to_replace: Any = None, value: Any = _NO_DEFAULT, *, inplace: bool = False,
             regex: bool = False) -> Any:
    """Replace values (scalars, lists, dicts, regexes), as pandas does, partition by partition."""
    return _inplace(self, _local(self, "replace", to_replace, **_given(value=value), regex=regex), inplace)


# ----------------------------------------------------------------- where / mask
def _where_meta(self: Any, method: str, other: Any) -> Any:
    """The result's meta when some values are replaced (pandas widens ints to float for NaN)."""
    if is_pandas_like(other) or isinstance(other, Whole):
        return None
    sample = fake(self.meta)
    cond = np.zeros(sample.shape, dtype=bool) if method == "where" else np.ones(sample.shape, dtype=bool)
    kw = {} if other is _NO_DEFAULT else {"other": other}
    return empty_meta(getattr(sample, method)(cond, **kw))


@row_local
def _where_piece(part: Any, method: str, other: Any, kw: dict, cond: np.ndarray) -> Any:
    args = () if other is _NO_DEFAULT else (other,)
    return getattr(part, method)(cond, *args, **kw)


def _where_like(self: Any, method: str, cond: Any, other: Any, inplace: bool, axis: Any, level: Any) -> Any:
    if callable(cond) and not isinstance(cond, Tileable):
        cond = cond(self)
    if callable(other) and not isinstance(other, Tileable):
        other = other(self)
    kw = dict(axis=axis, level=level)
    if isinstance(cond, (np.ndarray, list)):
        if is_pandas_like(other):
            raise NotImplementedError(f"{method} with an array condition and a lazy other")
        result = rows_arg_map(self, _where_piece, (method, other, kw), np.asarray(cond))
        return _inplace(self, result, inplace)
    cond, other = _lazy_or_whole(cond), _lazy_or_whole(other)
    meta = _where_meta(self, method, other)
    args = (cond,) if other is _NO_DEFAULT else (cond, other)
    result = map_partitions(method, self, *args, meta=meta, how="left", **kw)
    return _inplace(self, result, inplace)


def _where(self: Any, cond: Any, other: Any = _NO_DEFAULT, *, inplace: bool = False, axis: Any = None,
           level: Any = None) -> Any:
    """Values where ``cond`` is true, ``other`` (NaN) elsewhere; ``cond`` may be lazy, an array or a callable.

    The metadata assumes some value is replaced: an int column is float
    unless ``other`` keeps it int (pandas keeps int when nothing is replaced).

    >>> import mars.dataframe as md
    >>> md.Series([1, 2, 3], chunk_size=2).where([False, True, True], 0).to_pandas().tolist()
    [0, 2, 3]
    """
    return _where_like(self, "where", cond, other, inplace, axis, level)


def _mask(self: Any, cond: Any, other: Any = _NO_DEFAULT, *, inplace: bool = False, axis: Any = None,
          level: Any = None) -> Any:
    """Values where ``cond`` is false, ``other`` (NaN) elsewhere: the opposite of ``where``."""
    return _where_like(self, "mask", cond, other, inplace, axis, level)


# ----------------------------------------------------------------- conversions
class ToTensor(TensorOperator):
    """A DataFrame, Series or Index as a tensor chunked by rows (``.values``)."""

    params = ()
    fusible = True

    @classmethod
    def tile(cls, op: ToTensor) -> Tiled:
        data, out = op.inputs[0], op.outputs[0]
        chunks = [op.copy().new_chunk([c], index=(i, 0) if out.ndim == 2 else (i,), shape=c.shape, dtype=out.dtype,
                                      order="C") for i, c in enumerate(data.chunks)]
        return Tiled(chunks, (row_splits(data),) + (((out.shape[1],),) if out.ndim == 2 else ()))

    def execute(self, value: Any) -> np.ndarray:
        return value.to_numpy()


def _to_tensor(self: Any) -> Any:
    """The values as a mars tensor, chunked like the rows.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 2], "b": [3, 4]}, chunk_size=1).to_tensor().fetch().tolist()
    [[1, 3], [2, 4]]
    """
    data = as_data(self)
    dtype = fake(data.meta).to_numpy().dtype
    return ToTensor().new_tensor([data], data.shape, dtype)


def _to_numpy(self: Any, dtype: Any = None, copy: bool = False, na_value: Any = _NO_DEFAULT) -> np.ndarray:
    """The computed values as a numpy array (runs the expression)."""
    return self.fetch().to_numpy(dtype=dtype, copy=copy, **_given(na_value=na_value))


def _index(self: Any) -> Index:
    return map_partitions(_index_of, self)


def _set_index_values(self: Any, values: Any) -> None:
    if isinstance(values, Tileable):
        raise NotImplementedError("setting the index to a lazy object; use set_index or reset_index")
    labels = pd.Index(values)
    self.data = as_data(_relabelled(rows_arg_map(self, _set_axis_piece, (), labels)))


@row_local
def _set_axis_piece(part: Any, labels: pd.Index) -> Any:
    return part.set_axis(labels, axis=0)


def _get_columns(self: DataFrame) -> pd.Index:
    return self.meta.columns


def _set_columns(self: DataFrame, values: Any) -> None:
    labels = self.meta.set_axis(values, axis=1).columns  # pandas' length error, now
    self.data = as_data(map_partitions(_set_axis, self, labels, 1))


def _copy(self: Any, deep: bool = True) -> Any:
    """A copy: lazy data never changes, so it shares this object's expression."""
    return wrap(as_data(self))


def _to_frame(self: Series, name: Any = _NO_DEFAULT) -> DataFrame:
    """The Series as a one-column DataFrame."""
    return _local(self, "to_frame", **_given(name=name))


def _rename_axis(self: Any, mapper: Any = _NO_DEFAULT, *, index: Any = _NO_DEFAULT, columns: Any = _NO_DEFAULT,
                 axis: Any = 0, copy: Any = _NO_DEFAULT, inplace: bool = False) -> Any:
    """Name the index (or columns) axis."""
    kw = _given(mapper=mapper, index=index, columns=columns)
    return _inplace(self, _local(self, "rename_axis", axis=axis, **kw), inplace)


def _affix(name: str) -> Callable:
    def method(self: Any, affix: str, axis: Any = None) -> Any:
        result = _local(self, name, affix, axis=axis)
        on_index = axis in (0, "index") or (axis is None and isinstance(self, Series))
        return _relabelled(result) if on_index else result

    method.__name__ = name
    method.__doc__ = f"Partition-wise ``{name}``: labels with a string {name[4:]}."
    return method


def _items(self: DataFrame) -> Iterator[tuple[Any, Series]]:
    """(column label, lazy Series) pairs."""
    for i, label in enumerate(self.meta.columns):
        yield label, iloc_columns(self, i)


for _cls in (DataFrame, Series):
    _cls.astype = _astype
    _cls.drop = _drop
    _cls.ffill = _ffill
    _cls.bfill = _bfill
    _cls.fillna = _fillna
    _cls.dropna = _dropna
    _cls.replace = _replace
    _cls.where = _where
    _cls.mask = _mask
    _cls.copy = _copy
    _cls.rename_axis = _rename_axis
    _cls.index = property(_index, _set_index_values, doc="The row labels, as a lazy Index.")
    for _name in ("isna", "isnull", "notna", "notnull"):
        setattr(_cls, _name, _missing(_name))
    _cls.add_prefix = _affix("add_prefix")
    _cls.add_suffix = _affix("add_suffix")
for _cls in (DataFrame, Series, Index):
    _cls.to_tensor = _to_tensor
    _cls.values = property(_to_tensor, doc="The values as a mars tensor chunked by rows.")
    _cls.to_numpy = _to_numpy
Index.astype = _astype
Index.rename = _index_rename
DataFrame.rename = _df_rename
Series.rename = _series_rename
DataFrame.set_index = _set_index
DataFrame.reset_index = _df_reset_index
Series.reset_index = _series_reset_index
DataFrame.columns = property(_get_columns, _set_columns, doc="The column labels (setting renames them all).")
Series.to_frame = _to_frame
DataFrame.items = _items
