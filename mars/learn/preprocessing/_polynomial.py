"""``PolynomialFeatures``: the monomials of each row, computed chunk by chunk.

The exponents (``powers_``) depend only on the number of features; the
columns are brought into one chunk per row block, and each row block's
monomials are products of its own columns.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from ...tensor.core import Tensor
from ..base import as_float, check_fitted, validate_data
from ._encoders import _input_names

__all__ = ["PolynomialFeatures"]


def _degrees(degree: Any) -> tuple[int, int]:
    if isinstance(degree, (int, np.integer)) and not isinstance(degree, bool):
        if degree < 0:
            raise ValueError(f"degree must be a non-negative integer, got {degree}.")
        return 0, int(degree)
    if isinstance(degree, tuple) and len(degree) == 2:
        lo, hi = degree
        if all(isinstance(d, (int, np.integer)) for d in degree) and 0 <= lo <= hi:
            return int(lo), int(hi)
    raise ValueError(f"degree=(min_degree, max_degree) must be non-negative integers that fulfil "
                     f"min_degree <= max_degree, got {degree}.")


def monomial_powers(n_features: int, lo: int, hi: int, interaction_only: bool, include_bias: bool) -> np.ndarray:
    """Exponents of each output column, in scikit-learn's order (bias, then degree by degree).

    >>> monomial_powers(2, 0, 2, False, True).tolist()
    [[0, 0], [1, 0], [0, 1], [2, 0], [1, 1], [0, 2]]
    """
    pick = itertools.combinations if interaction_only else itertools.combinations_with_replacement
    rows = [np.zeros(n_features, dtype=np.int64)] if include_bias else []
    for d in range(max(lo, 1), hi + 1):
        for combo in pick(range(n_features), d):
            rows.append(np.bincount(np.asarray(combo, dtype=np.int64), minlength=n_features))
    return np.asarray(rows, dtype=np.int64).reshape(len(rows), n_features)


def monomials_chunk(x: np.ndarray, powers: np.ndarray, order: str) -> np.ndarray:
    """The monomials of one row block (all of its columns present)."""
    out = np.empty((x.shape[0], len(powers)), dtype=x.dtype, order=order)
    for i, p in enumerate(powers):
        used = np.flatnonzero(p)
        col = np.ones(x.shape[0], dtype=x.dtype)
        for f in used:
            col = col * (x[:, f] if p[f] == 1 else x[:, f] ** p[f])
        out[:, i] = col
    return out


class PolynomialFeatures(TransformerMixin, BaseEstimator):
    """Polynomial and interaction features, as ``sklearn.preprocessing.PolynomialFeatures`` (dense input).

    >>> from mars.learn.preprocessing import PolynomialFeatures
    >>> PolynomialFeatures(2).fit_transform([[2., 3.]]).execute().fetch()
    array([[1., 2., 3., 4., 6., 9.]])
    """

    def __init__(self, degree: Any = 2, *, interaction_only: bool = False, include_bias: bool = True,
                 order: str = "C"):
        self.degree = degree
        self.interaction_only = interaction_only
        self.include_bias = include_bias
        self.order = order

    def fit(self, X: Any, y: Any = None) -> PolynomialFeatures:
        """Work out the output's exponents from the number of features."""
        lo, hi = _degrees(self.degree)
        if hi == 0 and not self.include_bias:
            raise ValueError("Setting degree to zero and include_bias to False would result in an empty "
                             "output array.")
        if self.order not in ("C", "F"):
            raise ValueError(f"order must be 'C' or 'F', got {self.order!r}")
        validate_data(self, X, reset=True)
        self._powers = monomial_powers(self.n_features_in_, lo, hi, self.interaction_only, self.include_bias)
        self.n_output_features_ = len(self._powers)
        return self

    @property
    def powers_(self) -> np.ndarray:
        """Exponent of each input feature in each output feature, ``(n_output_features_, n_features_in_)``."""
        check_fitted(self, "n_output_features_")
        return self._powers

    def transform(self, X: Any) -> Tensor:
        """The polynomial features, a lazy tensor."""
        check_fitted(self, "n_output_features_")
        x = as_float(validate_data(self, X, reset=False))
        x = x.rechunk({1: max(self.n_features_in_, 1)})
        return x.map_chunk(monomials_chunk, args=(self._powers, self.order), dtype=x.dtype,
                           shape=(x.shape[0], self.n_output_features_))

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Names of the output features (``"x0^2 x1"``), as scikit-learn."""
        names = _input_names(self, input_features)
        out = []
        for p in self.powers_:
            used = np.flatnonzero(p)
            out.append(" ".join(names[f] if p[f] == 1 else f"{names[f]}^{p[f]}" for f in used) if len(used) else "1")
        return np.asarray(out, dtype=object)
