"""mars.learn.metrics: scikit-learn's metrics on mars tensors.

Scalar metrics run and return a Python float, as scikit-learn's do (so that
scorers and ``GridSearchCV`` work); ``confusion_matrix`` and ``roc_curve``
return numpy arrays (they are small); pairwise distances are lazy tensors.

>>> from mars.learn.metrics import accuracy_score
>>> accuracy_score([1, 2, 3], [1, 2, 0])
0.6666666666666666
"""

from __future__ import annotations

from ._classification import (accuracy_score, confusion_matrix, f1_score, fbeta_score, log_loss,
                              precision_recall_fscore_support, precision_score, recall_score)
from ._ranking import auc, roc_auc_score, roc_curve
from ._regression import mean_absolute_error, mean_squared_error, r2_score, root_mean_squared_error
from .pairwise import cosine_similarity, euclidean_distances, pairwise_distances

__all__ = ["accuracy_score", "auc", "confusion_matrix", "cosine_similarity", "euclidean_distances", "f1_score",
           "fbeta_score", "log_loss", "mean_absolute_error", "mean_squared_error", "pairwise_distances",
           "precision_recall_fscore_support", "precision_score", "r2_score", "recall_score", "roc_auc_score",
           "roc_curve", "root_mean_squared_error"]
