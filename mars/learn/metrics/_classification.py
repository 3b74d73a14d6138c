"""Classification metrics: counts per chunk, summed by tree reductions; the small tables meet on the client.

``confusion_matrix`` encodes each chunk's (true, predicted) pairs as one
integer and counts them with ``mt.bincount`` (per chunk, then summed);
precision, recall and F-scores are read off that matrix. Scalar metrics run
their expression and return a Python float, as scikit-learn's do (so that
scorers and ``GridSearchCV`` can compare them).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from sklearn.exceptions import UndefinedMetricWarning

from ... import tensor as mt
from ...tensor.core import Tensor
from ..base import as_float, as_tensor, fetch, fetch_all
from ..preprocessing._label import as_labels

__all__ = ["accuracy_score", "confusion_matrix", "f1_score", "fbeta_score", "log_loss", "precision_recall_fscore_support",
           "precision_score", "recall_score"]

_AVERAGES = (None, "binary", "micro", "macro", "weighted", "samples")


def check_pair(y_true: Any, y_pred: Any, sample_weight: Any = None) -> tuple[Tensor, Tensor, Tensor | None]:
    """Both label vectors (and the weights) as 1-d tensors of one length."""
    t, p = as_labels(y_true, "y_true"), as_labels(y_pred, "y_pred")
    w = None if sample_weight is None else as_float(as_tensor(sample_weight, name="sample_weight"))
    lengths = {int(x.shape[0]) for x in (t, p, w) if x is not None and not math.isnan(x.shape[0])}
    if len(lengths) > 1:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: {sorted(lengths)}")
    return t, p, w


def _codes(values: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Each value's index in the sorted ``labels``, -1 for values that are not among them."""
    if not len(labels):
        return np.full(len(values), -1, np.int64)
    pos = np.searchsorted(labels, values)
    clipped = np.minimum(pos, len(labels) - 1)
    return np.where((pos < len(labels)) & (labels[clipped] == values), clipped, -1).astype(np.int64)


def _confusion_counts(t: Tensor, p: Tensor, w: Tensor | None, labels: np.ndarray) -> np.ndarray:
    """The ``L x L`` matrix of (weighted) counts, labels in their given order (runs the count)."""
    order = np.argsort(labels, kind="stable")
    ranked = labels[order]
    k = len(labels)
    ti = t.map_chunk(_codes, args=(ranked,), dtype=np.int64)
    pi = p.map_chunk(_codes, args=(ranked,), dtype=np.int64)
    pair = mt.where((ti >= 0) & (pi >= 0), ti * k + pi, k * k)  # pairs outside the labels land in a spare bin
    counts = fetch(mt.bincount(pair, weights=w, minlength=k * k + 1))[: k * k].reshape(k, k)
    back = np.argsort(order)  # from sorted positions to the labels' given order
    return counts[back][:, back]


def _labels_of(t: Tensor, p: Tensor, labels: Any) -> np.ndarray:
    if labels is not None:
        return np.asarray(labels)
    return fetch(mt.unique(mt.concatenate([t, p.astype(t.dtype) if t.dtype.kind == p.dtype.kind else p])))


def accuracy_score(y_true: Any, y_pred: Any, *, normalize: bool = True, sample_weight: Any = None) -> float:
    """The fraction (or with ``normalize=False`` the number) of correct predictions, as scikit-learn.

    >>> from mars.learn.metrics import accuracy_score
    >>> accuracy_score([0, 1, 2, 3], [0, 2, 1, 3])
    0.5
    """
    t, p, w = check_pair(y_true, y_pred, sample_weight)
    right = (t == p).astype(np.float64)
    if w is None:
        value = right.mean() if normalize else right.sum()
    else:
        value = (right * w).sum() / w.sum() if normalize else (right * w).sum()
    return float(fetch(value))


def confusion_matrix(y_true: Any, y_pred: Any, *, labels: Any = None, sample_weight: Any = None,
                     normalize: str | None = None) -> np.ndarray:
    """The confusion matrix (numpy: it is ``n_labels x n_labels``), as scikit-learn.

    >>> from mars.learn.metrics import confusion_matrix
    >>> confusion_matrix([2, 0, 2, 2, 0, 1], [0, 0, 2, 2, 0, 2])
    array([[2, 0, 0],
           [0, 0, 1],
           [1, 0, 2]])
    """
    if normalize not in (None, "true", "pred", "all"):
        raise ValueError("normalize must be one of {'true', 'pred', 'all', None}")
    t, p, w = check_pair(y_true, y_pred, sample_weight)
    found = _labels_of(t, p, labels)
    if labels is not None:
        if not len(found):
            raise ValueError("'labels' should contains at least one label.")
        present = fetch(mt.unique(t))
        if not np.isin(found, present).any():
            raise ValueError("At least one label specified must be in y_true")
    cm = _confusion_counts(t, p, w, found)
    cm = cm.astype(np.int64) if w is None or w.dtype.kind in "iub" else cm
    if normalize is None:
        return cm
    with np.errstate(all="ignore"):
        if normalize == "true":
            cm = cm / cm.sum(axis=1, keepdims=True)
        elif normalize == "pred":
            cm = cm / cm.sum(axis=0, keepdims=True)
        else:
            cm = cm / cm.sum()
    return np.nan_to_num(cm)


def _fill(zero_division: Any) -> float:
    """The value an undefined ratio takes: 0 for 'warn' (with a warning), else ``zero_division`` (0, 1 or NaN)."""
    return 0.0 if isinstance(zero_division, str) else float(zero_division)


def _divide(num: np.ndarray, den: np.ndarray, zero_division: Any, what: str, why: str) -> np.ndarray:
    with np.errstate(all="ignore"):
        out = num / den
    bad = den == 0
    if bad.any():
        fill = _fill(zero_division)
        out[bad] = fill
        if zero_division == "warn":
            warnings.warn(f"{what} is ill-defined and being set to 0.0 in labels with no {why} samples. "
                          "Use `zero_division` parameter to control this behavior.", UndefinedMetricWarning,
                          stacklevel=4)
    return out


def _selected_labels(t: Tensor, p: Tensor, labels: Any, average: Any, pos_label: Any) -> tuple[np.ndarray, ...]:
    present = _labels_of(t, p, None)
    if average == "binary":
        if len(present) > 2:
            raise ValueError(f"Target is multiclass but average='binary'. Please choose another average setting, "
                             f"one of {[None, 'micro', 'macro', 'weighted']}.")
        if pos_label not in present and len(present) >= 2:
            raise ValueError(f"pos_label={pos_label!r} is not a valid label. It should be one of {present.tolist()}")
        return present, np.asarray([pos_label])
    if labels is None:
        return present, present
    labels = np.asarray(labels)
    return np.union1d(present, labels) if len(labels) else present, labels


def precision_recall_fscore_support(y_true: Any, y_pred: Any, *, beta: float = 1.0, labels: Any = None,
                                    pos_label: Any = 1, average: Any = None, warn_for: Any = ("precision", "recall",
                                                                                                "f-score"),
                                    sample_weight: Any = None, zero_division: Any = "warn") -> tuple:
    """Precision, recall, F-beta and support per label or averaged, as scikit-learn (binary/multiclass targets).

    >>> from mars.learn.metrics import precision_recall_fscore_support
    >>> p, r, f, s = precision_recall_fscore_support([0, 1, 1, 0], [0, 1, 0, 0], average="macro")
    >>> round(p, 4), round(r, 4), s is None
    (0.8333, 0.75, True)
    """
    if average not in _AVERAGES:
        raise ValueError(f"average has to be one of {_AVERAGES}")
    if average == "samples":
        raise NotImplementedError("average='samples' is for multilabel targets, which mars.learn does not offer")
    if beta < 0:
        raise ValueError("beta should be >=0 in the F-beta score")
    t, p, w = check_pair(y_true, y_pred, sample_weight)
    all_labels, chosen = _selected_labels(t, p, labels, average, pos_label)
    if average == "binary" and pos_label not in all_labels:  # only one class present, and it is not pos_label
        all_labels = np.union1d(all_labels, chosen)
    cm = _confusion_counts(t, p, w, all_labels).astype(np.float64)
    idx = np.searchsorted(all_labels, chosen)
    tp, true_sum, pred_sum = np.diag(cm)[idx], cm.sum(axis=1)[idx], cm.sum(axis=0)[idx]
    if average == "micro":
        tp, true_sum, pred_sum = np.array([tp.sum()]), np.array([true_sum.sum()]), np.array([pred_sum.sum()])
    precision = _divide(tp, pred_sum, zero_division, "Precision", "predicted")
    recall = _divide(tp, true_sum, zero_division, "Recall", "true")
    b2 = beta * beta
    denom = b2 * precision + recall
    with np.errstate(all="ignore"):
        f = np.where(denom == 0, 0.0, (1 + b2) * precision * recall / denom)
    f[(pred_sum == 0) & (true_sum == 0)] = _fill(zero_division)  # no true and no predicted samples
    if average is None:
        return precision, recall, f, true_sum.astype(np.int64) if w is None else true_sum
    if average == "weighted":
        weights = true_sum
        if weights.sum() == 0:
            zero = _fill(zero_division)
            return zero, zero, zero, None
    else:
        weights = None
    return (float(_average(precision, weights)), float(_average(recall, weights)), float(_average(f, weights)),
            None)


def _average(values: np.ndarray, weights: np.ndarray | None) -> float:
    if np.isnan(values).all():
        return float("nan")
    keep = ~np.isnan(values)
    return float(np.average(values[keep], weights=None if weights is None else weights[keep]))


def _one_score(which: int, y_true: Any, y_pred: Any, beta: float, labels: Any, pos_label: Any, average: Any,
               sample_weight: Any, zero_division: Any) -> Any:
    return precision_recall_fscore_support(y_true, y_pred, beta=beta, labels=labels, pos_label=pos_label,
                                           average=average, sample_weight=sample_weight,
                                           zero_division=zero_division)[which]


def precision_score(y_true: Any, y_pred: Any, *, labels: Any = None, pos_label: Any = 1, average: Any = "binary",
                    sample_weight: Any = None, zero_division: Any = "warn") -> Any:
    """Precision ``tp / (tp + fp)``, as scikit-learn (a float, or an array with ``average=None``).

    >>> from mars.learn.metrics import precision_score
    >>> precision_score([0, 1, 1, 0], [1, 1, 1, 0])
    0.6666666666666666
    """
    return _one_score(0, y_true, y_pred, 1.0, labels, pos_label, average, sample_weight, zero_division)


def recall_score(y_true: Any, y_pred: Any, *, labels: Any = None, pos_label: Any = 1, average: Any = "binary",
                 sample_weight: Any = None, zero_division: Any = "warn") -> Any:
    """Recall ``tp / (tp + fn)``, as scikit-learn.

    >>> from mars.learn.metrics import recall_score
    >>> recall_score([0, 1, 1, 0], [1, 1, 0, 0])
    0.5
    """
    return _one_score(1, y_true, y_pred, 1.0, labels, pos_label, average, sample_weight, zero_division)


def fbeta_score(y_true: Any, y_pred: Any, *, beta: float, labels: Any = None, pos_label: Any = 1,
                average: Any = "binary", sample_weight: Any = None, zero_division: Any = "warn") -> Any:
    """The F-beta score, as scikit-learn.

    >>> from mars.learn.metrics import fbeta_score
    >>> round(fbeta_score([0, 1, 1, 0], [1, 1, 0, 0], beta=2), 4)
    0.5
    """
    return _one_score(2, y_true, y_pred, beta, labels, pos_label, average, sample_weight, zero_division)


def f1_score(y_true: Any, y_pred: Any, *, labels: Any = None, pos_label: Any = 1, average: Any = "binary",
             sample_weight: Any = None, zero_division: Any = "warn") -> Any:
    """The F1 score, the harmonic mean of precision and recall, as scikit-learn.

    >>> from mars.learn.metrics import f1_score
    >>> f1_score([0, 1, 2, 0, 1, 2], [0, 2, 1, 0, 0, 1], average="micro")
    0.3333333333333333
    """
    return _one_score(2, y_true, y_pred, 1.0, labels, pos_label, average, sample_weight, zero_division)


def log_loss(y_true: Any, y_pred: Any, *, normalize: bool = True, sample_weight: Any = None,
             labels: Any = None) -> float:
    """Cross-entropy of probabilities ``y_pred`` (``n x n_classes``, or the positive class's) given ``y_true``.

    >>> from mars.learn.metrics import log_loss
    >>> round(log_loss(["spam", "ham", "ham", "spam"], [[.1, .9], [.9, .1], [.8, .2], [.35, .65]]), 6)
    0.216162
    """
    t = as_labels(y_true, "y_true")
    prob = as_float(as_tensor(y_pred, name="y_pred"))
    if prob.ndim == 1:
        prob = prob[:, None]
    if prob.shape[1] == 1:
        prob = mt.concatenate([1 - prob, prob], axis=1)
    classes = np.asarray(labels) if labels is not None else fetch(mt.unique(t))
    classes = np.sort(classes)
    if len(classes) == 1:
        raise ValueError(f"y_true contains only one label ({classes[0]}). Please provide the list of all expected "
                         "labels explicitly through the labels argument.")
    if len(classes) != prob.shape[1]:
        raise ValueError(f"y_true and y_pred contain different number of classes: {len(classes)} vs "
                         f"{prob.shape[1]}. Please provide the true labels explicitly through the labels argument."
                         f" Classes found in y_true: {classes}")
    codes = t.map_chunk(_codes, args=(classes,), dtype=np.int64)
    eps = np.finfo(prob.dtype).eps
    onehot = codes[:, None] == mt.arange(len(classes))[None, :]
    loss = -mt.where(onehot, mt.log(mt.clip(prob, eps, 1 - eps)), 0.0).sum(axis=1)
    w = None if sample_weight is None else as_float(as_tensor(sample_weight, name="sample_weight"))
    total = loss.sum() if w is None else (loss * w).sum()
    scale = loss.shape[0] if w is None else w.sum()
    lo, hi, sums_ok, unknown, total, scale = fetch_all(
        prob.min(), prob.max(), mt.all(mt.abs(prob.sum(axis=1) - 1) <= math.sqrt(eps)), (codes < 0).any(),
        total, scale)
    if hi > 1:
        raise ValueError(f"y_prob contains values greater than 1: {hi}")
    if lo < 0:
        raise ValueError(f"y_prob contains values lower than 0: {lo}")
    if unknown:
        raise ValueError(f"y_true contains values not belonging to the passed labels {classes.tolist()}.")
    if not sums_ok:
        warnings.warn("The y_prob values do not sum to one. Make sure to pass probabilities.", UserWarning,
                      stacklevel=2)
    return float(total / scale) if normalize else float(total)
