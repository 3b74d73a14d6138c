"""Regression metrics: per-output sums by tree reductions, combined on the client into a Python float.

``r2_score`` needs the weighted mean of the target before the sum of squares
about it: both are reductions of one expression, run in one execution.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from sklearn.exceptions import UndefinedMetricWarning

from ...tensor.core import Tensor
from ..base import as_float, as_tensor, fetch_all

__all__ = ["mean_absolute_error", "mean_squared_error", "r2_score", "root_mean_squared_error"]

_MULTIOUTPUT = ("raw_values", "uniform_average", "variance_weighted")


def _check_targets(y_true: Any, y_pred: Any, sample_weight: Any) -> tuple[Tensor, Tensor, Tensor | None]:
    t = as_float(as_tensor(y_true, name="y_true"))
    p = as_float(as_tensor(y_pred, name="y_pred"))
    t = t[:, None] if t.ndim == 1 else t
    p = p[:, None] if p.ndim == 1 else p
    if t.shape[1] != p.shape[1]:
        raise ValueError(f"y_true and y_pred have different number of output ({t.shape[1]}!={p.shape[1]})")
    w = None if sample_weight is None else as_float(as_tensor(sample_weight, name="sample_weight"))
    lengths = {int(x.shape[0]) for x in (t, p, w) if x is not None and not math.isnan(x.shape[0])}
    if len(lengths) > 1:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: {sorted(lengths)}")
    return t, p, w


def _weighted_mean(values: Tensor, w: Tensor | None) -> Tensor:
    return values.mean(axis=0) if w is None else (values * w[:, None]).sum(axis=0) / w.sum()


def _combine(errors: np.ndarray, multioutput: Any) -> Any:
    if isinstance(multioutput, str):
        if multioutput not in _MULTIOUTPUT[:2]:
            raise ValueError(f"multioutput must be one of {_MULTIOUTPUT[:2]} or an array, got {multioutput!r}")
        return errors if multioutput == "raw_values" else float(np.average(errors))
    return float(np.average(errors, weights=np.asarray(multioutput)))


def mean_squared_error(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
                       multioutput: Any = "uniform_average") -> Any:
    """Mean squared error, as scikit-learn (a float; per output with ``multioutput='raw_values'``).

    >>> from mars.learn.metrics import mean_squared_error
    >>> mean_squared_error([3, -0.5, 2, 7], [2.5, 0.0, 2, 8])
    0.375
    """
    t, p, w = _check_targets(y_true, y_pred, sample_weight)
    (errors,) = fetch_all(_weighted_mean((t - p) ** 2, w))
    return _combine(np.atleast_1d(errors), multioutput)


def root_mean_squared_error(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
                            multioutput: Any = "uniform_average") -> Any:
    """Root mean squared error (per output, then averaged), as scikit-learn.

    >>> from mars.learn.metrics import root_mean_squared_error
    >>> root_mean_squared_error([3, -0.5, 2, 7], [2.5, 0.0, 2, 8]).__round__(6)
    0.612372
    """
    t, p, w = _check_targets(y_true, y_pred, sample_weight)
    (errors,) = fetch_all(_weighted_mean((t - p) ** 2, w))
    return _combine(np.sqrt(np.atleast_1d(errors)), multioutput)


def mean_absolute_error(y_true: Any, y_pred: Any, *, sample_weight: Any = None,
                        multioutput: Any = "uniform_average") -> Any:
    """Mean absolute error, as scikit-learn.

    >>> from mars.learn.metrics import mean_absolute_error
    >>> mean_absolute_error([3, -0.5, 2, 7], [2.5, 0.0, 2, 8])
    0.5
    """
    t, p, w = _check_targets(y_true, y_pred, sample_weight)
    (errors,) = fetch_all(_weighted_mean(abs(t - p), w))
    return _combine(np.atleast_1d(errors), multioutput)


def r2_score(y_true: Any, y_pred: Any, *, sample_weight: Any = None, multioutput: Any = "uniform_average",
             force_finite: bool = True) -> Any:
    """The coefficient of determination R², as scikit-learn.

    >>> from mars.learn.metrics import r2_score
    >>> round(r2_score([3, -0.5, 2, 7], [2.5, 0.0, 2, 8]), 6)
    0.948608
    """
    t, p, w = _check_targets(y_true, y_pred, sample_weight)
    if not math.isnan(t.shape[0]) and t.shape[0] < 2:
        warnings.warn("R^2 score is not well-defined with less than two samples.", UndefinedMetricWarning,
                      stacklevel=2)
        return float("nan")
    ww = 1.0 if w is None else w[:, None]
    numerator = (ww * (t - p) ** 2).sum(axis=0)
    denominator = (ww * (t - _weighted_mean(t, w)) ** 2).sum(axis=0)
    num, den = (np.atleast_1d(v) for v in fetch_all(numerator, denominator))
    with np.errstate(all="ignore"):
        scores = 1 - num / den
    if force_finite:
        scores = np.where(den == 0, np.where(num == 0, 1.0, 0.0), scores)
    if isinstance(multioutput, str) and multioutput == "variance_weighted":
        if force_finite and not den.any():
            return float(np.mean(scores))
        return float(np.average(scores, weights=den))
    return _combine(scores, multioutput)
