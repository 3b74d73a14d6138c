"""``Lasso``: coordinate descent on the Gram matrix, computed in one distributed pass.

The objective is scikit-learn's, ``(1 / (2 W)) sum_i w_i (y_i - x_i b)^2 + alpha |b|_1``
(``W`` the total sample weight). With ``G = Xc^T Xc / W`` and ``q = Xc^T yc / W``
both small, the coordinate updates and the duality-gap stopping rule (gap at
most ``tol * |yc|^2 / W``) run here, as scikit-learn's Gram solver does.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ._gram import check_xy, gram_stats
from ._linear import LinearModelBase


def _dual_gap(gram: np.ndarray, q: np.ndarray, yy: float, w: np.ndarray, alpha: float, positive: bool) -> float:
    """The duality gap of the (scaled) lasso problem at ``w``."""
    gw = gram @ w
    r_norm2 = max(yy - 2 * w @ q + w @ gw, 0.0)
    xta = q - gw
    dual_norm = np.max(xta) if positive else np.max(np.abs(xta))
    if dual_norm > alpha:
        const = alpha / dual_norm
        gap = 0.5 * r_norm2 * (1 + const ** 2)
    else:
        const, gap = 1.0, r_norm2
    return float(gap + alpha * np.abs(w).sum() - const * (yy - w @ q))


def lasso_cd(gram: np.ndarray, q: np.ndarray, yy: float, alpha: float, max_iter: int, tol: float,
             positive: bool = False) -> tuple[np.ndarray, float, int]:
    """Cyclic coordinate descent for ``min 0.5 w^T G w - q^T w + 0.5 yy + alpha |w|_1``: (w, gap, n_iter).

    >>> w, gap, n_iter = lasso_cd(np.eye(2), np.array([1., -0.2]), 1.04, 0.1, 100, 1e-8)
    >>> w
    array([ 0.9, -0.1])
    """
    d = len(q)
    w = np.zeros(d)
    gw = np.zeros(d)
    diag = np.diag(gram).copy()
    tol_abs = tol * yy
    gap = np.inf
    for n_iter in range(1, max_iter + 1):
        w_max = d_w_max = 0.0
        for j in range(d):
            if diag[j] == 0:
                continue
            old = w[j]
            rho = q[j] - gw[j] + diag[j] * old
            new = np.sign(rho) * max(abs(rho) - alpha, 0.0) / diag[j]
            if positive and rho < 0:
                new = 0.0
            if new != old:
                gw += gram[:, j] * (new - old)
                w[j] = new
            d_w_max = max(d_w_max, abs(new - old))
            w_max = max(w_max, abs(new))
        if w_max == 0 or d_w_max / w_max <= tol or n_iter == max_iter:
            gap = _dual_gap(gram, q, yy, w, alpha, positive)
            if gap <= tol_abs:
                return w, gap, n_iter
    return w, gap, max_iter


class Lasso(LinearModelBase):
    """Linear model with an L1 penalty, scikit-learn's ``Lasso`` API (coordinate descent on the Gram matrix).

    >>> import numpy as np
    >>> X = np.array([[0., 0.], [1., 1.], [2., 2.]])
    >>> Lasso(alpha=0.1).fit(X, np.array([0., 1., 2.])).coef_
    array([0.85, 0.  ])
    """

    def __init__(self, alpha: float = 1.0, *, fit_intercept: bool = True, precompute: Any = False,
                 copy_X: bool = True, max_iter: int = 1000, tol: float = 1e-4, warm_start: bool = False,
                 positive: bool = False, random_state: Any = None, selection: str = "cyclic"):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.precompute = precompute
        self.copy_X = copy_X
        self.max_iter = max_iter
        self.tol = tol
        self.warm_start = warm_start
        self.positive = positive
        self.random_state = random_state
        self.selection = selection

    def fit(self, X: Any, y: Any, sample_weight: Any = None, check_input: bool = True) -> Lasso:
        """Fit by coordinate descent on the Gram matrix (one distributed pass for the Gram matrix)."""
        if not isinstance(self.alpha, numbers.Real) or self.alpha < 0:
            raise ValueError(f"alpha must be a non-negative number, got {self.alpha!r}")
        if self.selection != "cyclic":
            raise NotImplementedError(f"selection={self.selection!r} is not implemented; use 'cyclic'")
        if self.warm_start:
            raise NotImplementedError("warm_start=True is not implemented")
        x, yt, sw = check_xy(self, X, y, sample_weight)
        stats = gram_stats(x, yt, sw)
        center = bool(self.fit_intercept)
        gram, xy, yy = (m / stats.weight for m in (stats.xx(center), stats.xy(center), stats.yy(center)))
        coef = np.zeros_like(xy)
        gaps, iters = [], []
        for t in range(xy.shape[1]):
            coef[:, t], gap, n_iter = lasso_cd(gram, xy[:, t], float(yy[t, t]), float(self.alpha), self.max_iter,
                                               float(self.tol), bool(self.positive))
            gaps.append(gap)
            iters.append(n_iter)
            if gap > self.tol * yy[t, t]:
                warnings.warn(f"Objective did not converge. You might want to increase the number of iterations. "
                              f"Duality gap: {gap:.3e}, tolerance: {self.tol * yy[t, t]:.3e}", ConvergenceWarning,
                              stacklevel=2)
        self._set_solution(stats, coef, yt.ndim == 1)
        single = yt.ndim == 1
        self.dual_gap_ = gaps[0] * stats.weight if single else np.array(gaps) * stats.weight
        self.n_iter_ = iters[0] if single else np.array(iters)
        return self

    @property
    def sparse_coef_(self) -> Any:
        import scipy.sparse

        return scipy.sparse.csr_matrix(np.atleast_2d(self.coef_))
