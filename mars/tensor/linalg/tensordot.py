"""Products: ``tensordot`` and what numpy builds on it (dot, inner, outer, vdot, matmul).

Tiling aligns the contracted dimensions of both inputs, then makes one chunk
op per output block that takes every pair of input blocks along the
contracted axes and accumulates their products into one output: no partial
products are stored or added in a second pass. When a block has more pairs
than ``_PAIRS_PER_OP``, groups of pairs are summed by a small tree instead,
so that no op holds too many inputs in memory at once.
"""

from __future__ import annotations

import itertools
from typing import Any, Generator, Sequence

import numpy as np

from ...core.operator import Tiled
from ...core.options import options
from ..base.reshape import known_sizes, rechunked
from ..base.shape import broadcast_to, expand_dims, ravel
from ..base.transpose import TensorTranspose
from ..chunks import common_splits
from ..core import Tensor, TensorOperator, tensor_data
from ..datasource.core import astensor

__all__ = ["tensordot", "dot", "inner", "outer", "vdot", "matmul"]

_PAIRS_PER_OP = 8


class TensorDotBlock(TensorOperator):
    """Σ over pairs of ``np.tensordot(a_i, b_i, axes)``: inputs are a_0, b_0, a_1, b_1, ..."""

    params = ("axes", "dtype")
    blas = True

    def execute(self, *blocks: np.ndarray) -> np.ndarray:
        a_parts, b_parts = blocks[::2], blocks[1::2]
        if len(a_parts) > 1 and self.axes in _DOT_FORMS and a_parts[0].ndim == 2 and b_parts[0].ndim == 2:
            # one BLAS call over the whole contracted length beats a sum of calls
            a = np.concatenate(a_parts, axis=self.axes[0][0])
            same = all(x is y for x, y in zip(a_parts, b_parts)) and self.axes[0] == self.axes[1]
            b = a if same else np.concatenate(b_parts, axis=self.axes[1][0])
            a_parts, b_parts = (a,), (b,)
        out = None
        for a, b in zip(a_parts, b_parts):
            part = _product(a, b, self.axes)
            if out is None:
                out = part if part.dtype == self.dtype else part.astype(self.dtype)
            else:
                out += part
        return out


_DOT_FORMS = {((1,), (0,)): (False, False), ((1,), (1,)): (False, True),
              ((0,), (0,)): (True, False), ((0,), (1,)): (True, True)}


def _product(a: np.ndarray, b: np.ndarray, axes: tuple) -> np.ndarray:
    """np.tensordot, but a plain (transposed) np.dot for matrices: BLAS reads the
    transposes in place, and spots ``x @ x.T`` (a symmetric product at half the cost)."""
    form = _DOT_FORMS.get(axes) if a.ndim == 2 and b.ndim == 2 else None
    if form is None:
        return np.tensordot(a, b, axes)
    if a is b and form[0] != form[1]:
        a = b = np.ascontiguousarray(a)  # BLAS's symmetric product needs one contiguous buffer
    return np.dot(a.T if form[0] else a, b.T if form[1] else b)


class TensorMatmulBlock(TensorDotBlock):
    """Σ over pairs of ``np.matmul(a_i, b_i)`` (batched matrix products)."""

    def execute(self, *blocks: np.ndarray) -> np.ndarray:
        out = None
        for a, b in zip(blocks[::2], blocks[1::2]):
            part = np.matmul(a, b)
            if out is None:
                out = part if part.dtype == self.dtype else part.astype(self.dtype)
            else:
                out += part
        return out


class SumBlocks(TensorOperator):
    """The sum of its inputs (the tree above products with many pairs)."""

    params = ("dtype",)

    def execute(self, *parts: np.ndarray) -> np.ndarray:
        out = parts[0].copy()
        for p in parts[1:]:
            out += p
        return out


class TensorTensorDot(TensorOperator):
    """``np.tensordot(a, b, axes)`` over chunks (``axes`` as a pair of axis tuples)."""

    params = ("axes", "matmul")

    @classmethod
    def tile(cls, op: TensorTensorDot) -> Generator[Any, Any, Tiled]:
        a, b = op.inputs
        a_axes, b_axes = op.axes
        yield from known_sizes([a, b])
        a, b = yield from _align_contracted(a, b, a_axes, b_axes)
        out = op.outputs[0]
        if op.matmul:
            return _tile_matmul(op, a, b, out)
        a_free = [d for d in range(a.ndim) if d not in a_axes]
        b_free = [d for d in range(b.ndim) if d not in b_axes]
        k_grid = [a.chunk_shape[d] for d in a_axes]
        symmetric = a.key == b.key and tuple(a_axes) == tuple(b_axes) and a.ndim == 2
        chunks = []
        for a_idx in itertools.product(*(range(a.chunk_shape[d]) for d in a_free)):
            for b_idx in itertools.product(*(range(b.chunk_shape[d]) for d in b_free)):
                if symmetric and b_idx < a_idx:  # x·xᵀ: block (j, i) is block (i, j) transposed
                    chunks.append(_mirrored(chunks, a.chunk_shape[a_free[0]], a_idx + b_idx, out))
                    continue
                pairs = []
                for k in itertools.product(*(range(n) for n in k_grid)):
                    pairs.append((a.chunk_at(_place(a.ndim, a_free, a_idx, a_axes, k)),
                                  b.chunk_at(_place(b.ndim, b_free, b_idx, b_axes, k))))
                shape = tuple(p.shape[d] for p, dims in ((pairs[0][0], a_free), (pairs[0][1], b_free)) for d in dims)
                block = TensorDotBlock(axes=(tuple(a_axes), tuple(b_axes)), dtype=out.dtype)
                chunks.append(_sum_of_pairs(block, pairs, a_idx + b_idx, shape, out))
        nsplits = tuple(a.nsplits[d] for d in a_free) + tuple(b.nsplits[d] for d in b_free)
        return Tiled(chunks, nsplits)


def _mirrored(chunks: list, n: int, index: tuple, out: Any) -> Any:
    i, j = index
    source = chunks[j * n + i]
    op = TensorTranspose(axes=(1, 0))
    return op.new_chunk([source], index=index, shape=source.shape[::-1], dtype=out.dtype, order="C")


def _place(ndim: int, free: Sequence[int], free_idx: Sequence[int], axes: Sequence[int], k: Sequence[int]) -> tuple:
    index = [0] * ndim
    for d, i in zip(free, free_idx):
        index[d] = i
    for d, i in zip(axes, k):
        index[d] = i
    return tuple(index)


def _align_contracted(a: Any, b: Any, a_axes: Sequence[int], b_axes: Sequence[int]) -> Generator[Any, Any, tuple]:
    """Both inputs cut alike along each pair of contracted axes."""
    a_splits, b_splits = list(a.nsplits), list(b.nsplits)
    for da, db in zip(a_axes, b_axes):
        if a.nsplits[da] != b.nsplits[db]:
            common = common_splits([a.nsplits[da], b.nsplits[db]])
            a_splits[da] = b_splits[db] = common
    a = yield from rechunked(a, a_splits)
    b = yield from rechunked(b, b_splits)
    return a, b


def _sum_of_pairs(block: TensorDotBlock, pairs: list, index: tuple, shape: tuple, out: Any) -> Any:
    """One op over all pairs, or a tree of sums over groups of ``_PAIRS_PER_OP`` pairs."""
    meta = dict(index=index, shape=shape, dtype=out.dtype, order="C")
    groups = [pairs[i:i + _PAIRS_PER_OP] for i in range(0, len(pairs), _PAIRS_PER_OP)]
    parts = [block.copy().new_chunk([c for pair in g for c in pair], **meta) for g in groups]
    while len(parts) > 1:
        size = max(2, options.combine_size)
        parts = [SumBlocks(dtype=out.dtype).new_chunk(parts[i:i + size], **meta) if len(parts[i:i + size]) > 1
                 else parts[i] for i in range(0, len(parts), size)]
    return parts[0]


def _tile_matmul(op: TensorTensorDot, a: Any, b: Any, out: Any) -> Tiled:
    """Batched matmul: both inputs already broadcast to the same batch dims and aligned."""
    nb = a.ndim - 2
    chunks = []
    grid = [a.chunk_shape[d] for d in range(nb)] + [a.chunk_shape[nb], b.chunk_shape[nb + 1]]
    for index in itertools.product(*(range(n) for n in grid)):
        batch, i, j = index[:nb], index[nb], index[nb + 1]
        pairs = [(a.chunk_at(batch + (i, k)), b.chunk_at(batch + (k, j))) for k in range(a.chunk_shape[nb + 1])]
        shape = pairs[0][0].shape[:nb] + (pairs[0][0].shape[nb], pairs[0][1].shape[nb + 1])
        block = TensorMatmulBlock(axes=None, dtype=out.dtype)
        chunks.append(_sum_of_pairs(block, pairs, index, shape, out))
    nsplits = tuple(a.nsplits[:nb]) + (a.nsplits[nb], b.nsplits[nb + 1])
    return Tiled(chunks, nsplits)


def _normalize_axes(axes: Any, a_ndim: int, b_ndim: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > a_ndim or n > b_ndim:
            raise ValueError(f"tensordot: axes={n} is out of range for inputs with {a_ndim} and {b_ndim} dimensions")
        return tuple(range(a_ndim - n, a_ndim)), tuple(range(n))
    try:
        a_axes, b_axes = axes
    except (TypeError, ValueError):
        raise ValueError(f"axes must be an integer or a pair of sequences, got {axes!r}") from None
    a_axes = (a_axes,) if isinstance(a_axes, (int, np.integer)) else tuple(a_axes)
    b_axes = (b_axes,) if isinstance(b_axes, (int, np.integer)) else tuple(b_axes)
    if len(a_axes) != len(b_axes):
        raise ValueError("shape-mismatch for sum")
    return tuple(int(x) % a_ndim for x in a_axes), tuple(int(x) % b_ndim for x in b_axes)


def _probe_dtype(a: Any, b: Any) -> np.dtype:
    return np.tensordot(np.zeros(1, a.dtype), np.zeros(1, b.dtype), 1).dtype


def tensordot(a: Any, b: Any, axes: Any = 2) -> Tensor:
    """Sum products over the given axes, as ``np.tensordot``.

    >>> import mars.tensor as mt
    >>> mt.tensordot(mt.ones((3, 4), chunk_size=2), mt.ones((4, 5), chunk_size=3), axes=1).sum().fetch()
    np.float64(60.0)
    """
    a, b = tensor_data(astensor(a)), tensor_data(astensor(b))
    a_axes, b_axes = _normalize_axes(axes, a.ndim, b.ndim)
    for da, db in zip(a_axes, b_axes):
        if a.shape[da] != b.shape[db] and not (np.isnan(a.shape[da]) or np.isnan(b.shape[db])):
            raise ValueError("shape-mismatch for sum")
    shape = tuple(a.shape[d] for d in range(a.ndim) if d not in a_axes) + tuple(
        b.shape[d] for d in range(b.ndim) if d not in b_axes)
    op = TensorTensorDot(axes=(a_axes, b_axes), matmul=False)
    return op.new_tensor([a, b], shape, _probe_dtype(a, b))


def dot(a: Any, b: Any, out: Any = None) -> Tensor:
    """``np.dot``: inner product of vectors, matrix product, or a sum product over a's last axis."""
    if out is not None:
        raise NotImplementedError("dot(out=...) is not supported; assign the result instead")
    ta, tb = astensor(a), astensor(b)
    if ta.ndim == 0 or tb.ndim == 0:
        return ta * tb
    if tb.ndim == 1:
        _check_dims(ta.shape[-1], tb.shape[0], "shapes {} and {} not aligned", ta, tb)
        return tensordot(ta, tb, axes=((ta.ndim - 1,), (0,)))
    _check_dims(ta.shape[-1], tb.shape[-2], "shapes {} and {} not aligned", ta, tb)
    return tensordot(ta, tb, axes=((ta.ndim - 1,), (tb.ndim - 2,)))


def _check_dims(n: Any, m: Any, message: str, a: Any, b: Any) -> None:
    if n != m and not (isinstance(n, float) or isinstance(m, float)):
        raise ValueError(message.format(tuple(a.shape), tuple(b.shape)))


def inner(a: Any, b: Any) -> Tensor:
    """Sum product over the last axes of ``a`` and ``b``, as ``np.inner``."""
    ta, tb = astensor(a), astensor(b)
    if ta.ndim == 0 or tb.ndim == 0:
        return ta * tb
    _check_dims(ta.shape[-1], tb.shape[-1], "shapes {} and {} not aligned: last dimensions differ", ta, tb)
    return tensordot(ta, tb, axes=((ta.ndim - 1,), (tb.ndim - 1,)))


def outer(a: Any, b: Any) -> Tensor:
    """``np.outer``: every element of ``a`` (flattened) times every element of ``b``."""
    return expand_dims(ravel(astensor(a)), 1) * ravel(astensor(b))


def vdot(a: Any, b: Any) -> Tensor:
    """``np.vdot``: flattened dot product, conjugating ``a``."""
    ta, tb = ravel(astensor(a)), ravel(astensor(b))
    _check_dims(ta.shape[0], tb.shape[0], "cannot reshape: vectors of sizes {} and {} differ", ta, tb)
    if ta.dtype.kind == "c":
        ta = ta.conj()
    return tensordot(ta, tb, axes=1)


def matmul(a: Any, b: Any) -> Tensor:
    """``a @ b`` as ``np.matmul``: 1-D inputs promoted, batch dimensions broadcast."""
    ta, tb = astensor(a), astensor(b)
    for i, t in enumerate((ta, tb)):
        if t.ndim == 0:
            raise ValueError(f"matmul: Input operand {i} does not have enough dimensions "
                             f"(has 0, gufunc core with signature (n?,k),(k,m?)->(n?,m?) requires 1)")
    if ta.ndim <= 2 and tb.ndim <= 2:
        k_a, k_b = ta.shape[-1], tb.shape[0]
        if k_a != k_b and not (isinstance(k_a, float) or isinstance(k_b, float)):
            raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
                             f"signature (n?,k),(k,m?)->(n?,m?) (size {k_b} is different from {k_a})")
        return tensordot(ta, tb, axes=((ta.ndim - 1,), (0,)))
    return _batched_matmul(ta, tb)


def _batched_matmul(ta: Tensor, tb: Tensor) -> Tensor:
    a_1d, b_1d = ta.ndim == 1, tb.ndim == 1
    if a_1d:
        ta = expand_dims(ta, 0)
    if b_1d:
        tb = expand_dims(tb, 1)
    if ta.shape[-1] != tb.shape[-2]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
                         f"signature (n?,k),(k,m?)->(n?,m?) (size {tb.shape[-2]} is different from {ta.shape[-1]})")
    try:
        batch = np.broadcast_shapes(ta.shape[:-2], tb.shape[:-2])
    except ValueError:
        raise ValueError(f"operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: {tuple(ta.shape)} and {tuple(tb.shape)}") from None
    ta = broadcast_to(ta, batch + tuple(ta.shape[-2:]))
    tb = broadcast_to(tb, batch + tuple(tb.shape[-2:]))
    a, b = tensor_data(ta), tensor_data(tb)
    nb = len(batch)
    op = TensorTensorDot(axes=(tuple(range(nb)) + (nb + 1,), tuple(range(nb)) + (nb,)), matmul=True)
    dtype = np.matmul(np.zeros((1, 1), a.dtype), np.zeros((1, 1), b.dtype)).dtype
    result = op.new_tensor([a, b], batch + (a.shape[-2], b.shape[-1]), dtype)
    if a_1d:
        result = result.squeeze(-2)
    if b_1d:
        result = result.squeeze(-1)
    return result
