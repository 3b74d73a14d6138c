"""The distributed passes of k-means: each is one :func:`row_reduce` / :func:`row_map` over the rows of ``X``.

Chunk functions take ``(start, x, [sample_weight,] [closest,] *args)`` and
work through the chunk in cache-sized row blocks; distances are
``|x|^2 - 2 x.c + |c|^2`` by BLAS, as scikit-learn computes them.

>>> import numpy as np
>>> from mars.learn.base import fetch
>>> x = np.array([[0., 0.], [0., 1.], [10., 10.], [10., 11.]])
>>> sums, weights, inertia = lloyd_pass(x, None, np.array([[0., 0.], [10., 10.]]))
>>> weights, inertia
(array([2., 2.]), np.float64(2.0))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._rowops import add_partials, row_blocks, row_map, row_map_reduce, row_reduce
from ..base import fetch

_BLOCK = 4096


def _d2(xb: np.ndarray, centers: np.ndarray, c_sq: np.ndarray) -> np.ndarray:
    """Squared distances of block rows to the centres, clipped at 0 (rounding)."""
    x_sq = np.einsum("ij,ij->i", xb, xb)
    d2 = xb @ centers.T
    d2 *= -2
    d2 += x_sq[:, None]
    d2 += c_sq
    np.maximum(d2, 0, out=d2)
    return d2


def _unpack(rest: tuple, n_row_inputs: int) -> tuple[list, tuple]:
    return list(rest[:n_row_inputs]), rest[n_row_inputs:]


def _members(xb: np.ndarray, minus_2c: np.ndarray, c_sq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One-hot ``(k, rows)`` float matrix of each row's nearest centre, and ``min_c |c|^2 - 2 x.c`` per row.

    The nearest centre minimises ``|c|^2 - 2 x.c`` as in scikit-learn's Lloyd step (a row's own ``|x|^2``
    cannot change it). Marking the minima by comparison costs a few whole-block operations, where ``argmin``
    along rows of a few centres is slow; a row with tied minima (duplicate centres) keeps only its first,
    as ``argmin`` would.
    """
    dist_t = minus_2c @ xb.T
    dist_t += c_sq
    best = np.minimum.reduce(dist_t, axis=0)
    member = np.equal(dist_t, best, out=dist_t)  # 1.0 / 0.0 in place: no boolean temporary
    if member.sum() != len(xb):
        member = (member.argmax(axis=0) == np.arange(len(dist_t))[:, None]).astype(np.float64)
    return member, best


def _block_rows(k: int) -> int:
    """Rows per block: ``_BLOCK``, fewer with many centres so that a ``(k, rows)`` temporary stays ~32 MB."""
    return max(64, min(_BLOCK, 2 ** 22 // max(k, 1)))


def _centre_terms(centers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``-2 c`` (exact: scaling by 2 commutes with the dot products' rounding) and ``|c|^2`` as a column."""
    return -2.0 * centers, np.einsum("ij,ij->i", centers, centers)[:, None]


def _lloyd_chunk(start: int, x: np.ndarray, *rest: Any) -> tuple:
    """Per-cluster sums, weights and (when asked) inertia of one row chunk; one GEMM gives the sums."""
    centers, weighted, with_inertia = rest[-3:]
    sw = rest[0] if weighted else None
    k, d = centers.shape
    minus_2c, c_sq = _centre_terms(centers)
    sums, weights, inertia = np.zeros((k, d)), np.zeros(k), np.zeros(k)
    rows = _block_rows(k)
    for s in row_blocks(len(x), rows):
        xb = x[s:s + rows]
        member, best = _members(xb, minus_2c, c_sq)
        if sw is not None:
            member *= sw[s:s + rows]
        weights += member.sum(axis=1)
        sums += member @ xb
        if with_inertia:
            d2 = best + np.einsum("ij,ij->i", xb, xb)
            np.maximum(d2, 0, out=d2)
            inertia += member @ d2
    return sums, weights, inertia


def _pack_stats(partial: tuple) -> np.ndarray:
    sums, weights, inertia = partial
    return np.hstack([sums, weights[:, None], inertia[:, None]])


def lloyd_pass(x: Any, sw: Any, centers: np.ndarray, with_inertia: bool = True) -> tuple[np.ndarray, np.ndarray, Any]:
    """Per-cluster weighted sums, weights and the inertia (0 unless ``with_inertia``) of assigning ``x`` to
    ``centers`` (one pass)."""
    k, d = centers.shape
    aligned = [] if sw is None else [sw]
    stats = fetch(row_reduce(_lloyd_chunk, x, shape=(k, d + 2), aligned=aligned,
                             args=(np.ascontiguousarray(centers, dtype=np.float64), sw is not None,
                                   bool(with_inertia)),
                             finish=_pack_stats))
    return stats[:, :d], stats[:, d], stats[:, d + 1].sum()


def _moved_stats(xb: np.ndarray, labels: np.ndarray, old: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The change in per-cluster sums and counts of rows that left cluster ``old`` for ``labels``."""
    moved = np.flatnonzero(labels != old)
    if not len(moved):
        return np.zeros((k, xb.shape[1])), np.zeros(k)
    delta = np.zeros((k, len(moved)))
    columns = np.arange(len(moved))
    delta[labels[moved], columns] = 1.0
    delta[old[moved], columns] = -1.0
    return delta @ xb[moved], delta.sum(axis=1)


def _step_chunk(start: int, x: np.ndarray, *rest: Any) -> tuple[np.ndarray, np.ndarray]:
    """``([sums, counts, inertia] of one chunk, its labels)``; given last pass's labels, sums and counts are
    the changes that the rows which moved make (most rows stay after the first passes: one small product
    instead of a pass-sized one)."""
    centers, with_inertia = rest[-2:]
    old = rest[0] if len(rest) == 3 else None
    k, d = centers.shape
    minus_2c, c_sq = _centre_terms(centers)
    sums, counts, inertia = np.zeros((k, d)), np.zeros(k), np.zeros(k)
    labels = np.empty(len(x), np.int32)
    index = np.arange(k, dtype=np.float64)
    rows = _block_rows(k)
    for s in row_blocks(len(x), rows):
        xb = x[s:s + rows]
        member, best = _members(xb, minus_2c, c_sq)
        block = labels[s:s + rows]
        block[:] = index @ member
        if with_inertia:
            d2 = best + np.einsum("ij,ij->i", xb, xb)
            np.maximum(d2, 0, out=d2)
            inertia += member @ d2
        if old is None:
            counts += member.sum(axis=1)
            sums += member @ xb
        else:
            moved_sums, moved_counts = _moved_stats(xb, block, old[s:s + rows], k)
            sums += moved_sums
            counts += moved_counts
    return np.hstack([sums, counts[:, None], inertia[:, None]]), labels


def lloyd_step(x: Any, centers: np.ndarray, labels: Any = None, with_inertia: bool = False) -> list:
    """Lazy ``(stats, labels)`` of assigning the rows of ``x`` (unweighted) to ``centers``: ``stats`` holds per
    cluster ``[sums..., count, inertia]`` (inertia 0 unless ``with_inertia``), or, given the ``labels`` of
    the last pass, the change in sums and counts since it."""
    return row_map_reduce(_step_chunk, x, shape=(len(centers), centers.shape[1] + 2), outs=[((), np.int32)],
                          aligned=[] if labels is None else [labels],
                          args=(np.ascontiguousarray(centers, dtype=np.float64), bool(with_inertia)))


def _labels_chunk(start: int, x: np.ndarray, centers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    minus_2c, c_sq = _centre_terms(centers)
    index = np.arange(len(centers), dtype=np.float64)
    labels, dist = np.empty(len(x), np.int32), np.empty(len(x))
    rows = _block_rows(len(centers))
    for s in row_blocks(len(x), rows):
        xb = x[s:s + rows]
        member, best = _members(xb, minus_2c, c_sq)
        labels[s:s + rows] = index @ member
        d2 = best + np.einsum("ij,ij->i", xb, xb)
        np.maximum(d2, 0, out=d2)
        dist[s:s + rows] = d2
    return labels, dist


def labels_and_distances(x: Any, centers: np.ndarray) -> list:
    """Lazy (labels int32, squared distance to the nearest centre) of each row."""
    return row_map(_labels_chunk, x, outs=[((), np.int32), ((), np.float64)],
                   args=(np.ascontiguousarray(centers, dtype=np.float64),))


def _distances_chunk(start: int, x: np.ndarray, centers: np.ndarray) -> np.ndarray:
    c_sq = np.einsum("ij,ij->i", centers, centers)
    out = np.empty((len(x), len(centers)))
    for s in row_blocks(len(x), _BLOCK):
        out[s:s + _BLOCK] = np.sqrt(_d2(x[s:s + _BLOCK], centers, c_sq))
    return out


def distances(x: Any, centers: np.ndarray) -> Any:
    """Lazy euclidean distances of each row to each centre (``KMeans.transform``)."""
    return row_map(_distances_chunk, x, outs=[((len(centers),), np.float64)],
                   args=(np.ascontiguousarray(centers, dtype=np.float64),))[0]


# ---------------------------------------------------------------- empty clusters
def _farthest_chunk(start: int, x: np.ndarray, *rest: Any) -> np.ndarray:
    """Rows ``[d2, label, weight, x...]`` of the ``m`` points farthest from their centres."""
    (sw,), (centers, m, _weighted) = _unpack(rest, 1) if rest and rest[-1] else ((None,), rest)
    labels, d2 = _labels_chunk(start, x, centers)
    top = np.argsort(-d2, kind="stable")[:m]
    w = np.ones(len(top)) if sw is None else sw[top]
    return np.column_stack([d2[top], labels[top], w, x[top]]) if len(top) else np.empty((0, x.shape[1] + 3))


def _keep_farthest(*parts: np.ndarray) -> np.ndarray:
    rows = np.concatenate(parts)
    m = max(len(p) for p in parts)
    return rows[np.argsort(-rows[:, 0], kind="stable")[:m]]


def relocate_empty(x: Any, sw: Any, centers: np.ndarray, sums: np.ndarray, weights: np.ndarray) -> None:
    """Give each empty cluster one of the points farthest from their centres (scikit-learn's rule), in place."""
    empty = np.flatnonzero(weights == 0)
    aligned = [] if sw is None else [sw]
    far = fetch(row_reduce(_farthest_chunk, x, shape=(len(empty), centers.shape[1] + 3), aligned=aligned,
                           args=(centers, len(empty), sw is not None), combine=_keep_farthest))
    for row, new in zip(far, empty):
        old, w, point = int(row[1]), row[2], row[3:]
        sums[old] -= point * w
        weights[old] -= w
        sums[new] = point * w
        weights[new] = w


# ---------------------------------------------------------------- initialisation passes
def _closest_chunk(start: int, x: np.ndarray, closest: np.ndarray, centers: np.ndarray) -> np.ndarray:
    minus_2c, c_sq = _centre_terms(centers)
    out = closest.copy()
    rows = _block_rows(len(centers))
    for s in row_blocks(len(x), rows):
        xb = x[s:s + rows]
        dist_t = minus_2c @ xb.T
        dist_t += c_sq
        d2 = np.minimum.reduce(dist_t, axis=0) + np.einsum("ij,ij->i", xb, xb)
        np.maximum(d2, 0, out=d2)  # rounding
        np.minimum(out[s:s + rows], d2, out=out[s:s + rows])
    return out


def closest_update(x: Any, closest: Any, centers: np.ndarray) -> Any:
    """Lazy ``min(closest, squared distance to the nearest of centers)`` per row."""
    return row_map(_closest_chunk, x, outs=[((), np.float64)], aligned=[closest],
                   args=(np.ascontiguousarray(centers, dtype=np.float64),))[0]


def _race_chunk(start: int, x: np.ndarray, *rest: Any) -> np.ndarray:
    """Per trial, the row with the least ``E / w`` (``E`` exponential): a draw proportional to ``w``."""
    weights, (n_trials, seed) = _unpack(rest, len(rest) - 2)
    w = np.prod(weights, axis=0) if weights else np.ones(len(x))
    rng = np.random.default_rng([seed, start])
    out = np.full((n_trials, x.shape[1] + 1), np.inf)
    if not len(x):
        return out
    with np.errstate(divide="ignore"):
        keys = rng.exponential(size=(n_trials, len(x))) / w
    best = keys.argmin(axis=1)
    out[:, 0] = keys[np.arange(n_trials), best]
    out[:, 1:] = x[best]
    return out


def _keep_least(*parts: np.ndarray) -> np.ndarray:
    stacked = np.stack(parts)
    return stacked[stacked[:, :, 0].argmin(axis=0), np.arange(stacked.shape[1])]


def weighted_draws(x: Any, weights: list, n_trials: int, seed: int) -> np.ndarray:
    """``n_trials`` rows of ``x`` drawn (with replacement) with probability proportional to the product of
    ``weights`` (row tensors); one pass."""
    drawn = fetch(row_reduce(_race_chunk, x, shape=(n_trials, x.shape[1] + 1), aligned=weights,
                             args=(n_trials, seed), combine=_keep_least))
    if not np.isfinite(drawn[:, 0]).all():
        raise ValueError("cannot draw initial centres: every sample has zero weight or zero distance")
    return drawn[:, 1:]


def _potentials_chunk(start: int, x: np.ndarray, *rest: Any) -> np.ndarray:
    row_inputs, (candidates,) = _unpack(rest, len(rest) - 1)
    closest, sw = row_inputs[0], (row_inputs[1] if len(row_inputs) > 1 else None)
    c_sq = np.einsum("ij,ij->i", candidates, candidates)
    pots = np.zeros(len(candidates))
    for s in row_blocks(len(x), _BLOCK):
        d2 = np.minimum(_d2(x[s:s + _BLOCK], candidates, c_sq), closest[s:s + _BLOCK, None])
        pots += (d2 if sw is None else d2 * sw[s:s + _BLOCK, None]).sum(axis=0)
    return pots


def potentials(x: Any, closest: Any, sw: Any, candidates: np.ndarray) -> np.ndarray:
    """For each candidate centre, the weighted sum of ``min(closest, d2 to it)`` (one pass)."""
    aligned = [closest] if sw is None else [closest, sw]
    return fetch(row_reduce(_potentials_chunk, x, shape=(len(candidates),), aligned=aligned,
                            args=(np.ascontiguousarray(candidates, dtype=np.float64),)))


def _oversample_chunk(start: int, x: np.ndarray, *rest: Any) -> np.ndarray:
    weights, (scale, seed) = _unpack(rest, len(rest) - 2)
    p = np.prod(weights, axis=0) * scale
    keep = np.random.default_rng([seed, start]).random(len(x)) < p
    return x[keep]


def _concat(*parts: np.ndarray) -> np.ndarray:
    return np.concatenate(parts)


def oversample(x: Any, weights: list, scale: float, seed: int) -> np.ndarray:
    """Each row kept independently with probability ``min(1, scale * product of weights)`` (one pass)."""
    return fetch(row_reduce(_oversample_chunk, x, shape=(np.nan, x.shape[1]), aligned=weights,
                            args=(scale, seed), combine=_concat))


def _nearest_weights_chunk(start: int, x: np.ndarray, *rest: Any) -> np.ndarray:
    (sw,), (candidates, _weighted) = _unpack(rest, 1) if rest and rest[-1] else ((None,), rest)
    labels, _ = _labels_chunk(start, x, candidates)
    return np.bincount(labels, weights=sw, minlength=len(candidates)).astype(np.float64)


def nearest_weights(x: Any, sw: Any, candidates: np.ndarray) -> np.ndarray:
    """The (weighted) number of rows nearest to each candidate (one pass)."""
    aligned = [] if sw is None else [sw]
    return fetch(row_reduce(_nearest_weights_chunk, x, shape=(len(candidates),), aligned=aligned,
                            args=(np.ascontiguousarray(candidates, dtype=np.float64), sw is not None),
                            combine=add_partials))
