"""Randomized truncated SVD (Halko, Martinsson and Tropp), as scikit-learn's ``randomized_svd``.

A random Gaussian test matrix ``Ω`` (``n x (k + p)``) samples the range of
``M``: ``Y = M Ω``, sharpened by power iterations (``Y = M M^H Y``,
re-orthonormalized by TSQR between products); ``Q`` is the TSQR basis of
``Y``, and the SVD of the small ``B = Q^H M`` gives ``U = Q U_B``. Every
step is a chunked product or a TSQR, so ``M`` is read a few times and never
gathered.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..arithmetic import ufuncs as uf
from ..arithmetic.core import where_
from ..core import Tensor
from ..random import RandomState
from ..reduction import basic
from .products import matmul
from .qr import qr
from .svd import svd
from .whole import as_matrix, conj_transpose, known_shape

__all__ = ["randomized_svd"]

_NORMALIZERS = ("auto", "QR", "LU", "none")


def _random_state(random_state: Any) -> RandomState:
    if random_state is None:
        return RandomState()
    if isinstance(random_state, RandomState):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return RandomState(int(random_state.randint(np.iinfo(np.int32).max)))
    if isinstance(random_state, (int, np.integer)):
        return RandomState(int(random_state))
    raise ValueError(f"random_state must be None, an integer or a RandomState, got {random_state!r}")


def _orthonormal(y: Tensor, normalize: bool) -> Tensor:
    return qr(y).Q if normalize else y


def _flipped(u: Tensor, vt: Tensor) -> tuple[Tensor, Tensor]:
    """Signs fixed so that each row of ``vt`` has its largest-magnitude entry positive."""
    mag = uf.absolute(vt)
    largest = where_(uf.equal(mag, basic.max(mag, axis=1, keepdims=True)), vt, 0)
    signs = uf.sign(basic.sum(largest, axis=1))
    signs = where_(uf.equal(signs, 0), 1, signs).astype(vt.dtype)
    return u * signs, vt * signs[:, None]


def randomized_svd(M: Any, n_components: int, *, n_oversamples: int = 10, n_iter: Any = "auto",
                   power_iteration_normalizer: str = "auto", transpose: Any = "auto", flip_sign: bool = True,
                   random_state: Any = None) -> tuple[Tensor, Tensor, Tensor]:
    """The ``n_components`` largest singular triplets ``(U, s, Vt)`` of ``M``, computed approximately,
    as ``sklearn.utils.extmath.randomized_svd``.

    ``n_iter='auto'`` is 7 power iterations when ``n_components`` is under a
    tenth of the smaller side, else 4. The power iterations are normalized
    by TSQR ('auto', 'QR' and 'LU' all mean that here; 'none' skips it).
    ``transpose='auto'`` works on ``M^H`` when ``M`` is wider than tall.
    ``random_state`` is None, an integer, or a numpy or mars RandomState.
    With ``flip_sign`` (real ``M``), each row of ``Vt`` has its
    largest-magnitude entry positive.

    >>> import mars.tensor as mt
    >>> a = mt.tensor([[3., 0.], [0., 1.], [0., 0.]], chunk_size=2)
    >>> u, s, vt = mt.linalg.randomized_svd(a, 1, random_state=0)
    >>> s.execute().fetch().round(6)
    array([3.])
    """
    t = as_matrix(M)
    m, n = known_shape(t, "randomized_svd")
    if power_iteration_normalizer not in _NORMALIZERS:
        raise ValueError(f"power_iteration_normalizer must be one of {_NORMALIZERS}, "
                         f"got {power_iteration_normalizer!r}")
    if not 0 < n_components <= min(m, n):
        raise ValueError(f"n_components must be in [1, {min(m, n)}] for a matrix of shape {(m, n)}, "
                         f"got {n_components}")
    if n_iter == "auto":
        n_iter = 7 if n_components < 0.1 * min(m, n) else 4
    normalize = power_iteration_normalizer != "none" and not (power_iteration_normalizer == "auto" and n_iter <= 2)
    flip = m < n if transpose == "auto" else bool(transpose)
    if flip:
        t = conj_transpose(t)
    dtype = t.dtype if t.dtype.kind in "fc" else np.dtype(np.float64)
    n_random = min(n_components + n_oversamples, min(m, n))
    omega = _random_state(random_state).standard_normal((t.shape[1], n_random)).astype(dtype)
    y = matmul(t, omega)
    for _ in range(n_iter):
        z = _orthonormal(matmul(conj_transpose(t), _orthonormal(y, normalize)), normalize)
        y = matmul(t, z)
    q = qr(y).Q
    u_b, s, vt = svd(matmul(conj_transpose(q), t))
    u = matmul(q, u_b)
    if flip_sign and dtype.kind != "c":
        u, vt = _flipped(u, vt)
    u, s, vt = u[:, :n_components], s[:n_components], vt[:n_components]
    if flip:
        return conj_transpose(vt), s, conj_transpose(u)
    return u, s, vt
