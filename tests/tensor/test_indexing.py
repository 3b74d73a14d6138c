"""``t[index]``, ``t[index] = value`` and the index functions, against numpy across chunkings."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tensor_testing import assert_eq, chunkings

import mars.tensor as mt
from mars.core.tiling import tile_now
from mars.tensor.indexing.basic import TensorSliceChunk
from mars.tensor.indexing.fancy import TensorGatherPoints

X = np.arange(7 * 6 * 5, dtype=float).reshape(7, 6, 5) - 100
CHUNKINGS = chunkings(X.shape)
B = np.arange(7 * 6, dtype=float).reshape(7, 6)
B_CHUNKINGS = chunkings(B.shape)


def numpy_set(x: np.ndarray, index, value) -> np.ndarray:
    out = x.copy()
    out[index] = value
    return out


# ----------------------------------------------------------------- basic
BASIC = [
    3, -1, -7, (slice(None, None, -1),), (slice(None, None, -2), slice(5, 0, -2)), (slice(6, 0, -3), 2, slice(None, 1, -1)),
    (slice(2, 2),), (slice(5, 1),), (slice(1, 5, -1),), (slice(-100, 100, 4),), (Ellipsis, -2), (None, 2, None, slice(1, 3)),
    (Ellipsis, None), (None, Ellipsis, None, 0), (np.int64(2), np.int32(-1)), (), Ellipsis,
]


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
@pytest.mark.parametrize("index", BASIC, ids=range(len(BASIC)))
def test_basic_indexing_like_numpy(chunk_size, index):
    assert_eq(mt.tensor(X, chunk_size=chunk_size)[index], X[index])


def test_basic_indexing_reads_only_the_touched_chunks_as_slices():
    t = tile_now(mt.tensor(np.arange(20), chunk_size=4)[13:2:-3])
    assert t.nsplits == ((1, 1, 2),)  # 13 | 10 | 7, 4: chunks 0 and 4 are not read
    sources = [c.inputs[0].index for c in t.chunks]
    assert sources == [(3,), (2,), (1,)]
    assert all(isinstance(c.op, TensorSliceChunk) for c in t.chunks)
    assert_eq(mt.tensor(np.arange(20), chunk_size=4)[13:2:-3], np.arange(20)[13:2:-3])


def test_zero_d_tensors():
    s = mt.tensor(np.array(5.0))
    assert_eq(s[()], np.array(5.0)[()])
    assert_eq(s[...], np.array(5.0)[...])
    assert_eq(s[None], np.array(5.0)[None])
    with pytest.raises(IndexError, match="too many indices"):
        s[0]


def test_index_errors_are_numpy_s_and_raised_when_built():
    t = mt.tensor(np.arange(5), chunk_size=2)
    with pytest.raises(IndexError, match="^index 5 is out of bounds for axis 0 with size 5$"):
        t[5]
    with pytest.raises(IndexError, match="index -6 is out of bounds for axis 0 with size 5"):
        t[-6]
    with pytest.raises(IndexError, match="index 6 is out of bounds for axis 1 with size 6"):
        mt.tensor(X)[:, 6]
    with pytest.raises(IndexError, match="too many indices for array: array is 1-dimensional, but 2 were indexed"):
        t[0, 0]
    with pytest.raises(IndexError, match="index 9 is out of bounds"):
        t[[0, 9]]
    with pytest.raises(IndexError, match="only integers, slices"):
        t[1.5]
    with pytest.raises(IndexError, match="arrays used as indices must be of integer"):
        t[mt.tensor(np.array([0.5]))]
    with pytest.raises(IndexError, match="an index can only have a single ellipsis"):
        t[..., ...]
    with pytest.raises(IndexError, match="boolean index did not match indexed array along axis 0; size of axis is 5"):
        t[np.ones(3, dtype=bool)]
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        t[::0]
    with pytest.raises(IndexError, match=r"shape mismatch: indexing arrays could not be broadcast together "
                                         r"with shapes \(1,2\) \(3,\)"):
        mt.tensor(B)[[[0, 1]], mt.tensor(np.array([0, 1, 2]))]


def test_out_of_bounds_index_tensor_fails_when_run():
    t = mt.tensor(np.arange(5), chunk_size=2)
    r = t[mt.tensor(np.array([1, 5]))]
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 5"):
        r.execute()
    r = mt.tensor(B)[mt.flatnonzero(mt.tensor(np.array([1, 1, 0]))), mt.tensor(np.array([0, 1, 2]))]
    with pytest.raises(IndexError, match="shape mismatch: indexing arrays could not be broadcast"):
        r.execute()


# ----------------------------------------------------------------- integer arrays
FANCY = [
    ([3, 1, 3, 0, 6, 6, 2],), ([-1, 0, -7],), (slice(None), [5, 0, 5, 1]), (slice(None, None, -2), [4, 4, 0]),
    ([0, 3], [5, 1]), ([[0, 1], [6, 2]], slice(1, 4), 0), (1, [0, 2], slice(None)), ([0, 1], slice(None), 0),
    (0, slice(None), [0, 1]), ([[0], [2]], [1, 3, 5]), ([1, 2], slice(None), [3, 0]), (slice(1, 3), [2, 2], None, [4, 0]),
    ([1, 2], None, [3, 0]), (None, [[6]], 2, [1, 1]), (Ellipsis, [4, 0]), (np.array([], dtype=int),),
    (slice(None), np.array([], dtype=int), 1), (np.array(3),), ([0, 6], [0, 5], [0, 4]),
]


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
@pytest.mark.parametrize("index", FANCY, ids=range(len(FANCY)))
def test_integer_array_indexing_like_numpy(chunk_size, index):
    assert_eq(mt.tensor(X, chunk_size=chunk_size)[index], X[index])


def test_a_long_index_is_cut_into_output_chunks_of_about_an_input_chunk():
    x = np.arange(100) * 10
    idx = np.random.RandomState(0).randint(-100, 100, size=1000)
    t = mt.tensor(x, chunk_size=10)[idx]
    tiled = tile_now(t)
    assert tiled.nsplits == ((10,) * 100,)
    assert all(isinstance(c.op, TensorGatherPoints) for c in tiled.chunks)
    assert_eq(mt.tensor(x, chunk_size=10)[idx], x[idx])


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_index_tensors_are_read_when_tiled(chunk_size):
    t = mt.tensor(X, chunk_size=chunk_size)
    order = mt.tensor(np.array([4, 0, 6, 6, -1]), chunk_size=2)
    assert_eq(t[order], X[[4, 0, 6, 6, -1]])
    assert_eq(t[:, order[:3] % 6, 1], X[:, np.array([4, 0, 6]) % 6, 1])
    assert_eq(t[mt.argsort(t[:, 0, 0])[::-1]], X[np.argsort(X[:, 0, 0])[::-1]])
    assert_eq(t[mt.tensor(np.array([[0, 5], [3, 3]]), chunk_size=1)], X[np.array([[0, 5], [3, 3]])])


# ----------------------------------------------------------------- boolean masks
@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_masks_like_numpy(chunk_size):
    t = mt.tensor(X, chunk_size=chunk_size)
    for mask in [X > 0, X[:, :, 0] > -50, X[:, 0, 0] > -20, np.zeros(7, dtype=bool)]:
        assert_eq(t[mask], X[mask])  # numpy masks: sizes known at once
        assert t[mask].shape == X[mask].shape
    assert_eq(t[:, X[0, :, 0] > -90], X[:, X[0, :, 0] > -90])
    assert_eq(t[1:4, X[0] > -90], X[1:4, X[0] > -90])
    assert_eq(t[X[:, 0, 0] > -50, 2], X[X[:, 0, 0] > -50, 2])
    assert_eq(t[X[:, 0, 0] > -50, :, [1]], X[X[:, 0, 0] > -50, :, [1]])
    assert_eq(t[True], X[True])
    assert_eq(t[:, False], X[:, False])
    assert_eq(t[np.zeros(0, dtype=bool)], X[np.zeros(0, dtype=bool)])


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_computed_masks_and_what_is_built_on_them(chunk_size):
    t = mt.tensor(X, chunk_size=chunk_size)
    assert_eq(t[t > 0], X[X > 0])
    assert_eq(t[t > 0].sum(), X[X > 0].sum())
    assert_eq((t[t > 0] * 2).mean(), (X[X > 0] * 2).mean())
    assert_eq(t[t[:, :, 0] > -50], X[X[:, :, 0] > -50])
    assert_eq(t[:, t[0, :, 0] > -90], X[:, X[0, :, 0] > -90])
    assert_eq(t[None, t[:, 0, 0] > -50], X[None, X[:, 0, 0] > -50])
    assert_eq(t[t[:, 0, 0] > -50, 1:3, [4, 0, 1, 1, 2]], X[X[:, 0, 0] > -50, 1:3, [4, 0, 1, 1, 2]])
    assert_eq(t[mt.tensor(True)], X[True])
    assert_eq(t[t[0, 0, 0] > 0], X[X[0, 0, 0] > 0])


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_chained_indexing_through_unknown_sizes(chunk_size):
    t = mt.tensor(X, chunk_size=chunk_size)
    f = X[X > 0]
    assert_eq(t[t > 0][::-7], f[::-7])
    assert_eq(t[t > 0][-1], f[-1])
    assert_eq(t[t > 0][[0, 5, 5, 2]], f[[0, 5, 5, 2]])
    rows = X[X[:, 0, 0] > -50]
    assert_eq(t[t[:, 0, 0] > -50][:, ::-2, [1, 1, 0]], rows[:, ::-2, [1, 1, 0]])
    assert_eq(t[1:][::2, 3][[0, 1]][:, None], X[1:][::2, 3][[0, 1]][:, None])


def test_masked_shape_is_unknown_until_executed():
    t = mt.tensor(X, chunk_size=3)
    r = t[t > 0]
    assert np.isnan(r.shape[0])
    r.execute()
    assert r.shape == X[X > 0].shape


# ----------------------------------------------------------------- index functions
@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_index_functions_like_numpy(chunk_size):
    t = mt.tensor(X, chunk_size=chunk_size)
    nz = mt.nonzero(t > 50)
    assert isinstance(nz, tuple) and len(nz) == 3 and all(np.isnan(a.shape[0]) for a in nz)
    for a, b in zip(nz, np.nonzero(X > 50)):
        assert_eq(a, b)
    for a, b in zip((t > 50).nonzero(), np.nonzero(X > 50)):
        assert_eq(a, b)
    assert_eq(mt.argwhere(t > 50), np.argwhere(X > 50))
    assert_eq(mt.flatnonzero(t > 50), np.flatnonzero(X > 50))
    assert_eq(mt.take(t, [3, 1, 3], axis=2), np.take(X, [3, 1, 3], axis=2))
    assert_eq(mt.take(t, [[0, 200], [7, -1]]), np.take(X, [[0, 200], [7, -1]]))
    assert_eq(mt.take(t, 4, axis=-1), np.take(X, 4, axis=-1))
    assert_eq(mt.compress([True, False, True], t, axis=1), np.compress([True, False, True], X, axis=1))
    assert_eq(mt.compress(t[:, 0, 0] > -50, t, axis=0), np.compress(X[:, 0, 0] > -50, X, axis=0))
    assert_eq(mt.compress([False, True], t), np.compress([False, True], X))


def test_index_function_errors():
    with pytest.raises(ValueError, match="nonzero on 0d arrays"):
        mt.nonzero(mt.tensor(np.array(1)))
    with pytest.raises(np.exceptions.AxisError):
        mt.take(mt.tensor(X), [0], axis=3)
    with pytest.raises(ValueError, match="condition must be a 1-d array"):
        mt.compress([[True]], mt.tensor(X))


# ----------------------------------------------------------------- assignment
SET = [
    (0, 5.0), (-1, np.arange(6.0)), ((slice(1, 6, 2), 2), -1.0), ((slice(None, None, -1), slice(0, 3)), np.arange(21.0).reshape(7, 3)),
    ((slice(5, 1, -2), slice(None, None, -4)), np.array([[1.0], [2.0]])), ((slice(3, 3),), 1.0), (Ellipsis, 3.0),
    ((None, 0), np.ones((1, 1, 6))), (([0, 3, 3],), np.arange(18.0).reshape(3, 6)), (([6, 0, 6],), np.arange(18.0).reshape(3, 6)),
    ((slice(None), [4, 0]), np.ones((7, 2))), (([0, 1], [1, 2]), np.array([5.0, 6.0])), ((1, [0, 5]), 3.0),
    (([0, 1], 1), np.array([3.0, 4.0])), (([0, 6], slice(1, 5, 2)), np.arange(4.0).reshape(2, 2)),
    (([[0], [2]], [1, 3, 5]), np.arange(6.0).reshape(2, 3)), ((B > 20,), 0.0), ((B > 20,), np.arange(21.0)),
    ((B[:, 0] > 10,), np.arange(6.0)), ((slice(None), B[0] > 2), np.arange(21.0).reshape(7, 3)),
    ((B[:, 0] > 10, slice(2, 4)), -1.0), ((True,), 9.0), ((slice(None), False), 9.0),
]


@pytest.mark.parametrize("chunk_size", B_CHUNKINGS)
@pytest.mark.parametrize("index,value", SET, ids=range(len(SET)))
def test_setitem_like_numpy_leaves_other_expressions_alone(chunk_size, index, value):
    t = mt.tensor(B, chunk_size=chunk_size)
    before = t * 1
    same_data = mt.tensor(B, chunk_size=chunk_size)
    alias = same_data.copy()
    same_data[index] = value
    t[index] = value
    assert_eq(t, numpy_set(B, index, value))
    assert_eq(before, B)
    assert_eq(alias, B)  # another wrapper of the old data still sees the old data


@pytest.mark.parametrize("chunk_size", B_CHUNKINGS)
def test_setitem_with_tensor_values_and_tensor_indexes(chunk_size):
    t = mt.tensor(B, chunk_size=chunk_size)
    e = B.copy()
    t[2:5, 1:4] = mt.ones((3, 3), chunk_size=2) * 5
    e[2:5, 1:4] = 5
    t[:, 3] = mt.arange(7.0, chunk_size=2)
    e[:, 3] = np.arange(7.0)
    t[:, [5, 0]] = t[:, [0, 5]]
    e[:, [5, 0]] = e[:, [0, 5]]
    t[mt.tensor(np.array([1, 4, 1]), chunk_size=2)] = mt.arange(6.0)
    e[[1, 4, 1]] = np.arange(6.0)
    t[t > 30] = t[t > 30] * 2
    e[e > 30] = e[e > 30] * 2
    t[t[:, 1] > 20] = t[t[:, 1] > 20][:, ::-1]
    e[e[:, 1] > 20] = e[e[:, 1] > 20][:, ::-1]
    t[1:6, mt.tensor(np.array([2, 3]))] = mt.ones((5, 1), chunk_size=1) * 7
    e[1:6, [2, 3]] = 7
    t[:, t[0] > 2] = -t[:, t[0] > 2]
    e[:, e[0] > 2] = -e[:, e[0] > 2]
    assert_eq(t, e)
    assert_eq(t[1:3].sum(axis=0), e[1:3].sum(axis=0))


def test_setitem_with_separated_index_arrays():
    x = np.arange(4 * 5 * 6.0).reshape(4, 5, 6)
    for index, value in [(([0, 2], slice(None), [1, 5]), np.arange(10.0).reshape(2, 5)),
                         ((1, slice(1, 4), [1, 5]), np.arange(6.0).reshape(2, 3)),
                         (([3, 0], None, slice(None), 2), np.arange(10.0).reshape(2, 1, 5))]:
        t = mt.tensor(x, chunk_size=2)
        t[index] = value
        assert_eq(t, numpy_set(x, index, value))


def test_setitem_rewrites_only_the_touched_chunks():
    t = mt.tensor(np.arange(20.0), chunk_size=5)
    old = [c.key for c in tile_now(t).chunks]
    t[[6, 8]] = 0
    t[16:18] = 1
    new = [c.key for c in tile_now(t).chunks]
    assert [a == b for a, b in zip(old, new)] == [True, False, True, False]


def test_setitem_casts_and_checks_like_numpy():
    t = mt.tensor(np.arange(5), chunk_size=2)
    t[0] = 1.7
    t[[1, 2]] = np.array([2.9, -3.2])
    t[t > 3] = mt.tensor(np.array([40.5]))
    assert_eq(t, np.array([1, 2, -3, 3, 40]))
    f = mt.zeros((3, 4), chunk_size=2)
    with pytest.raises(ValueError, match=r"could not broadcast input array from shape \(3,\) into shape \(4,\)"):
        f[0] = np.ones(3)
    with pytest.raises(ValueError, match=r"shape mismatch: value array of shape \(3,\) could not be broadcast "
                                         r"to indexing result of shape \(3,2\)"):
        f[:, [0, 1]] = np.ones(3)
    with pytest.raises(ValueError, match="cannot assign 2 input values to the 12 output values"):
        f[np.ones((3, 4), dtype=bool)] = [1.0, 2.0]
    with pytest.raises(ValueError, match="could not broadcast"):
        f[0] = mt.ones(3)
    with pytest.raises(TypeError, match="not 'complex'"):
        f[0] = 1 + 2j
    with pytest.raises(ValueError, match="could not convert string to float"):
        f[0] = "a"
    assert_eq(f, np.zeros((3, 4)))


def test_setitem_value_is_taken_when_assigned():
    t = mt.tensor(np.zeros(4), chunk_size=2)
    v = np.ones(4)
    t[:] = v
    v[:] = 7  # numpy copies on assignment: so do we
    assert_eq(t, np.ones(4))


def test_setitem_on_unknown_sizes():
    t = mt.tensor(X, chunk_size=3)
    u = t[t > 0]
    u[::2] = 1
    u[u > 50] = 0
    f = X[X > 0].copy()
    f[::2] = 1
    f[f > 50] = 0
    assert_eq(u, f)


# ----------------------------------------------------------------- random indexes
@st.composite
def basic_cases(draw):
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.integers(0, 6)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, 6)) for _ in range(ndim))
    index = []
    for size in shape:
        kind = draw(st.sampled_from(["int", "slice", "none", "full", "ellipsis"]))
        if kind == "int":
            index.append(draw(st.integers(-size - 1, size)))  # one past either end: IndexError
        elif kind == "slice":
            bound = st.none() | st.integers(-8, 8)
            index.append(slice(draw(bound), draw(bound), draw(st.sampled_from([None, 1, 2, 3, -1, -2, -4]))))
        elif kind == "none":
            index.extend([None, slice(None)])
        elif kind == "ellipsis" and Ellipsis not in index:
            index.append(Ellipsis)
        else:
            index.append(slice(None))
    return shape, chunks, tuple(index)


@settings(max_examples=40, deadline=None)
@given(basic_cases(), st.booleans())
def test_random_basic_indexes_read_and_write(case, write):
    shape, chunks, index = case
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    t = mt.tensor(x, chunk_size=chunks)
    try:
        expected = x[index]
    except IndexError as e:
        with pytest.raises(IndexError, match=str(e).replace("(", r"\(").replace(")", r"\)")):
            t[index]
        return
    if not write:
        assert_eq(t[index], expected)
        return
    value = -np.arange(expected.size).reshape(expected.shape) - 1
    t[index] = value
    assert_eq(t, numpy_set(x, index, value))


@st.composite
def fancy_cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 6)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    n = draw(st.integers(0, 6))
    index = []
    for size in shape:
        kind = draw(st.sampled_from(["array", "array", "int", "slice"]))
        if kind == "array":  # repeats, any order, negatives
            index.append(np.array(draw(st.lists(st.integers(-size, size - 1), min_size=n, max_size=n)), dtype=int))
        elif kind == "int":
            index.append(draw(st.integers(-size, size - 1)))
        else:
            index.append(slice(draw(st.none() | st.integers(0, 3)), None, draw(st.sampled_from([None, 2, -1]))))
    if not any(isinstance(i, np.ndarray) for i in index):
        index[0] = np.array([shape[0] - 1, 0])
    return shape, chunks, tuple(index)


@settings(max_examples=40, deadline=None)
@given(fancy_cases(), st.booleans())
def test_random_integer_array_indexes_read_and_write(case, write):
    shape, chunks, index = case
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    t = mt.tensor(x, chunk_size=chunks)
    expected = x[index]
    if not write:
        assert_eq(t[index], expected)
        return
    value = -np.arange(expected.size).reshape(expected.shape) - 1
    t[index] = value
    assert_eq(t, numpy_set(x, index, value))


@st.composite
def mask_cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    k = draw(st.integers(1, ndim))
    at = draw(st.integers(0, ndim - k))  # slices before the mask
    bits = draw(st.lists(st.booleans(), min_size=int(np.prod(shape[at:at + k])), max_size=int(np.prod(shape[at:at + k]))))
    return shape, chunks, at, np.array(bits, dtype=bool).reshape(shape[at:at + k])


@settings(max_examples=40, deadline=None)
@given(mask_cases(), st.booleans(), st.sampled_from(["read", "scalar", "array"]))
def test_random_masks_read_and_write(case, computed, action):
    shape, chunks, at, mask = case
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    t = mt.tensor(x, chunk_size=chunks)
    m = mt.tensor(mask, chunk_size=chunks[at:at + mask.ndim]) if computed else mask
    index = (slice(None),) * at + (m,)
    np_index = (slice(None),) * at + (mask,)
    if action == "read":
        assert_eq(t[index], x[np_index])
        return
    expected = x[np_index]
    value = -1 if action == "scalar" else -np.arange(expected.size).reshape(expected.shape) - 1
    t[index] = value
    assert_eq(t, numpy_set(x, np_index, value))
