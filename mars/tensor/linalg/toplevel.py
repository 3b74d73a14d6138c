"""Top-level names from the linear-algebra family: ``mt.cross``, ``mt.diagonal``, ``mt.vecdot``,
``mt.matrix_transpose``, and the array-API spellings ``mt.linalg`` gives them.

All are built from chunked elementwise ops, reductions and axis moves, so
they keep the input's chunks; ``diagonal`` of more than two dimensions
gathers the two diagonal axes of each chunk (a 2-D one takes the diagonal
chunk by chunk, as ``mt.diag`` does).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..arithmetic import ufuncs as uf
from ..base.join import stack
from ..base.shape import moveaxis, swapaxes
from ..base.transpose import transpose
from ..chunks import broadcast_shape
from ..core import Tensor
from ..datasource.core import astensor
from ..datasource.creation import diag
from ..reduction import basic
from .whole import whole_matrix

__all__ = ["cross", "diagonal", "vecdot", "matrix_transpose"]


def _diagonal_copy(x: np.ndarray, offset: int) -> np.ndarray:
    return np.diagonal(x, offset, -2, -1).copy()  # numpy's diagonal is a read-only view of the chunk


def _axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    """The ``offset`` diagonal over ``axis1`` and ``axis2``, as ``np.diagonal`` (the diagonal becomes the
    last axis; the result is a copy, never a view).

    >>> import mars.tensor as mt
    >>> mt.diagonal(mt.arange(8, chunk_size=3).reshape(2, 2, 2), axis1=1, axis2=2).execute().fetch()
    array([[0, 3],
           [4, 7]])
    """
    t = astensor(a)
    if t.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    ax1, ax2 = _axis(axis1, t.ndim), _axis(axis2, t.ndim)
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 cannot be the same")
    t = transpose(t, [d for d in range(t.ndim) if d not in (ax1, ax2)] + [ax1, ax2])
    if t.ndim == 2:
        return diag(t, k=offset)
    rows, cols = t.shape[-2:]
    length = max(0, min(rows - max(-offset, 0), cols - max(offset, 0)))
    return whole_matrix(_diagonal_copy, [t], [(tuple(t.shape[:-2]) + (length,), t.dtype)], offset=offset)[0]


def matrix_transpose(x: Any, /) -> Tensor:
    """Each matrix (the last two axes) transposed, as ``np.matrix_transpose``.

    >>> import mars.tensor as mt
    >>> mt.matrix_transpose(mt.ones((4, 2, 3))).shape
    (4, 3, 2)
    """
    t = astensor(x)
    if t.ndim < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, got {t.ndim} dimensions")
    return swapaxes(t, -1, -2)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Tensor:
    """Dot products of vectors along ``axis`` (conjugating ``x1``), broadcast, as ``np.vecdot``.

    >>> import mars.tensor as mt
    >>> mt.vecdot(mt.ones((2, 3), chunk_size=2), mt.arange(3)).execute().fetch()
    array([3., 3.])
    """
    t1, t2 = astensor(x1), astensor(x2)
    for i, t in enumerate((t1, t2)):
        if t.ndim == 0:
            raise ValueError(f"vecdot: Input operand {i} does not have enough dimensions "
                             "(has 0, gufunc core with signature (n),(n)->() requires 1)")
    t1, t2 = moveaxis(t1, _axis(axis, t1.ndim), -1), moveaxis(t2, _axis(axis, t2.ndim), -1)
    if t1.shape[-1] != t2.shape[-1]:
        raise ValueError(f"vecdot: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
                         f"signature (n),(n)->() (size {t2.shape[-1]} is different from {t1.shape[-1]})")
    dtype = np.result_type(t1.dtype, t2.dtype)
    if dtype == np.bool_:
        return basic.any(uf.logical_and(t1, t2), axis=-1)
    if t1.dtype.kind == "c":
        t1 = uf.conjugate(t1)
    return basic.sum(uf.multiply(t1, t2), axis=-1, dtype=dtype)


def _vectors(t: Tensor, axis: int, name: str) -> Tensor:
    if t.ndim == 0:
        raise np.exceptions.AxisError(axis, 0, f"axis{name}")
    t = moveaxis(t, _axis(axis, t.ndim), -1)
    if t.shape[-1] not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    return t


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None) -> Tensor:
    """Cross products of 3-element (or, deprecated as in numpy, 2-element) vectors, as ``np.cross``.

    >>> import mars.tensor as mt
    >>> mt.cross(mt.tensor([1, 0, 0]), mt.tensor([0, 1, 0])).execute().fetch()
    array([0, 0, 1])
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    ta, tb = _vectors(astensor(a), axisa, "a"), _vectors(astensor(b), axisb, "b")
    na, nb = ta.shape[-1], tb.shape[-1]
    if 2 in (na, nb):
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of 3-dimensional vectors "
                      "instead. (deprecated in NumPy 2.0)", DeprecationWarning, stacklevel=2)
    dtype = np.result_type(ta.dtype, tb.dtype)
    broadcast_shape(tuple(ta.shape[:-1]), tuple(tb.shape[:-1]))  # numpy's error for shapes that do not broadcast
    a0, a1, b0, b1 = ta[..., 0], ta[..., 1], tb[..., 0], tb[..., 1]
    z = uf.subtract(uf.multiply(a0, b1), uf.multiply(a1, b0))
    if na == 2 and nb == 2:
        return z.astype(dtype)
    if na == 2:
        b2 = tb[..., 2]
        parts = [uf.multiply(a1, b2), uf.negative(uf.multiply(a0, b2)), z]
    elif nb == 2:
        a2 = ta[..., 2]
        parts = [uf.negative(uf.multiply(a2, b1)), uf.multiply(a2, b0), z]
    else:
        a2, b2 = ta[..., 2], tb[..., 2]
        parts = [uf.subtract(uf.multiply(a1, b2), uf.multiply(a2, b1)),
                 uf.subtract(uf.multiply(a2, b0), uf.multiply(a0, b2)), z]
    result = stack(parts, axis=-1).astype(dtype)
    return moveaxis(result, -1, _axis(axisc, result.ndim))


# ----------------------------------------------------------------- the array-API spellings in mt.linalg
def linalg_cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Tensor:
    """``np.linalg.cross``: :func:`cross` of 3-element vectors only, along ``axis`` of both.

    >>> import mars.tensor as mt
    >>> mt.linalg.cross(mt.tensor([0., 1., 0.]), mt.tensor([0., 0., 1.])).execute().fetch()
    array([1., 0., 0.])
    """
    t1, t2 = astensor(x1), astensor(x2)
    n1, n2 = t1.shape[axis] if t1.ndim else 0, t2.shape[axis] if t2.ndim else 0
    if n1 != 3 or n2 != 3:
        raise ValueError(f"Both input arrays must be (arrays of) 3-dimensional vectors, "
                         f"but they are {n1} and {n2} dimensional instead.")
    return cross(t1, t2, axis=axis)


def linalg_diagonal(x: Any, /, *, offset: int = 0) -> Tensor:
    """``np.linalg.diagonal``: the diagonals of the matrices in the last two axes.

    >>> import mars.tensor as mt
    >>> mt.linalg.diagonal(mt.eye(3, chunk_size=2), offset=1).execute().fetch()
    array([0., 0.])
    """
    return diagonal(x, offset, -2, -1)


def linalg_trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Tensor:
    """``np.linalg.trace``: the sums of the diagonals of the matrices in the last two axes.

    >>> import mars.tensor as mt
    >>> mt.linalg.trace(mt.ones((2, 3, 3), chunk_size=2)).execute().fetch()
    array([3., 3.])
    """
    return basic.sum(diagonal(x, offset, -2, -1), axis=-1, dtype=dtype)
