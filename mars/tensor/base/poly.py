"""Polynomials over tensors: ``polyval`` (Horner's rule, elementwise over ``x``) and
``polyfit`` (least squares on the scaled Vandermonde matrix).

The coefficient functions (``polyadd``, ``roots``, ...) work on a few numbers
and are left out (see :mod:`mars.tensor.leftout`). ``polyfit``'s fit is
``mt.linalg.lstsq``, which runs by TSQR on a tall chunked matrix: one pass
over the row blocks of ``vander(x)``.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..arithmetic.core import apply_ufunc
from ..core import Tensor, is_tensor
from ..datasource.core import astensor, zeros_like
from ..linalg.products import dot, outer
from ..linalg.solve import inv, lstsq
from ..reduction.basic import sum as sum_
from .numeric import vander

__all__ = ["polyfit", "polyval"]


def polyval(p: Any, x: Any) -> Tensor:
    """The polynomial with coefficients ``p`` (highest power first) at each point of ``x``, by
    Horner's rule, as ``np.polyval``.

    >>> import mars.tensor as mt
    >>> mt.polyval([3, 0, 1], mt.tensor([0, 1, 2], chunk_size=2)).execute().fetch()
    array([ 1,  4, 13])
    """
    coefficients = p if is_tensor(p) else np.asarray(p)
    t = astensor(x)
    y = zeros_like(t)
    for c in coefficients:
        y = y * t + c
    return y


def _fit_inputs(x: Any, y: Any, deg: Any) -> tuple[Tensor, Tensor, int]:
    order = operator.index(deg) + 1
    tx, ty = astensor(x) + 0.0, astensor(y) + 0.0
    if order < 1:
        raise ValueError(f"expected deg >= 0, got {deg}")
    if tx.ndim != 1:
        raise TypeError(f"expected 1D vector for x, got {tx.ndim}-d")
    if tx.shape[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if ty.ndim < 1 or ty.ndim > 2:
        raise TypeError(f"expected 1D or 2D array for y, got {ty.ndim}-d")
    if tx.shape[0] != ty.shape[0]:
        raise TypeError(f"expected x and y to have same length, got {tx.shape[0]} and {ty.shape[0]}")
    return tx, ty, order


def _weighted(lhs: Tensor, rhs: Tensor, w: Any) -> tuple[Tensor, Tensor]:
    tw = astensor(w) + 0.0
    if tw.ndim != 1:
        raise TypeError(f"expected a 1-d array for weights, got {tw.ndim}-d")
    if tw.shape[0] != rhs.shape[0]:
        raise TypeError(f"expected w and y to have the same length, got {tw.shape[0]} and {rhs.shape[0]}")
    column = tw[:, None]
    return lhs * column, rhs * (column if rhs.ndim == 2 else tw)


def polyfit(x: Any, y: Any, deg: int, rcond: Any = None, full: bool = False, w: Any = None,
            cov: Any = False) -> Any:
    """The least-squares polynomial of degree ``deg`` through the points ``(x, y)`` (``y`` 2-d:
    one fit per column), highest power first, as ``np.polyfit``: with ``full`` also
    ``(residuals, rank, singular_values, rcond)``, with ``cov`` also the coefficients' covariance.

    numpy warns (``RankWarning``) when the fit is rank deficient; here the rank is known only
    when computed: ask for ``full=True`` and check it.

    >>> import mars.tensor as mt
    >>> x = mt.tensor([0.0, 1.0, 2.0, 3.0], chunk_size=2)
    >>> mt.polyfit(x, 2 * x + 1, 1).execute().fetch().round(6)
    array([2., 1.])
    """
    tx, ty, order = _fit_inputs(x, y, deg)
    n = tx.shape[0]
    if rcond is None:
        rcond = n * np.finfo(tx.dtype).eps
    lhs, rhs = vander(tx, order), ty
    if w is not None:
        lhs, rhs = _weighted(lhs, rhs, w)
    scale = apply_ufunc("sqrt", sum_(lhs * lhs, axis=0))
    lhs = lhs / scale
    c, resids, rank, s = lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    if full:
        return c, resids, rank, s, rcond
    if not cov:
        return c
    base = inv(dot(lhs.T, lhs)) / outer(scale, scale)
    if cov == "unscaled":
        fac: Any = 1
    else:
        if n <= order:
            raise ValueError("the number of data points must exceed order to scale the covariance matrix")
        fac = resids / (n - order)
    return c, (base * fac if ty.ndim == 1 else base[:, :, None] * fac)
