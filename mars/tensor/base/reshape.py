"""``reshape`` (C order): chunk grids planned so each chunk reshapes on its own.

Dimensions of size 1 are ignored; the others are cut into *groups*: the
shortest runs of input and output dimensions with equal products (``(4, 6) ->
(24,)`` is one group, ``(4, 6) -> (4, 2, 3)`` two). In C order a group's
elements form one flat line. An input chunk can be reshaped on its own when
its part of that line is one contiguous run and the runs also tile the output
dimensions as a grid; ``plan_group`` finds that output grid, or says which
rechunk of the input makes one (inner dimensions whole, the first one cut in
multiples of what the output's inner dimensions need).

The tiling helpers the ops of this package share live here too:
``known_sizes`` (compute inputs whose sizes are unknown) and ``rechunked``.
"""

from __future__ import annotations

import math
from typing import Any, Generator, Sequence

import numpy as np

from ...core.entity import has_unknown
from ...core.operator import Tiled
from ...core.options import options
from ...core.tiling import tile_now
from ..chunks import normalize_chunk_sizes
from ..core import Tensor, TensorData, TensorOperator
from ..rechunk import rechunk

Splits = tuple[int, ...]


class TensorReshape(TensorOperator):
    """``x.reshape(newshape)`` in C order; ``newshape`` may hold one -1 while sizes are unknown."""

    params = ("newshape",)
    fusible = True

    @classmethod
    def tile(cls, op: TensorReshape) -> Generator[Any, Any, Tiled]:
        inp, out = op.inputs[0], op.outputs[0]
        yield from known_sizes([inp])
        newshape = resolve_newshape(inp.shape, op.newshape)
        in_nsplits, out_nsplits, groups = plan_reshape(inp.shape, inp.nsplits, newshape, inp.dtype.itemsize)
        inp = yield from rechunked(inp, in_nsplits)
        sources = _source_chunks(inp, out_nsplits, groups)
        chunks = []
        for index, src in zip(np.ndindex(*[len(s) for s in out_nsplits]), sources):
            shape = tuple(out_nsplits[d][i] for d, i in enumerate(index))
            chunk_op = op.copy(newshape=shape)
            chunks.append(chunk_op.new_chunk([src], index=index, shape=shape, dtype=out.dtype, order=out.order))
        return Tiled(chunks, out_nsplits)

    def execute(self, x: np.ndarray) -> np.ndarray:
        return x.reshape(self.newshape)


def known_sizes(inputs: Sequence[TensorData], dims: Sequence[int] | None = None) -> Generator[Any, Any, None]:
    """Compute the inputs whose sizes (along ``dims``, or any) are unknown, and fill those sizes in."""
    unknown = [
        inp for inp in inputs
        if any(has_unknown(inp.nsplits[d]) for d in (range(inp.ndim) if dims is None else dims))
    ]
    if unknown:
        yield [c for inp in unknown for c in inp.chunks]
        for inp in unknown:
            inp.refresh_shape()


def rechunked(inp: TensorData, nsplits: Sequence[Splits]) -> Generator[Any, Any, TensorData]:
    """``inp`` cut to ``nsplits`` and tiled (``inp`` itself when it already is).

    Dims whose target holds unknown sizes keep the input's splits, computed first.
    """
    if tuple(nsplits) == tuple(inp.nsplits):
        return inp
    yield from known_sizes([inp])
    spec = tuple(_chunk_spec(size, old if has_unknown(new) else new)
                 for size, old, new in zip(inp.shape, inp.nsplits, nsplits))
    return tile_now(rechunk(Tensor(inp), spec)).data


def _chunk_spec(size: int, splits: Splits) -> Splits | None:
    # normalize_chunk_sizes refuses empty chunks (left by filters): an empty dim goes as None
    return tuple(c for c in splits if c) if size else None


def shape_text(shape: Sequence[int]) -> str:
    """A new shape as numpy's reshape error prints it (unknown dims as 'newaxis', leading ones dropped)."""
    first = next((i for i, s in enumerate(shape) if s >= 0), len(shape))
    parts = ["newaxis" if s < 0 else str(s) for s in shape[first:]]
    return "(" + ",".join(parts) + ("," if len(shape) == 1 else "") + ")"


def resolve_newshape(shape: Sequence[Any], newshape: Sequence[int]) -> tuple:
    """``newshape`` with its unknown (negative) dim filled in; numpy's errors if sizes disagree.

    With unknown input sizes the unknown dim stays NaN (and nothing can be checked).
    """
    unknown = [i for i, s in enumerate(newshape) if s < 0]
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    if has_unknown(shape):
        return tuple(math.nan if s < 0 else s for s in newshape)
    size = math.prod(shape)
    known = math.prod(s for s in newshape if s >= 0)
    if unknown:
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {shape_text(newshape)}")
        return tuple(size // known if s < 0 else s for s in newshape)
    if known != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {shape_text(newshape)}")
    return tuple(newshape)


def group_dims(in_shape: Sequence[int], out_shape: Sequence[int]) -> list[tuple[list[int], list[int]]]:
    """Pairs (input dims, output dims) of the smallest runs with equal products, size-1 dims left out."""
    ins = [d for d, s in enumerate(in_shape) if s != 1]
    outs = [d for d, s in enumerate(out_shape) if s != 1]
    groups = []
    i = j = 0
    while i < len(ins):
        group_in, group_out = [ins[i]], [outs[j]]
        p_in, p_out = in_shape[ins[i]], out_shape[outs[j]]
        i, j = i + 1, j + 1
        while p_in != p_out:
            if p_in < p_out:
                group_in.append(ins[i])
                p_in *= in_shape[ins[i]]
                i += 1
            else:
                group_out.append(outs[j])
                p_out *= out_shape[outs[j]]
                j += 1
        groups.append((group_in, group_out))
    return groups


def _runs(sizes: Sequence[int], splits: Sequence[Splits]) -> list[int] | None:
    """Lengths of the flat runs the chunks of a group make, or None if a chunk is not one run.

    A chunk is one run when the dims before its first cut dim have chunks of 1
    and the dims after it are whole.
    """
    k = next((d for d, s in enumerate(splits) if any(c != 1 for c in s)), len(sizes) - 1)
    if any(len(s) != 1 for s in splits[k + 1:]):
        return None
    inner = math.prod(sizes[k + 1:])
    return [c * inner for c in splits[k]] * math.prod(sizes[:k])


def _grid_for_runs(runs: list[int], sizes: Sequence[int]) -> list[Splits] | None:
    """Output splits of a group whose chunks are exactly ``runs`` in C order, or None."""
    for k in range(len(sizes)):
        inner = math.prod(sizes[k + 1:])
        row_length = sizes[k] * inner
        if any(r % inner for r in runs):
            continue
        row, acc = [], 0
        for r in runs:
            if acc >= row_length:
                break
            row.append(r)
            acc += r
        if acc != row_length or runs != row * math.prod(sizes[:k]):
            continue
        return [(1,) * s for s in sizes[:k]] + [tuple(r // inner for r in row)] + [(s,) for s in sizes[k + 1:]]
    return None


def _input_splits_for(sizes: Sequence[int], splits: Sequence[Splits], out_sizes: Sequence[int],
                      room: int) -> list[Splits]:
    """Input splits of a group that always reshape chunk by chunk: inner dims whole, the first
    dim cut as before where it can be, chunks of at most ``room`` elements where they can be."""
    inner_in, inner_out = math.prod(sizes[1:]), math.prod(out_sizes[1:])
    # each chunk of the first dim must fill whole rows of the output's inner dims
    step = inner_out // math.gcd(inner_out, inner_in)
    if all(len(s) == 1 for s in splits[1:]):
        bounds = sorted({min(sizes[0], -(-b // step) * step) for b in np.cumsum(splits[0]).tolist()} - {0})
        first = tuple(np.diff([0] + bounds).tolist())
    else:
        size = min(max(splits[0]), max(1, room // inner_in))
        first = normalize_chunk_sizes((sizes[0],), max(step, size // step * step))[0]
    return [first] + [(s,) for s in sizes[1:]]


def plan_reshape(in_shape: Sequence[int], in_nsplits: Sequence[Splits], out_shape: Sequence[int],
                 itemsize: int = 8) -> tuple[tuple[Splits, ...], tuple[Splits, ...], list]:
    """(input nsplits to rechunk to, output nsplits, dim groups) for a chunk-by-chunk reshape."""
    if math.prod(in_shape) == 0:
        # every chunk is empty then: the first one, reshaped, is the whole result
        return tuple(in_nsplits), tuple((s,) for s in out_shape), []
    # empty chunks (left by filters) would be runs of length 0: they go
    new_in: list[Splits] = [tuple(c for c in s if c) if in_shape[d] != 1 else (1,) for d, s in enumerate(in_nsplits)]
    new_out: list[Splits] = [(1,)] * len(out_shape)
    groups = group_dims(in_shape, out_shape)
    for group_in, group_out in groups:
        sizes = [in_shape[d] for d in group_in]
        out_sizes = [out_shape[d] for d in group_out]
        runs = _runs(sizes, [new_in[d] for d in group_in])
        grid = _grid_for_runs(runs, out_sizes) if runs is not None else None
        if grid is None:
            outside = math.prod(max(s) for d, s in enumerate(new_in) if d not in group_in)
            room = options.chunk_store_limit // itemsize // max(outside, 1)
            splits = _input_splits_for(sizes, [new_in[d] for d in group_in], out_sizes, room)
            for d, s in zip(group_in, splits):
                new_in[d] = s
            grid = _grid_for_runs(_runs(sizes, splits), out_sizes)
            assert grid is not None, (sizes, splits, out_sizes)
        for d, s in zip(group_out, grid):
            new_out[d] = s
    return tuple(new_in), tuple(new_out), groups


def _source_chunks(inp: TensorData, out_nsplits: Sequence[Splits], groups: list) -> list:
    """The input chunk of each output chunk (C order): the same flat place within each group."""
    out_grid = [len(s) for s in out_nsplits]
    in_grid = list(inp.chunk_shape)
    n = math.prod(out_grid)
    out_index = np.indices(out_grid).reshape(len(out_grid), n)
    in_index = np.zeros((len(in_grid), n), dtype=np.intp)
    for group_in, group_out in groups:
        flat = np.ravel_multi_index(out_index[group_out], [out_grid[d] for d in group_out])
        in_index[group_in] = np.unravel_index(flat, [in_grid[d] for d in group_in])
    flat_in = np.ravel_multi_index(in_index, in_grid) if in_grid else np.zeros(n, dtype=np.intp)
    return [inp.chunks[i] for i in flat_in.tolist()]
