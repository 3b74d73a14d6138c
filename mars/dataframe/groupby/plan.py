"""Which aggregations split into per-partition partials, and into which.

``tree_plan(method, args, kwargs, values, result)`` reads a groupby call
(``sum()``, ``agg("mean")``, ``agg(["min", "max"])``, ``agg({"x": "sum"})``,
``agg(total=("x", "sum"))``) and returns one :class:`Out` per output column,
in pandas' column order, or None when some part cannot be computed from
partials (a callable, ``median``, ``nunique``, a dtype a partial would
change) and the call must see whole groups (a shuffle).

Partials are ``(kind, column)`` pairs: ``sum``, ``prod``, ``count``,
``size``, ``min``, ``max``, ``first``, ``last``, and for variances ``mean``
and ``m2`` (the sum of squared deviations from the group mean), which merge
exactly and stably (Chan et al.) where a sum of squares would cancel. A
:class:`~mars.dataframe.CustomReduction` is its own kind: per group, the
tuple of its ``agg(*pre(values))``, merged by ``agg`` and finished by ``post``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from ..custom_reduction import CustomReduction

#: functions computed from partials, and the keyword arguments each accepts (with the values allowed)
_OPTIONS: dict[str, dict[str, Any]] = {
    "sum": {"numeric_only": None, "min_count": "int", "skipna": True},
    "prod": {"numeric_only": None, "min_count": "int", "skipna": True},
    "mean": {"numeric_only": None, "skipna": True},
    "count": {},
    "size": {},
    "min": {"numeric_only": None, "min_count": -1, "skipna": True},
    "max": {"numeric_only": None, "min_count": -1, "skipna": True},
    "first": {"numeric_only": None, "min_count": -1, "skipna": True},
    "last": {"numeric_only": None, "min_count": -1, "skipna": True},
    "var": {"numeric_only": None, "ddof": "int", "skipna": True},
    "std": {"numeric_only": None, "ddof": "int", "skipna": True},
    "sem": {"numeric_only": None, "ddof": "int", "skipna": True},
}
TREE_FUNCS = frozenset(_OPTIONS)

_NUMERIC = "biuf"
_ORDERED = "biufmM"


@dataclasses.dataclass(frozen=True)
class Out:
    """One output column: ``func`` of input ``column`` (None: a Series' values, or no column for size).

    ``func`` is a name of :data:`TREE_FUNCS`, or a :class:`CustomReduction` (its partial is itself).
    """

    column: Any
    func: str | CustomReduction
    ddof: int = 1
    min_count: int = 0

    def partials(self) -> list[tuple[str, Any]]:
        c, f = self.column, self.func
        if isinstance(f, CustomReduction):
            return [(f, c)]
        if f == "size":
            return [("size", None)]
        if f in ("sum", "prod"):
            return [(f, c)] + ([("count", c)] if self.min_count > 0 else [])
        if f == "mean":
            return [("sum", c), ("count", c)]
        if f in ("var", "std", "sem"):
            return [("count", c), ("mean", c), ("m2", c)]
        return [(f, c)]


def partials_of(outs: tuple[Out, ...]) -> tuple[tuple[str, Any], ...]:
    """The distinct partials the outputs need, in first-use order (their column positions)."""
    seen: dict[tuple[str, Any], None] = {}
    for out in outs:
        for p in out.partials():
            seen.setdefault(p, None)
    return tuple(seen)


def _options(func: str, kwargs: dict) -> dict | None:
    """The plan's options for ``func(**kwargs)``, or None when some option needs the whole group."""
    allowed = _OPTIONS.get(func)
    if allowed is None:
        return None
    opts: dict = {}
    for name, value in kwargs.items():
        if name not in allowed:
            return None
        want = allowed[name]
        if want == "int":
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                return None
            opts[name] = int(value)
        elif want is not None and value != want:
            return None
    return opts


def _out(column: Any, func: Any, kwargs: dict) -> Out | None:
    if isinstance(func, CustomReduction):
        return None if kwargs else Out(column, func)
    if not isinstance(func, str):
        return None
    opts = _options(func, kwargs)
    if opts is None:
        return None
    return Out(column, func, ddof=opts.get("ddof", 1), min_count=max(0, opts.get("min_count", 0)))


def _method_outs(func: Any, kwargs: dict, values: Any, result: Any) -> list | None:
    if func == "size":
        return [_out(None, func, kwargs)]
    if isinstance(values, pd.Series):
        return [_out(None, func, kwargs)]
    if not isinstance(result, pd.DataFrame):
        return None
    return [_out(c, func, kwargs) for c in result.columns]


def _listed(items: Any, column: Any) -> list | None:
    outs = []
    for item in items:
        func = item[1] if isinstance(item, tuple) and len(item) == 2 else item
        outs.append(_out(column, func, {}))
    return outs


def _agg_outs(args: tuple, kwargs: dict, values: Any, result: Any) -> list | None:
    if not args or args[0] is None:
        if args[1:]:
            return None
        return _named_outs(kwargs, values)
    spec, rest = args[0], args[1:]
    if rest:
        return None
    if isinstance(spec, str):
        return _method_outs(spec, kwargs, values, result)
    if kwargs:
        return None
    if isinstance(spec, list):
        if isinstance(values, pd.Series):
            return _listed(spec, None)
        return [o for c in values.columns for o in (_listed(spec, c) or [None])]
    if isinstance(spec, dict) and isinstance(values, pd.DataFrame):
        outs = []
        for column, funcs in spec.items():
            outs += _listed(funcs, column) if isinstance(funcs, list) else [_out(column, funcs, {})]
        return outs
    return None


def _named_outs(kwargs: dict, values: Any) -> list | None:
    if not kwargs:
        return None
    outs = []
    for value in kwargs.values():
        if isinstance(values, pd.Series):
            outs.append(_out(None, value, {}))
        elif isinstance(value, tuple) and len(value) == 2:
            outs.append(_out(value[0], value[1], {}))
        else:
            return None
    return outs


def _fits(out: Out, values: Any) -> bool:
    """Whether partials give pandas' exact result for this column's dtype."""
    if isinstance(out.func, CustomReduction) or out.func in ("size", "count", "first", "last"):
        return out.column is None or _unique_column(values, out.column)
    if out.column is None:
        dtype = values.dtype if isinstance(values, pd.Series) else None
    else:
        if not _unique_column(values, out.column):
            return False
        dtype = values[out.column].dtype
    if dtype is None:
        return False
    if out.func in ("min", "max"):
        return (isinstance(dtype, np.dtype) and dtype.kind in _ORDERED) or isinstance(
            dtype, (pd.DatetimeTZDtype, pd.StringDtype))
    return isinstance(dtype, np.dtype) and dtype.kind in _NUMERIC


def _unique_column(values: Any, column: Any) -> bool:
    if not isinstance(values, pd.DataFrame):
        return False
    try:
        return isinstance(values.columns.get_loc(column), (int, np.integer))
    except (KeyError, TypeError):
        return False


def tree_plan(method: str, args: tuple, kwargs: dict, values: Any, result: Any) -> tuple[Out, ...] | None:
    """The outputs of ``groupby(...).method(*args, **kwargs)`` as partial-based columns, or None.

    ``values`` is the meta of what is aggregated (the selected columns without
    the keys, or a Series); ``result`` is the call's result meta with
    ``as_index=True``.

    >>> import pandas as pd
    >>> values = pd.DataFrame({"x": [1.0], "y": [2.0]}).iloc[:0]
    >>> tree_plan("agg", ({"x": "sum", "y": "mean"},), {}, values, values)
    (Out(column='x', func='sum', ddof=1, min_count=0), Out(column='y', func='mean', ddof=1, min_count=0))
    """
    if method in ("agg", "aggregate"):
        outs = _agg_outs(args, kwargs, values, result)
    elif method in TREE_FUNCS and not args:
        outs = _method_outs(method, kwargs, values, result)
    else:
        return None
    if not outs or any(o is None for o in outs):
        return None
    n = result.shape[1] if isinstance(result, pd.DataFrame) else 1
    if len(outs) != n or not all(_fits(o, values) for o in outs):
        return None
    return tuple(outs)
