"""Boolean masks over the leading axes: ``x[mask]`` and ``x[mask] = value``.

The mask's leading axis is cut like ``x``'s and its other axes are made
whole (so the chunks' selections, in chunk order, are in numpy's C order).
Each chunk is filtered (or written) with its own piece of the mask. With a
numpy mask the pieces' counts, and so the result's sizes, are known at
once; with a mars mask they are known after running (NaN until then).
"""

from __future__ import annotations

import math
from typing import Any, Generator

import numpy as np

from ...core.device import copy_array
from ...core.operator import Fetch, Tiled
from ..base.reshape import known_sizes, rechunked
from ..chunks import offsets
from ..core import Tensor, TensorData, TensorOperator, tensor_data
from ..datasource.core import astensor


def _aligned(x: TensorData, mask: Any) -> Generator[Any, Any, tuple[TensorData, Any]]:
    """``x`` (and a mask tensor) cut alike along the mask's axes: the first as ``x``'s, the others whole."""
    k = mask.ndim
    yield from known_sizes([x] + ([mask] if isinstance(mask, TensorData) else []))
    lead = (x.nsplits[0],) + tuple((int(s),) for s in x.shape[1:k])
    x = yield from rechunked(x, lead + tuple(x.nsplits[k:]))
    if isinstance(mask, TensorData):
        mask = yield from rechunked(mask, lead)
    return x, mask


def _mask_pieces(x: TensorData, mask: Any) -> list:
    """Per chunk row of ``x``: a numpy mask's piece, or the mask tensor's chunk."""
    k = mask.ndim
    if isinstance(mask, TensorData):
        return [mask.chunk_at((i,) + (0,) * (k - 1)) for i in range(x.chunk_shape[0])]
    starts = offsets(x.nsplits[0])
    return [mask[s:s + n] for s, n in zip(starts, x.nsplits[0])]


class TensorBoolIndex(TensorOperator):
    """``x[mask]`` with ``mask`` over the leading ``mask.ndim`` axes of ``x``.

    ``mask`` is a numpy array, or None when it is the second input.
    """

    params = ("mask",)

    @classmethod
    def tile(cls, op: TensorBoolIndex) -> Generator[Any, Any, Tiled]:
        x, out = op.inputs[0], op.outputs[0]
        mask = op.mask if op.mask is not None else op.inputs[1]
        k = mask.ndim
        x, mask = yield from _aligned(x, mask)
        pieces = _mask_pieces(x, mask)
        chunks = []
        for i, piece in enumerate(pieces):
            known = isinstance(piece, np.ndarray)
            count = int(np.count_nonzero(piece)) if known else math.nan
            for rest in np.ndindex(*x.chunk_shape[k:]):
                src = x.chunk_at((i,) + (0,) * (k - 1) + rest)
                inputs = [src] if known else [src, piece]
                chunk_op = TensorMaskChunk(mask=piece if known else None)
                chunks.append(chunk_op.new_chunk(inputs, index=(i,) + rest, shape=(count,) + src.shape[k:],
                                                 dtype=out.dtype, order="C"))
        counts = tuple(c.shape[0] for c in chunks[::max(1, math.prod(x.chunk_shape[k:]))])
        return Tiled(chunks, (counts,) + tuple(x.nsplits[k:]))


class TensorMaskChunk(TensorOperator):
    params = ("mask",)

    def execute(self, x: np.ndarray, *mask: np.ndarray) -> np.ndarray:
        return x[mask[0] if mask else self.mask]


def bool_index(t: Any, mask: Any) -> Tensor:
    """``t[mask]`` for a mask (numpy array or mars tensor) over the leading axes of ``t``."""
    data = tensor_data(t)
    if isinstance(mask, np.ndarray):
        shape = (int(np.count_nonzero(mask)),) + tuple(data.shape[mask.ndim:])
        return TensorBoolIndex(mask=mask).new_tensor([data], shape, data.dtype)
    m = tensor_data(astensor(mask))
    shape = (math.nan,) + tuple(data.shape[m.ndim:])
    return TensorBoolIndex(mask=None).new_tensor([data, m], shape, data.dtype)


# ----------------------------------------------------------------- assignment
class TensorMaskSet(TensorOperator):
    """``x[mask] = value``: ``mask`` a numpy array or an input; ``value`` a numpy value or an input.

    An array value has one dim for the selected rows then ``x``'s dims after the mask's
    (each of the full size or 1, to broadcast); its rows are cut by the mask's counts
    per chunk row, which for a mars mask are fetched first.
    """

    params = ("mask", "value")

    @classmethod
    def tile(cls, op: TensorMaskSet) -> Generator[Any, Any, Tiled]:
        x, extra = op.inputs[0], list(op.inputs[1:])
        mask = op.mask if op.mask is not None else extra.pop(0)
        value = extra[0] if extra else op.value
        k = mask.ndim
        x, mask = yield from _aligned(x, mask)
        pieces = _mask_pieces(x, mask)
        if np.ndim(value):
            value = yield from _cut_value(value, x, k, pieces)
        chunks = []
        for c in x.chunks:
            piece = pieces[c.index[0]]
            if isinstance(piece, np.ndarray) and not piece.any():
                chunks.append(c)
            else:
                chunks.append(_set_chunk(c, piece, value, k))
        return Tiled(chunks, x.nsplits)


def _cut_value(value: Any, x: TensorData, k: int, pieces: list) -> Generator[Any, Any, tuple]:
    """(value, its splits): rows cut by the mask's counts, other dims like ``x``'s; size-1 dims whole."""
    splits = [(1,)] + [s if n != 1 else (1,) for s, n in zip(x.nsplits[k:], value.shape[1:])]
    if value.shape[0] != 1:  # a value per selected row
        counts = yield from _counts(pieces)
        if isinstance(value, TensorData):
            yield from known_sizes([value], [0])
        _check_count(sum(counts), value.shape[0])
        splits[0] = tuple(counts)
    if isinstance(value, TensorData):
        value = yield from rechunked(value, tuple(splits))
    return value, tuple(splits)


def _counts(pieces: list) -> Generator[Any, Any, list[int]]:
    if all(isinstance(p, np.ndarray) for p in pieces):
        return [int(np.count_nonzero(p)) for p in pieces]
    chunks = [TensorCount().new_chunk([p], index=p.index, shape=(), dtype=np.intp, order="C") for p in pieces]
    return [int(v) for v in (yield Fetch(chunks))]


def _check_count(selected: int, given: Any) -> None:
    if given != selected:
        raise ValueError(f"NumPy boolean array indexing assignment cannot assign {given} input values "
                         f"to the {selected} output values where the mask is true")


def _set_chunk(c: Any, piece: Any, value: Any, k: int) -> Any:
    meta = dict(index=c.index, shape=c.shape, dtype=c.dtype, order=c.order)
    inputs = [c] + ([] if isinstance(piece, np.ndarray) else [piece])
    mask = piece if isinstance(piece, np.ndarray) else None
    if not isinstance(value, tuple):  # a scalar
        return TensorMaskSetChunk(mask=mask, value=value).new_chunk(inputs, **meta)
    value, splits = value
    at = tuple(i if len(sp) > 1 else 0 for i, sp in zip((c.index[0],) + c.index[k:], splits))
    if isinstance(value, np.ndarray):
        region = tuple(slice(offsets(sp)[i], offsets(sp)[i] + sp[i]) for i, sp in zip(at, splits))
        return TensorMaskSetChunk(mask=mask, value=value[region]).new_chunk(inputs, **meta)
    return TensorMaskSetChunk(mask=mask, value=None).new_chunk(inputs + [value.chunk_at(at)], **meta)


class TensorMaskSetChunk(TensorOperator):
    """One chunk: a copy with ``x[mask] = value`` (mask and value params, or the next inputs)."""

    params = ("mask", "value")

    def execute(self, x: np.ndarray, *more: np.ndarray) -> np.ndarray:
        rest = list(more)
        mask = self.mask if self.mask is not None else rest.pop(0)
        out = copy_array(x)  # a copy (and a 0-d array where a chunk holds a numpy scalar)
        out[mask] = rest[0] if rest else self.value
        return out


class TensorCount(TensorOperator):
    """How many elements of a mask chunk are true."""

    params = ()

    def execute(self, m: np.ndarray) -> int:
        return int(np.count_nonzero(m))


def mask_set(t: Any, mask: Any, value: Any) -> TensorData:
    """``t[mask] = value`` for a mask over the leading axes of ``t``.

    ``value`` is a scalar, or an array / TensorData with ``t[mask]``'s ndim (cast to ``t``'s
    dtype and checked to broadcast by the caller).
    """
    data = tensor_data(t)
    inputs = [data]
    if not isinstance(mask, np.ndarray):
        inputs.append(tensor_data(astensor(mask)))
        mask = None
    if isinstance(value, TensorData):
        inputs.append(value)
        value = None
    elif np.ndim(value) and value.shape[0] != 1 and mask is not None:
        _check_count(int(np.count_nonzero(mask)), value.shape[0])
    op = TensorMaskSet(mask=mask, value=value)
    return op.new_tileable(inputs, shape=data.shape, dtype=data.dtype, order=data.order)
