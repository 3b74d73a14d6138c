"""mt.einsum / mt.einsum_path against numpy, across chunkings and optimize settings."""

from __future__ import annotations

import numpy as np
import pytest

import mars.tensor as mt
from mars.core.tiling import tile_now
from mars.tensor.base.einsum import EinsumPairBlock, TensorEinsumPair

from tensor_testing import assert_eq, chunkings

RS = np.random.RandomState(11)
A = RS.rand(5, 4)
B = RS.rand(4, 6)
C = RS.rand(3, 5, 4)
D = RS.rand(3, 4, 6)
S = RS.rand(5, 5)
V = RS.rand(4)

CASES = [
    ("ij,jk->ik", A, B),
    ("ij,jk", A, B),
    ("ij,kj->ik", A, A),
    ("bij,bjk->bik", C, D),
    ("bij,bjk->bki", C, D),
    ("...ij,...jk->...ik", C, D),
    ("ii", S),
    ("ii->i", S),
    ("ij->ji", A),
    ("ij->", A),
    ("ij->j", A),
    ("i,i", V, V),
    ("i,j->ij", V, V),
    ("ij,j->i", A, V),
    ("ij,ij->ij", A, A),
    ("ij,ij->i", A, A),
    ("bij,bjk,kl->bil", C, D, RS.rand(6, 2)),
    ("ab,bc,cd->ad", A, B, RS.rand(6, 3)),
    ("iij->ij", RS.rand(3, 3, 2)),
    ("iji->j", RS.rand(3, 2, 3)),
    ("ijk,ikj->i", RS.rand(2, 3, 3), RS.rand(2, 3, 3)),
    ("...i->...", C),
    ("i...->...", C),
]


def _chunked(ops, chunk_size):
    return [mt.tensor(x, chunk_size=chunk_size) for x in ops]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("chunk_size", [None, 2, 1])
def test_matches_numpy(case, chunk_size):
    sub, *ops = case
    expected = np.einsum(sub, *ops)
    for optimize in (False, True):
        assert_eq(mt.einsum(sub, *_chunked(ops, chunk_size or max(max(x.shape) for x in ops)),
                            optimize=optimize), expected, rtol=1e-10)


@pytest.mark.parametrize("chunk_size", chunkings(C.shape))
def test_batch_across_chunkings(chunk_size):
    assert_eq(mt.einsum("bij,bjk->bik", mt.tensor(C, chunk_size=chunk_size), D), np.einsum("bij,bjk->bik", C, D))


def test_operands_cut_differently():
    a, b = mt.tensor(C, chunk_size=(1, 2, 3)), mt.tensor(D, chunk_size=(2, 1, 4))
    assert_eq(mt.einsum("bij,bjk->bik", a, b), np.einsum("bij,bjk->bik", C, D))
    assert_eq(mt.einsum("ij,jk", mt.tensor(A, chunk_size=(2, 3)), mt.tensor(B, chunk_size=(1, 5))), A @ B)


@pytest.mark.parametrize("optimize", ["greedy", "optimal", ["einsum_path", (1, 2), (0, 1)],
                                      ["einsum_path", (0, 1, 2)]])
def test_optimize_paths(optimize):
    e = RS.rand(6, 3)
    expected = np.einsum("ab,bc,cd->ad", A, B, e, optimize=optimize)
    assert_eq(mt.einsum("ab,bc,cd->ad", *_chunked((A, B, e), 2), optimize=optimize), expected, rtol=1e-10)


def test_batch_contraction_is_blockwise():
    """bij,bjk->bik makes one output block per batch chunk (never gathered into one chunk)."""
    result = tile_now(mt.einsum("bij,bjk->bik", mt.tensor(C, chunk_size=(1, 5, 4)), mt.tensor(D, chunk_size=(1, 4, 6))))
    assert isinstance(result.op, TensorEinsumPair)
    assert result.data.nsplits == ((1, 1, 1), (5,), (6,))
    assert all(isinstance(c.op, EinsumPairBlock) for c in result.data.chunks)


def test_many_summed_blocks_add_up():
    a, b = RS.rand(2, 3, 40), RS.rand(2, 40, 3)
    assert_eq(mt.einsum("bij,bjk->bik", mt.tensor(a, chunk_size=(1, 3, 2)), mt.tensor(b, chunk_size=(1, 2, 3))),
              np.einsum("bij,bjk->bik", a, b), rtol=1e-10)


@pytest.mark.parametrize("sub, shapes", [("ij,ij->ij", [(1, 4), (5, 4)]), ("ij,jk", [(5, 1), (4, 6)]),
                                         ("...i,...i", [(3, 1, 4), (2, 4)]), ("bij,bjk->bik", [(1, 5, 4), (3, 4, 6)])])
def test_size_one_broadcasts(sub, shapes):
    ops = [RS.rand(*s) for s in shapes]
    for optimize in (False, True):
        assert_eq(mt.einsum(sub, *_chunked(ops, 2), optimize=optimize), np.einsum(sub, *ops, optimize=optimize),
                  rtol=1e-10)


@pytest.mark.parametrize("dtypes, kw", [
    ((np.int64, np.int64), {}), ((np.int32, np.float32), {}), ((np.float32, np.float32), {"dtype": np.float64}),
    ((np.bool_, np.bool_), {}), ((np.complex128, np.float64), {}), ((np.int8, np.int8), {}),
    ((np.float64, np.float64), {"dtype": np.float32, "casting": "same_kind"}),
])
def test_dtypes(dtypes, kw):
    ops = [(RS.rand(3, 4) * 3).astype(dtypes[0]), (RS.rand(4, 2) * 3).astype(dtypes[1])]
    for sub in ("ij,jk", "ij,jk->ijk", "ij->"):
        args = ops if "," in sub else ops[:1]
        assert_eq(mt.einsum(sub, *_chunked(args, 2), **kw), np.einsum(sub, *args, **kw), rtol=1e-6)


def test_scalars_and_empty():
    assert_eq(mt.einsum(",", mt.tensor(2.0), 3.0), np.einsum(",", 2.0, 3.0))
    assert_eq(mt.einsum("i,->i", mt.tensor(V, chunk_size=3), 3.0), np.einsum("i,->i", V, 3.0))
    assert_eq(mt.einsum("i,i", mt.ones(0), mt.ones(0)), np.einsum("i,i", np.ones(0), np.ones(0)))
    z = np.ones((0, 4))
    assert_eq(mt.einsum("ij,jk", mt.tensor(z), mt.tensor(B, chunk_size=2)), np.einsum("ij,jk", z, B))


def test_interleaved_form():
    assert_eq(mt.einsum(mt.tensor(A, chunk_size=2), [0, 1], mt.tensor(B, chunk_size=3), [1, 2], [0, 2]), A @ B)
    assert_eq(mt.einsum(mt.tensor(A, chunk_size=2), [0, 1], B, [1, 2]), np.einsum(A, [0, 1], B, [1, 2]))
    assert_eq(mt.einsum(mt.tensor(C, chunk_size=2), [Ellipsis, 30], [Ellipsis]),
              np.einsum(C, [Ellipsis, 30], [Ellipsis]))


def test_out():
    out = mt.zeros((5, 6))
    assert mt.einsum("ij,jk", mt.tensor(A, chunk_size=2), B, out=out) is out
    assert_eq(out, A @ B, rtol=1e-10)
    with pytest.raises(ValueError, match="wrong shape"):
        mt.einsum("ij,jk", A, B, out=mt.zeros((6, 5)))


@pytest.mark.parametrize("args", [
    ("ij,jk", A, RS.rand(3, 2)),
    ("ij,jk", A),
    ("ij", A, B),
    ("i$j", A),
    ("ij->k", A),
    ("ij->ii", A),
    ("ijk", A),
    ("i", A),
    ("...i->i", C),
    ("ii", A),
    ("i.j", A),
    ("ij->i->j", A),
    ("...ij,...jk", C, RS.rand(2, 4, 6)),
    ("i,i", np.ones(0), np.ones(3)),
    (A, [0, 60]),
])
@pytest.mark.parametrize("optimize", [False, True])
def test_errors_like_numpy(args, optimize):
    tensors = [mt.tensor(a, chunk_size=2) if isinstance(a, np.ndarray) else a for a in args]
    if isinstance(args[0], str) and args[0] == "...i->i" and optimize:  # numpy's optimized path sums the dims '...' leaves out
        assert_eq(mt.einsum(*tensors, optimize=optimize), np.einsum(*args, optimize=optimize), rtol=1e-10)
        return
    with pytest.raises(Exception) as np_info:
        np.einsum(*args, optimize=optimize)
    with pytest.raises(type(np_info.value)) as mt_info:
        mt.einsum(*tensors, optimize=optimize)
    assert str(mt_info.value) == str(np_info.value)


def test_unknown_shape_refused():
    t = mt.tensor(V, chunk_size=2)
    with pytest.raises(ValueError, match="call .execute"):
        mt.einsum("i,i", t[t > 0.5], t[t > 0.5])


def test_casting_error():
    with pytest.raises(TypeError, match="according to the rule 'safe'"):
        mt.einsum("ij,jk", mt.tensor(A), B, dtype=np.float32)


@pytest.mark.parametrize("optimize", ["greedy", "optimal"])
def test_einsum_path(optimize):
    e = RS.rand(6, 3)
    path, text = mt.einsum_path("ab,bc,cd->ad", mt.tensor(A, chunk_size=2), B, e, optimize=optimize)
    np_path, np_text = np.einsum_path("ab,bc,cd->ad", A, B, e, optimize=optimize)
    assert path == np_path and text == np_text


def test_numpy_dispatch():
    result = np.einsum("ij,jk", mt.tensor(A, chunk_size=2), mt.tensor(B, chunk_size=2))
    assert isinstance(result, mt.Tensor)
    assert_eq(result, A @ B, rtol=1e-10)
