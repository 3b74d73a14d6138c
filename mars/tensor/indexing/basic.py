"""Basic indexing: integers, slices (any step), ``None`` and ``...``.

Each output chunk is a slice of one input chunk; only chunks that the index
touches are read, and nothing but the slice is copied (numpy gives a view).
"""

from __future__ import annotations

import math
from typing import Any, Generator

import numpy as np

from ...core.entity import has_unknown
from ...core.operator import Tiled
from ..base.reshape import known_sizes
from ..chunks import offsets
from ..core import Tensor, TensorOperator, tensor_data


class TensorSlice(TensorOperator):
    """``x[index]`` where ``index`` has one int/slice per input axis and ``None`` for new axes."""

    params = ("index",)
    fusible = True

    @classmethod
    def tile(cls, op: TensorSlice) -> Generator[Any, Any, Tiled]:
        inp, out = op.inputs[0], op.outputs[0]
        if any(not _is_full(e) for e, d in _axis_entries(op.index) if has_unknown(inp.nsplits[d])):
            yield from known_sizes([inp])
        plans = _plans(op.index, inp)
        grid = [len(p) for p in plans]
        chunks = []
        for out_index in np.ndindex(*grid):
            picks = [p[i] for p, i in zip(plans, out_index)]
            src_index = tuple(pk[0] for pk in picks if pk[0] is not None)
            local = tuple(pk[1] for pk in picks)
            src = inp.chunk_at(src_index)
            shape = tuple(pk[2] for pk in picks if pk[2] is not None)
            index = tuple(i for i, pk in zip(out_index, picks) if pk[2] is not None)
            chunk_op = TensorSliceChunk(index=local)
            chunks.append(chunk_op.new_chunk([src], index=index, shape=shape, dtype=out.dtype, order=out.order))
        nsplits = tuple(tuple(pk[2] for pk in p) for p in plans if p[0][2] is not None)
        return Tiled(chunks, nsplits)


class TensorSliceChunk(TensorOperator):
    params = ("index",)
    fusible = True

    def execute(self, x: np.ndarray) -> np.ndarray:
        return x[self.index]


def _is_full(e: Any) -> bool:
    return isinstance(e, slice) and e == slice(None)


def _axis_entries(index: tuple) -> list[tuple[Any, int]]:
    result, axis = [], 0
    for e in index:
        if e is None:
            continue
        result.append((e, axis))
        axis += 1
    return result


def _plans(index: tuple, inp: Any) -> list[list[tuple]]:
    """Per output position: the (input chunk, local index, output size or None) picks."""
    plans, axis = [], 0
    for e in index:
        if e is None:
            plans.append([(None, None, 1)])
            continue
        sizes = inp.nsplits[axis]
        if isinstance(e, int):
            plans.append([_int_pick(e, sizes)])
        elif _is_full(e) and has_unknown(sizes):  # every chunk as it is, sizes known later
            plans.append([(c, slice(None), n) for c, n in enumerate(sizes)])
        else:
            plans.append(_slice_picks(e, sizes))
        axis += 1
    return plans


def _int_pick(i: int, sizes: tuple) -> tuple:
    total = int(sum(sizes))
    if not -total <= i < total:
        raise IndexError(f"index {i} is out of bounds for an axis with size {total}")
    i %= total
    for c, start in enumerate(offsets(sizes)):
        if start <= i < start + sizes[c]:
            return (c, i - start, None)
    raise AssertionError("unreachable")


def _slice_picks(s: slice, sizes: tuple) -> list[tuple]:
    start, stop, step = s.indices(int(sum(sizes)))
    r = range(start, stop, step)
    picks = []
    chunk_ids = range(len(sizes)) if step > 0 else reversed(range(len(sizes)))
    starts = offsets(sizes)
    for c in chunk_ids:
        lo, hi = starts[c], starts[c] + sizes[c]
        if step > 0:
            m_lo = max(0, math.ceil((lo - start) / step))
            m_hi = min(len(r), max(0, math.ceil((hi - start) / step)))
        else:
            m_lo = max(0, math.ceil((start - (hi - 1)) / -step))
            m_hi = min(len(r), max(0, (start - lo) // -step + 1))
        if m_hi > m_lo:
            first = r[m_lo] - lo
            end = first + step * (m_hi - m_lo)
            picks.append((c, slice(first, end if end >= 0 else None, step), m_hi - m_lo))
    return picks or [(0, slice(0, 0), 0)]


def basic_index(t: Any, entries: list) -> Tensor:
    """Apply resolved basic entries (ints, slices, None; one per input axis plus new axes)."""
    data = tensor_data(t)
    if all(_is_full(e) for e in entries) and len(entries) == data.ndim:
        return t if isinstance(t, Tensor) else Tensor(data)
    shape, axis = [], 0
    for e in entries:
        if e is None:
            shape.append(1)
            continue
        size = data.shape[axis]
        if isinstance(e, slice):
            shape.append(len(range(*e.indices(size))) if not (isinstance(size, float) and math.isnan(size))
                         else (size if _is_full(e) else math.nan))
        axis += 1
    return TensorSlice(index=tuple(entries)).new_tensor([data], tuple(shape), data.dtype)
