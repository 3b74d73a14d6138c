"""Sums, counts and means over one integer key whose values are dense, by ``numpy.bincount``; or stored in
key order, by ``numpy.add.reduceat`` over the runs of equal keys.

A shuffle's reducer holds whole groups of one key range: with an integer
key whose range is not much wider than the rows (order, part and customer
numbers), the group of a row is ``key - min``, and one ``bincount`` per
column gives every group's sum (and count) in a single pass with no hash
table. pandas' groupby factorizes the key first, which costs more than the
sums themselves.

Only what matches pandas exactly is done here; anything else (other
functions, float keys, sparse keys, sums that could lose integer precision)
returns None and pandas' groupby runs instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .keys import GroupSpec

#: the functions computed here
FUNCS = ("sum", "count", "mean")
#: key ranges up to this many times the rows (plus a constant) count as dense
SPREAD = 4

_EXACT = 2.0**53  # float64 holds integers exactly below this


def _named(call: tuple) -> list[tuple[Any, Any, str]] | None:
    """``[(output, column, func)]`` of a named aggregation call, or None."""
    method, args, kwargs = call
    if method != "agg" or args not in ((), (None,)) or not kwargs:
        return None
    out = []
    for name, spec in kwargs.items():
        if not (isinstance(spec, tuple) and len(spec) == 2 and spec[1] in FUNCS):
            return None
        out.append((name, spec[0], spec[1]))
    return out


class _ByCode:
    """Groups given by a code per row (``key - low``): counts and sums by ``bincount`` over ``n`` codes."""

    def __init__(self, codes: np.ndarray, n: int):
        self.codes, self.n = codes, n

    def counts(self, valid: np.ndarray | None) -> np.ndarray:
        return np.bincount(self.codes if valid is None else self.codes[valid], minlength=self.n)

    def sums(self, weights: np.ndarray) -> np.ndarray:
        return np.bincount(self.codes, weights=weights, minlength=self.n)


class _ByRun:
    """Groups given as runs of rows (keys in order), each starting at ``starts``: ``reduceat`` over them."""

    def __init__(self, starts: np.ndarray, rows: int):
        self.starts, self.rows = starts, rows

    def counts(self, valid: np.ndarray | None) -> np.ndarray:
        if valid is None:
            return np.diff(self.starts, append=self.rows)
        return np.add.reduceat(valid, self.starts, dtype=np.int64)

    def sums(self, weights: np.ndarray) -> np.ndarray:
        return np.add.reduceat(weights.astype(np.float64, copy=False), self.starts)


def _column(values: np.ndarray, groups: _ByCode | _ByRun, func: str) -> np.ndarray | None:
    """One output column: ``func`` of ``values`` per group (NaN left out, as pandas leaves it out)."""
    kind = values.dtype.kind
    if kind not in "fiub":
        return None
    valid = ~np.isnan(values) if kind == "f" else None
    if valid is not None and valid.all():
        valid = None
    if func == "count":
        return groups.counts(valid)
    if kind != "f" and np.abs(values.astype(np.float64)).sum() >= _EXACT:
        return None  # sums of large integers: pandas keeps them exact in int64
    sums = groups.sums(values if valid is None else np.where(valid, values, 0.0))
    if func == "sum":
        return sums
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / groups.counts(valid)


def _frame(part: pd.DataFrame, named: list, groups: _ByCode | _ByRun, present: Any, keys: np.ndarray,
           meta: pd.DataFrame) -> pd.DataFrame | None:
    """The named columns of ``groups`` (those ``present``), indexed by their ``keys``, in ``meta``'s dtypes."""
    columns = {}
    for name, column, func in named:
        values = _column(part[column].to_numpy(), groups, func)
        if values is None:
            return None
        columns[name] = values[present]
    out = pd.DataFrame(columns, index=pd.Index(keys, name=meta.index.name).astype(meta.index.dtype, copy=False))
    if list(out.columns) != list(meta.columns):
        return None
    return out.astype(meta.dtypes.to_dict())


def sorted_runs(keys: np.ndarray) -> np.ndarray | None:
    """Where each run of equal keys starts, when ``keys`` never decrease (a partition of a table stored in key
    order: TPC-H's lineitem by order); None otherwise.

    >>> sorted_runs(np.array([3, 3, 5, 9, 9, 9])).tolist(), sorted_runs(np.array([2, 1]))
    ([0, 2, 3], None)
    """
    if not (keys[1:] >= keys[:-1]).all():
        return None
    return np.concatenate(([0], np.flatnonzero(keys[1:] != keys[:-1]) + 1))


def dense_agg(spec: GroupSpec, call: tuple, part: Any, meta: Any) -> pd.DataFrame | None:
    """pandas' ``part.groupby(key).agg(name=(column, func), ...)`` for a dense integer key, else None.

    >>> part = pd.DataFrame({"k": [3, 1, 3], "v": [1.0, np.nan, 2.5]})
    >>> meta = part.iloc[:0].groupby("k").agg(s=("v", "sum"), n=("v", "count"))
    >>> out = dense_agg(GroupSpec(by="k"), ("agg", (None,), {"s": ("v", "sum"), "n": ("v", "count")}), part, meta)
    >>> out.to_dict("index")
    {1: {'s': 0.0, 'n': 0}, 3: {'s': 3.5, 'n': 2}}
    """
    named = _named(call)
    if named is None or not isinstance(part, pd.DataFrame) or not isinstance(meta, pd.DataFrame) or not len(part):
        return None
    if spec.level is not None or spec.modes or spec.selection or not spec.sort or not spec.as_index:
        return None
    key = spec.by[0] if type(spec.by) is list and len(spec.by) == 1 else spec.by
    if type(spec.by) is list and len(spec.by) != 1 or isinstance(meta.index, pd.MultiIndex):
        return None
    if not part.columns.is_unique or key not in part.columns or any(c not in part.columns for _, c, _ in named):
        return None
    keys = part[key].to_numpy()
    if keys.dtype.kind not in "iu":
        return None
    starts = sorted_runs(keys)
    if starts is not None:  # keys in order: each run of equal keys is a group
        return _frame(part, named, _ByRun(starts, len(keys)), slice(None), keys[starts], meta)
    low, high = int(keys.min()), int(keys.max())
    n = high - low + 1
    if n > SPREAD * len(keys) + 1024:
        return None
    codes = (keys - keys.dtype.type(low)).astype(np.intp)
    present = np.bincount(codes, minlength=n) > 0
    return _frame(part, named, _ByCode(codes, n), present, np.flatnonzero(present) + low, meta)
