"""``convolve`` / ``correlate`` of 1-d tensors, and ``interp``.

The longer sequence stays chunked; the shorter one is read whole by every
chunk. Each output chunk reads the window of the longer sequence it needs
(its own range plus ``len(v) - 1`` neighbours, zeros past the ends) from the
input chunks that overlap it, and runs numpy's ``'valid'`` mode on it, so
values equal numpy's.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Generator
from typing import Any

import numpy as np

from ...core.operator import Tiled
from ..chunks import normalize_chunk_sizes, offsets
from ..core import Tensor, TensorData, TensorOperator
from ..datasource.core import astensor
from .reshape import known_sizes, rechunked

__all__ = ["convolve", "correlate", "interp"]


class TensorSlidingWindow(TensorOperator):
    """``func(window, v, 'valid')`` over output positions ``[start, start + length)`` of the full mode."""

    params = ("func", "start", "length")

    @classmethod
    def tile(cls, op: TensorSlidingWindow) -> Generator[Any, Any, Tiled]:
        a, v = op.inputs
        out = op.outputs[0]
        yield from known_sizes([a, v])
        v = yield from rechunked(v, ((int(v.shape[0]),),))
        m = int(v.shape[0])
        splits = normalize_chunk_sizes((op.length,), max(max(a.nsplits[0]), 1))[0]
        chunks = []
        for i, (lo, size) in enumerate(zip(offsets(splits), splits)):
            # full-mode position k reads a[k - m + 1 : k + 1]
            first, stop = op.start + lo - m + 1, op.start + lo + size
            pieces, spans = _pieces(a, max(first, 0), min(stop, int(a.shape[0])))
            chunk_op = WindowChunk(func=op.func, spans=spans, left=max(0, -first),
                                   right=max(0, stop - int(a.shape[0])))
            chunks.append(chunk_op.new_chunk(pieces + [v.chunks[0]], index=(i,), shape=(size,), dtype=out.dtype,
                                             order="C"))
        return Tiled(chunks, (splits,))


def _pieces(a: TensorData, lo: int, hi: int) -> tuple[list, tuple]:
    """The chunks of 1-d ``a`` overlapping ``[lo, hi)`` and the (start, stop) to read from each."""
    starts = offsets(a.nsplits[0])
    pieces, spans = [], []
    j = max(0, bisect.bisect_right(starts, lo) - 1)
    while j < len(starts) and starts[j] < hi:
        pieces.append(a.chunks[j])
        spans.append((max(lo, starts[j]) - starts[j], min(hi, starts[j] + a.nsplits[0][j]) - starts[j]))
        j += 1
    return pieces, tuple(spans)


class WindowChunk(TensorOperator):
    """One output chunk: the window joined from its pieces, zero-padded, then numpy's valid mode."""

    params = ("func", "spans", "left", "right")

    def execute(self, *inputs: np.ndarray) -> np.ndarray:
        *pieces, v = inputs
        parts = [p[lo:hi] for p, (lo, hi) in zip(pieces, self.spans)]
        window = np.concatenate(parts) if parts else np.zeros(0, dtype=v.dtype)
        if self.left or self.right:
            window = np.pad(window, (self.left, self.right))
        return getattr(np, self.func)(window, v, "valid")


def _as_1d(x: Any, name: str) -> Tensor:
    t = astensor(x)
    if t.ndim == 0:
        t = t.reshape(1)
    if t.ndim != 1:
        raise ValueError(f"object too deep for desired array: {name} must be one dimensional")
    if math.isnan(t.shape[0]):
        raise NotImplementedError(f"{name} has a length known only after running; execute it first")
    return t


def _sliding(func: str, a: Tensor, v: Tensor, mode: str) -> Tensor:
    n, m = int(a.shape[0]), int(v.shape[0])
    full = n + m - 1
    if mode in ("full", 2):
        start, length = 0, full
    elif mode in ("same", 1):
        start, length = m - 1 - m // 2, n
    elif mode in ("valid", 0):
        start, length = m - 1, n - m + 1
    else:
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    dtype = getattr(np, func)(np.ones(1, dtype=a.dtype), np.ones(1, dtype=v.dtype)).dtype
    op = TensorSlidingWindow(func=func, start=start, length=length)
    return op.new_tensor([a.data, v.data], (length,), dtype)


def convolve(a: Any, v: Any, mode: str = "full") -> Tensor:
    """The discrete linear convolution of two 1-d sequences (modes ``full``, ``same``, ``valid``),
    as ``np.convolve``.

    >>> import mars.tensor as mt
    >>> mt.convolve(mt.tensor([1, 2, 3], chunk_size=2), [0, 1, 0.5]).execute().fetch()
    array([0. , 1. , 2.5, 4. , 1.5])
    """
    ta, tv = _as_1d(a, "a"), _as_1d(v, "v")
    if tv.shape[0] > ta.shape[0]:
        ta, tv = tv, ta
    if ta.shape[0] == 0:
        raise ValueError("a cannot be empty")
    if tv.shape[0] == 0:
        raise ValueError("v cannot be empty")
    return _sliding("convolve", ta, tv, mode)


def correlate(a: Any, v: Any, mode: str = "valid") -> Tensor:
    """The cross-correlation of two 1-d sequences (``v`` conjugated), as ``np.correlate``.

    >>> import mars.tensor as mt
    >>> mt.correlate(mt.tensor([1, 2, 3]), [0, 1, 0.5], "full").execute().fetch()
    array([0.5, 2. , 3.5, 3. , 0. ])
    """
    ta, tv = _as_1d(a, "a"), _as_1d(v, "v")
    if ta.shape[0] == 0 or tv.shape[0] == 0:
        raise ValueError(f"{'a' if ta.shape[0] == 0 else 'v'} cannot be empty")
    if tv.shape[0] > ta.shape[0]:
        # numpy correlates the other way round and reverses (and conjugates) the result
        swapped = _sliding("correlate", tv, ta, mode)[::-1]
        return swapped.conj() if swapped.dtype.kind == "c" else swapped
    return _sliding("correlate", ta, tv, mode)


class TensorInterp(TensorOperator):
    """``np.interp`` of each chunk of ``x``, the sample points read whole."""

    params = ("left", "right", "period")
    fusible = True

    @classmethod
    def tile(cls, op: TensorInterp) -> Generator[Any, Any, Tiled]:
        x, xp, fp = op.inputs
        out = op.outputs[0]
        yield from known_sizes([xp, fp])
        xp = yield from rechunked(xp, tuple((int(s),) for s in xp.shape))
        fp = yield from rechunked(fp, tuple((int(s),) for s in fp.shape))
        chunks = [op.copy().new_chunk([c, xp.chunks[0], fp.chunks[0]], index=c.index, shape=c.shape,
                                      dtype=out.dtype, order="C") for c in x.chunks]
        return Tiled(chunks, x.nsplits)

    def execute(self, x: np.ndarray, xp: np.ndarray, fp: np.ndarray) -> np.ndarray:
        return np.asarray(np.interp(x, xp, fp, left=self.left, right=self.right, period=self.period))


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None) -> Tensor:
    """Piecewise-linear interpolation of ``(xp, fp)`` at ``x``, as ``np.interp``.

    >>> import mars.tensor as mt
    >>> mt.interp(mt.tensor([0, 1.5, 5]), [1, 2, 3], [3, 2, 0]).execute().fetch()
    array([3. , 2.5, 0. ])
    """
    tx, txp, tfp = astensor(x), astensor(xp), astensor(fp)
    if txp.ndim != 1 or tfp.ndim != 1:
        raise ValueError("object too deep for desired array: xp and fp must be one dimensional")
    if not (math.isnan(txp.shape[0]) or math.isnan(tfp.shape[0])):
        if txp.shape[0] != tfp.shape[0]:
            raise ValueError("fp and xp are not of the same length.")
        if txp.shape[0] == 0:
            raise ValueError("array of sample points is empty")
    if period is not None and period == 0:
        raise ValueError("period must be a non-zero value")
    with np.errstate(all="ignore"):
        dtype = np.asarray(np.interp(np.zeros(0, dtype=tx.dtype), np.zeros(1, dtype=txp.dtype),
                                     np.zeros(1, dtype=tfp.dtype), left=left, right=right, period=period)).dtype
    op = TensorInterp(left=left, right=right, period=period)
    return op.new_tensor([tx.data, txp.data, tfp.data], tx.shape, dtype)
