"""searchsorted, partition/argpartition, lexsort and topk/argtopk against numpy across chunkings."""

from __future__ import annotations

import numpy as np
import pytest
from tensor_testing import assert_eq, chunkings

import mars.tensor as mt

RS = np.random.RandomState(11)


@pytest.mark.parametrize("chunk_size", chunkings((40,)) + [((1, 1, 38),), "filtered"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(chunk_size, side):
    a = np.sort(RS.randint(0, 30, 40))
    v = RS.randint(-3, 33, (4, 6))
    if chunk_size == "filtered":  # a chunk left empty by a filter, sizes known only after running
        keep = np.ones(40, bool)
        keep[10:20] = False
        t = mt.tensor(a, chunk_size=10)[mt.tensor(keep, chunk_size=10)]
        a = a[keep]
    else:
        t = mt.tensor(a, chunk_size=chunk_size)
    assert_eq(mt.searchsorted(t, mt.tensor(v, chunk_size=(3, 4)), side=side), np.searchsorted(a, v, side=side))
    assert_eq(mt.searchsorted(t, 7, side=side), np.searchsorted(a, 7, side=side))
    assert_eq(mt.searchsorted(t, [5.5, 100], side=side), np.searchsorted(a, [5.5, 100], side=side))


@pytest.mark.parametrize("chunk_size", chunkings((25,)))
def test_searchsorted_sorter_nan_and_errors(chunk_size):
    b = RS.rand(25)
    b[[3, 9]] = np.nan
    sorter = np.argsort(b)
    v = np.array([0.1, 0.5, np.nan, 2.0])
    assert_eq(mt.searchsorted(mt.tensor(b, chunk_size=chunk_size), v, sorter=sorter),
              np.searchsorted(b, v, sorter=sorter))
    with pytest.raises(ValueError, match="search side"):
        mt.searchsorted(mt.tensor(b), 1, side="middle")
    with pytest.raises(ValueError, match="1-D"):
        mt.searchsorted(mt.ones((2, 2)), 1)
    assert_eq(mt.searchsorted(mt.tensor(np.zeros(0), chunk_size=1), v), np.searchsorted(np.zeros(0), v))


def _check_partition(got, x, kth, axis):
    expected = np.partition(x, kth, axis=axis)
    value = np.moveaxis(got.execute().fetch(), axis, -1)
    exp = np.moveaxis(expected, axis, -1)
    assert value.shape == exp.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(np.sort(value, axis=-1), np.sort(exp, axis=-1))
    for k in np.atleast_1d(kth) % value.shape[-1]:
        np.testing.assert_array_equal(value[..., k], exp[..., k])
        assert (value[..., :k] <= value[..., k:k + 1]).all() and (value[..., k + 1:] >= value[..., k:k + 1]).all()


@pytest.mark.parametrize("chunk_size", chunkings((6, 9)))
@pytest.mark.parametrize("kth,axis", [(0, -1), (4, 1), ([1, 5], 1), (-1, 0), (2, 0)])
def test_partition_nd(chunk_size, kth, axis):
    x = RS.randint(0, 50, (6, 9)).astype(float)
    t = mt.tensor(x, chunk_size=chunk_size)
    _check_partition(mt.partition(t, kth, axis=axis), x, kth, axis)
    idx = mt.argpartition(t, kth, axis=axis).execute().fetch()
    taken = np.take_along_axis(x, idx, axis=axis)
    _check_partition(mt.tensor(taken), x, kth, axis)


@pytest.mark.parametrize("chunk_size", chunkings((30,)))
def test_partition_1d_and_errors(chunk_size):
    x = RS.rand(30)
    t = mt.tensor(x, chunk_size=chunk_size)
    for kth in (0, 13, [3, 20], -1):
        _check_partition(mt.partition(t, kth), x, kth, 0)
        idx = mt.argpartition(t, kth).execute().fetch()
        assert sorted(idx) == list(range(30))
        _check_partition(mt.tensor(x[idx]), x, kth, 0)
    _check_partition(mt.partition(mt.tensor(x.reshape(5, 6), chunk_size=2), 7, axis=None), x, 7, 0)
    with pytest.raises(ValueError, match=r"kth\(=30\) out of bounds \(30\)"):
        mt.partition(t, 30)


@pytest.mark.parametrize("chunk_size", chunkings((7, 20)))
@pytest.mark.parametrize("k", [1, 5, 7])
def test_topk(chunk_size, k):
    x = RS.rand(7, 20)
    x[2, 3] = np.nan
    t = mt.tensor(x, chunk_size=chunk_size)
    assert_eq(mt.topk(t, k), np.sort(x, axis=-1)[:, ::-1][:, :k])
    assert_eq(mt.topk(t, k, axis=0, largest=False), np.sort(x, axis=0)[:k])
    idx = mt.argtopk(t, k, axis=1)
    assert idx.dtype == np.intp
    np.testing.assert_array_equal(np.take_along_axis(x, idx.execute().fetch(), 1), np.sort(x)[:, ::-1][:, :k])
    idx = mt.argtopk(t, k, axis=0, largest=False).execute().fetch()
    np.testing.assert_array_equal(np.take_along_axis(x, idx, 0), np.sort(x, axis=0)[:k])
    unsorted = mt.topk(t, k, sorted=False).execute().fetch()
    np.testing.assert_array_equal(np.sort(unsorted)[:, ::-1], np.sort(x)[:, ::-1][:, :k])


def test_topk_flat_and_errors():
    x = RS.randint(0, 1000, 500)
    t = mt.tensor(x, chunk_size=33)
    assert_eq(mt.topk(t, 100), np.sort(x)[::-1][:100])
    assert_eq(mt.topk(mt.tensor(x.reshape(20, 25), chunk_size=6), 4, axis=None), np.sort(x)[::-1][:4])
    assert_eq(t[np.argsort(x)[::-1][:3]], x[mt.argtopk(t, 3).execute().fetch()])
    with pytest.raises(ValueError, match="larger than the axis length"):
        mt.topk(t, 501)
    with pytest.raises(ValueError, match="positive integer"):
        mt.topk(t, 0)
    with pytest.raises(NotImplementedError, match="parallel_kind"):
        mt.topk(t, 3, parallel_kind="psrs")


@pytest.mark.parametrize("chunk_size", chunkings((5, 12)))
def test_lexsort(chunk_size):
    k1 = RS.randint(0, 3, (5, 12))
    k2 = RS.randint(0, 2, (5, 12))
    keys = [mt.tensor(k1, chunk_size=chunk_size), mt.tensor(k2, chunk_size=chunk_size)]
    assert_eq(mt.lexsort(keys), np.lexsort([k1, k2]))
    assert_eq(mt.lexsort(keys, axis=0), np.lexsort([k1, k2], axis=0))
    assert_eq(mt.lexsort(mt.tensor(np.stack([k1[0], k2[0]]), chunk_size=4)), np.lexsort(np.stack([k1[0], k2[0]])))
    with pytest.raises(TypeError, match="len > 0"):
        mt.lexsort([])


@pytest.mark.parametrize("largest", [True, False])
def test_topk_block_scan(monkeypatch, largest):
    # small blocks send long 1-D chunks through the one-pass scan against a running threshold
    from mars.tensor.base import topk as topk_mod

    monkeypatch.setattr(topk_mod, "BLOCK", 16)
    x = RS.rand(700)
    x[[5, 300, 301]] = np.nan
    x[400:420] = 0.5  # ties at the threshold
    t = mt.tensor(x, chunk_size=((250, 450),))
    expected = np.sort(x)[::-1][:4] if largest else np.sort(x)[:4]
    assert_eq(mt.topk(t, 4, largest=largest), expected)
    idx = mt.argtopk(t, 4, largest=largest).execute().fetch()
    np.testing.assert_array_equal(x[idx], expected)
    ascending = np.sort(RS.rand(600))  # every block improves on the last: the scan's worst case
    assert_eq(mt.topk(mt.tensor(ascending, chunk_size=300), 3, largest=largest),
              ascending[::-1][:3] if largest else ascending[:3])
