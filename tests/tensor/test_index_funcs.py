"""choose, select, extract, the in-place writers, take/put_along_axis, (un)ravel_index against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from tensor_testing import assert_eq, chunkings

import mars.tensor as mt

A = np.arange(24).reshape(4, 6) * 1.5


@pytest.mark.parametrize("chunk", chunkings(A.shape))
def test_choose_select_extract(chunk):
    idx = np.array([[0, 1, 2, 1, 0, 2]] * 4)
    choices = [A, -A, np.arange(6)]
    t_idx = mt.tensor(idx, chunk_size=chunk)
    tensors = [mt.tensor(c, chunk_size=chunk) for c in choices[:2]] + [choices[2]]
    assert_eq(mt.choose(t_idx, tensors), np.choose(idx, choices))
    assert_eq(mt.choose(t_idx + 2, [1, 2, 3], mode="clip"), np.choose(idx + 2, [1, 2, 3], mode="clip"))
    assert_eq(mt.choose(t_idx + 3, mt.tensor([[1], [2], [3]]), mode="wrap"),
              np.choose(idx + 3, np.array([[1], [2], [3]]), mode="wrap"))
    t = mt.tensor(A, chunk_size=chunk)
    conds = [A < 5, A > 20]
    assert_eq(mt.select([t < 5, t > 20], [t, t ** 2], -1), np.select(conds, [A, A ** 2], -1))
    small = A.astype(np.int8)
    assert_eq(mt.select([t < 5], [mt.tensor(small)]), np.select([A < 5], [small]))
    assert_eq(mt.extract(t % 3 == 0, t), np.extract(A % 3 == 0, A))


def test_choose_select_errors():
    with pytest.raises(ValueError, match="same length"):
        mt.select([mt.ones(2, bool)], [])
    with pytest.raises(ValueError, match="empty condition list"):
        mt.select([], [])
    with pytest.raises(TypeError, match="invalid entry 0 in condlist"):
        mt.select([mt.ones(2)], [mt.ones(2)])
    with pytest.raises(ValueError):
        mt.choose(mt.tensor([0, 1]), [[1, 2]], mode="bogus").execute()
    with pytest.raises(ValueError):  # an index past the choices, found when run
        mt.choose(mt.tensor([0, 3]), [[1, 2], [3, 4]]).execute()


@pytest.mark.parametrize("chunk", chunkings(A.shape))
def test_place_putmask_copyto(chunk):
    expected = A.copy()
    np.place(expected, A % 4 == 0, [10, 20, 30])
    t = mt.tensor(A, chunk_size=chunk)
    assert mt.place(t, t % 4 == 0, [10, 20, 30]) is None
    assert_eq(t, expected)

    expected = A.copy()
    np.putmask(expected, A > 10, [-1, -2, -3, -4, -5])
    t = mt.tensor(A, chunk_size=chunk)
    mt.putmask(t, t > 10, [-1, -2, -3, -4, -5])
    assert_eq(t, expected)

    expected = A.copy()
    src = np.arange(6)
    np.copyto(expected, src, where=A > 8)
    t = mt.tensor(A, chunk_size=chunk)
    mt.copyto(t, mt.tensor(src), where=t > 8)
    assert_eq(t, expected)
    t = mt.tensor(A.astype(int), chunk_size=chunk)
    with pytest.raises(TypeError, match="Cannot cast"):
        mt.copyto(t, 1.5)
    with pytest.raises(TypeError, match="Cannot cast"):
        mt.copyto(t, mt.ones(6))
    mt.copyto(t, 7)
    assert_eq(t, np.full(A.shape, 7))


def test_place_errors():
    t = mt.arange(3)
    with pytest.raises(ValueError, match="Cannot insert from an empty array"):
        mt.place(t, [True, False, False], [])
    with pytest.raises(TypeError, match="must be a mars Tensor"):
        mt.place(np.arange(3), mt.tensor([True, False, True]), [1])


@pytest.mark.parametrize("chunk", chunkings(A.shape))
def test_put_fill_diagonal(chunk):
    for ind, v, mode in [([0, 5, 23], [1, 2, 3], "raise"), ([1, 1, 30, -1], [9, 8], "wrap"),
                         ([-5, 100], 4.5, "clip"), (7, [1, 2], "raise")]:
        expected = A.copy()
        np.put(expected, ind, v, mode=mode)
        t = mt.tensor(A, chunk_size=chunk)
        assert mt.put(t, ind, v, mode=mode) is None
        assert_eq(t, expected)
    for shape, val, wrap in [((4, 6), 5, False), ((9, 3), [1, 2], True), ((9, 3), [1, 2], False),
                             ((3, 3, 3), -1, False)]:
        expected = np.zeros(shape)
        np.fill_diagonal(expected, val, wrap=wrap)
        t = mt.zeros(shape, chunk_size=2)
        mt.fill_diagonal(t, val, wrap=wrap)
        assert_eq(t, expected)
    with pytest.raises(IndexError, match="out of bounds"):
        mt.put(mt.zeros(3), [5], 1)
    with pytest.raises(ValueError, match="All dimensions"):
        mt.fill_diagonal(mt.zeros((2, 3, 3)), 1)


@pytest.mark.parametrize("chunk", chunkings(A.shape))
def test_take_put_along_axis(chunk):
    t = mt.tensor(A, chunk_size=chunk)
    order = np.argsort(-A, axis=1)
    assert_eq(mt.take_along_axis(t, mt.tensor(order, chunk_size=chunk), axis=1), np.take_along_axis(A, order, 1))
    first = np.array([[3], [0], [5], [1]])
    assert_eq(mt.take_along_axis(t, first, axis=1), np.take_along_axis(A, first, 1))
    rows = np.array([[3, 0, 1, 2, 2, 1]])
    assert_eq(mt.take_along_axis(t, rows, axis=0), np.take_along_axis(A, rows, 0))
    assert_eq(mt.take_along_axis(mt.ravel(t), np.array([5, 1]), axis=None), np.take_along_axis(A.ravel(), np.array([5, 1]), None))
    expected = A.copy()
    np.put_along_axis(expected, first, [[-1], [-2], [-3], [-4]], axis=1)
    assert mt.put_along_axis(t, first, [[-1], [-2], [-3], [-4]], axis=1) is None
    assert_eq(t, expected)
    t = mt.tensor(A, chunk_size=chunk)
    np.put_along_axis(expected, rows, 0.5, axis=0)
    mt.put_along_axis(t, rows, 0.5, axis=0)
    np.put_along_axis(expected, first, [[-1], [-2], [-3], [-4]], axis=1)  # same writes, other order
    mt.put_along_axis(t, first, [[-1], [-2], [-3], [-4]], axis=1)
    assert_eq(t, expected)
    with pytest.raises(IndexError, match="must be an integer array"):
        mt.take_along_axis(t, np.ones((4, 1)), 1)
    with pytest.raises(ValueError, match="same number of dimensions"):
        mt.take_along_axis(t, np.ones(4, int), 1)


@pytest.mark.parametrize("chunk", [10, 3, 1])
def test_unravel_ravel_index(chunk):
    flat = np.array([0, 5, 17, 23, 11, 2, 8, 19, 4, 1])
    t = mt.tensor(flat, chunk_size=chunk)
    for shape, order in [((4, 6), "C"), ((2, 3, 4), "F"), (24, "C")]:
        coords = mt.unravel_index(t, shape, order=order)
        expected = np.unravel_index(flat, shape, order=order)
        for c, e in zip(coords, expected):
            assert_eq(c, e)
        assert_eq(mt.ravel_multi_index(coords, shape, order=order), np.ravel_multi_index(expected, shape, order=order))
    arrays = (np.array([3, 7, -1]), np.array([1, 1, 9]))
    for mode in ["wrap", "clip", ("clip", "wrap")]:
        assert_eq(mt.ravel_multi_index([mt.tensor(a, chunk_size=chunk) for a in arrays], (4, 5), mode=mode),
                  np.ravel_multi_index(arrays, (4, 5), mode=mode))
    with pytest.raises(TypeError):
        mt.unravel_index(mt.tensor([1.5]), (2, 2))
    with pytest.raises(ValueError, match="must be a sequence of length 2"):
        mt.ravel_multi_index([mt.tensor([1])], (2, 2))
    with pytest.raises(ValueError):  # out of bounds: found when run
        mt.unravel_index(mt.tensor([99]), (2, 2))[0].execute()
