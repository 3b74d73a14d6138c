"""``mt.linalg.norm``: vector and matrix norms as numpy computes them.

Norms that are sums or extremes of elementwise terms are built from ufuncs
and reductions, so they fuse and run chunk by chunk. The spectral norms
(ord 2, -2 and 'nuc') need a singular value decomposition: the matrix is
gathered into one chunk and ``np.linalg.norm`` runs there.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.operator import Tiled
from ..arithmetic import ufuncs as uf
from ..core import Tensor, TensorOperator, tensor_data
from ..datasource.core import astensor
from ..rechunk import rechunk
from ..reduction import basic
from ..reduction.core import normalize_axis

__all__ = ["norm"]


class TensorSpectralNorm(TensorOperator):
    """``np.linalg.norm`` over the two matrix axes of a single chunk (SVD-based orders)."""

    params = ("ord", "axis", "keepdims")
    blas = True

    @classmethod
    def tile(cls, op: TensorSpectralNorm) -> Tiled:
        inp, out = op.inputs[0], op.outputs[0]
        chunk = op.copy().new_chunk(inp.chunks, index=(0,) * out.ndim, shape=out.shape, dtype=out.dtype, order="C")
        return Tiled([chunk], tuple((s,) for s in out.shape))

    def execute(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(np.linalg.norm(x, ord=self.ord, axis=self.axis, keepdims=self.keepdims))


def _vector_norm(x: Tensor, ord: Any, axis: tuple, keepdims: bool) -> Tensor:
    if ord is None or ord == 2:
        s = basic.sum(uf.square(uf.absolute(x)) if x.dtype.kind == "c" else uf.square(x), axis=axis, keepdims=keepdims)
        return uf.sqrt(s)
    if ord == np.inf:
        return basic.max(uf.absolute(x), axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return basic.min(uf.absolute(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return basic.sum(uf.not_equal(x, 0), axis=axis, keepdims=keepdims).astype(x.real.dtype if x.dtype.kind == "c" else x.dtype)
    if ord == 1:
        return basic.sum(uf.absolute(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    p = float(ord)
    return uf.power(basic.sum(uf.power(uf.absolute(x), p), axis=axis, keepdims=keepdims), 1.0 / p)


def _matrix_norm(x: Tensor, ord: Any, axis: tuple, keepdims: bool) -> Tensor:
    row, col = axis
    if ord in (None, "fro", "f"):
        return _vector_norm(x, None, axis, keepdims)
    if ord in (1, -1, np.inf, -np.inf):
        over, then = (row, col) if ord in (1, -1) else (col, row)
        sums = basic.sum(uf.absolute(x), axis=over, keepdims=True)
        pick = basic.max if ord > 0 else basic.min
        result = pick(sums, axis=then, keepdims=True)
        return result if keepdims else result.squeeze(axis=axis)
    if ord in (2, -2, "nuc"):
        data = tensor_data(x)
        whole = rechunk(x, tuple(s for s in data.shape))
        shape = tuple(1 if d in axis else s for d, s in enumerate(data.shape)) if keepdims else tuple(
            s for d, s in enumerate(data.shape) if d not in axis)
        dtype = np.linalg.norm(np.ones((1, 1), dtype=data.dtype), ord=ord).dtype
        return TensorSpectralNorm(ord=ord, axis=axis, keepdims=keepdims).new_tensor([whole.data], shape, dtype)
    raise ValueError("Invalid norm order for matrices.")


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Matrix or vector norm, as ``np.linalg.norm``.

    >>> import mars.tensor as mt
    >>> float(mt.linalg.norm(mt.tensor([3.0, 4.0], chunk_size=1)))
    5.0
    """
    t = astensor(x)
    if t.dtype.kind not in "fc":
        t = t.astype(float)
    if axis is None:
        if ord is None:
            return _vector_norm(t, None, tuple(range(t.ndim)), keepdims)
        if t.ndim not in (1, 2):
            raise ValueError("Improper number of dimensions to norm.")
        axis = tuple(range(t.ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    norm_axes = normalize_axis(axes, t.ndim)
    if len(axes) == 1:
        return _vector_norm(t, ord, norm_axes, keepdims)
    if len(axes) == 2:
        pair = tuple(int(a) % t.ndim for a in axes)
        if pair[0] == pair[1]:
            raise ValueError("Duplicate axes given.")
        return _matrix_norm(t, ord, pair, keepdims)
    raise ValueError("Improper number of dimensions to norm.")
