"""Histograms and counting: ``histogram``, ``histogram_bin_edges``, ``histogramdd``, ``histogram2d``,
``bincount``, ``digitize``.

The bin edges are found first: from the arguments when they say them, else
from the data's minimum and maximum (per-chunk, fetched in a stage; the
edges are then exactly numpy's, which depend on nothing else), or, for an
estimator name such as ``'auto'``, from the statistics it needs (size,
range, standard deviation, quartiles, skewness), computed as mars
expressions and fetched. Every chunk then counts into the bins and the
counts are summed in a tree. ``bincount`` fetches the largest value first,
so every chunk counts into the same length. ``digitize`` is elementwise.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Generator

import numpy as np

from ...core.operator import Fetch, Tiled
from ...core.options import options
from ...core.tiling import recursive_tile
from ..base.join import stack
from ..base.reshape import known_sizes, rechunked
from ..core import Tensor, TensorData, TensorOperator, is_tensor, tensor_data
from ..datasource.core import astensor
from .counting import CountSum, bincount, digitize
from .estimators import ESTIMATORS, bin_count, estimator_stats, in_range

__all__ = ["histogram", "histogram_bin_edges", "histogramdd", "histogram2d", "bincount", "digitize"]


# ----------------------------------------------------------------- shared stages
class ChunkRange(TensorOperator):
    """A chunk's minimum and maximum along axis 0 (``None`` when it is empty)."""

    def execute(self, x: np.ndarray) -> Any:
        if not x.size:
            return None
        return np.min(x, axis=0), np.max(x, axis=0)


def _data_range(x: TensorData) -> Generator[Any, Any, tuple | None]:
    """The whole tensor's (min, max) along axis 0, or None when it is empty (a stage)."""
    parts = [ChunkRange().new_chunk([c], index=c.index, shape=(math.nan,), dtype=x.dtype, order="C")
             for c in x.chunks]
    found = [p for p in (yield Fetch(parts)) if p is not None]
    if not found:
        return None
    return np.min([f[0] for f in found], axis=0), np.max([f[1] for f in found], axis=0)


def _summed(parts: list, shape: tuple, dtype: np.dtype) -> Any:
    """One chunk summing ``parts`` (a tree of ``options.combine_size``)."""
    while len(parts) > 1:
        size = options.combine_size
        parts = [CountSum().new_chunk(parts[i:i + size], index=(0,) * len(shape), shape=shape, dtype=dtype,
                                      order="C") for i in range(0, len(parts), size)]
    return parts[0]


class ConstChunk(TensorOperator):
    """A chunk holding ``value``."""

    params = ("value",)

    def execute(self) -> np.ndarray:
        return self.value


def _const(value: np.ndarray) -> Tiled:
    chunk = ConstChunk(value=value).new_chunk([], index=(0,), shape=value.shape, dtype=value.dtype, order="C")
    return Tiled([chunk], ((len(value),),))


# ----------------------------------------------------------------- histogram
class HistChunk(TensorOperator):
    """Counts of one chunk (weighted by the second input) in the bins ``edges``.

    Always by the edges: numpy's search of sorted blocks is faster than its
    arithmetic for equal bins, and it places every value alike.
    """

    params = ("edges",)

    def execute(self, x: np.ndarray, *w: np.ndarray) -> np.ndarray:
        return np.histogram(x, bins=self.edges, weights=w[0] if w else None)[0]


class HistDensity(TensorOperator):
    params = ("edges",)

    def execute(self, counts: np.ndarray) -> np.ndarray:
        return counts / np.diff(self.edges).astype(float) / counts.sum()


class TensorHistogram(TensorOperator):
    """Counts (if ``counts``) and edges; ``bins`` an int, numpy edges or an estimator name."""

    params = ("bins", "range", "density", "counts")

    @classmethod
    def tile(cls, op: TensorHistogram) -> Generator[Any, Any, list[Tiled]]:
        x = op.inputs[0]
        yield from known_sizes(list(op.inputs))
        edges = yield from _edges(x, op.bins, op.range)
        if not op.counts:
            return [_const(edges)]
        w = (yield from rechunked(op.inputs[1], x.nsplits)) if len(op.inputs) > 1 else None
        shape, dtype = (len(edges) - 1,), np.dtype(np.intp) if w is None else w.dtype
        parts = [HistChunk(edges=edges).new_chunk(
            [c] + ([w.chunk_at(c.index)] if w is not None else []), index=c.index, shape=shape, dtype=dtype,
            order="C") for c in x.chunks]
        total = _summed(parts, shape, dtype)
        if op.density:
            total = HistDensity(edges=edges).new_chunk([total], index=(0,), shape=shape, dtype=np.float64, order="C")
        return [Tiled([total], (shape,)), _const(edges)]


def _edges(x: TensorData, bins: Any, span: Any) -> Generator[Any, Any, np.ndarray]:
    """The bin edges (``bins`` an int, edges or an estimator name)."""
    if isinstance(bins, np.ndarray):
        return bins
    found = None
    if isinstance(bins, str):
        bins, found = yield from _estimated(x, bins, span)
    elif span is None:
        found = yield from _data_range(x)
    sample = np.empty(0, dtype=x.dtype)
    if found is not None and span is None:
        sample = np.array(found, dtype=x.dtype)
    return np.histogram_bin_edges(sample, bins, span)


def _estimated(x: TensorData, name: str, span: Any) -> Generator[Any, Any, tuple[int, Any]]:
    """Estimator ``name``'s number of bins, and the (min, max) of the data in the range (stages)."""
    t = in_range(Tensor(x), span)
    yield from recursive_tile(t)
    yield from known_sizes([t.data])
    n = int(t.data.shape[0])
    found = (yield from _data_range(t.data)) if n else None
    stats = (yield from _fetched(estimator_stats(t, name))) if n else {}
    lo, hi = found if found is not None else (0, 0)
    return bin_count(name, n, lo, hi, stats, span, x.dtype.kind in "iu"), found


def _fetched(tensors: dict[str, Tensor]) -> Generator[Any, Any, dict[str, Any]]:
    """The values of a few small tensors (each tiled, run and assembled here)."""
    for t in tensors.values():
        yield from recursive_tile(t)
    chunks = [c for t in tensors.values() for c in t.data.chunks]
    values = yield Fetch(chunks)
    result, at = {}, 0
    for name, t in tensors.items():
        n = len(t.data.chunks)
        result[name] = t.data.assemble(values[at:at + n])
        at += n
    return result


def _hist_args(a: Any, bins: Any, range: Any, weights: Any) -> tuple[TensorData, Any, Any]:
    data = tensor_data(astensor(a).ravel())
    if isinstance(bins, str):
        if bins not in ESTIMATORS:
            raise ValueError(f"{bins!r} is not a valid estimator for `bins`")
        if bins == "stone":
            raise NotImplementedError("histogram(bins='stone') is not supported; give another estimator or a bin count")
        if weights is not None:
            raise TypeError("Automated estimation of the number of bins is not supported for weighted data")
        if range is not None:
            np.histogram_bin_edges(np.empty(0), 1, range)  # numpy's checks of range
    elif np.ndim(bins) == 0:
        np.histogram_bin_edges(np.empty(0), bins, range)  # numpy's checks of an int and the range
        bins = operator.index(bins)
    else:
        bins = np.histogram_bin_edges(np.empty(0, dtype=data.dtype), bins, range)
    return data, bins, range


def _hist_op(a: Any, bins: Any, range: Any, density: Any, weights: Any, counts: bool) -> list[Tensor]:
    data, bins, span = _hist_args(a, bins, range, weights)
    inputs = [data]
    hist_dtype = np.dtype(np.intp)
    if weights is not None:
        w = tensor_data(astensor(weights).ravel())
        if not isinstance(w.shape[0], float) and not isinstance(data.shape[0], float) and w.shape != data.shape:
            raise ValueError("weights should have the same shape as a.")
        inputs.append(w)
        hist_dtype = w.dtype
    if density:
        hist_dtype = np.dtype(np.float64)
    nbins = len(bins) - 1 if isinstance(bins, np.ndarray) else (math.nan if isinstance(bins, str) else int(bins))
    edge_dtype = np.histogram_bin_edges(np.empty(0, dtype=data.dtype), 1, span).dtype
    if isinstance(bins, np.ndarray):
        edge_dtype = bins.dtype
    kws = [dict(shape=(nbins + 1,), dtype=edge_dtype)]
    if counts:
        kws.insert(0, dict(shape=(nbins,), dtype=hist_dtype))
    op = TensorHistogram(bins=bins, range=span, density=bool(density), counts=counts)
    return op.new_tensors(inputs, kws)


def histogram(a: Any, bins: Any = 10, range: Any = None, density: Any = None, weights: Any = None) -> tuple:
    """Counts of ``a`` in bins, and the bin edges, as ``np.histogram``.

    ``bins`` is a number of equal bins, the edges, or an estimator name
    (``'auto'``, ``'fd'``, ``'sturges'``, ``'rice'``, ``'sqrt'``, ``'scott'``, ``'doane'``).

    >>> import mars.tensor as mt
    >>> hist, edges = mt.histogram(mt.tensor([1, 2, 2, 3, 9], chunk_size=2), bins=4)
    >>> hist.fetch()
    array([3, 1, 0, 1])
    """
    hist, edges = _hist_op(a, bins, range, density, weights, counts=True)
    return hist, edges


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None, weights: Any = None) -> Tensor:
    """The bin edges :func:`histogram` would use, as ``np.histogram_bin_edges``.

    >>> import mars.tensor as mt
    >>> mt.histogram_bin_edges(mt.tensor([0, 1, 4], chunk_size=2), bins=2).fetch()
    array([0., 2., 4.])
    """
    return _hist_op(a, bins, range, None, weights, counts=False)[0]


# ----------------------------------------------------------------- histogramdd
class HistDDChunk(TensorOperator):
    """Counts of one chunk of samples (rows; weighted by the second input) in the bins ``edges`` per dim."""

    params = ("edges",)

    def execute(self, x: np.ndarray, *w: np.ndarray) -> np.ndarray:
        return np.histogramdd(x, bins=list(self.edges), weights=w[0] if w else None)[0]


class HistDDDensity(TensorOperator):
    params = ("edges",)

    def execute(self, counts: np.ndarray) -> np.ndarray:
        total = counts.sum()
        result = counts
        for d, e in enumerate(self.edges):
            shape = [1] * len(self.edges)
            shape[d] = len(e) - 1
            result = result / np.diff(e).reshape(shape)
        return result / total


class TensorHistogramDD(TensorOperator):
    """Counts and the edges of every dim; ``bins``/``range`` as numpy takes them."""

    params = ("bins", "range", "density")

    @classmethod
    def tile(cls, op: TensorHistogramDD) -> Generator[Any, Any, list[Tiled]]:
        x, hist_dtype = op.inputs[0], np.dtype(np.float64)
        yield from known_sizes(list(op.inputs))
        x = yield from rechunked(x, (x.nsplits[0], (int(x.shape[1]),)))
        w = (yield from rechunked(op.inputs[1], (x.nsplits[0],))) if len(op.inputs) > 1 else None
        dims = int(x.shape[1])
        synthetic = np.empty((0, dims), dtype=x.dtype)
        if _needs_data(op.bins, op.range, dims):
            found = yield from _data_range(x)
            if found is not None:
                synthetic = np.array(found, dtype=x.dtype)
        edges = tuple(np.histogramdd(synthetic, op.bins, op.range)[1])
        shape = tuple(len(e) - 1 for e in edges)
        parts = [HistDDChunk(edges=edges).new_chunk(
            [c] + ([w.chunk_at((c.index[0],))] if w is not None else []), index=c.index, shape=shape,
            dtype=hist_dtype, order="C") for c in x.chunks]
        total = _summed(parts, shape, hist_dtype)
        if op.density:
            total = HistDDDensity(edges=edges).new_chunk([total], index=(0,) * dims, shape=shape, dtype=hist_dtype,
                                                         order="C")
        return [Tiled([total], tuple((s,) for s in shape))] + [_const(e) for e in edges]


def _needs_data(bins: Any, span: Any, dims: int) -> bool:
    per_dim = list(bins) if isinstance(bins, (list, tuple, np.ndarray)) else [bins] * dims
    spans = [None] * dims if span is None else list(span)
    return any(np.ndim(b) == 0 and s is None for b, s in zip(per_dim, spans))


def histogramdd(sample: Any, bins: Any = 10, range: Any = None, density: Any = None, weights: Any = None) -> tuple:
    """Counts of the rows of ``sample`` (N, D) in D-dimensional bins, and the edges of each dim, as ``np.histogramdd``.

    >>> import mars.tensor as mt
    >>> hist, edges = mt.histogramdd(mt.tensor([[0, 0], [1, 1], [1, 0]], chunk_size=2), bins=2)
    >>> hist.fetch()
    array([[1., 0.],
           [1., 1.]])
    """
    if is_tensor(sample) or isinstance(sample, np.ndarray):
        t = astensor(sample)
        t = t.reshape(-1, 1) if t.ndim == 1 else t
    else:
        t = stack([astensor(s) for s in sample], axis=-1)
    data = tensor_data(t)
    if data.ndim != 2:
        raise ValueError(f"histogramdd: sample must be (N, D), got a tensor of shape {tuple(data.shape)}")
    dims = int(data.shape[1])
    if isinstance(bins, (list, tuple)):
        bins = tuple(np.asarray(b) if np.ndim(b) else b for b in bins)
    empty = np.empty((0, dims), dtype=data.dtype)
    probe = np.histogramdd(empty, bins, range)  # numpy's checks of bins and range; the edges' sizes and dtypes
    inputs = [data]
    if weights is not None:
        inputs.append(tensor_data(astensor(weights)))
    kws = [dict(shape=probe[0].shape, dtype=np.float64)] + [dict(shape=e.shape, dtype=e.dtype) for e in probe[1]]
    outs = TensorHistogramDD(bins=bins, range=range, density=bool(density)).new_tensors(inputs, kws)
    return outs[0], list(outs[1:])


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None, density: Any = None, weights: Any = None) -> tuple:
    """Counts of the points ``(x, y)`` in 2-D bins, and the x and y edges, as ``np.histogram2d``.

    >>> import mars.tensor as mt
    >>> hist, xedges, yedges = mt.histogram2d(mt.tensor([0, 1, 1], chunk_size=2), [0, 1, 0], bins=2)
    >>> hist.fetch()
    array([[1., 0.],
           [1., 1.]])
    """
    count = len(bins) if np.ndim(bins) else 1
    if count not in (1, 2):  # one sequence of edges for both dims
        bins = [np.asarray(bins), np.asarray(bins)]
    hist, edges = histogramdd([astensor(x), astensor(y)], bins, range, density, weights)
    return hist, edges[0], edges[1]

