"""Indexing and assignment against numpy across chunkings."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tensor_testing import assert_eq, chunkings

import mars.tensor as mt

X = np.arange(7 * 6 * 5).reshape(7, 6, 5).astype(float)
CHUNKINGS = chunkings(X.shape) + [((1, 5, 1), (6,), (2, 3))]

GET = [
    0, -1, (slice(1, 6, 2),), (slice(None, None, -1),), (slice(6, 0, -3), 2), (Ellipsis, 1),
    (None, 2, None, slice(1, 3)), (slice(2, 2),), (slice(-100, 100, 4),), ([0, 3, 3, 1],),
    (slice(None), [4, 0, 5]), (1, [0, 2], slice(None)), ([1, 2], [0, 3]), ([0, 1], slice(None), 0),
    (0, slice(None), [0, 1]), (X[:, :, 0] > 100,), (X > 100,),
    (np.array([True, False, True, False, True, True, False]),), (slice(None), np.array([True] * 3 + [False] * 3)),
    (np.array([], dtype=int),), ([[0, 1], [2, 6]],),
]


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
@pytest.mark.parametrize("index", GET, ids=[str(i)[:40] for i in range(len(GET))])
def test_getitem_like_numpy(chunk_size, index):
    assert_eq(mt.tensor(X, chunk_size=chunk_size)[index], X[index])


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_masks_and_index_tensors_computed_in_the_graph(chunk_size):
    t = mt.tensor(X, chunk_size=chunk_size)
    assert_eq(t[t > 100], X[X > 100])
    assert_eq(t[t > 50].sum(), X[X > 50].sum())
    assert_eq((t[t > 50] * 2).mean(), (X[X > 50] * 2).mean())
    assert_eq(t[mt.tensor(np.array([6, 0, 2, 0]), chunk_size=3)], X[[6, 0, 2, 0]])
    assert_eq(t[:, mt.tensor(np.array([-1, 2]))], X[:, [-1, 2]])
    assert_eq(t[1:][::2, 3][[0, 1]], X[1:][::2, 3][[0, 1]])


def test_masked_result_shape_becomes_known_after_execution():
    t = mt.tensor(X, chunk_size=3)
    r = t[t > 100]
    assert np.isnan(r.shape[0])
    r.execute()
    assert r.shape == X[X > 100].shape


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_index_functions(chunk_size):
    t = mt.tensor(X, chunk_size=chunk_size)
    for a, b in zip(mt.nonzero(t > 150), np.nonzero(X > 150)):
        assert_eq(a, b)
    assert_eq(mt.argwhere(t > 150), np.argwhere(X > 150))
    assert_eq(mt.flatnonzero(t > 150), np.flatnonzero(X > 150))
    assert_eq(mt.take(t, [3, 1], axis=2), np.take(X, [3, 1], axis=2))
    assert_eq(mt.take(t, [0, 200, 7]), np.take(X, [0, 200, 7]))
    assert_eq(mt.compress([True, False, True], t, axis=1), np.compress([True, False, True], X, axis=1))


def test_index_errors_when_built():
    t = mt.tensor(X, chunk_size=3)
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 7"):
        t[7]
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0, 0]
    with pytest.raises(IndexError, match="out of bounds"):
        t[[0, 9]]
    with pytest.raises(IndexError, match="boolean index did not match"):
        t[np.ones(3, dtype=bool)]
    with pytest.raises(IndexError, match="only integers"):
        t[1.5]
    with pytest.raises(ValueError, match="step cannot be zero"):
        t[::0]


B = np.arange(7 * 6, dtype=float).reshape(7, 6)
SET = [
    (0, 5.0), ((slice(1, 6, 2), 2), -1.0), ((slice(None, None, -1), slice(0, 3)), np.arange(21.0).reshape(7, 3)),
    (Ellipsis, 3.0), ((2,), np.arange(6.0)), (([0, 3, 3],), 9.0), ((slice(None), [4, 0]), np.ones((7, 2))),
    ((B > 20,), 0.0), ((np.array([True, False, True, False, False, False, True]),), 7.0),
    ((2, slice(1, 5)), np.arange(4.0)),
]


@pytest.mark.parametrize("chunk_size", chunkings(B.shape))
@pytest.mark.parametrize("index,value", SET, ids=[str(i) for i in range(len(SET))])
def test_setitem_like_numpy_and_old_expressions_unaffected(chunk_size, index, value):
    t = mt.tensor(B, chunk_size=chunk_size)
    before = t * 1
    t[index] = value
    expected = B.copy()
    expected[index] = value
    assert_eq(t, expected)
    assert_eq(before, B)


@pytest.mark.parametrize("chunk_size", chunkings(B.shape))
def test_setitem_with_tensor_values_and_masks(chunk_size):
    t = mt.tensor(B, chunk_size=chunk_size)
    t[2:5, 1:4] = mt.ones((3, 3), chunk_size=2) * 5
    t[:, 3] = mt.arange(7.0, chunk_size=2)
    t[t > 30] = -1
    expected = B.copy()
    expected[2:5, 1:4] = 5
    expected[:, 3] = np.arange(7.0)
    expected[expected > 30] = -1
    assert_eq(t, expected)


def test_setitem_casts_and_checks_like_numpy():
    t = mt.tensor(np.arange(5), chunk_size=2)
    t[0] = 1.7
    assert_eq(t, np.array([1, 1, 2, 3, 4]))
    with pytest.raises(ValueError, match="could not broadcast"):
        w = mt.ones((3, 4))
        w[0] = np.ones(3)


@st.composite
def basic_indexes(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 6)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, 6)) for _ in range(ndim))
    index = []
    for size in shape:
        kind = draw(st.sampled_from(["int", "slice", "none", "full"]))
        if kind == "int":
            index.append(draw(st.integers(-size, size - 1)))
        elif kind == "slice":
            index.append(slice(draw(st.none() | st.integers(-8, 8)), draw(st.none() | st.integers(-8, 8)),
                               draw(st.sampled_from([None, 1, 2, 3, -1, -2]))))
        elif kind == "none":
            index.extend([None, slice(None)])
        else:
            index.append(slice(None))
    if draw(st.booleans()) and len(index) > 1:
        index[draw(st.integers(0, len(index) - 1))] = Ellipsis
    return shape, chunks, tuple(index)


@settings(max_examples=40, deadline=None)
@given(basic_indexes())
def test_random_basic_indexes(case):
    shape, chunks, index = case
    x = np.arange(int(np.prod(shape))).reshape(shape)
    try:
        expected = x[index]
    except IndexError:
        with pytest.raises(IndexError):
            mt.tensor(x, chunk_size=chunks)[index]
        return
    assert_eq(mt.tensor(x, chunk_size=chunks)[index], expected)
