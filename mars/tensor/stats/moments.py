"""Descriptive statistics over an axis: ``zscore``, ``skew``, ``kurtosis``, ``gmean``, ``hmean``,
``describe``, ``entropy``; each a short lazy expression over tree reductions (scipy's formulas)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..arithmetic.core import apply_ufunc, where_
from ..base.shape import broadcast_arrays, ravel
from ..core import Tensor
from ..datasource.core import astensor
from ..reduction.basic import max as max_
from ..reduction.basic import mean
from ..reduction.basic import min as min_
from ..reduction.basic import sum as sum_
from ..reduction.core import normalize_axis
from ..reduction.stats import var
from ..special.core import apply_scipy
from .results import DescribeResult
from .ttest import check_nan_policy

__all__ = ["describe", "entropy", "gmean", "hmean", "kurtosis", "skew", "zmap", "zscore"]


def _floating(a: Any) -> Tensor:
    """``a`` as a tensor of a floating dtype (integers become float64), as scipy promotes."""
    t = astensor(a)
    return t if t.dtype.kind in "fc" else t.astype(np.float64)


def _along(a: Any, axis: Any) -> tuple[Tensor, int]:
    t = astensor(a)
    if axis is None:
        return ravel(t), 0
    (axis,) = normalize_axis(axis, t.ndim)
    return t, axis


def zmap(scores: Any, compare: Any, axis: Any = 0, ddof: int = 0, nan_policy: str = "propagate") -> Tensor:
    """``(scores - mean(compare)) / std(compare)`` along ``axis``, as ``scipy.stats.zmap``.

    >>> import mars.tensor as mt
    >>> mt.stats.zmap(mt.tensor([1.0, 3.0]), mt.tensor([1.0, 3.0])).fetch()
    array([-1.,  1.])
    """
    check_nan_policy(nan_policy)
    scores, compare = _floating(scores), _floating(compare)
    mn = mean(compare, axis=axis, keepdims=True)
    std = var(compare, axis=axis, ddof=ddof, keepdims=True) ** 0.5
    return (scores - mn) / std


def zscore(a: Any, axis: Any = 0, ddof: int = 0, nan_policy: str = "propagate") -> Tensor:
    """Standard scores of ``a`` along ``axis`` (NaN for a constant slice), as ``scipy.stats.zscore``.

    >>> import mars.tensor as mt
    >>> mt.stats.zscore(mt.tensor([1.0, 2.0, 3.0], chunk_size=2)).fetch().round(4)
    array([-1.2247,  0.    ,  1.2247])
    """
    check_nan_policy(nan_policy)
    t = _floating(a)
    mn = mean(t, axis=axis, keepdims=True)
    std = var(t, axis=axis, ddof=ddof, keepdims=True) ** 0.5
    z = (t - mn) / std
    eps = np.finfo(z.dtype).eps
    return where_(std <= apply_ufunc("absolute", eps * mn), np.nan, z).astype(z.dtype)


def _central_moments(a: Tensor, axis: int, orders: tuple[int, ...]) -> tuple[Tensor, list[Tensor]]:
    m = mean(a, axis=axis, keepdims=True)
    dev = a - m
    return mean(a, axis=axis), [mean(dev ** k, axis=axis) for k in orders]


def skew(a: Any, axis: Any = 0, bias: bool = True, nan_policy: str = "propagate") -> Tensor:
    """Sample skewness along ``axis`` (``bias=False``: the adjusted Fisher-Pearson one), as ``scipy.stats.skew``.

    >>> import mars.tensor as mt
    >>> round(float(mt.stats.skew(mt.tensor([1.0, 2.0, 10.0], chunk_size=2)).fetch()), 6)
    0.674555
    """
    check_nan_policy(nan_policy)
    t, axis = _along(_floating(a), axis)
    n = t.shape[axis]
    mn, (m2, m3) = _central_moments(t, axis, (2, 3))
    zero = m2 <= (np.finfo(m2.dtype).eps * mn) ** 2
    vals = where_(zero, np.nan, m3 / m2 ** 1.5)
    if not bias and n > 2:
        nval = ((n - 1.0) * n) ** 0.5 / (n - 2.0) * m3 / m2 ** 1.5
        vals = where_(zero, vals, nval)
    return vals.astype(m2.dtype)


def kurtosis(a: Any, axis: Any = 0, fisher: bool = True, bias: bool = True, nan_policy: str = "propagate") -> Tensor:
    """Sample kurtosis along ``axis`` (Fisher's: normal is 0), as ``scipy.stats.kurtosis``.

    >>> import mars.tensor as mt
    >>> float(mt.stats.kurtosis(mt.tensor([1.0, 2.0, 3.0, 4.0], chunk_size=3)).fetch())
    -1.36
    """
    check_nan_policy(nan_policy)
    t, axis = _along(_floating(a), axis)
    n = t.shape[axis]
    mn, (m2, m4) = _central_moments(t, axis, (2, 4))
    zero = m2 <= (np.finfo(m2.dtype).eps * mn) ** 2
    vals = where_(zero, np.nan, m4 / m2 ** 2.0)
    if not bias and n > 3:
        nval = 1.0 / (n - 2) / (n - 3) * ((n ** 2 - 1.0) * m4 / m2 ** 2.0 - 3 * (n - 1) ** 2.0)
        vals = where_(zero, vals, nval + 3.0)
    vals = vals - 3 if fisher else vals
    return vals.astype(m2.dtype)


def _weighted_mean(x: Tensor, axis: Any, weights: Any) -> Tensor:
    if weights is None:
        return mean(x, axis=axis)
    w = astensor(weights)
    if axis is None:
        x, w = ravel(x), ravel(w)
    return sum_(w * x, axis=axis) / sum_(w, axis=axis)


def gmean(a: Any, axis: Any = 0, dtype: Any = None, weights: Any = None) -> Tensor:
    """Weighted geometric mean along ``axis``, ``exp(mean(log(a)))``, as ``scipy.stats.gmean``.

    >>> import mars.tensor as mt
    >>> float(mt.stats.gmean(mt.tensor([1.0, 4.0])).fetch())
    2.0
    """
    t = astensor(a) if dtype is None else astensor(a).astype(dtype)
    w = None if weights is None else (astensor(weights) if dtype is None else astensor(weights).astype(dtype))
    return apply_ufunc("exp", _weighted_mean(apply_ufunc("log", t), axis, w))


def hmean(a: Any, axis: Any = 0, dtype: Any = None, *, weights: Any = None) -> Tensor:
    """Weighted harmonic mean along ``axis`` (NaN where an element is negative), as ``scipy.stats.hmean``.

    >>> import mars.tensor as mt
    >>> float(mt.stats.hmean(mt.tensor([1.0, 4.0])).fetch())
    1.6
    """
    t = astensor(a) if dtype is None else astensor(a).astype(dtype)
    w = None if weights is None else (astensor(weights) if dtype is None else astensor(weights).astype(dtype))
    t = _floating(t)
    t = where_(t < 0, np.nan, t).astype(t.dtype)
    return 1.0 / _weighted_mean(1.0 / t, axis, w)


def describe(a: Any, axis: Any = 0, ddof: int = 1, bias: bool = True, nan_policy: str = "propagate") -> DescribeResult:
    """Size, (min, max), mean, variance, skewness and kurtosis along ``axis``, as ``scipy.stats.describe``.

    >>> import mars.tensor as mt
    >>> res = mt.stats.describe(mt.tensor([1.0, 2.0, 3.0], chunk_size=2)).fetch()
    >>> int(res.nobs), float(res.mean), float(res.variance)
    (3, 2.0, 1.0)
    """
    check_nan_policy(nan_policy)
    t, axis = _along(astensor(a), axis)
    n = t.shape[axis]
    if n == 0:
        raise ValueError("The input must not be empty.")
    f = _floating(t)
    return DescribeResult(n, (min_(t, axis=axis), max_(t, axis=axis)), mean(t, axis=axis),
                          var(f, axis=axis, ddof=ddof), skew(f, axis, bias=bias), kurtosis(f, axis, bias=bias))


def entropy(pk: Any, qk: Any = None, base: float | None = None, axis: int = 0) -> Tensor:
    """Shannon entropy of ``pk`` (relative entropy to ``qk`` if given) along ``axis``, as ``scipy.stats.entropy``.

    >>> import mars.tensor as mt
    >>> float(mt.stats.entropy(mt.tensor([1, 1]), base=2).fetch())
    1.0
    """
    if base is not None and base <= 0:
        raise ValueError("`base` must be a positive number or `None`.")
    p = astensor(pk)
    p = 1.0 * p / sum_(p, axis=axis, keepdims=True)
    if qk is None:
        vec = apply_scipy("special.entr", p)
    else:
        p, q = broadcast_arrays(p, astensor(qk))
        q = 1.0 * q / sum_(q, axis=axis, keepdims=True)
        vec = apply_scipy("special.rel_entr", p, q)
    s = sum_(vec, axis=axis)
    return s / math.log(base) if base is not None else s

