"""Arithmetic, comparison and logical operators of DataFrames, Series and Indexes.

Every operator is partition-wise (:func:`~mars.dataframe.map.map_partitions`):
partition ``i`` of the result is the pandas operator applied to partition
``i`` of each operand. What the other operand is decides how it reaches the
partitions:

- a scalar, a 0-d tensor, or a pandas object that pandas aligns with the
  *columns* (``df - pd.Series(...)``, ``df + [1, 2]``): every partition gets it whole;
- a lazy Series aligned with a DataFrame's columns (``df - df.mean()``, the
  default ``axis="columns"``): passed whole; its index is taken to be the
  columns (as for a reduction of the frame) when the result's metadata is
  worked out before running;
- a lazy DataFrame or Series aligned on the rows (``s1 + s2``,
  ``df.sub(s, axis=0)``): row-aligned. Operands partitioned the same way are
  combined chunk by chunk; others are first aligned on their index
  (:mod:`mars.dataframe.align`), as pandas aligns (outer join, NaN for missing rows);
- pandas Series/DataFrames aligned on the rows become one-partition lazy
  objects, aligned the same way;
- array-likes, Indexes and tensors are matched by *position*, as in pandas:
  they are cut like the other operand's partitions (:class:`CutLike`).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np
import pandas as pd

from ..core.entity import Tileable, has_unknown
from ..core.operator import Tiled
from ..core.tiling import as_data
from ..tensor.core import TensorData
from .core import DataFrame, Index, PandasData, PandasOperator, Series, nsplits_of, wrap
from .datasource import from_pandas, from_tensor
from .map import Whole, map_partitions
from .meta import fake, infer
from .rows import known_rows, recut_chunks

__all__: list[str] = []

ARITHMETIC = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow")
COMPARISONS = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}
LOGICAL = ("and", "or", "xor")


def reflected(name: str) -> str:
    """The method giving ``other <op> self`` from ``other``'s side: ``add`` → ``radd``, ``__lt__`` → ``__gt__``."""
    dunder = name.startswith("__")
    bare = name.strip("_")
    if bare in COMPARISONS:
        out = COMPARISONS[bare]
    elif bare.startswith("r") and bare[1:] in ARITHMETIC + LOGICAL:
        out = bare[1:]
    else:
        out = "r" + bare
    return f"__{out}__" if dunder else out


# ----------------------------------------------------------------- partition functions
def apply_op(left: Any, name: str, right: Any, kwargs: dict) -> Any:
    """``left.<name>(right, **kwargs)`` on one partition."""
    return getattr(left, name)(right, **kwargs)


def apply_positional(left: Any, name: str, right: Any, kwargs: dict) -> Any:
    """``left.<name>(values of right)``: operands matched by position, not by label."""
    values = right if isinstance(right, pd.Index) else right.to_numpy() if isinstance(right, pd.DataFrame) else right.array
    return getattr(left, name)(values, **kwargs)


def apply_index_comparison(left: pd.Index, name: str, right: Any, kwargs: dict) -> pd.Index:
    """An Index comparison gives an array in pandas; held as an Index here, made a tensor afterwards."""
    if isinstance(right, (pd.Index, pd.Series)):
        right = right.array
    return pd.Index(getattr(left, name)(right, **kwargs))


# ----------------------------------------------------------------- positional operands
class CutLike(PandasOperator):
    """``source``'s rows cut into ``target``'s partitions by position (for operands matched by position)."""

    params = ()

    @classmethod
    def tile(cls, op: CutLike) -> Generator[Any, Any, Tiled]:
        target, source = op.inputs
        rows = yield from known_rows(target)
        have = yield from known_rows(source)
        if sum(rows) != sum(have):
            raise ValueError(f"Lengths must match: {int(sum(rows))} rows and {int(sum(have))} values")
        return Tiled(recut_chunks(source, rows), nsplits_of(source.meta, rows))


def cut_like(target: PandasData, source: PandasData) -> Any:
    """``source`` re-cut to ``target``'s partitions; it shares ``target``'s partitioning token."""
    if not has_unknown(target.shape[:1] + source.shape[:1]) and target.shape[0] != source.shape[0]:
        raise ValueError(f"Lengths must match: {int(target.shape[0])} rows and {int(source.shape[0])} values")
    if source.partitioning == target.partitioning:
        return wrap(source)
    op = CutLike()
    return op.new_pandas([target, source], source.meta, source.shape, partitioning=target.partitioning)


def _positional_data(value: Any) -> PandasData:
    """An array-like, Index or tensor as lazy data in one partition (a default RangeIndex)."""
    if isinstance(value, Tileable) and isinstance(value.data, TensorData) or isinstance(value, TensorData):
        return as_data(from_tensor(value, kind="series" if value.ndim == 1 else "dataframe"))
    if isinstance(value, PandasData):
        return value
    if isinstance(value, Tileable):
        return value.data
    if isinstance(value, pd.Index):
        return as_data(from_pandas(value))
    array = np.asarray(value) if not isinstance(value, pd.api.extensions.ExtensionArray) else value
    obj = pd.DataFrame(array) if array.ndim == 2 else pd.Series(array)
    return as_data(from_pandas(obj))


# ----------------------------------------------------------------- the operator
def binary(self: Any, name: str, other: Any, axis: Any = None, flex: bool = True, **kwargs: Any) -> Any:
    """``self.<name>(other, ...)`` partition by partition, with ``other`` aligned as pandas aligns it.

    ``name`` is a pandas method: ``add``, ``rsub``, ``eq``, ``__and__``...
    ``flex`` methods take ``axis`` and ``fill_value``; dunders do not.

    >>> import mars.dataframe as md
    >>> binary(md.Series([1, 2, 3], chunk_size=2), "add", 10).to_pandas().tolist()
    [11, 12, 13]
    """
    if kwargs.get("level") is not None:
        raise NotImplementedError(f"{name} with level=; reset the index level or use groupby")
    kw = {k: v for k, v in kwargs.items() if v is not None and k != "level"}
    frame = isinstance(self, DataFrame)
    if flex and axis is not None:
        self.meta._get_axis_number(axis)  # pandas' error for a bad axis
        kw["axis"] = axis
    by_rows = frame and axis is not None and self.meta._get_axis_number(axis) == 0
    if isinstance(other, (Tileable, PandasData)):
        data = as_data(other)
        if isinstance(data, TensorData):
            if data.ndim == 0:
                return _map(self, name, other, kw)
            return _positional(self, name, _positional_data(data), kw)
        return _lazy_operand(self, name, wrap(data), kw, by_rows, flex)
    if isinstance(other, (pd.DataFrame, pd.Series)):
        if frame and isinstance(other, pd.Series) and not by_rows:
            return _map(self, name, other, kw)
        return _lazy_operand(self, name, from_pandas(other), kw, by_rows, flex)
    if isinstance(other, pd.Index) or (np.ndim(other) >= 1 and not isinstance(other, (set, frozenset, dict))):
        if frame and np.ndim(other) == 1 and not by_rows:
            return _map(self, name, other, kw)
        return _positional(self, name, _positional_data(other), kw)
    return _map(self, name, other, kw)


def _map(self: Any, name: str, other: Any, kw: dict, meta: Any = None) -> Any:
    if isinstance(self, Index) and name.strip("_") in COMPARISONS:
        return map_partitions(apply_index_comparison, self, name, other, kw, meta=meta).to_tensor()
    return map_partitions(apply_op, self, name, other, kw, meta=meta)


def _lazy_operand(self: Any, name: str, other: Any, kw: dict, by_rows: bool, flex: bool) -> Any:
    if isinstance(other, DataFrame) and not isinstance(self, DataFrame):
        # pandas: Series <op> DataFrame is the frame's reflected op, aligned with its columns
        return binary(other, reflected(name), self, axis="columns" if flex else None, flex=flex, **kw)
    if isinstance(self, Index) and isinstance(other, Series):
        return binary(other, reflected(name), self, flex=flex, **kw)
    if isinstance(self, DataFrame) and isinstance(other, Series) and not by_rows:
        return _along_columns(self, name, other, kw)
    if isinstance(self, Index) or isinstance(other, Index):
        return _positional(self, name, as_data(other), kw)
    if name.strip("_") in COMPARISONS and name.startswith("__"):
        _check_same_length(self, other)
    return _map(self, name, other, kw)


def _check_same_length(self: Any, other: Any) -> None:
    """``==`` needs identically-labelled operands in pandas; differing known lengths cannot be."""
    a, b = self.shape[0], other.shape[0]
    if not has_unknown((a, b)) and a != b:
        what = "(both index and columns) DataFrame" if isinstance(self, DataFrame) else "Series"
        raise ValueError(f"Can only compare identically-labeled {what} objects")


def _along_columns(self: Any, name: str, other: Any, kw: dict) -> Any:
    """A lazy Series aligned with a DataFrame's columns: every partition gets it whole.

    Its labels are known only when it runs; the metadata takes them to be
    the frame's columns (as for ``df - df.mean()``).
    """
    columns = self.meta.columns
    sample = fake(other.meta)
    sample = sample.iloc[np.zeros(len(columns), dtype=np.int64)].set_axis(columns) if len(columns) else sample.iloc[:0]
    meta = infer(apply_op, self.meta, name, sample, kw)
    return map_partitions(apply_op, self, name, Whole(other), kw, meta=meta)


def _positional(self: Any, name: str, other: PandasData, kw: dict) -> Any:
    cut = cut_like(as_data(self), other)
    if isinstance(self, Index) and name.strip("_") in COMPARISONS:
        return map_partitions(apply_index_comparison, self, name, cut, kw).to_tensor()
    return map_partitions(apply_positional, self, name, cut, kw)


# ----------------------------------------------------------------- methods
def _flex(name: str, series: bool) -> Any:
    if series:
        def method(self: Any, other: Any, level: Any = None, fill_value: Any = None, axis: Any = 0) -> Any:
            return binary(self, name, other, axis=axis, level=level, fill_value=fill_value)
    else:
        def method(self: Any, other: Any, axis: Any = "columns", level: Any = None, fill_value: Any = None) -> Any:
            return binary(self, name, other, axis=axis, level=level, fill_value=fill_value)
    method.__name__ = name
    method.__doc__ = f"""``{name}`` of ``self`` and ``other`` (scalar, pandas, lazy or a 0-d tensor), as in pandas.

    >>> import mars.dataframe as md
    >>> md.Series([1.0, 2.0], chunk_size=1).{name}(2).to_pandas().tolist() == \\
    ...     __import__("pandas").Series([1.0, 2.0]).{name}(2).tolist()
    True
    """
    return method


def _compare_flex(name: str, series: bool) -> Any:
    if series:
        def method(self: Any, other: Any, level: Any = None, fill_value: Any = None, axis: Any = 0) -> Any:
            return binary(self, name, other, axis=axis, level=level, fill_value=fill_value)
    else:
        def method(self: Any, other: Any, axis: Any = "columns", level: Any = None) -> Any:
            return binary(self, name, other, axis=axis, level=level)
    method.__name__ = name
    method.__doc__ = f"Elementwise ``{name}`` comparison with ``other``, aligned as in pandas."
    return method


def _dunder(name: str) -> Any:
    def method(self: Any, other: Any) -> Any:
        return binary(self, name, other, flex=False)

    method.__name__ = name
    return method


def _unary(name: str) -> Any:
    def method(self: Any) -> Any:
        return map_partitions(name, self)

    method.__name__ = name
    method.__doc__ = f"Elementwise ``{name}``, partition by partition."
    return method


def _divmod(self: Any, other: Any) -> tuple:
    """``divmod(self, other)``: (floor quotient, remainder), two lazy results."""
    return binary(self, "__floordiv__", other, flex=False), binary(self, "__mod__", other, flex=False)


def _round(self: Any, decimals: Any = 0, *args: Any, **kwargs: Any) -> Any:
    """Values rounded to ``decimals`` (an int; for a DataFrame also a dict or Series by column).

    >>> import mars.dataframe as md
    >>> md.Series([1.25, 2.5], chunk_size=1).round(1).to_pandas().tolist()
    [1.2, 2.5]
    """
    if isinstance(decimals, (Tileable, PandasData)):
        decimals = Whole(decimals)
    return map_partitions("round", self, decimals, *args, **kwargs)


def _clip(self: Any, lower: Any = None, upper: Any = None, *, axis: Any = None, inplace: bool = False,
          **kwargs: Any) -> Any:
    """Values limited to ``[lower, upper]`` (scalars, pandas objects, lazy Series or 0-d tensors).

    A lazy Series bound is aligned with a DataFrame's rows with ``axis=0``,
    and with its columns with ``axis=1``.

    >>> import mars.dataframe as md
    >>> md.Series([1, 5, 9], chunk_size=2).clip(2, 6).to_pandas().tolist()
    [2, 5, 6]
    """
    by_rows = axis is not None and self.meta._get_axis_number(axis) == 0

    def bound(value: Any) -> Any:
        if isinstance(value, (Series, PandasData)) and isinstance(self, DataFrame) and not by_rows:
            return Whole(value)
        if isinstance(value, pd.Series) and (by_rows or isinstance(self, Series)):
            return from_pandas(value)
        return value

    result = map_partitions("clip", self, bound(lower), bound(upper), axis=axis, **kwargs)
    if inplace:
        self.data = result.data
        return None
    return result


def _array_ufunc(self: Any, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """numpy ufuncs (``np.sqrt(s)``, ``np.float64(2) * s``) partition by partition, not by fetching."""
    if method != "__call__" or ufunc.nout != 1 or kwargs.get("out") is not None:
        return NotImplemented
    lazy = [x for x in inputs if isinstance(x, (DataFrame, Series, Index))]
    if any(type(x) is not type(lazy[0]) for x in lazy):
        return NotImplemented
    first = inputs[0] is lazy[0]
    if len(inputs) == 2 and len(lazy) == 1 and _matched_by_position(lazy[0], inputs[1] if first else inputs[0]):
        # an array beside a lazy object: pandas matches it row by row (``ndarray | series``), as ``binary`` does
        name = _UFUNC_OPERATORS.get(ufunc)
        if name is None or kwargs:
            return NotImplemented
        name = f"__{name}__"
        return binary(lazy[0], name if first else reflected(name), inputs[1] if first else inputs[0], flex=False)
    return map_partitions(_call_ufunc, ufunc, kwargs, *inputs)


_UFUNC_OPERATORS = {
    np.add: "add", np.subtract: "sub", np.multiply: "mul", np.true_divide: "truediv", np.floor_divide: "floordiv",
    np.remainder: "mod", np.power: "pow", np.bitwise_and: "and", np.bitwise_or: "or", np.bitwise_xor: "xor",
    np.equal: "eq", np.not_equal: "ne", np.less: "lt", np.less_equal: "le", np.greater: "gt", np.greater_equal: "ge",
}


def _matched_by_position(lazy: Any, other: Any) -> bool:
    """Whether ``other`` (not lazy) lines up with ``lazy``'s rows: an array beside a Series, a 2-d one beside a frame."""
    if not isinstance(other, (np.ndarray, list, pd.api.extensions.ExtensionArray)):
        return False
    return np.ndim(other) == 2 if isinstance(lazy, DataFrame) else np.ndim(other) >= 1


def _call_ufunc(ufunc: np.ufunc, kwargs: dict, *inputs: Any) -> Any:
    return ufunc(*inputs, **kwargs)


def _install() -> None:
    flex_names = list(ARITHMETIC) + ["r" + n for n in ARITHMETIC] + ["div", "rdiv"]
    aliases = {"div": "truediv", "rdiv": "rtruediv", "subtract": "sub", "multiply": "mul", "divide": "truediv"}
    for cls, series in ((DataFrame, False), (Series, True)):
        for name in flex_names:
            setattr(cls, name, _flex(aliases.get(name, name), series))
        for alias in ("subtract", "multiply", "divide"):
            setattr(cls, alias, _flex(aliases[alias], series))
        for name in COMPARISONS:
            setattr(cls, name, _compare_flex(name, series))
        cls.round = cls.__round__ = _round
        cls.clip = _clip
        cls.abs = _unary("__abs__")
    for cls in (DataFrame, Series, Index):
        for name in ARITHMETIC + LOGICAL:
            setattr(cls, f"__{name}__", _dunder(f"__{name}__"))
            setattr(cls, f"__r{name}__", _dunder(f"__r{name}__"))
        for name in COMPARISONS:
            setattr(cls, f"__{name}__", _dunder(f"__{name}__"))
        for name in ("__neg__", "__pos__", "__abs__", "__invert__"):
            setattr(cls, name, _unary(name))
        cls.__divmod__ = _divmod
        cls.__array_ufunc__ = _array_ufunc


_install()
