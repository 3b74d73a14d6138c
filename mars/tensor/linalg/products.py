"""Products: ``tensordot`` and what numpy builds on it (dot, inner, outer, vdot, matmul).

Tiling cuts both inputs alike along the contracted dimensions (splitting a
chunk is a view, so this moves no data), then makes one chunk op per output
block that takes every pair of input blocks along those dimensions and adds
their products into one output: no partial products are stored and summed in
a second pass. Blocks contracted along a single axis are joined first, so
BLAS makes one call over the whole contracted length. Only a block with more
than ``4 * options.combine_size`` pairs is split into groups, summed by a
small tree, so that no op holds too many inputs at once.

A product of a tensor with itself along the same axes (``x @ x.T``,
``mt.inner(x, x)``, ``x.T @ x``: transposes are seen through) makes only the
blocks on and above the diagonal; the others are their transposes, and the
diagonal blocks go to BLAS's symmetric product at half the cost.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Generator, Iterator, Sequence

import numpy as np

from ...core.device import asarray, xp_of
from ...core.operator import Tiled
from ...core.options import options
from ..base.reshape import known_sizes, rechunked
from ..base.shape import expand_dims, ravel
from ..base.transpose import TensorTranspose
from ..chunks import common_splits
from ..core import Tensor, TensorData, TensorOperator, tensor_data
from ..datasource.core import astensor

__all__ = ["tensordot", "dot", "inner", "outer", "vdot", "matmul"]

_MATMUL_SIGNATURE = "(n?,k),(k,m?)->(n?,m?)"


# ----------------------------------------------------------------- chunk ops
class _BlockProduct(TensorOperator):
    """Σ over pairs of the product of ``a_i`` and ``b_i``; inputs are a_0, b_0, a_1, b_1, ..."""

    params = ("dtype",)
    blas = True

    def products(self, a_parts: Sequence[np.ndarray], b_parts: Sequence[np.ndarray]) -> Iterator[np.ndarray]:
        raise NotImplementedError

    def execute(self, *blocks: np.ndarray) -> np.ndarray:
        out = None
        for part in self.products(blocks[::2], blocks[1::2]):
            if out is None:
                out = part if part.dtype == self.dtype else part.astype(self.dtype)
            else:
                out += part
        return asarray(out)  # np.dot of two vectors gives a numpy scalar


class TensorDotBlock(_BlockProduct):
    """One output block of ``np.tensordot(a, b, axes)``."""

    params = ("axes", "dtype")

    def products(self, a_parts: Sequence[np.ndarray], b_parts: Sequence[np.ndarray]) -> Iterator[np.ndarray]:
        (a_axes, b_axes) = self.axes
        if len(a_parts) > 1 and len(a_axes) == 1:
            # one BLAS call over the whole contracted length: as fast as a sum of
            # calls on large blocks, much faster on small ones
            same = a_axes == b_axes and all(x is y for x, y in zip(a_parts, b_parts))
            a = np.concatenate(a_parts, axis=a_axes[0])
            b = a if same else np.concatenate(b_parts, axis=b_axes[0])
            a_parts, b_parts = (a,), (b,)
        for a, b in zip(a_parts, b_parts):
            yield _product(a, b, a_axes, b_axes)


def _product(a: np.ndarray, b: np.ndarray, a_axes: tuple, b_axes: tuple) -> np.ndarray:
    """np.tensordot, but a plain np.dot (on transposed views) for vectors and matrices:
    BLAS reads the transposes in place and spots ``x @ x.T`` (a symmetric product)."""
    if a.ndim > 2 or b.ndim > 2 or len(a_axes) != 1:
        return np.tensordot(a, b, (a_axes, b_axes))
    if a is b and a.ndim == 2 and a_axes == b_axes:
        a = b = xp_of(a).ascontiguousarray(a)  # the symmetric product needs one buffer seen twice
    lhs = a.T if a.ndim == 2 and a_axes[0] == 0 else a
    rhs = b.T if b.ndim == 2 and b_axes[0] == 1 else b
    return np.dot(lhs, rhs)


class TensorMatmulBlock(_BlockProduct):
    """One output block of ``np.matmul`` (batch dimensions broadcast inside the block)."""

    def products(self, a_parts: Sequence[np.ndarray], b_parts: Sequence[np.ndarray]) -> Iterator[np.ndarray]:
        for a, b in zip(a_parts, b_parts):
            yield np.matmul(a, b)


class TensorSumBlocks(TensorOperator):
    """The sum of its inputs: the tree above a block with many pairs."""

    params = ("dtype",)

    def execute(self, *parts: np.ndarray) -> np.ndarray:
        out = np.add(parts[0], parts[1], dtype=self.dtype)
        for p in parts[2:]:
            out += p
        return out


def _sum_of_pairs(block: _BlockProduct, pairs: list, index: tuple, shape: tuple, dtype: np.dtype) -> Any:
    """One block op over all pairs, or (many pairs) a tree of sums over balanced groups."""
    meta = dict(index=index, shape=shape, dtype=dtype, order="C")
    n_groups = math.ceil(len(pairs) / (4 * options.combine_size))
    size = math.ceil(len(pairs) / n_groups)
    parts = [block.copy().new_chunk([c for pair in pairs[i:i + size] for c in pair], **meta)
             for i in range(0, len(pairs), size)]
    fan_in = options.combine_size
    while len(parts) > 1:
        parts = [TensorSumBlocks(dtype=dtype).new_chunk(parts[i:i + fan_in], **meta) if len(parts[i:i + fan_in]) > 1
                 else parts[i] for i in range(0, len(parts), fan_in)]
    return parts[0]


# ----------------------------------------------------------------- tiling
def _aligned(a: TensorData, b: TensorData, dims: Sequence[tuple[int, int]]) -> Generator[Any, Any, tuple]:
    """``a`` and ``b`` cut alike along each pair of ``dims`` (a finer cut of both: views, no copies)."""
    a_splits, b_splits = list(a.nsplits), list(b.nsplits)
    for da, db in dims:
        if a_splits[da] != b_splits[db]:
            a_splits[da] = b_splits[db] = common_splits([a_splits[da], b_splits[db]])
    a = yield from rechunked(a, a_splits)
    b = yield from rechunked(b, b_splits)
    return a, b


def _check_run_sizes(a: TensorData, b: TensorData, dims: Sequence[tuple[int, int]]) -> None:
    """Sizes unknown when the product was built must still agree once known."""
    for da, db in dims:
        if a.shape[da] != b.shape[db]:
            raise ValueError(f"shape-mismatch for sum: axis {da} of a has {a.shape[da]} elements, "
                             f"axis {db} of b has {b.shape[db]}")


class TensorTensorDot(TensorOperator):
    """``np.tensordot(a, b, axes)`` over chunks; ``axes`` is a pair of axis tuples."""

    params = ("axes",)

    @classmethod
    def tile(cls, op: TensorTensorDot) -> Generator[Any, Any, Tiled]:
        a_axes, b_axes = op.axes
        yield from known_sizes(op.inputs)
        _check_run_sizes(*op.inputs, list(zip(a_axes, b_axes)))
        a, b = yield from _aligned(*op.inputs, list(zip(a_axes, b_axes)))
        dtype = op.outputs[0].dtype
        a_free = [d for d in range(a.ndim) if d not in a_axes]
        b_free = [d for d in range(b.ndim) if d not in b_axes]
        k_grid = [range(a.chunk_shape[d]) for d in a_axes]
        # x·xᵀ and kin: block (J, I) is block (I, J) with its two halves swapped
        mirror = a.key == b.key and a_axes == b_axes
        block = TensorDotBlock(axes=op.axes, dtype=dtype)
        made: dict[tuple, Any] = {}
        for a_idx in itertools.product(*(range(a.chunk_shape[d]) for d in a_free)):
            for b_idx in itertools.product(*(range(b.chunk_shape[d]) for d in b_free)):
                index = a_idx + b_idx
                if mirror and b_idx < a_idx:
                    made[index] = _mirrored(made[b_idx + a_idx], index, len(a_free))
                    continue
                pairs = [(a.chunk_at(_place(a.ndim, a_free, a_idx, a_axes, k)),
                          b.chunk_at(_place(b.ndim, b_free, b_idx, b_axes, k))) for k in itertools.product(*k_grid)]
                shape = tuple(pairs[0][0].shape[d] for d in a_free) + tuple(pairs[0][1].shape[d] for d in b_free)
                made[index] = _sum_of_pairs(block, pairs, index, shape, dtype)
        nsplits = tuple(a.nsplits[d] for d in a_free) + tuple(b.nsplits[d] for d in b_free)
        return Tiled(list(made.values()), nsplits)


def _mirrored(source: Any, index: tuple, n_free: int) -> Any:
    perm = tuple(range(n_free, 2 * n_free)) + tuple(range(n_free))
    shape = tuple(source.shape[p] for p in perm)
    return TensorTranspose(axes=perm).new_chunk([source], index=index, shape=shape, dtype=source.dtype, order="C")


def _place(ndim: int, free: Sequence[int], free_idx: Sequence[int], axes: Sequence[int], k: Sequence[int]) -> tuple:
    index = [0] * ndim
    for d, i in zip(free, free_idx):
        index[d] = i
    for d, i in zip(axes, k):
        index[d] = i
    return tuple(index)


class TensorMatmul(TensorOperator):
    """``np.matmul`` with batch dimensions (at least one input has three or more dims).

    A batch dimension of size 1 (or missing) in one input is not broadcast
    ahead of time: its one chunk meets every chunk of the other input, and
    np.matmul broadcasts inside the block.
    """

    @classmethod
    def tile(cls, op: TensorMatmul) -> Generator[Any, Any, Tiled]:
        yield from known_sizes(op.inputs)
        out = op.outputs[0]
        plan = _MatmulPlan(*op.inputs, out.ndim)
        _check_run_sizes(*op.inputs, plan.aligned_dims())
        a, b = yield from _aligned(*op.inputs, plan.aligned_dims())
        nsplits = plan.out_nsplits(a, b)
        chunks = []
        for index in itertools.product(*(range(len(s)) for s in nsplits)):
            pairs = [(a.chunk_at(plan.a_index(index, k)), b.chunk_at(plan.b_index(index, k)))
                     for k in range(a.chunk_shape[-1])]
            shape = tuple(nsplits[d][i] for d, i in enumerate(index))
            chunks.append(_sum_of_pairs(TensorMatmulBlock(dtype=out.dtype), pairs, index, shape, out.dtype))
        return Tiled(chunks, nsplits)


class _MatmulPlan:
    """Where each output dimension of a batched matmul comes from in ``a`` and ``b``."""

    def __init__(self, a: TensorData, b: TensorData, out_ndim: int):
        self.a_mat, self.b_mat = a.ndim > 1, b.ndim > 1  # has a row (a) / column (b) dimension
        self.nb = out_ndim - self.a_mat - self.b_mat
        self.a_batch = self._batch_dims(a, a.ndim - 2)
        self.b_batch = self._batch_dims(b, b.ndim - 2)
        self.a_ndim, self.b_ndim = a.ndim, b.ndim

    def _batch_dims(self, x: TensorData, n: int) -> list[int | None]:
        """For each output batch dim, the dim of ``x`` that is chunked along it (None: broadcast)."""
        n = max(n, 0)
        dims: list[int | None] = []
        for d in range(self.nb):
            own = d - (self.nb - n)
            dims.append(own if own >= 0 and x.shape[own] != 1 else None)
        return dims

    def aligned_dims(self) -> list[tuple[int, int]]:
        dims = [(da, db) for da, db in zip(self.a_batch, self.b_batch) if da is not None and db is not None]
        return dims + [(self.a_ndim - 1, self.b_ndim - 2 if self.b_mat else 0)]

    def out_nsplits(self, a: TensorData, b: TensorData) -> tuple:
        nsplits = []
        for da, db in zip(self.a_batch, self.b_batch):
            nsplits.append(a.nsplits[da] if da is not None else b.nsplits[db] if db is not None else (1,))
        if self.a_mat:
            nsplits.append(a.nsplits[-2])
        if self.b_mat:
            nsplits.append(b.nsplits[-1])
        return tuple(nsplits)

    def a_index(self, out_index: tuple, k: int) -> tuple:
        index = self._batch_index(self.a_batch, self.a_ndim - 2, out_index)
        return index + ((out_index[self.nb], k) if self.a_mat else (k,))

    def b_index(self, out_index: tuple, k: int) -> tuple:
        index = self._batch_index(self.b_batch, self.b_ndim - 2, out_index)
        return index + ((k, out_index[-1]) if self.b_mat else (k,))

    def _batch_index(self, dims: list[int | None], n: int, out_index: tuple) -> tuple:
        index = [0] * max(n, 0)
        for d, own in enumerate(dims):
            if own is not None:
                index[own] = out_index[d]
        return tuple(index)


# ----------------------------------------------------------------- building
def _shape_text(shape: Sequence[Any]) -> str:
    """A shape as numpy's messages print it: ``(5,4)``, ``(3,)``."""
    return "(" + ",".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _differ(n: Any, m: Any) -> bool:
    """Known sizes that differ (a size unknown until run, NaN, differs from nothing)."""
    return n != m and not (math.isnan(n) or math.isnan(m))


def _normalize_axes(axes: Any, a_ndim: int, b_ndim: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``axes`` as np.tensordot reads it, checked, as two tuples of non-negative axes."""
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, (bool, np.bool_)):
        n = int(axes)
        if n > min(a_ndim, b_ndim):
            raise np.exceptions.AxisError(
                f"tensordot: axes={n} but the inputs have {a_ndim} and {b_ndim} dimensions")
        n = max(n, 0)  # numpy contracts nothing for a negative count
        return tuple(range(a_ndim - n, a_ndim)), tuple(range(n))
    try:
        a_axes, b_axes = axes
    except TypeError:
        raise TypeError(f"tensordot: axes must be an integer or a pair of axis sequences, got {axes!r}") from None
    a_axes = _axis_tuple(a_axes, a_ndim, "a")
    b_axes = _axis_tuple(b_axes, b_ndim, "b")
    if len(a_axes) != len(b_axes):
        raise ValueError(f"shape-mismatch for sum: {len(a_axes)} axes of a against {len(b_axes)} of b")
    return a_axes, b_axes


def _axis_tuple(axes: Any, ndim: int, name: str) -> tuple[int, ...]:
    axes = tuple(axes) if isinstance(axes, (list, tuple)) else (axes,)
    result = []
    for ax in axes:
        if not isinstance(ax, (int, np.integer)) or isinstance(ax, (bool, np.bool_)):
            raise TypeError(f"tensordot: axes of {name} must be integers, got {axes!r}")
        if not -ndim <= ax < ndim:
            raise np.exceptions.AxisError(int(ax), ndim, f"tensordot: axis of {name}")
        result.append(int(ax) % ndim)
    if len(set(result)) != len(result):
        raise ValueError(f"duplicate axes are not allowed in tensordot: {axes!r}")
    return tuple(result)


def _untransposed(x: TensorData, axes: tuple[int, ...]) -> tuple[TensorData, tuple[int, ...]]:
    """``y.transpose(p)`` contracted along ``axes`` is ``y`` contracted along ``p[axes]``,
    when the dimensions left keep their order (so ``x.T @ x`` is seen as symmetric)."""
    op = x.op
    if not isinstance(op, TensorTranspose):
        return x, axes
    free = [op.axes[d] for d in range(x.ndim) if d not in axes]
    if free != sorted(free):
        return x, axes
    return op.inputs[0], tuple(op.axes[d] for d in axes)


def tensordot(a: Any, b: Any, axes: Any = 2) -> Tensor:
    """Sum products over the given axes, as ``np.tensordot``.

    ``axes`` is an integer n (the last n axes of ``a`` against the first n
    of ``b``) or a pair of axis sequences.

    >>> import mars.tensor as mt
    >>> a, b = mt.ones((3, 4), chunk_size=2), mt.ones((4, 5), chunk_size=3)
    >>> mt.tensordot(a, b, axes=1).sum().execute().fetch()
    np.float64(60.0)
    """
    a, b = tensor_data(astensor(a)), tensor_data(astensor(b))
    a_axes, b_axes = _normalize_axes(axes, a.ndim, b.ndim)
    for da, db in zip(a_axes, b_axes):
        if _differ(a.shape[da], b.shape[db]):
            raise ValueError(f"shape-mismatch for sum: axis {da} of a has {a.shape[da]} elements, "
                             f"axis {db} of b has {b.shape[db]}")
    shape = tuple(a.shape[d] for d in range(a.ndim) if d not in a_axes) + tuple(
        b.shape[d] for d in range(b.ndim) if d not in b_axes)
    dtype = np.tensordot(np.zeros(1, a.dtype), np.zeros(1, b.dtype), 1).dtype
    a, a_axes = _untransposed(a, a_axes)
    b, b_axes = _untransposed(b, b_axes)
    return TensorTensorDot(axes=(a_axes, b_axes)).new_tensor([a, b], shape, dtype)


def _check_aligned(a: Tensor, b: Tensor, da: int, db: int) -> None:
    if _differ(a.shape[da], b.shape[db]):
        raise ValueError(f"shapes {_shape_text(a.shape)} and {_shape_text(b.shape)} not aligned: "
                         f"{a.shape[da]} (dim {da}) != {b.shape[db]} (dim {db})")


def dot(a: Any, b: Any, out: Any = None) -> Tensor:
    """Dot product, as ``np.dot``: of vectors, of matrices, or over ``a``'s last axis
    and ``b``'s second-to-last.

    >>> import mars.tensor as mt
    >>> mt.dot(mt.ones((2, 3), chunk_size=2), mt.ones(3)).execute().fetch()
    array([3., 3.])
    """
    if out is not None:
        raise NotImplementedError("dot(out=...) is not supported; assign the result instead")
    ta, tb = astensor(a), astensor(b)
    if ta.ndim == 0 or tb.ndim == 0:
        return ta * tb
    db = max(tb.ndim - 2, 0)
    _check_aligned(ta, tb, ta.ndim - 1, db)
    return tensordot(ta, tb, axes=((ta.ndim - 1,), (db,)))


def inner(a: Any, b: Any) -> Tensor:
    """Sum product over the last axes of ``a`` and ``b``, as ``np.inner``.

    >>> import mars.tensor as mt
    >>> x = mt.arange(6, chunk_size=4).reshape(2, 3)
    >>> mt.inner(x, x).execute().fetch()
    array([[ 5, 14],
           [14, 50]])
    """
    ta, tb = astensor(a), astensor(b)
    if ta.ndim == 0 or tb.ndim == 0:
        return ta * tb
    _check_aligned(ta, tb, ta.ndim - 1, tb.ndim - 1)
    return tensordot(ta, tb, axes=((ta.ndim - 1,), (tb.ndim - 1,)))


def outer(a: Any, b: Any) -> Tensor:
    """Every element of ``a`` (flattened) times every element of ``b``, as ``np.outer``.

    >>> import mars.tensor as mt
    >>> mt.outer(mt.arange(2), mt.arange(3)).execute().fetch()
    array([[0, 0, 0],
           [0, 1, 2]])
    """
    return expand_dims(ravel(astensor(a)), 1) * ravel(astensor(b))


def vdot(a: Any, b: Any) -> Tensor:
    """Dot product of the flattened inputs, conjugating ``a``, as ``np.vdot``.

    >>> import mars.tensor as mt
    >>> mt.vdot(mt.tensor([1j, 2]), mt.tensor([1j, 1])).execute().fetch()
    np.complex128(3+0j)
    """
    ta, tb = ravel(astensor(a)), ravel(astensor(b))
    if _differ(ta.shape[0], tb.shape[0]):
        raise ValueError(f"vdot: the inputs have {ta.shape[0]} and {tb.shape[0]} elements; they must have as many")
    if ta.dtype.kind == "c":
        ta = ta.conj()
    return tensordot(ta, tb, axes=1)


def matmul(a: Any, b: Any) -> Tensor:
    """Matrix product ``a @ b``, as ``np.matmul``: 1-D inputs are vectors, and the
    dimensions before the last two are batch dimensions, broadcast.

    >>> import mars.tensor as mt
    >>> (mt.ones((2, 3, 4), chunk_size=2) @ mt.ones((4, 5), chunk_size=3)).shape
    (2, 3, 5)
    """
    ta, tb = astensor(a), astensor(b)
    for i, t in enumerate((ta, tb)):
        if t.ndim == 0:
            raise ValueError(f"matmul: Input operand {i} does not have enough dimensions "
                             f"(has 0, gufunc core with signature {_MATMUL_SIGNATURE} requires 1)")
    k_a, k_b = ta.shape[-1], tb.shape[-2 if tb.ndim > 1 else 0]
    if _differ(k_a, k_b):
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, "
                         f"with gufunc signature {_MATMUL_SIGNATURE} (size {k_b} is different from {k_a})")
    if ta.ndim <= 2 and tb.ndim <= 2:
        return tensordot(ta, tb, axes=((ta.ndim - 1,), (max(tb.ndim - 2, 0),)))
    a, b = tensor_data(ta), tensor_data(tb)
    shape = _batch_shape(a, b) + a.shape[-2:-1] + b.shape[-1:] * (b.ndim > 1)
    dtype = np.matmul(np.zeros((1, 1), a.dtype), np.zeros((1, 1), b.dtype)).dtype
    return TensorMatmul().new_tensor([a, b], shape, dtype)


def _batch_shape(a: TensorData, b: TensorData) -> tuple:
    """numpy's broadcast of the batch dimensions (a size unknown until run broadcasts as itself)."""
    a_batch, b_batch = a.shape[:-2], b.shape[:-2]
    n = max(len(a_batch), len(b_batch))
    a_batch = (1,) * (n - len(a_batch)) + tuple(a_batch)
    b_batch = (1,) * (n - len(b_batch)) + tuple(b_batch)
    shape = []
    for x, y in zip(a_batch, b_batch):
        if x != 1 and y != 1 and _differ(x, y):
            remapped = [f"{_shape_text(t.shape)}->{_shape_text(t.shape[:-2] + ('newaxis', 'newaxis'))}" for t in (a, b)]
            raise ValueError("operands could not be broadcast together with remapped shapes [original->remapped]: "
                             f"{remapped[0]} {remapped[1]}  and requested shape "
                             f"{_shape_text((a.shape[-2], b.shape[-1]))}")
        shape.append(y if x == 1 else x)
    return tuple(shape)


def linalg_outer(x1: Any, x2: Any) -> Tensor:
    """``mt.linalg.outer``: the outer product of two vectors, as ``np.linalg.outer``
    (which, unlike ``np.outer``, refuses inputs that are not 1-D).

    >>> import mars.tensor as mt
    >>> mt.linalg.outer(mt.arange(2), mt.arange(2)).execute().fetch()
    array([[0, 0],
           [0, 1]])
    """
    t1, t2 = astensor(x1), astensor(x2)
    if t1.ndim != 1 or t2.ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are x1.ndim={t1.ndim} and x2.ndim={t2.ndim}.")
    return outer(t1, t2)
