"""Creation from formulas: arange, linspace, eye/identity/tri, tril/triu, diag/diagflat."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mars.tensor as mt

from tensor_testing import assert_eq, chunkings


def exact(result, expected):
    assert_eq(result, expected, rtol=0, atol=0)


# ----------------------------------------------------------------- arange
@pytest.mark.parametrize("args, kw", [
    ((10,), {}),
    ((2, 17, 3), {}),
    ((5, -7, -2), {}),
    ((0.5, 9.7, 0.3), {}),
    ((-1.25, 3.0, 0.1), {}),
    ((10.0,), {}),
    ((1, 2, 0.01), {"dtype": "float32"}),
    ((0, 5, 0.5), {"dtype": int}),
    ((3, 40, 4), {"dtype": "int8"}),
    ((np.int32(2), np.int32(30)), {}),
    ((np.float32(0.1), 5), {}),
    ((np.uint64(7),), {}),
    ((1 + 0j, 6), {}),
    ((0, 6), {"dtype": complex}),
    ((5, 1), {}),
    ((0,), {}),
])
def test_arange_equals_numpy_exactly(args, kw):
    expected = np.arange(*args, **kw)
    for chunk_size in chunkings(expected.shape) + [4]:
        exact(mt.arange(*args, chunk_size=chunk_size, **kw), expected)


def test_arange_chunks_compute_from_the_formula():
    # accumulation across chunks would drift; numpy computes start + i * delta
    expected = np.arange(0.1, 1000.0, 0.1)
    exact(mt.arange(0.1, 1000.0, 0.1, chunk_size=7), expected)
    t = mt.arange(100, chunk_size=30).execute()
    assert t.nsplits == ((30, 30, 30, 10),)


@pytest.mark.parametrize("args, kw, error", [
    ((0, 5, 0), {}, ZeroDivisionError),
    ((0, np.nan), {}, ValueError),
    ((0, np.inf), {}, ValueError),
    ((3,), {"dtype": bool}, TypeError),
])
def test_arange_errors_like_numpy(args, kw, error):
    with pytest.raises(error):
        np.arange(*args, **kw)
    with pytest.raises(error):
        mt.arange(*args, **kw)
    with pytest.raises(ValueError, match="0"):
        mt.arange(5, chunk_size=0)


# ----------------------------------------------------------------- linspace
@pytest.mark.parametrize("start, stop, num, kw", [
    (0, 1, 50, {}),
    (-3.7, 12.1, 33, {}),
    (5, 5, 7, {}),
    (0, 10, 10, {"endpoint": False}),
    (2, 3, 1, {}),
    (2, 3, 1, {"endpoint": False}),
    (0, 1, 0, {}),
    (0, 100, 23, {"dtype": int}),
    (np.float32(0.3), 7, 19, {}),
    (np.float32(0.3), np.float32(7.1), 19, {"dtype": "float64"}),
    (-1e-310, 1e-310, 5, {}),
    (1 + 2j, 3 - 1j, 8, {}),
])
def test_linspace_equals_numpy_exactly(start, stop, num, kw):
    expected = np.linspace(start, stop, num, **kw)
    for chunk_size in chunkings((num,)) + [3]:
        exact(mt.linspace(start, stop, num, chunk_size=chunk_size, **kw), expected)


def test_linspace_retstep_and_errors():
    t, step = mt.linspace(1, 2, 9, retstep=True, chunk_size=4)
    e, e_step = np.linspace(1, 2, 9, retstep=True)
    exact(t, e)
    assert step == e_step and type(step) is type(e_step)
    assert np.isnan(mt.linspace(0, 1, 1, retstep=True)[1])
    with pytest.raises(ValueError, match="-1"):
        mt.linspace(0, 1, -1)
    with pytest.raises(TypeError):
        mt.linspace(0, 1, 2.5)
    with pytest.raises(np.exceptions.AxisError):
        mt.linspace(0, 1, 5, axis=1)
    exact(mt.linspace(0, 1, 5, axis=-1), np.linspace(0, 1, 5, axis=-1))


# ----------------------------------------------------------------- eye, identity, tri
@pytest.mark.parametrize("N, M, k", [(5, None, 0), (4, 7, 2), (7, 4, -3), (6, 6, 9), (6, 6, -9), (0, 3, 0), (5, 5, 4)])
@pytest.mark.parametrize("dtype", [float, "int32", bool])
def test_eye_and_tri(N, M, k, dtype):
    shape = (N, N if M is None else M)
    for chunk_size in chunkings(shape):
        exact(mt.eye(N, M, k=k, dtype=dtype, chunk_size=chunk_size), np.eye(N, M, k=k, dtype=dtype))
        exact(mt.tri(N, M, k=k, dtype=dtype, chunk_size=chunk_size), np.tri(N, M, k=k, dtype=dtype))


def test_identity_eye_order_and_errors():
    for chunk_size in chunkings((5, 5)):
        exact(mt.identity(5, chunk_size=chunk_size), np.identity(5))
    exact(mt.identity(3, dtype=int), np.identity(3, dtype=int))
    f = mt.eye(4, order="F", chunk_size=3)
    assert f.order == "F"
    assert f.execute().fetch().flags.f_contiguous
    with pytest.raises(ValueError, match="negative"):
        mt.eye(-1)
    with pytest.raises(TypeError):
        mt.eye(2.5)
    with pytest.raises(TypeError):
        mt.eye(3, k=1.5)
    with pytest.raises(ValueError, match="X"):
        mt.eye(3, order="X")


# ----------------------------------------------------------------- tril, triu
@pytest.mark.parametrize("shape", [(6, 6), (4, 7), (7, 3), (2, 5, 4)])
@pytest.mark.parametrize("k", [-8, -2, 0, 1, 3, 8])
def test_tril_triu(shape, k):
    x = np.random.RandomState(0).randint(1, 9, size=shape)
    for chunk_size in chunkings(shape):
        t = mt.tensor(x, chunk_size=chunk_size)
        exact(mt.tril(t, k), np.tril(x, k))
        exact(mt.triu(t, k), np.triu(x, k))


def test_tril_triu_vector_array_like_and_errors():
    v = np.arange(1, 6)
    for chunk_size in chunkings(v.shape):
        exact(mt.tril(mt.tensor(v, chunk_size=chunk_size), 1), np.tril(v, 1))
        exact(mt.triu(mt.tensor(v, chunk_size=chunk_size), -1), np.triu(v, -1))
    exact(mt.tril([[1.5, 2], [3, 4]]), np.tril([[1.5, 2], [3, 4]]))
    with pytest.raises(TypeError):
        mt.tril(5)


def test_tril_blocks_off_the_diagonal_run_nothing():
    t = mt.tensor(np.ones((6, 6)), chunk_size=2)
    lower = mt.tril(t).execute()
    inputs = {c.key for c in t.chunks}
    kept = [c for c in lower.chunks if c.key in inputs]
    assert [c.index for c in kept] == [(1, 0), (2, 0), (2, 1)]  # passed through as they are
    zero = lower.chunks[1]  # block (0, 1) lies wholly above the diagonal
    assert zero.inputs == []


# ----------------------------------------------------------------- diag, diagflat
@pytest.mark.parametrize("k", [-4, -1, 0, 2, 5])
def test_diag_of_vector(k):
    v = np.arange(1, 8)
    out_shape = (7 + abs(k),) * 2
    for in_chunks in chunkings(v.shape):
        for out_chunks in chunkings(out_shape)[:3]:
            exact(mt.diag(mt.tensor(v, chunk_size=in_chunks), k, chunk_size=out_chunks), np.diag(v, k))
    exact(mt.diag(v.tolist(), k), np.diag(v, k))


@pytest.mark.parametrize("shape", [(6, 6), (4, 9), (9, 4)])
@pytest.mark.parametrize("k", [-10, -3, -1, 0, 1, 4, 10])
def test_diag_of_matrix(shape, k):
    x = np.random.RandomState(1).rand(*shape)
    for chunk_size in chunkings(shape):
        exact(mt.diag(mt.tensor(x, chunk_size=chunk_size), k), np.diag(x, k))
    exact(mt.diag(x, k, chunk_size=2), np.diag(x, k))


def test_diag_output_chunks_follow_the_blocks_it_crosses():
    t = mt.diag(mt.ones((5, 5), chunk_size=2)).execute()
    assert t.nsplits == ((2, 2, 1),)
    assert mt.diag(mt.ones((5, 5), chunk_size=2), chunk_size=5).execute().nsplits == ((5,),)


def test_diagflat_and_errors():
    x = np.arange(6).reshape(2, 3)
    for k in (-2, 0, 1):
        for chunk_size in (1, 4, None):
            exact(mt.diagflat(mt.tensor(x, chunk_size=1), k, chunk_size=chunk_size), np.diagflat(x, k))
    exact(mt.diagflat([1, 2, 3]), np.diagflat([1, 2, 3]))
    exact(mt.diagflat(5), np.diagflat(5))
    with pytest.raises(ValueError, match="1- or 2-d"):
        mt.diag(np.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="1- or 2-d"):
        mt.diag(5)
    with pytest.raises(TypeError):
        mt.diag([1, 2], 1.5)


@st.composite
def _matrix_and_chunks(draw):
    rows, cols = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    chunk = (draw(st.integers(1, rows)), draw(st.integers(1, cols)))
    return rows, cols, chunk, draw(st.integers(-10, 10))


@settings(max_examples=30, deadline=None)
@given(_matrix_and_chunks())
def test_diag_tril_eye_agree_with_numpy_for_any_chunking(case):
    rows, cols, chunk, k = case
    x = np.arange(rows * cols, dtype=float).reshape(rows, cols)
    t = mt.tensor(x, chunk_size=chunk)
    exact(mt.diag(t, k), np.diag(x, k))
    exact(mt.diag(mt.tensor(x[0], chunk_size=chunk[1]), k, chunk_size=chunk[0]), np.diag(x[0], k))
    exact(mt.tril(t, k), np.tril(x, k))
    exact(mt.triu(t, k), np.triu(x, k))
    exact(mt.eye(rows, cols, k, chunk_size=chunk), np.eye(rows, cols, k))
    exact(mt.arange(k, k + rows * cols, chunk_size=chunk[0]) * 0.5, np.arange(k, k + rows * cols) * 0.5)
