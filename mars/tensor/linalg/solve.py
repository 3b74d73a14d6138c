"""Solving linear systems: ``solve_triangular`` by blocks, ``lstsq`` by TSQR, ``solve``/``inv`` whole.

``solve_triangular`` cuts ``a`` into a square grid and ``b`` into the same
row blocks: block ``i`` of the solution is the diagonal block's solve of
``b_i - Σ_j a_ij x_j`` over the blocks already solved (forward for a lower
triangle, backward for an upper one), column block by column block of ``b``.
``lstsq`` is the SVD's solution (numpy's gelsd is too), with the SVD of a
tall ``a`` by TSQR. ``solve``, ``inv`` and the tensor versions gather each
matrix into one chunk (numpy's LU with pivoting looks down whole columns);
for symmetric positive-definite systems, ``cholesky`` and two
``solve_triangular`` calls scale instead.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Generator

import numpy as np

from ...core.operator import Tiled
from ..arithmetic import ufuncs as uf
from ..arithmetic.core import where_
from ..base.reshape import known_sizes, rechunked
from ..base.shape import expand_dims, ravel, reshape
from ..base.transpose import transpose
from ..chunks import broadcast_shape, common_splits, offsets
from ..core import Tensor, TensorOperator, tensor_data
from ..datasource.core import astensor, empty
from ..reduction import basic
from .products import matmul
from .svd import svd
from .whole import scipy_linalg, LinAlgError, as_matrix, as_stacked_matrix, conj_transpose, known_shape, probe, whole_matrix

__all__ = ["solve", "solve_triangular", "inv", "lstsq", "tensorinv", "tensorsolve"]


class TriangularSolveBlock(TensorOperator):
    """``x_i``: the diagonal block ``a_ii`` solved against ``b_i - Σ a_ij x_j``; inputs a_ii, b_i, a_ij, x_j, ..."""

    params = ("lower", "unit_diagonal", "offset", "dtype")
    blas = True

    def execute(self, a_ii: np.ndarray, b_i: np.ndarray, *pairs: np.ndarray) -> np.ndarray:
        rhs = np.array(b_i, dtype=self.dtype)
        for a_ij, x_j in zip(pairs[::2], pairs[1::2]):
            rhs -= a_ij @ x_j
        try:
            return scipy_linalg().solve_triangular(a_ii, rhs, lower=self.lower, unit_diagonal=self.unit_diagonal,
                                                 check_finite=False)
        except LinAlgError:  # scipy names the diagonal within the block: name it within the matrix
            at = self.offset + int(np.flatnonzero(np.diagonal(a_ii) == 0)[0])
            raise LinAlgError(f"singular matrix: resolution failed at diagonal {at}") from None


class TensorTriangularSolve(TensorOperator):
    params = ("lower", "unit_diagonal")

    @classmethod
    def tile(cls, op: TensorTriangularSolve) -> Generator[Any, Any, Tiled]:
        a, b = op.inputs
        yield from known_sizes([a, b])
        splits = common_splits([a.nsplits[0], a.nsplits[1], b.nsplits[0]])
        a = yield from rechunked(a, (splits, splits))
        b = yield from rechunked(b, (splits,) + tuple(b.nsplits[1:]))
        dtype, starts = op.outputs[0].dtype, offsets(splits)
        order = range(len(splits)) if op.lower else range(len(splits) - 1, -1, -1)
        chunks = []
        for col in range(len(b.nsplits[1]) if b.ndim == 2 else 1):
            solved: dict[int, Any] = {}
            for i in order:
                inputs = [a.chunk_at((i, i)), b.chunk_at((i, col)[:b.ndim])]
                for j, x_j in solved.items():
                    inputs += [a.chunk_at((i, j)), x_j]
                block = TriangularSolveBlock(lower=op.lower, unit_diagonal=op.unit_diagonal, offset=starts[i],
                                             dtype=dtype)
                b_i = inputs[1]
                solved[i] = block.new_chunk(inputs, index=b_i.index, shape=b_i.shape, dtype=dtype, order="C")
            chunks += [solved[i] for i in range(len(splits))]
        chunks.sort(key=lambda c: c.index)
        return Tiled(chunks, b.nsplits)


_TRANS = {0: "N", "N": "N", 1: "T", "T": "T", 2: "C", "C": "C"}


def solve_triangular(a: Any, b: Any, trans: Any = 0, lower: bool = False, unit_diagonal: bool = False,
                     overwrite_b: bool = False, check_finite: bool = True) -> Tensor:
    """Solve ``a x = b`` for triangular ``a``, as ``scipy.linalg.solve_triangular``.

    Blocked over a square grid of ``a``'s chunks (see the module's notes);
    ``trans`` 1/'T' solves ``a^T x = b`` and 2/'C' ``a^H x = b``. A singular
    ``a`` raises ``LinAlgError`` when it runs. ``overwrite_b`` and
    ``check_finite`` are accepted and ignored.

    >>> import mars.tensor as mt
    >>> a = mt.tensor([[2., 0.], [1., 1.]], chunk_size=1)
    >>> mt.linalg.solve_triangular(a, mt.tensor([4., 3.]), lower=True).execute().fetch()
    array([2., 1.])
    """
    if trans not in _TRANS:
        raise ValueError(f"trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    ta, tb = as_matrix(a, square=True), astensor(b)
    if tb.ndim not in (1, 2) or ta.shape[0] != tb.shape[0]:
        raise ValueError(f"shapes of a {tuple(ta.shape)} and b {tuple(tb.shape)} are incompatible")
    mode = _TRANS[trans]
    if mode != "N":
        ta = conj_transpose(ta) if mode == "C" else transpose(ta)
        lower = not lower
    (dtype,) = probe(scipy_linalg().solve_triangular, [ta.dtype, tb.dtype])
    op = TensorTriangularSolve(lower=bool(lower), unit_diagonal=bool(unit_diagonal))
    return op.new_tensor([tensor_data(ta), tensor_data(tb)], tb.shape, dtype)


def _solve_shape(a: Tensor, b: Tensor) -> tuple:
    if b.ndim == 1:
        if a.shape[-1] != b.shape[0]:
            raise ValueError(f"solve: a {tuple(a.shape)} and b {tuple(b.shape)} do not match: "
                             f"a has {a.shape[-1]} columns, b has {b.shape[0]} rows")
        return tuple(a.shape[:-1])
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"solve: a {tuple(a.shape)} and b {tuple(b.shape)} do not match: "
                         f"a has {a.shape[-1]} columns, b has {b.shape[-2]} rows")
    return broadcast_shape(tuple(a.shape[:-2]), tuple(b.shape[:-2])) + tuple(b.shape[-2:])


def solve(a: Any, b: Any) -> Tensor:
    """Solve ``a x = b``, as ``np.linalg.solve`` (numpy 2: a 1-D ``b`` is one vector, else stacks of matrices).

    Runs ``np.linalg.solve`` with each input gathered into one chunk. A
    singular ``a`` raises numpy's ``LinAlgError`` when it runs.

    >>> import mars.tensor as mt
    >>> mt.linalg.solve(mt.tensor([[2., 0.], [0., 4.]]), mt.tensor([2., 2.])).execute().fetch()
    array([1. , 0.5])
    """
    ta, tb = as_stacked_matrix(a, square=True), astensor(b)
    shape = _solve_shape(ta, tb)
    dtype = probe(np.linalg.solve, [ta.dtype, tb.dtype])[0]
    return whole_matrix(np.linalg.solve, [ta, tb], [(shape, dtype)])[0]


def inv(a: Any) -> Tensor:
    """The inverse of each matrix, as ``np.linalg.inv`` (whole matrices per chunk; batch axes keep
    their chunks). A singular matrix raises numpy's ``LinAlgError`` when it runs.

    >>> import mars.tensor as mt
    >>> mt.linalg.inv(mt.tensor([[2., 0.], [0., 4.]])).execute().fetch()
    array([[0.5 , 0.  ],
           [0.  , 0.25]])
    """
    t = as_stacked_matrix(a, square=True)
    (dtype,) = probe(np.linalg.inv, [t.dtype])
    return whole_matrix(np.linalg.inv, [t], [(t.shape, dtype)])[0]


def _residuals_if_full_rank(resid: np.ndarray, rank: np.ndarray, n: int) -> np.ndarray:
    return resid if int(rank) == n else resid[:0]


def lstsq(a: Any, b: Any, rcond: Any = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Least-squares solution of ``a x = b``, as ``np.linalg.lstsq``: ``(x, residuals, rank, s)``.

    Built on the SVD of ``a`` (by TSQR for a tall chunked ``a``): ``x`` is
    the minimum-norm solution, singular values below ``rcond * s.max()``
    (default ``eps * max(M, N)``) taken as zero. ``residuals`` is empty
    unless ``a`` has full column rank and more rows than columns, so its
    length is known only after running.

    >>> import mars.tensor as mt
    >>> a = mt.tensor([[1., 0.], [0., 1.], [1., 1.]], chunk_size=2)
    >>> x, res, rank, s = mt.linalg.lstsq(a, mt.tensor([1., 1., 2.]))
    >>> x.execute().fetch().round(6), int(rank.execute().fetch())
    (array([1., 1.]), 2)
    """
    ta, tb = as_matrix(a), astensor(b)
    if tb.ndim not in (1, 2):
        raise LinAlgError(f"{tb.ndim}-dimensional array given. Array must be one or two-dimensional")
    if ta.shape[0] != tb.shape[0]:
        raise LinAlgError(f"Incompatible dimensions: a has {ta.shape[0]} rows, b has {tb.shape[0]}")
    m, n = known_shape(ta, "lstsq")
    x_dtype, r_dtype, _, s_dtype = probe(np.linalg.lstsq, [ta.dtype, tb.dtype])
    u, s, vh = svd(ta)
    if rcond is None:
        rcond = np.finfo(s_dtype).eps * max(m, n)
    kept = uf.greater(s, basic.max(s) * rcond) if min(m, n) else uf.greater(s, 0)
    rank = basic.sum(kept).astype(np.int32)
    s_inv = where_(kept, uf.divide(1, where_(kept, s, 1)), 0).astype(s_dtype)
    ub = matmul(conj_transpose(u), tb)
    x = matmul(conj_transpose(vh), ub * (s_inv if tb.ndim == 1 else expand_dims(s_inv, 1))).astype(x_dtype)
    if m > n:
        r = tb - matmul(ta, x)
        sq = basic.sum(uf.square(uf.absolute(r)), axis=0).astype(r_dtype)
        sq = reshape(sq, (1,)) if tb.ndim == 1 else sq
        (resid,) = whole_matrix(_residuals_if_full_rank, [sq, rank], [((math.nan,), r_dtype)], n=n)
    else:
        resid = empty((0,), dtype=r_dtype)
    return x, resid, rank, s.astype(s_dtype)


def tensorinv(a: Any, ind: int = 2) -> Tensor:
    """The inverse of ``a`` seen as a matrix of its first ``ind`` axes by the rest, as ``np.linalg.tensorinv``.

    >>> import mars.tensor as mt
    >>> mt.linalg.tensorinv(mt.eye(4).reshape(4, 2, 2), ind=1).shape
    (2, 2, 4)
    """
    t = astensor(a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"Invalid ind argument: it must be positive, got {ind}")
    shape = known_shape(t, "tensorinv")
    rows = math.prod(shape[ind:])
    matrix = reshape(t, (rows, -1))
    return reshape(inv(matrix), shape[ind:] + shape[:ind])


def tensorsolve(a: Any, b: Any, axes: Any = None) -> Tensor:
    """Solve ``tensordot(a, x, axes=x.ndim) = b`` for ``x``, as ``np.linalg.tensorsolve``.

    >>> import mars.tensor as mt
    >>> mt.linalg.tensorsolve(mt.eye(6).reshape(2, 3, 6), mt.ones((2, 3))).shape
    (6,)
    """
    ta, tb = astensor(a), astensor(b)
    if axes is not None:
        rest = [d for d in range(ta.ndim) if d not in [ax % ta.ndim for ax in axes]]
        ta = transpose(ta, rest + [ax % ta.ndim for ax in axes])
    shape = known_shape(ta, "tensorsolve")
    x_shape = shape[tb.ndim:]
    size = math.prod(x_shape)
    if math.prod(shape) != size * size:
        raise LinAlgError(f"Input arrays must satisfy the requirement prod(a.shape[b.ndim:]) == "
                          f"prod(a.shape[:b.ndim]); got a of shape {shape} and b of {tb.ndim} dimensions")
    x = solve(reshape(ta, (size, size)), ravel(tb))
    return reshape(x, x_shape)
