"""Metadata: empty pandas objects standing for lazy ones.

``empty_meta(obj)`` is ``obj`` with no rows. ``fake(meta)`` is a small
*non-empty* object of the same dtypes (two rows of typical values), for
functions whose output kind or dtypes cannot be read off empty input (a
user's ``apply``). ``infer(func, *args)`` runs ``func`` on the metas standing
in ``args`` and returns the result's meta, trying empty input first and the
fake sample when empty input fails or gives ``object`` where data would not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd


def empty_meta(obj: Any) -> Any:
    """``obj`` (DataFrame, Series, Index or scalar) without its rows, and holding none of its memory.

    A slice ``obj.iloc[:0]`` would view ``obj``'s arrays: kept as a lazy
    object's metadata, it would keep all of ``obj``'s data alive after the
    user and the cluster let go of it.

    >>> import pyarrow as pa
    >>> df = pd.DataFrame({"a": np.arange(4), "s": pd.array(list("wxyz"), dtype="string[pyarrow]")})
    >>> meta = empty_meta(df)
    >>> meta.dtypes.equals(df.dtypes), meta["a"].to_numpy().base is None or meta["a"].to_numpy().base.size == 0
    (True, True)
    >>> meta["s"].array._pa_array.nbytes
    0
    """
    if isinstance(obj, (pd.DataFrame, pd.Series, pd.Index)) and not len(obj):
        return obj.iloc[:0] if not isinstance(obj, pd.Index) else obj[:0]  # (metas made from metas: cheap)
    if isinstance(obj, pd.DataFrame):
        out = obj.iloc[:0].copy(deep=True)
        for i in [i for i, d in enumerate(out.dtypes) if _arrow_backed(d)]:
            out.isetitem(i, pd.Series(_no_values(out.dtypes.iloc[i]), index=out.index))
        return out.set_axis(empty_meta(obj.index), axis=0)
    if isinstance(obj, pd.Series):
        values = _no_values(obj.dtype) if _arrow_backed(obj.dtype) else obj.iloc[:0].array.copy()
        return pd.Series(values, index=empty_meta(obj.index), name=obj.name)
    if isinstance(obj, pd.MultiIndex):
        return obj[:0].remove_unused_levels()
    if isinstance(obj, pd.Index):
        if _arrow_backed(obj.dtype):
            return pd.Index(_no_values(obj.dtype), name=obj.name)
        return obj[:0].copy(deep=True)
    return obj


def _arrow_backed(dtype: Any) -> bool:
    return isinstance(dtype, pd.ArrowDtype) or getattr(dtype, "storage", None) == "pyarrow"


def _no_values(dtype: Any) -> Any:
    """An empty array of ``dtype`` over buffers of its own."""
    return dtype.construct_array_type()._from_sequence([], dtype=dtype)


def scalar_meta(dtype: Any) -> np.ndarray:
    """A 0-d array standing for a scalar result of ``dtype``."""
    return np.empty((), dtype=dtype)


_FAKE_BY_KIND = {
    "b": [True, False],
    "i": [1, 2],
    "u": [1, 2],
    "f": [1.0, 2.0],
    "c": [1 + 1j, 2 + 2j],
    "M": [pd.Timestamp("2000-01-01"), pd.Timestamp("2000-01-02")],
    "m": [pd.Timedelta("1D"), pd.Timedelta("2D")],
}


def _fake_values(dtype: Any, n: int = 2) -> Any:
    if isinstance(dtype, pd.CategoricalDtype):
        cats = list(dtype.categories[:n]) if len(dtype.categories) else []
        values = (cats * n)[:n] if cats else [None] * n
        return pd.Categorical(values, dtype=dtype)
    if isinstance(dtype, pd.DatetimeTZDtype):
        return pd.DatetimeIndex(["2000-01-01", "2000-01-02"][:n]).tz_localize(dtype.tz)
    kind = getattr(dtype, "kind", "O")
    values = _FAKE_BY_KIND.get(kind)
    if values is None:
        values = ["a", "b"]
    try:
        return pd.array(values[:n], dtype=dtype)
    except (TypeError, ValueError):
        return pd.array(values[:n], dtype=object)


def _fake_index(index: pd.Index, n: int = 2) -> pd.Index:
    if isinstance(index, pd.RangeIndex):
        return pd.RangeIndex(n, name=index.name)
    if isinstance(index, pd.MultiIndex):
        arrays = [_fake_values(index.levels[i].dtype, n) for i in range(index.nlevels)]
        return pd.MultiIndex.from_arrays(arrays, names=index.names)
    return pd.Index(_fake_values(index.dtype, n), name=index.name, dtype=_kept(index.dtype))


def _kept(dtype: Any) -> Any:
    """``object`` must be asked for: pandas would infer ``str`` from the fake strings."""
    return dtype if dtype == object else None


def signature(obj: Any) -> tuple | None:
    """A hashable description of an empty pandas object that tells it apart from any other one.

    Labels carry their types (``1`` and ``1.0`` are equal keys, not equal
    labels); None for what it cannot describe exactly (categorical dtypes,
    whose equality ignores the categories' order; unhashable names; ``attrs``).

    >>> a = pd.DataFrame({"x": [1]}).iloc[:0]
    >>> signature(a) == signature(a.copy()), signature(a) == signature(a.astype(float))
    (True, False)
    """
    try:
        if isinstance(obj, pd.DataFrame):
            dtypes = tuple(obj.dtypes)  # built once: ``DataFrame.dtypes`` makes a new Series each time
            if obj.attrs or any(isinstance(d, pd.CategoricalDtype) for d in dtypes):
                return None
            return ("frame", _index_signature(obj.columns), dtypes, _index_signature(obj.index))
        if isinstance(obj, pd.Series):
            if obj.attrs or isinstance(obj.dtype, pd.CategoricalDtype):
                return None
            return ("series", _label(obj.name), obj.dtype, _index_signature(obj.index))
        if isinstance(obj, pd.Index):
            return ("index", _index_signature(obj))
    except _Undescribable:
        return None
    return None


class _Undescribable(Exception):
    pass


def _label(value: Any) -> tuple:
    try:
        hash(value)
    except TypeError:
        raise _Undescribable from None
    return (type(value), value)


def _index_signature(index: pd.Index) -> tuple:
    if isinstance(index, pd.MultiIndex):
        levels = tuple((lev.dtype, _label(name)) for lev, name in zip(index.levels, index.names))
        if any(isinstance(d, pd.CategoricalDtype) for d, _ in levels):
            raise _Undescribable
        return (pd.MultiIndex, len(index), levels)
    if isinstance(index.dtype, pd.CategoricalDtype):
        raise _Undescribable
    extra = (index.start, index.stop, index.step) if isinstance(index, pd.RangeIndex) else ()
    values = tuple(_label(v) for v in index.tolist()) if len(index) <= 1000 else None
    if values is None:
        raise _Undescribable
    return (type(index), index.dtype, _label(index.name), extra, values)


_CACHE_SIZE = 1024


class MetaCache:
    """Metadata worked out once per key (an expression built again infers nothing again); hands out copies.

    >>> cache = MetaCache()
    >>> calls = []
    >>> make = lambda: calls.append(1) or pd.DataFrame({"x": [1.0]})
    >>> cache.get(("k",), make).equals(cache.get(("k",), make)), len(calls)
    (True, 1)
    """

    def __init__(self, size: int = _CACHE_SIZE):
        self._size = size
        self._values: dict[Any, Any] = {}

    def get(self, key: Any, compute: Callable[[], Any]) -> Any:
        """``compute()``'s value for ``key`` (None: not cached), as a copy the caller may change (pandas
        objects, alone or in a tuple; other values are shared)."""
        if key is None:
            return compute()
        value = self._values.pop(key, None)
        if value is None:
            value = compute()
        if len(self._values) >= self._size:
            self._values.pop(next(iter(self._values)))  # the least recently used goes
        self._values[key] = value
        return _copied(value)


def _copied(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_copied(v) for v in value)
    return value.copy() if isinstance(value, (pd.DataFrame, pd.Series, pd.Index)) else value


_FAKES = MetaCache()
#: for the metadata that operators infer by running pandas on metas (keyed by their own names and arguments)
METAS = MetaCache()


def fake(meta: Any, n: int = 2) -> Any:
    """A small non-empty object with ``meta``'s dtypes, columns, names and index type."""
    sig = signature(meta)
    return _FAKES.get(None if sig is None else (sig, n), lambda: _fake(meta, n))


def _fake(meta: Any, n: int) -> Any:
    if isinstance(meta, pd.DataFrame):
        index = _fake_index(meta.index, n)
        data = {i: pd.Series(_fake_values(dt, n), index=index, dtype=_kept(dt)) for i, dt in enumerate(meta.dtypes)}
        out = pd.DataFrame(data, index=index)
        out.columns = meta.columns
        return out
    if isinstance(meta, pd.Series):
        return pd.Series(_fake_values(meta.dtype, n), index=_fake_index(meta.index, n), name=meta.name,
                         dtype=_kept(meta.dtype))
    if isinstance(meta, pd.Index):
        return _fake_index(meta, n)
    return meta


def _substitute(value: Any, convert: Callable[[Any], Any]) -> Any:
    if isinstance(value, (pd.DataFrame, pd.Series, pd.Index)):
        return convert(value)
    if isinstance(value, tuple):
        return tuple(_substitute(v, convert) for v in value)
    if isinstance(value, list):
        return [_substitute(v, convert) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, convert) for k, v in value.items()}
    return value


def infer(func: Callable, *args: Any, sample: bool = False, **kwargs: Any) -> Any:
    """The meta of ``func(*args, **kwargs)`` where pandas objects in the arguments are metas.

    With ``sample=True`` (user functions) only the fake non-empty sample is
    used, since a user's function often fails or lies on empty input.
    """
    if not sample:
        try:
            result = func(*args, **kwargs)
        except Exception:  # noqa: BLE001 - retried on a non-empty sample below
            pass
        else:
            if not _object_from_empty(result):
                return empty_meta(result)
    result = func(*_substitute(args, fake), **_substitute(kwargs, fake))
    return empty_meta(result)


def _object_from_empty(result: Any) -> bool:
    """Empty input can make pandas fall back to object dtype where real data would not."""
    if isinstance(result, pd.DataFrame):
        return any(dt == object for dt in result.dtypes) and len(result.columns) > 0
    if isinstance(result, (pd.Series, pd.Index)):
        return result.dtype == object
    return False


def dtype_of_scalar(value: Any) -> np.dtype:
    """The numpy dtype a pandas reduction's scalar result has."""
    if isinstance(value, np.generic):
        return value.dtype
    if isinstance(value, (bool, np.bool_)):
        return np.dtype(bool)
    if isinstance(value, int):
        return np.dtype(np.int64)
    if isinstance(value, float):
        return np.dtype(np.float64)
    return np.dtype(object)


def check_declared(value: Any, declared: Any, what: str, source: str = "meta") -> Any:
    """``value``, one partition's output of a user's function, held to the output the user declared.

    ``declared`` is the empty pandas object standing for the output (given as
    ``meta=``, or made from ``dtypes=``/``output_type=``: ``source`` says
    which); ``what`` names the call in errors (``"map_partitions(f)"``). The
    kind and, for a DataFrame, the columns in order must match; a dtype may
    differ only where the values convert without loss (ints to float, any to
    ``object``, or ``object`` values that convert at all), and are converted.
    An output without rows is taken as the declared one.

    >>> check_declared(pd.DataFrame({"a": [1]}), pd.DataFrame({"a": [0.5]}).iloc[:0], "f").dtypes.tolist()
    [dtype('float64')]
    >>> check_declared(pd.DataFrame({"c": [1]}), pd.DataFrame({"a": [1]}).iloc[:0], "f")
    Traceback (most recent call last):
    ...
    ValueError: f: the function returned columns ['c'] with dtypes {'c': 'int64'}; meta declares columns ['a'] with dtypes {'a': 'int64'}
    """
    if not isinstance(value, type(declared)):
        raise TypeError(f"{what}: the function returned {_kind(value)}; {source} declares {_kind(declared)}")
    if len(value) == 0 and not isinstance(declared, pd.Index):
        return declared  # no rows, nothing to disagree: a function building its output may give no columns
    if isinstance(declared, pd.DataFrame):
        if list(value.columns) != list(declared.columns):
            raise ValueError(f"{what}: the function returned {_columns(value)}; {source} declares {_columns(declared)}")
        bad = [i for i, (got, want) in enumerate(zip(value.dtypes, declared.dtypes)) if got != want]
        if not bad:
            return value
        converted = [_converted(value.iloc[:, i], declared.dtypes.iloc[i]) for i in bad]
        if any(c is None for c in converted):
            wrong = ", ".join(f"{value.columns[i]!r} is {value.dtypes.iloc[i]}, not {declared.dtypes.iloc[i]}"
                              for i, c in zip(bad, converted) if c is None)
            raise ValueError(f"{what}: the function returned {_columns(value)}; {source} declares "
                             f"{_columns(declared)} ({wrong})")
        value = value.copy(deep=False)
        for i, c in zip(bad, converted):
            value.isetitem(i, c)
        return value
    if value.dtype == declared.dtype:
        return value
    converted = _converted(value, declared.dtype)
    if converted is None:
        raise ValueError(f"{what}: the function returned a {type(value).__name__} of dtype {value.dtype}; "
                         f"{source} declares dtype {declared.dtype}")
    return converted


def _kind(obj: Any) -> str:
    return f"a DataFrame with {_columns(obj)}" if isinstance(obj, pd.DataFrame) else f"a {type(obj).__name__}"


def _columns(frame: pd.DataFrame) -> str:
    dtypes = {c: str(d) for c, d in frame.dtypes.items()}
    return f"columns {list(frame.columns)!r} with dtypes {dtypes!r}"


def _converted(values: Any, dtype: Any) -> Any:
    """``values`` as ``dtype`` where that loses nothing, else None."""
    lossless = dtype == object or (isinstance(values.dtype, np.dtype) and isinstance(dtype, np.dtype)
                                   and np.can_cast(values.dtype, dtype, "safe"))
    if not lossless and values.dtype != object:
        return None
    try:
        return values.astype(dtype)
    except (TypeError, ValueError):
        return None
