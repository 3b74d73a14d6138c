"""mt.linalg: norms and products over chunked tensors."""

from __future__ import annotations

from .norms import norm
from .tensordot import dot, inner, matmul, outer, tensordot, vdot

__all__ = ["norm", "dot", "inner", "matmul", "outer", "tensordot", "vdot"]
