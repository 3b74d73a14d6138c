"""Decompositions (qr, svd, cholesky, lu) and solvers (solve_triangular, solve, inv, lstsq) against numpy/scipy.

Factorizations that are unique only up to signs are checked by what they
must satisfy: the product gives back the input, Q's columns are orthonormal,
R is upper triangular, and |R| and the singular values equal numpy's.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import mars.tensor as mt
from mars.core.tiling import tile_now
from mars.tensor.linalg.qr import TSQRLocal

from tensor_testing import assert_eq

RS = np.random.RandomState(11)
TALL = RS.rand(13, 4)
TALL_CHUNKS = [(13, 4), (5, 2), ((1, 10, 2), 3), (3, 4), 1]


def _run(*ts: mt.Tensor) -> list[np.ndarray]:
    return [t.execute().fetch() for t in ts]


def _same_meta(t: mt.Tensor, expected: np.ndarray) -> None:
    assert tuple(t.shape) == expected.shape and t.dtype == expected.dtype, (t.shape, t.dtype, expected.shape)


def _check_qr(a: np.ndarray, q: np.ndarray, r: np.ndarray, mode: str) -> None:
    q_np, r_np = np.linalg.qr(a, mode=mode)
    assert q.shape == q_np.shape and r.shape == r_np.shape and q.dtype == q_np.dtype and r.dtype == r_np.dtype
    tol = 1e-4 if a.dtype == np.float32 else 1e-10
    np.testing.assert_allclose(q @ r, a, atol=tol)
    np.testing.assert_allclose(q.conj().T @ q, np.eye(q.shape[1]), atol=tol)
    np.testing.assert_array_equal(np.triu(r), r)
    k = min(a.shape)
    np.testing.assert_allclose(np.abs(r[:k]), np.abs(r_np[:k]), atol=tol * 10)


# ----------------------------------------------------------------- qr
@pytest.mark.parametrize("chunk_size", TALL_CHUNKS)
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_tall(chunk_size, mode):
    res = mt.linalg.qr(mt.tensor(TALL, chunk_size=chunk_size), mode=mode)
    _same_meta(res.Q, np.linalg.qr(TALL, mode=mode).Q)
    q, r = _run(res.Q, res.R)
    _check_qr(TALL, q, r, mode)


@pytest.mark.parametrize("chunk_size", [(13, 4), (3, 2), 1])
def test_qr_mode_r(chunk_size):
    r = mt.linalg.qr(mt.tensor(TALL, chunk_size=chunk_size), mode="r")
    expected = np.linalg.qr(TALL, mode="r")
    _same_meta(r, expected)
    np.testing.assert_allclose(np.abs(r.execute().fetch()), np.abs(expected), atol=1e-10)


def test_qr_uses_tsqr_and_short_chunks():
    # row chunks shorter than the number of columns still factor exactly
    a = RS.rand(9, 5)
    res = mt.linalg.qr(mt.tensor(a, chunk_size=(2, 5)))
    tile_now(res.Q)
    assert any(isinstance(c.op, TSQRLocal) for c in _ancestors(res.Q))
    _check_qr(a, *_run(res.Q, res.R), "reduced")


def _ancestors(t: mt.Tensor) -> list:
    seen, stack, out = set(), list(t.data.chunks), []
    while stack:
        c = stack.pop()
        if c.key not in seen:
            seen.add(c.key)
            out.append(c)
            stack.extend(c.op.inputs)
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.complex128, np.int64])
def test_qr_dtypes(dtype):
    a = (RS.rand(10, 3) * 10).astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RS.rand(10, 3)
    res = mt.linalg.qr(mt.tensor(a, chunk_size=(4, 2)))
    _check_qr(a.astype(np.linalg.qr(a).Q.dtype), *_run(res.Q, res.R), "reduced")


def test_qr_wide_stacked_and_empty():
    wide = RS.rand(3, 7)
    res = mt.linalg.qr(mt.tensor(wide, chunk_size=(1, 3)))
    _check_qr(wide, *_run(res.Q, res.R), "reduced")
    stack = RS.rand(4, 5, 3)
    q, r = mt.linalg.qr(mt.tensor(stack, chunk_size=(1, 2, 2)))
    q_np, r_np = np.linalg.qr(stack)
    assert_eq(q, q_np)
    assert_eq(r, r_np)
    q, r = mt.linalg.qr(mt.zeros((0, 3)))
    assert_eq(q, np.linalg.qr(np.zeros((0, 3))).Q)


def test_qr_errors():
    with pytest.raises(np.linalg.LinAlgError, match="at least two-dimensional"):
        mt.linalg.qr(mt.ones(3))
    with pytest.raises(ValueError, match="Unrecognized mode"):
        mt.linalg.qr(mt.ones((3, 3)), mode="bogus")
    with pytest.raises(NotImplementedError, match="raw"):
        mt.linalg.qr(mt.ones((3, 3)), mode="raw")


# ----------------------------------------------------------------- svd
@pytest.mark.parametrize("chunk_size", TALL_CHUNKS)
@pytest.mark.parametrize("full", [False, True])
def test_svd_tall(chunk_size, full):
    res = mt.linalg.svd(mt.tensor(TALL, chunk_size=chunk_size), full_matrices=full)
    u_np, s_np, vh_np = np.linalg.svd(TALL, full_matrices=full)
    for t, e in zip(res, (u_np, s_np, vh_np)):
        _same_meta(t, e)
    u, s, vh = _run(res.U, res.S, res.Vh)
    np.testing.assert_allclose(s, s_np, rtol=1e-10)
    np.testing.assert_allclose((u[:, :4] * s) @ vh, TALL, atol=1e-10)
    np.testing.assert_allclose(u.T @ u, np.eye(u.shape[1]), atol=1e-10)
    np.testing.assert_allclose(np.abs(vh), np.abs(vh_np), atol=1e-8)


@pytest.mark.parametrize("shape, chunk_size", [((4, 11), (2, 3)), ((6, 6), 2), ((3, 4, 2), (1, 2, 1))])
def test_svd_wide_square_stacked(shape, chunk_size):
    a = RS.rand(*shape)
    u, s, vh = _run(*mt.linalg.svd(mt.tensor(a, chunk_size=chunk_size)))
    s_np = np.linalg.svd(a, compute_uv=False)
    np.testing.assert_allclose(s, s_np, rtol=1e-10)
    np.testing.assert_allclose(np.matmul(u * s[..., None, :], vh), a, atol=1e-10)
    assert_eq(mt.linalg.svdvals(mt.tensor(a, chunk_size=chunk_size)), s_np)


def test_svd_complex_and_float32():
    c = RS.rand(9, 3) + 1j * RS.rand(9, 3)
    u, s, vh = _run(*mt.linalg.svd(mt.tensor(c, chunk_size=(4, 3))))
    np.testing.assert_allclose((u * s) @ vh, c, atol=1e-10)
    f = RS.rand(9, 3).astype(np.float32)
    assert_eq(mt.linalg.svd(mt.tensor(f, chunk_size=(2, 3)), compute_uv=False), np.linalg.svdvals(f), rtol=1e-5)


# ----------------------------------------------------------------- cholesky
def _spd(n: int, dtype: type = np.float64) -> np.ndarray:
    x = RS.rand(n, n)
    a = x @ x.T + n * np.eye(n)
    if np.dtype(dtype).kind == "c":
        y = RS.rand(n, n) + 1j * RS.rand(n, n)
        a = y @ y.conj().T + n * np.eye(n)
    return a.astype(dtype)


@pytest.mark.parametrize("chunk_size", [7, 3, (2, 3), ((1, 4, 2), (3, 4)), 1])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_blocked(chunk_size, upper):
    a = _spd(7)
    a[0, 6] += 5.0  # numpy reads one triangle only: the other must not matter
    assert_eq(mt.linalg.cholesky(mt.tensor(a, chunk_size=chunk_size), upper=upper),
              np.linalg.cholesky(a, upper=upper), atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128, np.int64])
def test_cholesky_dtypes(dtype):
    a = _spd(5, dtype) if dtype != np.int64 else np.array([[4, 2], [2, 5]])
    assert_eq(mt.linalg.cholesky(mt.tensor(a, chunk_size=2)), np.linalg.cholesky(a), rtol=1e-5)


def test_cholesky_stacked_and_errors():
    stack = np.stack([_spd(3), _spd(3)])
    assert_eq(mt.linalg.cholesky(mt.tensor(stack, chunk_size=(1, 2, 2))), np.linalg.cholesky(stack))
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        mt.linalg.cholesky(mt.ones((3, 2)))
    not_pd = -np.eye(4)
    with pytest.raises(np.linalg.LinAlgError, match="positive definite"):
        mt.linalg.cholesky(mt.tensor(not_pd, chunk_size=2)).execute()


# ----------------------------------------------------------------- lu
@pytest.mark.parametrize("shape", [(5, 5), (6, 3), (3, 6), (2, 4, 4)])
def test_lu(shape):
    a = RS.rand(*shape)
    t = mt.tensor(a, chunk_size=2)
    for got, expected in zip(mt.linalg.lu(t), scipy.linalg.lu(a)):
        assert_eq(got, expected)
    for got, expected in zip(mt.linalg.lu(t, permute_l=True), scipy.linalg.lu(a, permute_l=True)):
        assert_eq(got, expected)
    assert_eq(mt.linalg.lu(t, p_indices=True)[0], scipy.linalg.lu(a, p_indices=True)[0])


# ----------------------------------------------------------------- solvers
@pytest.mark.parametrize("chunk_size", [6, 4, ((1, 3, 2), (2, 4)), 1])
@pytest.mark.parametrize("lower, trans", [(True, 0), (False, 0), (True, "T"), (False, 2)])
def test_solve_triangular(chunk_size, lower, trans):
    a = np.tril(RS.rand(6, 6)) + 3 * np.eye(6)
    a = a if lower else a.T.copy()
    a[0, 5 if lower else 0] += 0  # the triangle not read may hold anything
    b = RS.rand(6, 3)
    expected = scipy.linalg.solve_triangular(a, b, trans=trans, lower=lower)
    got = mt.linalg.solve_triangular(mt.tensor(a, chunk_size=chunk_size), mt.tensor(b, chunk_size=(chunk_size if
                                     isinstance(chunk_size, int) else 2)), trans=trans, lower=lower)
    assert_eq(got, expected, rtol=1e-10)
    vec = scipy.linalg.solve_triangular(a, b[:, 0], lower=lower, unit_diagonal=True)
    assert_eq(mt.linalg.solve_triangular(mt.tensor(a, chunk_size=chunk_size), b[:, 0], lower=lower,
                                         unit_diagonal=True), vec, rtol=1e-10)


def test_solve_triangular_singular_names_the_diagonal():
    a = np.triu(RS.rand(5, 5)) + np.eye(5)
    a[3, 3] = 0
    with pytest.raises(np.linalg.LinAlgError, match="diagonal 3"):
        mt.linalg.solve_triangular(mt.tensor(a, chunk_size=2), np.ones(5)).execute()


@pytest.mark.parametrize("b_shape", [(4,), (4, 2), (3, 4, 2)])
def test_solve_and_inv(b_shape):
    a = RS.rand(4, 4) + 4 * np.eye(4)
    b = RS.rand(*b_shape)
    assert_eq(mt.linalg.solve(mt.tensor(a, chunk_size=3), mt.tensor(b, chunk_size=2)), np.linalg.solve(a, b))
    stack = RS.rand(3, 4, 4) + 4 * np.eye(4)
    assert_eq(mt.linalg.solve(mt.tensor(stack, chunk_size=(1, 2, 3)), b), np.linalg.solve(stack, b))
    assert_eq(mt.linalg.inv(mt.tensor(stack, chunk_size=(2, 3, 1))), np.linalg.inv(stack))


def test_singular_raises_linalg_error_on_execute():
    singular = mt.tensor(np.ones((3, 3)), chunk_size=2)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        mt.linalg.inv(singular).execute()
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        mt.linalg.solve(singular, mt.ones(3)).execute()
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        mt.linalg.inv(mt.ones((2, 3)))


@pytest.mark.parametrize("chunk_size", [(12, 3), (5, 3), ((1, 9, 2), 2)])
@pytest.mark.parametrize("b_cols", [None, 2])
def test_lstsq_tall(chunk_size, b_cols):
    a = RS.rand(12, 3)
    b = RS.rand(12) if b_cols is None else RS.rand(12, b_cols)
    x, res, rank, s = mt.linalg.lstsq(mt.tensor(a, chunk_size=chunk_size), b)
    x_np, res_np, rank_np, s_np = np.linalg.lstsq(a, b)
    assert_eq(x, x_np, rtol=1e-9)
    assert_eq(res, res_np, rtol=1e-9)
    assert int(rank.execute().fetch()) == rank_np and rank.dtype == np.asarray(rank_np).dtype
    assert_eq(s, s_np, rtol=1e-10)


@pytest.mark.parametrize("a", [np.ones((6, 3)), RS.rand(3, 5)])
def test_lstsq_rank_deficient_and_wide(a):
    b = RS.rand(a.shape[0])
    x, res, rank, s = mt.linalg.lstsq(mt.tensor(a, chunk_size=2), b)
    x_np, res_np, rank_np, s_np = np.linalg.lstsq(a, b)
    assert_eq(x, x_np, rtol=1e-8, atol=1e-12)
    assert res.execute().fetch().shape == res_np.shape == (0,)
    assert int(rank.execute().fetch()) == rank_np
    with pytest.raises(np.linalg.LinAlgError, match="Incompatible dimensions"):
        mt.linalg.lstsq(mt.tensor(a), np.ones(a.shape[0] + 1))


def test_tensorinv_tensorsolve():
    a = np.eye(24).reshape(4, 6, 8, 3) + RS.rand(4, 6, 8, 3) * 0.01
    assert_eq(mt.linalg.tensorinv(mt.tensor(a, chunk_size=3)), np.linalg.tensorinv(a), rtol=1e-9)
    a2 = np.eye(6).reshape(2, 3, 6) + RS.rand(2, 3, 6) * 0.01
    b2 = RS.rand(2, 3)
    assert_eq(mt.linalg.tensorsolve(mt.tensor(a2, chunk_size=2), b2), np.linalg.tensorsolve(a2, b2), rtol=1e-9)
    a3 = RS.rand(6, 2, 3) + np.eye(6).reshape(6, 2, 3)
    b3 = RS.rand(2, 3)
    assert_eq(mt.linalg.tensorsolve(mt.tensor(a3, chunk_size=2), b3, axes=(0,)),
              np.linalg.tensorsolve(a3, b3, axes=(0,)), rtol=1e-9)


@pytest.mark.parametrize("chunk_size", [(100, 70), ((80, 120), 70), ((30, 170), 70)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_tsqr_with_more_columns_than_one_block_of_reflectors(chunk_size, mode, dtype):
    # 70 columns: a chunk's reflectors span two of geqrt's blocks of 64 (and a 30-row chunk is shorter than wide)
    a = RS.rand(200, 70)
    if dtype is np.complex128:
        a = a + 1j * RS.rand(200, 70)
    q, r = mt.linalg.qr(mt.tensor(a, chunk_size=chunk_size), mode=mode)
    _check_qr(a, q.fetch(), r.fetch(), mode)
