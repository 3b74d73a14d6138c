"""Concatenation: ``md.concat`` of DataFrames and Series, along rows or columns.

Along rows (``axis=0``) the result's partitions are the inputs' partitions,
in order; each is brought to the result's schema by pandas itself (a concat
with the result's empty meta gives the union or intersection of columns and
the dtypes pandas gives the whole), and ``ignore_index`` numbers the rows
across partitions.

Along columns (``axis=1``) rows are matched on the index. Inputs cut the
same way are concatenated partition by partition. Otherwise the inputs'
indexes are fetched, pandas' own concat of index-only frames gives the
result's index (the union or intersection, in pandas' order), and every
input is aligned to it (:mod:`mars.dataframe.align`) before the partitions
are concatenated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generator, Sequence

import numpy as np
import pandas as pd

from ..core.operator import Tiled
from ..core.tiling import recursive_tile
from ..tensor.chunks import offsets
from .align import fetch_indexes
from .core import DataFrame, PandasData, PandasOperator, Series, chunk_index_of, chunk_shape_of, nsplits_of
from .datasource import from_pandas
from .map import map_partitions
from .meta import empty_meta
from .rows import known_rows

__all__ = ["concat"]

_NO_DEFAULT = pd.api.extensions.no_default


# ----------------------------------------------------------------- along rows
class ConformRows(PandasOperator):
    """One input partition in the result's schema: its columns, dtypes, name, keys level and numbering.

    ``options`` are the keywords pandas' concat applies per object
    (``join``, and ``keys``/``names``/``levels`` with ``label`` this input's key).
    """

    params = ("meta", "label", "options", "start")
    fusible = True

    def execute(self, part: Any) -> Any:
        return conform_rows(part, self.meta, self.label, self.options, self.start)


def conform_rows(part: Any, meta: Any, label: Any, options: dict, start: int | None) -> Any:
    """``part`` as its rows appear in the concatenation whose (empty) result is ``meta``."""
    if options.get("keys") is not None:
        part = pd.concat([part], keys=[label], names=options.get("names"), levels=options.get("levels"))
    if not _same_schema(part, meta):
        union = options.get("union_categories", False)
        # concatenating with the empty result gives the result's columns and dtypes, as pandas' whole concat does
        part = pd.concat([meta, part], join=options.get("join", "outer"), sort=False, union_categories=union)
        part = _cast_like(part, meta)
    if start is not None:
        part = part.set_axis(pd.RangeIndex(start, start + len(part)), axis=0)
    return part


def _same_schema(part: Any, meta: Any) -> bool:
    if type(part) is not type(meta):
        return False
    if isinstance(meta, pd.Series):
        same = part.dtype == meta.dtype and part.name == meta.name
    else:
        same = part.columns.equals(meta.columns) and part.dtypes.equals(meta.dtypes)
    return same and (part.index.dtype == meta.index.dtype or isinstance(meta.index, pd.MultiIndex))


def _cast_like(part: Any, meta: Any) -> Any:
    """Dtypes (and a Series' name) set to ``meta``'s where pandas' pairwise concat left them apart."""
    if isinstance(meta, pd.Series):
        if part.dtype != meta.dtype:
            part = part.astype(meta.dtype)
        return part.rename(meta.name) if part.name != meta.name else part
    changed = [i for i, (have, want) in enumerate(zip(part.dtypes, meta.dtypes)) if have != want]
    if changed:
        part = part.copy(deep=False)
        for i in changed:
            part.isetitem(i, part.iloc[:, i].astype(meta.dtypes.iloc[i]))
    return part


class ConcatRows(PandasOperator):
    """Inputs end to end; ``keys`` holds each input's key (when pandas' ``keys`` is given)."""

    params = ("keys", "options", "ignore_index")

    @classmethod
    def tile(cls, op: ConcatRows) -> Generator[Any, Any, Tiled]:
        out = op.outputs[0]
        meta = out.meta
        rows: list = []
        for data in op.inputs:
            rows.extend((yield from known_rows(data)) if op.ignore_index else data.nsplits[0])
        starts = offsets(rows) if op.ignore_index else [None] * len(rows)
        chunks, i = [], 0
        for data, key in zip(op.inputs, op.keys):
            for c in data.chunks:
                conform = ConformRows(meta=meta, label=key, options=op.options, start=starts[i])
                chunks.append(conform.new_chunk([c], index=chunk_index_of(meta, i), shape=chunk_shape_of(meta, rows[i]),
                                                meta=meta))
                i += 1
        return Tiled(chunks, nsplits_of(meta, rows))


def _concat_rows(objs: list, keys: list, meta: Any, options: dict, ignore_index: bool) -> Any:
    datas = [o.data for o in objs]
    rows = sum(d.shape[0] for d in datas)
    op = ConcatRows(keys=tuple(keys), options=options, ignore_index=bool(ignore_index))
    return op.new_pandas(datas, meta, (rows,) + tuple(meta.shape[1:]))


# ----------------------------------------------------------------- along columns
def concat_columns(*parts: Any, options: dict) -> Any:
    """pandas' concat of partitions holding the same rows (the index is already the result's)."""
    return pd.concat(list(parts), axis=1, sort=False, **options)


def _aligned_columns(target: Any, *parts: Any, options: dict) -> Any:
    return concat_columns(*parts, options=options)


class ConcatColumns(PandasOperator):
    """Inputs side by side, matched on an index computed when tiling (see the module's docstring)."""

    params = ("options", "sort", "join")

    @classmethod
    def tile(cls, op: ConcatColumns) -> Generator[Any, Any, Tiled]:
        out = op.outputs[0]
        target, splits = yield from _target_index(op.inputs, op.join, op.sort)
        frame = from_pandas(pd.DataFrame(index=target), chunk_size=splits)
        result = map_partitions(_aligned_columns, frame, *[_wrap(d) for d in op.inputs], options=op.options,
                                how="left", meta=out.meta)
        yield from recursive_tile(result)
        out.meta = result.meta
        return Tiled(list(result.chunks), result.nsplits)


def _wrap(data: PandasData) -> Any:
    return DataFrame(data) if isinstance(data.meta, pd.DataFrame) else Series(data)


def _target_index(datas: Sequence[PandasData], join: str, sort: Any) -> Generator[Any, Any, tuple]:
    """The result's index (pandas' union or intersection of the inputs') and its partition sizes."""
    indexes = yield from fetch_indexes(datas)
    target = pd.concat([pd.DataFrame(index=ix) for ix in indexes], axis=1, join=join, sort=sort).index
    first = datas[0]
    if target.equals(indexes[0]):
        return target, tuple(first.nsplits[0])
    n = max(1, min(len(first.chunks), len(target)))
    return target, tuple(len(p) for p in np.array_split(np.arange(len(target)), n))


def _concat_columns(objs: list, meta: Any, options: dict, join: str, sort: Any) -> Any:
    datas = [o.data for o in objs]
    same = all(d.partitioning == datas[0].partitioning for d in datas)
    # pandas sorts even equal indexes when asked to, and may decide to for datetimes
    ordered = sort is False or (sort is _NO_DEFAULT and not isinstance(meta.index, pd.DatetimeIndex))
    if same and ordered:
        return map_partitions(concat_columns, *objs, options=options, meta=meta)
    op = ConcatColumns(options=options, sort=sort, join=join)
    return op.new_pandas(datas, meta, (np.nan, meta.shape[1]))


# ----------------------------------------------------------------- the function
def _lazy(obj: Any) -> Any:
    return from_pandas(obj) if isinstance(obj, (pd.DataFrame, pd.Series)) else obj


def _meta_or_value(obj: Any) -> Any:
    if isinstance(obj, (DataFrame, Series)):
        return obj.meta
    if isinstance(obj, (pd.DataFrame, pd.Series)):
        return empty_meta(obj)
    return obj  # pandas says what is wrong with it


def concat(objs: Any, *, axis: Any = 0, join: str = "outer", ignore_index: bool = False, keys: Any = None,
           levels: Any = None, names: Any = None, verify_integrity: bool = False, sort: Any = _NO_DEFAULT,
           copy: Any = _NO_DEFAULT, union_categories: bool = False) -> Any:
    """DataFrames and Series (lazy or pandas) stacked along rows or side by side, as ``pd.concat``.

    ``verify_integrity`` along rows (a check of the index's values) is not
    supported.

    Examples
    --------
    >>> import mars.dataframe as md
    >>> a = md.DataFrame({"x": [1, 2]}, chunk_size=1)
    >>> b = md.DataFrame({"x": [3], "y": ["u"]})
    >>> md.concat([a, b], ignore_index=True).to_pandas()
       x    y
    0  1  NaN
    1  2  NaN
    2  3    u
    """
    objs, keys, single = _listed(objs, keys)
    extra = {} if copy is _NO_DEFAULT else {"copy": copy}
    given = {"join": join, "ignore_index": ignore_index, "keys": keys, "levels": levels, "names": names,
             "verify_integrity": verify_integrity, "union_categories": union_categories}
    metas = [_meta_or_value(o) for o in objs]
    meta = pd.concat(metas[0] if single else metas, axis=axis, sort=sort, **given, **extra)  # pandas' errors
    meta = empty_meta(meta)
    # pandas drops None objects, and their keys
    pairs = [(_lazy(o), k) for o, k in zip(objs, list(keys) if keys is not None else [None] * len(objs))
             if o is not None]
    lazies, kept_keys = [p[0] for p in pairs], [p[1] for p in pairs]
    per_object = {"levels": levels, "names": names, "union_categories": union_categories}
    if axis in (0, "index", "rows"):
        if verify_integrity:
            raise NotImplementedError("concat(verify_integrity=True) along rows is not supported: "
                                      "check the index for duplicates after concatenating")
        return _concat_rows(lazies, kept_keys, meta, dict(per_object, join=join, keys=keys), ignore_index)
    options = dict(per_object, join=join, ignore_index=ignore_index, keys=kept_keys if keys is not None else None)
    return _concat_columns(lazies, meta, options, join, sort)


def _listed(objs: Any, keys: Any) -> tuple[list, Any, bool]:
    """The objects as a list, the keys (a mapping's, unless given), and whether one object was passed alone."""
    if isinstance(objs, Mapping):
        keys = list(objs) if keys is None else keys
        objs = [objs[k] for k in keys]
    single = isinstance(objs, (DataFrame, Series, pd.DataFrame, pd.Series))
    return ([objs] if single else list(objs)), keys, single


def join_many(frame: DataFrame, others: list, how: str, sort: bool) -> DataFrame:
    """``frame.join(others)``: pandas' concat route for a list, which holds for unique indexes.

    For ``left``/``right`` pandas concatenates on the union of the indexes
    (which may make ints float) and then keeps the rows of the first / last
    frame's index.
    """
    frames = [frame] + [_lazy(o) for o in others]
    if how in ("inner", "outer"):
        return concat(frames, axis=1, join=how, verify_integrity=True, sort=True if how == "outer" else sort)
    union = concat(frames, axis=1, join="outer", verify_integrity=True, sort=sort)
    base = frames[0] if how == "left" else frames[-1]
    if sort:
        base = base.sort_index()
    return map_partitions(_second, base, union, how="left")


def _second(base: Any, value: Any) -> Any:
    return value
