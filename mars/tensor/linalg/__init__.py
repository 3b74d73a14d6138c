"""mt.linalg: ``np.linalg``'s functions over chunked tensors, and scipy's lu and solve_triangular.

Tall-and-skinny matrices are factored by TSQR (``qr``, ``svd``, ``lstsq``,
``randomized_svd``), ``cholesky`` and ``solve_triangular`` work by blocks;
the rest gather each matrix into one chunk (a stack's batch axes keep theirs).
"""

from __future__ import annotations

from numpy.linalg import LinAlgError

from .cholesky import cholesky
from .lu import lu
from .norm import matrix_norm, norm, vector_norm
from .products import linalg_outer as outer
from .products import matmul, tensordot
from .qr import qr
from .randomized import randomized_svd
from .solve import inv, lstsq, solve, solve_triangular, tensorinv, tensorsolve
from .square import cond, det, eig, eigh, eigvals, eigvalsh, matrix_power, matrix_rank, multi_dot, pinv, slogdet
from .svd import svd, svdvals
from .toplevel import linalg_cross as cross
from .toplevel import linalg_diagonal as diagonal
from .toplevel import linalg_trace as trace
from .toplevel import matrix_transpose, vecdot

__all__ = [
    "LinAlgError", "norm", "vector_norm", "matrix_norm", "matmul", "tensordot", "outer",
    "qr", "svd", "svdvals", "cholesky", "lu", "solve", "solve_triangular", "inv", "lstsq", "tensorinv", "tensorsolve",
    "eig", "eigvals", "eigh", "eigvalsh", "det", "slogdet", "pinv", "matrix_rank", "matrix_power", "cond",
    "multi_dot", "cross", "diagonal", "trace", "matrix_transpose", "vecdot", "randomized_svd",
]
