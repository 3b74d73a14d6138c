"""Joining and splitting against numpy: concatenate/stack and friends, split and friends;
concatenate reuses the inputs' chunks, split reuses whole chunks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mars.tensor as mt
from mars.core.tiling import tile_now

from tensor_testing import assert_eq, chunkings
from test_shape import chunk_splits, chunked, filtered

A = np.arange(20).reshape(4, 5)
B = np.arange(100, 115).reshape(3, 5)
C = np.arange(8.0).reshape(4, 2)


def _keys(t) -> set:
    return {c.key for c in t.chunks}


# ----------------------------------------------------------------- concatenate
@pytest.mark.parametrize("chunk_size", chunkings(A.shape))
def test_concatenate_axis0(chunk_size):
    ta = mt.tensor(A, chunk_size=chunk_size)
    tb = mt.tensor(B, chunk_size=2)
    assert_eq(mt.concatenate([ta, tb]), np.concatenate([A, B]))
    assert_eq(mt.concatenate([tb, ta, tb], axis=-2), np.concatenate([B, A, B], axis=-2))
    assert_eq(mt.concatenate((ta,)), A)
    assert_eq(mt.concatenate([ta, B.tolist()]), np.concatenate([A, B]))


@pytest.mark.parametrize("chunk_size", chunkings(A.shape))
def test_concatenate_axis1_and_none(chunk_size):
    ta = mt.tensor(A, chunk_size=chunk_size)
    tc = mt.tensor(C, chunk_size=(3, 1))
    assert_eq(mt.concatenate([ta, tc], axis=1), np.concatenate([A, C], axis=1))
    assert_eq(mt.concatenate([tc, ta], axis=-1), np.concatenate([C, A], axis=-1))
    assert_eq(mt.concatenate([ta, tc], axis=None), np.concatenate([A, C], axis=None))
    assert_eq(np.concatenate([ta, tc], axis=1), np.concatenate([A, C], axis=1))


def test_concatenate_dtypes_follow_numpy():
    i32, f32 = np.arange(3, dtype="int32"), np.ones(2, dtype="float32")
    b, u8 = np.array([True, False]), np.arange(3, dtype="uint8")
    for parts in ([i32, f32], [b, i32], [u8, i32], [b, u8], [f32, np.ones(2, dtype="complex64")]):
        assert_eq(mt.concatenate([mt.tensor(p, chunk_size=2) for p in parts]), np.concatenate(parts))
    assert_eq(mt.concatenate([mt.tensor(i32), mt.tensor(f32)], dtype="float32"),
              np.concatenate([i32, f32], dtype="float32"))
    with pytest.raises(TypeError, match="according to the rule 'same_kind'"):
        mt.concatenate([mt.tensor(i32), mt.tensor(f32)], dtype="int32")
    assert_eq(mt.concatenate([mt.tensor(i32), mt.tensor(f32)], dtype="int32", casting="unsafe"),
              np.concatenate([i32, f32], dtype="int32", casting="unsafe"))


def test_concatenate_into_out():
    out = mt.zeros(5, dtype="float32")
    result = mt.concatenate([mt.ones(2, dtype="int32"), mt.ones(3, dtype="int32")], out=out)
    assert result is out
    assert_eq(out, np.ones(5, dtype="float32"))


def test_concatenate_reuses_input_chunks():
    ta, tb = mt.tensor(A, chunk_size=2), mt.tensor(B, chunk_size=2)
    joined = tile_now(mt.concatenate([ta, tb]))
    assert _keys(joined) == _keys(tile_now(ta)) | _keys(tile_now(tb))
    assert joined.nsplits == ((2, 2, 2, 1), (2, 2, 1))
    # different grids off the axis: the smaller input is rechunked to the larger one's
    tc = mt.tensor(B, chunk_size=(3, 3))
    joined = tile_now(mt.concatenate([tc, ta]))
    assert joined.nsplits == ((3, 2, 2), (2, 2, 1))
    assert _keys(tile_now(ta)) <= _keys(joined)


def test_concatenate_errors_as_numpy():
    expected = "along dimension 1, the array at index 0 has size 5 and the array at index 1 has size 2"
    with pytest.raises(ValueError, match=expected):
        mt.concatenate([mt.tensor(A), mt.tensor(C)])
    with pytest.raises(ValueError, match="must match exactly"):
        mt.concatenate([mt.tensor(A), mt.tensor(B), mt.tensor(C)], axis=0)
    with pytest.raises(ValueError, match="array at index 1 has 1 dimension"):
        mt.concatenate([mt.tensor(A), mt.ones(5)])
    with pytest.raises(ValueError, match="zero-dimensional"):
        mt.concatenate([mt.tensor(np.array(1)), mt.tensor(np.array(2))])
    with pytest.raises(ValueError, match="need at least one array"):
        mt.concatenate([])
    with pytest.raises(np.exceptions.AxisError):
        mt.concatenate([mt.tensor(A), mt.tensor(A)], axis=2)


def test_concatenate_unknown_sizes():
    mask = np.array([True, False, True, True])
    fa = filtered(A, 2, mask)
    assert_eq(mt.concatenate([fa, mt.tensor(B, chunk_size=2)]), np.concatenate([A[mask], B]))
    # unknown along the joined axis needs nothing run first; along another axis it does
    assert_eq(mt.concatenate([filtered(A, 2, mask), filtered(A, 3, ~mask)]), np.concatenate([A[mask], A[~mask]]))
    assert_eq(mt.concatenate([filtered(A, 2, mask), filtered(C, 3, mask)], axis=1),
              np.concatenate([A[mask], C[mask]], axis=1))
    with pytest.raises(ValueError, match="must match exactly"):
        mt.concatenate([filtered(A, 2, mask), filtered(C, 3, ~mask)], axis=1).execute()


# ----------------------------------------------------------------- stack and friends
@pytest.mark.parametrize("chunk_size", chunkings(A.shape))
def test_stack(chunk_size):
    ta = mt.tensor(A, chunk_size=chunk_size)
    tb = mt.tensor(A * 2.0, chunk_size=3)
    for axis in (0, 1, 2, -1, -3):
        assert_eq(mt.stack([ta, tb, ta], axis=axis), np.stack([A, A * 2.0, A], axis=axis))
    assert_eq(mt.stack([ta]), np.stack([A]))
    assert_eq(mt.stack([mt.tensor(np.array(1)), 2]), np.stack([np.array(1), 2]))


def test_stack_errors():
    with pytest.raises(ValueError, match="same shape"):
        mt.stack([mt.tensor(A), mt.tensor(B)])
    with pytest.raises(ValueError, match="need at least one array to stack"):
        mt.stack([])
    with pytest.raises(np.exceptions.AxisError):
        mt.stack([mt.tensor(A), mt.tensor(A)], axis=3)


@pytest.mark.parametrize("chunk_size", chunkings((4, 5)))
def test_hstack_vstack_dstack_column_stack(chunk_size):
    ta = mt.tensor(A, chunk_size=chunk_size)
    tc = mt.tensor(C, chunk_size=3)
    v1, v2 = np.arange(5), np.arange(4.0)
    t1, t2 = mt.tensor(v1, chunk_size=2), mt.tensor(v2, chunk_size=3)
    assert_eq(mt.hstack([ta, tc]), np.hstack([A, C]))
    assert_eq(mt.hstack([t1, t2, 7]), np.hstack([v1, v2, 7]))
    assert_eq(mt.vstack([ta, t1, B]), np.vstack([A, v1, B]))
    assert_eq(mt.vstack([t1, t1]), np.vstack([v1, v1]))
    assert_eq(mt.dstack([ta, ta]), np.dstack([A, A]))
    assert_eq(mt.dstack([t1, t1]), np.dstack([v1, v1]))
    assert_eq(mt.column_stack([t2, tc, ta]), np.column_stack([v2, C, A]))
    assert_eq(mt.hstack([t1, t1], dtype="float32"), np.hstack([v1, v1], dtype="float32"))
    with pytest.raises(ValueError, match="need at least one array"):
        mt.hstack([])


@st.composite
def _join_case(draw):
    ndim = draw(st.integers(1, 3))
    shape = [draw(st.integers(0, 4)) for _ in range(ndim)]
    axis = draw(st.integers(-ndim, ndim - 1))
    n = draw(st.integers(1, 3))
    shapes = []
    for _ in range(n):
        s = list(shape)
        s[axis] = draw(st.integers(0, 4))
        shapes.append(tuple(s))
    splits = [tuple(draw(chunk_splits(d)) for d in s) for s in shapes]
    dtypes = [draw(st.sampled_from(["int32", "int64", "float32", "bool"])) for _ in range(n)]
    return shapes, splits, dtypes, axis, draw(st.booleans())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_join_case())
def test_concatenate_and_stack_random(case):
    shapes, splits, dtypes, axis, stacked = case
    arrays = [(np.arange(np.prod(s)).reshape(s) % 3).astype(d) for s, d in zip(shapes, dtypes)]
    tensors = [chunked(x, sp) for x, sp in zip(arrays, splits)]
    assert_eq(mt.concatenate(tensors, axis=axis), np.concatenate(arrays, axis=axis))
    if stacked:
        same = [chunked(arrays[0], splits[0])] * len(arrays)
        assert_eq(mt.stack(same, axis=axis), np.stack([arrays[0]] * len(arrays), axis=axis))


# ----------------------------------------------------------------- split
D = np.arange(60).reshape(6, 10)


@pytest.mark.parametrize("chunk_size", chunkings(D.shape))
def test_split_and_array_split(chunk_size):
    t = mt.tensor(D, chunk_size=chunk_size)
    cases = [(3, 0), (2, 1), (5, -1), ([1, 4], 0), ([2, 2, 8, 20], 1), ([-3, 7], -1), ([4, 1], 0), ([], 0)]
    for ios, axis in cases:
        parts = mt.split(t, ios, axis=axis)
        expected = np.split(D, ios, axis=axis)
        assert isinstance(parts, list) and len(parts) == len(expected)
        for p, e in zip(parts, expected):
            assert_eq(p, e)
    for ios, axis in [(4, 0), (3, 1), (7, 1), (1, 0), ([3], 1)]:
        for p, e in zip(mt.array_split(t, ios, axis=axis), np.array_split(D, ios, axis=axis)):
            assert_eq(p, e)


def test_numpy_functions_dispatch_to_mars():
    t = mt.tensor(D, chunk_size=4)
    for name, args in [("stack", ([t, t],)), ("vstack", ([t, t],)), ("hstack", ([t, t],))]:
        result = getattr(np, name)(*args)
        assert isinstance(result, mt.Tensor)
        assert_eq(result, getattr(np, name)(*[[D, D]]))
    parts = np.split(t, 2, axis=1)
    assert all(isinstance(p, mt.Tensor) for p in parts)
    for p, e in zip(parts, np.split(D, 2, axis=1)):
        assert_eq(p, e)


def test_split_errors_as_numpy():
    t = mt.tensor(D)
    with pytest.raises(ValueError, match="array split does not result in an equal division"):
        mt.split(t, 4)
    with pytest.raises(ValueError, match="number sections must be larger than 0"):
        mt.array_split(t, 0)
    with pytest.raises(ZeroDivisionError):
        mt.split(t, 0)
    with pytest.raises(IndexError):
        mt.split(t, 2, axis=2)
    with pytest.raises(ValueError, match="hsplit only works on arrays of 1 or more dimensions"):
        mt.hsplit(mt.tensor(np.array(1)), 1)
    with pytest.raises(ValueError, match="vsplit only works on arrays of 2 or more dimensions"):
        mt.vsplit(mt.ones(4), 2)
    with pytest.raises(ValueError, match="dsplit only works on arrays of 3 or more dimensions"):
        mt.dsplit(t, 2)


def test_hsplit_vsplit_dsplit():
    x = np.arange(48).reshape(4, 6, 2)
    t = mt.tensor(x, chunk_size=(3, 4, 1))
    for mt_fn, np_fn, ios in [(mt.hsplit, np.hsplit, 3), (mt.vsplit, np.vsplit, [1, 3]), (mt.dsplit, np.dsplit, 2)]:
        for p, e in zip(mt_fn(t, ios), np_fn(x, ios)):
            assert_eq(p, e)
    for p, e in zip(mt.hsplit(mt.tensor(np.arange(6), chunk_size=4), 2),
                    np.hsplit(np.arange(6), 2)):
        assert_eq(p, e)


def test_split_reuses_whole_chunks():
    t = mt.tensor(D, chunk_size=(2, 5))
    parts = [tile_now(p) for p in mt.split(t, [2, 3])]
    source = _keys(tile_now(t))
    assert _keys(parts[0]) <= source
    assert not _keys(parts[1]) & source
    assert parts[2].nsplits == ((1, 2), (5, 5))


def test_split_unknown_sizes():
    mask = np.arange(6) != 2
    for p, e in zip(mt.split(filtered(D, 2, mask), 5), np.split(D[mask], 5)):
        assert_eq(p, e)
    for p, e in zip(mt.array_split(filtered(D, 4, mask), [1, -1]), np.array_split(D[mask], [1, -1])):
        assert_eq(p, e)
    with pytest.raises(ValueError, match="equal division"):
        mt.split(filtered(D, 2, mask), 2)[0].execute()
