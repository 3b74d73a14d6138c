"""``PCA``: principal components from a distributed SVD of the centered data.

Solvers (chosen as scikit-learn chooses them with ``'auto'``):

- ``'covariance_eigh'``: one pass over the rows gives, per chunk, ``X^T X``
  and the column sums, summed in a tree; the client forms the covariance
  ``(X^T X - n mean mean^T) / (n - 1)`` as scikit-learn does and takes its
  (small) eigendecomposition. The data is never centered. Best for tall and
  skinny data.
- ``'full'``: TSQR SVD (``mt.linalg.svd``) of the centered data: each row
  chunk is QR-factored where it lives, only the small R factors meet.
- ``'randomized'``: ``mt.linalg.randomized_svd`` (Halko et al.), chunked
  products and TSQRs only.

Only the singular values and ``Vt`` (``k x p``) are fetched; signs follow
scikit-learn's ``svd_flip`` on ``Vt``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from sklearn.utils.extmath import svd_flip

from ... import tensor as mt
from ...tensor.core import Tensor
from .._rowops import row_reduce
from ..base import (
    as_float,
    as_tensor,
    check_fitted,
    fetch,
    fetch_all,
    known_rows,
    to_float,
    validate_data,
)

__all__ = ["PCA", "flip_rows"]

_SOLVERS = ("auto", "full", "covariance_eigh", "randomized", "arpack")


def flip_rows(vt: np.ndarray) -> np.ndarray:
    """``vt`` with each row's largest-magnitude entry positive (scikit-learn's ``svd_flip`` on ``Vt``)."""
    return svd_flip(np.zeros((1, vt.shape[0]), dtype=vt.dtype), vt, u_based_decision=False)[1]


def _check_n_components(n_components: Any, n_samples: int, n_features: int, solver: str) -> None:
    bound = min(n_samples, n_features)
    if n_components is None or n_components == "mle":
        if n_components == "mle" and n_samples < n_features:
            raise ValueError("n_components='mle' is only supported if n_samples >= n_features")
        return
    if isinstance(n_components, float) and 0 < n_components < 1:
        if solver == "randomized":
            raise ValueError(f"n_components={n_components} must be an integer with svd_solver='randomized'")
        return
    if not isinstance(n_components, (int, np.integer)) or isinstance(n_components, bool) \
            or not 0 <= n_components <= bound:
        raise ValueError(f"n_components={n_components!r} must be between 0 and min(n_samples, n_features)="
                         f"{bound} with svd_solver={solver!r}")


def _auto_solver(n_components: Any, n_samples: int, n_features: int) -> str:
    if n_features <= 1000 and n_samples >= 10 * n_features:
        return "covariance_eigh"
    if max(n_samples, n_features) <= 500 or n_components == "mle":
        return "full"
    if isinstance(n_components, (int, np.integer)) and 1 <= n_components < 0.8 * min(n_samples, n_features):
        return "randomized"
    return "full"


#: rows of a chunk taken at a time by the Gram pass: a block's products and sums are made while it is in cache
_GRAM_BLOCK_ROWS = 8192


def _gram_and_sums(start: int, x: np.ndarray) -> np.ndarray:
    """``[X^T X | column sums]`` of one row chunk, block by block: the chunk leaves memory once, not twice (the
    pass is bound by memory bandwidth when every core runs one: 30 -> 24 ms for 1M x 20 alone, less shared).

    >>> x = np.arange(12.0).reshape(4, 3)
    >>> bool(np.allclose(_gram_and_sums(0, x), np.hstack([x.T @ x, x.sum(axis=0)[:, None]])))
    True
    """
    p = x.shape[1]
    gram = np.zeros((p, p), dtype=x.dtype)
    sums = np.zeros(p, dtype=x.dtype)
    ones = np.ones(min(len(x), _GRAM_BLOCK_ROWS), dtype=x.dtype)
    for i in range(0, len(x), _GRAM_BLOCK_ROWS):
        block = x[i : i + _GRAM_BLOCK_ROWS]
        gram += block.T @ block
        sums += ones[: len(block)] @ block
    return np.hstack([gram, sums[:, None]])


def _covariance_eigh(x: Tensor, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, singular values and ``Vt`` of the centered ``x`` from its covariance (one pass over the rows)."""
    p = int(x.shape[1])
    stats = fetch(row_reduce(_gram_and_sums, x, shape=(p, p + 1), dtype=x.dtype))
    mean = stats[:, p] / n
    cov = stats[:, :p] - n * mean[:, None] * mean[None, :]
    cov /= max(n - 1, 1)
    values, vectors = np.linalg.eigh(cov)
    values = np.clip(values[::-1], 0.0, None)
    return mean, np.sqrt(values * max(n - 1, 1)), vectors[:, ::-1].T


def _chosen_count(n_components: Any, variance: np.ndarray, n_samples: int) -> int:
    if n_components is None:
        return len(variance)
    if n_components == "mle":
        from sklearn.decomposition._pca import _infer_dimension

        return int(_infer_dimension(variance, n_samples))
    if isinstance(n_components, float) and 0 < n_components < 1:
        ratio = np.cumsum(variance / variance.sum())
        return int(np.searchsorted(ratio, n_components, side="right") + 1)
    return int(n_components)


class PCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Principal component analysis, as ``sklearn.decomposition.PCA`` (dense data).

    See the module's notes for how each solver is distributed;
    ``svd_solver='arpack'`` is not offered. ``transform`` and
    ``inverse_transform`` return lazy tensors; ``score`` a float.

    >>> import numpy as np
    >>> from mars.learn.decomposition import PCA
    >>> x = np.array([[-1., -1.], [-2., -1.], [-3., -2.], [1., 1.], [2., 1.], [3., 2.]])
    >>> pca = PCA(n_components=2).fit(x)
    >>> pca.explained_variance_ratio_.round(5)
    array([0.99244, 0.00756])
    """

    def __init__(self, n_components: Any = None, *, copy: bool = True, whiten: bool = False,
                 svd_solver: str = "auto", tol: float = 0.0, iterated_power: Any = "auto", n_oversamples: int = 10,
                 power_iteration_normalizer: str = "auto", random_state: Any = None):
        self.n_components = n_components
        self.copy = copy
        self.whiten = whiten
        self.svd_solver = svd_solver
        self.tol = tol
        self.iterated_power = iterated_power
        self.n_oversamples = n_oversamples
        self.power_iteration_normalizer = power_iteration_normalizer
        self.random_state = random_state

    def fit(self, X: Any, y: Any = None) -> PCA:
        """Find the principal axes of ``X``."""
        if self.svd_solver not in _SOLVERS:
            raise ValueError(f"svd_solver must be one of {_SOLVERS}, got {self.svd_solver!r}")
        if self.svd_solver == "arpack":
            raise NotImplementedError("svd_solver='arpack' is not offered by mars.learn; use 'randomized' "
                                      "(or 'full' / 'covariance_eigh')")
        x = known_rows(as_float(validate_data(self, X, reset=True)))
        n, p = int(x.shape[0]), int(x.shape[1])
        solver = self.svd_solver if self.svd_solver != "auto" else _auto_solver(self.n_components, n, p)
        _check_n_components(self.n_components, n, p, solver)
        if solver == "randomized" and n < 2:
            raise ValueError(f"PCA with svd_solver='randomized' needs at least 2 samples, got n_samples={n}")
        self._fit_svd_solver = solver
        if solver == "covariance_eigh":
            self._fit_full(*_covariance_eigh(x, n), n, p)
            return self
        mean = x.mean(axis=0)
        centered = x - mean
        if solver == "randomized":
            self._fit_randomized(centered, mean, n, p)
        else:
            self._fit_full(*fetch_all(mean, *mt.linalg.svd(centered)[1:]), n, p)
        return self

    def _fit_full(self, mean: np.ndarray, s: np.ndarray, vt: np.ndarray, n: int, p: int) -> None:
        vt = flip_rows(vt)
        variance = s ** 2 / max(n - 1, 1)
        total = variance.sum()
        k = _chosen_count(self.n_components, variance, n)
        self._set(mean, vt[:k], variance[:k], s[:k], total, n, p)
        self.noise_variance_ = float(variance[k:].mean()) if k < min(n, p) else 0.0

    def _fit_randomized(self, centered: Tensor, mean: Tensor, n: int, p: int) -> None:
        k = int(self.n_components)
        _, s, vt = mt.linalg.randomized_svd(centered, k, n_oversamples=self.n_oversamples,
                                            n_iter=self.iterated_power,
                                            power_iteration_normalizer=self.power_iteration_normalizer,
                                            flip_sign=False, random_state=self.random_state)
        total = (centered ** 2).sum() / max(n - 1, 1)
        mean, s, vt, total = fetch_all(mean, s, vt, total)
        variance = s ** 2 / max(n - 1, 1)
        self._set(mean, flip_rows(vt), variance, s, float(total), n, p)
        rest = min(n, p) - k
        self.noise_variance_ = float((total - variance.sum()) / rest) if rest > 0 else 0.0

    def _set(self, mean: np.ndarray, vt: np.ndarray, variance: np.ndarray, s: np.ndarray, total: float, n: int,
             p: int) -> None:
        self.mean_ = mean
        self.components_ = vt
        self.n_components_ = len(vt)
        self.explained_variance_ = variance
        self.explained_variance_ratio_ = variance / total if total else np.zeros_like(variance)
        self.singular_values_ = s
        self.n_samples_ = n
        self._n_features_out = len(vt)

    def transform(self, X: Any) -> Tensor:
        """``X`` projected on the principal axes (whitened with ``whiten``), a lazy tensor."""
        check_fitted(self, "components_")
        x = as_float(validate_data(self, X, reset=False))
        out = (x - self.mean_.astype(x.dtype)) @ self.components_.T.astype(x.dtype)
        if self.whiten:
            out = out / np.sqrt(self.explained_variance_).astype(x.dtype)
        return out

    def inverse_transform(self, X: Any) -> Tensor:
        """Back from the principal axes to the feature space, a lazy tensor."""
        check_fitted(self, "components_")
        x = as_float(as_tensor(X, ensure_2d=True))
        basis = self.components_
        if self.whiten:
            basis = np.sqrt(self.explained_variance_)[:, None] * basis
        return x @ basis.astype(x.dtype) + self.mean_.astype(x.dtype)

    def get_covariance(self) -> np.ndarray:
        """The data covariance of the generative model (numpy)."""
        check_fitted(self, "components_")
        components = self.components_
        variance = self.explained_variance_
        if self.whiten:
            components = components * np.sqrt(variance[:, None])
        diff = np.maximum(variance - self.noise_variance_, 0.0)
        cov = (components.T * diff) @ components
        cov.flat[:: len(cov) + 1] += self.noise_variance_
        return cov

    def get_precision(self) -> np.ndarray:
        """The inverse of ``get_covariance()`` (numpy)."""
        return np.linalg.inv(self.get_covariance())

    def score_samples(self, X: Any) -> Tensor:
        """Each sample's log-likelihood under the probabilistic PCA model, a lazy tensor."""
        check_fitted(self, "components_")
        x = as_float(validate_data(self, X, reset=False))
        centered = x - self.mean_
        precision = self.get_precision()
        p = x.shape[1]
        log_like = -0.5 * (centered * (centered @ precision)).sum(axis=1)
        return log_like - 0.5 * (p * math.log(2.0 * math.pi) - np.linalg.slogdet(precision)[1])

    def score(self, X: Any, y: Any = None) -> float:
        """The average log-likelihood of the samples (a float: it runs)."""
        return to_float(self.score_samples(X).mean())
