"""Feature scalers: per-column statistics by tree reductions, then an elementwise transform.

``fit`` builds each statistic (counts, sums, squared deviations, minima,
maxima, quantiles) as a lazy column reduction, runs them in one execution
and keeps the small results as numpy attributes. ``partial_fit`` merges a
batch's statistics with those seen so far on the client (Chan's formula for
means and variances), so a stream of batches is never held at once.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin

from ... import tensor as mt
from ...tensor.core import Tensor
from .._rowops import row_blocks, row_reduce
from ..base import (
    as_float,
    as_tensor,
    check_fitted,
    fetch,
    fetch_all,
    known_rows,
    validate_data,
)

__all__ = ["MaxAbsScaler", "MinMaxScaler", "RobustScaler", "StandardScaler"]

_EPS64 = np.finfo(np.float64).eps


def handle_zeros_in_scale(scale: np.ndarray, constant: np.ndarray | None = None) -> np.ndarray:
    """``scale`` with 1 where a feature is (near) constant, so that dividing by it leaves the feature as is.

    >>> handle_zeros_in_scale(np.array([2.0, 0.0]))
    array([2., 1.])
    """
    scale = np.array(scale, dtype=np.float64 if np.asarray(scale).dtype.kind != "f" else None, copy=True)
    if constant is None:
        constant = scale < 10 * np.finfo(scale.dtype).eps
    scale[constant] = 1.0
    return scale


def _nearly_constant(var: np.ndarray, mean: np.ndarray, n: Any) -> np.ndarray:
    """Variances below the rounding error of the two-pass algorithm (Chan, Golub and LeVeque)."""
    return var <= n * _EPS64 * var + (n * mean * _EPS64) ** 2


def _fit_input(estimator: Any, X: Any, reset: bool) -> Tensor:
    return as_float(validate_data(estimator, X, reset=reset, allow_nan=True))


def _transform_input(estimator: Any, X: Any) -> Tensor:
    check_fitted(estimator)
    return _fit_input(estimator, X, reset=False)


def _as_1d_weights(sample_weight: Any, n_rows: Any) -> Tensor:
    w = as_float(as_tensor(sample_weight, dtype=None, name="sample_weight"))
    if w.ndim != 1 or (not math.isnan(w.shape[0]) and not math.isnan(n_rows) and w.shape[0] != n_rows):
        raise ValueError(f"sample_weight.shape == {tuple(w.shape)}, expected {(n_rows,)}!")
    return w


_BLOCK = 8192


def _block_moments(xb: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Rows ``[weight, m0, mean - m0, M2]`` of one cache-sized block (two passes over it, in cache).

    ``m0`` is the first pass's mean, the second pass's deviations correct its rounding; both are kept, so
    that merging blocks of data far from 0 (``1e8 + noise``) subtracts close numbers exactly. NaNs are
    skipped; a column without values gets weight 0 and zeros.
    """
    xb = xb.astype(np.float64, copy=False)
    total = w @ xb
    nan = np.isnan(xb) if np.isnan(total).any() else None
    if nan is None:
        count = np.full(xb.shape[1], w.sum())
    else:
        xb = np.where(nan, 0.0, xb)
        count = w @ ~nan
        total = w @ xb
    safe = np.where(count > 0, count, 1.0)
    m0 = total / safe
    dev = xb - m0
    if nan is not None:
        dev[nan] = 0.0
    shift = (w @ dev) / safe
    np.square(dev, out=dev)
    return np.stack([count, m0, shift, w @ dev - shift * shift * count])


def _merge_blocks(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Two ``[weight, m0, mean - m0, M2]`` partials combined (Chan et al.), keeping ``a``'s ``m0`` (``b``'s where
    ``a`` is empty); the ``m0`` of data far from 0 are close, so their difference is exact."""
    n = a[0] + b[0]
    frac = b[0] / np.where(n > 0, n, 1.0)
    delta = (b[1] - a[1]) + (b[2] - a[2])
    a_empty = a[0] == 0
    return np.stack([n, np.where(a_empty, b[1], a[1]), np.where(a_empty, b[2], a[2] + delta * frac),
                     a[3] + b[3] + delta ** 2 * a[0] * frac])


def _moments_chunk(start: int, x: np.ndarray, *rest: Any) -> np.ndarray:
    """``[weight, m0, mean - m0, M2]`` per column of one row chunk (``rest``: its sample weights, if any)."""
    acc = np.zeros((4, x.shape[1]))
    for s in row_blocks(len(x), _BLOCK):
        w = rest[0][s:s + _BLOCK].astype(np.float64) if rest else np.ones(min(_BLOCK, len(x) - s))
        acc = _merge_blocks(acc, _block_moments(x[s:s + _BLOCK], w))
    return acc


def _merge_partials(*parts: np.ndarray) -> np.ndarray:
    acc = parts[0]
    for p in parts[1:]:
        acc = _merge_blocks(acc, p)
    return acc


def _batch_moments(x: Tensor, sample_weight: Any) -> Tensor:
    """Per column, lazily: the weight of the non-NaN values, their mean and their (biased) variance, as the
    rows of one ``(3, n_features)`` tensor; one pass over the rows."""
    aligned = [] if sample_weight is None else [_as_1d_weights(sample_weight, x.shape[0])]
    return row_reduce(_moments_chunk, x, shape=(3, x.shape[1]), aligned=aligned, combine=_merge_partials,
                      finish=_moments_finish)


def _moments_finish(stats: np.ndarray) -> np.ndarray:
    n, m0, shift, m2 = stats
    with np.errstate(invalid="ignore", divide="ignore"):
        empty = n == 0
        return np.stack([n, np.where(empty, np.nan, m0 + shift), np.where(empty, np.nan, m2 / n)])


def _merge_moments(old: tuple, new: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts, means and variances of two batches combined (Chan et al.'s parallel formula)."""
    n_a, mean_a, var_a = old
    n_b, mean_b, var_b = new
    n = n_a + n_b
    with np.errstate(invalid="ignore", divide="ignore"):
        delta = mean_b - mean_a
        mean = np.where(n_b == 0, mean_a, mean_a + delta * np.divide(n_b, n))
        m2 = var_a * n_a + np.where(n_b == 0, 0.0, var_b * n_b) + delta ** 2 * n_a * np.divide(n_b, n)
        var = np.where(n_b == 0, var_a, m2 / n)
    return n, mean, var


class StandardScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Standardize features: ``(X - mean_) / scale_``, as ``sklearn.preprocessing.StandardScaler``.

    Means and variances are column reductions over the row chunks (NaNs are
    ignored in ``fit`` and kept in ``transform``); ``partial_fit`` merges
    batches. ``copy`` is accepted for compatibility: tensors are never
    modified in place.

    >>> import numpy as np
    >>> from mars.learn.preprocessing import StandardScaler
    >>> s = StandardScaler().fit(np.array([[0., 1.], [2., 3.]]))
    >>> s.mean_, s.scale_
    (array([1., 2.]), array([1., 1.]))
    >>> s.transform(np.array([[2., 2.]])).execute().fetch()
    array([[1., 0.]])
    """

    def __init__(self, *, copy: bool = True, with_mean: bool = True, with_std: bool = True):
        self.copy = copy
        self.with_mean = with_mean
        self.with_std = with_std

    def _reset(self) -> None:
        for name in ("scale_", "n_samples_seen_", "mean_", "var_"):
            self.__dict__.pop(name, None)

    def fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> StandardScaler:
        """Compute the mean and standard deviation of each feature."""
        self._reset()
        return self.partial_fit(X, y, sample_weight)

    def partial_fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> StandardScaler:
        """Update the statistics with one more batch of rows."""
        first = not hasattr(self, "n_samples_seen_")
        x = _fit_input(self, X, reset=first)
        n_b, mean_b, var_b = fetch(_batch_moments(x, sample_weight))
        if sample_weight is None:
            n_b = np.rint(n_b).astype(np.int64)
        elif n_b.size and not n_b.any():
            raise ValueError("Sample weights must contain at least one non-zero number.")
        if first:
            n, mean, var = n_b, mean_b, var_b
        else:
            n_a = np.broadcast_to(self.n_samples_seen_, n_b.shape)
            mean_a = self.mean_ if self.mean_ is not None else mean_b
            var_a = self.var_ if self.var_ is not None else var_b
            n, mean, var = _merge_moments((n_a, mean_a, var_a), (n_b, mean_b, var_b))
        self.n_samples_seen_ = n[0] if n.size and n.max() == n.min() else n
        self.mean_ = mean if (self.with_mean or self.with_std) else None
        self.var_ = var if self.with_std else None
        if self.with_std:
            self.scale_ = handle_zeros_in_scale(np.sqrt(var), _nearly_constant(var, mean, self.n_samples_seen_))
        else:
            self.scale_ = None
        return self

    def transform(self, X: Any, copy: Any = None) -> Tensor:
        """The standardized features, a lazy tensor."""
        x = _transform_input(self, X)
        if self.with_mean:
            x = x - self.mean_.astype(x.dtype)
        if self.with_std:
            x = x / self.scale_.astype(x.dtype)
        return x

    def inverse_transform(self, X: Any, copy: Any = None) -> Tensor:
        """Undo ``transform``: ``X * scale_ + mean_``."""
        x = _transform_input(self, X)
        if self.with_std:
            x = x * self.scale_.astype(x.dtype)
        if self.with_mean:
            x = x + self.mean_.astype(x.dtype)
        return x

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


def _check_range(feature_range: Any) -> tuple[float, float]:
    lo, hi = feature_range
    if lo >= hi:
        raise ValueError(f"Minimum of desired feature range must be smaller than maximum. Got {feature_range!r}.")
    return lo, hi


class MinMaxScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Scale each feature to ``feature_range``, as ``sklearn.preprocessing.MinMaxScaler``.

    Column minima and maxima are tree reductions (NaNs ignored); with
    ``clip`` the transformed values are clipped to the range.

    >>> import numpy as np
    >>> from mars.learn.preprocessing import MinMaxScaler
    >>> MinMaxScaler().fit_transform(np.array([[1.], [3.], [5.]])).execute().fetch().ravel()
    array([0. , 0.5, 1. ])
    """

    def __init__(self, feature_range: tuple = (0, 1), *, copy: bool = True, clip: bool = False):
        self.feature_range = feature_range
        self.copy = copy
        self.clip = clip

    def fit(self, X: Any, y: Any = None) -> MinMaxScaler:
        """Compute each feature's minimum and maximum."""
        for name in ("scale_", "min_", "n_samples_seen_", "data_min_", "data_max_", "data_range_"):
            self.__dict__.pop(name, None)
        return self.partial_fit(X, y)

    def partial_fit(self, X: Any, y: Any = None) -> MinMaxScaler:
        """Update the minima and maxima with one more batch of rows."""
        lo, hi = _check_range(self.feature_range)
        first = not hasattr(self, "n_samples_seen_")
        x = known_rows(_fit_input(self, X, reset=first))  # a filtered frame's row count is learnt by running it
        data_min, data_max = fetch_all(mt.nanmin(x, axis=0), mt.nanmax(x, axis=0))
        if first:
            self.n_samples_seen_ = int(x.shape[0])
        else:
            data_min = np.fmin(self.data_min_, data_min)
            data_max = np.fmax(self.data_max_, data_max)
            self.n_samples_seen_ += int(x.shape[0])
        data_range = data_max - data_min
        self.scale_ = (hi - lo) / handle_zeros_in_scale(data_range)
        self.min_ = lo - data_min * self.scale_
        self.data_min_, self.data_max_, self.data_range_ = data_min, data_max, data_range
        return self

    def transform(self, X: Any) -> Tensor:
        """The scaled features, a lazy tensor."""
        x = _transform_input(self, X)
        x = x * self.scale_.astype(x.dtype) + self.min_.astype(x.dtype)
        if self.clip:
            x = mt.clip(x, self.feature_range[0], self.feature_range[1])
        return x

    def inverse_transform(self, X: Any) -> Tensor:
        """Undo ``transform``."""
        x = _transform_input(self, X)
        return (x - self.min_.astype(x.dtype)) / self.scale_.astype(x.dtype)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


class MaxAbsScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Scale each feature by its maximum absolute value, as ``sklearn.preprocessing.MaxAbsScaler``.

    >>> import numpy as np
    >>> from mars.learn.preprocessing import MaxAbsScaler
    >>> MaxAbsScaler().fit(np.array([[1., -4.], [2., 2.]])).scale_
    array([2., 4.])
    """

    def __init__(self, *, copy: bool = True):
        self.copy = copy

    def fit(self, X: Any, y: Any = None) -> MaxAbsScaler:
        """Compute each feature's maximum absolute value."""
        for name in ("scale_", "n_samples_seen_", "max_abs_"):
            self.__dict__.pop(name, None)
        return self.partial_fit(X, y)

    def partial_fit(self, X: Any, y: Any = None) -> MaxAbsScaler:
        """Update the maxima with one more batch of rows."""
        first = not hasattr(self, "n_samples_seen_")
        x = known_rows(_fit_input(self, X, reset=first))
        (max_abs,) = fetch_all(mt.nanmax(mt.abs(x), axis=0))
        if first:
            self.n_samples_seen_ = int(x.shape[0])
        else:
            max_abs = np.fmax(self.max_abs_, max_abs)
            self.n_samples_seen_ += int(x.shape[0])
        self.max_abs_ = max_abs
        self.scale_ = handle_zeros_in_scale(max_abs)
        return self

    def transform(self, X: Any) -> Tensor:
        """The scaled features, a lazy tensor."""
        x = _transform_input(self, X)
        return x / self.scale_.astype(x.dtype)

    def inverse_transform(self, X: Any) -> Tensor:
        """Undo ``transform``."""
        x = _transform_input(self, X)
        return x * self.scale_.astype(x.dtype)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


class RobustScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Center by the median and scale by a quantile range, as ``sklearn.preprocessing.RobustScaler``.

    Medians and quantiles come from ``mt.nanpercentile`` along the rows (a
    distributed sort of each column block); NaNs are ignored.

    >>> import numpy as np
    >>> from mars.learn.preprocessing import RobustScaler
    >>> r = RobustScaler().fit(np.array([[1.], [2.], [3.], [4.], [100.]]))
    >>> r.center_, r.scale_
    (array([3.]), array([2.]))
    """

    def __init__(self, *, with_centering: bool = True, with_scaling: bool = True,
                 quantile_range: tuple = (25.0, 75.0), copy: bool = True, unit_variance: bool = False):
        self.with_centering = with_centering
        self.with_scaling = with_scaling
        self.quantile_range = quantile_range
        self.copy = copy
        self.unit_variance = unit_variance

    def fit(self, X: Any, y: Any = None) -> RobustScaler:
        """Compute the medians and the quantile ranges."""
        q_min, q_max = self.quantile_range
        if not 0 <= q_min <= q_max <= 100:
            raise ValueError(f"Invalid quantile range: {self.quantile_range!s}")
        x = _fit_input(self, X, reset=True)
        median = mt.nanmedian(x, axis=0) if self.with_centering else None
        quantiles = mt.nanpercentile(x, [q_min, q_max], axis=0) if self.with_scaling else None
        median, quantiles = fetch_all(median, quantiles)
        self.center_ = median
        if self.with_scaling:
            scale = handle_zeros_in_scale(quantiles[1] - quantiles[0])
            if self.unit_variance:
                from scipy.stats import norm

                scale = scale / (norm.ppf(q_max / 100.0) - norm.ppf(q_min / 100.0))
            self.scale_ = scale
        else:
            self.scale_ = None
        return self

    def transform(self, X: Any) -> Tensor:
        """The centered and scaled features, a lazy tensor."""
        x = _transform_input(self, X)
        if self.with_centering:
            x = x - self.center_.astype(x.dtype)
        if self.with_scaling:
            x = x / self.scale_.astype(x.dtype)
        return x

    def inverse_transform(self, X: Any) -> Tensor:
        """Undo ``transform``."""
        x = _transform_input(self, X)
        if self.with_scaling:
            x = x * self.scale_.astype(x.dtype)
        if self.with_centering:
            x = x + self.center_.astype(x.dtype)
        return x

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

