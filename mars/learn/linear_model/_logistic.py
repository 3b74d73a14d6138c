"""``LogisticRegression``: L-BFGS (scipy) where each loss-and-gradient evaluation is one distributed pass.

The objective is scikit-learn's: the mean (sample-weighted) log loss plus
``|coef|^2 / (2 C W)``, binomial for two classes, multinomial (one row of
coefficients per class) for more; scipy's L-BFGS-B runs with scikit-learn's
options, so both take the same path to the same optimum.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np
import scipy.optimize
from scipy.special import expit, logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.class_weight import compute_class_weight
from threadpoolctl import threadpool_limits

from .. import base as learn_base
from .._rowops import row_map, row_reduce
from ..base import as_tensor, check_fitted, fetch, validate_data


def _split(w: np.ndarray, n_classes: int, fit_intercept: bool) -> tuple[np.ndarray, np.ndarray]:
    w = w.reshape(n_classes, -1)
    return (w[:, :-1], w[:, -1]) if fit_intercept else (w, np.zeros(n_classes))


def _raw(x: np.ndarray, coef: np.ndarray, intercept: np.ndarray) -> np.ndarray:
    return x @ coef.T + intercept


#: rows per block: a block of a 20-feature chunk (1.3 MB) stays in cache between the two products with it,
#: so that a pass reads each row from memory once
_BLOCK = 8192


def _binomial_block(xb: np.ndarray, yb: np.ndarray, swb: np.ndarray | None, coef: np.ndarray, b0: float,
                    grad: np.ndarray) -> float:
    """The (weighted) sum of ``log(1 + e^z) - y z`` over the block's rows (``z = x.coef + b0``); adds
    ``sum (expit(z) - y) [x, 1]`` to ``grad``. One ``exp`` per row, stably (``e = exp(-|z|)``)."""
    z = xb @ coef
    z += b0
    e = np.abs(z)
    # log(1 + e^z) = log1p(exp(-|z|)) + max(z, 0), and max(z, 0) = (z + |z|) / 2
    sums = z + e
    sums *= 0.5
    sums -= yb * z
    np.negative(e, out=e)
    np.exp(e, out=e)
    terms = np.log1p(e)
    terms += sums
    loss = float(terms.sum() if swb is None else swb @ terms)
    r = e + 1.0
    np.divide(1.0, r, out=r)  # expit(z) for z >= 0; e / (1 + e) for z < 0
    g = np.where(z < 0, e * r, r)
    g -= yb
    if swb is not None:
        g *= swb
    grad[0, :-1] += g @ xb
    grad[0, -1] += g.sum()
    return loss


def _multinomial_block(xb: np.ndarray, yb: np.ndarray, swb: np.ndarray | None, coef: np.ndarray,
                       intercept: np.ndarray, grad: np.ndarray) -> float:
    """The (weighted) sum of ``logsumexp(raw) - raw[label]`` over the block's rows; adds the gradient
    ``sum (softmax(raw) - onehot) [x, 1]`` to ``grad`` (one row per class)."""
    raw = xb @ coef.T
    raw += intercept
    top = raw.max(axis=1)
    p = raw - top[:, None]
    np.exp(p, out=p)
    total = p.sum(axis=1)
    rows, labels = np.arange(len(yb)), yb.astype(np.intp)
    terms = np.log(total)
    terms += top
    terms -= raw[rows, labels]
    p /= total[:, None]
    p[rows, labels] -= 1
    if swb is not None:
        p *= swb[:, None]
    grad[:, :-1] += p.T @ xb
    grad[:, -1] += p.sum(axis=0)
    return float(terms.sum() if swb is None else swb @ terms)


def _loss_grad_chunk(start: int, x: np.ndarray, y: np.ndarray, *rest: Any) -> np.ndarray:
    """``[sum of weighted losses, gradient (unscaled)]`` of one row chunk, a block of rows at a time."""
    sw = rest[0] if len(rest) == 4 else None
    w, n_classes, fit_intercept = rest[-3:]
    coef, intercept = _split(w, n_classes, fit_intercept)
    grad = np.zeros((n_classes, x.shape[1] + 1))
    loss = 0.0
    for s in range(0, len(x), _BLOCK):
        xb, yb = x[s:s + _BLOCK], y[s:s + _BLOCK]
        swb = None if sw is None else sw[s:s + _BLOCK]
        if n_classes == 1:
            loss += _binomial_block(xb, yb, swb, coef[0], float(intercept[0]), grad)
        else:
            loss += _multinomial_block(xb, yb, swb, coef, intercept, grad)
    return np.concatenate([[loss], (grad if fit_intercept else grad[:, :-1]).ravel()])


def _proba_chunk(start: int, x: np.ndarray, coef: np.ndarray, intercept: np.ndarray) -> np.ndarray:
    raw = _raw(x, coef, intercept)
    if coef.shape[0] == 1:
        p = expit(raw[:, 0])
        return np.column_stack([1 - p, p])
    return np.exp(raw - logsumexp(raw, axis=1)[:, None])


def _decision_chunk(start: int, x: np.ndarray, coef: np.ndarray, intercept: np.ndarray) -> np.ndarray:
    raw = _raw(x, coef, intercept)
    return raw[:, 0] if coef.shape[0] == 1 else raw


def _predict_chunk(start: int, x: np.ndarray, coef: np.ndarray, intercept: np.ndarray,
                   classes: np.ndarray) -> np.ndarray:
    raw = _raw(x, coef, intercept)
    index = (raw[:, 0] > 0).astype(np.intp) if coef.shape[0] == 1 else raw.argmax(axis=1)
    return classes[index]


def _encode_classes(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(y, return_inverse=True)``; for integer labels of a modest range by counting (no sort).

    >>> _encode_classes(np.array([7, 3, 7, 5]))
    (array([3, 5, 7]), array([2, 0, 2, 1]))
    """
    if y.dtype.kind in "iu" and len(y):
        lo, hi = int(y.min()), int(y.max())
        if hi - lo <= 4 * len(y) and hi < 2 ** 62:
            shifted = y.astype(np.intp, copy=False) - lo
            present = np.flatnonzero(np.bincount(shifted, minlength=hi - lo + 1))
            table = np.zeros(hi - lo + 1, dtype=np.intp)
            table[present] = np.arange(len(present))
            return (present + lo).astype(y.dtype), table[shifted]
    return np.unique(y, return_inverse=True)


class LogisticRegression(ClassifierMixin, BaseEstimator):
    """Logistic regression (binomial / multinomial, L2 or no penalty) by L-BFGS on distributed gradients.

    >>> import numpy as np
    >>> X = np.array([[0.], [1.], [2.], [3.]])
    >>> clf = LogisticRegression().fit(X, np.array([0, 0, 1, 1]))
    >>> clf.predict(X).fetch()
    array([0, 0, 1, 1])
    """

    def __init__(self, penalty: Any = "l2", *, C: float = 1.0, tol: float = 1e-4, fit_intercept: bool = True,
                 class_weight: Any = None, solver: str = "lbfgs", max_iter: int = 100, verbose: int = 0,
                 warm_start: bool = False):
        self.penalty = penalty
        self.C = C
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.solver = solver
        self.max_iter = max_iter
        self.verbose = verbose
        self.warm_start = warm_start

    def _check_params(self) -> float:
        if self.penalty not in ("l2", None):
            raise NotImplementedError(f"penalty={self.penalty!r} is not implemented; use 'l2' or None")
        if self.solver != "lbfgs":
            raise NotImplementedError(f"solver={self.solver!r} is not implemented; use 'lbfgs'")
        if not isinstance(self.C, numbers.Real) or self.C <= 0:
            raise ValueError(f"Penalty term must be positive; got (C={self.C!r})")
        if not isinstance(self.max_iter, numbers.Integral) or self.max_iter < 1:
            raise ValueError(f"max_iter must be a positive integer, got {self.max_iter!r}")
        return 0.0 if self.penalty is None or np.isinf(self.C) else 1.0 / self.C

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> LogisticRegression:
        """Fit by L-BFGS; each evaluation of the loss and gradient is one pass over the rows."""
        inv_c = self._check_params()
        x = validate_data(self, X, reset=True, dtype=np.float64).execute()
        y_local = np.asarray(fetch(as_tensor(y, dtype=None, name="y")))
        if y_local.ndim == 2 and y_local.shape[1] == 1:
            y_local = y_local[:, 0]
        if y_local.ndim != 1 or len(y_local) != x.shape[0]:
            raise ValueError(f"y should be a 1d array with {int(x.shape[0])} values, got shape {y_local.shape}")
        self.classes_, encoded = _encode_classes(y_local)
        if len(self.classes_) < 2:
            raise ValueError(f"This solver needs samples of at least 2 classes in the data, but the data contains "
                             f"only one class: {self.classes_[0]!r}")
        sw = self._weights(sample_weight, encoded, int(x.shape[0]))
        n_classes = 1 if len(self.classes_) == 2 else len(self.classes_)
        w = self._optimize(x, mars_tensor_like(encoded.astype(np.float64), x), sw, n_classes, inv_c)
        coef, intercept = _split(w, n_classes, bool(self.fit_intercept))
        self.coef_, self.intercept_ = np.ascontiguousarray(coef), intercept.copy()
        return self

    def _weights(self, sample_weight: Any, encoded: np.ndarray, n: int) -> Any:
        local = None
        if sample_weight is not None:
            local = np.asarray(fetch(as_tensor(sample_weight, dtype=np.float64, name="sample_weight")))
            if local.shape != (n,):
                raise ValueError(f"sample_weight.shape == {local.shape}, expected ({n},)!")
        if self.class_weight is not None:
            per_class = compute_class_weight(self.class_weight, classes=self.classes_, y=self.classes_[encoded])
            local = per_class[encoded] * (1.0 if local is None else local)
        return local

    def _optimize(self, x: Any, y: Any, sw_local: np.ndarray | None, n_classes: int, inv_c: float) -> np.ndarray:
        fit_intercept = bool(self.fit_intercept)
        sw = None if sw_local is None else mars_tensor_like(sw_local, x)
        sw_sum = float(x.shape[0]) if sw_local is None else float(sw_local.sum())
        l2 = inv_c / sw_sum
        d = int(x.shape[1])
        n_params = n_classes * (d + int(fit_intercept))
        aligned = [y] if sw is None else [y, sw]

        def loss_grad(w: np.ndarray) -> tuple[float, np.ndarray]:
            packed = fetch(row_reduce(_loss_grad_chunk, x, shape=(1 + n_params,), aligned=aligned,
                                      args=(w, n_classes, fit_intercept)))
            coef = w.reshape(n_classes, -1)[:, :d]
            grad = packed[1:].reshape(n_classes, -1) / sw_sum
            grad[:, :d] += l2 * coef
            return float(packed[0] / sw_sum + 0.5 * l2 * (coef ** 2).sum()), grad.ravel()

        # L-BFGS-B's own products are of a few dozen numbers: a BLAS pool of several threads only wakes them
        # (0.15 s instead of 1 ms over a fit, measured); the passes set their own limits
        with threadpool_limits(limits=1, user_api="blas"):
            result = scipy.optimize.minimize(
                loss_grad, np.zeros(n_params), method="L-BFGS-B", jac=True,
                options={"maxiter": self.max_iter, "maxls": 50, "gtol": self.tol, "ftol": 64 * np.finfo(float).eps})
        if result.status == 1:
            warnings.warn(f"lbfgs failed to converge after {result.nit} iteration(s) (status={result.status}): "
                          f"{result.message}. Increase the number of iterations (max_iter) or scale the data.",
                          ConvergenceWarning, stacklevel=3)
        self.n_iter_ = np.array([min(result.nit, self.max_iter)], dtype=np.int32)
        return result.x

    # ------------------------------------------------------------ using the model
    def _x(self, X: Any) -> Any:
        check_fitted(self)
        return validate_data(self, X, reset=False, dtype=np.float64)

    def decision_function(self, X: Any) -> Any:
        """Raw scores: (n_samples,) for two classes, (n_samples, n_classes) otherwise; a lazy tensor."""
        tail = () if self.coef_.shape[0] == 1 else (self.coef_.shape[0],)
        return row_map(_decision_chunk, self._x(X), outs=[(tail, np.float64)], args=(self.coef_, self.intercept_))[0]

    def predict_proba(self, X: Any) -> Any:
        """Class probabilities (n_samples, n_classes), a lazy tensor."""
        return row_map(_proba_chunk, self._x(X), outs=[((len(self.classes_),), np.float64)],
                       args=(self.coef_, self.intercept_))[0]

    def predict_log_proba(self, X: Any) -> Any:
        from ... import tensor as mt

        return mt.log(self.predict_proba(X))

    def predict(self, X: Any) -> Any:
        """The most probable class of each row, a lazy tensor."""
        return row_map(_predict_chunk, self._x(X), outs=[((), self.classes_.dtype)],
                       args=(self.coef_, self.intercept_, self.classes_))[0]

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Mean accuracy on ``X`` (computed on the chunks)."""
        pred = self.predict(X)
        hits = (pred == as_tensor(y, dtype=None, name="y")).astype(np.float64)
        if sample_weight is None:
            return learn_base.to_float(hits.mean())
        w = as_tensor(sample_weight, dtype=np.float64, name="sample_weight")
        return learn_base.to_float((hits * w).sum() / w.sum())


def mars_tensor_like(values: np.ndarray, x: Any) -> Any:
    """``values`` (one per row of ``x``) as an executed tensor cut like ``x``'s rows."""
    from ... import tensor as mt

    splits = x.nsplits[0] if getattr(x, "nsplits", None) else None
    return mt.tensor(values, chunk_size=(splits,) if splits else None).execute()
