"""Functions of whole matrices: eigenvalues, determinants, pseudo-inverse, rank, powers, products.

``eig``, ``eigh``, ``det``, ``slogdet``, ``pinv`` and ``cond`` run numpy on
each matrix gathered into one chunk (a stack's batch axes keep their
chunks, so stacks run in parallel): they need the whole matrix at once.
``matrix_rank`` of a 2-D tensor counts the singular values of a TSQR SVD;
``matrix_power`` and ``multi_dot`` are chunked matrix products.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

from ..arithmetic import ufuncs as uf
from ..base.shape import expand_dims, squeeze
from ..core import Tensor
from ..datasource.core import astensor, zeros_like
from ..datasource.creation import eye
from ..reduction import basic
from .products import dot, matmul
from .solve import inv
from .svd import svd
from .whole import EigResult, EighResult, SlogdetResult, as_stacked_matrix, probe, whole_matrix

__all__ = ["eig", "eigvals", "eigh", "eigvalsh", "det", "slogdet", "pinv", "matrix_rank", "matrix_power",
           "cond", "multi_dot"]


def _complex_of(dtype: np.dtype) -> np.dtype:
    return np.result_type(dtype, np.complex64)


def eig(a: Any) -> EigResult:
    """Eigenvalues and right eigenvectors of square matrices, as ``np.linalg.eig`` (whole matrices per chunk).

    The results are always complex: numpy drops an all-zero imaginary part,
    which is known only after running (use ``eigh`` for Hermitian matrices).

    >>> import mars.tensor as mt
    >>> mt.linalg.eig(mt.tensor([[2., 0.], [0., 3.]])).eigenvalues.execute().fetch()
    array([2.+0.j, 3.+0.j])
    """
    t = as_stacked_matrix(a, square=True)
    dtype = _complex_of(probe(np.linalg.eigvals, [t.dtype])[0])
    return EigResult(*whole_matrix(np.linalg.eig, [t], [(t.shape[:-1], dtype), (t.shape, dtype)]))


def eigvals(a: Any) -> Tensor:
    """Eigenvalues of square matrices, as ``np.linalg.eigvals``; always complex (see :func:`eig`).

    >>> import mars.tensor as mt
    >>> mt.linalg.eigvals(mt.tensor([[0., -1.], [1., 0.]])).execute().fetch()
    array([0.+1.j, 0.-1.j])
    """
    t = as_stacked_matrix(a, square=True)
    dtype = _complex_of(probe(np.linalg.eigvals, [t.dtype])[0])
    return whole_matrix(np.linalg.eigvals, [t], [(t.shape[:-1], dtype)])[0]


def _check_uplo(uplo: str) -> None:
    if uplo not in ("L", "U"):
        raise ValueError(f"UPLO argument must be 'L' or 'U', got {uplo!r}")


def eigh(a: Any, UPLO: str = "L") -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of Hermitian matrices, as ``np.linalg.eigh``.

    Whole matrices per chunk; only the ``UPLO`` triangle is read.

    >>> import mars.tensor as mt
    >>> mt.linalg.eigh(mt.tensor([[2., 1.], [1., 2.]])).eigenvalues.execute().fetch()
    array([1., 3.])
    """
    _check_uplo(UPLO)
    t = as_stacked_matrix(a, square=True)
    w, v = probe(np.linalg.eigh, [t.dtype])
    return EighResult(*whole_matrix(np.linalg.eigh, [t], [(t.shape[:-1], w), (t.shape, v)], UPLO=UPLO))


def eigvalsh(a: Any, UPLO: str = "L") -> Tensor:
    """Eigenvalues (ascending) of Hermitian matrices, as ``np.linalg.eigvalsh`` (whole matrices per chunk).

    >>> import mars.tensor as mt
    >>> mt.linalg.eigvalsh(mt.tensor([[2., 1.], [1., 2.]])).execute().fetch()
    array([1., 3.])
    """
    _check_uplo(UPLO)
    t = as_stacked_matrix(a, square=True)
    (w,) = probe(np.linalg.eigvalsh, [t.dtype])
    return whole_matrix(np.linalg.eigvalsh, [t], [(t.shape[:-1], w)], UPLO=UPLO)[0]


def det(a: Any) -> Tensor:
    """Determinants, as ``np.linalg.det`` (whole matrices per chunk).

    >>> import mars.tensor as mt
    >>> float(mt.linalg.det(mt.tensor([[1., 2.], [3., 4.]])).execute().fetch().round(6))
    -2.0
    """
    t = as_stacked_matrix(a, square=True)
    (dtype,) = probe(np.linalg.det, [t.dtype])
    return whole_matrix(np.linalg.det, [t], [(t.shape[:-2], dtype)])[0]


def slogdet(a: Any) -> SlogdetResult:
    """Sign and natural log of the absolute determinant, as ``np.linalg.slogdet`` (a named tuple).

    >>> import mars.tensor as mt
    >>> res = mt.linalg.slogdet(mt.tensor([[2., 0.], [0., -3.]]))
    >>> float(res.sign.execute().fetch()), float(res.logabsdet.execute().fetch().round(6))
    (-1.0, 1.791759)
    """
    t = as_stacked_matrix(a, square=True)
    sign, logdet = probe(np.linalg.slogdet, [t.dtype])
    return SlogdetResult(*whole_matrix(np.linalg.slogdet, [t], [(t.shape[:-2], sign), (t.shape[:-2], logdet)]))


def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Tensor:
    """Moore-Penrose pseudo-inverse, as ``np.linalg.pinv`` (whole matrices per chunk).

    ``rcond`` and ``rtol`` (scalars) mean what they mean to numpy.

    >>> import mars.tensor as mt
    >>> mt.linalg.pinv(mt.tensor([[2., 0.], [0., 0.]])).execute().fetch()
    array([[0.5, 0. ],
           [0. , 0. ]])
    """
    t = as_stacked_matrix(a)
    kwargs: dict[str, Any] = {"hermitian": hermitian}
    if rcond is not None:
        kwargs["rcond"] = rcond
    if rtol is not None:
        kwargs["rtol"] = rtol
    if any(np.ndim(v) for v in (rcond, rtol)):
        raise NotImplementedError("pinv takes scalar rcond/rtol only; pass one value for every matrix")
    (dtype,) = probe(np.linalg.pinv, [t.dtype], **kwargs)
    shape = tuple(t.shape[:-2]) + (t.shape[-1], t.shape[-2])
    return whole_matrix(np.linalg.pinv, [t], [(shape, dtype)], **kwargs)[0]


def matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Tensor:
    """The number of singular values above a tolerance, as ``np.linalg.matrix_rank``.

    A 2-D tensor counts the singular values of its SVD (TSQR when chunked);
    stacks and ``hermitian=True`` run numpy on whole matrices. ``tol`` and
    ``rtol`` are scalars here.

    >>> import mars.tensor as mt
    >>> int(mt.linalg.matrix_rank(mt.ones((6, 3), chunk_size=2)).execute().fetch())
    1
    """
    t = astensor(A)
    if any(np.ndim(v) for v in (tol, rtol)):
        raise NotImplementedError("matrix_rank takes a scalar tol/rtol only; pass one value for every matrix")
    if t.ndim < 2:
        return basic.any(uf.not_equal(t, 0)).astype(np.int64)
    if t.ndim > 2 or hermitian:
        kwargs = dict(tol=tol, hermitian=hermitian, rtol=rtol)
        return whole_matrix(np.linalg.matrix_rank, [t], [(t.shape[:-2], np.int64)], **kwargs)[0]
    s = svd(t, compute_uv=False)
    if tol is None:
        if rtol is None:
            rtol = max(t.shape) * np.finfo(s.dtype).eps
        tol = basic.max(s) * rtol
    return basic.sum(uf.greater(s, tol)).astype(np.int64)


def matrix_power(a: Any, n: int) -> Tensor:
    """``a`` multiplied by itself ``n`` times (the inverse's power for negative ``n``), as
    ``np.linalg.matrix_power``: chunked matrix products, by repeated squaring.

    >>> import mars.tensor as mt
    >>> mt.linalg.matrix_power(mt.tensor([[1, 1], [0, 1]], chunk_size=1), 3).execute().fetch()
    array([[1, 3],
           [0, 1]])
    """
    t = as_stacked_matrix(a, square=True)
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"exponent must be an integer, got {n!r}") from None
    if n == 0:
        return zeros_like(t) + eye(t.shape[-1], dtype=t.dtype)
    if n < 0:
        t, n = inv(t), -n
    result, power = None, t
    while n:
        if n & 1:
            result = power if result is None else matmul(result, power)
        n >>= 1
        if n:
            power = matmul(power, power)
    return result


def cond(x: Any, p: Any = None) -> Tensor:
    """Condition numbers, as ``np.linalg.cond`` (whole matrices per chunk).

    >>> import mars.tensor as mt
    >>> float(mt.linalg.cond(mt.tensor([[2., 0.], [0., 1.]])).execute().fetch())
    2.0
    """
    t = as_stacked_matrix(x, square=p not in (None, 2, -2))
    (dtype,) = probe(np.linalg.cond, [t.dtype], p=p)
    return whole_matrix(np.linalg.cond, [t], [(t.shape[:-2], dtype)], p=p)[0]


# ----------------------------------------------------------------- multi_dot
def _chain_order(dims: Sequence[int]) -> list[list[int]]:
    """``split[i][j]``: where the cheapest product of matrices i..j splits (matrix i is dims[i] x dims[i+1])."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(mats: Sequence[Tensor], split: list[list[int]], i: int, j: int) -> Tensor:
    if i == j:
        return mats[i]
    k = split[i][j]
    return dot(_chain(mats, split, i, k), _chain(mats, split, k + 1, j))


def multi_dot(arrays: Sequence[Any], *, out: Any = None) -> Tensor:
    """The product of several matrices in the cheapest order, as ``np.linalg.multi_dot``
    (the first may be a row vector, the last a column vector, both 1-D).

    >>> import mars.tensor as mt
    >>> mt.linalg.multi_dot([mt.ones(3), mt.ones((3, 4)), mt.ones(4)]).execute().fetch()
    np.float64(12.0)
    """
    if out is not None:
        raise NotImplementedError("multi_dot(out=...) is not supported; assign the result instead")
    mats = [astensor(x) for x in arrays]
    if len(mats) < 2:
        raise ValueError(f"Expecting at least two arrays, got {len(mats)}")
    first_1d, last_1d = mats[0].ndim == 1, mats[-1].ndim == 1
    if first_1d:
        mats[0] = expand_dims(mats[0], 0)
    if last_1d:
        mats[-1] = expand_dims(mats[-1], 1)
    for i, m in enumerate(mats):
        if m.ndim != 2:
            raise ValueError(f"multi_dot: array {i} has {m.ndim} dimensions; only the first and last may be "
                             "1-D, the others must be 2-D")
    dims = [mats[0].shape[0]] + [m.shape[1] for m in mats]
    result = _chain(mats, _chain_order(dims), 0, len(mats) - 1)
    axes = tuple(ax for ax, flat in ((0, first_1d), (1, last_1d)) if flat)
    return squeeze(result, axis=axes) if axes else result
