"""Shape manipulation against numpy: reshape/ravel, squeeze/expand_dims, axis moves, atleast_nd,
broadcast_to, repeat; chunk grids that line up are reshaped chunk by chunk."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mars
import mars.tensor as mt
from mars.core.operator import Tiled
from mars.core.tiling import tile_now
from mars.tensor.chunks import offsets
from mars.tensor.core import TensorOperator
from mars.tensor.rechunk import RechunkPiece

from tensor_testing import assert_eq, chunkings

X = np.arange(24).reshape(4, 6)


class RowFilter(TensorOperator):
    """Keeps the rows where ``mask`` is true: row counts unknown (NaN) until run."""

    params = ("mask",)

    @classmethod
    def tile(cls, op):
        inp, out = op.inputs[0], op.outputs[0]
        starts = offsets(inp.nsplits[0])
        chunks = []
        for c in inp.chunks:
            start = starts[c.index[0]]
            chunk_op = RowFilter(mask=op.mask[start:start + c.shape[0]])
            shape = (math.nan,) + c.shape[1:]
            chunks.append(chunk_op.new_chunk([c], index=c.index, shape=shape, dtype=out.dtype, order="C"))
        nsplits = ((math.nan,) * inp.chunk_shape[0],) + tuple(inp.nsplits[1:])
        return Tiled(chunks, nsplits)

    def execute(self, x):
        return x[self.mask]


def chunked(x: np.ndarray, chunk_size) -> mt.Tensor:
    """``x`` cut into ``chunk_size`` chunks (other cuts of the same data may share the session)."""
    return mt.tensor(x, chunk_size=chunk_size)


def filtered(x: np.ndarray, chunk_size, mask: np.ndarray) -> mt.Tensor:
    """``x[mask]`` as a tensor whose row count is unknown until run (as after boolean indexing)."""
    t = chunked(x, chunk_size)
    return RowFilter(mask=np.asarray(mask)).new_tensor([t.data], (math.nan,) + x.shape[1:], x.dtype)


def _ops(t) -> set:
    """Names of the chunk ops upstream of a tiled tensor."""
    seen, stack, names = set(), list(t.chunks), set()
    while stack:
        c = stack.pop()
        if id(c) in seen:
            continue
        seen.add(id(c))
        names.add(type(c.op).__name__)
        stack.extend(c.op.inputs)
    return names


# ----------------------------------------------------------------- reshape
RESHAPES = [
    ((4, 6), [(24,), (3, 8), (2, 2, 6), (6, 4), (4, 1, 6), (1, 24), (-1,), (2, -1, 3), (8, 3), (2, 12)]),
    ((24,), [(4, 6), (2, 3, 4), (24, 1), (1, 1, 24), (-1, 8)]),
    ((2, 3, 4), [(6, 4), (4, 6), (24,), (3, 8), (2, 12), (4, 3, 2), (2, 1, 3, 4)]),
    ((1, 5, 1), [(5,), (5, 1), (1, 1, 5)]),
]


@pytest.mark.parametrize("shape,targets", RESHAPES)
def test_reshape_matches_numpy_across_chunkings(shape, targets):
    x = np.arange(math.prod(shape)).reshape(shape)
    for chunk_size in chunkings(shape):
        t = mt.tensor(x, chunk_size=chunk_size)
        for target in targets:
            assert_eq(mt.reshape(t, target), x.reshape(target))


def test_reshape_edge_shapes():
    assert_eq(mt.reshape(mt.tensor(np.array(3.5)), (1, 1)), np.array(3.5).reshape(1, 1))
    assert_eq(mt.tensor(np.ones((1, 1))).reshape(()), np.ones((1, 1)).reshape(()))
    z = np.ones((0, 3))
    assert_eq(mt.tensor(z, chunk_size=2).reshape(3, 0), z.reshape(3, 0))
    assert_eq(mt.tensor(z).reshape(-1), z.reshape(-1))


@pytest.mark.parametrize("order", ["F", "A"])
def test_reshape_fortran_order(order):
    for chunk_size in chunkings(X.shape):
        t = mt.tensor(X, chunk_size=chunk_size)
        for target in [(24,), (3, 8), (2, 2, 6), (6, -1)]:
            assert_eq(mt.reshape(t, target, order=order), np.reshape(X, target, order=order))
    f = np.asfortranarray(X)
    assert_eq(mt.tensor(f, chunk_size=3).reshape(3, 8, order="A"), f.reshape(3, 8, order="A"))
    assert_eq(mt.tensor(X, chunk_size=4).ravel(order="F"), X.ravel(order="F"))


def test_reshape_method_forms_and_numpy_protocol():
    t = mt.tensor(X, chunk_size=(3, 4))
    assert_eq(t.reshape(3, 8), X.reshape(3, 8))
    assert_eq(t.reshape((3, 8)), X.reshape((3, 8)))
    assert_eq(t.reshape(-1), X.reshape(-1))
    assert_eq(np.reshape(t, (8, 3)), X.reshape(8, 3))
    assert_eq(mt.reshape(t, shape=(2, 12)), X.reshape(2, 12))
    same = mt.reshape(t, (4, 6))
    assert same is not t and same.key == t.key


def test_reshape_errors_raise_when_built():
    t = mt.ones(6, chunk_size=4)
    with pytest.raises(ValueError, match=r"cannot reshape array of size 6 into shape \(4,\)"):
        t.reshape(4)
    with pytest.raises(ValueError, match=r"cannot reshape array of size 6 into shape \(4,newaxis\)"):
        t.reshape(4, -1)
    with pytest.raises(ValueError, match="only specify one unknown dimension"):
        t.reshape(-1, -1)
    with pytest.raises(ValueError, match="'K' is not permitted"):
        t.reshape(2, 3, order="K")
    with pytest.raises(TypeError):
        t.reshape(2.0, 3)


def test_reshape_maps_chunks_that_line_up_without_rechunk():
    t = mt.tensor(X, chunk_size=(2, 6))
    flat = tile_now(t.reshape(24))
    assert flat.nsplits == ((12, 12),)
    assert "RechunkPiece" not in _ops(flat)
    # rows of chunk size 1: each chunk is still one contiguous run
    runs = tile_now(mt.tensor(X, chunk_size=(1, 3)).reshape(24))
    assert runs.nsplits == ((3,) * 8,)
    assert "RechunkPiece" not in _ops(runs)
    ones = tile_now(mt.tensor(X, chunk_size=(2, 3)).reshape(4, 1, 6))
    assert ones.nsplits == ((2, 2), (1,), (3, 3))
    assert "RechunkPiece" not in _ops(ones)
    split = tile_now(mt.tensor(np.arange(24), chunk_size=3).reshape(4, 6))
    assert split.nsplits == ((1,) * 4, (3, 3))
    assert "RechunkPiece" not in _ops(split)


def test_reshape_runs_that_do_not_tile_the_output_rechunk():
    # rows of 6 cut (1, 3, 2) give runs 1,3,2,1,3,2: not the same cut in every output row of 4
    x = np.arange(12).reshape(2, 6)
    assert_eq(mt.tensor(x, chunk_size=((1, 1), (1, 3, 2))).reshape(3, 4), x.reshape(3, 4))
    assert_eq(mt.tensor(x, chunk_size=((1, 1), (2, 2, 2))).reshape(3, 4), x.reshape(3, 4))
    assert_eq(mt.tensor(x, chunk_size=((1, 1), (2, 4))).reshape(4, 3), x.reshape(4, 3))


def test_reshape_rechunk_keeps_row_cut_within_size_limit():
    x = np.arange(10000).reshape(100, 100)
    r = tile_now(mt.tensor(x, chunk_size=10).reshape(10000))
    assert RechunkPiece.__name__ in _ops(r)
    assert r.nsplits == ((1000,) * 10,)  # rows cut as before, each row whole
    with mars.option_context({"chunk_store_limit": 8 * 200}):
        assert max(tile_now(mt.tensor(x, chunk_size=10).reshape(10000)).nsplits[0]) <= 200
    assert_eq(mt.tensor(x, chunk_size=10).reshape(10000), x.reshape(10000))
    assert_eq(mt.tensor(x, chunk_size=(7, 30)).reshape(50, 200), x.reshape(50, 200))


def _factors(n: int) -> list[int]:
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


@st.composite
def _chunked_reshape(draw):
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=0, max_size=4)))
    factors = draw(st.permutations(_factors(math.prod(shape))))
    ndim = draw(st.integers(1, 4))
    target = [1] * ndim
    for f in factors:
        target[draw(st.integers(0, ndim - 1))] *= f
    if draw(st.booleans()):
        target[draw(st.integers(0, ndim - 1))] = -1
    return shape, tuple(target), tuple(draw(chunk_splits(s)) for s in shape)


@st.composite
def chunk_splits(draw, length: int):
    """Chunk sizes along one dim: random cuts, all ones, or whole (the cases reshape treats apart)."""
    mode = draw(st.sampled_from(["cuts", "ones", "whole"]))
    if length == 0:
        return None  # one empty chunk (normalize_chunk_sizes refuses an explicit (0,))
    if mode == "ones" or length == 1:
        return (1,) * length
    if mode == "whole":
        return (length,)
    cuts = sorted(draw(st.sets(st.integers(1, length - 1), max_size=3)))
    bounds = [0] + cuts + [length]
    return tuple(b - a for a, b in zip(bounds[:-1], bounds[1:]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_chunked_reshape())
def test_reshape_random_shapes_and_chunks(case):
    shape, target, splits = case
    x = np.arange(math.prod(shape)).reshape(shape)
    t = chunked(x, splits) if shape else mt.tensor(x)
    assert_eq(t.reshape(target), x.reshape(target))


def test_reshape_of_unknown_sizes_computes_them_first():
    x = np.arange(30).reshape(10, 3)
    mask = np.arange(10) % 3 != 1
    for chunk_size in [(3, 2), (4, 3), 1]:
        f = filtered(x, chunk_size, mask)
        assert math.isnan(f.ravel().shape[0])
        assert_eq(f.ravel(), x[mask].ravel())
        assert_eq(filtered(x, chunk_size, mask).reshape(-1, 3), x[mask].reshape(-1, 3))
        assert_eq(filtered(x, chunk_size, mask).reshape(3, 7), x[mask].reshape(3, 7))
        assert_eq(filtered(x, chunk_size, mask).reshape(-1, 3, order="F"), x[mask].reshape(-1, 3, order="F"))
    with pytest.raises(ValueError, match="cannot reshape array of size 21"):
        filtered(x, 4, mask).reshape(4, 5).execute()


@pytest.mark.parametrize("chunk_size", chunkings(X.shape))
def test_ravel_and_flatten(chunk_size):
    t = mt.tensor(X, chunk_size=chunk_size)
    assert_eq(mt.ravel(t), np.ravel(X))
    assert_eq(t.ravel(), X.ravel())
    assert_eq(t.flatten(), X.flatten())
    assert_eq(mt.ravel(X.tolist()), np.ravel(X))
    assert_eq(t.T.ravel(), X.T.ravel())


# ----------------------------------------------------------------- squeeze / expand_dims
Y = np.arange(12.0).reshape(1, 3, 1, 4)


@pytest.mark.parametrize("chunk_size", chunkings(Y.shape))
def test_squeeze(chunk_size):
    t = mt.tensor(Y, chunk_size=chunk_size)
    for axis in (None, 0, 2, -2, (0, 2), (2, 0)):
        assert_eq(mt.squeeze(t, axis=axis), np.squeeze(Y, axis=axis))
    assert_eq(t.squeeze(), Y.squeeze())
    assert mt.squeeze(mt.ones((2, 3))).shape == (2, 3)


def test_squeeze_errors():
    t = mt.tensor(Y)
    with pytest.raises(ValueError, match="size not equal to one"):
        mt.squeeze(t, 1)
    with pytest.raises(np.exceptions.AxisError):
        mt.squeeze(t, 4)
    with pytest.raises(ValueError, match="repeated axis"):
        mt.squeeze(t, (0, 0))


@pytest.mark.parametrize("chunk_size", chunkings(X.shape))
def test_expand_dims(chunk_size):
    t = mt.tensor(X, chunk_size=chunk_size)
    for axis in (0, 1, 2, -1, -3, (0, 1), (0, -1), (3, 1)):
        assert_eq(mt.expand_dims(t, axis), np.expand_dims(X, axis))
    assert_eq(mt.expand_dims(mt.tensor(np.array(2.0)), 0), np.expand_dims(np.array(2.0), 0))


def test_expand_dims_errors():
    with pytest.raises(np.exceptions.AxisError):
        mt.expand_dims(mt.ones((2, 3)), 3)
    with pytest.raises(np.exceptions.AxisError):
        mt.expand_dims(mt.ones((2, 3)), (0, -5))
    with pytest.raises(ValueError, match="repeated axis"):
        mt.expand_dims(mt.ones((2, 3)), (0, 0))


def test_squeeze_expand_dims_on_unknown_sizes():
    x = np.arange(30).reshape(10, 3, 1)
    mask = np.arange(10) % 2 == 0
    assert_eq(mt.squeeze(filtered(x, (3, 2, 1), mask), -1), x[mask].squeeze(-1))
    assert_eq(mt.expand_dims(filtered(x, (3, 2, 1), mask), 1), np.expand_dims(x[mask], 1))
    one = filtered(x, (3, 3, 1), np.arange(10) == 4)
    assert_eq(mt.squeeze(one, 0), x[4])


# ----------------------------------------------------------------- moving axes
Z = np.arange(60).reshape(3, 4, 5)


@pytest.mark.parametrize("chunk_size", chunkings(Z.shape))
def test_swapaxes_and_moveaxis(chunk_size):
    t = mt.tensor(Z, chunk_size=chunk_size)
    for a, b in [(0, 1), (0, 2), (-1, 0), (1, 1)]:
        assert_eq(mt.swapaxes(t, a, b), np.swapaxes(Z, a, b))
    assert_eq(t.swapaxes(2, 1), Z.swapaxes(2, 1))
    for src, dst in [(0, -1), (-1, 0), ((0, 1), (2, 0)), ([0, 2], [-1, -2])]:
        assert_eq(mt.moveaxis(t, src, dst), np.moveaxis(Z, src, dst))


def test_axis_move_errors():
    t = mt.tensor(Z)
    with pytest.raises(np.exceptions.AxisError, match="axis1"):
        mt.swapaxes(t, 3, 0)
    with pytest.raises(np.exceptions.AxisError, match="axis2"):
        mt.swapaxes(t, 0, -4)
    with pytest.raises(np.exceptions.AxisError, match="source"):
        mt.moveaxis(t, 3, 0)
    with pytest.raises(ValueError, match="same number of elements"):
        mt.moveaxis(t, (0, 1), 0)
    with pytest.raises(ValueError, match="repeated axis"):
        mt.moveaxis(t, (0, 0), (1, 2))


# ----------------------------------------------------------------- atleast_nd
@pytest.mark.parametrize("n", [1, 2, 3])
def test_atleast_nd(n):
    mt_fn, np_fn = getattr(mt, f"atleast_{n}d"), getattr(np, f"atleast_{n}d")
    for x in [np.array(5.0), np.arange(4), X, Z]:
        for chunk_size in chunkings(x.shape)[:2]:
            assert_eq(mt_fn(mt.tensor(x, chunk_size=chunk_size)), np_fn(x))
    results = mt_fn(mt.tensor(X), 3)
    assert isinstance(results, tuple) and len(results) == 2
    assert_eq(results[1], np_fn(3))


# ----------------------------------------------------------------- broadcasting
BROADCASTS = [((3,), (4, 3)), ((3, 1), (3, 5)), ((), (2, 2)), ((1,), (0,)), ((2, 1, 3), (4, 2, 5, 3)), ((4,), (4,))]


@pytest.mark.parametrize("shape,target", BROADCASTS)
def test_broadcast_to(shape, target):
    x = np.arange(math.prod(shape)).reshape(shape)
    for chunk_size in chunkings(shape):
        assert_eq(mt.broadcast_to(mt.tensor(x, chunk_size=chunk_size), target), np.broadcast_to(x, target))


def test_broadcast_to_cuts_large_new_dims():
    t = tile_now(mt.broadcast_to(mt.ones(100, chunk_size=10), (10**8, 100)))
    assert t.nsplits[1] == (10,) * 10
    assert 1 < len(t.nsplits[0]) and max(t.nsplits[0]) * 10 * 8 <= mars.options.chunk_store_limit


def test_broadcast_to_errors_as_numpy():
    for shape, target in [((2, 3), (3,)), ((2, 3), (4, 3)), ((2,), ()), ((3,), (-1, 3))]:
        with pytest.raises(ValueError) as np_err:
            np.broadcast_to(np.ones(shape), target)
        with pytest.raises(ValueError, match=str(np_err.value).replace("(", r"\(").replace(")", r"\)")
                           .replace("[", r"\[").replace("]", r"\]")):
            mt.broadcast_to(mt.ones(shape), target)


def test_broadcast_arrays():
    a, b = np.arange(3).reshape(3, 1), np.arange(4.0)
    results = mt.broadcast_arrays(mt.tensor(a, chunk_size=2), mt.tensor(b, chunk_size=3))
    for r, e in zip(results, np.broadcast_arrays(a, b)):
        assert_eq(r, e)
    with pytest.raises(ValueError, match="could not be broadcast"):
        mt.broadcast_arrays(mt.ones(3), mt.ones(4))


def test_broadcast_to_unknown_sizes():
    x = np.arange(10).reshape(10, 1)
    mask = np.arange(10) > 3
    assert_eq(mt.broadcast_to(filtered(x, 3, mask), (6, 4)), np.broadcast_to(x[mask], (6, 4)))


# ----------------------------------------------------------------- repeat
@pytest.mark.parametrize("chunk_size", chunkings(X.shape))
def test_repeat(chunk_size):
    t = mt.tensor(X, chunk_size=chunk_size)
    assert_eq(mt.repeat(t, 2), np.repeat(X, 2))
    assert_eq(mt.repeat(t, 3, axis=0), np.repeat(X, 3, axis=0))
    assert_eq(t.repeat([1, 0, 2, 1], axis=0), X.repeat([1, 0, 2, 1], axis=0))
    assert_eq(mt.repeat(t, np.arange(6), axis=-1), np.repeat(X, np.arange(6), axis=-1))
    assert_eq(mt.repeat(t, [2], axis=1), np.repeat(X, [2], axis=1))
    assert_eq(mt.repeat(t, 0, axis=1), np.repeat(X, 0, axis=1))
    assert_eq(mt.repeat(t, np.arange(24) % 3), np.repeat(X, np.arange(24) % 3))


def test_repeat_errors_and_unknown_sizes():
    t = mt.tensor(X)
    with pytest.raises(ValueError, match=r"with shape \(4,\) \(2,\)"):
        mt.repeat(t, [1, 2], axis=0)
    with pytest.raises(ValueError, match="negative"):
        mt.repeat(t, -1)
    with pytest.raises(TypeError):
        mt.repeat(t, 1.5)
    with pytest.raises(np.exceptions.AxisError):
        mt.repeat(t, 2, axis=2)
    x = np.arange(10)
    mask = x % 2 == 0
    assert_eq(mt.repeat(filtered(x, 3, mask), 2), np.repeat(x[mask], 2))
    assert_eq(mt.repeat(filtered(x, 3, mask), [1, 2, 0, 1, 3]), np.repeat(x[mask], [1, 2, 0, 1, 3]))
    with pytest.raises(ValueError, match="could not be broadcast"):
        mt.repeat(filtered(x, 3, mask), [1, 2]).execute()
