"""``pivot_table``: a table of aggregates, one column per value of ``columns``.

Aggregations that split into partials (sum, count, mean, min, max, first,
last, prod, var, std) reduce per-partition groupby partials in a tree;
others shuffle rows by key. Margins and a few other cases gather the frame
into one partition. The output's columns come from the data, so the
result's ``meta`` is set when it is tiled.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import is_list_like

from ..core.entity import Tileable
from ..core.operator import Fetch, Tiled
from ..core.tiling import as_data, recursive_tile
from .core import (
    DataFrame,
    PandasOperator,
)
from .meta import empty_meta, fake
from .reduction import tree_reduce
from .reshape import MapOne, _convert_by, _lazy
from .rows import single_chunk
from .shuffle import hash_shuffle

__all__ = ["pivot_table"]

# ----------------------------------------------------------------- pivot_table
#: statistics each decomposable aggregation keeps, and how partials of each statistic combine
_NEEDS = {"sum": ("sum",), "count": ("count",), "min": ("min",), "max": ("max",), "first": ("first",),
          "last": ("last",), "prod": ("prod",), "mean": ("sum", "count"), "var": ("count", "mean", "m2"),
          "std": ("count", "mean", "m2")}
_COMBINE = {"sum": "sum", "count": "sum", "min": "min", "max": "max", "first": "first", "last": "last",
            "prod": "prod"}


class _GroupStats:
    """Per-partition partial aggregates of ``values`` by ``keys``, combined and finished by a tree reduction.

    ``funcs`` maps each value column to one of pandas' decomposable
    aggregations. A partial is a DataFrame indexed by the keys, with one
    column per (value column, statistic).
    """

    def __init__(self, keys: list, funcs: dict, dropna: bool, sort: bool):
        self.keys, self.funcs, self.dropna, self.sort = keys, funcs, dropna, sort

    def chunk(self, part: pd.DataFrame) -> tuple:
        """Partial statistics by key and, when keys keep their order of appearance, each key's values in order."""
        grouped = part.groupby(self.keys, sort=False, dropna=self.dropna, observed=True)
        pieces = {}
        for col, func in self.funcs.items():
            g = grouped[col]
            for stat in _NEEDS[func]:
                if stat == "m2":
                    pieces[(col, stat)] = (g.var(ddof=0) * g.count()).fillna(0.0)
                elif stat == "mean":
                    pieces[(col, stat)] = g.mean().fillna(0.0)
                else:
                    pieces[(col, stat)] = getattr(g, stat)()
        orders = None if self.sort else [part[k].dropna().drop_duplicates() for k in self.keys]
        return pd.DataFrame(pieces), orders

    def combine(self, parts: list, sort: bool = False) -> tuple:
        kept = [p for p in parts if len(p[0])] or parts[:1]
        both = pd.concat([p[0] for p in kept])
        pieces = {}
        for (col, stat) in both.columns:
            if stat in _COMBINE:
                pieces[(col, stat)] = getattr(self._by_keys(both[(col, stat)], sort), _COMBINE[stat])()
        for col, func in self.funcs.items():
            if "m2" in _NEEDS[func]:
                pieces.update(self._combined_var(both, col, sort))
        orders = None if self.sort else \
            [pd.concat([p[1][i] for p in parts]).drop_duplicates() for i in range(len(self.keys))]
        return pd.DataFrame(pieces, index=None if pieces else both.index)[both.columns], orders

    def _by_keys(self, obj: Any, sort: bool) -> Any:
        return obj.groupby(level=list(range(obj.index.nlevels)), sort=sort, dropna=self.dropna, observed=True)

    def _combined_var(self, both: pd.DataFrame, col: Any, sort: bool) -> dict:
        # Chan et al.: squared deviations about each partial's mean, moved to the group's mean
        n, mean, m2 = both[(col, "count")], both[(col, "mean")], both[(col, "m2")]
        total = self._by_keys(n, sort).transform("sum")
        group_mean = (self._by_keys(n * mean, sort).transform("sum") / total).where(total > 0, 0.0)
        spread = m2 + n * (mean - group_mean) ** 2
        return {(col, "count"): self._by_keys(n, sort).sum(), (col, "mean"): self._by_keys(group_mean, sort).first(),
                (col, "m2"): self._by_keys(spread, sort).sum()}

    def finish(self, parts: list) -> pd.DataFrame:
        stats, orders = self.combine(parts, sort=self.sort)
        if orders is not None and isinstance(stats.index, pd.MultiIndex):
            stats.index = _appearance_levels(stats.index, orders)
        out = {}
        for col, func in self.funcs.items():
            if func == "mean":
                out[col] = stats[(col, "sum")] / stats[(col, "count")]
            elif func in ("var", "std"):
                n = stats[(col, "count")]
                var = (stats[(col, "m2")] / (n - 1)).where(n > 1)
                out[col] = np.sqrt(var) if func == "std" else var
            else:
                out[col] = stats[(col, func)]
        return pd.DataFrame(out, index=stats.index)


def _appearance_levels(index: pd.MultiIndex, orders: list) -> pd.MultiIndex:
    """``index`` with each level's values in their order of appearance in the data, as ``groupby(sort=False)``."""
    levels = [pd.Index(order) for order in orders]
    codes = [level.get_indexer(index.get_level_values(i)) for i, level in enumerate(levels)]
    return pd.MultiIndex(levels=levels, codes=codes, names=index.names)


class _Step:
    """One step of a :class:`_GroupStats` reduction as a callable keyed by the reduction's parameters.

    (A bound method would be keyed by its name alone: two reductions would share keys.)
    """

    def __init__(self, stats: _GroupStats, name: str):
        self.stats, self.name = stats, name

    def __call__(self, arg: Any) -> Any:
        return getattr(self.stats, self.name)(arg)

    def __mars_tokenize__(self) -> tuple:
        s = self.stats
        return ("pivot-groups", self.name, s.keys, s.funcs, s.dropna, s.sort)


def _pivot_post(agged: Any, index: list, columns: list, values_passed: bool, values_multi: bool,
                options: dict, aggfunc: Any) -> pd.DataFrame:
    """The pivot table from the aggregated groups: pandas' own steps after its groupby (no margins)."""
    dropna, fill_value = options["dropna"], options["fill_value"]
    keys = index + columns
    if dropna and isinstance(agged, pd.DataFrame) and len(agged.columns):
        agged = agged.dropna(how="all")
    table = agged
    if table.index.nlevels > 1 and index:
        index_names = agged.index.names[:len(index)]
        to_unstack = []
        for i in range(len(index), len(keys)):
            name = agged.index.names[i]
            to_unstack.append(i if name is None or name in index_names else name)
        table = agged.unstack(to_unstack, fill_value=fill_value)
    if not dropna:
        if isinstance(table.index, pd.MultiIndex):
            full = pd.MultiIndex.from_product(table.index.levels, names=table.index.names)
            table = table.reindex(full, axis=0, fill_value=fill_value)
        if isinstance(table.columns, pd.MultiIndex):
            full = pd.MultiIndex.from_product(table.columns.levels, names=table.columns.names)
            table = table.reindex(full, axis=1, fill_value=fill_value)
    if options["sort"] is True and isinstance(table, pd.DataFrame):
        table = table.sort_index(axis=1)
    if fill_value is not None:
        table = table.fillna(fill_value)
        if aggfunc is len and not options["observed"] and pd.api.types.is_integer(fill_value):
            table = table.astype(np.int64)
    if values_passed and not values_multi and table.columns.nlevels > 1:
        table.columns = table.columns.droplevel(0)
    if len(index) == 0 and len(columns) > 0:
        table = table.T
    if isinstance(table, pd.DataFrame) and dropna:
        table = table.dropna(how="all", axis=1)
    return table


class PivotFinish(PandasOperator):
    """The pivot table from each aggregation's groups (several aggregations side by side, as pandas)."""

    params = ("index", "columns", "values_passed", "values_multi", "options", "funcs", "many")

    def execute(self, *aggs: Any) -> pd.DataFrame:
        tables = [_pivot_post(a, self.index, self.columns, self.values_passed, self.values_multi, self.options, f)
                  for a, f in zip(aggs, self.funcs)]
        if not self.many:
            return tables[0]
        return pd.concat(tables, keys=[getattr(f, "__name__", f) for f in self.funcs], axis=1)


class PivotWhole(PandasOperator):
    """pandas' pivot_table of the whole frame (margins, groupers, unobserved categories)."""

    params = ("options",)

    def execute(self, whole: pd.DataFrame) -> pd.DataFrame:
        return pd.pivot_table(whole, **self.options)


class GroupAgg(PandasOperator):
    """One hash partition's groups aggregated by pandas (None when it has no rows)."""

    params = ("keys", "values", "func", "options", "kwargs")

    def execute(self, part: pd.DataFrame) -> Any:
        if not len(part):
            return None
        return _group_agg(part, self.keys, self.values, self.func, self.options, self.kwargs)


def _group_agg(part: pd.DataFrame, keys: list, values: list, func: Any, options: dict, kwargs: dict) -> Any:
    grouped = part.groupby(keys, observed=options["observed"], sort=options["sort"], dropna=options["dropna"])
    return grouped[values].agg(func, **kwargs)


class ConcatGroups(PandasOperator):
    """The hash partitions' aggregated groups end to end, in key order (as one groupby gives them)."""

    params = ("empty", "keys", "values", "func", "options", "kwargs")

    def execute(self, *pieces: Any) -> Any:
        kept = [p for p in pieces if p is not None]
        if not kept:
            return _group_agg(self.empty, self.keys, self.values, self.func, self.options, self.kwargs)
        return pd.concat(kept).sort_index()



def _tree_funcs(func: Any, values: list, kwargs: dict) -> dict | None:
    """Per value column, a decomposable aggregation name; None when ``func`` is not made of those."""
    if kwargs:
        return None
    if isinstance(func, str):
        return {v: func for v in values} if func in _NEEDS else None
    if isinstance(func, dict) and all(isinstance(f, str) and f in _NEEDS for f in func.values()):
        return dict(func)
    return None


def _select(part: pd.DataFrame, columns: list) -> pd.DataFrame:
    return part[columns]


def _shuffled_agg(data: Any, keys: list, values: list, func: Any, options: dict, kwargs: dict) -> Any:
    """One chunk of ``func``'s groups: rows hash-partitioned by key, each partition aggregated by pandas."""
    cols = list(dict.fromkeys(keys + values))
    meta = data.meta[cols]
    selected = [MapOne(func=_select, args=(cols,)).new_chunk([c], index=c.index, shape=(c.shape[0], len(cols)),
                                                                meta=meta) for c in data.chunks]
    reducers = hash_shuffle(data, keys, len(selected), chunks=selected)
    aggs = [GroupAgg(keys=keys, values=values, func=func, options=options, kwargs=kwargs).new_chunk(
        [r], index=r.index, shape=(np.nan, np.nan), meta=None) for r in reducers]
    return ConcatGroups(empty=meta, keys=keys, values=values, func=func, options=options, kwargs=kwargs).new_chunk(
        aggs, index=(0, 0), shape=(np.nan, np.nan), meta=None)


class PivotTable(PandasOperator):
    """``pivot_table``: each aggregation's groups (a tree reduction or a hash shuffle), then pandas' pivoting.

    The table's columns are the data's values: it is computed and fetched at
    tiling, and the output's metadata set from it.
    """

    params = ("index", "columns", "values", "values_passed", "values_multi", "options", "funcs", "many",
              "kwargs", "margins")

    @classmethod
    def tile(cls, op: PivotTable) -> Generator[Any, Any, Tiled]:
        data, out = op.inputs[0], op.outputs[0]
        if op.margins is not None:
            # pandas on the whole frame: index/columns as the user gave them may be groupers or arrays
            options = dict(op.options, **op.margins, **op.kwargs, index=op.index, columns=op.columns,
                           aggfunc=op.funcs if op.many else op.funcs[0],
                           values=(op.values if op.values_multi else op.values[0]) if op.values_passed else None)
            final = PivotWhole(options=options).new_chunk([single_chunk(data)], index=(0, 0), shape=(np.nan, np.nan),
                                                          meta=None)
        else:
            aggs = []
            for func in op.funcs:
                aggs.append((yield from _groups_chunk(data, op, func)))
            final = PivotFinish(index=op.index, columns=op.columns, values_passed=op.values_passed,
                                values_multi=op.values_multi, options=op.options, funcs=op.funcs,
                                many=op.many).new_chunk(aggs, index=(0, 0), shape=(np.nan, np.nan), meta=None)
        (table,) = yield Fetch([final])
        final.meta, final.shape = empty_meta(table), table.shape
        if out is not None:
            out.meta, out.shape = final.meta, table.shape
        return Tiled([final], ((table.shape[0],), (table.shape[1],)))


def _groups_chunk(data: Any, op: PivotTable, func: Any) -> Generator[Any, Any, Any]:
    keys = op.index + op.columns
    tree = _tree_funcs(func, op.values, op.kwargs)
    if tree is None:
        return _shuffled_agg(data, keys, op.values, func, op.options, op.kwargs)
    stats = _GroupStats(keys, tree, op.options["dropna"], op.options["sort"])
    steps = [_Step(stats, name) for name in ("chunk", "combine", "finish")]
    groups = tree_reduce(data, *steps, pd.DataFrame())
    yield from recursive_tile(groups)
    return groups.chunks[0]


def _check_pivot_args(meta: pd.DataFrame, keys: list, values: list, funcs: list, options: dict,
                      kwargs: dict, call: dict) -> None:
    """pandas' errors for these arguments, raised now."""
    if all(isinstance(f, str) or isinstance(f, dict) and all(isinstance(v, str) for v in f.values()) for f in funcs):
        pd.pivot_table(fake(meta), **call, **options, **kwargs)
        return
    for k in keys + values:
        if pd.api.types.is_hashable(k) and k not in meta.columns:
            raise KeyError(k)


def pivot_table(data: Any, values: Any = None, index: Any = None, columns: Any = None, aggfunc: Any = "mean",
                fill_value: Any = None, margins: bool = False, dropna: bool = True, margins_name: Any = "All",
                observed: bool = True, sort: bool = True, **kwargs: Any) -> DataFrame:
    """A spreadsheet-style pivot table, as ``pandas.pivot_table``.

    Sums, counts, means, minima, maxima, first/last values, products and
    variances are combined from per-partition partial aggregates; other
    aggregations hash-partition the rows by key first. Margins, groupers and
    unobserved categories run pandas on the gathered frame. The columns are
    known once it ran.

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"k": ["a", "b", "a"], "c": ["x", "x", "y"], "v": [1, 2, 3]}, chunk_size=2)
    >>> md.pivot_table(df, values="v", index="k", columns="c", aggfunc="sum").to_pandas().to_dict()
    {'x': {'a': 1.0, 'b': 2.0}, 'y': {'a': 3.0, 'b': nan}}
    """
    data = _lazy(data)
    meta = data.meta
    index_keys, column_keys = _convert_by(index), _convert_by(columns)
    keys = index_keys + column_keys
    if any(isinstance(k, Tileable) for k in keys):
        raise NotImplementedError("pivot_table keys must be column labels (or pandas groupers/arrays), "
                                  "not lazy objects; assign them as columns first")
    many = isinstance(aggfunc, list)
    funcs = list(aggfunc) if many else [aggfunc]
    values_passed = values is not None
    values_multi = values_passed and is_list_like(values)
    value_list = (list(values) if values_multi else [values]) if values_passed else \
        [c for c in meta.columns if c not in keys]
    options = {"fill_value": fill_value, "dropna": dropna, "observed": observed, "sort": sort}
    call = {"values": values, "index": index, "columns": columns, "aggfunc": aggfunc}
    margin_args = {"margins": margins, "margins_name": margins_name}
    _check_pivot_args(meta, keys, value_list, funcs, options, dict(kwargs, **margin_args), call)
    labels = all(pd.api.types.is_hashable(k) and k in meta.columns for k in keys)
    categorical = labels and any(isinstance(meta[k].dtype, pd.CategoricalDtype) for k in keys)
    whole = margins or not labels or not value_list or (not observed and categorical) or \
        (not sort and (not dropna or any(_tree_funcs(f, value_list, kwargs) is None for f in funcs)))
    try:
        guess = empty_meta(pd.pivot_table(meta, **call, **options, **margin_args, **kwargs))
    except Exception:  # noqa: BLE001 - only a first guess; the real metadata is set when it runs
        guess = pd.DataFrame()
    op = PivotTable(index=index_keys, columns=column_keys, values=value_list, values_passed=values_passed,
                    values_multi=values_multi, options=options, funcs=funcs, many=many, kwargs=kwargs,
                    margins=margin_args if whole else None)
    return op.new_pandas([as_data(data)], guess, (np.nan, np.nan))


def _df_pivot_table(self: DataFrame, values: Any = None, index: Any = None, columns: Any = None,
                    aggfunc: Any = "mean", fill_value: Any = None, margins: bool = False, dropna: bool = True,
                    margins_name: Any = "All", observed: bool = True, sort: bool = True, **kwargs: Any) -> DataFrame:
    """A spreadsheet-style pivot table, as ``pandas.DataFrame.pivot_table`` (see :func:`pivot_table`)."""
    return pivot_table(self, values, index, columns, aggfunc, fill_value, margins, dropna, margins_name, observed,
                       sort, **kwargs)


DataFrame.pivot_table = _df_pivot_table
