"""Writing through an index: ``t[index] = value`` rebinds ``t``; what was built before is unaffected."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tensor_testing import assert_eq, chunkings

import mars.tensor as mt
import mars.tensor.indexing.api  # noqa: F401 - installs Tensor.__getitem__ / __setitem__
from mars.core.tiling import tile_now

X = np.arange(7 * 6 * 5).reshape(7, 6, 5) - 80
CHUNKINGS = chunkings(X.shape)


def numpy_set(index, value, x=X):
    out = x.copy()
    out[index] = value
    return out


def numpy_error(func):
    with pytest.raises(Exception) as info:
        func()
    return info.type, "^" + re.escape(str(info.value)) + "$"


CASES = [
    (2, -1), ((slice(None, None, -2), 0), 1000), ((Ellipsis, slice(4, 0, -3)), np.arange(2)),
    ((slice(1, 5), None, 3), np.arange(4 * 5).reshape(4, 1, 5)), ((slice(3, 3),), 9), ([5, 0, 5], 7),
    (([1, 2], slice(None), [0, 4]), np.arange(12).reshape(2, 6)), ((slice(None), [[0], [5]], [1, 3]), -3),
    (X % 3 == 0, -5), (X[:, :, 0] > 0, np.arange(5)), ((slice(None), X[0, :, 0] < -70), np.arange(5)),
]


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
@pytest.mark.parametrize("index, value", CASES, ids=range(len(CASES)))
def test_setitem_like_numpy_and_earlier_expressions_keep_the_old_data(chunk_size, index, value):
    t = mt.tensor(X, chunk_size=chunk_size)
    before = t * 1
    view = t[1:4]
    t[index] = value
    assert_eq(t, numpy_set(index, value))
    assert_eq(before, X)
    assert_eq(view, X[1:4])
    assert_eq(t[1:4, ::-1], numpy_set(index, value)[1:4, ::-1])  # read back through an index


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_tensor_values_tensor_indexes_and_computed_masks(chunk_size):
    t = mt.tensor(X, chunk_size=chunk_size)
    t[t > 20] = t[t > 20] * 10  # a value whose size is known only after running
    expected = numpy_set(X > 20, X[X > 20] * 10)
    assert_eq(t, expected)
    t[mt.tensor([6, 0, 6]), 2] = mt.ones((3, 5), dtype=int, chunk_size=2) * mt.tensor([[1], [2], [3]])
    expected[[6, 0, 6], 2] = np.array([[1], [2], [3]])  # a repeated index keeps the last write, as numpy
    assert_eq(t, expected)
    t[:, 1:3] = mt.tensor(np.arange(5), chunk_size=2)
    expected[:, 1:3] = np.arange(5)
    assert_eq(t, expected)
    t[t[:, 0, 0] < 0] = -t[0]
    expected[expected[:, 0, 0] < 0] = -expected[0]
    assert_eq(t, expected)


def test_chunks_the_index_misses_are_reused():
    t = mt.tensor(X, chunk_size=3)
    old = tile_now(t * 2)
    t2 = t * 2
    t2[4, 1:2] = 0
    new = tile_now(t2)
    changed = [a.index for a, b in zip(old.chunks, new.chunks) if a.key != b.key]
    assert changed == [(1, 0, 0), (1, 0, 1)]


def test_values_are_cast_and_checked_as_numpy():
    t = mt.tensor(np.arange(6), chunk_size=4)
    t[0] = 1.7
    t[1:3] = [2.9, -0.5]
    assert_eq(t, np.array([1, 2, 0, 3, 4, 5]))
    f = mt.zeros((2, 3), chunk_size=2)
    f[:, 1] = mt.tensor([True, False])
    assert_eq(f, np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]))
    x = np.arange(12).reshape(3, 4)
    for index, value in [(0, [1, 2]), (slice(None), np.ones((2, 4))), ([0, 1], [1, 2, 3]),
                         (x > 5, [1, 2]), (0, 1 + 2j), (0, "a")]:
        kind, message = numpy_error(lambda: numpy_set(index, value, x))
        t = mt.tensor(x, chunk_size=2)
        with pytest.raises(kind, match=message):
            t[index] = value  # at once, not when run
        assert_eq(t, x)  # a refused assignment leaves the tensor as it was


def test_bad_indexes_raise_as_numpy_when_assigned():
    t = mt.tensor(X, chunk_size=3)
    for index in (7, (0, 0, 0, 0), [0, -8], np.ones(6, dtype=bool)):
        kind, message = numpy_error(lambda: numpy_set(index, 0))
        with pytest.raises(kind, match=message):
            t[index] = 0


@st.composite
def write_cases(draw):
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=1, max_size=3)))
    chunk_size = tuple(draw(st.integers(1, max(s, 1))) for s in shape)
    index = []
    for size in shape:
        kind = draw(st.sampled_from(["int", "slice", "slice", "array"] if size else ["slice"]))
        if kind == "int":
            index.append(draw(st.integers(-size, size - 1)))
        elif kind == "array":
            index.append(draw(st.lists(st.integers(-size, size - 1), min_size=1, max_size=4)))
        else:
            bound = st.none() | st.integers(-size - 1, size + 1)
            index.append(slice(draw(bound), draw(bound), draw(st.sampled_from([None, 2, -1, -3]))))
        if draw(st.integers(0, 5)) == 0:
            index.append(None)
    if draw(st.booleans()):
        at = draw(st.integers(0, len(index) - 1))
        index[at] = Ellipsis
    return shape, chunk_size, tuple(index), draw(st.booleans())


@settings(max_examples=40, deadline=None)
@given(write_cases())
def test_random_assignments(case):
    shape, chunk_size, index, array_value = case
    x = np.arange(math.prod(shape)).reshape(shape)
    arrays = sum(isinstance(e, list) for e in index)
    if arrays > 1:  # index arrays of different lengths do not broadcast: keep one per index
        index = tuple(e[:1] if isinstance(e, list) else e for e in index)
    target = x[index].shape
    value = -np.arange(math.prod(target)).reshape(target) - 1 if array_value else -1
    t = mt.tensor(x, chunk_size=chunk_size)
    t[index] = value
    assert_eq(t, numpy_set(index, value, x))


def test_a_new_axis_between_advanced_indexes_puts_the_value_s_dims_in_front():
    x = np.zeros((2, 3, 2), dtype=int)
    index = (slice(None), 0, None, [0, 1])
    value = np.arange(4).reshape(x[index].shape)  # (2, 2, 1): the array's dim first, as numpy reads it
    t = mt.tensor(x, chunk_size=1)
    t[index] = value
    assert_eq(t, numpy_set(index, value, x))


@pytest.mark.parametrize("index", [(0, [7]), ([0, 1], 0, [9, 1]), (slice(None), 1, [6])])
def test_a_bad_value_in_an_index_tensor_assigned_through_names_the_users_axis(index):
    x = np.arange(60).reshape(3, 4, 5)
    as_numpy = tuple(np.array(e) if isinstance(e, list) else e for e in index)

    def numpy_call():
        x.copy()[as_numpy] = 1

    kind, message = numpy_error(numpy_call)
    t = mt.tensor(x, chunk_size=2)
    with pytest.raises(kind, match=message):
        t[tuple(mt.tensor(e) if isinstance(e, list) else e for e in index)] = 1
        t.execute()


def test_an_empty_ellipsis_between_advanced_indexes_writes_numpy_s_layout():
    x = np.zeros((5, 5, 6), dtype=int)
    index = (slice(1, 2), 0, Ellipsis, [1, 2, 3])
    value = np.arange(3).reshape(x[index].shape)  # (3, 1): the array's dim first, as numpy reads it
    t = mt.tensor(x, chunk_size=(3, 3, 5))
    t[index] = value
    assert_eq(t, numpy_set(index, value, x))
