"""Reading through an index: ``t[index]`` and take / nonzero / flatnonzero / argwhere / compress."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mars.tensor as mt
import mars.tensor.indexing.api  # noqa: F401 - installs Tensor.__getitem__ / __setitem__
from mars.core.tiling import tile_now
from mars.tensor.indexing.basic import TensorSliceChunk
from mars.tensor.indexing.fancy import TensorGatherPoints, TensorSelectPoints

from tensor_testing import assert_eq, chunkings

X = np.arange(7 * 6 * 5).reshape(7, 6, 5) - 80
CHUNKINGS = chunkings(X.shape)


def numpy_error(func):
    """The exception numpy raises for ``func``: its type and a regex of its exact message."""
    with pytest.raises(Exception) as info:
        func()
    return info.type, "^" + re.escape(str(info.value)) + "$"


BASIC = [
    3, -1, (slice(None, None, -1),), (slice(5, 1, -2), 0), (slice(-2, None, -3), None, slice(None, None, 2)),
    (Ellipsis, 4), (None, Ellipsis, None), (slice(4, 2),), (slice(10, 20),), (2, slice(None), -5),
    (slice(None, None, 7), slice(-1, -7, -1)), (Ellipsis,), (), (0, 0, 0),
]


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
@pytest.mark.parametrize("index", BASIC, ids=range(len(BASIC)))
def test_basic_indexes_like_numpy(chunk_size, index):
    assert_eq(mt.tensor(X, chunk_size=chunk_size)[index], X[index])


def test_basic_index_slices_only_the_chunks_it_touches():
    t = mt.tensor(X, chunk_size=2)  # 4 x 3 x 3 chunks
    tiled = tile_now(t[1:3, ::-4])
    assert all(isinstance(c.op, TensorSliceChunk) and c.op.fusible for c in tiled.chunks)
    read = {c.inputs[0].index for c in tiled.chunks}
    assert {i[:2] for i in read} == {(0, 2), (0, 0), (1, 2), (1, 0)}  # rows 1..2, columns 5 and 1
    assert tiled.nsplits == ((1, 1), (1, 1), (2, 2, 1))


@pytest.mark.parametrize("index", [7, (0, -7), (0, 0, 5), (0, 0, 0, 0), (Ellipsis, Ellipsis), (slice(None, None, 0),)])
def test_bad_basic_indexes_raise_as_numpy_when_built(index):
    kind, message = numpy_error(lambda: X[index])
    with pytest.raises(kind, match=message):
        mt.tensor(X, chunk_size=3)[index]


FANCY = [
    [4, 0, 4, -1, 2], (slice(None), [[5, 0], [0, 5]]), ([1, 1], [2, 3], [4, 0]), ([[0], [6]], [1, 2, 3]),
    (1, slice(None), [3, 0, 3]), ([0, 2], slice(None), [1, 4]), (slice(1, 5), [3, 3], 2), (np.array([], dtype=int),),
    (None, [2, 1], Ellipsis, [0, 0]),
]


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
@pytest.mark.parametrize("index", FANCY, ids=range(len(FANCY)))
def test_integer_arrays_like_numpy(chunk_size, index):
    assert_eq(mt.tensor(X, chunk_size=chunk_size)[index], X[index])


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_integer_array_tensors_are_read_first(chunk_size):
    t = mt.tensor(X, chunk_size=chunk_size)
    index = mt.tensor(np.array([[6, -7], [3, 3]]), chunk_size=1)
    assert_eq(t[index], X[[[6, -7], [3, 3]]])
    assert_eq(t[:, mt.argsort(t[0, :, 0])[::-1], 1], X[:, np.argsort(X[0, :, 0])[::-1], 1])
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 7"):
        t[mt.tensor([0, 7])].execute()
    with pytest.raises(IndexError, match="index -9 is out of bounds for axis 1 with size 6"):
        t[:, mt.tensor([0, -9, 6])].execute()  # numpy names the first bad one


def test_bad_integer_arrays_raise_as_numpy_when_built():
    t = mt.tensor(X, chunk_size=3)
    for index in ([0, 7], (0, [1, -7]), ([0, 1], [0, 1, 2]), [0.5]):
        kind, message = numpy_error(lambda: X[index])
        with pytest.raises(kind, match=message):
            t[index]


def test_each_touched_input_chunk_is_read_by_one_select_op():
    x = np.arange(100) * 10
    idx = np.random.RandomState(0).randint(-100, 100, size=1000)
    tiled = tile_now(mt.tensor(x, chunk_size=10)[idx])
    assert all(isinstance(c.op, TensorGatherPoints) for c in tiled.chunks)
    selects = {id(i.op) for c in tiled.chunks for i in c.inputs}
    assert all(isinstance(i.op, TensorSelectPoints) for c in tiled.chunks for i in c.inputs)
    assert len(selects) == 10  # one per input chunk, not one per (input, output) pair
    assert_eq(mt.tensor(x, chunk_size=10)[idx], x[idx])


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_masks_like_numpy(chunk_size):
    t = mt.tensor(X, chunk_size=chunk_size)
    assert_eq(t[t > 3], X[X > 3])
    assert_eq(t[t[:, :, 0] % 3 == 0], X[X[:, :, 0] % 3 == 0])  # over the leading dims
    assert_eq(t[:, X[0, :, 0] > -78], X[:, X[0, :, 0] > -78])
    assert_eq(t[mt.tensor(X % 4 == 1, chunk_size=4)], X[X % 4 == 1])  # chunked unlike t
    assert_eq(t[X < 0], X[X < 0])
    assert_eq(t[t > 1000], X[X > 1000])


def test_a_masked_tensor_has_unknown_sizes_until_run_and_feeds_other_ops():
    t = mt.tensor(X, chunk_size=(3, 4, 2))
    picked = t[t > 0]
    assert math.isnan(picked.shape[0])
    assert_eq(picked.sum(), X[X > 0].sum())
    assert_eq((picked * 2).mean(), (X[X > 0] * 2).mean())
    assert_eq(picked[::-3][1:], X[X > 0][::-3][1:])
    picked.execute()
    assert picked.shape == X[X > 0].shape


@pytest.mark.parametrize("shape", [(6,), (7, 5), (7, 6, 5)])
def test_masks_of_the_wrong_shape_raise_as_numpy(shape):
    mask = np.ones(shape, dtype=bool)
    x = X[:7, :6, :4]
    kind, message = numpy_error(lambda: x[mask])
    with pytest.raises(kind, match=message):
        mt.tensor(x, chunk_size=3)[mask]
    with pytest.raises(kind, match=message):
        mt.tensor(x, chunk_size=3)[mt.tensor(mask)]


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_chained_indexing(chunk_size):
    t = mt.tensor(X, chunk_size=chunk_size)
    assert_eq(t[::-1][2:, [4, 0]][..., ::2][t[:5, 0, 0] > -70], X[::-1][2:, [4, 0]][..., ::2][X[:5, 0, 0] > -70])
    assert_eq(t[1][[3, 1]][:, None, -1], X[1][[3, 1]][:, None, -1])


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_index_functions_like_numpy(chunk_size):
    t = mt.tensor(X, chunk_size=chunk_size)
    for got, want in zip(mt.nonzero(t % 3 == 0), np.nonzero(X % 3 == 0)):
        assert_eq(got, want)
    for got, want in zip((t > 50).nonzero(), (X > 50).nonzero()):
        assert_eq(got, want)
    assert_eq(mt.argwhere(t % 7 == 0), np.argwhere(X % 7 == 0))
    assert_eq(mt.flatnonzero(t > 10), np.flatnonzero(X > 10))
    assert_eq(mt.take(t, [[4, -1], [0, 0]], axis=1), np.take(X, [[4, -1], [0, 0]], axis=1))
    assert_eq(mt.take(t, [200, 0, 3]), np.take(X, [200, 0, 3]))
    assert_eq(mt.take(t, mt.tensor([2, 2, 0]), axis=-1), np.take(X, [2, 2, 0], axis=-1))
    assert_eq(mt.compress([True, False, True], t, axis=1), np.compress([True, False, True], X, axis=1))
    assert_eq(mt.compress([0, 1, 1], t), np.compress([0, 1, 1], X))
    assert_eq(mt.compress(t[:, 0, 0] > -40, t, axis=0), np.compress(X[:, 0, 0] > -40, X, axis=0))


def test_index_function_errors_as_numpy():
    t = mt.tensor(X, chunk_size=3)
    for mars_call, numpy_call in [
        (lambda: mt.take(t, [210]), lambda: np.take(X, [210])),
        (lambda: mt.take(t, [1], axis=3), lambda: np.take(X, [1], axis=3)),
        (lambda: mt.compress([0] * 7 + [1], t, axis=0), lambda: np.compress([0] * 7 + [1], X, axis=0)),
        (lambda: mt.nonzero(mt.tensor(3)), lambda: np.nonzero(np.array(3))),
    ]:
        kind, message = numpy_error(numpy_call)
        with pytest.raises(kind, match=message):
            mars_call()


def test_compress_with_a_condition_longer_than_the_axis():
    t = mt.tensor(X, chunk_size=3)
    assert_eq(mt.compress([1, 0, 1, 0, 0, 0, 0, 0], t, axis=0), np.compress([1, 0, 1, 0, 0, 0, 0, 0], X, axis=0))


@st.composite
def basic_cases(draw):
    shape = tuple(draw(st.lists(st.integers(0, 6), min_size=1, max_size=3)))
    chunk_size = tuple(draw(st.integers(1, max(s, 1))) for s in shape)
    index = []
    for size in shape:
        if draw(st.booleans()) and draw(st.booleans()):
            index.append(None)
        if size and draw(st.booleans()):
            index.append(draw(st.integers(-size, size - 1)))
        else:
            bound = st.none() | st.integers(-size - 2, size + 2)
            index.append(slice(draw(bound), draw(bound), draw(st.sampled_from([None, 1, 2, 3, -1, -2, -4]))))
    cut = draw(st.integers(0, len(index)))
    if draw(st.booleans()):
        index = index[:cut] + [Ellipsis] + index[cut + 1:]
    else:
        index = index[:cut]
    return shape, chunk_size, tuple(index)


@settings(max_examples=40, deadline=None)
@given(basic_cases())
def test_random_basic_indexes(case):
    shape, chunk_size, index = case
    x = np.arange(math.prod(shape)).reshape(shape)
    assert_eq(mt.tensor(x, chunk_size=chunk_size)[index], x[index])


def test_an_empty_ellipsis_between_advanced_indexes_puts_their_dims_in_front():
    x = np.arange(150).reshape(5, 5, 6)
    index = (slice(1, 2), 0, Ellipsis, [1, 2, 3])
    assert_eq(mt.tensor(x, chunk_size=(3, 3, 5))[index], x[index])  # numpy: (3, 1)


@pytest.mark.parametrize("index", [
    (0, mt.tensor([1, 7])),
    (mt.tensor([0, 1]), 0, mt.tensor([9, 1])),
    (slice(None), 1, mt.tensor([6])),
    (None, 1, mt.tensor([-7])),
])
def test_a_bad_value_in_an_index_tensor_names_the_users_axis(index):
    x = np.arange(60).reshape(3, 4, 5)
    as_numpy = tuple(e.to_numpy() if isinstance(e, mt.Tensor) else e for e in index)
    kind, message = numpy_error(lambda: x[as_numpy])
    with pytest.raises(kind, match=message):
        mt.tensor(x, chunk_size=2)[index].execute()
