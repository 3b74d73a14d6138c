"""Sparse tensors: scipy.sparse CSR chunks, compared with scipy and numpy across chunkings."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from tensor_testing import assert_eq, chunkings

import mars.tensor as mt

SHAPE = (7, 5)
CHUNKINGS = chunkings(SHAPE)  # one chunk, ragged, size 1, uneven first axis


def _matrix(seed: int = 0, shape: tuple = SHAPE, dtype: str = "float64") -> sp.csr_matrix:
    m = sp.random(*shape, density=0.4, format="csr", random_state=seed)
    if np.dtype(dtype).kind in "iu":
        m.data = np.ceil(m.data * 9)
    return sp.csr_matrix(m, dtype=dtype)


def _assert_sparse_eq(t: mt.Tensor, expected: sp.spmatrix) -> None:
    assert t.issparse() and mt.issparse(t)
    assert tuple(t.shape) == expected.shape and t.dtype == expected.dtype, (t.shape, t.dtype)
    value = t.execute().fetch()
    assert type(value) is sp.csr_matrix
    assert value.shape == expected.shape and value.dtype == expected.dtype
    np.testing.assert_allclose(value.toarray(), expected.toarray(), rtol=1e-12)


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
@pytest.mark.parametrize("dtype", ["float64", "int32", "float32"])
def test_tensor_of_a_scipy_matrix_fetches_as_csr(chunk_size, dtype):
    m = _matrix(dtype=dtype)
    t = mt.tensor(m.tocoo(), chunk_size=chunk_size)
    _assert_sparse_eq(t, m)
    dense = t.todense()
    assert not dense.issparse()
    assert_eq(dense, m.toarray())
    np.testing.assert_array_equal(np.asarray(t), m.toarray())


@pytest.mark.parametrize("chunk_size", CHUNKINGS[:2])
def test_sparse_true_and_tosparse_make_sparse_tensors_from_dense_data(chunk_size):
    x = _matrix(1).toarray()
    _assert_sparse_eq(mt.tensor(x, chunk_size=chunk_size, sparse=True), sp.csr_matrix(x))
    _assert_sparse_eq(mt.tensor(x, chunk_size=chunk_size).tosparse(), sp.csr_matrix(x))
    assert not mt.issparse(mt.tensor(x)) and mt.issparse(sp.csr_matrix(x)) and not mt.issparse(x)
    with pytest.raises(ValueError, match="2 dimensions"):
        mt.ones(3).tosparse()


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
@pytest.mark.parametrize("name,func", [
    ("scalar multiply", lambda x: x * 2.5),
    ("negative", lambda x: -x),
    ("abs", abs),
    ("sqrt", lambda x: np.sqrt(abs(x))),
    ("power", lambda x: x ** 3),
    ("greater", lambda x: x > 0.5),
    ("astype", lambda x: x.astype("float32")),
])
def test_elementwise_ops_that_map_zero_to_zero_stay_sparse(chunk_size, name, func):
    m = _matrix(2)
    t = mt.tensor(m, chunk_size=chunk_size)
    result = func(t)
    assert result.issparse(), name
    expected = func(m.toarray())
    assert result.dtype == expected.dtype
    _assert_sparse_eq(result, sp.csr_matrix(expected))


@pytest.mark.parametrize("chunk_size", CHUNKINGS[:3])
@pytest.mark.parametrize("func", [lambda x: x + 1, np.cos, lambda x: x == 0, lambda x: np.exp(x) - 1])
def test_elementwise_ops_that_do_not_map_zero_to_zero_give_dense_results(chunk_size, func):
    m = _matrix(3)
    result = func(mt.tensor(m, chunk_size=chunk_size))
    assert not result.issparse()
    assert_eq(result, func(m.toarray()))


@pytest.mark.parametrize("chunks", [(SHAPE, 2), (3, ((1, 5, 1), (2, 3))), (1, SHAPE)])
def test_binary_ops_of_two_sparse_tensors_on_different_chunkings(chunks):
    a, b = _matrix(4), _matrix(5)
    ta, tb = mt.tensor(a, chunk_size=chunks[0]), mt.tensor(b, chunk_size=chunks[1])
    _assert_sparse_eq(ta + tb, a + b)
    _assert_sparse_eq(ta - tb, a - b)
    _assert_sparse_eq(ta * tb, a.multiply(b))
    _assert_sparse_eq(mt.maximum(ta, tb), a.maximum(b))
    x = np.random.default_rng(0).random(SHAPE)
    _assert_sparse_eq(ta * mt.tensor(x, chunk_size=chunks[1]), a.multiply(x))  # scipy's multiply: sparse
    plus = ta + mt.tensor(x, chunk_size=2)
    assert not plus.issparse()
    assert_eq(plus, a.toarray() + x)


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
@pytest.mark.parametrize("other_chunk", [3, 1, 5])
def test_products_of_sparse_and_dense_and_sparse_and_sparse(chunk_size, other_chunk):
    a, b = _matrix(6), _matrix(7, shape=(5, 4))
    x = np.random.default_rng(1).random((5, 3))
    v = np.arange(5.0)
    ta, tb = mt.tensor(a, chunk_size=chunk_size), mt.tensor(b, chunk_size=other_chunk)
    assert_eq(ta @ mt.tensor(x, chunk_size=other_chunk), a @ x)
    assert_eq(ta.dot(mt.tensor(v, chunk_size=other_chunk)), a @ v)
    assert_eq(mt.matmul(mt.tensor(x.T, chunk_size=other_chunk), tb), x.T @ b.toarray())
    assert_eq(mt.tensor(np.arange(7.0), chunk_size=2) @ ta, np.arange(7.0) @ a.toarray())
    _assert_sparse_eq(ta @ tb, a @ b)
    _assert_sparse_eq(mt.dot(ta.T, ta), a.T @ a)
    _assert_sparse_eq(ta @ ta.T, a @ a.T)


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
@pytest.mark.parametrize("dtype", ["float64", "int32"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_reductions_equal_numpys_on_the_dense_matrix(chunk_size, dtype, axis):
    m = _matrix(8, dtype=dtype)
    m.data = m.data - 0.5 if m.dtype.kind == "f" else m.data - 5  # negatives: max/min see the implicit zeros
    t, x = mt.tensor(m, chunk_size=chunk_size), m.toarray()
    for name in ("sum", "mean", "max", "min"):
        expected = getattr(np, name)(x, axis=axis)
        assert_eq(getattr(mt, name)(t, axis=axis), expected, rtol=1e-12)
    assert_eq(t.sum(axis=axis, keepdims=True), x.sum(axis=axis, keepdims=True))
    assert_eq(t.max(axis=axis, keepdims=True), x.max(axis=axis, keepdims=True))
    assert_eq(t.sum(axis=axis, dtype="float32"), x.sum(axis=axis, dtype="float32"), rtol=1e-6)


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_transpose_rechunk_and_slices_stay_sparse(chunk_size):
    m = _matrix(9)
    t = mt.tensor(m, chunk_size=chunk_size)
    _assert_sparse_eq(t.T, m.T.tocsr())
    _assert_sparse_eq(mt.transpose(t, (1, 0)), m.T.tocsr())
    _assert_sparse_eq(t.rechunk(3), m)
    for index in [(slice(1, 6, 2), slice(None, None, -1)), (slice(None, None, -2),), (slice(2, 3), slice(1, 4)),
                  (Ellipsis, slice(3, None))]:
        _assert_sparse_eq(t[index], sp.csr_matrix(m.toarray()[index]))
    _assert_sparse_eq(t[1:6][::2, 1:], sp.csr_matrix(m.toarray()[1:6][::2, 1:]))


@pytest.mark.parametrize("chunk_size", CHUNKINGS[:3])
def test_integer_indices_and_new_axes_give_dense_results(chunk_size):
    m = _matrix(10)
    t, x = mt.tensor(m, chunk_size=chunk_size), m.toarray()
    for index in [2, -1, (slice(None), 3), (4, 1), (None, slice(1, 3)), (slice(None, None, -1), -2)]:
        result = t[index]
        assert not result.issparse()
        assert_eq(result, x[index])


def test_ops_without_sparse_support_raise_a_type_error_naming_todense():
    t = mt.tensor(_matrix(11), chunk_size=3)
    for call in (lambda: mt.cumsum(t, axis=0), lambda: mt.sort(t), lambda: t.reshape(35), lambda: t[[0, 2]],
                 lambda: mt.prod(t), lambda: mt.concatenate([t, t]), lambda: mt.tensordot(t, t, axes=2)):
        with pytest.raises(TypeError, match=r"\.todense\(\)"):
            call()
    assert_eq(mt.cumsum(t.todense(), axis=0), np.cumsum(_matrix(11).toarray(), axis=0))
