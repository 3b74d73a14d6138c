"""``OneHotEncoder``: categories by the distributed ``unique`` per column; indicators chunk by chunk.

Each feature is a 1-d tensor of its own dtype (a frame's columns keep
theirs). ``fit`` runs one ``unique`` per feature together; ``transform``
turns each chunk of a feature into its indicator block by a binary search
among that feature's (small, sorted) categories, and the blocks are joined
side by side. Output is a dense mars tensor: sparse output is not offered.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin

from ... import tensor as mt
from ...dataframe import core as dfcore
from ...tensor.core import Tensor
from ..base import as_tensor, check_fitted, fetch_all

__all__ = ["OneHotEncoder"]


def feature_columns(estimator: Any, X: Any, reset: bool) -> list[Tensor]:
    """``X``'s features as 1-d tensors, each in its own dtype; records or checks the feature count and names."""
    if isinstance(X, (pd.DataFrame, dfcore.DataFrame)):
        names = list(X.columns)
        cols = [as_tensor(X[c] if isinstance(X, dfcore.DataFrame) else X[c].to_numpy(), dtype=None,
                          allow_nan=True, name="X") for c in names]
    else:
        t = as_tensor(X, dtype=None, ensure_2d=True, allow_nan=True)
        names = None
        cols = [t[:, j] for j in range(int(t.shape[1]))]
    str_names = names is not None and all(isinstance(c, str) for c in names)
    if reset:
        estimator.n_features_in_ = len(cols)
        if str_names:
            estimator.feature_names_in_ = np.asarray(names, dtype=object)
        else:
            estimator.__dict__.pop("feature_names_in_", None)
    elif len(cols) != estimator.n_features_in_:
        raise ValueError(f"X has {len(cols)} features, but {type(estimator).__name__} is expecting "
                         f"{estimator.n_features_in_} features as input.")
    return cols


def _positions(values: np.ndarray, cats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each value's index among the sorted ``cats``, and whether it is one of them."""
    if not len(cats):
        return np.zeros(len(values), np.int64), np.zeros(len(values), bool)
    codes = np.searchsorted(cats, values)
    clipped = np.minimum(codes, len(cats) - 1)
    return clipped, (codes < len(cats)) & (cats[clipped] == values)


def indicator_block(values: np.ndarray, cats: np.ndarray, drop: int, handle_unknown: str, column: int,
                    dtype: np.dtype) -> np.ndarray:
    """The one-hot block of one chunk of a feature (``values`` of shape ``(n, 1)``); column ``drop`` removed."""
    values = values[:, 0]
    codes, known = _positions(values, cats)
    if handle_unknown == "error" and not known.all():
        raise ValueError(f"Found unknown categories {np.unique(values[~known]).tolist()} in column {column} "
                         "during transform")
    out = np.zeros((len(values), len(cats)), dtype=dtype)
    out[np.flatnonzero(known), codes[known]] = 1
    return np.delete(out, drop, axis=1) if drop >= 0 else out


def decode_block(block: np.ndarray, cats: np.ndarray, drop: int) -> np.ndarray:
    """The categories of one chunk's indicator block (``None`` where a row has no indicator set), as ``(n, 1)``."""
    n = len(cats) - (drop >= 0)
    kept = np.delete(np.arange(len(cats)), drop) if drop >= 0 else np.arange(len(cats))
    out = np.empty((len(block), 1), dtype=object)
    hot = block[:, :n].argmax(axis=1) if n else np.zeros(len(block), np.int64)
    has = block[:, :n].max(axis=1) > 0 if n else np.zeros(len(block), bool)
    out[has, 0] = cats[kept[hot[has]]]
    out[~has, 0] = cats[drop] if drop >= 0 else None
    return out


class OneHotEncoder(TransformerMixin, BaseEstimator):
    """Encode categorical features as a dense one-hot tensor, as ``sklearn.preprocessing.OneHotEncoder``.

    Differences: ``sparse_output`` defaults to False and True is refused
    (the result is a dense mars tensor); ``min_frequency``/``max_categories``
    (infrequent categories) are not offered.

    >>> from mars.learn.preprocessing import OneHotEncoder
    >>> enc = OneHotEncoder().fit([["a", 1], ["b", 3], ["a", 2]])
    >>> [c.tolist() for c in enc.categories_]
    [['a', 'b'], ['1', '2', '3']]
    >>> enc.transform([["b", 3]]).execute().fetch()
    array([[0., 1., 0., 0., 1.]])
    """

    def __init__(self, *, categories: Any = "auto", drop: Any = None, sparse_output: bool = False,
                 dtype: Any = np.float64, handle_unknown: str = "error", min_frequency: Any = None,
                 max_categories: Any = None, feature_name_combiner: Any = "concat"):
        self.categories = categories
        self.drop = drop
        self.sparse_output = sparse_output
        self.dtype = dtype
        self.handle_unknown = handle_unknown
        self.min_frequency = min_frequency
        self.max_categories = max_categories
        self.feature_name_combiner = feature_name_combiner

    def _check_params(self) -> None:
        if self.sparse_output:
            raise NotImplementedError("sparse output is not offered by mars.learn's OneHotEncoder; "
                                      "use sparse_output=False (a dense mars tensor)")
        if self.min_frequency is not None or self.max_categories is not None:
            raise NotImplementedError("infrequent categories (min_frequency, max_categories) are not offered; "
                                      "leave them None")
        if self.handle_unknown not in ("error", "ignore"):
            raise ValueError(f"handle_unknown should be 'error' or 'ignore', got {self.handle_unknown!r}")

    def fit(self, X: Any, y: Any = None) -> OneHotEncoder:
        """Find each feature's categories."""
        self._check_params()
        cols = feature_columns(self, X, reset=True)
        if isinstance(self.categories, str) and self.categories == "auto":
            self.categories_ = [np.asarray(c) for c in fetch_all(*(mt.unique(c) for c in cols))]
        else:
            self.categories_ = self._given_categories(cols)
        self.drop_idx_ = self._drop_indices()
        return self

    def _given_categories(self, cols: list[Tensor]) -> list[np.ndarray]:
        if len(self.categories) != len(cols):
            raise ValueError(f"Shape mismatch: if categories is an array, it has to be of shape "
                             f"(n_features,); got {len(self.categories)} categories for {len(cols)} features")
        cats = [np.asarray(c) for c in self.categories]
        for j, c in enumerate(cats):
            if c.dtype.kind != "O" and not (np.sort(c) == c).all():
                raise ValueError(f"Unsorted categories are not supported for numerical categories: column {j}")
        if self.handle_unknown == "error":
            found = fetch_all(*(mt.unique(c) for c in cols))
            for j, (seen, c) in enumerate(zip(found, cats)):
                unknown = np.setdiff1d(np.asarray(seen), c)
                if len(unknown):
                    raise ValueError(f"Found unknown categories {unknown.tolist()} in column {j} during fit")
        return cats

    def _drop_indices(self) -> np.ndarray | None:
        if self.drop is None:
            return None
        if isinstance(self.drop, str) and self.drop == "first":
            return np.zeros(len(self.categories_), dtype=object)
        if isinstance(self.drop, str) and self.drop == "if_binary":
            return np.array([0 if len(c) == 2 else None for c in self.categories_], dtype=object)
        if isinstance(self.drop, str):
            raise ValueError(f"Wrong input for parameter `drop`. Expected 'first', 'if_binary', None or "
                             f"array of objects, got {self.drop!r}")
        drop = np.asarray(self.drop, dtype=object)
        if drop.shape != (len(self.categories_),):
            raise ValueError(f"`drop` should have length equal to the number of features ({len(self.categories_)})"
                             f", got {drop.shape[0] if drop.ndim else drop!r}")
        out = []
        for j, (value, cats) in enumerate(zip(drop, self.categories_)):
            where = np.flatnonzero(cats == value) if value is not None else []
            if value is not None and not len(where):
                raise ValueError(f"The following categories were supposed to be dropped, but were not found in "
                                 f"the training data.\nCategory: {value}, Feature: {j}")
            out.append(int(where[0]) if value is not None else None)
        return np.array(out, dtype=object)

    def _drop_of(self, j: int) -> int:
        drop = None if self.drop_idx_ is None else self.drop_idx_[j]
        return -1 if drop is None else int(drop)

    def transform(self, X: Any) -> Tensor:
        """The one-hot indicators, a lazy dense tensor of ``dtype``; unknown categories give all zeros with
        ``handle_unknown='ignore'``, and a ValueError when the result is run with 'error'."""
        check_fitted(self, "categories_")
        cols = feature_columns(self, X, reset=False)
        dtype = np.dtype(self.dtype)
        blocks = []
        for j, (col, cats) in enumerate(zip(cols, self.categories_)):
            drop = self._drop_of(j)
            width = len(cats) - (drop >= 0)
            blocks.append(col[:, None].map_chunk(indicator_block, args=(cats, drop, self.handle_unknown, j, dtype),
                                                 dtype=dtype, shape=(col.shape[0], width)))
        return mt.concatenate(blocks, axis=1) if len(blocks) > 1 else blocks[0]

    def inverse_transform(self, X: Any) -> Tensor:
        """The categories back from indicators, a lazy object tensor (None for rows with no indicator)."""
        check_fitted(self, "categories_")
        x = as_tensor(X, ensure_2d=True)
        widths = [len(c) - (self._drop_of(j) >= 0) for j, c in enumerate(self.categories_)]
        if x.shape[1] != sum(widths):
            raise ValueError(f"Shape of the passed X data is not correct. Expected {sum(widths)} columns, "
                             f"got {x.shape[1]}.")
        starts = np.concatenate([[0], np.cumsum(widths)])
        cols = []
        for j, cats in enumerate(self.categories_):
            block = x[:, int(starts[j]):int(starts[j + 1])].rechunk({1: max(widths[j], 1)})
            cols.append(block.map_chunk(decode_block, args=(cats, self._drop_of(j)), dtype=object,
                                        shape=(x.shape[0], 1)))
        return mt.concatenate(cols, axis=1) if len(cols) > 1 else cols[0]

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Output names ``<feature>_<category>``, as scikit-learn."""
        check_fitted(self, "categories_")
        names = _input_names(self, input_features)
        combine = self.feature_name_combiner
        out = []
        for j, (name, cats) in enumerate(zip(names, self.categories_)):
            drop = self._drop_of(j)
            out += [f"{name}_{c}" if combine == "concat" else combine(name, c)
                    for k, c in enumerate(cats) if k != drop]
        return np.asarray(out, dtype=object)


def _input_names(estimator: Any, input_features: Any) -> list[str]:
    fitted = getattr(estimator, "feature_names_in_", None)
    if input_features is None:
        if fitted is not None:
            return list(fitted)
        return [f"x{j}" for j in range(estimator.n_features_in_)]
    names = list(input_features)
    if fitted is not None and names != list(fitted):
        raise ValueError("input_features is not equal to feature_names_in_")
    if len(names) != estimator.n_features_in_:
        raise ValueError(f"input_features should have length equal to number of features "
                         f"({estimator.n_features_in_}), got {len(names)}")
    return names
