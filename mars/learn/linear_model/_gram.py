"""The centred Gram matrix of ``[X | y]`` in one distributed pass, and the inputs' common checks.

Each row chunk gives its total weight, weighted means and centred
scatter matrix; partials merge pairwise with Chan's update
(``M = Ma + Mb + d d^T Wa Wb / W`` for the difference ``d`` of the means),
which stays accurate where ``X^T X - n m m^T`` would cancel.

>>> import numpy as np
>>> stats = gram_stats(np.array([[1., 2.], [3., 4.], [5., 9.]]), np.array([1., 2., 4.]), None)
>>> stats.weight, stats.mean
(np.float64(3.0), array([3.        , 5.        , 2.33333333]))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._rowops import row_reduce
from ..base import as_tensor, fetch, validate_data


@dataclass
class GramStats:
    """Total weight, weighted means and centred scatter of ``[X | Y]`` (``Y`` 2-d)."""

    weight: float
    mean: np.ndarray
    scatter: np.ndarray
    n_features: int

    def xx(self, center: bool) -> np.ndarray:
        d = self.n_features
        m = self.scatter[:d, :d]
        return m if center else m + self.weight * np.outer(self.mean[:d], self.mean[:d])

    def xy(self, center: bool) -> np.ndarray:
        d = self.n_features
        m = self.scatter[:d, d:]
        return m if center else m + self.weight * np.outer(self.mean[:d], self.mean[d:])

    def yy(self, center: bool) -> np.ndarray:
        d = self.n_features
        m = self.scatter[d:, d:]
        return m if center else m + self.weight * np.outer(self.mean[d:], self.mean[d:])


def _gram_chunk(start: int, x: np.ndarray, y: np.ndarray, *rest: Any) -> tuple:
    z = np.hstack([x, y.reshape(len(y), -1)]).astype(np.float64, copy=False)
    w = rest[0] if rest else None
    total = float(len(z)) if w is None else float(w.sum())
    if total == 0:
        return 0.0, np.zeros(z.shape[1]), np.zeros((z.shape[1], z.shape[1]))
    mean = (z.sum(axis=0) if w is None else w @ z) / total
    zc = z - mean
    scatter = zc.T @ (zc if w is None else zc * w[:, None])
    return total, mean, scatter


def _merge_gram(*parts: tuple) -> tuple:
    total, mean, scatter = parts[0]
    for wb, mb, sb in parts[1:]:
        if wb == 0:
            continue
        if total == 0:
            total, mean, scatter = wb, mb, sb
            continue
        both = total + wb
        delta = mb - mean
        scatter = scatter + sb + np.outer(delta, delta) * (total * wb / both)
        mean = mean + delta * (wb / both)
        total = both
    return total, mean, scatter


def _pack_gram(partial: tuple) -> np.ndarray:
    total, mean, scatter = partial
    head = np.zeros((1, len(mean)))
    head[0, 0] = total
    return np.vstack([head, mean[None, :], scatter])


def gram_stats(x: Any, y: Any, sw: Any) -> GramStats:
    """One pass over the rows: the :class:`GramStats` of ``[x | y]`` weighted by ``sw`` (or 1)."""
    d = int(x.shape[1])
    t = 1 if len(y.shape) == 1 else int(y.shape[1])
    aligned = [y] if sw is None else [y, sw]
    packed = fetch(row_reduce(_gram_chunk, x, shape=(d + t + 2, d + t), aligned=aligned,
                              combine=_merge_gram, finish=_pack_gram))
    return GramStats(weight=packed[0, 0], mean=packed[1], scatter=packed[2:], n_features=d)


def check_xy(estimator: Any, X: Any, y: Any, sample_weight: Any, *, y_numeric: bool = True) -> tuple:
    """``X`` (2-d, float), ``y`` and the sample weights as tensors with the same rows; records n_features_in_."""
    x = validate_data(estimator, X, reset=True, dtype=np.float64)
    yt = as_tensor(y, dtype=np.float64 if y_numeric else None, ensure_2d=False, allow_nd=False, name="y")
    if yt.ndim == 0 or yt.ndim > 2:
        raise ValueError(f"y should be a 1d or 2d array, got an array of shape {tuple(yt.shape)} instead.")
    if yt.shape[0] != x.shape[0]:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: "
                         f"[{int(x.shape[0])}, {int(yt.shape[0])}]")
    sw = None
    if sample_weight is not None:
        if np.ndim(sample_weight) == 0 and not hasattr(sample_weight, "shape"):
            sample_weight = np.full(int(x.shape[0]), float(sample_weight))
        sw = as_tensor(sample_weight, dtype=np.float64, name="sample_weight")
        if sw.ndim != 1 or sw.shape[0] != x.shape[0]:
            raise ValueError(f"sample_weight.shape == {tuple(sw.shape)}, expected ({int(x.shape[0])},)!")
    return x, yt, sw
