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

    params = ("axis", "arrays", "user_axes")
    #: the axes the arrays index in the user's tensor, for error messages only
    unkeyed = ("user_axes",)

    @classmethod
    def tile(cls, op: TensorFancyIndex) -> Generator[Any, Any, Tiled]:
        x = op.inputs[0]
        yield from known_sizes([x])
        arrays = op.arrays
        if arrays is None:
            arrays = yield from fetch_indices(op.inputs[1:], x, op.axis, op.user_axes)
        broadcast_unknown(*(a.shape for a in arrays))  # numpy's error for arrays that do not broadcast
        return _tile_points(op.outputs[0], x, op.axis, np.broadcast_arrays(*arrays))


def fetch_indices(tensors: Sequence[TensorData], x: Any, axis: int,
                  user_axes: Sequence[int] | None = None) -> Generator[Any, Any, list]:
    """The values of index tensors for the axes of ``x`` from ``axis`` (checked, negatives resolved).

    ``user_axes`` are those axes as the user counts them (before ints dropped
    theirs): an error names the axis the user wrote.
    """
    values = yield Fetch([c for t in tensors for c in t.chunks])
    result, at = [], 0
    for j, t in enumerate(tensors):
        part, at = values[at:at + len(t.chunks)], at + len(t.chunks)
        t.refresh_shape()
        array = np.asarray(t.assemble(part), dtype=np.intp)
        size = x.shape[axis + j]
        if array.size:
            bad = np.ravel((array >= size) | (array < -size))
            if bad.any():  # numpy names the first bad index
                first = np.ravel(array)[np.argmax(bad)]
                named = user_axes[j] if user_axes is not None else axis + j
                raise IndexError(f"index {first} is out of bounds for axis {named} with size {size}")
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
    pieces = _select_pieces(x, axis, m, plans, out.dtype)
    chunks = []
    for out_index in np.ndindex(*grid):
        k = out_index[axis] if nb else 0
        other = out_index[:axis] + out_index[axis + nb:]
        inputs = pieces[other][k]
        shape_b = (rows[k][1] - rows[k][0],) + tuple(bshape[1:]) if nb else ()
        shape = inputs[0].shape[:axis] + shape_b + inputs[0].shape[axis + 1:]
        gather = TensorGatherPoints(axis=axis, order=plans[k][0], bshape=shape_b)
        chunks.append(gather.new_chunk(inputs, index=out_index, shape=shape, dtype=out.dtype, order="C"))
    nsplits = tuple(x.nsplits[d] for d in before) + (
        (tuple(hi - lo for lo, hi in rows),) + tuple((b,) for b in bshape[1:]) if nb else ()) + tuple(
        x.nsplits[d] for d in after)
    return Tiled(chunks, nsplits)


def _select_pieces(x: Any, axis: int, m: int, plans: list, dtype: Any) -> dict:
    """{chunk coords off the index axes: per output row block, its pieces in gather order}.

    Each touched input chunk is read by one select op with one output per row block it
    feeds: with a long random index, an op per (input chunk, row block) pair would make
    tiling quadratic in the number of chunks.
    """
    feeds: dict = {}  # input chunk coords on the index axes -> [(row block, its points)]
    for k, (_, picks) in enumerate(plans):
        for cidx, points in picks:
            feeds.setdefault(tuple(int(c) for c in cidx), []).append((k, points))
    others = list(np.ndindex(*[x.chunk_shape[d] for d in range(x.ndim) if not axis <= d < axis + m]))
    result: dict = {}
    for other in others:
        per_block: list[list] = [[] for _ in plans]
        for cidx, parts in sorted(feeds.items()):  # the gather takes pieces in chunk order
            src = x.chunk_at(other[:axis] + cidx + other[axis:])
            for k, piece in zip((k for k, _ in parts), _select(src, axis, m, [p for _, p in parts], dtype)):
                per_block[k].append(piece)
        for k, block in enumerate(per_block):
            if not block:  # no points here: an empty piece of the right shape
                src = x.chunk_at(other[:axis] + (0,) * m + other[axis:])
                empty = tuple(np.zeros(0, dtype=np.intp) for _ in range(m))
                block.extend(_select(src, axis, m, [empty], dtype))
        result[other] = per_block
    return result


def _select(src: Any, axis: int, m: int, parts: list, dtype: Any) -> list:
    """One op picking several groups of points from ``src``: one output chunk per group."""
    sizes = [len(p[0]) for p in parts]
    points = tuple(np.concatenate([p[j] for p in parts]) for j in range(m)) if len(parts) > 1 else parts[0]
    kws = [dict(index=(i,), shape=src.shape[:axis] + (n,) + src.shape[axis + m:], dtype=dtype, order="C")
           for i, n in enumerate(sizes)]
    op = TensorSelectPoints(axis=axis, points=points, bounds=tuple(np.cumsum(sizes[:-1]).tolist()))
    return op.new_chunks([src], kws)


class TensorSelectPoints(TensorOperator):
    """The points of one input chunk (local coordinates on consecutive axes from ``axis``),
    cut at ``bounds`` into one output per row block of the result that needs them."""

    params = ("axis", "points", "bounds")

    def execute(self, x: np.ndarray) -> Any:
        picked = x[(slice(None),) * self.axis + tuple(self.points)]
        if not self.bounds:
            return picked
        return tuple(np.split(picked, self.bounds, axis=self.axis))


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


def fancy_index(t: Any, axis: int, arrays: list, user_axes: Sequence[int] | None = None) -> Tensor:
    """``t`` indexed by int arrays (numpy, or mars tensors) on the axes from ``axis``.

    ``user_axes``: where those axes were in the user's index, for error messages.
    """
    data = tensor_data(t)
    bshape = broadcast_unknown(*(tuple(a.shape) for a in arrays))
    if any(isinstance(a, TensorData) for a in arrays):
        tensors = [a if isinstance(a, TensorData) else tensor_data(astensor(a)) for a in arrays]
        op = TensorFancyIndex(axis=axis, arrays=None, user_axes=None if user_axes is None else tuple(user_axes))
        inputs = [data] + tensors
    else:
        op = TensorFancyIndex(axis=axis, arrays=tuple(arrays), user_axes=None)
        inputs = [data]
    shape = data.shape[:axis] + tuple(bshape) + data.shape[axis + len(arrays):]
    return op.new_tensor(inputs, shape, data.dtype)
