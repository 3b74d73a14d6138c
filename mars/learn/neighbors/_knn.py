"""``NearestNeighbors``, ``KNeighborsClassifier`` and ``KNeighborsRegressor`` by blocked brute force.

Fitting keeps the training rows (executed, in their chunks); ``kneighbors``
returns lazy (distances, indices); predictions vote (or average) over the
neighbours' targets chunk by chunk.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MultiOutputMixin,
    RegressorMixin,
)

from .. import base as learn_base
from .._rowops import row_map
from ..base import as_tensor, check_fitted, fetch, validate_data
from ._brute import kneighbors_graph_parts

#: scikit-learn's metric names → (scipy's name, its keyword arguments from p)
_METRICS = {"euclidean": "euclidean", "l2": "euclidean", "manhattan": "cityblock", "cityblock": "cityblock",
            "l1": "cityblock", "chebyshev": "chebyshev", "infinity": "chebyshev", "cosine": "cosine",
            "sqeuclidean": "sqeuclidean", "minkowski": "minkowski"}


def _drop_self(start: int, dist: np.ndarray, ind: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each training row's neighbours without itself (its first own entry, else the farthest)."""
    own = ind == np.arange(start, start + len(ind))[:, None]
    drop = np.where(own.any(axis=1), own.argmax(axis=1), ind.shape[1] - 1)
    keep = np.ones(ind.shape, bool)
    keep[np.arange(len(ind)), drop] = False
    return dist[keep].reshape(len(ind), k), ind[keep].reshape(len(ind), k)


def _weights(dist: np.ndarray, weights: str) -> np.ndarray:
    if weights == "uniform":
        return np.ones_like(dist)
    with np.errstate(divide="ignore"):
        w = 1.0 / dist
    exact = np.isinf(w)
    rows = exact.any(axis=1)
    w[rows] = exact[rows]  # a query equal to training rows: those rows alone decide, as scikit-learn
    return w


def _class_scores(ind: np.ndarray, dist: np.ndarray, y: np.ndarray, n_classes: int, weights: str) -> np.ndarray:
    w = _weights(dist, weights)
    scores = np.zeros((len(ind), n_classes))
    rows = np.repeat(np.arange(len(ind)), ind.shape[1])
    np.add.at(scores, (rows, y[ind].ravel()), w.ravel())
    return scores


def _vote_chunk(start: int, ind: np.ndarray, dist: np.ndarray, y: np.ndarray, classes: np.ndarray,
                weights: str) -> np.ndarray:
    return classes[_class_scores(ind, dist, y, len(classes), weights).argmax(axis=1)]


def _proba_chunk(start: int, ind: np.ndarray, dist: np.ndarray, y: np.ndarray, n_classes: int,
                 weights: str) -> np.ndarray:
    scores = _class_scores(ind, dist, y, n_classes, weights)
    return scores / scores.sum(axis=1, keepdims=True)


def _mean_chunk(start: int, ind: np.ndarray, dist: np.ndarray, y: np.ndarray, weights: str) -> np.ndarray:
    w = _weights(dist, weights)
    values = y[ind]  # (n, k) or (n, k, n_targets)
    if values.ndim == 3:
        w = w[:, :, None]
    return (values * w).sum(axis=1) / w.sum(axis=1)


class _NeighborsBase(BaseEstimator):
    def _init_params(self, n_neighbors: int, algorithm: str, leaf_size: int, metric: str, p: float,
                     metric_params: Any, n_jobs: Any) -> None:
        self.n_neighbors = n_neighbors
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.metric = metric
        self.p = p
        self.metric_params = metric_params
        self.n_jobs = n_jobs

    def _resolve_metric(self) -> tuple[str, dict]:
        if self.algorithm not in ("auto", "brute"):
            raise NotImplementedError(f"algorithm={self.algorithm!r} is not implemented; use 'brute' (or 'auto')")
        if not isinstance(self.metric, str) or self.metric not in _METRICS:
            raise ValueError(f"metric {self.metric!r} is not supported; use one of {sorted(_METRICS)}")
        kwargs = dict(self.metric_params or {})
        metric = _METRICS[self.metric]
        if metric == "minkowski":
            p = kwargs.pop("p", self.p)
            if p is None or p < 1:
                raise ValueError(f"p must be at least 1 for the minkowski metric, got {p!r}")
            metric, kwargs = ("euclidean", {}) if p == 2 else ("minkowski", {"p": float(p)})
        return metric, kwargs

    def _fit_data(self, X: Any) -> Any:
        self._metric_args = self._resolve_metric()
        self._fit_X = validate_data(self, X, reset=True, dtype=np.float64).execute()
        self.n_samples_fit_ = int(self._fit_X.shape[0])
        self.effective_metric_ = self._metric_args[0]
        self.effective_metric_params_ = dict(self._metric_args[1])
        return self._fit_X

    def kneighbors(self, X: Any = None, n_neighbors: int | None = None, return_distance: bool = True) -> Any:
        """Each query row's nearest training rows: lazy ``(distances, indices)`` (or the indices alone).

        ``X=None`` queries the training rows, each without itself, as scikit-learn.
        """
        check_fitted(self, "_fit_X")
        k = self.n_neighbors if n_neighbors is None else n_neighbors
        if not isinstance(k, numbers.Integral) or isinstance(k, bool) or k <= 0:
            raise ValueError(f"Expected n_neighbors > 0. Got {k!r}")
        query = self._fit_X if X is None else validate_data(self, X, reset=False, dtype=np.float64)
        n_fit = self.n_samples_fit_ - (X is None)
        if k > n_fit:
            raise ValueError(f"Expected n_neighbors <= n_samples_fit, but n_neighbors = {k}, "
                             f"n_samples_fit = {self.n_samples_fit_}, n_samples = {int(query.shape[0])}")
        metric, kwargs = self._metric_args
        dist, ind = kneighbors_graph_parts(query, self._fit_X, k + (X is None), metric, kwargs)
        if X is None:
            dist, ind = row_map(_drop_self, dist, aligned=[ind], args=(k,),
                                outs=[((k,), np.float64), ((k,), np.int64)])
        return (dist, ind) if return_distance else ind


class NearestNeighbors(_NeighborsBase):
    """Unsupervised nearest neighbours by blocked brute force, scikit-learn's ``NearestNeighbors`` API.

    >>> import numpy as np
    >>> nn = NearestNeighbors(n_neighbors=2).fit(np.array([[0.], [1.], [3.]]))
    >>> nn.kneighbors(np.array([[2.9]]), return_distance=False).fetch()
    array([[2, 1]])
    """

    def __init__(self, *, n_neighbors: int = 5, radius: float = 1.0, algorithm: str = "auto", leaf_size: int = 30,
                 metric: str = "minkowski", p: float = 2, metric_params: Any = None, n_jobs: Any = None):
        self._init_params(n_neighbors, algorithm, leaf_size, metric, p, metric_params, n_jobs)
        self.radius = radius

    def fit(self, X: Any, y: Any = None) -> NearestNeighbors:
        self._fit_data(X)
        return self

    def radius_neighbors(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("radius_neighbors is not implemented; use kneighbors, or scikit-learn's "
                                  "NearestNeighbors on a sample")


class KNeighborsClassifier(ClassifierMixin, _NeighborsBase):
    """Classification by the k nearest training rows' vote, scikit-learn's ``KNeighborsClassifier`` API.

    >>> import numpy as np
    >>> clf = KNeighborsClassifier(n_neighbors=3).fit(np.array([[0.], [1.], [2.], [3.]]), ["a", "a", "b", "b"])
    >>> clf.predict(np.array([[1.1]])).fetch()
    array(['a'], dtype='<U1')
    """

    def __init__(self, n_neighbors: int = 5, *, weights: str = "uniform", algorithm: str = "auto",
                 leaf_size: int = 30, p: float = 2, metric: str = "minkowski", metric_params: Any = None,
                 n_jobs: Any = None):
        self._init_params(n_neighbors, algorithm, leaf_size, metric, p, metric_params, n_jobs)
        self.weights = weights

    def fit(self, X: Any, y: Any) -> KNeighborsClassifier:
        _check_weights(self.weights)
        x = self._fit_data(X)
        y_local = np.asarray(fetch(as_tensor(y, dtype=None, name="y")))
        if y_local.ndim != 1 or len(y_local) != x.shape[0]:
            raise ValueError(f"y should be a 1d array with {int(x.shape[0])} values, got shape {y_local.shape}")
        self.classes_, encoded = np.unique(y_local, return_inverse=True)
        self._y = as_tensor(encoded.astype(np.int64)).execute()
        self.outputs_2d_ = False
        return self

    def predict(self, X: Any) -> Any:
        """The class with the most (weighted) votes among each row's neighbours, a lazy tensor."""
        dist, ind = self.kneighbors(X)
        return row_map(_vote_chunk, ind, aligned=[dist], whole=[self._y], args=(self.classes_, self.weights),
                       outs=[((), self.classes_.dtype)])[0]

    def predict_proba(self, X: Any) -> Any:
        """The (weighted) share of each class among each row's neighbours, a lazy tensor."""
        dist, ind = self.kneighbors(X)
        return row_map(_proba_chunk, ind, aligned=[dist], whole=[self._y], args=(len(self.classes_), self.weights),
                       outs=[((len(self.classes_),), np.float64)])[0]

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        hits = (self.predict(X) == as_tensor(y, dtype=None, name="y")).astype(np.float64)
        if sample_weight is None:
            return learn_base.to_float(hits.mean())
        w = as_tensor(sample_weight, dtype=np.float64, name="sample_weight")
        return learn_base.to_float((hits * w).sum() / w.sum())


class KNeighborsRegressor(MultiOutputMixin, RegressorMixin, _NeighborsBase):
    """Regression by the mean of the k nearest training rows' targets, scikit-learn's API.

    >>> import numpy as np
    >>> reg = KNeighborsRegressor(n_neighbors=2).fit(np.array([[0.], [1.], [2.], [3.]]), [0., 0., 1., 1.])
    >>> reg.predict(np.array([[1.5]])).fetch()
    array([0.5])
    """

    def __init__(self, n_neighbors: int = 5, *, weights: str = "uniform", algorithm: str = "auto",
                 leaf_size: int = 30, p: float = 2, metric: str = "minkowski", metric_params: Any = None,
                 n_jobs: Any = None):
        self._init_params(n_neighbors, algorithm, leaf_size, metric, p, metric_params, n_jobs)
        self.weights = weights

    def fit(self, X: Any, y: Any) -> KNeighborsRegressor:
        _check_weights(self.weights)
        x = self._fit_data(X)
        yt = as_tensor(y, dtype=np.float64, name="y")
        if yt.ndim not in (1, 2) or yt.shape[0] != x.shape[0]:
            raise ValueError(f"y should have {int(x.shape[0])} rows, got shape {tuple(yt.shape)}")
        self._y = yt.execute()
        return self

    def predict(self, X: Any) -> Any:
        """The (weighted) mean target of each row's neighbours, a lazy tensor."""
        dist, ind = self.kneighbors(X)
        tail = tuple(int(s) for s in self._y.shape[1:])
        return row_map(_mean_chunk, ind, aligned=[dist], whole=[self._y], args=(self.weights,),
                       outs=[(tail, np.float64)])[0]

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        from sklearn.metrics import r2_score

        return float(r2_score(np.asarray(fetch(as_tensor(y, name="y"))), np.asarray(fetch(self.predict(X))),
                              sample_weight=None if sample_weight is None else np.asarray(sample_weight)))


def _check_weights(weights: Any) -> None:
    if weights not in ("uniform", "distance"):
        raise ValueError(f"weights not recognized: should be 'uniform' or 'distance', got {weights!r}")
