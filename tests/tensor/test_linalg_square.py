"""Whole-matrix linalg (eig, det, pinv, ...), the top-level names (cross, diagonal, vecdot, ...),
randomized_svd and numpy's dispatch of ``np.linalg.<name>`` to mars, against numpy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import mars.tensor as mt

from tensor_testing import assert_eq, chunkings

RS = np.random.RandomState(5)
SQ = RS.rand(5, 5) + np.eye(5)
STACK = RS.rand(3, 4, 4) + np.eye(4)
SYM = SQ + SQ.T


@pytest.mark.parametrize("a, chunk", [(SQ, 5), (SQ, 2), (STACK, (1, 3, 2)), (STACK, 1)])
def test_det_slogdet_inv_pinv_cond(a, chunk):
    t = mt.tensor(a, chunk_size=chunk)
    assert_eq(mt.linalg.det(t), np.linalg.det(a), rtol=1e-10)
    res, expected = mt.linalg.slogdet(t), np.linalg.slogdet(a)
    assert_eq(res.sign, expected.sign)
    assert_eq(res.logabsdet, expected.logabsdet, rtol=1e-10)
    assert_eq(mt.linalg.pinv(t), np.linalg.pinv(a), rtol=1e-8)
    assert_eq(mt.linalg.pinv(t, rtol=0.5), np.linalg.pinv(a, rtol=0.5), rtol=1e-8)
    for p in (None, "fro", 1, -2):
        assert_eq(mt.linalg.cond(t, p), np.linalg.cond(a, p), rtol=1e-8)


@pytest.mark.parametrize("a, chunk", [(SYM, 2), (np.stack([SYM, 2 * SYM]), (1, 5, 3))])
def test_eigh_eigvalsh(a, chunk):
    t = mt.tensor(a, chunk_size=chunk)
    w, v = mt.linalg.eigh(t)
    w_np, v_np = np.linalg.eigh(a)
    assert_eq(w, w_np, rtol=1e-10)
    np.testing.assert_allclose(np.abs(v.execute().fetch()), np.abs(v_np), atol=1e-8)
    assert_eq(mt.linalg.eigvalsh(t, UPLO="U"), np.linalg.eigvalsh(a, UPLO="U"), rtol=1e-10)
    with pytest.raises(ValueError, match="UPLO"):
        mt.linalg.eigh(t, UPLO="X")


def test_eig_is_complex():
    rot = np.array([[0.0, -1.0], [1.0, 0.0]])
    res = mt.linalg.eig(mt.tensor(rot, chunk_size=1))
    w_np, v_np = np.linalg.eig(rot)
    assert_eq(res.eigenvalues, w_np)
    assert_eq(res.eigenvectors, v_np)
    # numpy drops an all-zero imaginary part; mars cannot know it before running, so stays complex
    w = mt.linalg.eigvals(mt.tensor(STACK, chunk_size=2))
    assert w.dtype == np.complex128
    np.testing.assert_allclose(np.sort_complex(w.execute().fetch()), np.sort_complex(np.linalg.eigvals(STACK)
                                                                                      .astype(complex)), rtol=1e-8)


@pytest.mark.parametrize("a", [RS.rand(9, 4), np.ones((6, 3)), RS.rand(2, 3, 3), np.zeros(4), np.arange(3)])
def test_matrix_rank(a):
    for chunk in chunkings(a.shape)[:3]:
        assert_eq(mt.linalg.matrix_rank(mt.tensor(a, chunk_size=chunk)), np.asarray(np.linalg.matrix_rank(a)))
    if a.ndim == 2:
        assert_eq(mt.linalg.matrix_rank(mt.tensor(a, chunk_size=2), tol=0.5),
                  np.asarray(np.linalg.matrix_rank(a, tol=0.5)))


@pytest.mark.parametrize("n", [0, 1, 2, 5, -3])
def test_matrix_power(n):
    for chunk in (4, 2, ((1, 2, 1), 3)):
        a = np.array([[2, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 0], [1, 0, 0, 1]])
        assert_eq(mt.linalg.matrix_power(mt.tensor(a, chunk_size=chunk), n), np.linalg.matrix_power(a, n),
                  rtol=1e-9)
    assert_eq(mt.linalg.matrix_power(mt.tensor(STACK, chunk_size=2), n), np.linalg.matrix_power(STACK, n),
              rtol=1e-8)
    with pytest.raises(TypeError, match="integer"):
        mt.linalg.matrix_power(mt.tensor(SQ), 1.5)


def test_multi_dot():
    a, b, c, d = RS.rand(10), RS.rand(10, 3), RS.rand(3, 20), RS.rand(20, 4)
    arrays = [mt.tensor(x, chunk_size=4) for x in (a, b, c, d)]
    assert_eq(mt.linalg.multi_dot(arrays), np.linalg.multi_dot([a, b, c, d]), rtol=1e-10)
    e = RS.rand(4)
    assert_eq(mt.linalg.multi_dot(arrays[1:] + [mt.tensor(e, chunk_size=3)]), np.linalg.multi_dot([b, c, d, e]),
              rtol=1e-10)
    assert_eq(mt.linalg.multi_dot([b, c]), b @ c, rtol=1e-10)
    with pytest.raises(ValueError, match="at least two"):
        mt.linalg.multi_dot([b])


# ----------------------------------------------------------------- top-level names
@pytest.mark.parametrize("shape_a, shape_b", [((3,), (3,)), ((4, 3), (3,)), ((2, 1, 3), (4, 3)), ((5, 3), (5, 3))])
def test_cross(shape_a, shape_b):
    a, b = RS.randint(-5, 5, shape_a), RS.rand(*shape_b)
    for chunk in (1, 2):
        assert_eq(mt.cross(mt.tensor(a, chunk_size=chunk), mt.tensor(b, chunk_size=chunk)), np.cross(a, b))
    assert_eq(mt.linalg.cross(a, b), np.linalg.cross(a, b))


def test_cross_axes_and_2d_vectors():
    a, b = RS.rand(3, 4), RS.rand(4, 3)
    assert_eq(mt.cross(mt.tensor(a, chunk_size=2), b, axisa=0, axisc=0), np.cross(a, b, axisa=0, axisc=0))
    two, three = RS.rand(4, 2), RS.rand(4, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for x, y in ((two, two), (two, three), (three, two)):
            assert_eq(mt.cross(mt.tensor(x, chunk_size=3), y), np.cross(x, y))
    with pytest.raises(ValueError, match="incompatible dimensions"):
        mt.cross(mt.ones(4), mt.ones(3))
    with pytest.raises(ValueError, match="3-dimensional vectors"):
        mt.linalg.cross(mt.ones(2), mt.ones(3))


@pytest.mark.parametrize("offset", [0, 1, -2, 7])
def test_diagonal_and_trace(offset):
    a = RS.rand(4, 5, 6)
    for chunk in chunkings(a.shape)[:3]:
        t = mt.tensor(a, chunk_size=chunk)
        assert_eq(mt.diagonal(t, offset), np.diagonal(a, offset))
        assert_eq(mt.diagonal(t, offset, axis1=2, axis2=0), np.diagonal(a, offset, axis1=2, axis2=0))
        assert_eq(mt.linalg.diagonal(t, offset=offset), np.linalg.diagonal(a, offset=offset))
        assert_eq(mt.linalg.trace(t, offset=offset), np.linalg.trace(a, offset=offset), rtol=1e-12)
    m = RS.randint(0, 9, (5, 4)).astype(np.int8)
    assert_eq(mt.diagonal(mt.tensor(m, chunk_size=2), offset), np.diagonal(m, offset))
    assert_eq(mt.linalg.trace(mt.tensor(m, chunk_size=2), offset=offset), np.linalg.trace(m, offset=offset))
    with pytest.raises(ValueError, match="cannot be the same"):
        mt.diagonal(mt.ones((2, 2)), axis1=1, axis2=-1)


def test_vecdot_and_matrix_transpose():
    x, y = RS.rand(4, 3) + 1j * RS.rand(4, 3), RS.rand(3)
    for chunk in (1, 2, 4):
        assert_eq(mt.vecdot(mt.tensor(x, chunk_size=chunk), y), np.vecdot(x, y), rtol=1e-12)
        assert_eq(mt.linalg.vecdot(mt.tensor(x.real, chunk_size=chunk), x.real, axis=0),
                  np.linalg.vecdot(x.real, x.real, axis=0), rtol=1e-12)
    ints = RS.randint(0, 5, (3, 4)).astype(np.int16)
    assert_eq(mt.vecdot(ints, ints), np.vecdot(ints, ints))
    bools = ints > 2
    assert_eq(mt.vecdot(bools, bools), np.vecdot(bools, bools))
    with pytest.raises(ValueError, match="core dimension"):
        mt.vecdot(mt.ones(3), mt.ones(4))
    assert_eq(mt.matrix_transpose(mt.tensor(STACK, chunk_size=2)), np.matrix_transpose(STACK))
    assert_eq(mt.linalg.matrix_transpose(mt.tensor(SQ, chunk_size=2)), np.linalg.matrix_transpose(SQ))
    with pytest.raises(ValueError, match="at least 2-dimensional"):
        mt.matrix_transpose(mt.ones(3))


# ----------------------------------------------------------------- randomized_svd and dispatch
def test_randomized_svd_recovers_low_rank():
    rng = np.random.default_rng(3)
    u0, _ = np.linalg.qr(rng.standard_normal((200, 5)))
    v0, _ = np.linalg.qr(rng.standard_normal((30, 5)))
    s0 = np.array([50.0, 20.0, 10.0, 5.0, 1.0])
    a = (u0 * s0) @ v0.T
    for t, k in ((mt.tensor(a, chunk_size=(70, 30)), 3), (mt.tensor(a.T, chunk_size=(30, 70)), 5)):
        u, s, vt = mt.linalg.randomized_svd(t, k, random_state=0)
        u, s, vt = u.execute().fetch(), s.execute().fetch(), vt.execute().fetch()
        np.testing.assert_allclose(s, s0[:k], rtol=1e-8)
        assert u.shape == (t.shape[0], k) and vt.shape == (k, t.shape[1])
        np.testing.assert_allclose(u.T @ u, np.eye(k), atol=1e-8)
        if k == 5:
            np.testing.assert_allclose((u * s) @ vt, a.T, atol=1e-8)
    with pytest.raises(ValueError, match="n_components"):
        mt.linalg.randomized_svd(mt.tensor(a), 0)


def test_numpy_dispatches_to_mars():
    t = mt.tensor(RS.rand(8, 3), chunk_size=(3, 3))
    q, r = np.linalg.qr(t)
    assert isinstance(q, mt.Tensor) and isinstance(r, mt.Tensor)
    np.testing.assert_allclose((q @ r).execute().fetch(), t.execute().fetch(), atol=1e-12)
    assert isinstance(np.linalg.svd(t, full_matrices=False).S, mt.Tensor)
    assert isinstance(np.linalg.det(mt.tensor(SQ)), mt.Tensor)
    assert isinstance(np.cross(mt.ones(3), mt.ones(3)), mt.Tensor)
    assert isinstance(np.linalg.cholesky(mt.tensor(SYM + 10 * np.eye(5))), mt.Tensor)
