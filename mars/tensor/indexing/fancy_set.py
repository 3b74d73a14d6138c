"""``t[int_arrays] = value`` with numpy index arrays on consecutive axes."""

from __future__ import annotations

from typing import Any, Generator

import numpy as np

from ...core.operator import Tiled
from ..base.reshape import known_sizes
from ..chunks import offsets
from ..core import Tensor, TensorData, TensorOperator, tensor_data
from .fancy import locate_points
from .index import IntArray


class TensorSetPoints(TensorOperator):
    """One touched chunk: a copy with its points (local coordinates from ``axis``) set."""

    params = ("axis", "points", "value")

    def execute(self, x: np.ndarray) -> np.ndarray:
        out = x.copy()
        out[(slice(None),) * self.axis + tuple(self.points)] = self.value
        return out


class TensorFancySet(TensorOperator):
    """``value`` is a scalar, or an array over ``x.shape[:axis] + (points,) + x.shape[axis+m:]``."""

    params = ("axis", "arrays", "value")

    @classmethod
    def tile(cls, op: TensorFancySet) -> Generator[Any, Any, Tiled]:
        x = op.inputs[0]
        yield from known_sizes([x])
        axis, m = op.axis, len(op.arrays)
        cids, local = locate_points(x, axis, np.broadcast_arrays(*op.arrays))
        starts_all = [offsets(s) for s in x.nsplits]
        chunks = []
        for chunk in x.chunks:
            own = chunk.index[axis:axis + m]
            sel = np.flatnonzero(np.logical_and.reduce([cid == i for cid, i in zip(cids, own)]))
            if sel.size == 0:
                chunks.append(chunk)
                continue
            value = op.value
            if isinstance(value, np.ndarray) and value.ndim:
                region = tuple(slice(starts_all[d][chunk.index[d]], starts_all[d][chunk.index[d]] + chunk.shape[d])
                               for d in range(axis))
                after = tuple(slice(starts_all[d][chunk.index[d]], starts_all[d][chunk.index[d]] + chunk.shape[d])
                              for d in range(axis + m, x.ndim))
                value = value[region + (sel,) + after]
            set_op = TensorSetPoints(axis=axis, points=tuple(loc[sel] for loc in local), value=value)
            chunks.append(set_op.new_chunk([chunk], index=chunk.index, shape=chunk.shape, dtype=chunk.dtype,
                                           order=chunk.order))
        return Tiled(chunks, x.nsplits)


def fancy_set(t: Tensor, entries: list, value: Any) -> TensorData:
    data = tensor_data(t)
    positions = [i for i, e in enumerate(entries) if isinstance(e, IntArray)]
    axis, m = positions[0], len(positions)
    full = all(isinstance(e, slice) and e == slice(None) for i, e in enumerate(entries) if i not in positions)
    if positions != list(range(axis, axis + m)) or not full or any(e is None for e in entries):
        raise NotImplementedError("assignment with integer arrays supports arrays on consecutive axes "
                                  "with every other axis left whole (t[:, idx] = v)")
    arrays = [e.value for e in entries[axis:axis + m]]
    if not all(isinstance(a, np.ndarray) for a in arrays):
        raise NotImplementedError("assignment with a mars integer tensor index is not supported; use a numpy index")
    bshape = np.broadcast_shapes(*(a.shape for a in arrays))
    n = int(np.prod(bshape))
    if np.ndim(value):
        if not isinstance(value, np.ndarray):
            raise NotImplementedError("assignment of a mars tensor through an integer array index is not supported")
        target = tuple(data.shape[:axis]) + bshape + tuple(data.shape[axis + m:])
        try:
            value = np.broadcast_to(value, target)
        except ValueError:
            raise ValueError(f"shape mismatch: value array of shape {value.shape} could not be broadcast "
                             f"to indexing result of shape {target}") from None
        value = np.ascontiguousarray(value).reshape(tuple(data.shape[:axis]) + (n,) + tuple(data.shape[axis + m:]))
    op = TensorFancySet(axis=axis, arrays=tuple(arrays), value=value)
    return op.new_tileable([data], shape=data.shape, dtype=data.dtype, order=data.order)
