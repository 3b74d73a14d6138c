"""How dense operators run when an input is a sparse tensor.

Each route is registered by the class of the dense op it stands in for (see
``SPARSE_ROUTES`` in ``mars.tensor.core``); an op without one raises a
``TypeError`` that names ``.todense()``. The rules, as Mars had them:

- elementwise: the result stays sparse when every tensor input is sparse and
  of the result's shape, and the function maps zeros to zero (``f(0) == 0``:
  ``x * 2``, ``abs``, ``-x``, ``sqrt``, ``x > 0``, ``x + y``; the function runs
  on the stored values of the union of the inputs' patterns); ``multiply`` of
  a sparse and a dense tensor stays sparse as scipy's ``multiply`` does (so
  ``0 * inf`` is 0 there, not numpy's NaN). Every other elementwise result
  is dense, computed on densified chunks (``x + 1``, ``cos``, ``x == 0``).
- ``dot``/``@``/``matmul``/``tensordot`` over one axis of 2-D and 1-D inputs:
  scipy's product of each pair of blocks, summed; sparse × sparse is
  sparse, sparse × dense is dense.
- ``sum``, ``mean``, ``max``, ``min``: scipy reduces each chunk (implicit
  zeros included) and the dense reduction tree combines the partials; the
  result is dense, as numpy's would be.
- transpose, ``astype``, ``rechunk`` and slicing by slices (any step) stay
  sparse; an integer index or ``None`` slices sparsely, then densifies.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Generator
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from ...core.operator import Tiled
from ...core.tiling import recursive_tile
from ..arithmetic.core import TensorAstype, TensorUfunc, apply_ufunc, astype, numpy_func
from ..base.reshape import known_sizes, rechunked
from ..base.transpose import TensorTranspose
from ..chunks import common_splits
from ..core import INPUT, SPARSE_ROUTES, Tensor, TensorOperator
from ..indexing.basic import TensorSlice
from ..linalg.products import TensorTensorDot
from ..rechunk import TensorRechunk
from ..reduction.basic import TensorMax, TensorMean, TensorMin, TensorSum
from ..reduction.basic import max as max_
from ..reduction.basic import min as min_
from ..reduction.basic import sum as sum_
from .core import (
    SparseOperator,
    SparseRechunk,
    SparseTensorData,
    csr,
    issparse,
    map_chunks,
    todense,
    tosparse,
)

__all__ = ["issparse"]


# ----------------------------------------------------------------- elementwise
class SparseUfunc(TensorUfunc):
    """A ufunc with ``f(0) == 0`` on sparse inputs: applied to the stored values only."""

    params = ("func", "operands", "kwargs", "dtype")
    tileable_type = SparseTensorData
    accepts_sparse: ClassVar[bool] = True
    fusible = False
    blockwise = False

    def execute(self, *inputs: Any) -> sp.csr_matrix:
        dense = [x for x in inputs if not sp.issparse(x)]
        if dense:  # multiply by a dense tensor: scipy's multiply
            matrix = next(x for x in inputs if sp.issparse(x))
            return csr(sp.csr_matrix(matrix).multiply(dense[0]), self.dtype)
        rows, cols, values = _on_union([sp.csr_matrix(x) for x in inputs])
        it = iter(values)
        args = [next(it) if a is INPUT else a for a in self.operands]
        with np.errstate(all="ignore"):
            result = numpy_func(self.func)(*args, **self.kwargs)
        shape = inputs[0].shape
        return csr(sp.coo_matrix((result, (rows, cols)), shape=shape), self.dtype)


def _on_union(matrices: list) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Rows and columns of the union of the matrices' patterns, and each matrix's values there."""
    if len(matrices) == 1:
        coo = matrices[0].tocoo()
        coo.sum_duplicates()
        return coo.row, coo.col, [coo.data]
    ones = [sp.csr_matrix((np.ones(m.nnz, dtype=np.int8), m.indices, m.indptr), shape=m.shape) for m in matrices]
    pattern = ones[0]
    for m in ones[1:]:
        pattern = pattern + m
    pattern = pattern.tocoo()
    rows, cols = pattern.row, pattern.col
    if not rows.size:  # scipy indexes no points as an empty object matrix
        return rows, cols, [np.zeros(0, dtype=m.dtype) for m in matrices]
    return rows, cols, [np.asarray(m[rows, cols]).ravel() for m in matrices]


class DensifiedUfunc(TensorUfunc):
    """A ufunc that does not keep sparsity: run on densified chunks, dense result."""

    accepts_sparse: ClassVar[bool] = True
    fusible = False
    blockwise = False

    def execute(self, *inputs: Any) -> Any:
        return super().execute(*(x.toarray() if sp.issparse(x) else x for x in inputs))


def _keeps_sparsity(op: TensorUfunc, inputs: list, shape: tuple) -> bool:
    sparse = [d for d in inputs if d.issparse()]
    if len(shape) != 2 or any(tuple(d.shape) != tuple(shape) for d in sparse):
        return False
    if len(sparse) < len(inputs):
        return op.func == "multiply" and len(sparse) == 1 and not op.kwargs
    zeros = iter(np.zeros((), dtype=d.dtype) for d in inputs)
    args = [next(zeros) if a is INPUT else a for a in op.operands]
    try:
        with np.errstate(all="ignore"):
            at_zero = numpy_func(op.func)(*args, **op.kwargs)
    except (TypeError, ValueError):
        return False
    return not isinstance(at_zero, tuple) and bool(np.all(np.asarray(at_zero) == 0))


def _route_ufunc(op: TensorUfunc, inputs: list, shape: tuple, dtype: np.dtype, order: str) -> Tensor:
    if _keeps_sparsity(op, inputs, shape):
        return SparseUfunc(func=op.func, operands=op.operands, kwargs=op.kwargs, dtype=dtype).new_tensor(
            inputs, shape, dtype)
    return DensifiedUfunc(func=op.func, operands=op.operands, kwargs=op.kwargs).new_tensor(inputs, shape, dtype)


class SparseAstype(SparseOperator):
    params = ("dtype",)

    @classmethod
    def tile(cls, op: SparseAstype) -> Tiled:
        return map_chunks(op, op)

    def execute(self, x: sp.csr_matrix) -> sp.csr_matrix:
        return csr(x, self.dtype)


def _route_astype(op: TensorAstype, inputs: list, shape: tuple, dtype: np.dtype, order: str) -> Tensor:
    return SparseAstype(dtype=dtype).new_tensor(inputs, shape, dtype)


# ----------------------------------------------------------------- shape and slicing
class SparseTranspose(TensorTranspose):
    tileable_type = SparseTensorData
    accepts_sparse: ClassVar[bool] = True
    fusible = False

    def execute(self, x: sp.csr_matrix) -> sp.csr_matrix:
        return sp.csr_matrix(x.transpose())


def _route_transpose(op: TensorTranspose, inputs: list, shape: tuple, dtype: np.dtype, order: str) -> Tensor:
    return SparseTranspose(axes=op.axes).new_tensor(inputs, shape, dtype)


class SparseSlice(TensorSlice):
    """Slices (any step) of a sparse tensor: each output chunk is a slice of one CSR chunk."""

    tileable_type = SparseTensorData
    accepts_sparse: ClassVar[bool] = True


def _route_slice(op: TensorSlice, inputs: list, shape: tuple, dtype: np.dtype, order: str) -> Tensor:
    data = inputs[0]
    if all(isinstance(e, slice) for e in op.index):
        return SparseSlice(index=op.index).new_tensor(inputs, shape, dtype)
    # an integer or a new axis leaves no 2-D matrix: slice sparsely, then densify the (small) rest
    axis_entries = [e for e in op.index if e is not None]
    sliced = tuple(slice(e % data.shape[d], e % data.shape[d] + 1) if isinstance(e, int) else e
                   for d, e in enumerate(axis_entries))
    sliced_shape = tuple(len(range(*s.indices(data.shape[d]))) for d, s in enumerate(sliced))
    part = SparseSlice(index=sliced).new_tensor(inputs, sliced_shape, dtype)
    rest = tuple(0 if isinstance(e, int) else None if e is None else slice(None) for e in op.index)
    return todense(part)[rest]


def _route_rechunk(op: TensorRechunk, inputs: list, shape: tuple, dtype: np.dtype, order: str) -> Tensor:
    return SparseRechunk(nsplits=op.nsplits, chunk_size=op.chunk_size).new_tensor(inputs, shape, dtype)


# ----------------------------------------------------------------- reductions
class SparsePartials(TensorOperator):
    """Each sparse chunk reduced by scipy (``kind``: sum, max or min) over ``axis``, axes kept as size 1."""

    params = ("kind", "axis", "dtype")
    accepts_sparse: ClassVar[bool] = True

    @classmethod
    def tile(cls, op: SparsePartials) -> Tiled:
        inp, out = op.inputs[0], op.outputs[0]
        chunks = []
        for c in inp.chunks:
            shape = tuple(1 if d in op.axis else n for d, n in enumerate(c.shape))
            chunks.append(op.copy().new_chunk([c], index=c.index, shape=shape, dtype=out.dtype, order="C"))
        nsplits = tuple((1,) * len(s) if d in op.axis else s for d, s in enumerate(inp.nsplits))
        return Tiled(chunks, nsplits)

    def execute(self, x: sp.csr_matrix) -> np.ndarray:
        axis = None if len(self.axis) == 2 else self.axis[0]
        if self.kind == "sum":
            result = x.sum(axis=axis, dtype=self.dtype)
        else:
            result = x.max(axis=axis) if self.kind == "max" else x.min(axis=axis)
        result = result.toarray() if sp.issparse(result) else np.asarray(result)
        shape = tuple(1 if d in self.axis else n for d, n in enumerate(x.shape))
        return result.reshape(shape).astype(self.dtype, copy=False)


class SparseReduce(TensorOperator):
    """A reduction of a sparse tensor: scipy's per-chunk partials, then the dense reduction over them."""

    params = ("reduction",)
    accepts_sparse: ClassVar[bool] = True

    @classmethod
    def tile(cls, op: SparseReduce) -> Generator[Any, Any, Tiled]:
        red, inp = op.reduction, op.inputs[0]
        kind = _KINDS[type(red)]
        acc = red.dtype if kind != "mean" else (red.sum_dtype or inp.dtype)
        shape = tuple(len(s) if d in red.axis else sum(s) for d, s in enumerate(inp.nsplits))
        partials = SparsePartials(kind="sum" if kind == "mean" else kind, axis=red.axis, dtype=acc)
        result = _finish(red, kind, partials.new_tensor([inp], shape, acc), math.prod(inp.shape[d] for d in red.axis))
        result = yield from recursive_tile(result)
        return Tiled(result.data.chunks, result.data.nsplits)


_KINDS = {TensorSum: "sum", TensorMax: "max", TensorMin: "min", TensorMean: "mean"}


def _finish(red: Any, kind: str, partials: Tensor, count: int) -> Tensor:
    """The dense reduction of the partials that gives the reduction's result."""
    if kind == "sum":
        return sum_(partials, axis=red.axis, keepdims=red.keepdims, dtype=red.dtype)
    if kind in ("max", "min"):
        return (max_ if kind == "max" else min_)(partials, axis=red.axis, keepdims=red.keepdims)
    total = sum_(partials, axis=red.axis, keepdims=red.keepdims, dtype=partials.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        return astype(apply_ufunc("true_divide", total, count), red.dtype)


def _route_reduction(op: Any, inputs: list, shape: tuple, dtype: np.dtype, order: str) -> Tensor:
    if not op.axis:  # axis=(): nothing is reduced; numpy gives the input's values
        return op.copy().new_tensor([todense(Tensor(inputs[0]))], shape, dtype, order)
    return SparseReduce(reduction=op.copy()).new_tensor(inputs, shape, dtype)


# ----------------------------------------------------------------- products
class SparseDotBlock(TensorOperator):
    """Σ over pairs of scipy's product of ``a_i`` and ``b_i``; inputs are a_0, b_0, a_1, b_1, ..."""

    params = ("axes", "dtype", "sparse_out")
    accepts_sparse: ClassVar[bool] = True

    def execute(self, *blocks: Any) -> Any:
        (a_axis,), (b_axis,) = self.axes
        out = None
        for a, b in zip(blocks[::2], blocks[1::2]):
            lhs = a.T if a.ndim == 2 and a_axis == 0 else a
            rhs = b.T if b.ndim == 2 and b_axis == 1 else b
            part = lhs @ rhs
            out = part if out is None else out + part
        if self.sparse_out:
            return csr(out, self.dtype)
        return np.asarray(out.toarray() if sp.issparse(out) else out).astype(self.dtype, copy=False)


class _DotTiling:
    """``tensordot`` over one axis of 2-D/1-D inputs, at least one sparse."""

    params = ("axes",)
    accepts_sparse: ClassVar[bool] = True

    @classmethod
    def tile(cls, op: Any) -> Generator[Any, Any, Tiled]:
        (a_axis,), (b_axis,) = op.axes
        yield from known_sizes(op.inputs)
        a, b = op.inputs
        if a.nsplits[a_axis] != b.nsplits[b_axis]:
            common = common_splits([a.nsplits[a_axis], b.nsplits[b_axis]])
            a = yield from rechunked(a, _with(a.nsplits, a_axis, common))
            b = yield from rechunked(b, _with(b.nsplits, b_axis, common))
        out = op.outputs[0]
        block = SparseDotBlock(axes=op.axes, dtype=out.dtype, sparse_out=out.issparse())
        a_free = [d for d in range(a.ndim) if d != a_axis]
        b_free = [d for d in range(b.ndim) if d != b_axis]
        chunks = []
        for a_idx in itertools.product(*(range(a.chunk_shape[d]) for d in a_free)):
            for b_idx in itertools.product(*(range(b.chunk_shape[d]) for d in b_free)):
                blocks = []
                for k in range(a.chunk_shape[a_axis]):
                    blocks += [a.chunk_at(_place(a.ndim, a_free, a_idx, a_axis, k)),
                               b.chunk_at(_place(b.ndim, b_free, b_idx, b_axis, k))]
                shape = tuple(blocks[0].shape[d] for d in a_free) + tuple(blocks[1].shape[d] for d in b_free)
                chunks.append(block.copy().new_chunk(blocks, index=a_idx + b_idx, shape=shape, dtype=out.dtype,
                                                     order="C"))
        nsplits = tuple(a.nsplits[d] for d in a_free) + tuple(b.nsplits[d] for d in b_free)
        return Tiled(chunks, nsplits)


class SparseDot(_DotTiling, SparseOperator):
    """sparse · sparse: a sparse result."""


class SparseDenseDot(_DotTiling, TensorOperator):
    """sparse · dense (either side): a dense result."""


def _with(nsplits: tuple, axis: int, splits: tuple) -> tuple:
    return tuple(splits if d == axis else s for d, s in enumerate(nsplits))


def _place(ndim: int, free: list[int], free_idx: tuple, axis: int, k: int) -> tuple:
    index = [0] * ndim
    for d, i in zip(free, free_idx):
        index[d] = i
    index[axis] = k
    return tuple(index)


def _route_dot(op: TensorTensorDot, inputs: list, shape: tuple, dtype: np.dtype, order: str) -> Tensor:
    a_axes = op.axes[0]
    if len(a_axes) != 1 or any(d.ndim > 2 for d in inputs):
        raise TypeError("a product with a sparse tensor contracts one axis of 1-D or 2-D inputs; "
                        "call .todense() on the sparse input first")
    cls = SparseDot if all(d.issparse() for d in inputs) else SparseDenseDot
    return cls(axes=op.axes).new_tensor(inputs, shape, dtype)


# ----------------------------------------------------------------- registration
SPARSE_ROUTES.update({
    TensorUfunc: _route_ufunc,
    TensorAstype: _route_astype,
    TensorTranspose: _route_transpose,
    TensorSlice: _route_slice,
    TensorRechunk: _route_rechunk,
    TensorTensorDot: _route_dot,
    **{cls: _route_reduction for cls in _KINDS},
})


def _issparse_method(self: Tensor) -> bool:
    """Whether this tensor's chunks are scipy.sparse matrices."""
    return self.data.issparse()


Tensor.issparse = _issparse_method  # type: ignore[attr-defined]
Tensor.tosparse = tosparse  # type: ignore[attr-defined]
Tensor.todense = todense  # type: ignore[attr-defined]
