"""Sparse tensors: 2-D tensors whose chunks are scipy.sparse CSR matrices.

``SparseTensorData`` marks a tensor as sparse; ops that make sparse tensors
derive from ``SparseOperator``. This module holds what makes and unmakes
them (from a scipy matrix, ``tosparse``, ``todense``) and the sparse rechunk;
``routes`` says how the dense operators run on sparse inputs.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from ...core.entity import has_unknown
from ...core.operator import Tiled
from ...core.tokenize import tokenize
from ..chunks import normalize_chunk_sizes
from ..core import (
    Tensor,
    TensorChunkData,
    TensorData,
    TensorOperator,
    is_tensor,
    tensor_data,
)
from ..datasource.core import astensor, grid_tile
from ..rechunk import RechunkPiece, TensorRechunk, rechunk_chunks


class SparseTensorData(TensorData):
    """A 2-D tensor whose chunks are ``scipy.sparse.csr_matrix`` values."""

    __slots__ = ()
    chunk_type = TensorChunkData

    def issparse(self) -> bool:
        return True

    def assemble(self, values: list) -> sp.csr_matrix:
        """The whole matrix from its chunks, as one CSR matrix (scipy's, as Mars gave)."""
        if len(values) == 1:
            return sp.csr_matrix(values[0], dtype=self.dtype, copy=True)
        grid = np.empty(tuple(len(s) for s in self.nsplits), dtype=object)
        for chunk, value in zip(self.chunks, values):
            grid[chunk.index] = value
        return sp.csr_matrix(sp.bmat(grid.tolist(), format="csr", dtype=self.dtype))


class SparseOperator(TensorOperator):
    """Base of ops whose outputs are sparse tensors (and that take sparse inputs)."""

    tileable_type = SparseTensorData
    accepts_sparse: ClassVar[bool] = True


def is_scipy_sparse(x: Any) -> bool:
    return sp.issparse(x)


def issparse(x: Any) -> bool:
    """Whether ``x`` is a sparse tensor (or a scipy.sparse matrix).

    >>> import mars.tensor as mt, scipy.sparse as sp
    >>> mt.issparse(mt.tensor(sp.eye(3))), mt.issparse(mt.ones((3, 3)))
    (True, False)
    """
    if is_tensor(x):
        return tensor_data(x).issparse()
    return sp.issparse(x)


def csr(value: Any, dtype: np.dtype) -> sp.csr_matrix:
    """``value`` as a canonical CSR matrix of ``dtype`` (duplicates summed, explicit zeros dropped)."""
    out = sp.csr_matrix(value, dtype=dtype)
    out.sum_duplicates()
    out.eliminate_zeros()
    return out


def map_chunks(op: TensorOperator, chunk_op: TensorOperator) -> Tiled:
    """One chunk of ``op``'s output per chunk of its one input, made by copies of ``chunk_op``."""
    inp, out = op.inputs[0], op.outputs[0]
    chunks = [chunk_op.copy().new_chunk([c], index=c.index, shape=c.shape, dtype=out.dtype, order=out.order)
              for c in inp.chunks]
    return Tiled(chunks, inp.nsplits)


# ----------------------------------------------------------------- sources
class SparseDataSource(SparseOperator):
    """A scipy.sparse matrix cut into chunks; each chunk op carries its CSR block."""

    params = ("data", "token", "nsplits")
    unkeyed = ("data",)

    @classmethod
    def tile(cls, op: SparseDataSource) -> Tiled:
        def chunk_op(index: tuple, slices: tuple, shape: tuple) -> SparseDataSource:
            block = op.data[slices]
            return SparseDataSource(data=block, token=(op.token, tuple((s.start, s.stop) for s in slices)), nsplits=None)

        return grid_tile(op, chunk_op)

    def execute(self) -> sp.csr_matrix:
        return self.data


def from_scipy(matrix: Any, dtype: Any = None, chunk_size: Any = None) -> Tensor:
    """A sparse tensor from a scipy.sparse matrix or array (any format; kept as CSR)."""
    data = csr(matrix, np.dtype(dtype) if dtype is not None else matrix.dtype)
    if data.ndim != 2:
        raise ValueError(f"a sparse tensor has 2 dimensions, got a {data.ndim}-d scipy sparse array")
    nsplits = normalize_chunk_sizes(data.shape, chunk_size, data.dtype.itemsize)
    token = tokenize(data.data, data.indices, data.indptr, data.shape)
    op = SparseDataSource(data=data, token=token, nsplits=nsplits)
    return op.new_tensor([], data.shape, data.dtype)


class DenseToSparse(SparseOperator):
    """Each dense 2-D chunk as a CSR matrix."""

    @classmethod
    def tile(cls, op: DenseToSparse) -> Tiled:
        return map_chunks(op, op)

    def execute(self, x: np.ndarray) -> sp.csr_matrix:
        return csr(np.asarray(x), x.dtype)


class SparseToDense(TensorOperator):
    """Each CSR chunk as a dense numpy array."""

    accepts_sparse: ClassVar[bool] = True

    @classmethod
    def tile(cls, op: SparseToDense) -> Tiled:
        return map_chunks(op, op)

    def execute(self, x: Any) -> np.ndarray:
        return x.toarray() if sp.issparse(x) else np.asarray(x)


def tosparse(a: Any) -> Tensor:
    """``a`` as a sparse tensor (2-D only; a sparse tensor is returned as it is).

    >>> import mars.tensor as mt
    >>> mt.eye(3, chunk_size=2).tosparse().execute().fetch().nnz
    3
    """
    t = _astensor(a)
    data = tensor_data(t)
    if data.issparse():
        return t
    if data.ndim != 2:
        raise ValueError(f"a sparse tensor has 2 dimensions, got shape {tuple(data.shape)}; reshape it first")
    return DenseToSparse().new_tensor([data], data.shape, data.dtype)


def todense(a: Any) -> Tensor:
    """``a`` as a dense tensor (a dense tensor is returned as it is).

    >>> import mars.tensor as mt, scipy.sparse as sp
    >>> mt.tensor(sp.eye(2), chunk_size=1).todense().execute().fetch()
    array([[1., 0.],
           [0., 1.]])
    """
    t = _astensor(a)
    data = tensor_data(t)
    if not data.issparse():
        return t
    return SparseToDense().new_tensor([data], data.shape, data.dtype)


def _astensor(x: Any) -> Tensor:
    return from_scipy(x) if sp.issparse(x) else astensor(x)


# ----------------------------------------------------------------- rechunk
class SparseRechunkPiece(RechunkPiece):
    """One output chunk of a sparse rechunk: slices of input CSR chunks placed in a new block."""

    def execute(self, *pieces: Any) -> sp.csr_matrix:
        if len(pieces) == 1:
            return sp.csr_matrix(pieces[0][self.slices[0]])
        rows, cols, vals = [], [], []
        for piece, src, dst in zip(pieces, self.slices, self.targets):
            part = sp.coo_matrix(piece[src])
            rows.append(part.row + dst[0].start)
            cols.append(part.col + dst[1].start)
            vals.append(part.data)
        coo = sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                            shape=self.shape, dtype=self.dtype)
        return coo.tocsr()


class SparseRechunk(TensorRechunk):
    tileable_type = SparseTensorData
    accepts_sparse: ClassVar[bool] = True

    @classmethod
    def tile(cls, op: SparseRechunk) -> Generator[Any, Any, Tiled]:
        inp, out = op.inputs[0], op.outputs[0]
        if has_unknown(inp.shape) or any(has_unknown(s) for s in inp.nsplits):
            yield inp.chunks
            inp.refresh_shape()
        nsplits = op.nsplits or normalize_chunk_sizes(inp.shape, op.chunk_size, inp.dtype.itemsize)
        chunks = [_sparse_piece(c) if isinstance(c.op, RechunkPiece) else c
                  for c in rechunk_chunks(inp, nsplits, out.dtype, out.order)]
        return Tiled(chunks, nsplits)


def _sparse_piece(chunk: Any) -> Any:
    """The dense rechunk's piece ``chunk`` made again with the sparse piece op."""
    dense = chunk.op
    op = SparseRechunkPiece(shape=dense.shape, dtype=dense.dtype, slices=dense.slices, targets=dense.targets)
    return op.new_chunk(dense.inputs, index=chunk.index, shape=chunk.shape, dtype=chunk.dtype, order=chunk.order)
