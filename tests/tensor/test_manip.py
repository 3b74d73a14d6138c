"""flip, roll, rot90, tile, pad, insert, delete, append, block, resize against numpy across chunkings."""

from __future__ import annotations

import numpy as np
import pytest
from tensor_testing import assert_eq, chunkings

import mars.tensor as mt

A = np.arange(20).reshape(4, 5)


@pytest.mark.parametrize("chunk", chunkings(A.shape))
def test_flips_rolls_rotations(chunk):
    t = mt.tensor(A, chunk_size=chunk)
    assert_eq(mt.flip(t), np.flip(A))
    assert_eq(mt.flip(t, -1), np.flip(A, -1))
    assert_eq(mt.fliplr(t), np.fliplr(A))
    assert_eq(mt.flipud(t), np.flipud(A))
    for shift, axis in [(7, None), (-3, 1), ((1, 12), (0, 1)), (2, (1, 1))]:
        assert_eq(mt.roll(t, shift, axis), np.roll(A, shift, axis))
    for k in range(-1, 5):
        assert_eq(mt.rot90(t, k), np.rot90(A, k))
    assert_eq(mt.rot90(t, 1, (1, 0)), np.rot90(A, 1, (1, 0)))
    assert_eq(mt.rollaxis(mt.ones((2, 3, 4)), 2, 1), np.rollaxis(np.ones((2, 3, 4)), 2, 1))


def test_flip_errors():
    with pytest.raises(ValueError, match="Input must be >= 2-d"):
        mt.fliplr(mt.ones(3))
    with pytest.raises(ValueError, match="Axes must be different"):
        mt.rot90(mt.ones((2, 2)), 1, (0, 0))
    with pytest.raises(np.exceptions.AxisError):
        mt.flip(mt.ones(3), 1)


@pytest.mark.parametrize("chunk", chunkings(A.shape))
def test_tile_resize_append(chunk):
    t = mt.tensor(A, chunk_size=chunk)
    for reps in [2, (2, 1), (1, 0), (2, 1, 3)]:
        assert_eq(mt.tile(t, reps), np.tile(A, reps))
    for shape in [7, (3, 9), (0,), (2, 10)]:
        assert_eq(mt.resize(t, shape), np.resize(A, shape))
    assert_eq(mt.append(t, [[1] * 5], axis=0), np.append(A, [[1] * 5], axis=0))
    assert_eq(mt.append(t, [1.5, 2]), np.append(A, [1.5, 2]))


@pytest.mark.parametrize("chunk", chunkings(A.shape))
def test_insert_delete(chunk):
    t = mt.tensor(A, chunk_size=chunk)
    for obj, axis in [(1, 0), ([0, 2, 2, -1], 1), (slice(None, None, 2), 1), (np.array([1]), 1), (3, None),
                      ([], 0), (np.array([True, False, True, False]), 0)]:
        assert_eq(mt.delete(t, obj, axis), np.delete(A, obj, axis))
    for obj, values, axis in [(1, 9, 0), (1, [1, 2, 3, 4], 1), ([4, 0, 2], [7, 8, 9], 1), ([1], [[5], [6], [7], [8]], 1), ([2], [5, 6], 1),
                              (5, [7, 8], None), (slice(1, 3), 0.5, 0), (4, [[1, 2, 3, 4, 5]], 0)]:
        assert_eq(mt.insert(t, obj, values, axis), np.insert(A, obj, values, axis))


def test_insert_delete_errors():
    t = mt.tensor(A)
    with pytest.raises(IndexError, match="out of bounds"):
        mt.delete(t, 5, 1)
    with pytest.raises(IndexError, match="out of bounds"):
        mt.insert(t, 9, 1, 1)
    with pytest.raises(ValueError, match="boolean array argument obj to delete"):
        mt.delete(t, [True, False], 0)


@pytest.mark.parametrize("chunk", [2, 1])
def test_block(chunk):
    a, b, c = np.ones((2, 2), int), np.zeros((2, 3), int), np.arange(5)
    ta, tb, tc = (mt.tensor(x, chunk_size=chunk) for x in (a, b, c))
    assert_eq(mt.block([[ta, tb], [tc]]), np.block([[a, b], [c]]))
    assert_eq(mt.block([ta, 2 * ta]), np.block([a, 2 * a]))
    assert_eq(mt.block([[1, 2], [3, 4]]), np.block([[1, 2], [3, 4]]))
    with pytest.raises(ValueError, match="List depths are mismatched"):
        mt.block([[ta], tb])
    with pytest.raises(TypeError, match="is a tuple"):
        mt.block([(ta, tb)])
    with pytest.raises(ValueError, match="cannot be empty"):
        mt.block([[]])


PAD_CASES = [
    ("constant", {}), ("constant", {"constant_values": ((1, 2), (3, 4))}), ("constant", {"constant_values": 2.7}),
    ("edge", {}), ("wrap", {}), ("reflect", {}), ("symmetric", {}), ("reflect", {"reflect_type": "odd"}),
    ("symmetric", {"reflect_type": "odd"}), ("linear_ramp", {"end_values": (5, -3)}), ("maximum", {}),
    ("minimum", {"stat_length": 2}), ("mean", {"stat_length": (1, 3)}), ("median", {}), ("mean", {}),
]


@pytest.mark.parametrize("chunk", chunkings(A.shape))
@pytest.mark.parametrize("mode,kw", PAD_CASES)
def test_pad(chunk, mode, kw):
    for a in (A, A.astype(np.float32) / 3):
        t = mt.tensor(a, chunk_size=chunk)
        for width in [1, (2, 3), ((11, 1), (0, 9))]:
            # float32 means: the chunked sum rounds differently in the last place
            assert_eq(mt.pad(t, width, mode, **kw), np.pad(a, width, mode, **kw), rtol=1e-6)


def test_pad_edge_cases():
    t = mt.tensor(A)
    result = mt.pad(t, 2, "empty")
    assert result.shape == (8, 9) and result.dtype == A.dtype
    assert_eq(result[2:-2, 2:-2], A)
    assert_eq(mt.pad(mt.tensor(np.ones((0, 3))), ((1, 1), (0, 0))), np.pad(np.ones((0, 3)), ((1, 1), (0, 0))))
    assert_eq(mt.pad(mt.tensor([1, 2, 3]), {0: (1, 2)}, "edge"), np.pad(np.array([1, 2, 3]), {0: (1, 2)}, "edge"))
    assert_eq(mt.pad(mt.tensor([[5]]), 3, "reflect"), np.pad(np.array([[5]]), 3, "reflect"))
    with pytest.raises(ValueError, match="can't extend empty axis"):
        mt.pad(mt.tensor(np.ones((0, 3))), 1, "edge")
    with pytest.raises(ValueError, match="unsupported keyword arguments"):
        mt.pad(t, 1, "edge", constant_values=1)
    with pytest.raises(ValueError, match="mode 'bogus' is not supported"):
        mt.pad(t, 1, "bogus")
    with pytest.raises(TypeError, match="must be of integral type"):
        mt.pad(t, 1.5)
    with pytest.raises(ValueError, match="negative values"):
        mt.pad(t, -1)
    with pytest.raises(ValueError, match="stat_length of 0"):
        mt.pad(t, 1, "maximum", stat_length=0)


def test_numpy_dispatch_and_trim_zeros():
    t = mt.tensor(A, chunk_size=2)
    assert isinstance(np.flip(t), mt.Tensor)
    assert_eq(np.pad(t, 1), np.pad(A, 1))
    with pytest.raises(NotImplementedError, match="trim_zeros"):
        mt.trim_zeros(mt.tensor([0, 1, 0]))
