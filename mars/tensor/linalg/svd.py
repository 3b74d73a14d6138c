"""Singular value decomposition of tall-and-skinny (or short-and-fat) matrices by TSQR.

The row chunks are factored as in ``qr.py`` (``A_i = H_i [R_i; 0]``); the
second stage takes the SVD of the stacked ``R_i`` (``U_r S V^H``: the same
singular values and right vectors as ``A``), and ``U``'s blocks are
``H_i [U_r_i; 0]``. A matrix wider than tall is done as the SVD of its
conjugate transpose. A matrix in one chunk, and stacks of matrices, run
``np.linalg.svd`` on whole matrices.
"""

from __future__ import annotations

import math
from typing import Any, Generator

import numpy as np

from ...core.operator import Tiled
from ..core import Tensor, TensorData, TensorOperator, tensor_data
from .qr import local_stage, q_chunks, row_blocks, tall_chunks
from .whole import (SVDResult, TensorWholeMatrix, as_stacked_matrix, conj_transpose, probe, whole_chunk_outputs,
                    whole_matrix)

__all__ = ["svd", "svdvals"]


class TSQRStackSVD(TensorOperator):
    """The second stage: SVD of the stacked ``R_i``; outputs S (then Vh and ``U_r``'s row blocks)."""

    params = ("full_matrices", "compute_uv", "splits")
    blas = True

    def execute(self, *rs: np.ndarray) -> Any:
        stacked = np.concatenate(rs)
        if not self.compute_uv:
            return np.linalg.svd(stacked, compute_uv=False)
        u, s, vh = np.linalg.svd(stacked, full_matrices=self.full_matrices)
        return (s, vh, *row_blocks(u, self.splits))


class TensorTSQRSVD(TensorOperator):
    """``np.linalg.svd`` of a 2-D tensor by TSQR; outputs U, S, Vh (S alone without ``compute_uv``)."""

    params = ("full_matrices", "compute_uv", "dtypes")

    @classmethod
    def tile(cls, op: TensorTSQRSVD) -> Generator[Any, Any, list[Tiled]]:
        a = yield from tall_chunks(op.inputs[0])
        if len(a.chunks) == 1:
            return _one_chunk_svd(op, a)
        dtype = op.dtypes[0]
        m, n = a.shape
        locals_, ks = local_stage(a, dtype)
        big_k = sum(ks)
        width = big_k if op.full_matrices else min(big_k, n)
        s_meta = dict(index=(0,), shape=(min(m, n),), dtype=op.dtypes[1 if op.compute_uv else 0], order="C")
        kws = [s_meta]
        if op.compute_uv:
            kws.append(dict(index=(0, 0), shape=(n if op.full_matrices else min(big_k, n), n), dtype=dtype, order="C"))
            kws += [dict(index=(i, 0), shape=(k, width), dtype=dtype, order="C") for i, k in enumerate(ks)]
        stage = TSQRStackSVD(full_matrices=op.full_matrices, compute_uv=op.compute_uv,
                             splits=tuple(ks)).new_chunks([r for _, _, r in locals_], kws)
        s_tiled = Tiled([stage[0]], ((min(m, n),),))
        if not op.compute_uv:
            return [s_tiled]
        u, u_nsplits = q_chunks(locals_, stage[2:], dtype, op.full_matrices)
        return [Tiled(u, u_nsplits), s_tiled, Tiled([stage[1]], tuple((d,) for d in stage[1].shape))]


def _one_chunk_svd(op: TensorTSQRSVD, a: TensorData) -> list[Tiled]:
    shapes = tuple(_svd_shapes(*a.shape, op.full_matrices, op.compute_uv))
    chunk_op = TensorWholeMatrix(func=np.linalg.svd, kwargs=dict(full_matrices=op.full_matrices,
                                                                 compute_uv=op.compute_uv),
                                 core_in=2, core_out=tuple(len(s) for s in shapes), shapes=shapes, dtypes=op.dtypes)
    return whole_chunk_outputs(chunk_op, a.chunks)


def _svd_shapes(m: Any, n: Any, full_matrices: bool, compute_uv: bool) -> list[tuple]:
    k = min(m, n) if not (math.isnan(m) or math.isnan(n)) else math.nan
    if not compute_uv:
        return [(k,)]
    if full_matrices:
        return [(m, m), (k,), (n, n)]
    return [(m, k), (k,), (k, n)]


def svd(a: Any, full_matrices: bool = False, compute_uv: bool = True, hermitian: bool = False) -> SVDResult | Tensor:
    """Singular value decomposition, as ``np.linalg.svd``: ``(U, S, Vh)`` as a named tuple, or ``S``.

    ``full_matrices`` defaults to False here (numpy's default is True): the
    full U of a tall matrix is ``m x m``, which a matrix worth chunking
    rarely affords. Pass ``full_matrices=True`` for numpy's shapes.

    A 2-D tensor in several chunks is decomposed by TSQR (see the module's
    notes): S equals numpy's, U and Vh equal it up to the signs (phases) of
    matching columns and rows. One chunk, stacks of matrices and
    ``hermitian=True`` run ``np.linalg.svd`` on whole matrices.

    >>> import numpy as np, mars.tensor as mt
    >>> a = mt.tensor(np.diag([3., 1.]).repeat(3, axis=0), chunk_size=(2, 2))
    >>> mt.linalg.svd(a, compute_uv=False).execute().fetch().round(6)
    array([5.196152, 1.732051])
    """
    t = as_stacked_matrix(a)
    dtypes = probe(np.linalg.svd, [t.dtype], compute_uv=compute_uv)
    if t.ndim > 2 or hermitian:
        shapes = [tuple(t.shape[:-2]) + s for s in _svd_shapes(*t.shape[-2:], full_matrices, compute_uv)]
        outs = whole_matrix(np.linalg.svd, [t], list(zip(shapes, dtypes)), full_matrices=full_matrices,
                            compute_uv=compute_uv, hermitian=hermitian)
        return SVDResult(*outs) if compute_uv else outs[0]
    m, n = t.shape
    if m < n:  # the SVD of the conjugate transpose, which is tall
        result = svd(conj_transpose(t), full_matrices, compute_uv)
        if not compute_uv:
            return result
        u, s, vh = result
        return SVDResult(conj_transpose(vh), s, conj_transpose(u))
    kws = [dict(shape=s, dtype=dt) for s, dt in zip(_svd_shapes(m, n, full_matrices, compute_uv), dtypes)]
    op = TensorTSQRSVD(full_matrices=full_matrices, compute_uv=compute_uv, dtypes=tuple(dtypes))
    outs = op.new_tensors([tensor_data(t)], kws)
    return SVDResult(*outs) if compute_uv else outs[0]


def svdvals(x: Any, /) -> Tensor:
    """The singular values, largest first, as ``np.linalg.svdvals`` (by TSQR for a chunked 2-D tensor).

    >>> import mars.tensor as mt
    >>> mt.linalg.svdvals(mt.eye(3, chunk_size=2) * 2).execute().fetch()
    array([2., 2., 2.])
    """
    return svd(x, compute_uv=False)
