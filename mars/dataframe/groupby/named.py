"""Named aggregations (``agg(total=("x", "sum"))``) run as the dict form that gives the same frame.

pandas turns a named aggregation into a dict of lists, which builds a
two-level column index and reorders and renames it: on a small frame that
costs ~4 ms, against ~0.8 ms for ``agg({"x": "sum"})`` (pandas 3, string
labels). A query pays it once per groupby in pandas; the lazy groupby pays it
when it infers its metadata and again in every partition that runs the call.
When each output reads another column with a function named by a string, the
dict form with one string per column gives the same values, dtypes and index;
only the column labels differ, and they are set to the output names.
"""

from __future__ import annotations

from typing import Any

import pandas as pd


def dict_form(method: str, args: tuple, kwargs: dict, key_labels: Any = ()) -> tuple[dict, list] | None:
    """``({column: func}, [output names])`` for a named aggregation that the dict form computes, else None.

    ``key_labels`` are the grouping columns: an output reading one is left to pandas' own path.

    >>> dict_form("agg", (None,), {"total": ("x", "sum"), "n": ("y", "count")})
    ({'x': 'sum', 'y': 'count'}, ['total', 'n'])
    >>> dict_form("agg", (None,), {"a": ("x", "sum"), "b": ("x", "max")}) is None  # one column twice
    True
    """
    if method not in ("agg", "aggregate") or args not in ((), (None,)) or not kwargs:
        return None
    spec: dict = {}
    for value in kwargs.values():
        if not (type(value) is tuple and len(value) == 2 and isinstance(value[1], str)):
            return None
        column = value[0]
        try:
            if column in spec or column in key_labels:
                return None
        except TypeError:  # an unhashable label: pandas' path reports it
            return None
        spec[column] = value[1]
    return spec, list(kwargs)


def call_on(g: Any, method: str, args: tuple, kwargs: dict, key_labels: Any = None) -> Any:
    """``getattr(g, method)(*args, **kwargs)`` on pandas groupby ``g``, a named aggregation by its dict form.

    ``key_labels`` default to the labels among ``g``'s keys.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"k": [1, 1, 2], "x": [1.0, 2.0, 3.0]})
    >>> call_on(df.groupby("k"), "agg", (), {"total": ("x", "sum")}).to_dict()
    {'total': {1: 3.0, 2: 3.0}}
    """
    plain = None
    if isinstance(g, pd.api.typing.DataFrameGroupBy) and g.obj.columns.is_unique:
        plain = dict_form(method, args, kwargs, _labels(g.keys) if key_labels is None else key_labels)
    if plain is None or not all(c in g.obj.columns for c in plain[0]):
        return getattr(g, method)(*args, **kwargs)
    spec, names = plain
    result = g.agg(spec)
    n_keys = result.shape[1] - len(names)  # as_index=False puts the keys first
    result.columns = list(result.columns[:n_keys]) + names
    return result


def _labels(keys: Any) -> list:
    """The column labels among groupby keys (arrays and Series are not labels)."""
    out = []
    for k in keys if isinstance(keys, list) else [keys]:
        try:
            hash(k)
        except TypeError:
            continue
        out.append(k)
    return out
