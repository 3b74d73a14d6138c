"""Keys for metadata worked out once per expression shape (see :data:`~.meta.METAS`).

Building an expression runs pandas on empty metas (``s == "x"`` runs ``==``
on an empty Series) to learn the result's dtypes. That result is fixed by the
inputs' metas and the call's arguments, so it is kept under a key describing
both exactly: :func:`describe` gives that description for an argument, and
raises :class:`Undescribable` for what has none that is both cheap and exact
(a user's function, whose result may depend on anything; a non-empty pandas
object; a categorical dtype given as an argument, whose equality ignores the
categories' order). Such calls are worked out as before, every time. The
inputs' metas stand in keys as small tokens of their exact signatures
(:func:`signed`), categories included.
"""

from __future__ import annotations

import datetime
import functools
import itertools
import re
import types
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from pandas._config import config as _pandas_config

from .meta import METAS, signature

__all__ = ["Undescribable", "cached_meta", "describe", "meta_key", "signed"]

#: lists or dicts longer than this are not described (building their key would cost what it saves)
_MAX_ITEMS = 1000


class Undescribable(Exception):
    """An argument without a cheap exact description: the metadata it takes part in is not cached."""


_PLAIN = (type(None), str, bytes, bool, int, type(Ellipsis))
_TYPES = (int, float, complex, bool, str, bytes, object)


def describe(value: Any) -> Any:
    """A hashable description telling ``value`` apart from any argument giving other metadata.

    Types are part of it (``1``, ``1.0`` and ``True`` differ; so do ``0.0``
    and ``-0.0``); containers are described item by item.

    >>> describe([1, "a"]) == describe([1, "a"]), describe(1) == describe(1.0)
    (True, False)
    >>> describe(lambda x: x)
    Traceback (most recent call last):
    ...
    mars.dataframe.metakey.Undescribable: <lambda>
    """
    kind = type(value)
    if kind in _PLAIN:
        return (kind, value)
    if kind is float or kind is complex:
        return (kind, repr(value))
    if kind is list or kind is tuple:
        if len(value) > _MAX_ITEMS:
            raise Undescribable(f"a {kind.__name__} of {len(value)} items")
        return (kind, tuple(describe(v) for v in value))
    if kind is dict:
        if len(value) > _MAX_ITEMS:
            raise Undescribable(f"a dict of {len(value)} items")
        return (kind, tuple((describe(k), describe(v)) for k, v in value.items()))
    if kind is slice:
        return (kind, describe(value.start), describe(value.stop), describe(value.step))
    if isinstance(value, np.generic) and value.dtype != object:
        return (kind, value.dtype, value.tobytes())
    own = getattr(kind, "__mars_meta_key__", None)  # this package's placeholders (``map.Slot``)
    if own is not None:
        return (kind, own(value))
    return _describe_other(value, kind)


def _describe_other(value: Any, kind: type) -> Any:
    if kind in (pd.Timestamp, pd.Timedelta):
        return (kind, repr(value), value.unit)
    if value is pd.NaT or value is pd.NA:
        return (kind,)
    if kind in (datetime.date, datetime.datetime, datetime.time, datetime.timedelta):
        if getattr(value, "tzinfo", None) is not None:
            raise Undescribable(repr(value))
        return (kind, repr(value))
    if isinstance(value, np.dtype):
        return (np.dtype, value)
    if isinstance(value, pd.api.extensions.ExtensionDtype) and not isinstance(value, pd.CategoricalDtype):
        return (kind, value, str(value))
    if kind is type and (value in _TYPES or issubclass(value, np.generic)):
        return (kind, value)
    if isinstance(value, np.ufunc) and getattr(np, value.__name__, None) is value:
        return (np.ufunc, value.__name__)
    if kind is re.Pattern:
        return (kind, value.pattern, value.flags)
    if kind is functools.partial:
        return (kind, describe(value.func), describe(value.args), describe(value.keywords))
    if kind is types.FunctionType and _own_function(value):
        return (kind, value)
    raise Undescribable(getattr(value, "__qualname__", kind.__name__))


def _own_function(func: types.FunctionType) -> bool:
    """A function of this package defined at the top of its module (not a user's, not a closure)."""
    return (func.__module__ or "").startswith("mars.") and "<" not in func.__qualname__


def _options() -> tuple | None:
    """pandas' ``future.*`` options, which change what some calls give (``future.infer_string``); None when
    they cannot be read (nothing is cached then)."""
    future = getattr(_pandas_config, "_global_config", {}).get("future")
    if not isinstance(future, dict):
        return None
    return tuple(sorted((k, v) for k, v in future.items() if isinstance(v, (bool, int, str, type(None)))))


#: id(meta) -> (meta, its axes and their names when signed, its token); holding the meta keeps its id its own
_SIGNED: dict[int, tuple[Any, tuple, Any]] = {}
_SIGNED_SIZE = 512
#: signature -> a small int standing for it in keys (hashing an int is cheap, a signature's dtypes are not);
#: never reused for another signature, so forgetting one only makes a later key miss
_TOKENS: dict[tuple, int] = {}
_TOKENS_SIZE = 4096
_next_token = itertools.count()


def signed(meta: Any) -> int | None:
    """A token for :func:`~.meta.signature` of ``meta`` (categorical dtypes included): equal for equal
    signatures, None without one. Remembered while the axes stay the same objects with the same names.

    A built expression's meta is not changed in place; its axes are checked all the same (``df.columns.name = "x"``
    renames in place), which is cheap beside signing again, as every use of ``df.a`` would otherwise.

    >>> meta = pd.DataFrame({"a": [1]}).iloc[:0]
    >>> signed(meta) == signed(meta.copy()), signed(meta) == signed(meta.astype(float))
    (True, False)
    """
    try:
        axes = _axes(meta)
        entry = _SIGNED.get(id(meta))
        if entry is not None and entry[0] is meta and _same(entry[1], axes):
            return entry[2]
    except Exception:  # noqa: BLE001 - names that cannot be compared: sign it afresh
        return _token(signature(meta) or _with_categories(meta))
    token = _token(signature(meta) or _with_categories(meta))
    _bounded_put(_SIGNED, id(meta), (meta, axes, token), _SIGNED_SIZE)
    return token


def _bounded_put(table: dict, key: Any, value: Any, size: int) -> Any:
    """``table[key] = value``, the oldest entry going first once ``table`` holds ``size``; returns ``value``."""
    if len(table) >= size:
        table.pop(next(iter(table)), None)
    table[key] = value
    return value


def _token(sig: tuple | None) -> int | None:
    if sig is None:
        return None
    token = _TOKENS.get(sig)
    if token is None:
        token = _bounded_put(_TOKENS, sig, next(_next_token), _TOKENS_SIZE)
    return token


def _with_categories(meta: Any) -> tuple | None:
    """A signature for what :func:`~.meta.signature` leaves out for its categorical dtypes: their categories in
    order (``==`` between categorical dtypes ignores it) and whether ordered."""
    try:
        if isinstance(meta, pd.DataFrame) and not meta.attrs:
            return ("frame+categories", _axis(meta.columns), tuple(map(_dtype, meta.dtypes)), _axis(meta.index))
        if isinstance(meta, pd.Series) and not meta.attrs:
            return ("series+categories", describe(meta.name), _dtype(meta.dtype), _axis(meta.index))
        if isinstance(meta, pd.Index):
            return ("index+categories", _axis(meta))
    except (Undescribable, TypeError):  # TypeError: an unhashable label
        return None
    return None


def _dtype(dtype: Any) -> Any:
    if isinstance(dtype, pd.CategoricalDtype):
        categories = dtype.categories
        return ("category", dtype.ordered, _dtype(categories.dtype), describe(categories.tolist()))
    return dtype


def _axis(index: pd.Index) -> tuple:
    if isinstance(index, pd.MultiIndex):
        if len(index):
            raise Undescribable("a MultiIndex with values")
        levels = tuple((_dtype(level.dtype), describe(name)) for level, name in zip(index.levels, index.names))
        return (pd.MultiIndex, levels)
    extra = (index.start, index.stop, index.step) if isinstance(index, pd.RangeIndex) else ()
    return (type(index), _dtype(index.dtype), describe(index.name), extra, describe(index.tolist()))


def _axes(meta: Any) -> tuple:
    """``meta``'s axes (the objects) with their names, its own name and whether it has ``attrs``."""
    if isinstance(meta, pd.Index):
        return ((meta, tuple(meta.names)),)
    own = (meta.name if isinstance(meta, pd.Series) else None, bool(meta.attrs))
    axes = (meta.index, meta.columns) if isinstance(meta, pd.DataFrame) else (meta.index,)
    return tuple((a, tuple(a.names)) for a in axes) + (own,)


def _same(before: tuple, now: tuple) -> bool:
    return all(b[0] is n[0] and type(b[1]) is type(n[1]) and b[1] == n[1] for b, n in zip(before, now))


def meta_key(name: str, metas: tuple, *arguments: Any) -> tuple | None:
    """The key of ``name``'s metadata for inputs with ``metas`` (empty pandas objects, or
    ``("tensor", dtype)`` for 0-d tensors) and ``arguments``; None when any has no exact description.

    >>> s = pd.Series([], dtype="int64")
    >>> meta_key("eq", (s,), 1) == meta_key("eq", (s.copy(),), 1), meta_key("eq", (s,), lambda: 1)
    (True, None)
    """
    sigs = []
    for m in metas:
        sig = _token(m) if isinstance(m, tuple) else signed(m)
        if sig is None:
            return None
        sigs.append(sig)
    options = _options()
    if options is None:
        return None
    try:
        return (name, tuple(sigs), describe(arguments), options)
    except Undescribable:
        return None


class _Warned(Exception):
    def __init__(self, value: Any, seen: list):
        super().__init__()
        self.value, self.seen = value, seen


def cached_meta(key: tuple | None, compute: Callable[[], Any]) -> Any:
    """``compute()``, kept under ``key`` for the next expression of the same shape (None: not kept).

    Errors are never kept; neither is a value whose computation warned (the
    warnings are passed on, and come again next time).

    >>> calls = []
    >>> key = meta_key("doc-example", (), 1)
    >>> [cached_meta(key, lambda: calls.append(1) or pd.Series([], dtype="int8")).dtype for _ in range(2)], len(calls)
    ([dtype('int8'), dtype('int8')], 1)
    """
    if key is None:
        return compute()
    try:
        value = METAS.get(key, lambda: _unwarned(compute))
    except _Warned as warned:
        passed = set()
        for w in warned.seen:  # once each: the same call may have run on several samples
            where = (w.category, str(w.message), w.filename, w.lineno)
            if where not in passed:
                passed.add(where)
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
        return warned.value
    _sign_like(key, value)
    return value


#: a cached meta's token, by its key: the copies handed out are signed alike without signing them again
_OUT_TOKENS: dict[tuple, int | None] = {}


def _sign_like(key: tuple, value: Any) -> None:
    """Remember the token of ``value`` (a copy of the meta kept under ``key``), as the next op on it will ask."""
    if not isinstance(value, (pd.DataFrame, pd.Series, pd.Index)):
        return
    if key not in _OUT_TOKENS:
        _bounded_put(_OUT_TOKENS, key, signed(value), _TOKENS_SIZE)
        return
    token = _OUT_TOKENS[key]
    try:
        axes = _axes(value)
    except Exception:  # noqa: BLE001 - as in ``signed``: nothing remembered
        return
    _bounded_put(_SIGNED, id(value), (value, axes, token), _SIGNED_SIZE)


def _unwarned(compute: Callable[[], Any]) -> Any:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        value = compute()
    if seen:
        raise _Warned(value, seen)
    return value
