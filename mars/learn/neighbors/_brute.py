"""Blocked brute-force k nearest neighbours: per (query chunk, data chunk) distances and top k, then merged.

For query row chunk ``Q_i`` and data row chunk ``D_j``, one block computes the
distances and keeps each query's ``k`` nearest of ``D_j`` (indices into the
whole data); the blocks of ``Q_i`` merge in a tree, keeping the ``k`` nearest,
sorted by distance (ties by index, as a stable sort over the whole would).
Euclidean distances use ``|q|^2 - 2 q.d + |d|^2`` (BLAS); other metrics are
scipy's ``cdist``.

>>> import numpy as np
>>> data = np.array([[0.], [1.], [3.]])
>>> dist, ind = kneighbors_graph_parts(np.array([[0.9]]), data, 2, "euclidean", {})
>>> ind.fetch(), np.round(dist.fetch(), 6)
(array([[1, 0]]), array([[0.1, 0.9]]))
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np
import scipy.spatial.distance

from ...core.operator import Tiled
from ...core.options import options
from ...tensor.base.reshape import known_sizes, rechunked
from ...tensor.chunks import offsets
from ...tensor.core import Tensor, TensorOperator, tensor_data
from ...tensor.datasource.core import astensor


def block_distances(q: np.ndarray, d: np.ndarray, metric: str, kwargs: dict) -> np.ndarray:
    if metric == "euclidean":
        d2 = q @ d.T
        d2 *= -2
        d2 += np.einsum("ij,ij->i", q, q)[:, None]
        d2 += np.einsum("ij,ij->i", d, d)
        np.maximum(d2, 0, out=d2)
        return np.sqrt(d2, out=d2)
    return scipy.spatial.distance.cdist(q, d, metric, **kwargs)


def _nearest(dist: np.ndarray, ind: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ``k`` smallest distances, sorted (ties by index)."""
    if dist.shape[1] > k:
        part = np.argpartition(dist, k - 1, axis=1)[:, :k]
        dist, ind = np.take_along_axis(dist, part, 1), np.take_along_axis(ind, part, 1)
    order = np.lexsort((ind, dist), axis=1) if dist.size else np.zeros(dist.shape, np.intp)
    return np.take_along_axis(dist, order, 1), np.take_along_axis(ind, order, 1)


class KNNBlock(TensorOperator):
    """One (query chunk, data chunk) block → each query's ``k`` nearest of the data chunk."""

    params = ("k", "metric", "kwargs", "offset")
    blas = True

    def execute(self, q: np.ndarray, d: np.ndarray) -> tuple:
        dist = block_distances(q.astype(np.float64, copy=False), d.astype(np.float64, copy=False),
                               self.metric, self.kwargs)
        ind = np.broadcast_to(np.arange(self.offset, self.offset + len(d)), dist.shape)
        return _nearest(dist, ind, self.k)


class KNNMerge(TensorOperator):
    """Blocks of one query chunk → its ``k`` nearest; the last stage gives (distances, indices) as outputs."""

    params = ("k",)

    def execute(self, *parts: tuple) -> tuple:
        dist = np.concatenate([p[0] for p in parts], axis=1)
        ind = np.concatenate([p[1] for p in parts], axis=1)
        return _nearest(dist, ind, self.k)


class TensorKNeighbors(TensorOperator):
    params = ("k", "metric", "kwargs")

    @classmethod
    def tile(cls, op: TensorKNeighbors) -> Generator[Any, Any, list[Tiled]]:
        yield from known_sizes(list(op.inputs))
        q, d = op.inputs
        q = yield from rechunked(q, (q.nsplits[0], (int(q.shape[1]),)))
        d = yield from rechunked(d, (d.nsplits[0], (int(d.shape[1]),)))
        starts = offsets(d.nsplits[0])
        dists, inds = [], []
        for qc in q.chunks:
            meta = {"index": (qc.index[0], 0), "shape": (qc.shape[0], op.k), "dtype": np.dtype(np.float64), "order": "C"}
            parts = [KNNBlock(k=op.k, metric=op.metric, kwargs=op.kwargs, offset=int(starts[j]))
                     .new_chunk([qc, dc], **meta) for j, dc in enumerate(d.chunks)]
            size = options.combine_size
            while len(parts) > size:
                parts = [KNNMerge(k=op.k).new_chunk(parts[i:i + size], **meta) for i in range(0, len(parts), size)]
            dist, ind = KNNMerge(k=op.k).new_chunks(parts, [meta, dict(meta, dtype=np.dtype(np.int64))])
            dists.append(dist)
            inds.append(ind)
        nsplits = (q.nsplits[0], (op.k,))
        # an op unpickled on a cluster lists only its outputs up to the last one still held
        return [Tiled(dists, nsplits), Tiled(inds, nsplits)][:len(op.outputs)]


def kneighbors_graph_parts(query: Any, data: Any, k: int, metric: str, kwargs: dict) -> tuple[Tensor, Tensor]:
    """Lazy (distances, indices), each (n_queries, k): every query row's ``k`` nearest rows of ``data``."""
    q, d = tensor_data(astensor(query)), tensor_data(astensor(data))
    op = TensorKNeighbors(k=int(k), metric=metric, kwargs=dict(kwargs))
    shape = (q.shape[0], int(k))
    dist, ind = op.new_tensors([q, d], [{"shape": shape, "dtype": np.float64}, {"shape": shape, "dtype": np.int64}])
    return dist, ind
