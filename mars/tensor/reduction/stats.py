"""Statistics reductions: variance, arg-extrema, counts, the NaN-skipping family, ptp, average.

Each is a tree reduction (see :mod:`.core`): a chunk function makes a small
partial, partials are merged in a tree, the last merge gives the result.

- ``var``/``std`` carry ``(count, mean, M2)`` partials merged with Chan et
  al.'s formula: no large sum of squares that would cancel catastrophically.
- ``argmin``/``argmax`` carry ``(value, global index)``; among equal values
  the smaller index wins, so the answer is numpy's first occurrence whatever
  the chunking (a NaN counts as the extreme, as in numpy).
- The ``nan*`` functions skip NaNs without numpy's warnings; an all-NaN slice
  gives NaN (``nanargmin`` raises, as numpy does).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...core.device import asarray, is_device_array, xp_of
from ..arithmetic.core import TensorElementwise, apply_ufunc
from ..base.transpose import transpose
from ..core import Tensor, is_tensor, tensor_data
from ..datasource.core import astensor, full
from ..datasource.creation import diag
from .basic import _Extreme, _Monoid, _scalar_axis, empty_partial, is_empty_along, mean
from .basic import sum as _sum
from .core import (
    TensorReduction,
    normalize_axis,
    reduce_tensor,
    reduction_dtype,
)

__all__ = [
    "var", "std", "nanvar", "nanstd", "argmin", "argmax", "nanargmin", "nanargmax", "count_nonzero",
    "nansum", "nanprod", "nanmin", "nanmax", "nanmean", "ptp", "average", "trace",
]

_BIG_INDEX = np.iinfo(np.intp).max


def _check_nonempty(data: Any, axis: Any, message: str) -> None:
    if any(data.shape[d] == 0 for d in normalize_axis(axis, data.ndim)):
        raise ValueError(message)


def _abs2(d: np.ndarray) -> np.ndarray:
    """``|d|**2``, real for complex ``d``; ``d`` is a temporary, squared in place when real."""
    if d.dtype.kind == "c":
        return d.real * d.real + d.imag * d.imag
    return np.multiply(d, d, out=d) if isinstance(d, np.ndarray) else d * d


def _nan_mask(x: np.ndarray, skipna: bool) -> Any:
    """Where ``x`` holds a value to use (``True`` for all of it when nothing is skipped)."""
    return ~np.isnan(x) if skipna and x.dtype.kind in "fc" else True


def _counts(x: np.ndarray, mask: Any, axis: tuple) -> np.ndarray:
    if mask is True:
        shape = tuple(1 if d in axis else s for d, s in enumerate(x.shape))
        return xp_of(x).full(shape, int(np.prod([x.shape[d] for d in axis])), dtype=np.int64)
    return np.sum(mask, axis=axis, keepdims=True, dtype=np.int64)


def masked_sum(x: Any, axis: tuple, dtype: Any, mask: Any) -> Any:
    """``np.sum(x, where=mask)`` with kept dims; ``mask`` True sums everything. CuPy has no ``where=``:
    on the GPU the masked-out values are zeroed first."""
    if mask is True:
        return np.sum(x, axis=axis, keepdims=True, dtype=dtype)
    if is_device_array(x):
        return np.sum(np.where(mask, x, 0), axis=axis, keepdims=True, dtype=dtype)
    return np.sum(x, axis=axis, keepdims=True, dtype=dtype, where=mask)


# ----------------------------------------------------------------- var / std
class TensorMoments(TensorReduction):
    """Variance (``root``: standard deviation) from ``(count, mean, M2)`` partials."""

    params = ("axis", "keepdims", "dtype", "ddof", "work_dtype", "skipna", "root")

    def chunk_fn(self, x: np.ndarray) -> tuple:
        axis, work = self.axis, self.work_dtype
        mask = _nan_mask(x, self.skipna)
        count = _counts(x, mask, axis)
        total = masked_sum(x, axis, work, mask)
        with np.errstate(invalid="ignore", divide="ignore"):
            avg = np.true_divide(total, count, dtype=work)
        avg = np.where(count > 0, avg, 0)
        dev = _abs2(np.subtract(x, avg, dtype=work))
        return count, avg, masked_sum(dev, axis, None, mask)

    def combine_fn(self, p: tuple) -> tuple:
        count, avg, m2 = p
        axis = self.axis
        n = np.sum(count, axis=axis, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            merged = np.sum(avg * count, axis=axis, keepdims=True) / n
        merged = np.where(n > 0, merged, 0)
        # Chan et al.: M2 = sum(M2_i) + sum(n_i * (mean_i - mean)**2)
        spread = np.sum(_abs2(avg - merged) * count, axis=axis, keepdims=True)
        return n, merged, np.sum(m2, axis=axis, keepdims=True) + spread

    def agg_fn(self, p: tuple) -> np.ndarray:
        n, _, m2 = self.combine_fn(p)
        dof = n - self.ddof
        with np.errstate(invalid="ignore", divide="ignore"):
            if self.skipna:  # numpy's nanvar: NaN where there are too few values
                result = np.where(dof > 0, m2 / np.where(dof > 0, dof, 1), np.nan)
            else:  # numpy's var: M2 / max(dof, 0), so inf or NaN
                result = m2 / np.maximum(dof, 0)
            return np.sqrt(result) if self.root else result


def _work_dtype(in_dtype: np.dtype, dtype: Any) -> np.dtype:
    """The dtype the moments are computed in: the requested float dtype, else float64 for
    integers; float16 works in float32 as numpy does, so sums do not overflow."""
    base = np.dtype(dtype) if dtype is not None and np.dtype(dtype).kind in "fc" else in_dtype
    if base.kind not in "fc":
        return np.dtype(np.float64)
    return np.result_type(base, np.float32)


def _check_nan_dtype(t: Any, dtype: Any) -> None:
    # numpy's nan functions check this only when the data holds a NaN; a lazy tensor always checks
    if t.dtype.kind in "fc" and dtype is not None and np.dtype(dtype).kind not in "fc":
        raise TypeError(f"If a is inexact, then dtype must be inexact, got dtype {np.dtype(dtype)}")


def _ddof(ddof: Any, correction: Any) -> Any:
    """numpy 2 and the Array API spell ``ddof`` as ``correction``; one of them at most."""
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def _moments(a: Any, axis: Any, dtype: Any, ddof: Any, keepdims: bool, like: Callable, skipna: bool, root: bool) -> Tensor:
    t = astensor(a)
    if skipna:
        axis = _scalar_axis(t, axis)
        _check_nan_dtype(t, dtype)
    out_dtype = reduction_dtype(like, dtype, t.dtype)
    params = dict(ddof=ddof, work_dtype=_work_dtype(t.dtype, dtype), skipna=skipna, root=root)
    return reduce_tensor(TensorMoments, t, axis, keepdims, out_dtype, **params)


def var(a: Any, axis: Any = None, dtype: Any = None, ddof: float = 0, keepdims: bool = False, *,
        correction: float | None = None) -> Tensor:
    """Variance over ``axis``, ``sum(|x - mean|**2) / (n - ddof)``, as ``np.var``.

    >>> import mars.tensor as mt
    >>> float(mt.tensor([1.0, 2.0, 3.0, 4.0], chunk_size=3).var())
    1.25
    """
    return _moments(a, axis, dtype, _ddof(ddof, correction), keepdims, np.var, skipna=False, root=False)


def std(a: Any, axis: Any = None, dtype: Any = None, ddof: float = 0, keepdims: bool = False, *,
        correction: float | None = None) -> Tensor:
    """Standard deviation over ``axis``, the square root of :func:`var`.

    >>> import mars.tensor as mt
    >>> float(mt.tensor([1.0, 3.0], chunk_size=1).std())
    1.0
    """
    return _moments(a, axis, dtype, _ddof(ddof, correction), keepdims, np.std, skipna=False, root=True)


def nanvar(a: Any, axis: Any = None, dtype: Any = None, ddof: float = 0, keepdims: bool = False, *,
        correction: float | None = None) -> Tensor:
    """Variance ignoring NaNs, as ``np.nanvar``; NaN (no warning) where too few values remain.

    >>> import mars.tensor as mt
    >>> float(mt.nanvar(mt.tensor([1.0, float("nan"), 3.0], chunk_size=2)))
    1.0
    """
    return _moments(a, axis, dtype, _ddof(ddof, correction), keepdims, np.nanvar, skipna=True, root=False)


def nanstd(a: Any, axis: Any = None, dtype: Any = None, ddof: float = 0, keepdims: bool = False, *,
        correction: float | None = None) -> Tensor:
    """Standard deviation ignoring NaNs, as ``np.nanstd``.

    >>> import mars.tensor as mt
    >>> float(mt.nanstd(mt.tensor([1.0, float("nan"), 3.0], chunk_size=2)))
    1.0
    """
    return _moments(a, axis, dtype, _ddof(ddof, correction), keepdims, np.nanstd, skipna=True, root=True)


# ----------------------------------------------------------------- argmin / argmax
class _ArgReduction(TensorReduction):
    """Index of the extreme value: partials ``(value, global index[, any non-NaN])``.

    ``flat`` reduces over all axes to a C-order flat index; ``shape`` and
    ``offset`` (the input's shape and the chunk's start) are set per chunk.
    """

    params = ("axis", "keepdims", "dtype", "flat", "skipna", "shape", "offset")
    needs_place = True
    extreme: Any = None  # the ufunc whose reduce gives the extreme (NaN propagates)
    arg: Any = None  # numpy's arg function for one chunk
    nan_fill: float = 0.0  # what a skipped NaN becomes (numpy's nanargmin uses +inf)

    def chunk_fn(self, x: np.ndarray) -> tuple:
        axis = None if self.flat else self.axis[0]
        if is_empty_along(x, self.axis):  # a chunk a filter left empty offers nothing to the tree
            empty = (empty_partial(x, self.axis, x.dtype), empty_partial(x, self.axis, np.intp))
            return empty if not self.skipna else (*empty, empty_partial(x, self.axis, bool))
        mask = _nan_mask(x, self.skipna)
        if mask is not True:  # numpy's nanargmin: NaN becomes +inf, then argmin
            x = np.where(mask, x, self.nan_fill)
        local = self.arg(x, axis=axis, keepdims=True)
        if self.flat:
            where = np.unravel_index(local, x.shape)
            value = x[where]
            index = np.ravel_multi_index(tuple(w + o for w, o in zip(where, self.offset)), self.shape)
        else:
            value = np.take_along_axis(x, local, axis=axis)
            index = local + self.offset[axis]
        index = asarray(index, dtype=np.intp)
        if not self.skipna:
            return value, index
        valid = np.ones_like(index, dtype=bool) if mask is True else np.any(mask, axis=axis, keepdims=True)
        return value, index, valid

    def combine_fn(self, p: tuple) -> tuple:
        value, index, axis = p[0], p[1], self.axis
        if axis and value.shape[axis[0]] == 0:  # every chunk of this group was empty
            return p
        # np.min/np.max are minimum/maximum.reduce (NaN propagates), and CuPy has them (not .reduce)
        best = (np.min if self.extreme is np.minimum else np.max)(value, axis=axis, keepdims=True)
        hit = value == best
        if value.dtype.kind in "fc":
            hit |= np.isnan(value) & np.isnan(best)
        index = np.min(np.where(hit, index, _BIG_INDEX), axis=axis, keepdims=True)
        if len(p) == 2:
            return best, index
        return best, index, np.any(p[2], axis=axis, keepdims=True)

    def agg_fn(self, p: tuple) -> np.ndarray:
        if self.axis and p[0].shape[self.axis[0]] == 0:
            name = "argmin" if self.extreme is np.minimum else "argmax"
            raise ValueError(f"attempt to get {name} of an empty sequence")
        merged = self.combine_fn(p)
        if len(merged) == 3 and not np.all(merged[2]):
            raise ValueError("All-NaN slice encountered")
        return merged[1]

    def chunk_op(self, chunk: Any, place: tuple[int, ...] | None, shape: tuple | None) -> _ArgReduction:
        return self.copy(shape=shape, offset=place)


class TensorArgMin(_ArgReduction):
    extreme = np.minimum
    arg = staticmethod(np.argmin)
    nan_fill = np.inf


class TensorArgMax(_ArgReduction):
    extreme = np.maximum
    arg = staticmethod(np.argmax)
    nan_fill = -np.inf


def _arg(cls: type, a: Any, axis: Any, keepdims: bool, skipna: bool) -> Tensor:
    t = astensor(a)
    axis = _scalar_axis(t, axis)
    if axis is not None and (not isinstance(axis, (int, np.integer)) or isinstance(axis, bool)):
        raise TypeError(f"'{type(axis).__name__}' object cannot be interpreted as an integer")
    name = "argmin" if cls is TensorArgMin else "argmax"
    _check_nonempty(t, axis, f"attempt to get {name} of an empty sequence")
    params = dict(flat=axis is None, skipna=skipna, shape=None, offset=None)
    return reduce_tensor(cls, t, axis, keepdims, np.dtype(np.intp), **params)


def argmin(a: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Index of the minimum (the first one; a NaN counts as the minimum), as ``np.argmin``.

    ``axis=None`` gives the index into the flattened tensor.

    >>> import mars.tensor as mt
    >>> int(mt.tensor([[3, 1], [1, 0]], chunk_size=1).argmin())
    3
    """
    return _arg(TensorArgMin, a, axis, keepdims, skipna=False)


def argmax(a: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Index of the maximum (the first one; a NaN counts as the maximum), as ``np.argmax``.

    >>> import mars.tensor as mt
    >>> mt.tensor([[3, 1], [1, 4]], chunk_size=1).argmax(axis=0).execute().fetch()
    array([0, 1])
    """
    return _arg(TensorArgMax, a, axis, keepdims, skipna=False)


def nanargmin(a: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Index of the minimum ignoring NaNs, as ``np.nanargmin``.

    An all-NaN slice raises ``ValueError("All-NaN slice encountered")`` when executed.

    >>> import mars.tensor as mt
    >>> int(mt.nanargmin(mt.tensor([float("nan"), 2.0, 1.0], chunk_size=2)))
    2
    """
    return _arg(TensorArgMin, a, axis, keepdims, skipna=True)


def nanargmax(a: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Index of the maximum ignoring NaNs, as ``np.nanargmax``.

    >>> import mars.tensor as mt
    >>> int(mt.nanargmax(mt.tensor([float("nan"), 2.0, 1.0], chunk_size=2)))
    1
    """
    return _arg(TensorArgMax, a, axis, keepdims, skipna=True)


# ----------------------------------------------------------------- counts and NaN-skipping monoids
class TensorCountNonzero(TensorReduction):
    def chunk_fn(self, x: np.ndarray) -> np.ndarray:
        return asarray(np.count_nonzero(x, axis=self.axis, keepdims=True), dtype=np.intp)

    def combine_fn(self, p: np.ndarray) -> np.ndarray:
        return np.sum(p, axis=self.axis, keepdims=True)


def count_nonzero(a: Any, axis: Any = None, *, keepdims: bool = False) -> Tensor:
    """Number of non-zero values over ``axis``, as ``np.count_nonzero`` (dtype intp).

    >>> import mars.tensor as mt
    >>> int(mt.count_nonzero(mt.tensor([0, 1, 2, 0], chunk_size=3)))
    2
    """
    t = astensor(a)
    return reduce_tensor(TensorCountNonzero, t, _scalar_axis(t, axis), keepdims, np.dtype(np.intp))


class TensorNanSum(_Monoid):
    func = staticmethod(np.nansum)


class TensorNanProd(_Monoid):
    func = staticmethod(np.nanprod)


class TensorNanMin(_Extreme):
    func = staticmethod(np.fmin.reduce)  # NaN only where all is NaN, with no warning


class TensorNanMax(_Extreme):
    func = staticmethod(np.fmax.reduce)


def nansum(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Tensor:
    """Sum treating NaNs as zero, as ``np.nansum``.

    >>> import mars.tensor as mt
    >>> float(mt.nansum(mt.tensor([1.0, float("nan"), 2.0], chunk_size=2)))
    3.0
    """
    t = astensor(a)
    return reduce_tensor(TensorNanSum, t, _scalar_axis(t, axis), keepdims, reduction_dtype(np.nansum, dtype, t.dtype))


def nanprod(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Tensor:
    """Product treating NaNs as one, as ``np.nanprod``.

    >>> import mars.tensor as mt
    >>> float(mt.nanprod(mt.tensor([2.0, float("nan"), 3.0], chunk_size=2)))
    6.0
    """
    t = astensor(a)
    return reduce_tensor(TensorNanProd, t, _scalar_axis(t, axis), keepdims, reduction_dtype(np.nanprod, dtype, t.dtype))


def _nan_extreme(cls: type, name: str, a: Any, axis: Any, keepdims: bool) -> Tensor:
    t = astensor(a)
    axis = _scalar_axis(t, axis)
    _check_nonempty(t, axis, f"zero-size array to reduction operation {name} which has no identity")
    return reduce_tensor(cls, t, axis, keepdims, t.dtype)


def nanmin(a: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Minimum ignoring NaNs, as ``np.nanmin``; NaN (no warning) for an all-NaN slice.

    >>> import mars.tensor as mt
    >>> float(mt.nanmin(mt.tensor([float("nan"), 2.0, 1.0], chunk_size=2)))
    1.0
    """
    return _nan_extreme(TensorNanMin, "fmin", a, axis, keepdims)


def nanmax(a: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Maximum ignoring NaNs, as ``np.nanmax``; NaN (no warning) for an all-NaN slice.

    >>> import mars.tensor as mt
    >>> float(mt.nanmax(mt.tensor([float("nan"), 2.0, 1.0], chunk_size=2)))
    2.0
    """
    return _nan_extreme(TensorNanMax, "fmax", a, axis, keepdims)


class TensorNanMean(TensorReduction):
    """Mean of the non-NaN values via ``(sum, count)`` partials."""

    params = ("axis", "keepdims", "dtype", "sum_dtype")

    def chunk_fn(self, x: np.ndarray) -> tuple:
        mask = _nan_mask(x, True)
        total = masked_sum(x, self.axis, self.sum_dtype, mask)
        return total, _counts(x, mask, self.axis)

    def combine_fn(self, p: tuple) -> tuple:
        return tuple(np.sum(part, axis=self.axis, keepdims=True) for part in p)

    def agg_fn(self, p: tuple) -> np.ndarray:
        total, count = self.combine_fn(p)
        with np.errstate(invalid="ignore", divide="ignore"):
            return total / count


def nanmean(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Tensor:
    """Mean ignoring NaNs, as ``np.nanmean``; NaN (no warning) for an all-NaN slice.

    >>> import mars.tensor as mt
    >>> float(mt.nanmean(mt.tensor([1.0, float("nan"), 3.0], chunk_size=2)))
    2.0
    """
    t = astensor(a)
    axis = _scalar_axis(t, axis)
    if t.dtype.kind not in "fc":  # numpy's nanmean of integers is the mean
        return mean(t, axis=axis, dtype=dtype, keepdims=keepdims)
    _check_nan_dtype(t, dtype)
    out_dtype = reduction_dtype(np.nanmean, dtype, t.dtype)
    # float16 sums in float32 so that long sums do not overflow
    sum_dtype = np.dtype(dtype) if dtype is not None else np.result_type(t.dtype, np.float32)
    return reduce_tensor(TensorNanMean, t, axis, keepdims, out_dtype, sum_dtype=sum_dtype)


# ----------------------------------------------------------------- ptp, average
class TensorPtp(TensorReduction):
    """Peak to peak via ``(min, max)`` partials."""

    def chunk_fn(self, x: np.ndarray) -> tuple:
        if is_empty_along(x, self.axis):  # a chunk a filter left empty offers nothing to the tree
            return empty_partial(x, self.axis, x.dtype), empty_partial(x, self.axis, x.dtype)
        return np.min(x, axis=self.axis, keepdims=True), np.max(x, axis=self.axis, keepdims=True)

    def combine_fn(self, p: tuple) -> tuple:
        if self.axis and p[0].shape[self.axis[0]] == 0:  # every chunk of this group was empty
            return p
        return np.min(p[0], axis=self.axis, keepdims=True), np.max(p[1], axis=self.axis, keepdims=True)

    def agg_fn(self, p: tuple) -> np.ndarray:
        low = np.min(p[0], axis=self.axis, keepdims=True)  # all empty: numpy's error
        return np.subtract(np.max(p[1], axis=self.axis, keepdims=True), low)


def ptp(a: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Range of values (maximum - minimum) over ``axis``, as ``np.ptp``.

    >>> import mars.tensor as mt
    >>> int(mt.ptp(mt.tensor([4, 9, 2], chunk_size=2)))
    7
    """
    t = astensor(a)
    axis = _scalar_axis(t, axis)
    _check_nonempty(t, axis, "zero-size array to reduction operation maximum which has no identity")
    with np.errstate(all="ignore"):
        out_dtype = np.asarray(np.ptp(np.ones((1,), dtype=t.dtype))).dtype  # numpy's TypeError for bool
    return reduce_tensor(TensorPtp, t, axis, keepdims, out_dtype)


class TensorNormalizeWeights(TensorElementwise):
    """``weighted sum / weight sum``, with numpy's error when a weight sum is zero."""

    def execute(self, total: np.ndarray, scale: np.ndarray) -> np.ndarray:
        if np.any(scale == 0):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        return np.true_divide(total, scale)


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *, keepdims: bool = False) -> Any:
    """Weighted average over ``axis``, as ``np.average`` (``returned``: also the weight sums).

    >>> import mars.tensor as mt
    >>> float(mt.average(mt.tensor([1.0, 2.0, 4.0], chunk_size=2), weights=[1, 1, 2]))
    2.75
    """
    t = astensor(a)
    if weights is None:
        avg = mean(t, axis=axis, keepdims=keepdims)
        if not returned:
            return avg
        scale = avg.dtype.type(t.size / avg.size) if avg.size else avg.dtype.type(0)
        return avg, full(avg.shape, scale, dtype=avg.dtype)
    w = weights if is_tensor(weights) else astensor(np.asarray(weights))
    if t.dtype.kind in "biu":
        dtype = np.result_type(t.dtype, w.dtype, np.float64)
    else:
        dtype = np.result_type(t.dtype, w.dtype)
    total, scale = _weighted_sums(t, tensor_data(w), axis, dtype, keepdims)
    avg = TensorNormalizeWeights().new_tensor([tensor_data(total), tensor_data(scale)], total.shape, dtype)
    if returned:
        return avg, apply_ufunc("where", True, scale, avg)
    return avg


def _weighted_sums(t: Tensor, w: Any, axis: Any, dtype: np.dtype, keepdims: bool) -> tuple[Tensor, Tensor]:
    if tuple(w.shape) == tuple(t.shape):
        total = _sum(apply_ufunc("multiply", t, w, dtype=dtype), axis=axis, keepdims=keepdims)
        return total, _sum(w, axis=axis, dtype=dtype, keepdims=keepdims)
    if axis is None:
        raise TypeError("Axis must be specified when shapes of a and weights differ.")
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    axes = tuple(normalize_axis(ax, t.ndim)[0] for ax in axes)  # in the order given, as numpy
    if tuple(w.shape) != tuple(t.shape[ax] for ax in axes):
        raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
    # the weighted axes go last, in the order of ``axis``, so the weights broadcast against them
    perm = [d for d in range(t.ndim) if d not in axes] + list(axes)
    moved = transpose(t, perm)
    last = tuple(range(t.ndim - len(axes), t.ndim))
    total = _sum(apply_ufunc("multiply", moved, w, dtype=dtype), axis=last, keepdims=keepdims)
    if keepdims:
        total = transpose(total, [int(i) for i in np.argsort(perm)])
    return total, _sum(w, dtype=dtype)


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None) -> Tensor:
    """Sum along a diagonal, as ``np.trace`` (for 2-D input; other dims via ``axis1``/``axis2`` swapped last).

    >>> import mars.tensor as mt
    >>> int(mt.trace(mt.eye(3, chunk_size=2, dtype=int)))
    3
    """
    t = astensor(a)
    if t.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    if t.ndim != 2 or (axis1 % 2, axis2 % 2) != (0, 1):
        raise NotImplementedError("trace is implemented for 2-D input with axis1=0, axis2=1")
    return _sum(diag(t, k=offset), dtype=dtype)
