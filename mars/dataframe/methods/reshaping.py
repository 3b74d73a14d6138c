"""Reshaping: ``explode``, ``stack`` (per partition), ``unstack`` and ``pivot`` (a shuffle).

``explode`` and ``stack`` turn each row into rows of its own, so they run
per partition. ``unstack`` gathers the rows of one remaining index key into
one row: the labels of the new columns are found first (a tree of distinct
values, fetched at tiling), rows go by the hash of their remaining key to
one partition each, each partition unstacks with the full column set, and
the result is sorted by its index (the distributed ``sort_index``), as
pandas sorts it. Whether missing cells appear (int columns turn float) is
known only then: each partition's dtypes are fetched and the partitions
cast to the dtypes pandas would give the whole.
"""

from __future__ import annotations

from collections.abc import Generator
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from ...core.operator import Fetch, Tiled
from ...core.shuffle import ShuffleMap, shuffle_chunks
from ...core.tiling import as_data, recursive_tile
from ..core import (
    DataFrame,
    PandasOperator,
    Series,
    chunk_index_of,
    nsplits_of,
)
from ..map import map_partitions
from ..meta import empty_meta, fake
from ..reduction import tree_reduce
from ..rows import renumbered
from ..shuffle import ConcatPieces, split_by_codes
from .carry import cast_like

__all__ = ["pivot"]


def _explode(self: Any, column: Any = None, ignore_index: bool = False) -> Any:
    """Each element of list-likes as a row of its own (labels repeated), per partition, as pandas.

    >>> import mars.dataframe as md
    >>> md.Series([[1, 2], [3]], chunk_size=1).explode().to_pandas().tolist()
    [1, 2, 3]
    """
    args = (column,) if isinstance(self, DataFrame) else ()
    meta = self.meta.explode(*args)  # pandas' errors, now; exploded lists are object values
    result = map_partitions("explode", self, *args, same_rows=False, meta=meta)
    return renumbered(result) if ignore_index else result


def _stack(self: DataFrame, level: Any = -1, dropna: Any = pd.api.extensions.no_default,
           sort: Any = pd.api.extensions.no_default, future_stack: bool = True) -> Any:
    """The columns (level ``level``) moved into the index, per partition, as pandas 3's ``stack``.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 2], "b": [3, 4]}, chunk_size=1).stack().to_pandas().tolist()
    [1, 3, 2, 4]
    """
    kw = {"level": level, "future_stack": future_stack}
    for name, value in (("dropna", dropna), ("sort", sort)):
        if value is not pd.api.extensions.no_default:
            kw[name] = value
    sample = fake(self.meta).stack(**kw)
    return map_partitions("stack", self, same_rows=False, meta=empty_meta(sample), **kw)


# ----------------------------------------------------------------- unstack
def _level_values(part: pd.Series, level: int) -> pd.Index:
    return part.index.get_level_values(level).unique()


def _merge_levels(parts: list) -> pd.Index:
    kept = [p for p in parts if len(p)]
    return kept[0].append(kept[1:]).unique() if kept else parts[0]


class RestKeySplit(ShuffleMap, PandasOperator):
    """Rows split by the hash of their index without the unstacked level."""

    params = ("level",)

    def split(self, value: pd.Series) -> list:
        n = len(self.output_keys)
        if not len(value):
            return [value] * n
        rest = value.index.droplevel(self.level).to_frame(index=False)
        codes = (pd.util.hash_pandas_object(rest, index=False).to_numpy() % np.uint64(n)).astype(np.int64)
        return split_by_codes(value, codes, n)


class UnstackPart(PandasOperator):
    """One partition unstacked, with every column label."""

    params = ("level", "labels", "fill_value")
    fusible = True

    def execute(self, part: pd.Series) -> pd.DataFrame:
        out = part.unstack(self.level, fill_value=self.fill_value)
        if len(out.columns) != len(self.labels) or not out.columns.equals(self.labels):
            out = out.reindex(columns=self.labels, fill_value=self.fill_value)
        return out


class DtypesOf(PandasOperator):
    params = ()

    def execute(self, value: Any) -> Any:
        return empty_meta(value) if len(value) else None


class CastTo(PandasOperator):
    params = ("meta",)  # a parameter: on a worker the op has no outputs to read the meta from
    fusible = True

    def execute(self, value: Any) -> Any:
        return cast_like(value, self.meta)


def _common_dtype(dtypes: list) -> Any:
    """The one dtype of an unstacked Series' columns: pandas upcasts its single block as a whole."""
    distinct = list(dict.fromkeys(dtypes))
    if len(distinct) == 1:
        return distinct[0]
    if all(isinstance(d, np.dtype) and d.kind in "biuf" for d in distinct) and not any(d.kind == "b" for d in distinct):
        return np.result_type(*distinct)
    return np.dtype(object)


class Unstack(PandasOperator):
    """Series.unstack by a shuffle on the remaining index levels (rows unsorted: sort_index follows)."""

    params = ("level", "fill_value")

    @classmethod
    def tile(cls, op: Unstack) -> Generator[Any, Any, Tiled]:
        data, out = op.inputs[0], op.outputs[0]
        found = tree_reduce(data, partial(_level_values, level=op.level), _merge_levels, _merge_levels,
                            np.dtype(object))
        yield from recursive_tile(found)
        (labels,) = yield Fetch(found.chunks)
        labels = labels.sort_values() if len(labels) else labels
        labels = labels.rename(data.meta.index.names[op.level])
        n = len(data.chunks)
        meta = data.meta
        pieces = shuffle_chunks(
            list(data.chunks), n, lambda i: RestKeySplit(level=op.level), lambda r: ConcatPieces(meta=meta),
            [{"index": (r,), "shape": (np.nan,), "meta": meta} for r in range(n)],
            lambda i, r: {"index": (i, r), "shape": (np.nan,), "meta": meta})
        guess = empty_meta(meta.unstack(op.level, fill_value=op.fill_value).reindex(columns=labels))
        parts = [UnstackPart(level=op.level, labels=labels, fill_value=op.fill_value).new_chunk(
            [p], index=(r, 0), shape=(np.nan, len(labels)), meta=guess) for r, p in enumerate(pieces)]
        metas = yield Fetch([DtypesOf().new_chunk([p], index=p.index, shape=(0, len(labels)), meta=guess)
                             for p in parts])
        found = [dt for m in metas if m is not None for dt in m.dtypes]
        final = guess.astype(_common_dtype(found)) if found else guess
        chunks = [CastTo(meta=final).new_chunk([p], index=chunk_index_of(final, r), shape=p.shape, meta=final)
                  for r, p in enumerate(parts)]
        out.meta, out.shape = final, (np.nan, len(labels))
        return Tiled(chunks, nsplits_of(final, [np.nan] * n))


def _unstack(self: Any, level: Any = -1, fill_value: Any = None, sort: bool = True) -> Any:
    """The index level ``level`` moved into the columns, as pandas (rows sorted).

    >>> import mars.dataframe as md, pandas as pd
    >>> idx = pd.MultiIndex.from_tuples([("a", "x"), ("a", "y"), ("b", "x")])
    >>> md.Series([1, 2, 3], index=idx, chunk_size=1).unstack().to_pandas()
         x    y
    a  1.0  2.0
    b  3.0  NaN
    """
    if isinstance(self, DataFrame):
        raise NotImplementedError("DataFrame.unstack; stack() it first, or unstack each column")
    if not isinstance(self.meta.index, pd.MultiIndex):
        raise NotImplementedError("unstack of a Series without a MultiIndex; use to_frame().T")
    if not sort:
        raise NotImplementedError("unstack(sort=False); rows are sorted by their labels")
    if isinstance(level, (list, tuple)):
        raise NotImplementedError("unstack of several levels; unstack one level at a time")
    number = self.meta.index._get_level_number(level)
    data = as_data(self)
    meta = empty_meta(self.meta.unstack(number, fill_value=fill_value))
    result = Unstack(level=number, fill_value=fill_value).new_pandas([data], meta, (np.nan, meta.shape[1]))
    return result.sort_index()


def pivot(data: DataFrame, *, columns: Any, index: Any = pd.api.extensions.no_default,
          values: Any = pd.api.extensions.no_default) -> DataFrame:
    """Reshape by ``index`` and ``columns`` labels (no aggregation), as ``pandas.pivot``.

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"k": ["a", "a", "b"], "c": ["x", "y", "x"], "v": [1, 2, 3]}, chunk_size=2)
    >>> md.pivot(df, index="k", columns="c", values="v").to_pandas().to_dict()
    {'x': {'a': 1.0, 'b': 3.0}, 'y': {'a': 2.0, 'b': nan}}
    """
    no = pd.api.extensions.no_default
    if index is no or values is no or isinstance(values, list) or isinstance(columns, list):
        raise NotImplementedError("pivot needs one index, one columns and one values label here; "
                                  "use pivot_table for several")
    fake(data.meta).pivot(index=index, columns=columns, values=values)  # pandas' errors, now
    keyed = data.set_index([index, columns])[values]
    return _unstack(keyed, level=-1)


def _df_pivot(self: DataFrame, *, columns: Any, index: Any = pd.api.extensions.no_default,
              values: Any = pd.api.extensions.no_default) -> DataFrame:
    """``pivot(self, ...)``: see :func:`pivot`."""
    return pivot(self, columns=columns, index=index, values=values)


for _cls in (DataFrame, Series):
    _cls.explode = _explode
DataFrame.stack = _stack
Series.unstack = _unstack
DataFrame.unstack = _unstack
DataFrame.pivot = _df_pivot
