"""``logsumexp``, ``softmax`` and ``log_softmax``: a tree reduction of ``(max, scaled sum)`` partials.

A chunk's partial is its maximum ``m`` and ``s = sum(b * exp(a - m))``;
two partials merge by rescaling each sum to the larger maximum, so no
``exp`` ever overflows, whatever the chunking. The result is
``log(s) + m``. An infinite or NaN maximum shifts by 0 instead, as scipy
does, so infinities and NaNs come out as scipy's. With weights ``b`` or
``return_sign``, ``a`` and ``b`` travel stacked on a leading axis of length
2, and so do the result and its sign. ``softmax`` is ``exp(x - lse)`` and
``log_softmax`` is ``x - lse`` with the reduced axes kept.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..arithmetic.core import apply_ufunc, broadcast_shapes, where_
from ..base.join import stack
from ..base.shape import broadcast_to
from ..core import Tensor
from ..datasource.core import astensor, ones_like
from ..rechunk import rechunk
from ..reduction.core import TensorReduction, normalize_axis, reduce_tensor
from .core import scipy_func

__all__ = ["log_softmax", "logsumexp", "softmax"]


def _shift(m: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(m), m, 0)


class TensorLogSumExp(TensorReduction):
    """``log(sum(b * exp(a)))`` over ``axis``; ``stacked``: the input is ``[a, b]`` on axis 0,
    the output ``[log|sum|, sign]`` on axis 0."""

    params = ("axis", "keepdims", "dtype", "stacked")

    def chunk_fn(self, x: np.ndarray) -> Any:
        a, b = (x[0], x[1]) if self.stacked else (x, None)
        if a.dtype.kind not in "fc":
            a = a.astype(self.dtype)
        axis = self._axes()
        real = a.real if a.dtype.kind == "c" else a
        if b is not None:
            real = np.where(b != 0, real, -np.inf)
        m = np.max(real, axis=axis, keepdims=True, initial=-np.inf)
        with np.errstate(all="ignore"):
            terms = np.exp(a - _shift(m))
            if b is not None:
                terms = np.where(b != 0, b * terms, 0)
            s = np.sum(terms, axis=axis, keepdims=True)
        return self._pack(m, s)

    def combine_fn(self, p: Any) -> Any:
        m, s = self._unpack(p)
        axis = self._axes()
        top = np.max(m, axis=axis, keepdims=True)
        with np.errstate(all="ignore"):
            factor = np.where(m == -np.inf, 0, np.exp(_shift(m) - _shift(top)))
            total = np.sum(s * factor, axis=axis, keepdims=True)
        return self._pack(top, total)

    def agg_fn(self, p: Any) -> np.ndarray:
        m, s = self._unpack(self.combine_fn(p))
        with np.errstate(all="ignore"):
            if not self.stacked:
                return np.log(s) + _shift(m)
            return np.stack([np.log(np.abs(s)) + _shift(m), np.sign(s)])

    def _axes(self) -> tuple[int, ...]:
        """The reduced axes of ``a`` itself (the stacked input has one more, leading, axis)."""
        return tuple(d - 1 for d in self.axis) if self.stacked else self.axis

    def _pack(self, m: np.ndarray, s: np.ndarray) -> Any:
        return np.stack([m, s]) if self.stacked else (m, s)

    def _unpack(self, p: Any) -> tuple:
        return (p[0], p[1]) if self.stacked else p


def _result_dtype(a: Any, b: Any) -> np.dtype:
    sample = np.ones((1,), dtype=a.dtype)
    weights = None if b is None else np.ones((1,), dtype=b.dtype)
    with np.errstate(all="ignore"):
        return np.asarray(scipy_func("special.logsumexp")(sample, b=weights)).dtype


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False, return_sign: bool = False) -> Any:
    """``log(sum(b * exp(a)))`` over ``axis`` without overflow, as ``scipy.special.logsumexp``.

    With ``return_sign``, a pair ``(log|sum|, sign)``.

    >>> import mars.tensor as mt
    >>> float(mt.special.logsumexp(mt.tensor([1000.0, 1000.0], chunk_size=1)).execute().fetch())
    1000.6931471805599
    """
    t = astensor(a)
    weights = None if b is None else astensor(b)
    dtype = _result_dtype(t, weights)
    if weights is None and not return_sign:
        return reduce_tensor(TensorLogSumExp, t, axis, keepdims, dtype, stacked=False)
    if dtype.kind == "c":
        raise NotImplementedError("logsumexp of complex input with b= or return_sign=True; use it without them")
    shape = broadcast_shapes(t.shape, weights.shape) if weights is not None else t.shape
    axes = normalize_axis(axis, len(shape))
    a_full = broadcast_to(t, shape).astype(dtype)
    b_full = broadcast_to(weights, shape).astype(dtype) if weights is not None else ones_like(a_full)
    both = rechunk(stack([a_full, b_full]), {0: 2})
    result = reduce_tensor(TensorLogSumExp, both, tuple(d + 1 for d in axes), keepdims, dtype, stacked=True)
    value, sign = result[0], result[1]
    if not return_sign:  # the log of a negative sum
        return where_(sign < 0, np.nan, value).astype(dtype)
    return value, sign


def _lse_kept(x: Tensor, axis: Any) -> Tensor:
    return logsumexp(x, axis=axis, keepdims=True)


def softmax(x: Any, axis: Any = None) -> Tensor:
    """``exp(x) / sum(exp(x))`` over ``axis``, as ``scipy.special.softmax``.

    >>> import mars.tensor as mt
    >>> mt.special.softmax(mt.tensor([0.0, 0.0], chunk_size=1)).execute().fetch()
    array([0.5, 0.5])
    """
    t = astensor(x)
    return apply_ufunc("exp", apply_ufunc("subtract", t, _lse_kept(t, axis)))


def log_softmax(x: Any, axis: Any = None) -> Tensor:
    """``log(softmax(x))`` computed stably over ``axis``, as ``scipy.special.log_softmax``.

    >>> import mars.tensor as mt
    >>> mt.special.log_softmax(mt.tensor([1.0, 1.0])).execute().fetch().round(4)
    array([-0.6931, -0.6931])
    """
    t = astensor(x)
    return apply_ufunc("subtract", t, _lse_kept(t, axis))

