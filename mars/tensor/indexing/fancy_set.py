"""``x[..., i, j, ...] = value``: index arrays on consecutive axes, every other axis whole.

The points are located in the chunks (as for reading); each touched chunk is
copied once with its points set, the others are kept as they are. A mars
index tensor's values are fetched first. A tensor value is brought to one
chunk along the points' axis, cut like ``x`` on the others, and each touched
chunk takes its points' values from the matching value chunk.
"""

from __future__ import annotations

from typing import Any, Generator

import numpy as np

from ...core.device import copy_array
from ...core.operator import Tiled
from ...core.tiling import recursive_tile
from ..base.reshape import known_sizes, rechunked
from ..base.shape import broadcast_to, reshape
from ..chunks import offsets
from ..core import Tensor, TensorData, TensorOperator, tensor_data
from ..datasource.core import astensor
from .fancy import fetch_indices, locate_points
from .index import broadcast_unknown


class TensorSetPoints(TensorOperator):
    """One touched chunk: a copy with its points (local coordinates from ``axis``) set.

    The values are ``value`` (a scalar, or an array over the chunk's points), or, when
    there is a second input, its elements at ``take`` along ``axis``.
    """

    params = ("axis", "points", "value", "take")

    def execute(self, x: np.ndarray, *value: np.ndarray) -> np.ndarray:
        out = copy_array(x)  # a copy (and a 0-d array where a chunk holds a numpy scalar)
        where = (slice(None),) * self.axis + tuple(self.points)
        out[where] = value[0][(slice(None),) * self.axis + (self.take,)] if value else self.value
        return out


class TensorFancySet(TensorOperator):
    """``x[(:,)*axis + arrays] = value``.

    ``arrays`` is None when the index arrays are mars tensors (the inputs after ``x``).
    ``value`` is a scalar, a numpy array that broadcasts to ``x[index]``'s shape, or
    None when it is the last input (a tensor that broadcasts so).
    """

    params = ("axis", "arrays", "value", "user_axes")
    #: the axes the arrays index in the user's tensor, for error messages only
    unkeyed = ("user_axes",)

    @classmethod
    def tile(cls, op: TensorFancySet) -> Generator[Any, Any, Tiled]:
        x = op.inputs[0]
        yield from known_sizes([x])
        axis = op.axis
        tensor_value = op.value is None
        arrays = op.arrays
        if arrays is None:
            arrays = yield from fetch_indices(op.inputs[1:len(op.inputs) - tensor_value], x, axis, op.user_axes)
        broadcast_unknown(*(a.shape for a in arrays))  # numpy's error for arrays that do not broadcast
        arrays = np.broadcast_arrays(*arrays)
        m, n = len(arrays), arrays[0].size
        # the value broadcast to x[index], with the points flattened to one axis
        target = tuple(x.shape[:axis]) + arrays[0].shape + tuple(x.shape[axis + m:])
        flat_shape = tuple(x.shape[:axis]) + (n,) + tuple(x.shape[axis + m:])
        if tensor_value:
            value = yield from _value_on_points(op.inputs[-1], x, axis, target, flat_shape)
        else:
            value = op.value if not np.ndim(op.value) else np.broadcast_to(op.value, target).reshape(flat_shape)
        by_chunk, local = _points_by_chunk(x, axis, arrays)
        starts = [offsets(s) for s in x.nsplits]
        chunks = []
        for chunk in x.chunks:
            sel = by_chunk.get(chunk.index[axis:axis + m])
            if sel is None:
                chunks.append(chunk)
                continue
            points = tuple(loc[sel] for loc in local)
            chunks.append(_set_chunk(chunk, axis, m, points, sel, value, starts))
        return Tiled(chunks, x.nsplits)


def _points_by_chunk(x: Any, axis: int, arrays: list) -> tuple[dict, list]:
    """{chunk coords on the index axes: positions of its points (in order)}, and the points' local coords."""
    cids, local = locate_points(x, axis, arrays)
    if not arrays[0].size:
        return {}, local
    grid_m = [x.chunk_shape[axis + j] for j in range(len(arrays))]
    group = np.ravel_multi_index(cids, grid_m)
    order = np.argsort(group, kind="stable")  # stable: repeated points keep numpy's last-one-wins
    groups, starts = np.unique(group[order], return_index=True)
    bounds = list(starts[1:]) + [len(order)]
    by_chunk = {tuple(int(i) for i in np.unravel_index(g, grid_m)): order[a:b] for g, a, b in zip(groups, starts, bounds)}
    return by_chunk, local


def _value_on_points(value: TensorData, x: Any, axis: int, target: tuple,
                     flat_shape: tuple) -> Generator[Any, Any, TensorData]:
    """A tensor value broadcast to ``target`` (``x[index]``'s shape), its points flattened to one
    chunk, the other axes cut like ``x``."""
    m = x.ndim - len(flat_shape) + 1
    yield from known_sizes([value])
    v = reshape(broadcast_to(Tensor(value), target), flat_shape)
    yield from recursive_tile(v)
    nsplits = tuple(x.nsplits[:axis]) + ((flat_shape[axis],),) + tuple(x.nsplits[axis + m:])
    return (yield from rechunked(v.data, nsplits))


def _set_chunk(chunk: Any, axis: int, m: int, points: tuple, sel: np.ndarray, value: Any, starts: list) -> Any:
    meta = dict(index=chunk.index, shape=chunk.shape, dtype=chunk.dtype, order=chunk.order)
    if isinstance(value, TensorData):
        at = chunk.index[:axis] + (0,) + chunk.index[axis + m:]
        op = TensorSetPoints(axis=axis, points=points, value=None, take=sel)
        return op.new_chunk([chunk, value.chunk_at(at)], **meta)
    if np.ndim(value):
        region = tuple(slice(starts[d][chunk.index[d]], starts[d][chunk.index[d]] + chunk.shape[d])
                       for d in range(axis))
        after = tuple(slice(starts[d][chunk.index[d]], starts[d][chunk.index[d]] + chunk.shape[d])
                      for d in range(axis + m, chunk.ndim))
        value = value[region + (sel,) + after]
    return TensorSetPoints(axis=axis, points=points, value=value, take=None).new_chunk([chunk], **meta)


def fancy_set(t: Any, axis: int, arrays: list, value: Any, user_axes: Any = None) -> TensorData:
    """``t[(:,)*axis + arrays] = value``: arrays numpy or TensorData; ``value`` a scalar, or a
    numpy array / TensorData that broadcasts to ``t[index]``'s shape (cast by the caller).
    ``user_axes``: where the arrays' axes were in the user's index, for error messages."""
    data = tensor_data(t)
    inputs = [data]
    if any(isinstance(a, TensorData) for a in arrays):
        inputs += [a if isinstance(a, TensorData) else tensor_data(astensor(a)) for a in arrays]
        arrays = None
    else:
        arrays = tuple(arrays)
    if isinstance(value, TensorData):
        inputs.append(value)
        value = None
    op = TensorFancySet(axis=axis, arrays=arrays, value=value,
                        user_axes=None if user_axes is None else tuple(user_axes))
    return op.new_tileable(inputs, shape=data.shape, dtype=data.dtype, order=data.order)
