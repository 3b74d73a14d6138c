"""``transpose`` / ``.T``: permute axes; chunk (i, j) becomes chunk (j, i)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.operator import Tiled
from ..core import Tensor, TensorOperator, tensor_data
from ..datasource.core import astensor


class TensorTranspose(TensorOperator):
    params = ("axes",)
    fusible = True

    @classmethod
    def tile(cls, op: TensorTranspose) -> Tiled:
        inp, out = op.inputs[0], op.outputs[0]
        axes = op.axes
        nsplits = tuple(inp.nsplits[a] for a in axes)
        chunks = []
        for index in np.ndindex(*[len(s) for s in nsplits]):
            src_index = [0] * inp.ndim
            for new, old in enumerate(axes):
                src_index[old] = index[new]
            src = inp.chunk_at(tuple(src_index))
            shape = tuple(src.shape[a] for a in axes)
            chunks.append(op.copy().new_chunk([src], index=index, shape=shape, dtype=out.dtype, order=out.order))
        return Tiled(chunks, nsplits)

    def execute(self, x: np.ndarray) -> np.ndarray:
        return np.transpose(x, self.axes)


def normalize_axes_permutation(axes: Any, ndim: int) -> tuple[int, ...]:
    if axes is None or axes == ():
        return tuple(reversed(range(ndim)))
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    if len(axes) != ndim:
        raise ValueError("axes don't match array")
    result = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(int(a), ndim)
        result.append(int(a) % ndim)
    if len(set(result)) != ndim:
        raise ValueError("repeated axis in transpose")
    return tuple(result)


def transpose(a: Any, axes: Any = None) -> Tensor:
    """Permute the axes (reverse them by default), as ``np.transpose``.

    >>> import mars.tensor as mt
    >>> mt.ones((2, 3), chunk_size=2).T.shape
    (3, 2)
    """
    data = tensor_data(astensor(a))
    perm = normalize_axes_permutation(tuple(axes) if isinstance(axes, (list, tuple)) else (axes,) if axes is not None else None, data.ndim)
    if perm == tuple(range(data.ndim)):
        return astensor(a)
    shape = tuple(data.shape[p] for p in perm)
    return TensorTranspose(axes=perm).new_tensor([data], shape, data.dtype)
