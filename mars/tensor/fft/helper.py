"""``mt.fft``'s helpers: sample frequencies (chunked sources) and the zero-frequency shifts.

A shift is a roll by half of each shifted axis: the tail of the axis moves
to the front. It is built from two slices joined again, so only the chunks
that straddle the cut are split; nothing is gathered into one chunk.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ...core.operator import Tiled
from ..base.join import concatenate
from ..chunks import normalize_chunk_sizes
from ..core import Tensor, TensorOperator
from ..datasource.core import astensor, grid_tile

__all__ = ["fftfreq", "rfftfreq", "fftshift", "ifftshift"]


class TensorFFTFreq(TensorOperator):
    """Positions ``[offset, offset + length)`` of numpy's frequency ramp, times ``val``.

    The ramp counts up from 0 and, unless ``half``, wraps to ``-(n // 2)``
    halfway; numpy multiplies its integer ramp by ``val`` the same way.
    """

    params = ("n", "val", "half", "dtype", "offset", "length", "nsplits")
    fusible = True

    @classmethod
    def tile(cls, op: TensorFFTFreq) -> Tiled:
        def chunk_op(index: tuple, slices: tuple, shape: tuple) -> TensorFFTFreq:
            return op.copy(offset=slices[0].start, length=shape[0], nsplits=None)

        return grid_tile(op, chunk_op)

    def execute(self) -> np.ndarray:
        ramp = np.arange(self.offset, self.offset + self.length, dtype=int)
        if not self.half:
            ramp[ramp >= (self.n - 1) // 2 + 1] -= self.n
        return ramp * self.val


def _frequencies(n: Any, d: Any, device: Any, half: bool, chunk_size: Any) -> Tensor:
    if not isinstance(n, (int, np.integer)):
        raise ValueError("n should be an integer")
    if device not in (None, "cpu"):
        raise ValueError(f'Device not understood. Only "cpu" is allowed, but received: {device}')
    val = 1.0 / (n * d)
    if np.ndim(val) != 0:
        raise ValueError(f"d must be a scalar, got an array of shape {np.shape(d)}")
    length = n // 2 + 1 if half else n
    if length < 0:
        raise ValueError(f"negative dimensions are not allowed, got n={n}")
    dtype = (np.zeros(1, dtype=int) * val).dtype
    nsplits = normalize_chunk_sizes((length,), chunk_size, dtype.itemsize)
    op = TensorFFTFreq(n=int(n), val=val, half=half, dtype=dtype, offset=0, length=length, nsplits=nsplits)
    return op.new_tensor([], (length,), dtype)


def fftfreq(n: int, d: float = 1.0, device: Any = None, *, chunk_size: Any = None) -> Tensor:
    """The sample frequencies of an ``n``-point DFT with sample spacing ``d``, as ``np.fft.fftfreq``.

    ``device`` is numpy's (only ``"cpu"``); ``chunk_size`` cuts the result.

    >>> import mars.tensor as mt
    >>> mt.fft.fftfreq(4, d=0.5, chunk_size=3).execute().fetch()
    array([ 0. ,  0.5, -1. , -0.5])
    """
    return _frequencies(n, d, device, False, chunk_size)


def rfftfreq(n: int, d: float = 1.0, device: Any = None, *, chunk_size: Any = None) -> Tensor:
    """The non-negative sample frequencies ``rfft`` gives, as ``np.fft.rfftfreq``.

    >>> import mars.tensor as mt
    >>> mt.fft.rfftfreq(4).execute().fetch()
    array([0.  , 0.25, 0.5 ])
    """
    return _frequencies(n, d, device, True, chunk_size)


def _shift_per_axis(x: Tensor, axes: Any, sign: int) -> dict[int, int]:
    """Each shifted axis and how far its values move (numpy adds up an axis listed twice)."""
    listed = range(x.ndim) if axes is None else [axes] if isinstance(axes, numbers.Integral) else list(axes)
    shifts: dict[int, int] = {}
    for ax in listed:
        if not isinstance(ax, numbers.Integral) or isinstance(ax, (bool, np.bool_)):
            raise TypeError(f"axes must be integers, got {axes!r}")
        if not -x.ndim <= ax < x.ndim:
            raise np.exceptions.AxisError(int(ax), x.ndim)
        ax = int(ax) % x.ndim
        size = x.shape[ax]
        if isinstance(size, float) and math.isnan(size):
            raise ValueError(f"fftshift needs the length of axis {ax}, unknown until the tensor runs; "
                             "call .execute() on it first")
        shifts[ax] = shifts.get(ax, 0) + sign * (size // 2)
    return shifts


def _rolled(x: Tensor, shifts: dict[int, int]) -> Tensor:
    for ax, shift in shifts.items():
        size = x.shape[ax]
        k = shift % size if size else 0
        if k:
            lead = (slice(None),) * ax
            x = concatenate([x[lead + (slice(size - k, None),)], x[lead + (slice(0, size - k),)]], axis=ax)
    return x


def fftshift(x: Any, axes: Any = None) -> Tensor:
    """Move the zero-frequency term to the centre (a roll by half of each axis), as ``np.fft.fftshift``.

    >>> import mars.tensor as mt
    >>> mt.fft.fftshift(mt.arange(5, chunk_size=2)).execute().fetch()
    array([3, 4, 0, 1, 2])
    """
    t = astensor(x)
    return _rolled(t, _shift_per_axis(t, axes, 1))


def ifftshift(x: Any, axes: Any = None) -> Tensor:
    """The inverse of ``fftshift`` (they differ for odd lengths), as ``np.fft.ifftshift``.

    >>> import mars.tensor as mt
    >>> mt.fft.ifftshift(mt.arange(5, chunk_size=2)).execute().fetch()
    array([2, 3, 4, 0, 1])
    """
    t = astensor(x)
    return _rolled(t, _shift_per_axis(t, axes, -1))
