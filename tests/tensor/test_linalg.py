"""Products (tensordot, dot, matmul, inner, outer, vdot) and norms against numpy.

Across chunkings: one chunk, ragged chunks, chunks of size 1, uneven tuples,
and inputs cut differently along the contracted axis.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mars.tensor as mt
from mars.core.options import option_context
from mars.core.tiling import tile_now
from mars.tensor.linalg.products import TensorDotBlock, TensorSumBlocks

from tensor_testing import assert_eq, chunkings

RS = np.random.RandomState(7)
A = RS.rand(7, 5)
B = RS.rand(5, 6)
V = RS.rand(5)


def _ops_of(t: mt.Tensor, kind: type) -> int:
    """Chunk ops of ``kind`` that computing ``t`` runs (distinct keys)."""
    tile_now(t)
    seen, stack, found = set(), list(t.data.chunks), set()
    while stack:
        c = stack.pop()
        if c.key in seen:
            continue
        seen.add(c.key)
        if isinstance(c.op, kind):
            found.add(c.op.key)
        stack.extend(c.op.inputs)
    return len(found)


def _raises_like(build, expected):
    """``build()`` raises, while building, what numpy's ``expected()`` raises."""
    with pytest.raises(Exception) as np_info:
        expected()
    with pytest.raises(type(np_info.value)):
        build()


# ----------------------------------------------------------------- products
@pytest.mark.parametrize("ca", chunkings(A.shape))
@pytest.mark.parametrize("cb", [(5, 6), (2, 4), 1, ((1, 4), (6,)), ((3, 2), (1, 5))])
def test_matrix_products_across_chunkings(ca, cb):
    ta, tb = mt.tensor(A, chunk_size=ca), mt.tensor(B, chunk_size=cb)
    assert_eq(ta @ tb, A @ B)
    assert_eq(mt.dot(ta, tb), np.dot(A, B))
    assert_eq(ta.dot(tb), A.dot(B))
    assert_eq(mt.matmul(ta, tb), np.matmul(A, B))
    assert_eq(mt.tensordot(ta, tb, axes=1), np.tensordot(A, B, axes=1))
    assert_eq(mt.inner(ta, tb.T), np.inner(A, B.T))
    assert_eq(tb.T @ ta.T, B.T @ A.T)


@pytest.mark.parametrize("chunk_size", chunkings(A.shape))
def test_products_of_a_tensor_with_itself(chunk_size):
    t = mt.tensor(A, chunk_size=chunk_size)
    assert_eq(mt.inner(t, t), np.inner(A, A))
    assert_eq(t.T @ t, A.T @ A)
    assert_eq(t @ t.T, A @ A.T)
    assert_eq(mt.dot(t, t.T), np.dot(A, A.T))
    assert_eq(mt.tensordot(t, t, axes=([0, 1], [0, 1])), np.tensordot(A, A, axes=([0, 1], [0, 1])))
    c = A + 1j * A[::-1]
    tc = mt.tensor(c, chunk_size=chunk_size)
    assert_eq(mt.inner(tc, tc), np.inner(c, c))  # symmetric, not Hermitian: no conjugate


def test_gram_matrices_compute_only_the_upper_blocks():
    t = mt.tensor(RS.rand(8, 4), chunk_size=2)  # 4 row blocks: 10 distinct blocks, not 16
    assert _ops_of(mt.inner(t, t), TensorDotBlock) == 10
    assert _ops_of(t @ t.T, TensorDotBlock) == 10
    assert _ops_of(t.T @ t, TensorDotBlock) == 3  # 2 column blocks: 3 of 4
    assert _ops_of(t @ (t + 0).T, TensorDotBlock) == 16


def test_one_op_per_output_block_and_a_tree_only_for_many_pairs():
    x, y = RS.rand(3, 40), RS.rand(40, 2)
    tx, ty = mt.tensor(x, chunk_size=(3, 1)), mt.tensor(y, chunk_size=(1, 2))
    assert _ops_of(mt.tensor(x, chunk_size=(3, 10)) @ mt.tensor(y, chunk_size=(10, 2)), TensorDotBlock) == 1
    with option_context({"combine_size": 4}):
        product = tx @ ty  # 40 pairs, at most 16 per op: 3 groups and one sum
        assert _ops_of(product, TensorDotBlock) == 3
        assert _ops_of(product, TensorSumBlocks) == 1
        assert_eq(product, x @ y)
    with option_context({"combine_size": 2}):
        assert_eq(tx @ ty, x @ y)
        assert_eq(mt.tensor(x, chunk_size=1) @ mt.tensor(y, chunk_size=(3, 1)), x @ y)


def test_vector_cases_and_scalars():
    w = RS.rand(5)
    tv, tw = mt.tensor(V, chunk_size=2), mt.tensor(w, chunk_size=3)
    ta, tb = mt.tensor(A, chunk_size=3), mt.tensor(B, chunk_size=2)
    assert_eq(mt.dot(tv, tw), np.dot(V, w))
    assert_eq(mt.inner(tv, tw), np.inner(V, w))
    assert_eq(tv @ tw, V @ w)
    assert_eq(ta @ tv, A @ V)
    assert_eq(tv @ tb, V @ B)
    assert_eq(mt.dot(ta, tw), A.dot(w))
    assert_eq(mt.dot(tv, tb), V.dot(B))
    assert_eq(mt.tensordot(tv, tw, axes=0), np.tensordot(V, w, axes=0))
    assert_eq(mt.dot(3, tv), np.dot(3, V))
    assert_eq(mt.dot(2, mt.ones(3, dtype=np.int8)), np.dot(2, np.ones(3, dtype=np.int8)))
    assert_eq(mt.inner(ta, 2.5), np.inner(A, 2.5))
    assert_eq(mt.dot(mt.tensor(2.0), mt.tensor(3.0)), np.dot(2.0, 3.0))
    assert_eq(mt.outer(tv, tb), np.outer(V, B))
    assert_eq(mt.outer(tv, 3), np.outer(V, 3))
    assert_eq(mt.linalg.outer(tv, tw), np.linalg.outer(V, w))
    assert_eq(mt.vdot(tv, tw), np.vdot(V, w))
    assert_eq(mt.vdot(ta, ta), np.vdot(A, A))
    c = V + 1j * w
    assert_eq(mt.vdot(mt.tensor(c, chunk_size=2), mt.tensor(c[::-1], chunk_size=4)), np.vdot(c, c[::-1]))


def test_higher_dimensional_dot_and_inner():
    x, y = RS.rand(2, 3, 4), RS.rand(5, 4, 2)
    tx, ty = mt.tensor(x, chunk_size=(1, 2, 3)), mt.tensor(y, chunk_size=(2, 1, 2))
    assert_eq(mt.dot(tx, ty), np.dot(x, y))
    assert_eq(mt.dot(tx, mt.tensor(V[:4], chunk_size=3)), np.dot(x, V[:4]))
    assert_eq(mt.dot(mt.tensor(V[:4], chunk_size=3), ty), np.dot(V[:4], y))
    assert_eq(mt.inner(tx, tx), np.inner(x, x))
    assert_eq(mt.inner(tx, mt.tensor(y[0], chunk_size=2).T), np.inner(x, y[0].T))


INT_AND_FLOAT = [("int64", "int64"), ("int8", "int8"), ("uint8", "int8"), ("int32", "float32"), ("bool", "bool"),
                 ("bool", "int16"), ("float32", "float32"), ("complex64", "float64"), ("complex128", "complex128")]


@pytest.mark.parametrize("dtypes", INT_AND_FLOAT)
def test_product_dtypes_follow_numpy(dtypes):
    a = (RS.rand(4, 3) * 3).astype(dtypes[0])
    b = (RS.rand(3, 2) * 3).astype(dtypes[1])
    if np.dtype(dtypes[0]).kind == "c":
        a = a + 1j * a[::-1]
    ta, tb = mt.tensor(a, chunk_size=2), mt.tensor(b, chunk_size=(1, 2))
    rtol = 1e-5
    assert_eq(ta @ tb, a @ b, rtol=rtol)
    assert_eq(mt.dot(mt.tensor(a, chunk_size=3), tb), np.dot(a, b), rtol=rtol)
    assert_eq(mt.inner(ta, tb.T), np.inner(a, b.T), rtol=rtol)
    assert_eq(mt.tensordot(ta, tb, axes=([1], [0])), np.tensordot(a, b, axes=([1], [0])), rtol=rtol)
    assert_eq(mt.vdot(ta[:2], tb.T), np.vdot(a[:2], b.T), rtol=rtol)
    assert_eq(mt.outer(ta[0], tb[:, 1]), np.outer(a[0], b[:, 1]), rtol=rtol)
    assert_eq(mt.tensor(a[:, None], chunk_size=1) @ mt.tensor(b, chunk_size=2), a[:, None] @ b, rtol=rtol)


@pytest.mark.parametrize("ca, cb", [(2, 3), (1, (1, 3, 2)), ((2, 3, 2, 3), 4), (((1, 1), 2, 3, 4), ((2, 1), 5, 1))])
def test_batched_matmul_broadcasts_batch_dims(ca, cb):
    x, y = RS.rand(2, 3, 4, 5), RS.rand(3, 5, 2)
    assert_eq(mt.tensor(x, chunk_size=ca) @ mt.tensor(y, chunk_size=cb), x @ y)
    z = RS.rand(1, 5, 3)
    assert_eq(mt.tensor(x, chunk_size=ca) @ mt.tensor(z, chunk_size=2), x @ z)
    u = RS.rand(1, 3, 4)
    assert_eq(mt.tensor(u, chunk_size=2) @ mt.tensor(x, chunk_size=ca), u @ x)
    assert_eq(mt.tensor(x, chunk_size=ca) @ mt.tensor(V, chunk_size=2), x @ V)
    assert_eq(mt.tensor(V[:4], chunk_size=3) @ mt.tensor(x, chunk_size=ca), V[:4] @ x)
    assert_eq(mt.tensor(A[:3, :4], chunk_size=2) @ mt.tensor(x, chunk_size=ca), A[:3, :4] @ x)
    w = RS.rand(2, 1, 5, 1)
    assert_eq(mt.tensor(x, chunk_size=ca) @ mt.tensor(w, chunk_size=1), x @ w)


def test_batched_matmul_dtypes_and_numpy_dispatch():
    x, y = (RS.rand(2, 3, 4) * 4).astype(np.int8), RS.rand(4, 2) > 0.5
    assert_eq(mt.tensor(x, chunk_size=2) @ mt.tensor(y, chunk_size=3), x @ y)
    assert_eq(np.matmul(mt.tensor(x, chunk_size=2), mt.tensor(x.swapaxes(1, 2), chunk_size=1)),
              np.matmul(x, x.swapaxes(1, 2)))
    assert isinstance(np.dot(mt.tensor(A), mt.tensor(B)), mt.Tensor)
    assert_eq(mt.linalg.matmul(mt.tensor(x, chunk_size=2), mt.tensor(y, chunk_size=3)), np.linalg.matmul(x, y))
    t = mt.tensor(A[:5], chunk_size=2)
    t @= mt.tensor(B[:, :5], chunk_size=3)
    assert_eq(t, A[:5] @ B[:, :5])


@pytest.mark.parametrize("axes", [([0, 1], [1, 0]), ([1], [0]), 0, ([0], [1]), ([-1, 0], [2, 1]), 2, (2, 2)])
def test_tensordot_general_axes(axes):
    x, y = RS.rand(3, 4, 5), RS.rand(4, 3, 5)
    if axes == 2:
        y = RS.rand(4, 5, 2)
    assert_eq(mt.tensordot(mt.tensor(x, chunk_size=2), mt.tensor(y, chunk_size=(3, 1, 2)), axes=axes),
              np.tensordot(x, y, axes=axes))
    assert_eq(mt.linalg.tensordot(mt.tensor(x, chunk_size=2), mt.tensor(y, chunk_size=3), axes=axes),
              np.linalg.tensordot(x, y, axes=axes))


def test_transposed_inputs():
    x = RS.rand(3, 4, 5)
    tx = mt.tensor(x, chunk_size=(2, 3, 2))
    for perm in [(2, 0, 1), (1, 0, 2), (0, 2, 1), (2, 1, 0)]:
        xp = x.transpose(perm)
        assert_eq(mt.tensordot(mt.transpose(tx, perm), tx, axes=([1, 2], [perm[1], perm[2]])),
                  np.tensordot(xp, x, axes=([1, 2], [perm[1], perm[2]])))
        assert_eq(mt.tensordot(tx.transpose(perm), tx, axes=([0], [perm[0]])),
                  np.tensordot(xp, x, axes=([0], [perm[0]])))
        assert_eq(mt.inner(tx.transpose(perm), tx.transpose(perm)), np.inner(xp, xp))
    assert_eq(tx.transpose(0, 2, 1) @ tx, x.transpose(0, 2, 1) @ x)
    assert_eq(tx.swapaxes(0, 1) @ mt.tensor(x, chunk_size=2).swapaxes(0, 1).swapaxes(1, 2),
              x.swapaxes(0, 1) @ x.swapaxes(0, 1).swapaxes(1, 2))


def test_empty_and_size_one_dimensions():
    assert_eq(mt.tensor(np.zeros((0, 4))) @ mt.tensor(B[:4], chunk_size=2), np.zeros((0, 4)) @ B[:4])
    assert_eq(mt.tensor(np.zeros((3, 0))) @ mt.tensor(np.zeros((0, 2))), np.zeros((3, 0)) @ np.zeros((0, 2)))
    assert_eq(mt.dot(mt.zeros((3, 0), dtype=int), mt.zeros((0, 2), dtype=int)), np.zeros((3, 2), dtype=int))
    assert_eq(mt.dot(mt.zeros(0), mt.zeros(0)), np.dot(np.zeros(0), np.zeros(0)))
    assert_eq(mt.zeros((2, 3, 0)) @ mt.zeros((0, 2)), np.zeros((2, 3, 0)) @ np.zeros((0, 2)))
    assert_eq(mt.tensor(A[:1], chunk_size=1) @ mt.tensor(A[:1].T, chunk_size=1), A[:1] @ A[:1].T)


def test_sizes_known_only_after_running():
    ta = mt.tensor(A, chunk_size=2)
    rows = ta[ta[:, 0] > 0.3]
    kept = A[A[:, 0] > 0.3]
    assert_eq(rows @ mt.tensor(B, chunk_size=3), kept @ B)
    assert_eq(mt.inner(rows, rows), np.inner(kept, kept))
    assert_eq(rows.T @ rows, kept.T @ kept)
    tv = mt.tensor(V, chunk_size=2)
    assert_eq(mt.dot(tv[tv > 0.3], mt.tensor(V, chunk_size=3)[tv > 0.3]), np.dot(V[V > 0.3], V[V > 0.3]))
    assert_eq(mt.linalg.norm(rows, "nuc"), np.linalg.norm(kept, "nuc"))


def test_errors_as_numpy_when_built():
    ta, tv = mt.tensor(A), mt.tensor(V[:3])
    with pytest.raises(ValueError, match=r"shapes \(7,5\) and \(7,5\) not aligned: 5 \(dim 1\) != 7 \(dim 0\)"):
        mt.dot(ta, ta)
    with pytest.raises(ValueError, match=r"size 7 is different from 5"):
        ta @ ta
    with pytest.raises(ValueError, match="not aligned"):
        mt.inner(ta, mt.ones(3))
    with pytest.raises(ValueError, match="shape-mismatch for sum"):
        mt.tensordot(ta, ta, axes=([0], [1]))
    with pytest.raises(ValueError, match="does not have enough dimensions"):
        mt.matmul(mt.tensor(3.0), ta)
    with pytest.raises(ValueError, match="3 and 5"):
        mt.vdot(tv, mt.tensor(V))
    with pytest.raises(ValueError, match="one-dimensional"):
        mt.linalg.outer(ta, tv)
    with pytest.raises(ValueError, match=r"broadcast together with remapped shapes .*\(2,3,4\).*\(3,4,2\)"):
        mt.ones((2, 3, 4)) @ mt.ones((3, 4, 2))
    cases = [
        (lambda m: m.tensordot(m.ones((2, 3)), m.ones((2, 3)), 3)),
        (lambda m: m.tensordot(m.ones((2, 3)), m.ones((2, 3)), ([5], [0]))),
        (lambda m: m.tensordot(m.ones((2, 3)), m.ones((2, 3)), ([0, 1], [0]))),
        (lambda m: m.tensordot(m.ones((2, 2)), m.ones((2, 2)), ([0, 0], [0, 1]))),
        (lambda m: m.tensordot(m.ones((2, 2)), m.ones((2, 2)), [1])),
        (lambda m: m.matmul(m.ones((2, 3)), m.ones(2))),
        (lambda m: m.dot(m.ones(3), m.ones(2))),
    ]
    for case in cases:
        _raises_like(lambda: case(mt), lambda: case(np))


def test_negative_axes_count_contracts_nothing_like_numpy():
    x = RS.rand(2, 3)
    assert_eq(mt.tensordot(mt.tensor(x, chunk_size=2), mt.tensor(x, chunk_size=1), -1), np.tensordot(x, x, -1))


# ----------------------------------------------------------------- norms
MATRIX_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


@pytest.mark.parametrize("ord", MATRIX_ORDS)
@pytest.mark.parametrize("chunk_size", chunkings(A.shape))
def test_matrix_norms(ord, chunk_size):
    t = mt.tensor(A - 0.5, chunk_size=chunk_size)
    assert_eq(mt.linalg.norm(t, ord), np.linalg.norm(A - 0.5, ord))
    assert_eq(mt.linalg.norm(t, ord, axis=(1, 0), keepdims=True),
              np.linalg.norm(A - 0.5, ord, axis=(1, 0), keepdims=True))


@pytest.mark.parametrize("ord", MATRIX_ORDS)
def test_matrix_norms_over_axis_pairs_of_a_stack(ord):
    x = RS.randn(3, 4, 5) + 1j * RS.randn(3, 4, 5)
    t = mt.tensor(x, chunk_size=(1, 3, 2))
    for axis in [(1, 2), (2, 0), (-1, -3)]:
        assert_eq(mt.linalg.norm(t, ord, axis=axis), np.linalg.norm(x, ord, axis=axis))
        assert_eq(mt.linalg.norm(t, ord, axis=axis, keepdims=True), np.linalg.norm(x, ord, axis=axis, keepdims=True))
    assert_eq(mt.linalg.matrix_norm(t, ord=ord or "fro"), np.linalg.matrix_norm(x, ord=ord or "fro"))


@pytest.mark.parametrize("ord", [None, 1, 2, 3, 0, np.inf, -np.inf, 0.5, -1, -1.5])
def test_vector_norms(ord):
    v = RS.randn(9)
    assert_eq(mt.linalg.norm(mt.tensor(v, chunk_size=4), ord), np.linalg.norm(v, ord))
    x = A - 0.5
    for axis in (0, 1, -1):
        assert_eq(mt.linalg.norm(mt.tensor(x, chunk_size=3), ord, axis=axis), np.linalg.norm(x, ord, axis=axis))
    assert_eq(mt.linalg.norm(mt.tensor(x, chunk_size=2), ord, axis=0, keepdims=True),
              np.linalg.norm(x, ord, axis=0, keepdims=True))
    c = v + 1j * v[::-1]
    assert_eq(mt.linalg.norm(mt.tensor(c, chunk_size=2), ord), np.linalg.norm(c, ord))
    f = v.astype(np.float32)
    assert_eq(mt.linalg.norm(mt.tensor(f, chunk_size=2), ord), np.linalg.norm(f, ord), rtol=1e-5)
    y = RS.randn(3, 4, 2)
    for axis in (None, 1, (0, 2), (2, 1, 0)):
        expected = np.linalg.vector_norm(y, ord=2 if ord is None else ord, axis=axis, keepdims=True)
        assert_eq(mt.linalg.vector_norm(mt.tensor(y, chunk_size=2), ord=2 if ord is None else ord, axis=axis,
                                        keepdims=True), expected)


@pytest.mark.parametrize("dtype", ["int64", "int8", "bool", "float16", "complex64"])
def test_norm_dtypes_follow_numpy(dtype):
    x = (RS.rand(4, 6) * 5).astype(dtype)
    t = mt.tensor(x, chunk_size=(3, 4))
    for ord in [None, 1, np.inf, 0] + (["nuc", 2] if dtype != "float16" else []):
        axis = None if ord != 0 else 1
        assert_eq(mt.linalg.norm(t, ord, axis=axis), np.linalg.norm(x, ord, axis=axis), rtol=2e-3)


def test_norm_of_everything_and_of_empty_inputs():
    x = RS.randn(2, 3, 4)
    assert_eq(mt.linalg.norm(mt.tensor(x, chunk_size=2)), np.linalg.norm(x))
    assert_eq(mt.linalg.norm(mt.tensor(x, chunk_size=2), keepdims=True), np.linalg.norm(x, keepdims=True))
    assert_eq(mt.linalg.norm(mt.tensor(3.0)), np.linalg.norm(np.float64(3.0)))
    assert_eq(mt.linalg.norm(mt.tensor(A, chunk_size=2), axis=1.0), np.linalg.norm(A, axis=1.0))
    for shape in [(0,), (0, 3), (3, 0)]:
        for ord in [None, 1, np.inf, 2] + (["fro", "nuc"] if len(shape) == 2 else [0]):
            _norm_like_numpy(np.zeros(shape), ord)


def _norm_like_numpy(x, ord):
    try:
        expected = np.linalg.norm(x, ord)
    except ValueError:  # numpy before 2.3: the inf-norms of empty inputs have no identity
        with pytest.raises(ValueError):
            mt.linalg.norm(mt.tensor(x), ord)
        return
    assert_eq(mt.linalg.norm(mt.tensor(x), ord), expected)


def test_norm_errors_and_numpy_dispatch():
    x = np.arange(12).reshape(3, 4)
    assert isinstance(np.linalg.norm(mt.tensor(x)), mt.Tensor)
    assert_eq(np.linalg.norm(mt.tensor(x, chunk_size=2), 1), np.linalg.norm(x, 1))
    with pytest.raises(ValueError, match="Invalid norm order 'fro' for vectors"):
        mt.linalg.norm(mt.ones(3), "fro")
    cases = [
        (lambda m: m.linalg.norm(m.ones((2, 2)), "bad")),
        (lambda m: m.linalg.norm(m.ones((2, 2)), 3)),
        (lambda m: m.linalg.norm(m.ones((2, 2, 2)), 1)),
        (lambda m: m.linalg.norm(m.ones((2, 2, 2)), axis=(0, 1, 2))),
        (lambda m: m.linalg.norm(m.ones((2, 2)), axis=(0, -2))),
        (lambda m: m.linalg.norm(m.ones((2, 2)), axis=(0, 2))),
        (lambda m: m.linalg.norm(m.ones((2, 2)), axis=2)),
        (lambda m: m.linalg.norm(m.ones((2, 2)), axis=[0, 1])),
        (lambda m: m.linalg.norm(m.ones((2, 2)), 2, axis=(0, 1.5))),
        (lambda m: m.linalg.norm(m.ones(()), 1)),
        (lambda m: m.linalg.norm(m.ones((2, 2), dtype=np.float16), 2)),
        (lambda m: m.linalg.matrix_norm(m.ones(3))),
    ]
    for case in cases:
        _raises_like(lambda: case(mt), lambda: case(np))


# ----------------------------------------------------------------- random shapes
@st.composite
def _tensordot_case(draw):
    n_k = draw(st.integers(0, 2))
    k_sizes = [draw(st.integers(1, 5)) for _ in range(n_k)]
    a_free = [draw(st.integers(1, 4)) for _ in range(draw(st.integers(0, 2)))]
    b_free = [draw(st.integers(1, 4)) for _ in range(draw(st.integers(0, 2)))]
    a_order = draw(st.permutations(range(len(a_free) + n_k)))
    b_order = draw(st.permutations(range(len(b_free) + n_k)))
    # a's dims in a_order: first the free ones, then the contracted ones (same for b)
    a_shape = [0] * len(a_order)
    b_shape = [0] * len(b_order)
    for pos, size in zip(a_order, a_free + k_sizes):
        a_shape[pos] = size
    for pos, size in zip(b_order, b_free + k_sizes):
        b_shape[pos] = size
    axes = (list(a_order[len(a_free):]), list(b_order[len(b_free):]))
    chunks = [tuple(draw(st.integers(1, s)) for s in shape) for shape in (a_shape, b_shape)]
    return tuple(a_shape), tuple(b_shape), axes, chunks


@settings(max_examples=30, deadline=None)
@given(_tensordot_case())
def test_tensordot_random_shapes_axes_and_chunkings(case):
    a_shape, b_shape, axes, (ca, cb) = case
    x, y = RS.rand(*a_shape), RS.rand(*b_shape)
    assert_eq(mt.tensordot(mt.tensor(x, chunk_size=ca), mt.tensor(y, chunk_size=cb), axes=axes),
              np.tensordot(x, y, axes=axes))


@st.composite
def _matmul_case(draw):
    batch = [draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, 2)))]
    n, k, m = (draw(st.integers(1, 4)) for _ in range(3))
    shapes = []
    for core in ([n, k], [k, m]):
        own = batch[draw(st.integers(0, len(batch))):]
        own = [1 if draw(st.booleans()) else s for s in own]
        shapes.append(tuple(own + core))
    a_shape, b_shape = shapes
    if draw(st.booleans()):
        a_shape = a_shape[-1:] if draw(st.booleans()) else a_shape
    elif draw(st.booleans()):
        b_shape = b_shape[-2:-1]
    chunks = [tuple(draw(st.integers(1, s)) for s in shape) for shape in (a_shape, b_shape)]
    return a_shape, b_shape, chunks


@settings(max_examples=30, deadline=None)
@given(_matmul_case())
def test_matmul_random_batches_and_chunkings(case):
    a_shape, b_shape, (ca, cb) = case
    x, y = RS.rand(*a_shape), RS.rand(*b_shape)
    assert_eq(mt.tensor(x, chunk_size=ca) @ mt.tensor(y, chunk_size=cb), x @ y)
