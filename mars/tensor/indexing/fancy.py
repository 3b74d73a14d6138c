"""Advanced indexing: integer arrays (numpy or mars) and boolean masks.

Integer arrays on consecutive axes: the requested points are grouped by the
input chunk they fall in, each touched chunk gives its points (in one select
op), and one gather op per output chunk puts them back in the requested
order. A mars index tensor's values are fetched first (tiling in stages).

A boolean mask over the leading axes: each input chunk keeps the rows its
mask chunk selects, so the result's length is known only after running.
"""

from __future__ import annotations

import math
from typing import Any, Generator, Sequence

import numpy as np

from ...core.operator import Fetch, Tiled
from ..base.reshape import known_sizes, rechunked
from ..core import Tensor, TensorData, TensorOperator, tensor_data
from ..datasource.core import astensor


class TensorFancyIndex(TensorOperator):
    """``x[(:,)*axis + arrays]``: int arrays (broadcast together) on axes ``axis .. axis+len(arrays)-1``."""

    params = ("axis", "arrays", "shape")

    @classmethod
    def tile(cls, op: TensorFancyIndex) -> Generator[Any, Any, Tiled]:
        x = op.inputs[0]
        yield from known_sizes([x])
        arrays = op.arrays
        if arrays is None:  # index tensors: read their values first
            arrays = yield from _fetch_indices(op.inputs[1:], x, op.axis)
        return _tile_points(op, x, np.broadcast_arrays(*arrays))


def _fetch_indices(tensors: Sequence[TensorData], x: Any, axis: int) -> Generator[Any, Any, list]:
    result = []
    for j, t in enumerate(tensors):
        values = yield Fetch(t.chunks)
        t.refresh_shape()
        array = np.asarray(t.assemble(values), dtype=np.intp)
        size = x.shape[axis + j]
        if array.size and (array.max() >= size or array.min() < -size):
            bad = array.max() if array.max() >= size else array.min()
            raise IndexError(f"index {bad} is out of bounds for axis {axis + j} with size {size}")
        result.append(np.where(array < 0, array + int(size), array))
    return result


def locate_points(x: Any, axis: int, arrays: Sequence[np.ndarray]) -> tuple[list, list]:
    """For points given by index arrays on the axes from ``axis``: per axis, the chunk
    each point falls in and its coordinate within that chunk."""
    cids, local = [], []
    for j, a in enumerate(arrays):
        c = a.ravel()
        bounds = np.cumsum(x.nsplits[axis + j])
        cid = np.searchsorted(bounds, c, side="right")
        cids.append(cid)
        local.append(c - np.concatenate([[0], bounds[:-1]])[cid])
    return cids, local


def _tile_points(op: TensorFancyIndex, x: Any, arrays: list) -> Tiled:
    out, axis, m = op.outputs[0], op.axis, len(arrays)
    bshape = arrays[0].shape
    grid_m = [x.chunk_shape[axis + j] for j in range(m)]
    cids, locals_ = locate_points(x, axis, arrays)
    group = np.ravel_multi_index(cids, grid_m) if arrays[0].size else np.zeros(0, dtype=np.intp)
    order = np.argsort(group, kind="stable")
    groups, starts = np.unique(group[order], return_index=True)
    other = [d for d in range(x.ndim) if not axis <= d < axis + m]
    chunks = []
    for other_index in np.ndindex(*[x.chunk_shape[d] for d in other]):
        pieces = []
        for g, lo, hi in zip(groups, starts, list(starts[1:]) + [len(order)]):
            sel = order[lo:hi]
            cidx = np.unravel_index(g, grid_m)
            src = x.chunk_at(_merge(other, other_index, axis, cidx))
            local = tuple(loc[sel] for loc in locals_)
            shape = src.shape[:axis] + (len(sel),) + src.shape[axis + m:]
            pieces.append(TensorSelectPoints(axis=axis, points=local).new_chunk(
                [src], index=(len(pieces),), shape=shape, dtype=out.dtype, order="C"))
        if not pieces:  # an empty index still yields an (empty) chunk
            src = x.chunk_at(_merge(other, other_index, axis, (0,) * m))
            empty = tuple(np.zeros(0, dtype=np.intp) for _ in range(m))
            pieces.append(TensorSelectPoints(axis=axis, points=empty).new_chunk(
                [src], index=(0,), shape=src.shape[:axis] + (0,) + src.shape[axis + m:], dtype=out.dtype, order="C"))
        shape = pieces[0].shape[:axis] + bshape + pieces[0].shape[axis + 1:]
        index = other_index[:axis] + (0,) * len(bshape) + other_index[axis:]
        gather = TensorGatherPoints(axis=axis, order=order, bshape=bshape)
        chunks.append(gather.new_chunk(pieces, index=index, shape=shape, dtype=out.dtype, order="C"))
    nsplits = tuple(x.nsplits[d] for d in other[:axis]) + tuple((b,) for b in bshape) + tuple(
        x.nsplits[d] for d in other[axis:])
    return Tiled(chunks, nsplits)


def _merge(other: list, other_index: tuple, axis: int, cidx: Sequence[int]) -> tuple:
    index = [0] * (len(other) + len(cidx))
    for d, i in zip(other, other_index):
        index[d] = i
    for j, i in enumerate(cidx):
        index[axis + j] = int(i)
    return tuple(index)


class TensorSelectPoints(TensorOperator):
    """The points of one input chunk (local coordinates on consecutive axes from ``axis``)."""

    params = ("axis", "points")

    def execute(self, x: np.ndarray) -> np.ndarray:
        return x[(slice(None),) * self.axis + tuple(self.points)]


class TensorGatherPoints(TensorOperator):
    """Pieces (grouped by chunk) back into the requested order, reshaped to the index's shape."""

    params = ("axis", "order", "bshape")

    def execute(self, *pieces: np.ndarray) -> np.ndarray:
        axis = self.axis
        grouped = np.concatenate(pieces, axis=axis) if len(pieces) > 1 else pieces[0]
        result = np.empty_like(grouped)
        target = [slice(None)] * grouped.ndim
        target[axis] = self.order
        result[tuple(target)] = grouped
        return result.reshape(result.shape[:axis] + tuple(self.bshape) + result.shape[axis + 1:])


def fancy_index(t: Any, axis: int, arrays: list) -> Tensor:
    """``t`` indexed by int arrays (numpy, or mars tensors) on the axes from ``axis``."""
    data = tensor_data(t)
    tensors = [a for a in arrays if isinstance(a, TensorData)]
    if tensors and len(tensors) != len(arrays):
        arrays = [a if isinstance(a, TensorData) else tensor_data(astensor(a)) for a in arrays]
        tensors = arrays
    if tensors:
        bshape = np.broadcast_shapes(*(a.shape for a in arrays)) if all(
            not any(isinstance(s, float) for s in a.shape) for a in arrays) else (math.nan,)
        op = TensorFancyIndex(axis=axis, arrays=None, shape=None)
        inputs = [data] + tensors
    else:
        bshape = np.broadcast_shapes(*(a.shape for a in arrays))
        op = TensorFancyIndex(axis=axis, arrays=tuple(arrays), shape=bshape)
        inputs = [data]
    shape = data.shape[:axis] + tuple(bshape) + data.shape[axis + len(arrays):]
    return op.new_tensor(inputs, shape, data.dtype)


# ----------------------------------------------------------------- boolean masks
class TensorBoolIndex(TensorOperator):
    """``x[mask]`` with ``mask`` over the leading ``mask.ndim`` axes of ``x``."""

    params = ()

    @classmethod
    def tile(cls, op: TensorBoolIndex) -> Generator[Any, Any, Tiled]:
        x, mask = op.inputs
        k = mask.ndim
        yield from known_sizes([x, mask])
        # C order of the result = chunk order only if axes 1..k-1 are whole chunks
        lead = (x.nsplits[0],) + tuple((int(s),) for s in x.shape[1:k])
        x = yield from rechunked(x, lead + tuple(x.nsplits[k:]))
        mask = yield from rechunked(mask, lead)
        out = op.outputs[0]
        chunks = []
        for i in range(x.chunk_shape[0]):
            m = mask.chunk_at((i,) + (0,) * (k - 1))
            for rest in np.ndindex(*x.chunk_shape[k:]):
                src = x.chunk_at((i,) + (0,) * (k - 1) + rest)
                shape = (math.nan,) + src.shape[k:]
                chunks.append(TensorMaskChunk().new_chunk([src, m], index=(i,) + rest, shape=shape,
                                                          dtype=out.dtype, order="C"))
        nsplits = ((math.nan,) * x.chunk_shape[0],) + tuple(x.nsplits[k:])
        return Tiled(chunks, nsplits)


class TensorMaskChunk(TensorOperator):
    params = ()

    def execute(self, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return x[mask]


def bool_index(t: Any, mask: Any) -> Tensor:
    data = tensor_data(t)
    m = tensor_data(astensor(mask)) if not isinstance(mask, TensorData) else mask
    shape = (math.nan,) + tuple(data.shape[m.ndim:])
    return TensorBoolIndex().new_tensor([data, m], shape, data.dtype)
