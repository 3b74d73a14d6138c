"""``TruncatedSVD``: the leading singular triplets of (uncentered) data by ``mt.linalg.randomized_svd``.

The randomized SVD reads the data through chunked products and TSQRs; only
the singular values, ``Vt`` and a few column reductions reach the client.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin

from ... import tensor as mt
from ...tensor.core import Tensor
from ..base import as_float, as_tensor, check_fitted, fetch_all, known_rows, validate_data
from ._pca import flip_rows

__all__ = ["TruncatedSVD"]


class TruncatedSVD(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Dimensionality reduction by truncated SVD (LSA), as ``sklearn.decomposition.TruncatedSVD``.

    ``algorithm='arpack'`` is not offered (NotImplementedError); the random
    test matrix differs from scikit-learn's, so results agree with it to the
    accuracy of the randomized method, not bit for bit.

    >>> import numpy as np
    >>> from mars.learn.decomposition import TruncatedSVD
    >>> x = np.array([[3., 0.], [0., 1.], [0., 0.]])
    >>> TruncatedSVD(1, random_state=0).fit(x).singular_values_.round(6)
    array([3.])
    """

    def __init__(self, n_components: int = 2, *, algorithm: str = "randomized", n_iter: int = 5,
                 n_oversamples: int = 10, power_iteration_normalizer: str = "auto", random_state: Any = None,
                 tol: float = 0.0):
        self.n_components = n_components
        self.algorithm = algorithm
        self.n_iter = n_iter
        self.n_oversamples = n_oversamples
        self.power_iteration_normalizer = power_iteration_normalizer
        self.random_state = random_state
        self.tol = tol

    def fit(self, X: Any, y: Any = None) -> TruncatedSVD:
        """Find the leading singular vectors of ``X``."""
        self._fit(X)
        return self

    def _fit(self, X: Any) -> Tensor:
        if self.algorithm == "arpack":
            raise NotImplementedError("algorithm='arpack' is not offered by mars.learn; use 'randomized'")
        if self.algorithm != "randomized":
            raise ValueError(f"algorithm must be 'randomized' or 'arpack', got {self.algorithm!r}")
        x = known_rows(as_float(validate_data(self, X, reset=True)))
        k = self.n_components
        if not isinstance(k, (int, np.integer)) or not 1 <= k <= x.shape[1]:
            raise ValueError(f"n_components must be in [1, n_features={x.shape[1]}], got {k!r}")
        _, s, vt = mt.linalg.randomized_svd(x, int(k), n_oversamples=self.n_oversamples, n_iter=self.n_iter,
                                            power_iteration_normalizer=self.power_iteration_normalizer,
                                            flip_sign=False, random_state=self.random_state)
        projected = x @ vt.T  # sign flips do not change its column variances
        s, vt, variance, full = fetch_all(s, vt, projected.var(axis=0), x.var(axis=0).sum())
        self.components_ = flip_rows(vt)
        self.singular_values_ = s
        self.explained_variance_ = variance
        self.explained_variance_ratio_ = variance / full
        self._n_features_out = len(vt)
        return x

    def fit_transform(self, X: Any, y: Any = None) -> Tensor:
        """Fit, then project ``X`` (a lazy tensor)."""
        x = self._fit(X)
        return x @ self.components_.T.astype(x.dtype)

    def transform(self, X: Any) -> Tensor:
        """``X`` projected on the singular vectors, a lazy tensor."""
        check_fitted(self, "components_")
        x = as_float(validate_data(self, X, reset=False))
        return x @ self.components_.T.astype(x.dtype)

    def inverse_transform(self, X: Any) -> Tensor:
        """Back to the feature space, a lazy tensor."""
        check_fitted(self, "components_")
        x = as_float(as_tensor(X, ensure_2d=True))
        return x @ self.components_.astype(x.dtype)
