"""``rechunk``: cut a tensor into new chunks; each new chunk copies the overlapping pieces."""

from __future__ import annotations

import bisect
import itertools
from typing import Any, Generator

import numpy as np

from ..core.device import xp_of
from ..core.entity import chunk_indexes, has_unknown
from ..core.operator import Tiled
from ..core.tiling import as_data
from .chunks import normalize_chunk_sizes, offsets
from .core import Tensor, TensorOperator


class TensorRechunk(TensorOperator):
    params = ("nsplits", "chunk_size")

    @classmethod
    def tile(cls, op: TensorRechunk) -> Generator[Any, Any, Tiled]:
        inp = op.inputs[0]
        if has_unknown(inp.shape) or any(has_unknown(s) for s in inp.nsplits):
            yield inp.chunks
            inp.refresh_shape()
        out = op.outputs[0]
        nsplits = op.nsplits or normalize_chunk_sizes(inp.shape, op.chunk_size, inp.dtype.itemsize)
        return Tiled(rechunk_chunks(inp, nsplits, out.dtype, out.order), nsplits)


class RechunkPiece(TensorOperator):
    """One output chunk of a rechunk: assembled from slices of the input chunks."""

    params = ("shape", "dtype", "slices", "targets")
    fusible = False

    def execute(self, *pieces: np.ndarray) -> np.ndarray:
        if len(pieces) == 1:
            return pieces[0][self.slices[0]]
        out = xp_of(pieces[0]).empty(self.shape, dtype=self.dtype)  # on the pieces' device
        for piece, src, dst in zip(pieces, self.slices, self.targets):
            out[dst] = piece[src]
        return out


def _overlaps(old: tuple[int, ...], lo: int, hi: int) -> list[tuple[int, slice, slice]]:
    """Pieces of old chunks covering [lo, hi): (old index, slice in old chunk, slice in new chunk)."""
    starts = offsets(old)
    i = max(0, bisect.bisect_right(starts, lo) - 1)
    result = []
    while i < len(old) and starts[i] < hi or (hi == lo and i < len(old) and not result):
        a, b = max(lo, starts[i]), min(hi, starts[i] + old[i])
        result.append((i, slice(a - starts[i], b - starts[i]), slice(a - lo, b - lo)))
        i += 1
    return result


def rechunk_chunks(inp: Any, nsplits: tuple, dtype: np.dtype, order: str) -> list:
    """Chunks of ``inp`` re-cut to ``nsplits`` (reusing input chunks that already fit)."""
    new_starts = [offsets(s) for s in nsplits]
    chunks = []
    for index in chunk_indexes([len(s) for s in nsplits]):
        shape = tuple(nsplits[d][i] for d, i in enumerate(index))
        per_dim = [
            _overlaps(inp.nsplits[d], new_starts[d][i], new_starts[d][i] + shape[d]) for d, i in enumerate(index)
        ]
        combos = list(itertools.product(*per_dim))
        if len(combos) == 1:
            old_index = tuple(p[0] for p in combos[0])
            src = inp.chunk_at(old_index)
            if tuple(src.shape) == shape:
                chunks.append(reindexed(src, index))
                continue
        inputs = [inp.chunk_at(tuple(p[0] for p in c)) for c in combos]
        op = RechunkPiece(
            shape=shape,
            dtype=dtype,
            slices=tuple(tuple(p[1] for p in c) for c in combos),
            targets=tuple(tuple(p[2] for p in c) for c in combos),
        )
        chunks.append(op.new_chunk(inputs, index=index, shape=shape, dtype=dtype, order=order))
    return chunks


def reindexed(chunk: Any, index: tuple) -> Any:
    if chunk.index == index:
        return chunk
    # same data, new place in the grid: a view of the same op output
    twin = type(chunk)(chunk.op, index=index, shape=chunk.shape, key=chunk.key, output_index=chunk.output_index,
                       dtype=chunk.dtype, order=chunk.order)
    return twin


def rechunk(a: Any, chunk_size: Any) -> Tensor:
    """The same tensor cut into new chunks (``chunk_size`` as in creation functions).

    >>> import mars.tensor as mt
    >>> mt.ones((5, 4), chunk_size=2).rechunk(3).execute().nsplits
    ((3, 2), (3, 1))
    """
    data = as_data(a)
    if has_unknown(data.shape):
        op = TensorRechunk(nsplits=None, chunk_size=chunk_size)
        return op.new_tensor([data], data.shape, data.dtype, order=data.order)
    nsplits = normalize_chunk_sizes(data.shape, chunk_size, data.dtype.itemsize)
    if data.nsplits is not None and tuple(data.nsplits) == nsplits:
        return a if isinstance(a, Tensor) else Tensor(data)
    op = TensorRechunk(nsplits=nsplits, chunk_size=None)
    return op.new_tensor([data], data.shape, data.dtype, order=data.order)
