"""Vector and matrix norms as numpy computes them: ``norm``, ``vector_norm``, ``matrix_norm``.

Norms that are sums or extremes of elementwise terms are built from ufuncs
and reductions, so they fuse and run chunk by chunk. The spectral norms
(ord 2, -2 and 'nuc') need a singular value decomposition: the two matrix
axes are gathered into whole chunks (other axes keep their chunks) and
``np.linalg.norm`` runs on each.
"""

from __future__ import annotations

from typing import Any, Generator

import numpy as np

from ...core.operator import Tiled
from ..arithmetic import ufuncs as uf
from ..arithmetic.funcs import imag, real
from ..base.reshape import known_sizes, rechunked
from ..core import Tensor, TensorOperator, tensor_data
from ..datasource.core import astensor, zeros
from ..reduction import basic
from ..reduction.core import normalize_axis

__all__ = ["norm", "vector_norm", "matrix_norm"]


def _max_of_empty_is_zero() -> bool:
    """numpy 2.3 made the inf-norms of empty arrays 0 (before, max raised); follow the installed one."""
    try:
        return np.linalg.norm(np.zeros(0), np.inf) == 0
    except ValueError:
        return False


_MAX_OF_EMPTY_IS_ZERO = _max_of_empty_is_zero()


class TensorSpectralNorm(TensorOperator):
    """``np.linalg.norm`` (ord 2, -2 or 'nuc') of chunks that hold the two matrix axes whole."""

    params = ("ord", "axis", "keepdims")
    blas = True

    @classmethod
    def tile(cls, op: TensorSpectralNorm) -> Generator[Any, Any, Tiled]:
        inp, out = op.inputs[0], op.outputs[0]
        yield from known_sizes([inp], op.axis)
        whole = tuple((inp.shape[d],) if d in op.axis else s for d, s in enumerate(inp.nsplits))
        inp = yield from rechunked(inp, whole)
        chunks = []
        for c in inp.chunks:
            index, shape = _reduced(c.index, op.axis, op.keepdims, 0), _reduced(c.shape, op.axis, op.keepdims, 1)
            chunks.append(op.copy().new_chunk([c], index=index, shape=shape, dtype=out.dtype, order="C"))
        nsplits = _reduced(inp.nsplits, op.axis, op.keepdims, (1,))
        return Tiled(chunks, nsplits)

    def execute(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(np.linalg.norm(x, ord=self.ord, axis=self.axis, keepdims=self.keepdims))


def _reduced(values: tuple, axes: tuple, keepdims: bool, kept: Any) -> tuple:
    """``values`` (one per dimension) with the reduced ``axes`` dropped, or set to ``kept``."""
    if keepdims:
        return tuple(kept if d in axes else v for d, v in enumerate(values))
    return tuple(v for d, v in enumerate(values) if d not in axes)


def _abs_squared(x: Tensor) -> Tensor:
    # numpy's (x.conj() * x).real: no square root taken and squared again
    if x.dtype.kind == "c":
        return uf.square(real(x)) + uf.square(imag(x))
    return uf.square(x)


def _largest(x: Tensor, axis: tuple, keepdims: bool) -> Tensor:
    """``x.max(axis, initial=0)`` for non-negative ``x``, as numpy's norms take it."""
    data = tensor_data(x)
    if _MAX_OF_EMPTY_IS_ZERO and any(data.shape[d] == 0 for d in axis):
        return zeros(_reduced(data.shape, axis, keepdims, 1), dtype=data.dtype)
    return basic.max(x, axis=axis, keepdims=keepdims)


def _vector_norm(x: Tensor, ord: Any, axis: tuple, keepdims: bool) -> Tensor:
    axis = normalize_axis(axis, x.ndim)
    if ord is None or ord == 2:
        return uf.sqrt(basic.sum(_abs_squared(x), axis=axis, keepdims=keepdims))
    if ord == np.inf:
        return _largest(uf.absolute(x), axis, keepdims)
    if ord == -np.inf:
        return basic.min(uf.absolute(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        real_dtype = np.empty(0, x.dtype).real.dtype
        return basic.sum(uf.not_equal(x, 0), axis=axis, keepdims=keepdims, dtype=real_dtype)
    if ord == 1:
        return basic.sum(uf.absolute(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    total = basic.sum(uf.power(uf.absolute(x), ord), axis=axis, keepdims=keepdims)
    return uf.power(total, np.reciprocal(ord, dtype=total.dtype))


def _matrix_norm(x: Tensor, ord: Any, axis: tuple[int, int], keepdims: bool) -> Tensor:
    row, col = axis
    if ord in ("fro", "f") or ord is None:
        return uf.sqrt(basic.sum(_abs_squared(x), axis=axis, keepdims=keepdims))
    if ord in (1, -1, np.inf, -np.inf):
        # 1: the largest column sum (sum over rows first); inf: the largest row sum
        over, then = (row, col) if ord in (1, -1) else (col, row)
        sums = basic.sum(uf.absolute(x), axis=over, keepdims=True)
        result = _largest(sums, (then,), True) if ord > 0 else basic.min(sums, axis=then, keepdims=True)
        return result if keepdims else result.squeeze(axis=axis)
    if ord in (2, -2, "nuc"):
        data = tensor_data(x)
        shape = _reduced(data.shape, axis, keepdims, 1)
        dtype = np.linalg.norm(np.ones((1, 1), dtype=data.dtype), ord=ord).dtype
        op = TensorSpectralNorm(ord=ord, axis=tuple(sorted(axis)), keepdims=keepdims)
        return op.new_tensor([data], shape, dtype)
    raise ValueError("Invalid norm order for matrices.")


def _as_inexact(x: Any) -> Tensor:
    t = astensor(x)
    return t if t.dtype.kind in "fc" else t.astype(float)


def _axis_tuple(axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` as np.linalg.norm reads it: None, something ``int()`` takes, or a tuple."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, tuple):
        return axis
    try:
        return (int(axis),)
    except (TypeError, ValueError):
        raise TypeError(f"'axis' must be None, an integer or a tuple of integers, got {axis!r}") from None


def _matrix_axes(axis: tuple, ndim: int) -> tuple[int, int]:
    pair = []
    for ax in axis:
        if not isinstance(ax, (int, np.integer)) or isinstance(ax, (bool, np.bool_)):
            raise TypeError(f"'axis' must be None, an integer or a tuple of integers, got {axis!r}")
        if not -ndim <= ax < ndim:
            raise np.exceptions.AxisError(int(ax), ndim)
        pair.append(int(ax) % ndim)
    if pair[0] == pair[1]:
        raise ValueError(f"Duplicate axes given: {axis!r}")
    return pair[0], pair[1]


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Matrix or vector norm, as ``np.linalg.norm``.

    With ``axis`` None, a 1-D input gets a vector norm and a 2-D one a matrix
    norm (any input when ``ord`` is None: the 2-norm of all elements). An int
    ``axis`` asks for vector norms along it, a pair for matrix norms.

    >>> import mars.tensor as mt
    >>> mt.linalg.norm(mt.tensor([3.0, 4.0], chunk_size=1)).execute().fetch()
    np.float64(5.0)
    """
    t = _as_inexact(x)
    if axis is None and ord is None:
        return _vector_norm(t, None, tuple(range(t.ndim)), keepdims)
    axes = _axis_tuple(axis, t.ndim)
    if len(axes) == 1:
        return _vector_norm(t, ord, axes, keepdims)
    if len(axes) == 2:
        return _matrix_norm(t, ord, _matrix_axes(axes, t.ndim), keepdims)
    raise ValueError(f"Improper number of dimensions to norm: {len(axes)} axes {axes!r}")


def vector_norm(x: Any, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Tensor:
    """The vector norm over ``axis`` (all axes by default, any number of them), as ``np.linalg.vector_norm``.

    >>> import mars.tensor as mt
    >>> mt.linalg.vector_norm(mt.ones((2, 2), chunk_size=1), ord=1).execute().fetch()
    np.float64(4.0)
    """
    t = _as_inexact(x)
    axes = tuple(range(t.ndim)) if axis is None else axis if isinstance(axis, tuple) else (axis,)
    return _vector_norm(t, ord, axes, keepdims)


def matrix_norm(x: Any, *, keepdims: bool = False, ord: Any = "fro") -> Tensor:
    """The matrix norm over the last two axes, as ``np.linalg.matrix_norm``.

    >>> import mars.tensor as mt
    >>> mt.linalg.matrix_norm(mt.ones((3, 2, 2), chunk_size=1), ord=1).execute().fetch()
    array([2., 2., 2.])
    """
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)
