"""Window functions: ``bartlett``, ``blackman``, ``hamming``, ``hanning`` and ``kaiser``.

Each window is numpy's formula applied to a chunked ``arange``, so a long
window is made in parallel, chunk by chunk, with numpy's values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..arithmetic.core import apply_ufunc, where_
from ..core import Tensor
from ..datasource.core import ones
from ..datasource.creation import arange
from .numeric import i0

__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser"]


def _symmetric_points(M: Any, chunk_size: Any) -> tuple[Tensor | None, Tensor | None, Any]:
    """``(empty_or_ones, n, M)``: the whole window when ``M < 2``, else the points
    ``1 - M, 3 - M, ..., M - 1`` numpy's formulas take (with ``M`` as numpy reads it)."""
    values = np.array([0.0, M])
    m = values[1]
    if m < 1:
        return arange(0, dtype=values.dtype, chunk_size=chunk_size), None, m
    if m == 1:
        return ones(1, dtype=values.dtype, chunk_size=chunk_size), None, m
    return None, arange(1 - m, m, 2, chunk_size=chunk_size), m


def _cos(x: Any) -> Tensor:
    return apply_ufunc("cos", x)


def bartlett(M: int, chunk_size: Any = None) -> Tensor:
    """The Bartlett (triangular) window of ``M`` points, as ``np.bartlett``.

    >>> import mars.tensor as mt
    >>> mt.bartlett(5, chunk_size=2).execute().fetch()
    array([0. , 0.5, 1. , 0.5, 0. ])
    """
    whole, n, m = _symmetric_points(M, chunk_size)
    if whole is not None:
        return whole
    return where_(apply_ufunc("less_equal", n, 0), 1 + n / (m - 1), 1 - n / (m - 1))


def blackman(M: int, chunk_size: Any = None) -> Tensor:
    """The Blackman window of ``M`` points, as ``np.blackman``.

    >>> import mars.tensor as mt
    >>> mt.blackman(3, chunk_size=2).execute().fetch().round(6)
    array([-0.,  1., -0.])
    """
    whole, n, m = _symmetric_points(M, chunk_size)
    if whole is not None:
        return whole
    return 0.42 + 0.5 * _cos(np.pi * n / (m - 1)) + 0.08 * _cos(2.0 * np.pi * n / (m - 1))


def hamming(M: int, chunk_size: Any = None) -> Tensor:
    """The Hamming window of ``M`` points, as ``np.hamming``.

    >>> import mars.tensor as mt
    >>> mt.hamming(3, chunk_size=2).execute().fetch().round(6)
    array([0.08, 1.  , 0.08])
    """
    whole, n, m = _symmetric_points(M, chunk_size)
    if whole is not None:
        return whole
    return 0.54 + 0.46 * _cos(np.pi * n / (m - 1))


def hanning(M: int, chunk_size: Any = None) -> Tensor:
    """The Hann window of ``M`` points, as ``np.hanning``.

    >>> import mars.tensor as mt
    >>> mt.hanning(5, chunk_size=2).execute().fetch().round(6)
    array([0. , 0.5, 1. , 0.5, 0. ])
    """
    whole, n, m = _symmetric_points(M, chunk_size)
    if whole is not None:
        return whole
    return 0.5 + 0.5 * _cos(np.pi * n / (m - 1))


def kaiser(M: int, beta: float, chunk_size: Any = None) -> Tensor:
    """The Kaiser window of ``M`` points and shape ``beta``, as ``np.kaiser``.

    >>> import mars.tensor as mt
    >>> mt.kaiser(3, 0, chunk_size=2).execute().fetch()
    array([1., 1., 1.])
    """
    values = np.array([0.0, M, beta])
    m, b = values[1], values[2]
    if m == 1:
        return ones(1, dtype=values.dtype, chunk_size=chunk_size)
    n = arange(0, m, chunk_size=chunk_size)
    alpha = (m - 1) / 2.0
    return i0(b * apply_ufunc("sqrt", 1 - ((n - alpha) / alpha) ** 2.0)) / np.i0(b)
