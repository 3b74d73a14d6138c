"""Random permutations by a map-reduce shuffle, with chunk sizes known before running.

Row blocks are dealt into output partitions of chosen sizes: first a table of
how many rows each input block sends each partition is drawn (one
multivariate hypergeometric draw per block, which is that table's law under a
uniformly random permutation); then each mapper sends a random subset of its
rows of those sizes, and each reducer shuffles what it got. The result is a
uniformly random permutation, and every chunk's size is known at tiling.
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Generator, Sequence

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ...core.entity import ChunkData, has_unknown
from ...core.operator import Tiled
from ...core.shuffle import ShuffleMap, ShuffleReduce, shuffle_chunks
from ...core.tiling import recursive_tile
from ..base.shape import ravel, reshape, swapaxes
from ..chunks import offsets
from ..core import Tensor, TensorData, TensorOperator, tensor_data
from ..datasource.core import astensor
from ..datasource.creation import arange
from ..indexing.setitem import rebind
from ..rechunk import rechunk
from .core import chunk_rng

# stream keys: mappers (_MAP, block), reducers (_REDUCE, partition), the count table (_COUNTS,),
# ``permuted``'s chunks (_PERMUTED, chunk)
_MAP, _REDUCE, _COUNTS, _PERMUTED = 0, 1, 2, 3


class PermuteMap(ShuffleMap, TensorOperator):
    """Sends a random subset of ``counts[r]`` rows to partition ``r``."""

    params = ("seed", "stream", "counts")

    def split(self, x: np.ndarray) -> list[np.ndarray]:
        if len(x) in self.counts:  # all rows go to one partition, which shuffles them anyway
            return [x if c else x[:0] for c in self.counts]
        order = chunk_rng(self.seed, _MAP, self.stream).permutation(len(x))
        bounds = offsets(self.counts) + [len(x)]
        # take along axis 0 copies whole rows; it is several times faster than x[idx] for matrices
        return [np.take(x, order[a:b], axis=0) for a, b in zip(bounds, bounds[1:])]


class PermuteReduce(ShuffleReduce, TensorOperator):
    """Shuffles the rows a partition received, shaped as its output chunk."""

    params = ("seed", "stream", "shape")

    def combine(self, pieces: list[np.ndarray]) -> np.ndarray:
        rows = np.concatenate(pieces)
        rng = chunk_rng(self.seed, _REDUCE, self.stream)
        if rows.ndim == 1:
            rng.shuffle(rows)
        else:  # shuffling rows in place swaps them one by one: gathering is faster
            rows = np.take(rows, rng.permutation(len(rows)), axis=0)
        return rows.reshape(self.shape)


def shuffle_counts(rng: np.random.Generator, sources: Sequence[int], targets: Sequence[int]) -> list[tuple[int, ...]]:
    """How many rows each source block sends each target under a uniformly random permutation."""
    room = np.array(targets, dtype=np.int64)
    table = []
    for n in sources:
        drawn = rng.multivariate_hypergeometric(room, n) if n else np.zeros_like(room)
        room -= drawn
        table.append(tuple(int(c) for c in drawn))
    return table


def permute_rows(
    inp: TensorData, seed: int, targets: Sequence[int], out_meta: Callable[[int, tuple], dict]
) -> list[list[ChunkData]]:
    """``inp``'s rows dealt at random into partitions of ``targets[r]`` rows.

    Every column block gets the same row permutation (its mappers and
    reducers use the same streams). Returns, per column block (C order), the
    partitions' chunks; ``out_meta(r, column_index)`` gives their metadata.
    """
    counts = shuffle_counts(chunk_rng(seed, _COUNTS), inp.nsplits[0], targets)
    groups = []
    for rest in np.ndindex(*[len(s) for s in inp.nsplits[1:]]):
        rest_shape = tuple(inp.nsplits[d + 1][i] for d, i in enumerate(rest))
        metas = [out_meta(r, rest) for r in range(len(targets))]

        def piece_meta(i: int, r: int, rest: tuple = rest, rest_shape: tuple = rest_shape) -> dict:
            return {"index": (i, r) + rest, "shape": (counts[i][r],) + rest_shape, "dtype": inp.dtype, "order": "C"}

        groups.append(shuffle_chunks(
            [inp.chunk_at((i,) + rest) for i in range(len(inp.nsplits[0]))],
            len(targets),
            lambda i: PermuteMap(seed=seed, stream=i, counts=counts[i]),
            lambda r, metas=metas: PermuteReduce(seed=seed, stream=r, shape=metas[r]["shape"]),
            metas,
            piece_kws=piece_meta,
        ))
    return groups


def ensure_known(t: TensorData) -> Generator[Any, Any, None]:
    """In a generator ``tile()``: run ``t``'s chunks first when their sizes are not known."""
    if any(has_unknown(s) for s in t.nsplits):
        yield t.chunks
        t.refresh_shape()


class TensorPermutation(TensorOperator):
    """The rows of a tensor in a uniformly random order; chunks keep the input's sizes."""

    params = ("seed",)

    @classmethod
    def tile(cls, op: TensorPermutation) -> Generator[Any, Any, Tiled]:
        inp = op.inputs[0]
        yield from ensure_known(inp)
        sizes = inp.nsplits[0]

        def meta(r: int, rest: tuple) -> dict:
            shape = (sizes[r],) + tuple(inp.nsplits[d + 1][i] for d, i in enumerate(rest))
            return {"index": (r,) + rest, "shape": shape, "dtype": inp.dtype, "order": "C"}

        groups = permute_rows(inp, op.seed, sizes, meta)
        return Tiled([g[r] for r in range(len(sizes)) for g in groups], inp.nsplits)


class TensorPermuted(TensorOperator):
    """``Generator.permuted`` along ``axis``: every 1-D slice along it shuffled on its own
    (the axis is one chunk; chunk ``i`` uses stream ``i``)."""

    params = ("seed", "stream", "axis")
    fusible = True

    @classmethod
    def tile(cls, op: TensorPermuted) -> Generator[Any, Any, Tiled]:
        inp = op.inputs[0]
        splits = tuple(-1 if d == op.axis else s for d, s in enumerate(inp.nsplits))
        whole = tensor_data((yield from recursive_tile(rechunk(inp, splits))))
        chunks = [op.copy(stream=stream).new_chunk([c], index=c.index, shape=c.shape, dtype=c.dtype, order="C")
                  for stream, c in enumerate(whole.chunks)]
        return Tiled(chunks, whole.nsplits)

    def execute(self, x: np.ndarray) -> np.ndarray:
        return chunk_rng(self.seed, _PERMUTED, self.stream).permuted(x, axis=self.axis)


def _as_tensor(x: Any, chunk_size: Any) -> Tensor:
    if isinstance(x, (int, np.integer)):
        return arange(x, chunk_size=chunk_size)
    t = astensor(x, chunk_size=chunk_size)
    return rechunk(t, chunk_size) if chunk_size is not None else t


def permutation(seed: int, x: Any, chunk_size: Any = None, axis: int | None = None) -> Tensor:
    """``x``'s rows (or ``arange(x)``) in random order; see ``RandomState.permutation``.
    With ``axis`` (``Generator.permutation``), the slices along that axis are reordered."""
    data = tensor_data(_as_tensor(x, chunk_size))
    if axis is None:
        if data.ndim == 0:
            raise IndexError(f"x must be an integer or at least 1-dimensional, got {x!r}")
        return TensorPermutation(seed=seed).new_tensor([data], data.shape, data.dtype)
    axis = normalize_axis_index(operator.index(axis), data.ndim)
    if axis:
        return swapaxes(permutation(seed, swapaxes(Tensor(data), 0, axis)), 0, axis)
    return TensorPermutation(seed=seed).new_tensor([data], data.shape, data.dtype)


def shuffle(seed: int, x: Any, axis: int = 0) -> None:
    """Reorders ``x`` along ``axis`` in place: ``x`` is rebound to the shuffled tensor, as an assignment
    rebinds it (through a view, the write reaches its base)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"shuffle changes its argument in place: it must be a mars Tensor, got {type(x).__name__}")
    if x.ndim == 0:
        raise TypeError("len() of unsized object")
    rebind(x, permutation(seed, x, axis=axis).data)


def permuted(seed: int, x: Any, axis: int | None = None, out: Any = None) -> Tensor:
    """Each slice along ``axis`` shuffled independently (the flattened tensor when ``axis`` is None);
    see ``Generator.permuted``."""
    t = astensor(x)
    if axis is None:
        result = reshape(permutation(seed, ravel(t)), t.shape) if t.ndim else t.copy()
    else:
        axis = normalize_axis_index(operator.index(axis), t.ndim)
        data = tensor_data(t)
        result = TensorPermuted(seed=seed, stream=None, axis=axis).new_tensor([data], data.shape, data.dtype)
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise TypeError(f"out must be a mars Tensor, got {type(out).__name__}")
    if out.shape != t.shape:
        raise ValueError(f"out must have the same shape as x, got {out.shape} and {t.shape}")
    rebind(out, result.astype(out.dtype, casting="unsafe").data)
    return out
