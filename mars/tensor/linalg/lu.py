"""LU decomposition with partial pivoting, as ``scipy.linalg.lu``.

Single-chunk: each matrix is gathered into one chunk and factored by scipy
(LAPACK's getrf); the batch axes of a stack keep their chunks. Pivoting
looks down whole columns, so a blocked version would gather each column
panel anyway; for symmetric positive-definite matrices the blocked
``cholesky`` scales instead.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core import Tensor
from .whole import scipy_linalg, as_stacked_matrix, whole_matrix

__all__ = ["lu"]


def _lu_shapes(m: Any, n: Any, permute_l: bool, p_indices: bool) -> list[tuple]:
    k = min(m, n) if not (math.isnan(m) or math.isnan(n)) else math.nan
    if permute_l:
        return [(m, k), (k, n)]
    return [(m,) if p_indices else (m, m), (m, k), (k, n)]


def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True,
       p_indices: bool = False) -> tuple[Tensor, ...]:
    """``a = p @ l @ u`` with partial pivoting, as ``scipy.linalg.lu``: ``(p, l, u)``, or ``(p @ l, u)``
    with ``permute_l``; ``p_indices`` gives the permutation as row indices.

    Runs on one chunk per matrix (see the module's notes); stacks of matrices
    (``(..., M, N)``) are factored matrix by matrix, as scipy does.
    ``overwrite_a`` is accepted and ignored (tensors are never written over).

    >>> import mars.tensor as mt
    >>> p, l, u = mt.linalg.lu(mt.tensor([[1., 2.], [3., 4.]]))
    >>> (p @ l @ u).execute().fetch()
    array([[1., 2.],
           [3., 4.]])
    """
    t = as_stacked_matrix(a)
    kwargs = dict(permute_l=permute_l, check_finite=check_finite, p_indices=p_indices)
    sample = scipy_linalg().lu(np.eye(2, dtype=t.dtype), **kwargs)
    shapes = [tuple(t.shape[:-2]) + s for s in _lu_shapes(*t.shape[-2:], permute_l, p_indices)]
    outs = [(s, r.dtype) for s, r in zip(shapes, sample)]
    return tuple(whole_matrix(scipy_linalg().lu, [t], outs, **kwargs))
