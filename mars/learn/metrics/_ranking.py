"""``roc_curve``, ``roc_auc_score`` (binary) and ``auc``.

The distinct scores come from the distributed ``unique`` (with each sample's
position among them); the positive and negative weight at each distinct
score are ``bincount``s per chunk summed by a tree. Only those per-score
totals (as many as there are distinct scores, which the curve itself has)
reach the client, where cumulative sums give the curve.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from sklearn.exceptions import UndefinedMetricWarning

from ... import tensor as mt
from ..base import as_float, as_tensor, fetch, fetch_all
from ._classification import check_pair

__all__ = ["auc", "roc_auc_score", "roc_curve"]


def auc(x: Any, y: Any) -> float:
    """Area under a curve by the trapezoidal rule; ``x`` monotonic (increasing or decreasing).

    >>> from mars.learn.metrics import auc
    >>> auc([0., 0.5, 1.], [0., 0.75, 1.])
    0.625
    """
    x, y = (np.asarray(fetch(as_float(as_tensor(v, ensure_min_samples=0)))).ravel() for v in (x, y))
    if x.shape[0] < 2:
        raise ValueError(f"At least 2 points are needed to compute area under curve, but x.shape = {x.shape[0]}")
    if len(x) != len(y):
        raise ValueError(f"Found input variables with inconsistent numbers of samples: {[len(x), len(y)]}")
    direction = 1
    dx = np.diff(x)
    if np.any(dx < 0):
        if np.all(dx <= 0):
            direction = -1
        else:
            raise ValueError(f"x is neither increasing nor decreasing : {x}.")
    return float(direction * np.trapezoid(y, x))


def _binary_counts(y_true: Any, y_score: Any, pos_label: Any, sample_weight: Any) -> tuple[np.ndarray, ...]:
    """Distinct scores (descending) with the cumulative positive and negative weight at or above each."""
    t, s, w = check_pair(y_true, y_score, sample_weight)
    classes = fetch(mt.unique(t))
    if len(classes) > 2:
        raise ValueError("multiclass format is not supported")
    if pos_label is None:
        if classes.dtype.kind in "OUS" or not (np.isin(classes, [0, 1]).all() or np.isin(classes, [-1, 1]).all()):
            raise ValueError(f"y_true takes value in {classes.tolist()} and pos_label is not specified: either "
                             "make y_true take value in {0, 1} or {-1, 1} or pass pos_label explicitly.")
        pos_label = 1
    positive = (t == pos_label).astype(np.float64)
    weight = 1.0 if w is None else w
    scores, where = mt.unique(s, return_inverse=True)
    pos = mt.bincount(where, weights=positive * weight)
    neg = mt.bincount(where, weights=(1 - positive) * weight)
    scores, pos, neg = fetch_all(scores, pos, neg)
    return scores[::-1], np.cumsum(pos[::-1]), np.cumsum(neg[::-1])


def roc_curve(y_true: Any, y_score: Any, *, pos_label: Any = None, sample_weight: Any = None,
              drop_intermediate: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(fpr, tpr, thresholds)`` of a binary classifier's scores, as scikit-learn (numpy arrays).

    >>> from mars.learn.metrics import roc_curve
    >>> fpr, tpr, thresholds = roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> fpr.tolist(), tpr.tolist()
    ([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0])
    """
    thresholds, tps, fps = _binary_counts(y_true, y_score, pos_label, sample_weight)
    if drop_intermediate and len(fps) > 2:
        keep = np.flatnonzero(np.r_[True, np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), True])
        thresholds, tps, fps = thresholds[keep], tps[keep], fps[keep]
    tps, fps = np.r_[0, tps], np.r_[0, fps]
    thresholds = np.r_[np.inf, thresholds]
    fpr = _rate(fps, "No negative samples in y_true, false positive value should be meaningless")
    tpr = _rate(tps, "No positive samples in y_true, true positive value should be meaningless")
    return fpr, tpr, thresholds


def _rate(counts: np.ndarray, message: str) -> np.ndarray:
    if counts[-1] <= 0:
        warnings.warn(message, UndefinedMetricWarning, stacklevel=3)
        return np.repeat(np.nan, counts.shape)
    return counts / counts[-1]


def roc_auc_score(y_true: Any, y_score: Any, *, average: Any = "macro", sample_weight: Any = None,
                  max_fpr: Any = None, multi_class: str = "raise", labels: Any = None) -> float:
    """Area under the ROC curve of a binary target (standardized partial AUC with ``max_fpr``), as scikit-learn.

    Multiclass and multilabel targets are not offered (NotImplementedError).

    >>> from mars.learn.metrics import roc_auc_score
    >>> roc_auc_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    score = as_tensor(y_score, name="y_score")
    if score.ndim == 2 and score.shape[1] == 2:
        score = score[:, 1]
    elif score.ndim != 1:
        raise NotImplementedError("roc_auc_score offers binary targets only; multiclass ('ovr'/'ovo') and "
                                  "multilabel targets are not offered")
    classes = fetch(mt.unique(as_tensor(y_true, dtype=None, name="y_true")))
    if len(classes) > 2:
        raise NotImplementedError("roc_auc_score offers binary targets only; multiclass is not offered")
    if len(classes) != 2:
        warnings.warn("Only one class is present in y_true. ROC AUC score is not defined in that case.",
                      UndefinedMetricWarning, stacklevel=2)
        return float("nan")
    if max_fpr is not None and not 0 < max_fpr <= 1:
        raise ValueError(f"Expected max_fpr in range (0, 1], got: {max_fpr}")
    # labels other than {0, 1} / {-1, 1}: the larger one is positive, as scikit-learn's label binarizer does
    fpr, tpr, _ = roc_curve(y_true, score, pos_label=classes[-1], sample_weight=sample_weight)
    if max_fpr is None or max_fpr == 1:
        return auc(fpr, tpr)
    stop = np.searchsorted(fpr, max_fpr, "right")
    x_pair, y_pair = [fpr[stop - 1], fpr[stop]], [tpr[stop - 1], tpr[stop]]
    tpr = np.append(tpr[:stop], np.interp(max_fpr, x_pair, y_pair))
    fpr = np.append(fpr[:stop], max_fpr)
    partial = auc(fpr, tpr)
    min_area, max_area = 0.5 * max_fpr ** 2, max_fpr
    return float(0.5 * (1 + (partial - min_area) / (max_area - min_area)))
