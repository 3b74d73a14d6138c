"""``KMeans``: Lloyd's algorithm where each iteration is one distributed pass over the rows.

A pass gives, per cluster, the weighted sum of its rows, their weight and
their inertia (per-chunk nearest centre, partials merged in a tree); the new
centres are computed here, and iterations stop as scikit-learn's do (the
squared centre shift at most ``tol`` times the mean feature variance). A last
pass gives ``labels_`` and ``inertia_`` for the final centres.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    ClusterMixin,
    TransformerMixin,
)
from sklearn.utils import check_random_state

from ..base import (
    as_tensor,
    check_fitted,
    fetch,
    fetch_all,
    resolve_session,
    validate_data,
)
from . import _init, _passes

_INITS = ("k-means||", "k-means++", "random")


class KMeans(ClassNamePrefixFeaturesOutMixin, TransformerMixin, ClusterMixin, BaseEstimator):
    """K-means clustering on mars tensors, scikit-learn's ``KMeans`` API.

    ``init`` is 'k-means||' (scalable k-means++, the default), 'k-means++',
    'random', or an array of shape (n_clusters, n_features).
    ``oversampling_factor`` and ``init_iter`` tune 'k-means||'.

    >>> import numpy as np
    >>> X = np.array([[1., 2.], [1., 4.], [1., 0.], [10., 2.], [10., 4.], [10., 0.]])
    >>> km = KMeans(n_clusters=2, init=np.array([[1., 1.], [9., 1.]])).fit(X)
    >>> km.cluster_centers_
    array([[ 1.,  2.],
           [10.,  2.]])
    >>> km.predict(np.array([[0., 0.], [12., 3.]])).fetch()
    array([0, 1], dtype=int32)
    """

    def __init__(self, n_clusters: int = 8, *, init: Any = "k-means||", n_init: Any = "auto", max_iter: int = 300,
                 tol: float = 1e-4, verbose: int = 0, random_state: Any = None, copy_x: bool = True,
                 algorithm: str = "lloyd", oversampling_factor: float = 2, init_iter: int = 5):
        self.n_clusters = n_clusters
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state
        self.copy_x = copy_x
        self.algorithm = algorithm
        self.oversampling_factor = oversampling_factor
        self.init_iter = init_iter

    # ------------------------------------------------------------ checks
    def _check_params(self, n_samples: float) -> int:
        if not isinstance(self.n_clusters, numbers.Integral) or self.n_clusters < 1:
            raise ValueError(f"n_clusters must be a positive integer, got {self.n_clusters!r}")
        if n_samples < self.n_clusters:
            raise ValueError(f"n_samples={int(n_samples)} should be >= n_clusters={self.n_clusters}.")
        if not isinstance(self.max_iter, numbers.Integral) or self.max_iter < 1:
            raise ValueError(f"max_iter must be a positive integer, got {self.max_iter!r}")
        if not isinstance(self.tol, numbers.Real) or self.tol < 0:
            raise ValueError(f"tol must be a non-negative number, got {self.tol!r}")
        if self.algorithm != "lloyd":
            raise NotImplementedError(f"algorithm={self.algorithm!r}: only 'lloyd' is implemented")
        if isinstance(self.init, str) and self.init not in _INITS:
            raise ValueError(f"init must be one of {list(_INITS)} or an array, got {self.init!r}")
        explicit = not isinstance(self.init, str)
        if self.n_init == "auto":
            return 10 if isinstance(self.init, str) and self.init == "random" else 1
        if not isinstance(self.n_init, numbers.Integral) or self.n_init < 1:
            raise ValueError(f"n_init must be 'auto' or a positive integer, got {self.n_init!r}")
        if explicit and self.n_init != 1:
            warnings.warn(f"Explicit initial center position passed: performing only one init in {type(self).__name__}"
                          f" instead of n_init={self.n_init}.", RuntimeWarning, stacklevel=3)
            return 1
        return int(self.n_init)

    def _initial_centers(self, x: Any, sw: Any, sw_local: np.ndarray | None, rng: Any) -> np.ndarray:
        k = self.n_clusters
        if not isinstance(self.init, str):
            centers = np.array(self.init, dtype=np.float64)
            if centers.shape != (k, x.shape[1]):
                raise ValueError(f"The shape of the initial centers {centers.shape} does not match the number of "
                                 f"clusters {k} and features {x.shape[1]}.")
            return centers
        if self.init == "random":
            return _init.init_random(x, sw_local, k, rng)
        if self.init == "k-means++":
            return _init.init_kmeans_plusplus(x, sw, k, rng)
        return _init.init_kmeans_parallel(x, sw, k, rng, self.oversampling_factor, self.init_iter)

    # ------------------------------------------------------------ fitting
    def fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> KMeans:
        """Compute the k-means clustering of ``X`` (rows are samples)."""
        x = validate_data(self, X, reset=True, dtype=np.float64).execute()
        n_init = self._check_params(x.shape[0])
        sw, sw_local = _sample_weight(sample_weight, x.shape[0], isinstance(self.init, str) and self.init == "random")
        rng = check_random_state(self.random_state)
        variance = float(fetch(x.var(axis=0).mean())) if self.tol else 0.0
        tol = variance * self.tol
        best = None
        for _ in range(n_init):
            centers = self._initial_centers(x, sw, sw_local, rng)
            centers, n_iter = self._lloyd(x, sw, centers, tol)
            labels, d2 = _passes.labels_and_distances(x, centers)
            labels, inertia = fetch_all(labels, (d2 * sw).sum() if sw is not None else d2.sum())
            inertia = float(inertia)  # summed on the chunks: the distances never leave them
            if best is None or inertia < best[2]:
                best = (centers, labels, inertia, n_iter)
        self.cluster_centers_, self.labels_, self.inertia_, self.n_iter_ = best
        self._n_features_out = self.cluster_centers_.shape[0]
        distinct = np.count_nonzero(np.bincount(self.labels_, minlength=self.n_clusters))
        if distinct < self.n_clusters:
            warnings.warn(f"Number of distinct clusters ({distinct}) found smaller than "
                          f"n_clusters ({self.n_clusters}). Possibly due to duplicate points in X.",
                          RuntimeWarning, stacklevel=2)
        return self

    def _lloyd(self, x: Any, sw: Any, centers: np.ndarray, tol: float) -> tuple[np.ndarray, int]:
        # unweighted, a pass after the first adds the changes that the rows which moved make to the running
        # [sums, counts] (with weights, such sums could leave an empty cluster a weight of rounding error)
        labels, running = None, None
        for i in range(self.max_iter):
            if sw is None:
                delta, new_labels = self._step(x, centers, labels)
                if labels is None:
                    running = delta
                else:
                    running[:, :-1] += delta[:, :-1]
                    running[:, -1] = delta[:, -1]  # the inertia is of every row each pass
                labels = new_labels
                sums, weights, inertia = running[:, :-2].copy(), running[:, -2].copy(), running[:, -1].sum()
            else:
                sums, weights, inertia = _passes.lloyd_pass(x, sw, centers, with_inertia=bool(self.verbose))
            if (weights == 0).any():
                _passes.relocate_empty(x, sw, centers, sums, weights)
                labels = None  # the moved points' labels are stale: the next pass starts afresh
            new = centers.copy()
            filled = weights > 0
            new[filled] = sums[filled] / weights[filled, None]
            shift = float(((new - centers) ** 2).sum())
            if self.verbose:
                print(f"Iteration {i}, inertia {inertia}.")
            centers = new
            if shift <= tol:
                if self.verbose:
                    print(f"Converged at iteration {i}: center shift {shift} within tolerance {tol}.")
                break
        return centers, i + 1

    def _step(self, x: Any, centers: np.ndarray, labels: Any) -> tuple[np.ndarray, Any]:
        """One unweighted pass: its ``[sums, counts, inertia]`` (the changes since the pass that gave
        ``labels``, when given) and its labels, which stay on the chunks for the next pass."""
        stats, new_labels = _passes.lloyd_step(x, centers, labels, with_inertia=bool(self.verbose))
        session = resolve_session()
        session.execute(stats, new_labels)
        return np.array(session.fetch(stats)), new_labels

    # ------------------------------------------------------------ using the model
    def _check_test_data(self, X: Any) -> Any:
        check_fitted(self)
        return validate_data(self, X, reset=False, dtype=np.float64)

    def predict(self, X: Any) -> Any:
        """The index of the nearest centre of each row, a lazy int32 tensor."""
        return _passes.labels_and_distances(self._check_test_data(X), self.cluster_centers_)[0]

    def fit_predict(self, X: Any, y: Any = None, sample_weight: Any = None) -> np.ndarray:
        """Fit, then return ``labels_``."""
        return self.fit(X, sample_weight=sample_weight).labels_

    def transform(self, X: Any) -> Any:
        """Distances of each row to each centre, a lazy tensor of shape (n_samples, n_clusters)."""
        return _passes.distances(self._check_test_data(X), self.cluster_centers_)

    def fit_transform(self, X: Any, y: Any = None, sample_weight: Any = None) -> Any:
        return self.fit(X, sample_weight=sample_weight).transform(X)

    def score(self, X: Any, y: Any = None, sample_weight: Any = None) -> float:
        """Minus the inertia of ``X`` against the centres (higher is better), as scikit-learn."""
        x = self._check_test_data(X)
        sw, _ = _sample_weight(sample_weight, x.shape[0], False)
        d2 = _passes.labels_and_distances(x, self.cluster_centers_)[1]
        return -float(fetch((d2 * sw).sum() if sw is not None else d2.sum()))

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        return tags


def _sample_weight(sample_weight: Any, n: float, local: bool) -> tuple[Any, np.ndarray | None]:
    """The weights as a tensor (None when uniform) and, when ``local``, as numpy."""
    if sample_weight is None:
        return None, None
    if isinstance(sample_weight, numbers.Number):
        sample_weight = np.full(int(n), float(sample_weight))
    sw = as_tensor(sample_weight, dtype=np.float64, name="sample_weight")
    if sw.ndim != 1 or sw.shape[0] != n:
        raise ValueError(f"sample_weight.shape == {tuple(sw.shape)}, expected ({int(n)},)!")
    sw = sw.execute()
    return sw, (np.asarray(fetch(sw)) if local else None)
