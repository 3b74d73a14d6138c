"""Blocked Cholesky decomposition (right-looking) over a square grid of chunks.

The matrix is cut into square blocks (the same splits along both axes). For
each block column ``k``: the diagonal block is factored
(``L_kk = cholesky(A_kk)``), the blocks below it are solved against it
(``L_ik = A_ik L_kk^-H``), and the trailing blocks are updated
(``A_ij -= L_ik L_jk^H`` for ``i >= j > k``). Only the lower triangle of
blocks is read, as numpy reads only the lower triangle; the upper factor is
that of ``A^H``, transposed, as numpy reads the upper triangle for it.
"""

from __future__ import annotations

from typing import Any, Generator

import numpy as np

from ...core.operator import Tiled
from ..base.reshape import known_sizes, rechunked
from ..chunks import common_splits
from ..core import Tensor, TensorData, TensorOperator, tensor_data
from .qr import ZerosBlock
from .whole import scipy_linalg, TensorWholeMatrix, as_stacked_matrix, conj_transpose, probe, whole_chunk_outputs, whole_matrix

__all__ = ["cholesky"]


class CholeskyDiag(TensorOperator):
    """``L_kk``: the Cholesky factor of a diagonal block (numpy's LinAlgError if not positive definite)."""

    blas = True

    def execute(self, a: np.ndarray) -> np.ndarray:
        return np.linalg.cholesky(a)


class CholeskyPanel(TensorOperator):
    """``L_ik = A_ik L_kk^-H``: a block below the diagonal."""

    blas = True

    def execute(self, l_kk: np.ndarray, a_ik: np.ndarray) -> np.ndarray:
        return scipy_linalg().solve_triangular(l_kk, a_ik.conj().T, lower=True, check_finite=False).conj().T


class CholeskyUpdate(TensorOperator):
    """``A_ij - L_ik L_jk^H``: a trailing block after one block column is done."""

    params = ("dtype",)
    blas = True

    def execute(self, a_ij: np.ndarray, l_ik: np.ndarray, l_jk: np.ndarray) -> np.ndarray:
        return np.subtract(a_ij, l_ik @ l_jk.conj().T, dtype=self.dtype)


def square_grid(a: TensorData) -> Generator[Any, Any, TensorData]:
    """``a`` (square) cut along both axes at the union of its row and column cuts."""
    yield from known_sizes([a])
    splits = common_splits([a.nsplits[0], a.nsplits[1]])
    return (yield from rechunked(a, (splits, splits)))


class TensorCholesky(TensorOperator):
    """The lower Cholesky factor of a 2-D tensor, by blocks."""

    @classmethod
    def tile(cls, op: TensorCholesky) -> Generator[Any, Any, Tiled]:
        a = yield from square_grid(op.inputs[0])
        dtype = op.outputs[0].dtype
        splits = a.nsplits[0]
        p = len(splits)
        if p == 1:
            chunk_op = TensorWholeMatrix(func=np.linalg.cholesky, kwargs={}, core_in=2, core_out=(2,),
                                         shapes=(a.shape,), dtypes=(dtype,))
            return whole_chunk_outputs(chunk_op, a.chunks)[0]
        cur = {(i, j): a.chunk_at((i, j)) for i in range(p) for j in range(i + 1)}
        done: dict[tuple, Any] = {}
        for k in range(p):
            meta = dict(dtype=dtype, order="C")
            done[k, k] = CholeskyDiag().new_chunk([cur[k, k]], index=(k, k), shape=(splits[k],) * 2, **meta)
            for i in range(k + 1, p):
                done[i, k] = CholeskyPanel().new_chunk([done[k, k], cur[i, k]], index=(i, k),
                                                       shape=(splits[i], splits[k]), **meta)
            for j in range(k + 1, p):
                for i in range(j, p):
                    cur[i, j] = CholeskyUpdate(dtype=dtype).new_chunk(
                        [cur[i, j], done[i, k], done[j, k]], index=(i, j), shape=(splits[i], splits[j]), **meta)
        chunks = []
        for i in range(p):
            for j in range(p):
                if j > i:
                    shape = (splits[i], splits[j])
                    done[i, j] = ZerosBlock(shape=shape, dtype=dtype).new_chunk([], index=(i, j), shape=shape,
                                                                                 dtype=dtype, order="C")
                chunks.append(done[i, j])
        return Tiled(chunks, a.nsplits)


def cholesky(a: Any, /, *, upper: bool = False) -> Tensor:
    """Cholesky factor of a Hermitian positive-definite matrix, as ``np.linalg.cholesky``.

    A 2-D tensor is factored by blocks over a square grid of chunks (the
    right-looking algorithm: see the module's notes); one chunk, or a stack
    of matrices, runs ``np.linalg.cholesky`` on whole matrices. A matrix that
    is not positive definite raises numpy's ``LinAlgError`` when it runs.

    >>> import mars.tensor as mt
    >>> a = mt.tensor([[4., 2., 0.], [2., 5., 2.], [0., 2., 5.]], chunk_size=2)
    >>> mt.linalg.cholesky(a).execute().fetch()
    array([[2., 0., 0.],
           [1., 2., 0.],
           [0., 1., 2.]])
    """
    t = as_stacked_matrix(a, square=True)
    (dtype,) = probe(np.linalg.cholesky, [t.dtype])
    if t.ndim > 2:
        return whole_matrix(np.linalg.cholesky, [t], [(t.shape, dtype)], upper=upper)[0]
    if upper:  # numpy reads the upper triangle for the upper factor: that of A^H, transposed
        return conj_transpose(cholesky(conj_transpose(t)))
    if t.dtype != dtype:
        t = t.astype(dtype)
    return TensorCholesky().new_tensor([tensor_data(t)], t.shape, dtype)
