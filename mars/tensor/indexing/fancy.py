"""Integer-array indexing: ``x[..., i, j, ...]`` with index arrays on consecutive axes.

The requested points are cut, in their requested (C) order, into output
chunks of about one input chunk's worth of points. For each output chunk the
points are grouped by the input chunk they fall in; each touched input chunk
gives its points (one select op), and one gather op puts them back in the
requested order. A mars index tensor's values are fetched first (tiling in
stages), then it goes as a numpy index does.
"""

from __future__ import annotations

import math
from typing import Any, Generator, Sequence

import numpy as np

from ...core.operator import Fetch, Tiled
from ..base.reshape import known_sizes
from ..core import Tensor, TensorData, TensorOperator, tensor_data
from ..datasource.core import astensor
from .index import broadcast_unknown


class TensorFancyIndex(TensorOperator):
    """``x[(:,)*axis + arrays]``: int arrays (broadcast together) on axes ``axis .. axis+len(arrays)-1``.

    ``arrays`` is None when the index arrays are mars tensors (the inputs after ``x``).
    """

    params = ("axis", "arrays")

    @classmethod
    def tile(cls, op: TensorFancyIndex) -> Generator[Any, Any, Tiled]:
        x = op.inputs[0]
        yield from known_sizes([x])
        arrays = op.arrays
        if arrays is None:
            arrays = yield from fetch_indices(op.inputs[1:], x, op.axis)
        broadcast_unknown(*(a.shape for a in arrays))  # numpy's error for arrays that do not broadcast
        return _tile_points(op.outputs[0], x, op.axis, np.broadcast_arrays(*arrays))


def fetch_indices(tensors: Sequence[TensorData], x: Any, axis: int) -> Generator[Any, Any, list]:
    """The values of index tensors for the axes of ``x`` from ``axis`` (checked, negatives resolved)."""
    values = yield Fetch([c for t in tensors for c in t.chunks])
    result, at = [], 0
    for j, t in enumerate(tensors):
        part, at = values[at:at + len(t.chunks)], at + len(t.chunks)
        t.refresh_shape()
        array = np.asarray(t.assemble(part), dtype=np.intp)
        size = x.shape[axis + j]
        if array.size:
            lo, hi = int(array.min()), int(array.max())
            if hi >= size or lo < -size:
                raise IndexError(f"index {hi if hi >= size else lo} is out of bounds for axis {axis + j} with size {size}")
            if lo < 0:
                array = np.where(array < 0, array + int(size), array)
        result.append(array)
    return result


def locate_points(x: Any, axis: int, arrays: Sequence[np.ndarray]) -> tuple[list, list]:
    """For points given by index arrays on the axes from ``axis``: per axis, the chunk
    each point falls in and its coordinate within that chunk (flattened, C order)."""
    cids, local = [], []
    for j, a in enumerate(arrays):
        c = np.ravel(a)
        bounds = np.cumsum(x.nsplits[axis + j])
        cid = np.searchsorted(bounds, c, side="right")
        cids.append(cid)
        local.append(c - np.concatenate([[0], bounds[:-1]])[cid])
    return cids, local


def _row_splits(bshape: tuple, per_chunk: int) -> list[tuple[int, int]]:
    """Rows (along the index's first dim) of each output chunk: about ``per_chunk`` points each."""
    if not bshape:
        return [(0, 1)]
    rows, inner = bshape[0], math.prod(bshape[1:])
    step = max(1, per_chunk // max(inner, 1))
    return [(lo, min(lo + step, rows)) for lo in range(0, rows, step)] or [(0, 0)]


def _group_points(cids: list, local: list, grid_m: list, lo: int, hi: int) -> tuple[Any, list]:
    """Points ``lo:hi`` grouped by input chunk: (gather order or None, [(chunk coords, local points)])."""
    part_cids = [c[lo:hi] for c in cids]
    if hi <= lo:
        return None, []
    group = np.ravel_multi_index(part_cids, grid_m)
    order = np.argsort(group, kind="stable")
    groups, starts = np.unique(group[order], return_index=True)
    bounds = list(starts[1:]) + [len(order)]
    picks = []
    for g, a, b in zip(groups, starts, bounds):
        sel = order[a:b] + lo
        picks.append((np.unravel_index(g, grid_m), tuple(loc[sel] for loc in local)))
    sorted_already = len(groups) == 1 or bool(np.all(order[1:] > order[:-1]))
    return (None if sorted_already else order), picks


def _tile_points(out: TensorData, x: Any, axis: int, arrays: list) -> Tiled:
    m, bshape = len(arrays), arrays[0].shape
    grid_m = [x.chunk_shape[axis + j] for j in range(m)]
    cids, local = locate_points(x, axis, arrays)
    per_chunk = math.prod(max(max(x.nsplits[axis + j]), 1) for j in range(m))
    rows = _row_splits(bshape, per_chunk)
    inner = math.prod(bshape[1:])
    plans = [_group_points(cids, local, grid_m, lo * inner, hi * inner) for lo, hi in rows]
    before, after = list(range(axis)), list(range(axis + m, x.ndim))
    nb = len(bshape)
    grid = [x.chunk_shape[d] for d in before] + ([len(rows)] + [1] * (nb - 1) if nb else []) + [
        x.chunk_shape[d] for d in after]
    chunks = []
    for out_index in np.ndindex(*grid):
        k = out_index[axis] if nb else 0
        other = out_index[:axis] + out_index[axis + nb:]
        order, picks = plans[k]
        pieces = [_select(x, axis, other, cidx, points, i, out.dtype) for i, (cidx, points) in enumerate(picks)]
        if not pieces:  # no points here: an empty piece of the right shape
            empty = tuple(np.zeros(0, dtype=np.intp) for _ in range(m))
            pieces = [_select(x, axis, other, (0,) * m, empty, 0, out.dtype)]
        piece = pieces[0]
        shape_b = (rows[k][1] - rows[k][0],) + tuple(bshape[1:]) if nb else ()
        shape = piece.shape[:axis] + shape_b + piece.shape[axis + 1:]
        gather = TensorGatherPoints(axis=axis, order=order, bshape=shape_b)
        chunks.append(gather.new_chunk(pieces, index=out_index, shape=shape, dtype=out.dtype, order="C"))
    nsplits = tuple(x.nsplits[d] for d in before) + (
        (tuple(hi - lo for lo, hi in rows),) + tuple((b,) for b in bshape[1:]) if nb else ()) + tuple(
        x.nsplits[d] for d in after)
    return Tiled(chunks, nsplits)


def _select(x: Any, axis: int, other: tuple, cidx: Sequence[int], points: tuple, i: int, dtype: Any) -> Any:
    index = other[:axis] + tuple(int(c) for c in cidx) + other[axis:]
    src = x.chunk_at(index)
    shape = src.shape[:axis] + (len(points[0]),) + src.shape[axis + len(points):]
    return TensorSelectPoints(axis=axis, points=points).new_chunk([src], index=(i,), shape=shape, dtype=dtype,
                                                                  order="C")


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
        if self.order is not None:
            result = np.empty_like(grouped)
            result[(slice(None),) * axis + (self.order,)] = grouped
            grouped = result
        return grouped.reshape(grouped.shape[:axis] + tuple(self.bshape) + grouped.shape[axis + 1:])


def fancy_index(t: Any, axis: int, arrays: list) -> Tensor:
    """``t`` indexed by int arrays (numpy, or mars tensors) on the axes from ``axis``."""
    data = tensor_data(t)
    bshape = broadcast_unknown(*(tuple(a.shape) for a in arrays))
    if any(isinstance(a, TensorData) for a in arrays):
        tensors = [a if isinstance(a, TensorData) else tensor_data(astensor(a)) for a in arrays]
        op = TensorFancyIndex(axis=axis, arrays=None)
        inputs = [data] + tensors
    else:
        op = TensorFancyIndex(axis=axis, arrays=tuple(arrays))
        inputs = [data]
    shape = data.shape[:axis] + tuple(bshape) + data.shape[axis + len(arrays):]
    return op.new_tensor(inputs, shape, data.dtype)
