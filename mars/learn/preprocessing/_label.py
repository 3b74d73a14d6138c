"""``LabelEncoder``: classes found by the distributed ``unique``; codes found chunk by chunk.

The sorted classes are small and live on the client; each chunk of labels
is encoded by a binary search among them (and checked for labels never
seen), so ``transform`` needs nothing from other chunks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from ... import tensor as mt
from ...tensor.core import Tensor
from ..base import as_tensor, check_fitted, fetch

__all__ = ["LabelEncoder", "as_labels"]


def as_labels(y: Any, name: str = "y") -> Tensor:
    """``y`` as a 1-d tensor of labels (a column vector is raveled, as scikit-learn's ``column_or_1d``).

    >>> as_labels([[1], [2]]).shape
    (2,)
    """
    t = as_tensor(y, dtype=None, ensure_min_samples=0, name=name)
    if t.ndim == 2 and t.shape[1] == 1:
        t = t.ravel()
    if t.ndim != 1:
        raise ValueError(f"{name} should be a 1d array, got an array of shape {tuple(t.shape)} instead.")
    return t


def encode_chunk(values: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Each value's position in the sorted ``classes``; ValueError naming the values not among them."""
    codes = np.searchsorted(classes, values)
    if values.size:
        clipped = np.minimum(codes, len(classes) - 1) if len(classes) else codes
        seen = (codes < len(classes)) & (classes[clipped] == values) if len(classes) else np.zeros(len(values), bool)
        if not seen.all():
            raise ValueError(f"y contains previously unseen labels: {np.unique(values[~seen]).tolist()}")
    return codes.astype(np.int64)


def decode_chunk(codes: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """The classes at ``codes``; ValueError naming the codes out of range."""
    bad = (codes < 0) | (codes >= len(classes))
    if bad.any():
        raise ValueError(f"y contains previously unseen labels: {np.unique(codes[bad]).tolist()}")
    return classes[codes]


class LabelEncoder(TransformerMixin, BaseEstimator):
    """Encode labels as integers ``0 .. n_classes - 1``, as ``sklearn.preprocessing.LabelEncoder``.

    >>> from mars.learn.preprocessing import LabelEncoder
    >>> le = LabelEncoder().fit(["paris", "tokyo", "paris", "amsterdam"])
    >>> le.classes_.tolist()
    ['amsterdam', 'paris', 'tokyo']
    >>> le.transform(["tokyo", "paris"]).execute().fetch()
    array([2, 1])
    """

    def fit(self, y: Any) -> LabelEncoder:
        """Find the sorted distinct labels."""
        self.classes_ = fetch(mt.unique(as_labels(y)))
        return self

    def fit_transform(self, y: Any) -> Tensor:
        """Fit, then encode ``y`` (a lazy tensor)."""
        return self.fit(y).transform(y)

    def transform(self, y: Any) -> Tensor:
        """The code of each label, a lazy int64 tensor; running it raises ValueError on labels not seen in fit."""
        check_fitted(self, "classes_")
        t = as_labels(y)
        return t.map_chunk(encode_chunk, args=(self.classes_,), dtype=np.int64)

    def inverse_transform(self, y: Any) -> Tensor:
        """The labels of codes ``y``, a lazy tensor."""
        check_fitted(self, "classes_")
        t = as_labels(y)
        return t.map_chunk(decode_chunk, args=(self.classes_,), dtype=self.classes_.dtype)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.target_tags.one_d_labels = True
        return tags
