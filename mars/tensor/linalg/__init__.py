"""mt.linalg: norms and products over chunked tensors, under ``np.linalg``'s names."""

from __future__ import annotations

from .norm import matrix_norm, norm, vector_norm
from .products import linalg_outer as outer
from .products import matmul, tensordot

__all__ = ["norm", "vector_norm", "matrix_norm", "matmul", "tensordot", "outer"]
