"""Monoid reductions (sum, prod, min, max, any, all) and the mean."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ...core.device import xp_of
from ..core import Tensor, tensor_data
from ..datasource.core import astensor
from .core import TensorReduction, normalize_axis, reduce_tensor, reduction_dtype


class _Monoid(TensorReduction):
    """A reduction whose combine is the reduction itself (sum of sums, max of maxes)."""

    func: Any = None

    def chunk_fn(self, x: np.ndarray) -> np.ndarray:
        return self.func(x, axis=self.axis, keepdims=True, dtype=self.dtype)

    def combine_fn(self, p: np.ndarray) -> np.ndarray:
        return self.func(p, axis=self.axis, keepdims=True, dtype=self.dtype)


class TensorSum(_Monoid):
    func = staticmethod(np.sum)


class TensorProd(_Monoid):
    func = staticmethod(np.prod)


class _NoDtypeMonoid(_Monoid):
    def chunk_fn(self, x: np.ndarray) -> np.ndarray:
        return self.func(x, axis=self.axis, keepdims=True)

    combine_fn = chunk_fn


def is_empty_along(x: np.ndarray, axes: tuple) -> bool:
    """Whether chunk ``x`` holds nothing along the reduced ``axes`` (a filter left it empty)."""
    return x.size == 0 and builtins.any(x.shape[d] == 0 for d in axes)


def empty_partial(x: np.ndarray, axes: tuple, dtype: Any) -> np.ndarray:
    """The partial of an empty chunk for a reduction with no identity: length 0 along the first reduced
    axis, so that the concatenation of a group's partials skips it."""
    shape = tuple((0 if d == axes[0] else 1) if d in axes else n for d, n in enumerate(x.shape))
    return xp_of(x).empty(shape, dtype=dtype)


class _Extreme(_NoDtypeMonoid):
    """max / min: no identity, so a chunk that a filter left empty offers an empty partial, which the
    concatenation of partials skips (numpy's error remains for a tensor that is empty as a whole)."""

    def chunk_fn(self, x: np.ndarray) -> np.ndarray:
        if is_empty_along(x, self.axis):
            return empty_partial(x, self.axis, x.dtype)
        return self.func(x, axis=self.axis, keepdims=True)

    def combine_fn(self, p: np.ndarray) -> np.ndarray:
        if self.axis and p.shape[self.axis[0]] == 0:  # every partial of this group was empty: so is theirs
            return p
        return self.func(p, axis=self.axis, keepdims=True)

    def agg_fn(self, p: np.ndarray) -> np.ndarray:
        return self.func(p, axis=self.axis, keepdims=True)  # all empty: numpy's error


class TensorMax(_Extreme):
    func = staticmethod(np.max)


class TensorMin(_Extreme):
    func = staticmethod(np.min)


class TensorAny(_NoDtypeMonoid):
    func = staticmethod(np.any)


class TensorAll(_NoDtypeMonoid):
    func = staticmethod(np.all)


def _empty_check(a: Any, axis: Any, name: str) -> None:
    data = tensor_data(a)
    axes = normalize_axis(axis, data.ndim)
    if builtins.any(data.shape[d] == 0 for d in axes if isinstance(data.shape[d], int)):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")


def _scalar_axis(data: Any, axis: Any) -> Any:
    """numpy's ufunc-style reductions take axis 0 or -1 of a 0-d array as "all axes"."""
    if data.ndim == 0 and isinstance(axis, (int, np.integer)) and not isinstance(axis, bool) and axis in (0, -1):
        return None
    return axis


def sum(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Tensor:
    """Sum over ``axis`` (numpy's dtype rules: small ints sum as the platform int).

    >>> import mars.tensor as mt
    >>> mt.ones((4, 3), chunk_size=2).sum(axis=0).execute().fetch()
    array([4., 4., 4.])
    """
    t = astensor(a)
    return reduce_tensor(TensorSum, t, _scalar_axis(t, axis), keepdims, reduction_dtype(np.sum, dtype, t.dtype))


def prod(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Tensor:
    t = astensor(a)
    return reduce_tensor(TensorProd, t, _scalar_axis(t, axis), keepdims, reduction_dtype(np.prod, dtype, t.dtype))


def max(a: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    t = astensor(a)
    axis = _scalar_axis(t, axis)
    _empty_check(t, axis, "maximum")
    return reduce_tensor(TensorMax, t, axis, keepdims, t.dtype)


def min(a: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    t = astensor(a)
    axis = _scalar_axis(t, axis)
    _empty_check(t, axis, "minimum")
    return reduce_tensor(TensorMin, t, axis, keepdims, t.dtype)


def any(a: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    t = astensor(a)
    return reduce_tensor(TensorAny, t, _scalar_axis(t, axis), keepdims, np.dtype(bool))


def all(a: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    t = astensor(a)
    return reduce_tensor(TensorAll, t, _scalar_axis(t, axis), keepdims, np.dtype(bool))


class TensorMean(TensorReduction):
    """Mean via (sum, count) partials; sums in float64 like numpy for integer input."""

    params = ("axis", "keepdims", "dtype", "sum_dtype")

    def chunk_fn(self, x: np.ndarray) -> tuple:
        total = np.sum(x, axis=self.axis, keepdims=True, dtype=self.sum_dtype)
        count = np.full_like(total, _count(x.shape, self.axis), dtype=np.int64)  # on total's device
        return total, count

    def combine_fn(self, p: tuple) -> tuple:
        total, count = p
        return np.sum(total, axis=self.axis, keepdims=True), np.sum(count, axis=self.axis, keepdims=True)

    def agg_fn(self, p: tuple) -> np.ndarray:
        total, count = self.combine_fn(p)
        with np.errstate(invalid="ignore", divide="ignore"):
            return total / count  # ReduceAgg casts to the output dtype


def _count(shape: tuple, axes: tuple) -> int:
    n = 1
    for d in axes:
        n *= shape[d]
    return n


def mean(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Tensor:
    """Arithmetic mean over ``axis``; float64 for integer input, as numpy."""
    t = astensor(a)
    out_dtype = reduction_dtype(np.mean, dtype, t.dtype)
    if dtype is not None:
        sum_dtype = np.dtype(dtype)
    elif t.dtype.kind in "biu":
        sum_dtype = out_dtype
    else:  # numpy sums float16 in float32 for a mean
        sum_dtype = np.dtype(np.float32) if t.dtype == np.float16 else None
    return reduce_tensor(TensorMean, t, axis, keepdims, out_dtype, sum_dtype=sum_dtype)
