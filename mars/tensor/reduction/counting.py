"""``bincount`` (largest value fetched first, per-chunk counts summed) and ``digitize`` (elementwise)."""

from __future__ import annotations

import math
from typing import Any, Generator

import numpy as np

from ...core.operator import Fetch, Tiled
from ...core.options import options
from ..base.reshape import known_sizes, rechunked
from ..core import Tensor, TensorOperator, is_tensor, tensor_data
from ..datasource.core import astensor


class ChunkExtremes(TensorOperator):
    """A chunk's (min, max), or None when it is empty."""

    def execute(self, x: np.ndarray) -> Any:
        return (x.min(), x.max()) if x.size else None


class BincountChunk(TensorOperator):
    params = ("length",)

    def execute(self, x: np.ndarray, *w: np.ndarray) -> np.ndarray:
        return np.bincount(x, weights=w[0] if w else None, minlength=self.length)


class CountSum(TensorOperator):
    """Counts of several chunks → their sum (bincount's and the histograms')."""

    def execute(self, *counts: np.ndarray) -> np.ndarray:
        total = counts[0].copy()
        for c in counts[1:]:
            total += c
        return total


class TensorBincount(TensorOperator):
    params = ("minlength",)

    @classmethod
    def tile(cls, op: TensorBincount) -> Generator[Any, Any, Tiled]:
        x, out = op.inputs[0], op.outputs[0]
        yield from known_sizes(list(op.inputs))
        w = (yield from rechunked(op.inputs[1], x.nsplits)) if len(op.inputs) > 1 else None
        extremes = [ChunkExtremes().new_chunk([c], index=c.index, shape=(math.nan,), dtype=x.dtype, order="C")
                    for c in x.chunks]
        found = [e for e in (yield Fetch(extremes)) if e is not None]
        if found and min(int(e[0]) for e in found) < 0:
            raise ValueError("'list' argument must have no negative elements")
        length = max([op.minlength] + [int(e[1]) + 1 for e in found])
        meta = dict(index=(0,), shape=(length,), dtype=out.dtype, order="C")
        parts = [BincountChunk(length=length).new_chunk([c] + ([w.chunk_at(c.index)] if w is not None else []), **meta)
                 for c in x.chunks]
        while len(parts) > 1:
            size = options.combine_size
            parts = [CountSum().new_chunk(parts[i:i + size], **meta) for i in range(0, len(parts), size)]
        return Tiled(parts, ((length,),))


def bincount(x: Any, weights: Any = None, minlength: int = 0) -> Tensor:
    """Occurrences of each value ``0 .. max(x)`` of non-negative ints (summed ``weights``), as ``np.bincount``.

    The length is known once it ran.

    >>> import mars.tensor as mt
    >>> mt.bincount(mt.tensor([0, 1, 1, 3], chunk_size=3)).fetch()
    array([1, 2, 0, 1])
    """
    data = tensor_data(astensor(x))
    if data.ndim != 1:
        raise ValueError("object too deep for desired array" if data.ndim else "object of too small depth for desired array")
    if minlength is None or int(minlength) < 0:
        raise ValueError("'minlength' must not be negative")
    np.bincount(np.empty(0, dtype=data.dtype))  # numpy's check of the dtype
    inputs = [data]
    dtype = np.dtype(np.intp)
    if weights is not None:
        w = tensor_data(astensor(weights))
        if w.shape != data.shape and not any(isinstance(s, float) for s in w.shape + data.shape):
            raise ValueError("The weights and list don't have the same length.")
        inputs.append(w)
        dtype = np.dtype(np.float64)
    return TensorBincount(minlength=int(minlength)).new_tensor(inputs, (math.nan,), dtype)


class TensorDigitize(TensorOperator):
    """``np.digitize`` of each chunk; ``bins`` a numpy array, or None when the bins are the other inputs."""

    params = ("bins", "right")
    fusible = True

    @classmethod
    def tile(cls, op: TensorDigitize) -> Tiled:
        x, out = op.inputs[0], op.outputs[0]
        extra = list(op.inputs[1].chunks) if len(op.inputs) > 1 else []
        chunks = [op.copy().new_chunk([c, *extra], index=c.index, shape=c.shape, dtype=out.dtype, order="C")
                  for c in x.chunks]
        return Tiled(chunks, x.nsplits)

    def execute(self, x: np.ndarray, *bins: np.ndarray) -> np.ndarray:
        edges = (np.concatenate(bins) if len(bins) > 1 else bins[0]) if bins else self.bins
        return np.digitize(x, edges, right=self.right)


def digitize(x: Any, bins: Any, right: bool = False) -> Tensor:
    """The index of the bin each value of ``x`` falls in, as ``np.digitize``.

    >>> import mars.tensor as mt
    >>> mt.digitize(mt.tensor([0.5, 1.5, 3.0], chunk_size=2), [0, 1, 2]).fetch()
    array([1, 2, 3])
    """
    data = tensor_data(astensor(x))
    if data.dtype.kind == "c":
        raise TypeError("x may not be complex")
    if is_tensor(bins):
        b = tensor_data(bins)
        if b.ndim != 1:
            raise ValueError("object too deep for desired array" if b.ndim else "object of too small depth for desired array")
        return TensorDigitize(bins=None, right=bool(right)).new_tensor([data, b], data.shape, np.dtype(np.intp))
    edges = np.asarray(bins)
    np.digitize(np.empty(0, dtype=data.dtype), edges, right=right)  # numpy's checks of the bins
    return TensorDigitize(bins=edges, right=bool(right)).new_tensor([data], data.shape, np.dtype(np.intp))
