"""``MiniBatchKMeans``: scikit-learn's mini-batch k-means, its batches drawn from the rows of a chunked ``X``.

Each step of scikit-learn's algorithm draws ``batch_size`` row numbers with
replacement (weighted by the sample weights), assigns those rows to the
nearest centre and moves each centre towards the mean of its rows with a
per-centre learning rate (the inverse of its accumulated weight). Here the
draws are scikit-learn's own (the same ``random_state`` gives the same row
numbers), and the rows are gathered from the chunks that hold them: many
steps' batches in one distributed pass, drawn ahead on a copy of the random
state. A step that finds the random state moved on (a centre reassignment
drew from it) discards what was drawn ahead and gathers again, so the
sequence of batches is exactly scikit-learn's. The steps themselves (a
batch is small) run here; ``labels_`` and ``inertia_`` are one pass over the
chunks at the end. ``partial_fit`` takes the whole ``X`` it is given as one
batch: its per-centre sums are one pass over ``X``'s chunks.
"""

from __future__ import annotations

import collections
import numbers
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.utils import check_array, check_random_state

from .._rowops import row_reduce
from ..base import fetch, fetch_all, validate_data
from . import _passes
from ._kmeans import KMeans, _sample_weight

#: rows x features gathered in one pass at most (32 MiB of float64)
_GATHER_ELEMENTS = 1 << 22
_INITS = ("k-means++", "random")


def _take_chunk(start: int, x: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    lo, hi = np.searchsorted(wanted, [start, start + len(x)])
    return x[wanted[lo:hi] - start]


def _concat(*parts: np.ndarray) -> np.ndarray:
    return np.concatenate(parts)


def take_rows(x: Any, *indices: np.ndarray) -> list[np.ndarray]:
    """The rows of ``x`` at each array of row numbers (repeats allowed), gathered in one pass.

    Each chunk returns its rows among the sorted distinct numbers, and the
    chunks' parts are concatenated in row order.

    >>> import mars.tensor as mt
    >>> x = mt.arange(10.0, chunk_size=3).reshape(5, 2)
    >>> [r.tolist() for r in take_rows(x, np.array([4, 0, 4]), np.array([2]))]
    [[[8.0, 9.0], [0.0, 1.0], [8.0, 9.0]], [[4.0, 5.0]]]
    """
    flat = np.concatenate([np.asarray(i, dtype=np.int64) for i in indices])
    wanted, inverse = np.unique(flat, return_inverse=True)
    rows = fetch(row_reduce(_take_chunk, x, shape=(len(wanted), x.shape[1]), args=(wanted,), combine=_concat))
    return np.split(rows[inverse], np.cumsum([len(i) for i in indices])[:-1])


def _draw(rng: np.random.RandomState, cdf: np.ndarray, size: int) -> np.ndarray:
    """``rng.choice(len(cdf), size, p=p)`` for the ``cdf`` of ``p``: the same numbers from the same state."""
    return cdf.searchsorted(rng.random_sample(size), side="right").astype(np.int64)


class _Batches:
    """The batches of a fit, drawn as scikit-learn draws them; rows gathered many steps ahead."""

    def __init__(self, x: Any, cdf: np.ndarray, batch_size: int, rng: np.random.RandomState, n_steps: int):
        self.x, self.cdf, self.batch_size, self.rng = x, cdf, batch_size, rng
        self.steps_left = n_steps
        self.ahead: collections.deque = collections.deque()
        self.block = 8  # early stopping often ends a fit after tens of steps: grow the look-ahead as it goes on
        self.max_block = max(1, _GATHER_ELEMENTS // (batch_size * max(1, int(x.shape[1]))))
        self.passes = 0

    def next(self) -> np.ndarray:
        indices = _draw(self.rng, self.cdf, self.batch_size)
        self.steps_left -= 1
        if not (self.ahead and np.array_equal(self.ahead[0][0], indices)):
            self._gather(indices)
        return self.ahead.popleft()[1]

    def _gather(self, first: np.ndarray) -> None:
        twin = np.random.RandomState()
        twin.set_state(self.rng.get_state())
        draws = [first] + [_draw(twin, self.cdf, self.batch_size) for _ in range(min(self.block, self.steps_left))]
        self.ahead = collections.deque(zip(draws, take_rows(self.x, *draws)))
        self.block = min(2 * self.block, self.max_block)
        self.passes += 1


def _update_centers(centers: np.ndarray, counts: np.ndarray, sums: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Each centre hit by the batch moves to the mean of its old weight and its new rows (``counts`` updated)."""
    new = centers.copy()
    hit = weights > 0
    new[hit] = centers[hit] * counts[hit, None] + sums[hit]
    counts[hit] += weights[hit]
    new[hit] *= (1 / counts[hit])[:, None]
    return new


def _reassign(centers: np.ndarray, counts: np.ndarray, n_rows: int, rows_at: Callable[[np.ndarray], np.ndarray],
              rng: np.random.RandomState, ratio: float, verbose: int) -> None:
    """Centres with little weight jump to random rows of the batch (scikit-learn's rule), in place."""
    to_reassign = counts < ratio * counts.max()
    if to_reassign.sum() > 0.5 * n_rows:  # at most half the batch's rows become centres
        to_reassign[np.argsort(counts)[int(0.5 * n_rows):]] = False
    n_reassigns = int(to_reassign.sum())
    if n_reassigns:
        picks = rng.choice(n_rows, replace=False, size=n_reassigns)
        if verbose:
            print(f"[MiniBatchKMeans] Reassigning {n_reassigns} cluster centers.")
        centers[to_reassign] = rows_at(picks)
    if n_reassigns < len(counts):
        # not too small, or they would be reassigned at once again
        counts[to_reassign] = np.min(counts[~to_reassign])


class _Monitor:
    """scikit-learn's early stopping: a small centre shift, or no better smoothed batch inertia for a while."""

    def __init__(self, est: MiniBatchKMeans, n_samples: int, tol: float):
        self.est, self.n_samples, self.tol = est, n_samples, tol
        self.ewa: float | None = None
        self.ewa_min: float | None = None
        self.no_improvement = 0

    def converged(self, step: int, n_steps: int, shift: float, batch_inertia: float) -> bool:
        est, b = self.est, self.est._batch_size
        batch_inertia /= b
        step += 1
        if step == 1:  # the first batch's inertia measures the initialisation
            if est.verbose:
                print(f"Minibatch step {step}/{n_steps}: mean batch inertia: {batch_inertia}")
            return False
        alpha = min(b * 2.0 / (self.n_samples + 1), 1)
        self.ewa = batch_inertia if self.ewa is None else self.ewa * (1 - alpha) + batch_inertia * alpha
        if est.verbose:
            print(f"Minibatch step {step}/{n_steps}: mean batch inertia: {batch_inertia}, ewa inertia: {self.ewa}")
        if self.tol > 0.0 and shift <= self.tol:
            if est.verbose:
                print(f"Converged (small centers change) at step {step}/{n_steps}")
            return True
        if self.ewa_min is None or self.ewa < self.ewa_min:
            self.no_improvement, self.ewa_min = 0, self.ewa
        else:
            self.no_improvement += 1
        if est.max_no_improvement is not None and self.no_improvement >= est.max_no_improvement:
            if est.verbose:
                print(f"Converged (lack of improvement in inertia) at step {step}/{n_steps}")
            return True
        return False


class MiniBatchKMeans(KMeans):
    """Mini-batch k-means on mars tensors, scikit-learn's ``MiniBatchKMeans`` API and algorithm.

    Batches are drawn as scikit-learn draws them (the same ``random_state``
    draws the same rows), their rows gathered from the chunks many steps at a
    time; ``partial_fit`` takes its ``X`` as one batch. ``init`` is
    'k-means++', 'random', a callable or an array (computed on ``init_size``
    drawn rows, as scikit-learn does). ``predict``/``transform``/``score``
    are lazy, as ``KMeans``'s.

    >>> import numpy as np
    >>> X = np.array([[1., 2.], [1., 4.], [1., 0.], [4., 2.], [4., 0.], [4., 4.],
    ...               [4., 5.], [0., 1.], [2., 2.], [3., 2.], [5., 5.], [1., -1.]])
    >>> km = MiniBatchKMeans(n_clusters=2, init=np.array([[1., 1.], [4., 4.]]), batch_size=6, max_iter=10,
    ...                      random_state=0).fit(X)
    >>> km.predict(np.array([[0., 0.], [4., 4.]])).fetch()
    array([0, 1], dtype=int32)
    """

    def __init__(self, n_clusters: int = 8, *, init: Any = "k-means++", max_iter: int = 100, batch_size: int = 1024,
                 verbose: int = 0, compute_labels: bool = True, random_state: Any = None, tol: float = 0.0,
                 max_no_improvement: int | None = 10, init_size: int | None = None, n_init: Any = "auto",
                 reassignment_ratio: float = 0.01):
        self.n_clusters = n_clusters
        self.init = init
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.verbose = verbose
        self.compute_labels = compute_labels
        self.random_state = random_state
        self.tol = tol
        self.max_no_improvement = max_no_improvement
        self.init_size = init_size
        self.n_init = n_init
        self.reassignment_ratio = reassignment_ratio

    # ------------------------------------------------------------ checks
    def _check_params(self, n_samples: int) -> None:
        """Check the parameters against ``n_samples`` and set ``_batch_size``, ``_init_size``, ``_n_init``."""
        for name, low in (("n_clusters", 1), ("max_iter", 1), ("batch_size", 1)):
            value = getattr(self, name)
            if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < low:
                raise ValueError(f"The '{name}' parameter of MiniBatchKMeans must be an int in the range "
                                 f"[{low}, inf). Got {value!r} instead.")
        if n_samples < self.n_clusters:
            raise ValueError(f"n_samples={n_samples} should be >= n_clusters={self.n_clusters}.")
        if not isinstance(self.tol, numbers.Real) or self.tol < 0:
            raise ValueError(f"tol must be a non-negative number, got {self.tol!r}")
        mni = self.max_no_improvement
        if mni is not None and (not isinstance(mni, numbers.Integral) or mni < 0):
            raise ValueError(f"max_no_improvement must be None or a non-negative int, got {mni!r}")
        if not isinstance(self.reassignment_ratio, numbers.Real) or self.reassignment_ratio < 0:
            raise ValueError(f"reassignment_ratio should be >= 0, got {self.reassignment_ratio} instead.")
        if isinstance(self.init, str) and self.init not in _INITS:
            raise ValueError(f"init must be one of {list(_INITS)}, a callable or an array, got {self.init!r}")
        self._batch_size = min(self.batch_size, n_samples)
        self._init_size = self._checked_init_size(n_samples)
        self._n_init = self._checked_n_init()

    def _checked_init_size(self, n_samples: int) -> int:
        size = self.init_size
        if size is not None and (not isinstance(size, numbers.Integral) or size < 1):
            raise ValueError(f"init_size must be None or a positive int, got {size!r}")
        if size is None:
            size = 3 * self._batch_size if 3 * self._batch_size >= self.n_clusters else 3 * self.n_clusters
        elif size < self.n_clusters:
            warnings.warn(f"init_size={size} should be larger than n_clusters={self.n_clusters}. Setting it to "
                          "min(3*n_clusters, n_samples)", RuntimeWarning, stacklevel=4)
            size = 3 * self.n_clusters
        return min(size, n_samples)

    def _checked_n_init(self) -> int:
        array_init = not isinstance(self.init, str) and not callable(self.init)
        if self.n_init == "auto":
            return 1 if array_init or self.init == "k-means++" else 3
        if not isinstance(self.n_init, numbers.Integral) or self.n_init < 1:
            raise ValueError(f"n_init must be 'auto' or a positive integer, got {self.n_init!r}")
        if array_init and self.n_init != 1:
            warnings.warn(f"Explicit initial center position passed: performing only one init in "
                          f"MiniBatchKMeans instead of n_init={self.n_init}.", RuntimeWarning, stacklevel=4)
            return 1
        return int(self.n_init)

    def _init_array(self, n_features: int) -> np.ndarray | None:
        if isinstance(self.init, str) or callable(self.init):
            return None
        centers = check_array(self.init, dtype=np.float64, copy=True, order="C")
        self._check_centers(centers, n_features)
        return centers

    def _check_centers(self, centers: np.ndarray, n_features: int) -> None:
        if centers.shape != (self.n_clusters, n_features):
            raise ValueError(f"The shape of the initial centers {centers.shape} does not match the number of "
                             f"clusters {self.n_clusters} and features {n_features}.")

    # ------------------------------------------------------------ initialisation
    def _init_centroids(self, x: Any, sw: np.ndarray, init: np.ndarray | None, rng: np.random.RandomState,
                        n_samples: int) -> np.ndarray:
        """Initial centres from ``init_size`` drawn rows (all rows when there are no more), as scikit-learn."""
        if self._init_size < n_samples:
            picks = rng.randint(0, n_samples, self._init_size)  # drawn for an array too: the same later draws
            sw = sw[picks]
            rows = None if init is not None else take_rows(x, picks)[0]
        else:
            rows = None if init is not None else np.asarray(fetch(x))
        if init is not None:
            return init
        k = self.n_clusters
        if callable(self.init):
            centers = check_array(self.init(rows, k, random_state=rng), dtype=np.float64, copy=False, order="C")
            self._check_centers(centers, rows.shape[1])
            return centers
        if self.init == "random":
            return rows[rng.choice(len(rows), size=k, replace=False, p=sw / sw.sum())]
        from sklearn.cluster import (
            kmeans_plusplus,  # greedy k-means++ on the drawn rows, scikit-learn's own
        )

        return kmeans_plusplus(rows, k, sample_weight=sw, random_state=rng)[0]

    def _best_init(self, x: Any, sw: np.ndarray, init: np.ndarray | None, rng: np.random.RandomState,
                   n_samples: int) -> np.ndarray:
        """Of ``_n_init`` initialisations, the one with the least inertia on a drawn validation set."""
        valid = rng.randint(0, n_samples, self._init_size)
        if self._n_init == 1:  # nothing to compare: the validation rows are drawn, not gathered
            return self._init_centroids(x, sw, init, rng, n_samples)
        rows = take_rows(x, valid)[0]
        best, best_inertia = None, None
        for i in range(self._n_init):
            if self.verbose:
                print(f"Init {i + 1}/{self._n_init} with method {self.init}")
            centers = self._init_centroids(x, sw, init, rng, n_samples)
            _, d2 = _passes._labels_chunk(0, rows, centers)
            inertia = float(d2 @ sw[valid])
            if self.verbose:
                print(f"Inertia for init {i + 1}/{self._n_init}: {inertia}")
            if best_inertia is None or inertia < best_inertia:
                best, best_inertia = centers, inertia
        return best

    # ------------------------------------------------------------ fitting
    def fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> MiniBatchKMeans:
        """Cluster ``X`` by mini-batches drawn from its rows (one pass gathers many steps' batches)."""
        x = validate_data(self, X, reset=True, dtype=np.float64).execute()
        n = int(x.shape[0])
        self._check_params(n)
        rng = check_random_state(self.random_state)
        _, sw = _sample_weight(sample_weight, n, True)
        sw = np.ones(n) if sw is None else sw
        init = self._init_array(int(x.shape[1]))
        tol = float(fetch(x.var(axis=0).mean())) * self.tol if self.tol else 0.0
        centers = self._best_init(x, sw, init, rng, n)
        self._counts = np.zeros(self.n_clusters)
        self._n_since_last_reassign = 0
        n_steps = (self.max_iter * n) // self._batch_size
        cdf = (sw / sw.sum()).cumsum()
        cdf /= cdf[-1]
        batches = _Batches(x, cdf, self._batch_size, rng, n_steps)
        monitor = _Monitor(self, n, tol)
        for i in range(n_steps):
            batch = batches.next()
            new, inertia = self._batch_step(batch, None, centers, rng)
            shift = float(((new - centers) ** 2).sum()) if tol > 0 else 0.0
            centers = new
            if monitor.converged(i, n_steps, shift, inertia):
                break
        self.cluster_centers_ = centers
        self._n_features_out = self.n_clusters
        self.n_steps_ = i + 1
        self.n_iter_ = int(np.ceil((i + 1) * self._batch_size / n))
        if self.compute_labels:
            self.labels_, d2 = fetch_all(*_passes.labels_and_distances(x, centers))
            self.inertia_ = float(d2 @ sw)
        else:
            ewa = monitor.ewa if monitor.ewa is not None else inertia / self._batch_size
            self.inertia_ = ewa * float(sw.sum())
        return self

    def _random_reassign(self) -> bool:
        """Whether this step may reassign centres: once per ``10 * n_clusters`` rows, or when one is empty."""
        self._n_since_last_reassign += self._batch_size
        if (self._counts == 0).any() or self._n_since_last_reassign >= 10 * self.n_clusters:
            self._n_since_last_reassign = 0
            return True
        return False

    def _batch_step(self, batch: np.ndarray, sw: np.ndarray | None, centers: np.ndarray,
                    rng: np.random.RandomState) -> tuple[np.ndarray, float]:
        """One step on a local batch: the new centres and the batch's inertia before the move."""
        args = (centers, False, True) if sw is None else (sw, centers, True, True)
        sums, weights, inertia = _passes._lloyd_chunk(0, batch, *args)
        new = _update_centers(centers, self._counts, sums, weights)
        if self._random_reassign() and self.reassignment_ratio > 0:
            _reassign(new, self._counts, len(batch), batch.__getitem__, rng, self.reassignment_ratio, self.verbose)
        return new, float(inertia.sum())

    def partial_fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> MiniBatchKMeans:
        """One step with all of ``X`` as the batch (initialising the centres from it on the first call)."""
        fitted = hasattr(self, "cluster_centers_")
        x = validate_data(self, X, reset=not fitted, dtype=np.float64).execute()
        n = int(x.shape[0])
        self._random_state = getattr(self, "_random_state", None) or check_random_state(self.random_state)
        sw_tensor, sw = _sample_weight(sample_weight, n, True)
        self.n_steps_ = getattr(self, "n_steps_", 0)
        if not fitted:
            self._check_params(n)
            init = self._init_array(int(x.shape[1]))
            self.cluster_centers_ = self._init_centroids(x, np.ones(n) if sw is None else sw, init,
                                                         self._random_state, n)
            self._counts = np.zeros(self.n_clusters)
            self._n_since_last_reassign = 0
        sums, weights, _ = _passes.lloyd_pass(x, sw_tensor, self.cluster_centers_, with_inertia=False)
        new = _update_centers(self.cluster_centers_, self._counts, sums, weights)
        if self._random_reassign() and self.reassignment_ratio > 0:
            _reassign(new, self._counts, n, lambda rows: take_rows(x, rows)[0], self._random_state,
                      self.reassignment_ratio, self.verbose)
        self.cluster_centers_ = new
        if self.compute_labels:
            self.labels_, d2 = fetch_all(*_passes.labels_and_distances(x, new))
            self.inertia_ = float(d2.sum() if sw is None else d2 @ sw)
        self.n_steps_ += 1
        self._n_features_out = self.n_clusters
        return self
