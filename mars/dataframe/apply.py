"""User functions: ``apply``, ``map``, ``transform`` and ``map_partitions``.

Row-wise work (``DataFrame.apply(axis=1)``, ``Series.apply``, ``Series.map``,
``DataFrame.map``) runs partition by partition. Column-wise work
(``DataFrame.apply(axis=0)``, ``transform`` of a function that is not
elementwise) needs whole columns: the partitions are gathered into one chunk
and pandas itself runs there, so the result is pandas' own.

A user function's output is read off a small fake sample of the input (two
rows of typical values). When that fails, or when the user knows better, the
output is declared with ``dtypes=`` (a dict or Series of dtypes, or one dtype
for a Series), ``output_type=`` (``"dataframe"``, ``"series"``, ``"index"``)
or ``meta=`` (an empty pandas object).

What a function returns often depends on the data, not just its dtypes
(missing values make ints floats; a dict mapping some values gives NaN for
the others). So an inferred output is *unified* when it runs: the partitions
are computed, their first rows fetched, and the result's dtypes are those
pandas gives when concatenating them; partitions that differ are converted.
The tileable's ``meta`` is updated then (it is the sample's guess before).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import numpy as np
import pandas as pd

from ..core.entity import Tileable, TileableData
from ..core.operator import Fetch, Tiled
from ..core.tiling import as_data
from ..tensor.core import TensorData
from .core import (
    DataFrame,
    PandasOperator,
    Series,
    chunk_index_of,
    chunk_shape_of,
    concat_values,
    nsplits_of,
)
from .map import Whole, map_partitions
from .meta import check_declared, empty_meta, infer
from .rows import known_rows, single_chunk

__all__: list[str] = []


# ----------------------------------------------------------------- unifying data-dependent output
class PartProbe(PandasOperator):
    """A partition's first row (its kind, dtypes and columns) and which of its columns are all missing."""

    params = ()

    def execute(self, value: Any) -> tuple:
        head = value[:1] if isinstance(value, pd.Index) else value.iloc[:1]
        na = value.isna().all()
        return head, (na.to_numpy() if isinstance(na, pd.Series) else bool(na))


def common_meta(heads: list, nas: list, fallback: Any) -> Any:
    """The meta of the partitions end to end, as pandas would type the whole result.

    Partitions with nothing but missing values in a column do not vote on
    its dtype (pandas gives them object or float64 however the rest is
    typed); they only make an int column float and a bool column object.
    """
    kept = [(h, na) for h, na in zip(heads, nas) if len(h)]
    if not kept:
        return empty_meta(concat_values(heads[:1], fallback))
    whole = empty_meta(concat_values([h for h, _ in kept], fallback))
    if isinstance(whole, pd.DataFrame):
        if not whole.columns.is_unique or not all(h.columns.is_unique for h, _ in kept):
            return whole
        dtypes = {}
        for col in whole.columns:
            present = [(h[col], bool(na[h.columns.get_loc(col)])) for h, na in kept if col in h.columns]
            holes = len(present) < len(kept) or any(na for _, na in present)
            dtypes[col] = _voted([c for c, na in present if not na], holes, whole[col].dtype)
        return whole.astype(dtypes)
    return whole.astype(_voted([h for h, na in kept if not na], any(na for _, na in kept), whole.dtype))


def _voted(columns: list, holes: bool, fallback: Any) -> Any:
    if not columns:
        return fallback
    dtype = concat_values(columns, columns[0]).dtype
    if holes and isinstance(dtype, np.dtype) and dtype.kind in "iub":
        return np.dtype(np.float64) if dtype.kind != "b" else np.dtype(object)
    return dtype


class Conform(PandasOperator):
    """A partition converted to the kind, columns and dtypes found for the whole result."""

    params = ("meta", "pad_none")
    fusible = True

    def execute(self, value: Any) -> Any:
        return conform(value, self.meta, self.pad_none)


def conform(value: Any, meta: Any, pad_none: bool = False) -> Any:
    """``value`` with ``meta``'s columns (new ones missing: None with ``pad_none``, else NaN) and dtypes."""
    if not len(value):
        return meta
    if type(value) is not type(meta):
        raise TypeError(f"the partitions' results are of different kinds ({type(value).__name__} and "
                        f"{type(meta).__name__}); make the function return one kind")
    if isinstance(meta, pd.DataFrame):
        if not value.columns.equals(meta.columns):
            missing = meta.columns.difference(value.columns)
            value = value.reindex(columns=meta.columns)
            if pad_none and len(missing):
                # reindex reads fill_value=None as "the default" (NaN): set such pads by hand
                value[list(missing)] = None
        if value.dtypes.equals(meta.dtypes):
            return value
        if meta.columns.is_unique:
            return value.astype(meta.dtypes.to_dict())
        return pd.concat([value.iloc[:, i].astype(dt) for i, dt in enumerate(meta.dtypes)], axis=1,
                         keys=range(meta.shape[1])).set_axis(meta.columns, axis=1)
    return value if value.dtype == meta.dtype else value.astype(meta.dtype)


def _same_kind(head: Any, meta: Any) -> bool:
    if type(head) is not type(meta):
        return False
    if isinstance(meta, pd.DataFrame):
        return head.columns.equals(meta.columns) and head.dtypes.equals(meta.dtypes)
    return head.dtype == meta.dtype


class UnifyMeta(PandasOperator):
    """Its input with the metadata its partitions' values actually have, known once they ran."""

    params = ("pad_none", "dtype")

    @classmethod
    def tile(cls, op: UnifyMeta) -> Generator[Any, Any, Tiled]:
        data, out = op.inputs[0], op.outputs[0]
        # computed (and kept) first, so that fetching their heads does not run them twice
        yield list(data.chunks)
        rows = yield from known_rows(data)
        probes = [PartProbe().new_chunk([c], index=c.index, shape=c.shape, meta=c.meta) for c in data.chunks]
        heads, nas = zip(*(yield Fetch(probes)))
        meta = common_meta(list(heads), list(nas), data.meta)
        if op.dtype is not None:
            meta = meta.astype(op.dtype)
        chunks = []
        for c, head, n in zip(data.chunks, heads, rows):
            if len(head) and _same_kind(head, meta):
                chunks.append(c)
                continue
            chunks.append(Conform(meta=meta, pad_none=op.pad_none).new_chunk(
                [c], index=chunk_index_of(meta, c.index[0]), shape=chunk_shape_of(meta, n), meta=meta))
        if out is not None:
            out.meta = meta
            out.shape = chunk_shape_of(meta, sum(rows))
        return Tiled(chunks, nsplits_of(meta, rows))


def unify_meta(obj: Any, pad_none: bool = False, dtype: Any = None) -> Any:
    """``obj`` whose dtypes are found by running it (see the module docstring).

    Columns that only other partitions have are missing values in a
    partition: NaN, or None with ``pad_none`` (as ``str.split(expand=True)``
    of object strings pads), and
    ``dtype``, when given, is the dtype of every column.
    """
    data = as_data(obj)
    return UnifyMeta(pad_none=pad_none, dtype=dtype).new_pandas([data], data.meta, data.shape, partitioning=data.partitioning)


# ----------------------------------------------------------------- metadata of user functions
def _metas_in(value: Any) -> Any:
    """``value`` with lazy objects replaced by their metas (what inference runs on)."""
    if isinstance(value, Whole):
        value = value.value
    if isinstance(value, (Tileable, TileableData)):
        data = as_data(value)
        if isinstance(data, TensorData):
            return np.ones((), dtype=data.dtype)[()] if data.dtype != object else None
        return data.meta
    if type(value) is tuple:
        return tuple(_metas_in(v) for v in value)
    if type(value) is list:
        return [_metas_in(v) for v in value]
    if type(value) is dict:
        return {k: _metas_in(v) for k, v in value.items()}
    return value


def _func_name(func: Any) -> str:
    return func if isinstance(func, str) else getattr(func, "__name__", repr(func))


def infer_user(call: Callable, func: Any, args: tuple) -> Any:
    """The meta of ``call(*args)`` on a fake sample, or a ValueError saying how to declare it."""
    try:
        meta = infer(call, *_metas_in(args), sample=True)
    except Exception as e:
        raise ValueError(
            f"cannot infer what {_func_name(func)} returns: running it on a small sample of the data "
            f"(2 rows of typical values) raised {type(e).__name__}: {e}. Pass dtypes= (a dict of column dtypes, "
            f"or one dtype for a Series) and output_type= ('dataframe', 'series' or 'index'), or meta= "
            f"(an empty pandas object), to say what it returns"
        ) from e
    if not isinstance(meta, (pd.DataFrame, pd.Series, pd.Index)):
        raise TypeError(f"{_func_name(func)} does not return a pandas object on a sample (got "
                         f"{type(meta).__name__}); pass dtypes=/output_type= or meta= if it does on real data")
    return meta


_OUTPUT_TYPES = ("dataframe", "series", "index")


def declared_meta(dtypes: Any, output_type: str | None, meta: Any, index: pd.Index, name: Any = None) -> Any:
    """The meta a user declared (``meta=``, or ``dtypes=`` with ``output_type=``), or None."""
    if meta is not None:
        if not isinstance(meta, (pd.DataFrame, pd.Series, pd.Index)):
            raise TypeError(f"meta must be an empty pandas DataFrame, Series or Index, got {type(meta).__name__}")
        return empty_meta(meta)
    if output_type is not None and output_type not in _OUTPUT_TYPES:
        raise ValueError(f"output_type must be one of {_OUTPUT_TYPES}, got {output_type!r}")
    if dtypes is None:
        return None
    many = isinstance(dtypes, (dict, pd.Series))
    output_type = output_type or ("dataframe" if many else "series")
    if output_type == "dataframe":
        if not many:
            raise TypeError(f"dtypes for a DataFrame output must be a dict or Series of dtypes, got {dtypes!r}")
        items = list(dtypes.items())
        frame = pd.DataFrame({i: pd.Series([], dtype=dt) for i, (_, dt) in enumerate(items)}, index=index[:0])
        return frame.set_axis(pd.Index([k for k, _ in items]), axis=1)
    if many:
        raise TypeError(f"dtypes for a {output_type} output must be one dtype, got {dtypes!r}")
    if output_type == "index":
        return pd.Index([], dtype=dtypes, name=name)
    return pd.Series([], dtype=dtypes, index=index[:0], name=name)


def _index_meta(obj: Any) -> pd.Index:
    meta = as_data(obj).meta
    return meta if isinstance(meta, pd.Index) else meta.index


def _declared_by(method: str, func: Any, meta: Any) -> tuple[str, str]:
    """How errors name a call and its declaration: ``("apply(f)", "meta")``."""
    return f"{method}({_func_name(func)})", "meta" if meta is not None else "dtypes"


def map_user(call: Callable, obj: Any, args: tuple = (), *, label: Any = None, dtypes: Any = None,
             output_type: str | None = None, meta: Any = None, same_rows: bool = True, name: Any = None,
             method: str = "map_partitions") -> Any:
    """``call(partition, *args)`` per partition, for a user's function (``label`` in errors).

    The output is declared (``dtypes``/``output_type``/``meta``), and each
    partition's output is checked against it (``method`` names the call in
    errors), or inferred on a sample and then unified when it runs.
    """
    label = call if label is None else label
    declared = declared_meta(dtypes, output_type, meta, _index_meta(obj), name)
    if declared is not None:
        return map_partitions(call, obj, *args, meta=declared, same_rows=same_rows,
                              declared=_declared_by(method, label, meta))
    inferred = infer_user(call, label, (obj, *args))
    if output_type is not None and not _is_kind(inferred, output_type):
        raise ValueError(f"{_func_name(label)} returns a {type(inferred).__name__} on a sample, not a "
                         f"{output_type}; pass dtypes= too if it differs on real data")
    out = map_partitions(call, obj, *args, meta=inferred, same_rows=same_rows)
    return unify_meta(out)


def _is_kind(meta: Any, output_type: str) -> bool:
    return isinstance(meta, {"dataframe": pd.DataFrame, "series": pd.Series, "index": pd.Index}[output_type])


# ----------------------------------------------------------------- whole-object application
class GatherApply(PandasOperator):
    """``call(whole)`` on all partitions gathered into one chunk (column-wise work); ``declared``, when set,
    is ``(meta, what, source)``: the output a user declared, which the result is held to."""

    params = ("call", "args", "declared")

    @classmethod
    def tile(cls, op: GatherApply) -> Generator[Any, Any, Tiled]:
        data, out = op.inputs[0], op.outputs[0]
        yield from known_rows(data)
        whole = single_chunk(data)
        chunk = op.copy().new_chunk([whole], index=chunk_index_of(out.meta, 0), shape=out.shape, meta=out.meta)
        return Tiled([chunk], nsplits_of(out.meta, out.shape[:1]))

    def execute(self, whole: Any) -> Any:
        result = self.call(whole, *self.args)
        return result if self.declared is None else check_declared(result, *self.declared)


def gather_user(call: Callable, func: Any, obj: Any, args: tuple, dtypes: Any = None,
                output_type: str | None = None, meta: Any = None, method: str = "apply") -> Any:
    """``call(whole obj, *args)`` in one chunk; output declared (and checked when it runs) or inferred, then
    unified."""
    data = as_data(obj)
    declared = declared_meta(dtypes, output_type, meta, _index_meta(obj))
    out_meta = declared if declared is not None else infer_user(call, func, (obj, *args))
    shape = (np.nan, out_meta.shape[1]) if out_meta.ndim == 2 else (np.nan,)
    check = None if declared is None else (declared, *_declared_by(method, func, meta))
    out = GatherApply(call=call, args=args, declared=check).new_pandas([data], out_meta, shape)
    return out if declared is not None else unify_meta(out)


# ----------------------------------------------------------------- apply / map / transform
def _frame_apply(part: pd.DataFrame, func: Any, axis: int, raw: bool, result_type: Any, args: tuple,
                 by_row: Any, kwargs: dict) -> Any:
    return part.apply(func, axis=axis, raw=raw, result_type=result_type, args=args, by_row=by_row, **kwargs)


def _df_apply(self: DataFrame, func: Any, axis: Any = 0, raw: bool = False, result_type: Any = None,
              args: tuple = (), by_row: Any = "compat", engine: Any = None, engine_kwargs: Any = None,
              dtypes: Any = None, output_type: str | None = None, meta: Any = None, **kwargs: Any) -> Any:
    """``func`` along an axis, as ``pandas.DataFrame.apply``.

    ``axis=1`` (each row) runs partition by partition; ``axis=0`` (each
    column) needs whole columns, so it runs on the gathered frame. See the
    module docstring for ``dtypes``, ``output_type`` and ``meta``.

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"a": [1, 2], "b": [3, 4]}, chunk_size=1)
    >>> df.apply(lambda r: r["a"] + r["b"], axis=1).to_pandas().tolist()
    [4, 6]
    """
    if engine not in (None, "python"):
        raise NotImplementedError(f"apply with engine={engine!r} is not supported; use the default engine")
    axis = pd.DataFrame._get_axis_number(axis)
    if result_type not in (None, "reduce", "broadcast", "expand"):
        raise ValueError("invalid value for result_type, must be one of {None, 'reduce', 'broadcast', 'expand'}")
    if not isinstance(args, tuple):
        args = tuple(args) if isinstance(args, list) else (args,)
    params = (func, axis, raw, result_type, args, by_row, kwargs)
    if axis == 1:
        return map_user(_frame_apply, self, params, label=func, dtypes=dtypes, output_type=output_type, meta=meta,
                        method="apply")
    return gather_user(_frame_apply, func, self, params, dtypes, output_type, meta, "apply")


def _series_apply(part: pd.Series, func: Any, args: tuple, by_row: Any, kwargs: dict) -> Any:
    return part.apply(func, args=args, by_row=by_row, **kwargs)


def _s_apply(self: Series, func: Any, args: tuple = (), *, by_row: Any = "compat", dtypes: Any = None,
             output_type: str | None = None, meta: Any = None, **kwargs: Any) -> Any:
    """``func`` on each value (or on each partition when it needs a Series), as ``pandas.Series.apply``.

    >>> import mars.dataframe as md
    >>> md.Series([1, 2, 3], chunk_size=2).apply(lambda x: x * 10).to_pandas().tolist()
    [10, 20, 30]
    """
    if not isinstance(args, tuple):
        args = tuple(args) if isinstance(args, list) else (args,)
    if isinstance(func, (str, list, dict)) or by_row is False:
        # a name or several functions can reduce (``apply("sum")``): pandas on the whole Series
        return gather_user(_series_apply, func, self, (func, args, by_row, kwargs), dtypes, output_type, meta, "apply")
    return map_user(_series_apply, self, (func, args, by_row, kwargs), label=func, dtypes=dtypes, output_type=output_type,
                    meta=meta, name=self.name, method="apply")


def _series_map(part: pd.Series, func: Any, na_action: Any, kwargs: dict) -> pd.Series:
    return part.map(func, na_action=na_action, **kwargs)


def _s_map(self: Series, func: Any = None, na_action: Any = None, engine: Any = None, *, dtypes: Any = None,
           meta: Any = None, **kwargs: Any) -> Series:
    """Values mapped through a dict, a Series (lazy or pandas) or a function, as ``pandas.Series.map``.

    >>> import mars.dataframe as md
    >>> md.Series([1, 2, 3], chunk_size=2).map({1: "a", 2: "b"}).to_pandas().tolist()
    ['a', 'b', nan]
    """
    if func is None and "arg" in kwargs:
        func = kwargs.pop("arg")  # pandas' former name of the parameter
    if engine is not None:
        raise NotImplementedError(f"Series.map with engine={engine!r} is not supported")
    if na_action not in (None, "ignore"):
        raise ValueError(f"na_action must either be 'ignore' or None, {na_action} was passed")
    if func is None:
        raise ValueError("The `func` parameter is required")
    if isinstance(func, (Tileable, TileableData)):
        func = Whole(func)
    label = "the mapping" if not callable(func) else func
    return map_user(_series_map, self, (func, na_action, kwargs), label=label, dtypes=dtypes,
                    output_type="series" if dtypes is not None else None, meta=meta, name=self.name, method="map")


def _frame_map(part: pd.DataFrame, func: Callable, na_action: Any, kwargs: dict) -> pd.DataFrame:
    return part.map(func, na_action=na_action, **kwargs)


def _df_map(self: DataFrame, func: Callable, na_action: Any = None, dtypes: Any = None, meta: Any = None,
            **kwargs: Any) -> DataFrame:
    """``func`` on every value, as ``pandas.DataFrame.map`` (once called ``applymap``).

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 2]}, chunk_size=1).map(lambda x: x + 0.5).to_pandas()["a"].tolist()
    [1.5, 2.5]
    """
    if na_action not in (None, "ignore"):
        raise ValueError(f"na_action must be 'ignore' or None. Got {na_action!r}")
    if not callable(func):
        raise TypeError(f"'{type(func).__name__}' object is not callable")
    return map_user(_frame_map, self, (func, na_action, kwargs), label=func,
                    dtypes=dtypes,
                    output_type="dataframe" if dtypes is not None else None, meta=meta, method="map")


_ELEMENTWISE_METHODS = frozenset({"abs", "round", "isna", "isnull", "notna", "notnull"})


def is_elementwise(func: Any, obj_type: type) -> bool:
    """Whether ``transform(func)`` gives each value from that value alone (so partitions can run alone)."""
    if isinstance(func, np.ufunc):
        return True
    if isinstance(func, str):
        if hasattr(obj_type, func):
            return func in _ELEMENTWISE_METHODS
        return isinstance(getattr(np, func, None), np.ufunc)
    if isinstance(func, (list, tuple)):
        return len(func) > 0 and all(is_elementwise(f, obj_type) for f in func)
    if isinstance(func, dict):
        return len(func) > 0 and all(is_elementwise(f, obj_type) for f in func.values())
    return False


def _transform(part: Any, func: Any, axis: Any, args: tuple, kwargs: dict) -> Any:
    return part.transform(func, axis, *args, **kwargs)


def _check_transform_arg(obj: Any, func: Any, axis: int) -> None:
    if isinstance(func, dict) and obj.ndim == 2 and axis == 0:
        missing = [k for k in func if k not in obj.columns]
        if missing:
            raise KeyError(f"Column(s) {missing} do not exist")
    if isinstance(func, (list, dict)) and not func:
        raise ValueError("No transform functions were provided")


def _df_transform(self: DataFrame, func: Any, axis: Any = 0, *args: Any, dtypes: Any = None, meta: Any = None,
                  **kwargs: Any) -> DataFrame:
    """``func`` on each column (``axis=0``) or row, keeping the shape, as ``pandas.DataFrame.transform``.

    Elementwise functions (numpy ufuncs, ``"abs"``, ``"sqrt"``...) and
    ``axis=1`` run per partition; other functions get whole columns.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1, 2]}, chunk_size=1).transform(lambda c: c - c.mean()).to_pandas()["a"].tolist()
    [-0.5, 0.5]
    """
    axis = pd.DataFrame._get_axis_number(axis)
    _check_transform_arg(self.meta, func, axis)
    params = (func, axis, args, kwargs)
    out_type = "dataframe" if dtypes is not None else None
    if axis == 1 or is_elementwise(func, pd.DataFrame):
        return map_user(_transform, self, params, label=func, dtypes=dtypes, output_type=out_type, meta=meta,
                        method="transform")
    return gather_user(_transform, func, self, params, dtypes, out_type, meta, "transform")


def _s_transform(self: Series, func: Any, axis: Any = 0, *args: Any, dtypes: Any = None, meta: Any = None,
                 **kwargs: Any) -> Any:
    """``func`` on the Series, keeping its shape, as ``pandas.Series.transform``.

    >>> import mars.dataframe as md
    >>> md.Series([1.0, 4.0], chunk_size=1).transform("sqrt").to_pandas().tolist()
    [1.0, 2.0]
    """
    pd.Series._get_axis_number(axis)
    _check_transform_arg(self.meta, func, 0)
    params = (func, axis, args, kwargs)
    if is_elementwise(func, pd.Series):
        return map_user(_transform, self, params, label=func, dtypes=dtypes, meta=meta, name=self.name,
                        method="transform")
    return gather_user(_transform, func, self, params, dtypes, None, meta, "transform")


def _map_partitions_method(self: Any, func: Callable, *args: Any, dtypes: Any = None, output_type: str | None = None,
                           meta: Any = None, **kwargs: Any) -> Any:
    """``func(partition, *args, **kwargs)`` for each row partition, as dask's ``map_partitions``.

    Lazy DataFrames/Series among ``args`` are row-aligned (partition ``i``
    with partition ``i``). The output is declared with ``dtypes=``/
    ``output_type=`` or ``meta=``, or inferred on a small sample and fixed
    when it runs. Row counts are known once it ran (``func`` may filter).

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"a": [1, 2, 3]}, chunk_size=2)
    >>> df.map_partitions(lambda p: p.assign(n=len(p))).to_pandas()["n"].tolist()
    [2, 2, 1]
    """
    if not callable(func):
        raise TypeError(f"map_partitions needs a callable, got {type(func).__name__}")
    name = self.name if isinstance(self, Series) else None
    return map_user(_call_user, self, (func, args, kwargs), label=func, dtypes=dtypes, output_type=output_type,
                    meta=meta, same_rows=False, name=name)


def _call_user(part: Any, func: Callable, args: tuple, kwargs: dict) -> Any:
    return func(part, *args, **kwargs)


DataFrame.apply = _df_apply
DataFrame.map = _df_map
DataFrame.applymap = _df_map
DataFrame.transform = _df_transform
DataFrame.map_partitions = _map_partitions_method
DataFrame.map_chunk = _map_partitions_method
Series.apply = _s_apply
Series.map = _s_map
Series.transform = _s_transform
Series.map_partitions = _map_partitions_method
Series.map_chunk = _map_partitions_method

