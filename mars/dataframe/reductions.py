"""Reductions: ``sum``, ``mean``, ``var``, ``quantile``, ``describe``, ``agg``, and cumulative sums.

A DataFrame reduced over its rows (``axis=0``) gives a Series indexed by its
columns; a Series gives one value (a 0-d mars tensor, whose ``fetch()`` is
what pandas returns, e.g. ``np.float64``). ``axis=1`` is partition-wise.

Each reduction is a :class:`Reducer`: three pure stages run by
:func:`~mars.dataframe.reduction.tree_reduce` over the row partitions. The
partials are small: one row per partition (a partition's sums, or its
counts, means and sums of squared deviations), so the tree moves and merges
little data.

- :class:`Simple`: reductions that reduce their partials the same way (sum,
  prod, min, max, any, all; count partials are summed);
- :class:`Moments`: mean, var, std and sem from per-partition (count, mean,
  M2) merged with Chan's formula, numerically sound;
- :class:`Gather`: exact reductions that need all values at once (median,
  quantile, describe, and the fallback for dtypes the others do not cover,
  e.g. the mean of datetimes): the partitions are concatenated and pandas
  reduces them.

``agg`` with a list or a dict runs all its reductions in one tree.
Cumulative ops (``cumsum`` ...) run per partition, then add a carry from the
earlier partitions (:class:`Cumulative`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..core.operator import Tiled
from ..core.tiling import as_data
from .core import DataFrame, Index, PandasOperator, Series, concat_values
from .map import map_partitions
from .meta import dtype_of_scalar, empty_meta, fake
from .reduction import tree_reduce

__all__: list[str] = []


# ----------------------------------------------------------------- reducers
class Reducer:
    """Three pure stages of a reduction; parameters are plain data (they travel to workers).

    ``chunk(partition)`` gives a partial, ``combine(partials)`` one partial,
    ``agg(partials)`` the result: a Series indexed by the columns, or one
    value when ``scalar`` (the input is a Series or Index).
    """

    def __init__(self, **params: Any):
        self.__dict__.update(params)

    def __mars_tokenize__(self) -> tuple:
        return type(self).__qualname__, sorted(self.__dict__.items())

    def stages(self) -> tuple:
        return Stage(self, "chunk"), Stage(self, "combine"), Stage(self, "agg")


class Stage:
    """A reducer's stage as a callable whose key names the reducer (a bound method's would not)."""

    __slots__ = ("name", "reducer")

    def __init__(self, reducer: Reducer, name: str):
        self.reducer, self.name = reducer, name

    def __call__(self, value: Any) -> Any:
        return getattr(self.reducer, self.name)(value)

    def __reduce__(self) -> tuple:
        return Stage, (self.reducer, self.name)

    def __mars_tokenize__(self) -> tuple:
        return self.name, self.reducer


def as_frame(part: Any) -> pd.DataFrame:
    """A Series' or Index's values as a one-column frame, so that every reducer works on frames."""
    if isinstance(part, pd.DataFrame):
        return part
    if isinstance(part, pd.Index):
        return part.to_frame(index=False, name=0)
    return part.to_frame(name=0)


def as_row(values: pd.Series) -> pd.DataFrame:
    """A reduction's per-column result as a one-row frame with each column's own dtype."""
    row = values.to_frame().T
    return row.infer_objects() if values.dtype == object else row


class Simple(Reducer):
    """sum, prod, min, max, any, all, count: partials reduce again with ``again`` (count partials are summed).

    Empty partitions give no partial (an empty min would be NaN). ``min_count``
    is applied at the end, from the partitions' counts.
    """

    name: str
    kwargs: dict
    again: str
    again_kwargs: dict
    min_count: int
    empty: Any
    scalar: bool

    def chunk(self, part: Any) -> tuple | None:
        frame = as_frame(part)
        if not len(frame):
            return None
        values = getattr(frame, self.name)(**self.kwargs)
        counts = frame.count(**_numeric_only(self.kwargs)).to_numpy() if self.min_count else None
        return as_row(values), counts

    def _merge(self, partials: list) -> tuple[pd.Series, Any] | None:
        kept = [p for p in partials if p is not None]
        if not kept:
            return None
        rows = pd.concat([p[0] for p in kept], ignore_index=True) if len(kept) > 1 else kept[0][0]
        values = getattr(rows, self.again)(**self.again_kwargs)
        counts = sum(p[1] for p in kept) if self.min_count else None
        return values, counts

    def combine(self, partials: list) -> tuple | None:
        merged = self._merge(partials)
        return None if merged is None else (as_row(merged[0]), merged[1])

    def agg(self, partials: list) -> Any:
        merged = self._merge(partials)
        if merged is None:
            return getattr(self.empty, self.name)(**self.kwargs, **_given(min_count=self.min_count))
        values, counts = merged
        if self.min_count:
            values = values.where(counts >= self.min_count)
        return values.iloc[0] if self.scalar else values


def _numeric_only(kwargs: dict) -> dict:
    return {"numeric_only": kwargs["numeric_only"]} if kwargs.get("numeric_only") else {}


def _given(**kw: Any) -> dict:
    return {k: v for k, v in kw.items() if v}


class Moments(Reducer):
    """mean, var, std, sem of numeric columns from per-partition (count, sum, M2).

    Partitions' M2 (sums of squared deviations from their own mean) merge by
    Chan's formula, ``M2 = sum(M2_i) + sum(n_i * (mean_i - mean)**2)``, which
    does not lose precision the way sums of squares do.
    """

    name: str
    skipna: bool
    ddof: int
    positions: list | None
    columns: pd.Index
    scalar: bool

    def chunk(self, part: Any) -> tuple:
        frame = as_frame(part)
        if self.positions is not None:
            frame = frame.iloc[:, self.positions]
        if self.name == "mean":
            # pandas' block-wise sum and count: no float copy of the partition
            n = frame.count().to_numpy(dtype=np.float64)
            total = frame.sum().to_numpy(dtype=np.float64)
            nan_seen = n < len(frame)
            return n, total, np.zeros_like(total), nan_seen
        x = frame.to_numpy(dtype=np.float64, na_value=np.nan)
        valid = ~np.isnan(x)
        n = valid.sum(axis=0).astype(np.float64)
        total = np.where(valid, x, 0.0).sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            deviations = x - total / n
        m2 = np.where(valid, deviations * deviations, 0.0).sum(axis=0)
        return n, total, m2, n < len(frame)

    def combine(self, partials: list) -> tuple:
        n = sum(p[0] for p in partials)
        total = sum(p[1] for p in partials)
        nan_seen = np.logical_or.reduce([p[3] for p in partials])
        if self.name == "mean":
            return n, total, np.zeros_like(total), nan_seen
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = total / n
            spread = [np.where(p[0] > 0, p[0] * (p[1] / p[0] - mean) ** 2, 0.0) for p in partials]
        return n, total, sum(p[2] for p in partials) + sum(spread), nan_seen

    def agg(self, partials: list) -> Any:
        n, total, m2, nan_seen = self.combine(partials)
        with np.errstate(invalid="ignore", divide="ignore"):
            if self.name == "mean":
                out = total / n
            else:
                out = np.where(n - self.ddof > 0, m2 / (n - self.ddof), np.nan)
                if self.name in ("std", "sem"):
                    out = np.sqrt(out)
                if self.name == "sem":
                    out = out / np.sqrt(n)
        if not self.skipna:
            out = np.where(nan_seen, np.nan, out)
        if self.scalar:
            return np.float64(out[0])
        return pd.Series(out, index=self.columns, dtype=np.float64)


class Gather(Reducer):
    """Exact reductions that need all the values at once: partitions concatenated, then pandas.

    Used for median, quantile and describe, and where the tree reducers do
    not cover a dtype (the mean of datetimes). It is one task: the data must
    fit one worker.
    """

    name: str
    args: tuple
    kwargs: dict
    positions: list | None
    meta: Any

    def chunk(self, part: Any) -> Any:
        return part if self.positions is None else part.iloc[:, self.positions]

    def combine(self, partials: list) -> Any:
        return concat_values(partials, self.meta)

    def agg(self, partials: list) -> Any:
        whole = concat_values(partials, self.meta)
        return getattr(whole, self.name)(*self.args, **self.kwargs)


class Multi(Reducer):
    """Several reductions in one tree (``agg`` with a list or a dict); ``assemble`` builds pandas' result."""

    reducers: list
    assemble: Any

    def chunk(self, part: Any) -> tuple:
        return tuple(r.chunk(part) for r in self.reducers)

    def combine(self, partials: list) -> tuple:
        return tuple(r.combine([p[i] for p in partials]) for i, r in enumerate(self.reducers))

    def agg(self, partials: list) -> Any:
        return self.assemble([r.agg([p[i] for p in partials]) for i, r in enumerate(self.reducers)])


# ----------------------------------------------------------------- choosing a reducer
SIMPLE = {"sum": "sum", "prod": "prod", "min": "min", "max": "max", "any": "any", "all": "all", "count": "sum"}
MOMENTS = ("mean", "var", "std", "sem")


def _moments_ok(meta: Any, positions: list | None) -> bool:
    """Moments cover numpy bool, int and float64 columns; other dtypes are gathered."""
    dtypes = _dtypes(meta)
    if positions is not None:
        dtypes = [dtypes[i] for i in positions]
    return all(isinstance(dt, np.dtype) and (dt.kind in "biu" or dt == np.float64) for dt in dtypes)


def _dtypes(meta: Any) -> list:
    return list(meta.dtypes) if isinstance(meta, pd.DataFrame) else [meta.dtype]


def _numeric_positions(meta: Any, kwargs: dict) -> list | None:
    if not isinstance(meta, pd.DataFrame) or not kwargs.get("numeric_only"):
        return None
    return [i for i, dt in enumerate(meta.dtypes) if pd.api.types.is_numeric_dtype(dt)]


def make_reducer(meta: Any, name: str, args: tuple, kwargs: dict, result: Any) -> Reducer:
    """The reducer of ``meta.<name>(*args, **kwargs)``; ``result`` is pandas' result on a sample."""
    scalar = not isinstance(meta, pd.DataFrame)
    if name in SIMPLE and not args:
        kw = dict(kwargs)
        min_count = kw.pop("min_count", 0) or 0
        skipna = {"skipna": kw.get("skipna", True)} if name not in ("count", "any", "all") else {}
        return Simple(name=name, kwargs=kw, again=SIMPLE[name], again_kwargs=skipna, min_count=min_count,
                      empty=meta, scalar=scalar)
    positions = _numeric_positions(meta, kwargs)
    if name in MOMENTS and not args and _moments_ok(meta, positions):
        columns = result.index if isinstance(result, pd.Series) else None
        return Moments(name=name, skipna=kwargs.get("skipna", True), ddof=kwargs.get("ddof", 1),
                       positions=positions, columns=columns, scalar=scalar)
    if isinstance(meta, pd.DataFrame) and positions is not None:
        kwargs = {**kwargs, "numeric_only": False}
        meta = meta.iloc[:, positions]
    return Gather(name=name, args=tuple(args), kwargs=kwargs, positions=positions, meta=meta)


def sample_result(meta: Any, name: str, args: tuple, kwargs: dict) -> Any:
    """pandas' result on a small sample: it checks the arguments (pandas' errors, at build time) and gives the meta."""
    kw = {k: v for k, v in kwargs.items() if k != "min_count"}
    return getattr(fake(meta), name)(*args, **kw)


def reduce(obj: Any, name: str, *args: Any, **kwargs: Any) -> Any:
    """``obj.<name>(*args, **kwargs)`` over all rows, as a lazy Series/DataFrame or a 0-d tensor.

    >>> import mars.dataframe as md
    >>> reduce(md.Series([1, 2, 3], chunk_size=2), "sum").fetch()
    np.int64(6)
    """
    data = as_data(obj)
    result = sample_result(data.meta, name, args, kwargs)
    reducer = make_reducer(data.meta, name, args, kwargs, result)
    return run_reducer(data, reducer, result)


def run_reducer(data: Any, reducer: Reducer, result: Any) -> Any:
    """``reducer`` over ``data``'s partitions; ``result`` (pandas' result on a sample) gives the output's meta.

    >>> import mars.dataframe as md
    >>> s = md.Series([1, 5, 2], chunk_size=2)
    >>> run_reducer(s.data, Gather(name="max", args=(), kwargs={}, positions=None, meta=s.meta), 5).fetch()
    np.int64(5)
    """
    chunk, combine, agg = reducer.stages()
    if isinstance(reducer, Gather):
        combine = None  # the values are concatenated once, in the last stage
    if isinstance(result, (pd.Series, pd.DataFrame)):
        shape = (len(result),) + tuple(result.shape[1:])
        return tree_reduce(data, chunk, combine, agg, empty_meta(result), shape=shape)
    return tree_reduce(data, chunk, combine, agg, dtype_of_scalar(result))


# ----------------------------------------------------------------- methods
def _check_axis(obj: Any, axis: Any) -> int:
    """0 (over rows) or 1 (per row); pandas' error for anything else."""
    if isinstance(obj, DataFrame):
        if axis is None:
            raise NotImplementedError("reducing a lazy DataFrame over both axes (axis=None); reduce twice")
        return obj.meta._get_axis_number(axis)
    if axis is not None and isinstance(obj, Series):
        obj.meta._get_axis_number(axis)
    return 0


def _reduction(name: str, doc: str) -> Any:
    def method(self: Any, axis: Any = 0, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("level") is not None:
            raise NotImplementedError(f"{name} with level=; use groupby(level=...).{name}()")
        if _check_axis(self, axis) == 1:
            return map_partitions(name, self, *args, axis=1, sample=True, **kwargs)
        if isinstance(self, DataFrame):
            kwargs["axis"] = 0
        return reduce(self, name, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = doc
    return method


_DOCS = {
    "sum": "Sum of the values (``skipna``, ``numeric_only``, ``min_count`` as in pandas).",
    "prod": "Product of the values (``skipna``, ``numeric_only``, ``min_count`` as in pandas).",
    "min": "Smallest value (``skipna``, ``numeric_only``).",
    "max": "Largest value (``skipna``, ``numeric_only``).",
    "count": "Number of non-missing values.",
    "any": "Whether any value is true (``skipna``, ``bool_only``).",
    "all": "Whether all values are true (``skipna``, ``bool_only``).",
    "mean": "Mean of the values (``skipna``, ``numeric_only``).",
    "var": "Variance (``ddof``, default 1; ``skipna``, ``numeric_only``).",
    "std": "Standard deviation (``ddof``, default 1; ``skipna``, ``numeric_only``).",
    "sem": "Standard error of the mean (``ddof``, default 1).",
    "median": "Median, exact (the values are gathered).",
}
_EXAMPLE = """

    >>> import mars.dataframe as md
    >>> md.DataFrame({{"a": [1, 2, 4]}}, chunk_size=2).{name}().to_pandas().tolist() == \\
    ...     __import__("pandas").DataFrame({{"a": [1, 2, 4]}}).{name}().tolist()
    True
"""


def _quantile(self: Any, q: Any = 0.5, axis: Any = 0, numeric_only: bool = False,
              interpolation: str = "linear", method: str = "single") -> Any:
    """Quantiles at ``q`` (a number or a list), exact like pandas: the values are gathered.

    >>> import mars.dataframe as md
    >>> md.Series([1, 2, 3, 4], chunk_size=2).quantile(0.5).fetch()
    np.float64(2.5)
    """
    kw: dict = {"interpolation": interpolation}
    if isinstance(self, DataFrame):
        if _check_axis(self, axis) == 1:
            return map_partitions("quantile", self, q, axis=1, numeric_only=numeric_only, interpolation=interpolation,
                                  method=method, sample=True)
        kw.update(numeric_only=numeric_only, method=method)
    return reduce(self, "quantile", q, **kw)


def _describe(self: Any, percentiles: Any = None, include: Any = None, exclude: Any = None) -> Any:
    """Summary statistics like pandas' (numeric, or count/unique/top/freq for strings and objects).

    >>> import mars.dataframe as md
    >>> md.Series([1.0, 2.0, 3.0], chunk_size=2).describe().to_pandas()["mean"]
    np.float64(2.0)
    """
    data = as_data(self)
    kwargs = {"percentiles": percentiles, "include": include, "exclude": exclude}
    result = fake(data.meta).describe(**kwargs)
    positions = None
    if isinstance(data.meta, pd.DataFrame):
        used = set(result.columns)
        positions = [i for i, c in enumerate(data.meta.columns) if c in used]
    meta = data.meta.iloc[:, positions] if positions is not None else data.meta
    reducer = Gather(name="describe", args=(), kwargs=kwargs, positions=positions, meta=meta)
    return run_reducer(data, reducer, result)


# ----------------------------------------------------------------- agg
_NUMPY_NAMES = {np.sum: "sum", np.mean: "mean", np.min: "min", np.max: "max", np.prod: "prod", np.std: "std",
                np.var: "var", np.median: "median", np.all: "all", np.any: "any", np.nansum: "sum",
                np.nanmean: "mean", np.nanmin: "min", np.nanmax: "max", np.nanmedian: "median"}
_NAMED = set(SIMPLE) | set(MOMENTS) | {"median", "nunique"}


def _func_name(func: Any) -> str:
    name = _NUMPY_NAMES.get(func, func) if not isinstance(func, str) else func
    if name == "product":
        name = "prod"
    if not isinstance(name, str) or name not in _NAMED:
        raise NotImplementedError(f"agg with {func!r}: supported are the names {sorted(_NAMED)} and their numpy functions")
    return name


def _label(func: Any) -> str:
    return func if isinstance(func, str) else getattr(func, "__name__", repr(func))


def _aggregate(self: Any, func: Any = None, axis: Any = 0, *args: Any, **kwargs: Any) -> Any:
    """``agg`` with a function name, a list of them, or a dict of column → name(s), like pandas.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 2], "b": [3.0, 5.0]}, chunk_size=1).agg(["sum", "mean"]).to_pandas()["b"].tolist()
    [8.0, 4.0]
    """
    if func is None:
        raise TypeError("Must provide 'func' or tuples of '(column, aggfunc).")
    if isinstance(self, DataFrame) and _check_axis(self, axis) == 1:
        return map_partitions("agg", self, func, *args, axis=1, **kwargs)
    if isinstance(func, dict):
        return _agg_dict(self, func, kwargs)
    if isinstance(func, (list, tuple)):
        return _agg_list(self, list(func), kwargs)
    return getattr(self, _func_name(func))(*args, **kwargs)


def _part_reducer(meta: Any, name: str, kwargs: dict) -> tuple[Reducer, Any]:
    if name == "nunique":
        raise NotImplementedError("agg with 'nunique' among other functions; call nunique() on its own")
    kw = dict(kwargs)
    if isinstance(meta, pd.DataFrame):
        kw["axis"] = 0
    result = sample_result(meta, name, (), kw)
    return make_reducer(meta, name, (), kw, result), result


def _agg_list(self: Any, funcs: list, kwargs: dict) -> Any:
    data = as_data(self)
    names = [_func_name(f) for f in funcs]
    labels = [_label(f) for f in funcs]
    meta = data.meta
    if not isinstance(meta, pd.DataFrame):
        parts = [_part_reducer(meta, n, kwargs) for n in names]
        assemble = AssembleList(labels=labels, columns=None, name=meta.name)
        return run_reducer(data, Multi(reducers=[p for p, _ in parts], assemble=assemble), assemble([r for _, r in parts]))
    # per column, so that each column's results keep their own types (as pandas' per-column agg)
    reducers, samples = [], []
    for j in range(meta.shape[1]):
        for n in names:
            r, sample = _part_reducer(meta.iloc[:, [j]], n, kwargs)
            reducers.append(Columns(positions=[j], reducer=r))
            samples.append(sample)
    assemble = AssembleList(labels=labels, columns=meta.columns, name=None)
    return run_reducer(data, Multi(reducers=reducers, assemble=assemble), assemble(samples))


class AssembleList(Reducer):
    """pandas' result of ``agg([...])``: a Series over the functions, or per column one (a frame)."""

    labels: list
    columns: Any
    name: Any

    def __call__(self, results: list) -> Any:
        if self.columns is None:
            return pd.Series(results, index=self.labels, name=self.name)
        k = len(self.labels)
        cols = [pd.Series([r.iloc[0] for r in results[j * k:(j + 1) * k]], index=self.labels)
                for j in range(len(self.columns))]
        if not cols:
            return pd.DataFrame(index=self.labels, columns=self.columns)
        frame = pd.concat(cols, axis=1, keys=range(len(cols)))
        return frame.set_axis(self.columns, axis=1)


def _agg_dict(self: Any, spec: dict, kwargs: dict) -> Any:
    if not isinstance(self, DataFrame):
        raise NotImplementedError("agg with a dict on a Series (nested renaming is not supported by pandas either)")
    data = as_data(self)
    missing = [k for k in spec if k not in data.meta.columns]
    if missing:
        raise KeyError(f"Label(s) {missing} do not exist")
    reducers, samples = [], []
    for column, funcs in spec.items():
        sub = data.meta[[column]]
        many = isinstance(funcs, (list, tuple))
        for f in (funcs if many else [funcs]):
            r, sample = _part_reducer(sub, _func_name(f), kwargs)
            reducers.append(Columns(positions=[data.meta.columns.get_loc(column)], reducer=r))
            samples.append(sample)
    assemble = AssembleDict(spec=[(k, [_label(f) for f in v] if isinstance(v, (list, tuple)) else _label(v))
                                  for k, v in spec.items()])
    return run_reducer(data, Multi(reducers=reducers, assemble=assemble), assemble(samples))


class Columns(Reducer):
    """A reducer applied to some columns (by position) of each partition."""

    positions: list
    reducer: Reducer

    def chunk(self, part: Any) -> Any:
        return self.reducer.chunk(part.iloc[:, self.positions])

    def combine(self, partials: list) -> Any:
        return self.reducer.combine(partials)

    def agg(self, partials: list) -> Any:
        return self.reducer.agg(partials)


class AssembleDict(Reducer):
    """pandas' result of ``agg({column: name or [names]})``: a Series when all are single names, else a frame."""

    spec: list

    def __call__(self, results: list) -> Any:
        out, it = {}, iter(results)
        for column, funcs in self.spec:
            if isinstance(funcs, list):
                out[column] = pd.Series([next(it).iloc[0] for _ in funcs], index=funcs)
            else:
                out[column] = next(it).iloc[0]
        if not any(isinstance(f, list) for _, f in self.spec):
            return pd.Series(list(out.values()), index=list(out))
        parts = [v if isinstance(v, pd.Series) else pd.Series([v], index=[f])
                 for (k, f), v in zip(self.spec, out.values())]
        return pd.concat(parts, axis=1, keys=[k for k, _ in self.spec])


# ----------------------------------------------------------------- cumulative
_CUM = {"cumsum": "sum", "cumprod": "prod", "cummin": "min", "cummax": "max"}


def _total(value: Any, func: str, skipna: bool, dtypes: Any) -> Any:
    """The running total after ``value``'s rows (one row, ``dtypes``), or None for no rows."""
    if not len(value):
        return None
    kw = {"skipna": skipna, **({"min_count": 1} if func in ("sum", "prod") else {})}
    if isinstance(value, pd.Series):
        return pd.Series([getattr(value, func)(**kw)]).astype(dtypes)
    row = as_row(getattr(value, func)(**kw))
    return _astype_positional(row, dtypes)


def _astype_positional(frame: pd.DataFrame, dtypes: pd.Series) -> pd.DataFrame:
    if list(frame.dtypes) == list(dtypes):
        return frame
    columns = frame.columns
    frame = frame.set_axis(range(frame.shape[1]), axis=1)
    frame = frame.astype(dict(enumerate(dtypes)))
    return frame.set_axis(columns, axis=1)


class CumTotal(PandasOperator):
    """A partition's total (or the total of the totals before it), as one row: the carry."""

    params = ("func", "skipna", "dtypes")

    def execute(self, *values: Any) -> Any:
        kept = [v for v in values if v is not None and len(v)]
        if not kept:
            return None
        whole = kept[0] if len(kept) == 1 else pd.concat(kept, ignore_index=True)
        return _total(whole, self.func, self.skipna, self.dtypes)


class CumApply(PandasOperator):
    """One partition's cumulative result, starting from the carry of the partitions before it."""

    params = ("func", "skipna", "dtypes")
    fusible = True

    def execute(self, value: Any, carry: Any = None) -> Any:
        method = "cum" + self.func
        if carry is None or not len(value):
            return getattr(value, method)(skipna=self.skipna)
        if isinstance(value, pd.Series):
            value = value.astype(self.dtypes) if value.dtype != self.dtypes else value
        else:
            value = _astype_positional(value, self.dtypes)
        # the carry goes first, as a row labelled like the first one, so that the index keeps its type
        carry = carry.set_axis(value.index[:1], axis=0)
        if isinstance(value, pd.Series):
            carry = carry.rename(value.name)
        return getattr(pd.concat([carry, value]), method)(skipna=self.skipna).iloc[1:]


class Cumulative(PandasOperator):
    """cumsum/cumprod/cummin/cummax: per partition, plus a carry chained through the earlier partitions."""

    params = ("func", "skipna")

    @classmethod
    def tile(cls, op: Cumulative) -> Tiled:
        data, out = op.inputs[0], op.outputs[0]
        dtypes = out.meta.dtypes if isinstance(out.meta, pd.DataFrame) else out.meta.dtype
        totals = [CumTotal(func=op.func, skipna=op.skipna, dtypes=dtypes).new_chunk([c], index=c.index, shape=(np.nan,),
                                                                                   meta=None)
                  for c in data.chunks]
        chunks, carry = [], None
        for i, c in enumerate(data.chunks):
            apply = CumApply(func=op.func, skipna=op.skipna, dtypes=dtypes)
            chunks.append(apply.new_chunk([c] + ([carry] if carry is not None else []), index=c.index, shape=c.shape,
                                          meta=out.meta))
            inputs = [carry, totals[i]] if carry is not None else [totals[i]]
            carry = CumTotal(func=op.func, skipna=op.skipna, dtypes=dtypes).new_chunk(inputs, index=(i,), shape=(np.nan,),
                                                                                     meta=None)
        return Tiled(chunks, data.nsplits)


def _cumulative(name: str) -> Any:
    def method(self: Any, axis: Any = None, skipna: bool = True, *args: Any, **kwargs: Any) -> Any:
        meta = as_data(self).meta
        getattr(fake(meta), name)(*args, axis=axis, skipna=skipna, **kwargs)  # pandas' errors, now
        if isinstance(self, DataFrame) and axis is not None and meta._get_axis_number(axis) == 1:
            return map_partitions(name, self, axis=1, skipna=skipna, sample=True)
        result_meta = empty_meta(getattr(fake(meta), name)(skipna=skipna))
        op = Cumulative(func=_CUM[name], skipna=bool(skipna))
        data = as_data(self)
        return op.new_pandas([data], result_meta, data.shape, partitioning=data.partitioning)

    method.__name__ = name
    method.__doc__ = f"""Cumulative {_CUM[name]} down the rows (``skipna`` as in pandas); ``axis=1`` is per row.

    >>> import mars.dataframe as md
    >>> md.Series([1, 3, 2], chunk_size=2).{name}().to_pandas().tolist() == \\
    ...     __import__("pandas").Series([1, 3, 2]).{name}().tolist()
    True
    """
    return method


# ----------------------------------------------------------------- installing
def _install() -> None:
    for name, doc in _DOCS.items():
        method = _reduction(name, doc + _EXAMPLE.format(name=name))
        for cls in (DataFrame, Series):
            setattr(cls, name, method)
    for cls in (DataFrame, Series):
        cls.product = cls.prod
        cls.quantile = _quantile
        cls.describe = _describe
        cls.agg = cls.aggregate = _aggregate
        for name in _CUM:
            setattr(cls, name, _cumulative(name))
    for name in ("min", "max", "any", "all"):
        setattr(Index, name, _index_reduction(name))


def _index_reduction(name: str) -> Any:
    def method(self: Any, axis: Any = None, skipna: bool = True, *args: Any, **kwargs: Any) -> Any:
        kw = {"skipna": skipna} if name in ("min", "max") else {}
        return reduce(self, name, **kw)

    method.__name__ = name
    method.__doc__ = f"``Index.{name}()`` over all partitions: a 0-d tensor."
    return method


_install()
