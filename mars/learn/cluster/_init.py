"""Initial centres for k-means: 'k-means||', 'k-means++', 'random', computed by passes over the cluster's data.

- ``'random'``: scikit-learn's draw (``random_state.choice`` weighted by the
  sample weights), so the same ``random_state`` gives the same centres; the
  chosen rows are gathered from the chunks.
- ``'k-means++'``: scikit-learn's greedy k-means++ (``2 + log k`` trials per
  centre, the one lowering the potential most kept); each centre costs three
  passes (draw the trials, their potentials, the new distances).
- ``'k-means||'`` (Bahmani et al., scalable k-means++): one random centre,
  then ``init_iter`` rounds that keep each row with probability
  ``oversampling_factor * k * d2 / phi``; the candidates are weighted by the
  rows nearest to them and reduced to ``k`` by weighted k-means++ and Lloyd
  iterations locally (they are few).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base import fetch
from . import _passes


def _seed(rng: np.random.RandomState) -> int:
    return int(rng.randint(np.iinfo(np.int32).max))


def init_random(x: Any, sw: np.ndarray | None, k: int, rng: np.random.RandomState) -> np.ndarray:
    n = int(x.shape[0])
    p = np.ones(n) if sw is None else sw
    seeds = rng.choice(n, size=k, replace=False, p=p / p.sum())
    return np.asarray(fetch(x[seeds]), dtype=np.float64)


def _first_closest(x: Any, center: np.ndarray) -> Any:
    """Each row's squared distance to the first centre (executed: the next passes read it)."""
    return _passes.labels_and_distances(x, center[None, :])[1].execute()


def init_kmeans_plusplus(x: Any, sw: Any, k: int, rng: np.random.RandomState) -> np.ndarray:
    x = x.execute()
    n_trials = 2 + int(np.log(k))
    weights = [] if sw is None else [sw]
    centers = [_passes.weighted_draws(x, weights, 1, _seed(rng))[0]]
    closest = _first_closest(x, centers[0])
    for _ in range(1, k):
        trials = _passes.weighted_draws(x, [closest, *weights], n_trials, _seed(rng))
        pots = _passes.potentials(x, closest, sw, trials)
        best = trials[int(np.argmin(pots))]
        centers.append(best)
        closest = _passes.closest_update(x, closest, best[None, :]).execute()
    return np.array(centers)


def init_kmeans_parallel(x: Any, sw: Any, k: int, rng: np.random.RandomState, oversampling_factor: float,
                         init_iter: int) -> np.ndarray:
    x = x.execute()
    weights = [] if sw is None else [sw]
    candidates = _passes.weighted_draws(x, weights, 1, _seed(rng))
    closest = _first_closest(x, candidates[0])
    for _ in range(init_iter):
        phi = float(fetch((closest * sw).sum() if sw is not None else closest.sum()))
        if phi == 0:
            break
        new = _passes.oversample(x, [closest, *weights], oversampling_factor * k / phi, _seed(rng))
        if len(new):
            candidates = np.vstack([candidates, new])
            closest = _passes.closest_update(x, closest, new).execute()
    candidates = np.unique(candidates, axis=0)
    if len(candidates) < k:  # too few distinct rows drawn: complete with draws proportional to the distance
        more = _passes.weighted_draws(x, [closest, *weights], k - len(candidates), _seed(rng))
        candidates = np.vstack([candidates, more])
    cand_weights = _passes.nearest_weights(x, sw, candidates)
    return _reduce_candidates(candidates, cand_weights, k, rng)


def _reduce_candidates(candidates: np.ndarray, weights: np.ndarray, k: int,
                       rng: np.random.RandomState) -> np.ndarray:
    """The weighted candidates clustered to ``k`` centres, locally (they are a few hundred rows)."""
    from sklearn.cluster import KMeans as LocalKMeans

    if len(candidates) == k:
        return candidates
    weights = np.where(weights > 0, weights, 1e-12)  # a candidate no row is nearest to still counts a little
    local = LocalKMeans(k, init="k-means++", n_init=1, random_state=rng).fit(candidates, sample_weight=weights)
    return local.cluster_centers_
