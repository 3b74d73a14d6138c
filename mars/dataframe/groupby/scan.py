"""Cumulative functions and ``head`` over few groups: a scan across partitions, no shuffle.

``cumsum``, ``cumprod``, ``cummax``, ``cummin``, ``cumcount`` and ``head(n)``
of a partition depend on the rows of its groups in the partitions before it
only through one value per group: their sum, product, max, min or count. So:

1. each partition computes its local result (pandas' own, on its rows) and
   its groups' totals, in one groupby (:class:`ScanLocal`);
2. one small op turns the totals into each partition's *carry*: the totals
   of all partitions before it, per group (:class:`ScanCarries`);
3. each partition applies its carry (:class:`ScanApply`): adds it to a sum
   or a count, multiplies a product by it, takes the max or min with it,
   keeps the rows whose count is under ``n``.

The carries hold one row per group per partition, so this is chosen only
when groups are few (as a tree is for aggregations); otherwise rows take a
round trip through a shuffle (:mod:`.transform`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...core.operator import Tiled
from ..core import PandasOperator, chunk_index_of, chunk_shape_of, nsplits_of
from .keys import GroupSpec

#: method → how a group's rows before a partition add up into its carry
SCANS = {"cumsum": "sum", "cumprod": "prod", "cummax": "max", "cummin": "min", "cumcount": "size", "head": "size"}


def scannable(method: str, args: tuple, kwargs: dict, values: Any) -> bool:
    """Whether ``method(*args, **kwargs)`` over ``values`` (the selected meta) can be scanned."""
    if method not in SCANS or kwargs:
        return False
    if method == "cumcount":
        return args in ((), (True,))
    if method == "head":
        return len(args) == 1 and isinstance(args[0], (int, np.integer)) and args[0] >= 0
    if args:
        return False
    dtypes = values.dtypes if isinstance(values, pd.DataFrame) else [values.dtype]
    return len(dtypes) > 0 and all(isinstance(d, np.dtype) and d.kind in "iuf" for d in dtypes)


class ScanLocal(PandasOperator):
    """A partition's local result, rows' group numbers and groups' keys; and its groups' totals."""

    params = ("spec", "method")

    def execute(self, part: Any, *keys: Any) -> tuple:
        g = self.spec.groupby(part, keys, sort=False, as_index=True)
        counting = self.method in ("cumcount", "head")
        local = g.cumcount() if counting else getattr(g, self.method)()
        totals = g.size() if counting else getattr(g, SCANS[self.method])()
        codes = g.ngroup().to_numpy()
        if codes.dtype.kind == "f":
            codes = np.where(np.isnan(codes), -1, codes).astype(np.int64)
        return (local, codes, totals.index), totals


def _merge(frames: list, how: str) -> Any:
    whole = pd.concat(frames)
    levels = list(range(whole.index.nlevels)) if whole.index.nlevels > 1 else 0
    return getattr(whole.groupby(level=levels, sort=False, dropna=False, observed=True), how)()


class ScanCarries(PandasOperator):
    """Per partition, the totals of its groups over all partitions before it (None for the first)."""

    params = ("how",)

    def execute(self, *totals: Any) -> Any:
        carries, running = [], None
        for t in totals:
            carries.append(running)
            if len(t):
                running = t if running is None else _merge([running, t], self.how)
        return tuple(carries) if len(carries) > 1 else carries[0]


class ScanApply(PandasOperator):
    """A partition's local result with its carry applied (``head``: its rows within the first ``n``)."""

    params = ("spec", "method", "n")

    def execute(self, local: tuple, carry: Any, part: Any = None) -> Any:
        result, codes, uniq = local
        if carry is not None and len(uniq):
            if isinstance(result, pd.DataFrame):
                columns = result.columns
                result = pd.DataFrame({j: _carried(result.iloc[:, j], codes, carry.iloc[:, j], uniq, self.method)
                                       for j in range(result.shape[1])}, index=result.index)
                result.columns = columns
            else:
                result = _carried(result, codes, carry, uniq, self.method)
        if self.method != "head":
            return result
        kept = (codes >= 0) & (result.to_numpy() < self.n)
        selected = part[self.spec.selection[0]] if self.spec.selection else part
        return selected[kept]


def _identity(method: str, dtype: np.dtype) -> Any:
    """What a group not seen before carries: nothing to add, multiply, or beat."""
    if method in ("cumsum", "cumcount", "head"):
        return 0
    if method == "cumprod":
        return 1
    if dtype.kind == "f":
        return np.nan
    info = np.iinfo(dtype)
    return info.min if method == "cummax" else info.max


def _carried(result: pd.Series, codes: np.ndarray, carry: pd.Series, uniq: pd.Index, method: str) -> pd.Series:
    """One column of a local result with each row's group carry applied (rows of dropped keys untouched)."""
    values = result.to_numpy()
    per_group = carry.reindex(uniq, fill_value=_identity(method, values.dtype)).to_numpy()
    carry = per_group[np.maximum(codes, 0)]
    if method == "cumprod":
        combined = values * carry
    elif method in ("cummax", "cummin"):
        pick = np.fmax if method == "cummax" else np.fmin
        # NaN rows stay NaN, as pandas leaves them; elsewhere a NaN carry (no value yet) is ignored
        combined = np.where(np.isnan(values), values, pick(values, carry)) if values.dtype.kind == "f" \
            else pick(values, carry)
    else:
        combined = values + carry
    if (codes < 0).any():
        combined = np.where(codes < 0, values, combined)
    return pd.Series(combined.astype(values.dtype, copy=False), index=result.index, name=result.name)


def scan_tiled(spec: GroupSpec, method: str, n: Any, parts: Sequence[list], meta: Any, rows: Sequence[float]) -> Tiled:
    """The chunks of a scan over ``parts`` (each a partition and its keys' partitions)."""
    locals_, totals = [], []
    for i, p in enumerate(parts):
        local, total = ScanLocal(spec=spec, method=method).new_chunks(
            p, [{"index": (i,), "shape": (np.nan,), "meta": None}, {"index": (i,), "shape": (np.nan,), "meta": None}])
        locals_.append(local)
        totals.append(total)
    carries = ScanCarries(how="sum" if SCANS[method] == "size" else SCANS[method]).new_chunks(
        totals, [{"index": (i,), "shape": (np.nan,), "meta": None} for i in range(len(parts))])
    chunks = []
    for i, p in enumerate(parts):
        inputs = [locals_[i], carries[i]] + ([p[0]] if method == "head" else [])
        chunks.append(ScanApply(spec=spec, method=method, n=n).new_chunk(
            inputs, index=chunk_index_of(meta, i), shape=chunk_shape_of(meta, rows[i]), meta=meta))
    return Tiled(chunks, nsplits_of(meta, rows))
