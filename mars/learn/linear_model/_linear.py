"""``LinearRegression`` and ``Ridge``: the normal equations from one distributed Gram pass.

The centred Gram matrix ``Xc^T Xc`` and ``Xc^T yc`` are small (features
squared); they are solved here, by Cholesky. ``LinearRegression`` falls
back to a TSQR least squares over the chunks (``mt.linalg.lstsq``) when the
Gram matrix is too ill-conditioned for the normal equations to keep
scikit-learn's precision.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, MultiOutputMixin, RegressorMixin

from .. import base as learn_base
from .._rowops import row_map
from ._gram import GramStats, check_xy, gram_stats

#: above this condition number of the Gram matrix, LinearRegression solves by TSQR instead
_GRAM_COND_LIMIT = 1e8


def _linear_chunk(start: int, x: np.ndarray, coef: np.ndarray, intercept: np.ndarray, squeeze: bool) -> np.ndarray:
    out = x @ coef.T + intercept
    return out[:, 0] if squeeze else out


class LinearModelBase(MultiOutputMixin, RegressorMixin, BaseEstimator):
    """``predict`` (a lazy tensor) and ``score`` (R^2) for fitted ``coef_``/``intercept_``."""

    def _set_solution(self, stats: GramStats, coef: np.ndarray, single: bool) -> None:
        """``coef`` is (n_features, n_targets); sets coef_ and intercept_ in scikit-learn's shapes."""
        d = stats.n_features
        intercept = stats.mean[d:] - stats.mean[:d] @ coef if self.fit_intercept else np.zeros(coef.shape[1])
        self.coef_ = coef[:, 0].copy() if single else np.ascontiguousarray(coef.T)
        # scikit-learn: a float 0.0 without an intercept, whatever the number of targets
        self.intercept_ = float(intercept[0]) if single or not self.fit_intercept else intercept

    def predict(self, X: Any) -> Any:
        """``X @ coef_.T + intercept_``, a lazy tensor."""
        learn_base.check_fitted(self)
        x = learn_base.validate_data(self, X, reset=False, dtype=np.float64)
        coef = np.atleast_2d(self.coef_)
        intercept = np.atleast_1d(np.asarray(self.intercept_, dtype=np.float64))
        squeeze = np.ndim(self.coef_) == 1
        tail = () if squeeze else (coef.shape[0],)
        return row_map(_linear_chunk, x, outs=[(tail, np.float64)], args=(coef, intercept, squeeze))[0]

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """The coefficient of determination R^2 of the prediction (computed on the chunks)."""
        y_pred = self.predict(X)
        yt = learn_base.as_tensor(y, dtype=np.float64, ensure_2d=False, name="y")
        w = None if sample_weight is None else learn_base.as_tensor(sample_weight, dtype=np.float64)
        sq = (yt - y_pred) ** 2 if yt.ndim == y_pred.ndim else (yt.reshape(y_pred.shape) - y_pred) ** 2
        yy = yt.reshape(y_pred.shape)
        if w is None:
            num, mean = sq.sum(axis=0), yy.mean(axis=0)
            den = ((yy - mean) ** 2).sum(axis=0)
        else:
            ww = w if yy.ndim == 1 else w[:, None]
            num, mean = (sq * ww).sum(axis=0), (yy * ww).sum(axis=0) / w.sum()
            den = (((yy - mean) ** 2) * ww).sum(axis=0)
        num, den = (np.atleast_1d(v) for v in learn_base.fetch_all(num, den))
        r2 = np.where(den != 0, 1 - num / np.where(den != 0, den, 1), np.where(num == 0, 1.0, 0.0))
        return float(np.mean(r2))


class LinearRegression(LinearModelBase):
    """Ordinary least squares on mars tensors, scikit-learn's ``LinearRegression`` API.

    >>> import numpy as np
    >>> X = np.array([[1., 1.], [1., 2.], [2., 2.], [2., 3.]])
    >>> reg = LinearRegression().fit(X, X @ np.array([1., 2.]) + 3)
    >>> np.round(reg.coef_, 6), round(reg.intercept_, 6)
    (array([1., 2.]), 3.0)
    """

    def __init__(self, *, fit_intercept: bool = True, copy_X: bool = True, tol: float = 1e-6, n_jobs: Any = None,
                 positive: bool = False):
        self.fit_intercept = fit_intercept
        self.copy_X = copy_X
        self.tol = tol
        self.n_jobs = n_jobs
        self.positive = positive

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> LinearRegression:
        """Fit by the normal equations (one pass), or TSQR when they are ill-conditioned."""
        if self.positive:
            raise NotImplementedError("positive=True is not implemented; use scikit-learn's LinearRegression")
        x, yt, sw = check_xy(self, X, y, sample_weight)
        stats = gram_stats(x, yt, sw)
        center = bool(self.fit_intercept)
        gram, xy = stats.xx(center), stats.xy(center)
        eig = np.clip(np.linalg.eigvalsh(gram)[::-1], 0, None)
        self.singular_ = np.sqrt(eig)
        tiny = eig[0] * max(gram.shape) * np.finfo(np.float64).eps if eig.size else 0
        self.rank_ = int((eig > tiny).sum())
        if eig.size and eig[-1] > 0 and eig[0] / eig[-1] < _GRAM_COND_LIMIT:
            coef = scipy.linalg.solve(gram, xy, assume_a="pos")
        else:
            coef = _tsqr_lstsq(x, yt, sw, stats, center)
        self._set_solution(stats, coef, yt.ndim == 1)
        return self


def _tsqr_lstsq(x: Any, y: Any, sw: Any, stats: GramStats, center: bool) -> np.ndarray:
    """Least squares of the (centred, weighted) data by TSQR over the chunks: (n_features, n_targets)."""
    from ... import tensor as mt

    d = stats.n_features
    y2 = y.reshape(-1, 1) if y.ndim == 1 else y
    xc, yc = (x - stats.mean[:d], y2 - stats.mean[d:]) if center else (x, y2)
    if sw is not None:
        root = mt.sqrt(sw)[:, None]
        xc, yc = xc * root, yc * root
    solution = mt.linalg.lstsq(xc, yc, rcond=None)[0]
    return np.asarray(learn_base.fetch(solution)).reshape(d, -1)


class Ridge(LinearModelBase):
    """Linear least squares with an L2 penalty, scikit-learn's ``Ridge`` API (the Cholesky solver).

    >>> import numpy as np
    >>> X = np.array([[0., 0.], [0., 0.], [1., 1.]])
    >>> Ridge(alpha=1.0).fit(X, np.array([0., .1, 1.])).coef_
    array([0.27142857, 0.27142857])
    """

    def __init__(self, alpha: Any = 1.0, *, fit_intercept: bool = True, copy_X: bool = True, max_iter: Any = None,
                 tol: float = 1e-4, solver: str = "auto", positive: bool = False, random_state: Any = None):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.copy_X = copy_X
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.positive = positive
        self.random_state = random_state

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> Ridge:
        """Solve ``(Xc^T Xc + alpha I) w = Xc^T yc`` by Cholesky, from one distributed Gram pass."""
        if self.solver not in ("auto", "cholesky"):
            raise NotImplementedError(f"solver={self.solver!r} is not implemented; use 'auto' or 'cholesky'")
        if self.positive:
            raise NotImplementedError("positive=True is not implemented; use scikit-learn's Ridge")
        x, yt, sw = check_xy(self, X, y, sample_weight)
        stats = gram_stats(x, yt, sw)
        n_targets = 1 if yt.ndim == 1 else int(yt.shape[1])
        alphas = _alphas(self.alpha, n_targets)
        center = bool(self.fit_intercept)
        gram, xy = stats.xx(center), stats.xy(center)
        coef = np.empty_like(xy)
        same = np.all(alphas == alphas[0])
        for t in ([slice(None)] if same else range(n_targets)):
            a = alphas[0] if same else alphas[t]
            system = gram + a * np.eye(len(gram))
            try:
                coef[:, t] = scipy.linalg.solve(system, xy[:, t], assume_a="pos")
            except np.linalg.LinAlgError:  # singular (alpha 0 on rank-deficient data): least squares, as sklearn
                coef[:, t] = scipy.linalg.lstsq(system, xy[:, t])[0]
        self._set_solution(stats, coef, yt.ndim == 1)
        self.n_iter_ = None
        self.solver_ = "cholesky"
        return self


def _alphas(alpha: Any, n_targets: int) -> np.ndarray:
    alphas = np.atleast_1d(np.asarray(alpha, dtype=np.float64))
    if alphas.ndim != 1 or (alphas.size not in (1, n_targets)):
        raise ValueError(f"Number of targets and number of penalties do not correspond: {alphas.size} != {n_targets}")
    if (alphas < 0).any() or not np.isfinite(alphas).all():
        raise ValueError(f"alpha must be non-negative and finite, got {alpha!r}")
    if isinstance(alpha, numbers.Number) or alphas.size == 1:
        return np.full(n_targets, alphas[0])
    return alphas
