"""Products and norms against numpy, across chunkings (including mismatched ones)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tensor_testing import assert_eq, chunkings

import mars.tensor as mt

RS = np.random.RandomState(7)
A = RS.rand(7, 5)
B = RS.rand(5, 6)


@pytest.mark.parametrize("ca", chunkings(A.shape))
@pytest.mark.parametrize("cb", [(5, 6), (2, 4), 1, ((1, 4), (6,))])
def test_matrix_products_with_different_chunkings(ca, cb):
    ta, tb = mt.tensor(A, chunk_size=ca), mt.tensor(B, chunk_size=cb)
    assert_eq(ta @ tb, A @ B)
    assert_eq(mt.dot(ta, tb), np.dot(A, B))
    assert_eq(mt.matmul(ta, tb), np.matmul(A, B))
    assert_eq(mt.tensordot(ta, tb, axes=1), np.tensordot(A, B, axes=1))
    assert_eq(mt.inner(ta, tb.T), np.inner(A, B.T))


@pytest.mark.parametrize("chunk_size", chunkings(A.shape))
def test_symmetric_products_use_mirrored_blocks_and_stay_exact(chunk_size):
    t = mt.tensor(A, chunk_size=chunk_size)
    assert_eq(mt.inner(t, t), np.inner(A, A))
    assert_eq(t.T @ t, A.T @ A)
    assert_eq(mt.dot(t, t.T), A @ A.T)


def test_vector_cases_and_scalars():
    v, w = RS.rand(5), RS.rand(5)
    tv, tw = mt.tensor(v, chunk_size=2), mt.tensor(w, chunk_size=3)
    assert_eq(mt.dot(tv, tw), np.dot(v, w))
    assert_eq(mt.inner(tv, tw), np.inner(v, w))
    assert_eq(tv @ tw, v @ w)
    assert_eq(mt.matmul(mt.tensor(A, chunk_size=3), tv), A @ v)
    assert_eq(mt.matmul(tv, mt.tensor(B, chunk_size=2)), v @ B)
    assert_eq(mt.dot(mt.tensor(A, chunk_size=2), tv), A.dot(v))
    assert_eq(mt.dot(3, tv), np.dot(3, v))
    assert_eq(mt.outer(tv, mt.tensor(B, chunk_size=4)), np.outer(v, B))
    assert_eq(mt.vdot(tv, tw), np.vdot(v, w))
    c = v + 1j * w
    assert_eq(mt.vdot(mt.tensor(c, chunk_size=2), mt.tensor(c, chunk_size=4)), np.vdot(c, c))


@pytest.mark.parametrize("dtypes", [("int64", "int64"), ("int32", "float32"), ("bool", "bool"),
                                    ("complex128", "float64"), ("float32", "float32")])
def test_product_dtypes_follow_numpy(dtypes):
    a = (RS.rand(4, 3) * 5).astype(dtypes[0])
    b = (RS.rand(3, 2) * 5).astype(dtypes[1])
    assert_eq(mt.tensor(a, chunk_size=2) @ mt.tensor(b, chunk_size=(1, 2)), a @ b, rtol=1e-5)
    assert_eq(mt.dot(mt.tensor(a, chunk_size=3), mt.tensor(b, chunk_size=2)), np.dot(a, b), rtol=1e-5)


def test_batched_matmul_broadcasts_batch_dims():
    x, y = RS.rand(2, 3, 4, 5), RS.rand(3, 5, 2)
    assert_eq(mt.matmul(mt.tensor(x, chunk_size=2), mt.tensor(y, chunk_size=(1, 3, 2))), np.matmul(x, y))
    z = RS.rand(1, 5, 3)
    assert_eq(mt.tensor(x, chunk_size=3) @ mt.tensor(z, chunk_size=2), x @ z)
    v = RS.rand(5)
    assert_eq(mt.tensor(x, chunk_size=2) @ mt.tensor(v, chunk_size=2), x @ v)


def test_tensordot_general_axes():
    x, y = RS.rand(3, 4, 5), RS.rand(4, 3, 2)
    for axes in (([0, 1], [1, 0]), ([1], [0]), 0, ([0], [1])):
        assert_eq(mt.tensordot(mt.tensor(x, chunk_size=2), mt.tensor(y, chunk_size=(3, 1, 2)), axes=axes),
                  np.tensordot(x, y, axes=axes))


def test_many_contracted_chunks_sum_by_a_tree():
    x, y = RS.rand(3, 40), RS.rand(40, 2)
    assert_eq(mt.tensor(x, chunk_size=(3, 1)) @ mt.tensor(y, chunk_size=(1, 2)), x @ y)


def test_errors_as_numpy_when_built():
    ta, tb = mt.tensor(A), mt.tensor(A)
    with pytest.raises(ValueError, match="not aligned"):
        mt.dot(ta, tb)
    with pytest.raises(ValueError, match="mismatch"):
        ta @ tb
    with pytest.raises(ValueError, match="shape-mismatch"):
        mt.tensordot(ta, tb, axes=([0], [1]))
    with pytest.raises(ValueError, match="enough dimensions"):
        mt.matmul(mt.tensor(3.0), ta)
    with pytest.raises(ValueError, match="last dimensions differ"):
        mt.inner(ta, mt.ones(3))


NORM_ORDS = [None, "fro", 1, -1, np.inf, -np.inf, 2, -2, "nuc"]


@pytest.mark.parametrize("ord", NORM_ORDS)
@pytest.mark.parametrize("chunk_size", chunkings(A.shape))
def test_matrix_norms(ord, chunk_size):
    t = mt.tensor(A, chunk_size=chunk_size)
    assert_eq(mt.linalg.norm(t, ord), np.linalg.norm(A, ord))
    assert_eq(mt.linalg.norm(t, ord, axis=(1, 0), keepdims=True), np.linalg.norm(A, ord, axis=(1, 0), keepdims=True))


@pytest.mark.parametrize("ord", [None, 1, 2, 3, 0, np.inf, -np.inf, 0.5])
def test_vector_norms(ord):
    v = RS.randn(9)
    assert_eq(mt.linalg.norm(mt.tensor(v, chunk_size=4), ord), np.linalg.norm(v, ord))
    assert_eq(mt.linalg.norm(mt.tensor(A, chunk_size=3), ord, axis=1), np.linalg.norm(A, ord, axis=1))
    c = v + 1j
    assert_eq(mt.linalg.norm(mt.tensor(c, chunk_size=2), ord), np.linalg.norm(c, ord))


def test_norm_of_ints_and_numpy_dispatch():
    x = np.arange(12).reshape(3, 4)
    assert_eq(mt.linalg.norm(mt.tensor(x, chunk_size=2)), np.linalg.norm(x))
    assert isinstance(np.linalg.norm(mt.tensor(x)), mt.Tensor)
    with pytest.raises(ValueError, match="Invalid norm order"):
        mt.linalg.norm(mt.tensor(x), "bad")
    with pytest.raises(ValueError, match="Improper number"):
        mt.linalg.norm(mt.ones((2, 2, 2)), 1)


@settings(max_examples=30, deadline=None)
@given(m=st.integers(1, 7), k=st.integers(1, 7), n=st.integers(1, 7),
       ca=st.integers(1, 7), ck=st.integers(1, 7), ck2=st.integers(1, 7), cn=st.integers(1, 7))
def test_matmul_random_shapes_and_chunkings(m, k, n, ca, ck, ck2, cn):
    x, y = RS.rand(m, k), RS.rand(k, n)
    assert_eq(mt.tensor(x, chunk_size=(ca, ck)) @ mt.tensor(y, chunk_size=(ck2, cn)), x @ y)
