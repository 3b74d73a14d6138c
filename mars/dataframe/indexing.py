"""Selecting and assigning: ``[]``, ``loc``, ``iloc``, ``at``, ``iat``, ``head``, ``tail``, ``assign``, ``insert``.

Columns are selected partition by partition (rows stay where they are); rows
by position, label or mask through the operators of
:mod:`mars.dataframe.selection`. Assigned values are cut to the partitions
as pandas would align them: a lazy Series on the index, an array or tensor
by position.

Sources that can read less (``read_parquet``) offer ``op.with_columns(cols)``
and ``op.with_head(n)``; column selections and ``head`` use them, and
``head`` is pushed below row-local operations to reach such a source.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pandas as pd
from pandas.api.types import is_list_like

from ..core.entity import Tileable
from ..core.operator import Tiled
from ..core.tiling import as_data
from ..tensor.core import is_tensor, tensor_data
from .core import (
    DataFrame, Index, PandasData, PandasOperator, Series, chunk_index_of, chunk_shape_of, is_pandas_like,
    nsplits_of, row_splits, wrap,
)
from .datasource import from_pandas
from .map import MapPartitions, Whole, keeps_columns, map_partitions
from .metakey import cached_meta, meta_key
from .selection import (
    check_slice_ints, getitem_bool_error, iloc_bool_error, is_bool_list, is_bool_tensor, label_slice, mask_rows,
    pick_labels, pick_row, row_slice, rows_arg_map, shape_like, take_positions,
)

__all__: list[str] = []


# ----------------------------------------------------------------- row-local ops and pushdown
def row_local(func: Callable) -> Callable:
    """Mark a partition function as row-local: output row ``i`` depends on input row ``i`` alone.

    ``head`` is pushed below ``map_partitions`` of such functions, towards a
    source that can read fewer rows.

    >>> @row_local
    ... def upper(df):
    ...     return df.rename(columns=str.upper)
    """
    func.__mars_row_local__ = True  # type: ignore[attr-defined]
    return func


class RowLocal(PandasOperator):
    """Base of per-partition ops on one input whose output row ``i`` comes from input row ``i``."""

    fusible = True

    @classmethod
    def tile(cls, op: RowLocal) -> Tiled:
        data, out = op.inputs[0], op.outputs[0]
        chunks = [op.copy().new_chunk([c], index=chunk_index_of(out.meta, i), shape=chunk_shape_of(out.meta, c.shape[0]),
                                      meta=out.meta) for i, c in enumerate(data.chunks)]
        return Tiled(chunks, nsplits_of(out.meta, row_splits(data)))


class SelectColumns(RowLocal):
    """Columns by label (``df[["a", "b"]]``; a Series for one label) or by position (``iloc[:, 1:3]``).

    ``repeatable``: each of several subtasks reading a selection of held data makes it itself (see
    :func:`mars.core.fusion.fuse`), a copy of a few columns where writing it out and reading it back is two.
    """

    params = ("columns", "by_position")
    repeatable = True

    def kept_column(self, column: Any) -> tuple[int, Any] | None:
        """``(0, column)`` where the selection (of labels, a frame) keeps ``column``: see
        :meth:`.map.MapPartitions.kept_column`."""
        if self.by_position or not isinstance(self.columns, list):
            return None
        try:
            return (0, column) if column in self.columns else None
        except (TypeError, ValueError):
            return None

    def execute(self, value: pd.DataFrame) -> Any:
        return value.iloc[:, self.columns] if self.by_position else value[self.columns]


def _is_row_local(op: Any) -> bool:
    if isinstance(op, RowLocal):
        return True
    return (isinstance(op, MapPartitions) and getattr(op.func, "__mars_row_local__", False)
            and op.roles[0] == "rows" and op.roles.count("rows") == 1)


def push_head(data: PandasData, n: int) -> PandasData | None:
    """The same expression over a source reading only its first ``n`` rows (or more), or None.

    Goes down through row-local ops until a source whose op has
    ``with_head(n)``; None when there is none (nothing would be saved).
    """
    hook = getattr(data.op, "with_head", None)
    if hook is not None:
        pushed = hook(n)
        return as_data(pushed) if pushed is not None else None
    if not _is_row_local(data.op):
        return None
    inner = push_head(data.inputs[0], n)
    if inner is None:
        return None
    shape = (inner.shape[0],) + tuple(data.shape[1:])
    rebuilt = data.op.copy().new_pandas([inner] + list(data.inputs[1:]), data.meta, shape,
                                        partitioning=inner.partitioning)
    return rebuilt.data


def _pruned(data: PandasData, columns: list) -> PandasData | None:
    """A source reading only ``columns`` (in that order), when ``data`` is one that can."""
    hook = getattr(data.op, "with_columns", None)
    if hook is None or data.meta.columns.has_duplicates:
        return None
    pruned = hook(list(columns))
    if pruned is None:
        return None
    pruned = as_data(pruned)
    return pruned if list(pruned.meta.columns) == list(columns) else None


def select_columns(df: Any, key: Any) -> Any:
    """``df[key]`` for a column label (a Series) or a list of labels (a DataFrame), pruning the source."""
    data = as_data(df)
    # a list's columns are worked out once per expression shape; one column is quicker to take than to look up
    key_of = meta_key("getitem", (data.meta,), key) if isinstance(key, list) else None
    meta = cached_meta(key_of, lambda: data.meta[key])  # pandas' KeyError for missing columns, now
    labels = [key] if isinstance(meta, pd.Series) else list(meta.columns)
    if isinstance(meta, pd.DataFrame) and labels == list(data.meta.columns) and not meta.columns.has_duplicates:
        return wrap(data)
    source = _pruned(data, labels)
    if source is not None:
        if isinstance(meta, pd.DataFrame):
            return wrap(source)
        data = source
    op = SelectColumns(columns=key, by_position=False)
    return op.new_pandas([data], meta, shape_like(meta, data.shape[0]), partitioning=data.partitioning)


# ----------------------------------------------------------------- __getitem__
def _is_positional_slice(key: slice) -> bool:
    """pandas' rule for ``obj[a:b]``: integer bounds are positions, whatever the index."""
    return all(v is None or (isinstance(v, (int, np.integer)) and not isinstance(v, bool))
               for v in (key.start, key.stop, key.step))


def _getitem_slice(obj: Any, key: slice) -> Any:
    if _is_positional_slice(key):
        return row_slice(obj, key)
    return label_slice(obj, key)


def _df_getitem(self: DataFrame, key: Any) -> Any:
    if callable(key) and not isinstance(key, Tileable):
        return _df_getitem(self, key(self))
    if isinstance(key, DataFrame):
        return self.where(key)  # as pandas does for a boolean frame
    if isinstance(key, (Series, Index)) or is_tensor(key):
        return mask_rows(self, key, getitem_bool_error)
    if isinstance(key, slice):
        return _getitem_slice(self, key)
    if is_list_like(key) and not isinstance(key, tuple):
        if is_bool_list(key):
            return mask_rows(self, key, getitem_bool_error)
        return select_columns(self, list(key))
    return select_columns(self, key)


def _series_getitem(self: Series, key: Any) -> Any:
    if callable(key) and not isinstance(key, Tileable):
        return _series_getitem(self, key(self))
    if isinstance(key, (Series, Index)) or is_tensor(key):
        return mask_rows(self, key, iloc_bool_error)
    if isinstance(key, slice):
        return _getitem_slice(self, key)
    if is_list_like(key) and not isinstance(key, tuple):
        if is_bool_list(key):
            return mask_rows(self, key, iloc_bool_error)
        return pick_labels(self, list(key))
    return pick_labels(self, key)


def _index_getitem(self: Index, key: Any) -> Any:
    if isinstance(key, (Series, Index)) or is_tensor(key):
        return mask_rows(self, key, iloc_bool_error)
    if isinstance(key, slice):
        check_slice_ints(key, "slice")
        return row_slice(self, key)
    if is_list_like(key) and not isinstance(key, tuple):
        return take_positions(self, key)
    if isinstance(key, (int, np.integer)):
        return pick_row(self, key)
    raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or boolean "
                     "arrays are valid indices")


# ----------------------------------------------------------------- iloc / loc / at / iat
def _split_key(obj: Any, key: Any) -> tuple[Any, Any]:
    """(rows, columns) of a loc/iloc key; callables are called with the whole object, as pandas does."""
    if isinstance(key, tuple) and obj.ndim == 1 and isinstance(obj.meta.index, pd.MultiIndex):
        key = (key,)  # one label of a MultiIndex
    if not isinstance(key, tuple):
        rows, cols = key, slice(None)
    elif len(key) > obj.ndim:
        raise pd.errors.IndexingError("Too many indexers")
    else:
        rows, cols = key if len(key) == 2 else (key[0], slice(None))
    return tuple(k(obj) if callable(k) and not isinstance(k, Tileable) else k for k in (rows, cols))


def iloc_columns(df: Any, key: Any) -> Any:
    """``df.iloc[:, key]``: a DataFrame, or a Series for one position."""
    data = as_data(df)
    if isinstance(key, slice) and key == slice(None):
        return wrap(data)
    if callable(key):
        key = key(df)
    meta = data.meta.iloc[:, key]  # pandas' IndexError, now
    if not data.meta.columns.has_duplicates:
        return select_columns(df, meta.name if isinstance(meta, pd.Series) else list(meta.columns))
    key = list(np.arange(data.meta.shape[1])[key]) if not isinstance(key, (int, np.integer)) else int(key)
    op = SelectColumns(columns=key, by_position=True)
    return op.new_pandas([data], meta, shape_like(meta, data.shape[0]), partitioning=data.partitioning)


def iloc_rows(obj: Any, key: Any) -> Any:
    """``obj.iloc[key]`` on rows."""
    if callable(key) and not isinstance(key, Tileable):
        key = key(obj)
    if isinstance(key, Series) and as_data(key).meta.dtype == bool:
        return mask_rows(obj, key, iloc_bool_error)  # pandas 3 aligns a boolean Series on the index, as loc does
    if isinstance(key, (Series, DataFrame, Index)):
        raise ValueError("iLocation based boolean indexing cannot use an indexable as a mask")
    if is_tensor(key):
        if not is_bool_tensor(key):
            raise NotImplementedError("iloc with a tensor of positions; a boolean tensor or a list of positions works")
        return mask_rows(obj, key, iloc_bool_error)
    if isinstance(key, slice):
        check_slice_ints(key, "positional")
        return row_slice(obj, key)
    if is_list_like(key):
        return take_positions(obj, key)
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        return pick_row(obj, key)
    raise TypeError("Cannot index by location index with a non-integer key")


def loc_columns(df: Any, key: Any) -> Any:
    """``df.loc[:, key]``: columns by label, label slice or boolean mask."""
    data = as_data(df)
    if isinstance(key, slice) and key == slice(None):
        return wrap(data)
    if callable(key):
        key = key(df)
    meta = data.meta.loc[:, key]  # pandas' KeyError, now
    if isinstance(meta, pd.Series):
        return select_columns(df, key)
    if not data.meta.columns.has_duplicates:
        return select_columns(df, list(meta.columns))
    # with duplicate labels, the positions pandas picks, in its order: the key applied to a row of positions
    positions = pd.DataFrame([np.arange(data.meta.shape[1])], columns=data.meta.columns).loc[:, key]
    return iloc_columns(df, positions.iloc[0].tolist())


def loc_rows(obj: Any, key: Any) -> Any:
    """``obj.loc[key]`` on rows: labels, label slices, boolean masks."""
    if callable(key) and not isinstance(key, Tileable):
        key = key(obj)
    if isinstance(key, slice):
        return label_slice(obj, key)
    if isinstance(key, (Series, Index)) or is_tensor(key):
        if is_tensor(key) or as_data(key).meta.dtype == bool:
            return mask_rows(obj, key, iloc_bool_error)
        raise NotImplementedError("loc with a lazy Series of labels; compute it, or use a boolean mask")
    if is_list_like(key) and not isinstance(key, tuple):
        if is_bool_list(key):
            return mask_rows(obj, key, iloc_bool_error)
        return pick_labels(obj, list(key))
    return pick_labels(obj, key)


class _Indexer:
    __slots__ = ("obj",)

    def __init__(self, obj: Any):
        self.obj = obj


class ILoc(_Indexer):
    """``obj.iloc[rows]`` / ``df.iloc[rows, cols]`` by position."""

    __slots__ = ()

    def __getitem__(self, key: Any) -> Any:
        rows, cols = _split_key(self.obj, key)
        obj = iloc_columns(self.obj, cols) if isinstance(self.obj, DataFrame) else self.obj
        return iloc_rows(obj, rows)


class Loc(_Indexer):
    """``obj.loc[rows]`` / ``df.loc[rows, cols]`` by label."""

    __slots__ = ()

    def __getitem__(self, key: Any) -> Any:
        rows, cols = _split_key(self.obj, key)
        obj = loc_columns(self.obj, cols) if isinstance(self.obj, DataFrame) else self.obj
        return loc_rows(obj, rows)


def _scalar_key(key: Any, ndim: int) -> tuple:
    keys = key if isinstance(key, tuple) and ndim == 2 else (key,)
    if len(keys) != ndim or any(is_list_like(k) or isinstance(k, slice) for k in keys):
        raise ValueError("Invalid call for scalar access (getting)!")
    return keys


class At(_Indexer):
    """``df.at[row_label, column]`` / ``s.at[label]``: one value."""

    __slots__ = ()

    def __getitem__(self, key: Any) -> Any:
        keys = _scalar_key(key, self.obj.ndim)
        obj = select_columns(self.obj, keys[1]) if len(keys) == 2 else self.obj
        return pick_labels(obj, keys[0])


class IAt(_Indexer):
    """``df.iat[i, j]`` / ``s.iat[i]``: one value by position."""

    __slots__ = ()

    def __getitem__(self, key: Any) -> Any:
        keys = _scalar_key(key, self.obj.ndim)
        if not all(isinstance(k, (int, np.integer)) for k in keys):
            raise ValueError("iAt based indexing can only have integer indexers")
        obj = iloc_columns(self.obj, keys[1]) if len(keys) == 2 else self.obj
        return pick_row(obj, keys[0])


# ----------------------------------------------------------------- head / tail
def _head(self: Any, n: int = 5) -> Any:
    """The first ``n`` rows (all but the last ``-n`` when negative), reading only the partitions needed.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": range(10)}, chunk_size=3).head(2).to_pandas()
       a
    0  0
    1  1
    """
    data = as_data(self)
    if n >= 0:
        pushed = push_head(data, n)
        data = pushed if pushed is not None else data
    return row_slice(data, slice(None, n))


def _tail(self: Any, n: int = 5) -> Any:
    """The last ``n`` rows (all but the first ``-n`` when negative).

    >>> import mars.dataframe as md
    >>> md.Series(range(10), chunk_size=3).tail(2).to_pandas().tolist()
    [8, 9]
    """
    return row_slice(self, slice(0, 0) if n == 0 else slice(-n, None))


# ----------------------------------------------------------------- assignment
def _fit(part: pd.DataFrame, value: Any) -> Any:
    # pandas gives an empty frame the index of a Series assigned to it; an empty partition must stay empty
    if isinstance(value, (pd.Series, pd.DataFrame)) and not len(part):
        return value.iloc[:0].set_axis(part.index[:0], axis=0)
    return value


def _other_column(args: tuple, kwargs: dict, column: Any) -> tuple[Any, Any] | None:
    """The frame's ``column`` where it is not among the labels set (``args[1]``)."""
    key = args[1]
    try:
        set_here = column in key if isinstance(key, list) else bool(column == key)
        if set_here:
            return None
    except (TypeError, ValueError):  # labels that do not compare to one truth value
        return None
    return args[0], column


@keeps_columns(_other_column)
def _set_column(part: pd.DataFrame, key: Any, value: Any) -> pd.DataFrame:
    out = part.copy(deep=False)
    out[key] = _fit(part, value)
    return out


def _insert_column(part: pd.DataFrame, loc: int, column: Any, allow_duplicates: bool, value: Any) -> pd.DataFrame:
    out = part.copy(deep=False)
    out.insert(loc, column, _fit(part, value), allow_duplicates=allow_duplicates)
    return out


def _set_rows(part: Any, mask: Any, value: Any) -> Any:
    out = part.copy()
    out[mask.to_numpy(dtype=bool, na_value=False)] = value
    return out


def _row_values(value: Any) -> Any:
    """``value`` as an array to be cut along rows, as pandas would infer its dtype."""
    if isinstance(value, (np.ndarray, pd.Index, pd.api.extensions.ExtensionArray)):
        return value
    return pd.Series(list(value)).array


def with_value(df: Any, func: Callable, args: tuple, value: Any, many: bool = False) -> Any:
    """``func(partition, *args, v)`` per partition, ``v`` being ``value`` cut to it as pandas assigns.

    A lazy Series or DataFrame is aligned on the index (missing rows are
    NaN), a pandas one is given whole (pandas reindexes it), an array or
    tensor is cut by position; scalars go to every partition. ``many`` says
    the target is several columns, where a flat list holds one value per
    column.
    """
    if is_pandas_like(value):
        return map_partitions(func, df, *args, value, how="left")
    if is_tensor(value):
        if tensor_data(value).ndim == 0:
            return map_partitions(func, df, *args, value)
        return rows_arg_map(df, func, args, value)
    if isinstance(value, (pd.Series, pd.DataFrame)):
        return map_partitions(func, df, *args, Whole(from_pandas(value, chunk_size=max(1, len(value)))))
    if is_list_like(value) and not isinstance(value, (dict, set, frozenset)) and (not many or np.ndim(value) == 2):
        return rows_arg_map(df, func, args, _row_values(value) if np.ndim(value) < 2 else np.asarray(value))
    return map_partitions(func, df, *args, value)


def _df_setitem(self: DataFrame, key: Any, value: Any) -> None:
    if callable(key) and not isinstance(key, Tileable):
        key = key(self)
    if isinstance(key, DataFrame):
        result = self.mask(key, value)  # as pandas does for a boolean frame
    elif isinstance(key, Series):
        result = map_partitions(_set_rows, self, key, value, how="left")
    else:
        many = is_list_like(key) and not isinstance(key, tuple)
        result = with_value(self, _set_column, (list(key) if many else key,), value, many=many)
    self.data = as_data(result)


def _assign(self: DataFrame, **kwargs: Any) -> DataFrame:
    """A new DataFrame with columns added or replaced; values may be callables of the frame.

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"a": [1, 2]}, chunk_size=1)
    >>> df.assign(b=lambda d: d["a"], c=0).to_pandas()
       a  b  c
    0  1  1  0
    1  2  2  0
    """
    data = wrap(as_data(self))
    for key, value in kwargs.items():
        data[key] = value(data) if callable(value) and not isinstance(value, Tileable) else value
    return data


def _insert(self: DataFrame, loc: int, column: Any, value: Any, allow_duplicates: bool = False) -> None:
    """Insert ``column`` at position ``loc``, in place (pandas' errors for a duplicate or a bad position)."""
    self.meta.copy().insert(loc, column, pd.Series([], dtype="float64"), allow_duplicates=allow_duplicates)  # errors
    self.data = as_data(with_value(self, _insert_column, (loc, column, allow_duplicates), value))


DataFrame.__getitem__ = _df_getitem
DataFrame.__setitem__ = _df_setitem
Series.__getitem__ = _series_getitem
Index.__getitem__ = _index_getitem
DataFrame.assign = _assign
DataFrame.insert = _insert
for _cls in (DataFrame, Series):
    _cls.iloc = property(ILoc, doc="Rows (and columns) by position.")
    _cls.loc = property(Loc, doc="Rows (and columns) by label.")
    _cls.at = property(At, doc="One value by labels.")
    _cls.iat = property(IAt, doc="One value by positions.")
    _cls.head = _head
    _cls.tail = _tail
