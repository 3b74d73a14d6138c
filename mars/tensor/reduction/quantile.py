"""``quantile``, ``percentile``, ``median`` (linear interpolation), built on ``sort``.

The positions to read are known from the axis length, so after sorting the
result is two index lookups and numpy's interpolation formula, elementwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..arithmetic import ufuncs as uf
from ..arithmetic.core import where_
from ..base.shape import expand_dims, moveaxis, ravel, reshape
from ..base.sort import sort
from ..core import Tensor
from ..datasource.core import astensor
from ..indexing.along import take_along_axis
from ..indexing.getitem import take
from .core import normalize_axis

__all__ = ["quantile", "percentile", "median", "nanquantile", "nanpercentile", "nanmedian"]


def _lerp(a: Tensor, b: Tensor, gamma: np.ndarray) -> Tensor:
    """numpy's interpolation: from ``a`` below the middle, from ``b`` above it (symmetric rounding)."""
    diff = b - a
    return where_(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)


def _quantile(t: Tensor, q: Any, axis: Any, keepdims: bool) -> Tensor:
    qa = np.asarray(q, dtype=np.float64)
    dtype = np.quantile(np.ones(1, dtype=t.dtype), q).dtype  # q as given: a Python float is weakly typed
    whole = axis is None
    src = ravel(t) if whole else t
    (ax,) = (0,) if whole else normalize_axis(axis, t.ndim)
    n = src.shape[ax]
    if isinstance(n, float):
        raise NotImplementedError("quantile of a tensor whose length is known only after running: execute it first")
    if n == 0:
        raise IndexError("cannot do a non-empty take from an empty axes.")
    s = sort(src, axis=ax).astype(dtype, copy=False)
    virtual = qa.ravel() * (n - 1)
    lo = np.floor(virtual).astype(np.intp)
    hi = np.minimum(lo + 1, n - 1)
    shape = [1] * s.ndim
    shape[ax] = len(virtual)
    gamma = (virtual - lo).astype(dtype).reshape(shape)
    result = _lerp(take(s, lo, axis=ax), take(s, hi, axis=ax), gamma)
    if dtype.kind in "fc":  # a NaN anywhere makes the quantile NaN, as numpy
        result = where_(uf.isnan(take(s, [n - 1], axis=ax)), np.array(np.nan, dtype=dtype), result)
    result = moveaxis(result, ax, 0)
    result = reshape(result, qa.shape + tuple(result.shape[1:]))
    if keepdims:
        for d in (range(t.ndim) if whole else [ax]):
            result = expand_dims(result, qa.ndim + d)
    return result.astype(dtype, copy=False)


def _check_args(name: str, q: Any, axis: Any, out: Any, method: str) -> None:
    """numpy's checks of a quantile call, and what this quantile does not offer, named."""
    if method != "linear":
        raise NotImplementedError(f"{name} method {method!r} is not supported; only 'linear'")
    if out is not None:
        raise NotImplementedError(f"{name}(out=...) is not supported; assign the result instead")
    qa = np.asarray(q, dtype=np.float64)
    if np.any((qa < 0) | (qa > 1)):
        raise ValueError("Quantiles must be in the range [0, 1]")
    if isinstance(axis, (tuple, list)):
        raise NotImplementedError(f"{name} over several axes is not supported; pass one axis or None")


def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False) -> Tensor:
    """The ``q``-th quantiles along ``axis`` (``method='linear'``), as ``np.quantile``.

    >>> import mars.tensor as mt
    >>> float(mt.quantile(mt.arange(10, chunk_size=3), 0.25))
    2.25
    """
    _check_args("quantile", q, axis, out, method)
    return _quantile(astensor(a), q, axis, keepdims)


def _nanquantile(t: Tensor, q: Any, axis: Any, keepdims: bool) -> Tensor:
    """Per lane, the linear quantile of the values that are not NaN (NaN sorts last, so they lead)."""
    qa = np.asarray(q, dtype=np.float64)
    dtype = np.nanquantile(np.ones(1, dtype=t.dtype), q).dtype
    whole = axis is None
    src = ravel(t) if whole else t
    (ax,) = (0,) if whole else normalize_axis(axis, t.ndim)
    n = src.shape[ax]
    if isinstance(n, float):
        raise NotImplementedError("nanquantile of a tensor whose length is known only after running: execute it first")
    if n == 0:
        raise IndexError("cannot do a non-empty take from an empty axes.")
    s = sort(src, axis=ax).astype(dtype, copy=False)
    valid = uf.logical_not(uf.isnan(src)).sum(axis=ax, keepdims=True)
    shape = [1] * s.ndim
    shape[ax] = qa.size
    virtual = qa.reshape(shape) * (valid - 1)
    lo = uf.floor(virtual)
    gamma = (virtual - lo).astype(dtype)
    lo = uf.maximum(lo, 0).astype(np.intp)
    hi = uf.minimum(lo + 1, uf.maximum(valid - 1, 0))
    result = _lerp(take_along_axis(s, lo, axis=ax), take_along_axis(s, hi, axis=ax), gamma)
    result = where_(valid == 0, np.array(np.nan, dtype=dtype), result)  # an all-NaN lane gives NaN, as numpy
    result = moveaxis(result, ax, 0)
    result = reshape(result, qa.shape + tuple(result.shape[1:]))
    if keepdims:
        for d in (range(t.ndim) if whole else [ax]):
            result = expand_dims(result, qa.ndim + d)
    return result.astype(dtype, copy=False)


def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False) -> Tensor:
    """The ``q``-th quantiles along ``axis`` ignoring NaNs (``method='linear'``), as ``np.nanquantile``.

    Each lane's valid count sets its positions, so the sorted axis is read whole per chunk.

    >>> import mars.tensor as mt
    >>> float(mt.nanquantile(mt.tensor([1.0, mt.nan, 3.0, 2.0]), 0.5))
    2.0
    """
    _check_args("nanquantile", q, axis, out, method)
    t = astensor(a)
    if t.dtype.kind not in "fc":
        return quantile(t, q, axis=axis, keepdims=keepdims)
    return _nanquantile(t, q, axis, keepdims)


def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
                  method: str = "linear", keepdims: bool = False) -> Tensor:
    """The ``q``-th percentiles (0..100) ignoring NaNs, as ``np.nanpercentile``.

    >>> import mars.tensor as mt
    >>> float(mt.nanpercentile(mt.tensor([1.0, mt.nan, 3.0]), 50))
    2.0
    """
    qa = np.asarray(q, dtype=np.float64)
    if np.any((qa < 0) | (qa > 100)):
        raise ValueError("Percentiles must be in the range [0, 100]")
    q01 = q / 100 if isinstance(q, (int, float)) and not isinstance(q, bool) else qa / 100
    return nanquantile(a, q01, axis=axis, out=out, method=method, keepdims=keepdims)


def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Tensor:
    """The median along ``axis`` ignoring NaNs, as ``np.nanmedian``.

    >>> import mars.tensor as mt
    >>> float(mt.nanmedian(mt.tensor([4.0, mt.nan, 1.0])))
    2.5
    """
    return nanquantile(a, 0.5, axis=axis, out=out, keepdims=keepdims)


def percentile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False) -> Tensor:
    """The ``q``-th percentiles (0..100), as ``np.percentile``."""
    qa = np.asarray(q, dtype=np.float64)
    if np.any((qa < 0) | (qa > 100)):
        raise ValueError("Percentiles must be in the range [0, 100]")
    q01 = q / 100 if isinstance(q, (int, float)) and not isinstance(q, bool) else qa / 100
    return quantile(a, q01, axis=axis, out=out, method=method, keepdims=keepdims)


def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False) -> Tensor:
    """The median along ``axis``, as ``np.median``."""
    return quantile(a, 0.5, axis=axis, out=out, keepdims=keepdims)
