"""histogram, histogram_bin_edges, histogramdd/2d, bincount and digitize against numpy across chunkings."""

from __future__ import annotations

import numpy as np
import pytest
from tensor_testing import assert_eq, chunkings

import mars.tensor as mt

RS = np.random.RandomState(5)

HIST_ARGS = [
    dict(), dict(bins=7), dict(bins=5, range=(-1, 1)), dict(bins=[-2, 0, 0.5, 3]), dict(density=True),
    dict(bins=4, density=True, range=(-2, 2)), dict(bins="auto"), dict(bins="fd"), dict(bins="doane"),
    dict(bins="scott"), dict(bins="sqrt"), dict(bins="rice"), dict(bins="sturges", range=(-1, 2)),
]


@pytest.mark.parametrize("chunk_size", chunkings((60,)))
@pytest.mark.parametrize("kw", HIST_ARGS)
def test_histogram(chunk_size, kw):
    x = RS.normal(size=60)
    hist, edges = mt.histogram(mt.tensor(x, chunk_size=chunk_size), **kw)
    expected_hist, expected_edges = np.histogram(x, **kw)
    assert_eq(hist, expected_hist)
    assert_eq(edges, expected_edges)
    assert_eq(mt.histogram_bin_edges(mt.tensor(x, chunk_size=chunk_size), **{k: v for k, v in kw.items()
                                                                               if k != "density"}),
              np.histogram_bin_edges(x, **{k: v for k, v in kw.items() if k != "density"}))


@pytest.mark.parametrize("chunk_size", chunkings((4, 6)))
def test_histogram_weights_ints_and_float32(chunk_size):
    x = RS.randint(0, 9, (4, 6))
    w = RS.rand(4, 6).astype(np.float32)
    t = mt.tensor(x, chunk_size=chunk_size)
    for got, expected in zip(mt.histogram(t, bins=4, weights=mt.tensor(w, chunk_size=2)),
                             np.histogram(x, bins=4, weights=w)):
        assert_eq(got, expected, rtol=1e-6)
    f = x.astype(np.float32)
    for got, expected in zip(mt.histogram(mt.tensor(f, chunk_size=chunk_size), bins=3), np.histogram(f, bins=3)):
        assert_eq(got, expected)
    for got, expected in zip(mt.histogram(t, bins="auto"), np.histogram(x, bins="auto")):
        assert_eq(got, expected)


def test_histogram_edge_cases_and_errors():
    for data in (np.zeros(0), np.full(5, 3.0)):
        for got, expected in zip(mt.histogram(mt.tensor(data, chunk_size=2)), np.histogram(data)):
            assert_eq(got, expected)
    with pytest.raises(ValueError, match="autodetected range of \\[nan, nan\\] is not finite"):
        mt.histogram(mt.tensor([1.0, np.nan], chunk_size=1))[0].execute()
    with pytest.raises(ValueError, match="must be positive"):
        mt.histogram(mt.tensor([1.0]), bins=0)
    with pytest.raises(ValueError, match="increase monotonically"):
        mt.histogram(mt.tensor([1.0]), bins=[2, 1])
    with pytest.raises(ValueError, match="not a valid estimator"):
        mt.histogram(mt.tensor([1.0]), bins="foo")
    with pytest.raises(TypeError, match="weighted data"):
        mt.histogram(mt.tensor([1.0]), bins="auto", weights=[1.0])
    with pytest.raises(ValueError, match="max must be larger than min"):
        mt.histogram(mt.tensor([1.0]), range=(2, 1))
    with pytest.raises(NotImplementedError, match="stone"):
        mt.histogram(mt.tensor([1.0]), bins="stone")


@pytest.mark.parametrize("chunk_size", chunkings((30, 3)))
@pytest.mark.parametrize("kw", [dict(), dict(bins=(3, 4, 2)), dict(bins=3, range=[(0, 1), (0, 0.5), None]),
                                dict(bins=[np.array([0, 0.3, 1]), 2, 3], density=True)])
def test_histogramdd(chunk_size, kw):
    s = RS.rand(30, 3)
    hist, edges = mt.histogramdd(mt.tensor(s, chunk_size=chunk_size), **kw)
    expected_hist, expected_edges = np.histogramdd(s, **kw)
    assert_eq(hist, expected_hist)
    assert len(edges) == len(expected_edges)
    for got, expected in zip(edges, expected_edges):
        assert_eq(got, expected)


@pytest.mark.parametrize("chunk_size", chunkings((25,)))
def test_histogram2d(chunk_size):
    x, y, w = RS.rand(25), RS.rand(25), RS.rand(25)
    for kw in (dict(), dict(bins=4, density=True), dict(bins=[3, 5], weights=w), dict(bins=[0, 0.2, 0.5, 1.0])):
        expected = np.histogram2d(x, y, **kw)
        got = mt.histogram2d(mt.tensor(x, chunk_size=chunk_size), y, **kw)
        for g, e in zip(got, expected):
            assert_eq(g, e)


@pytest.mark.parametrize("chunk_size", chunkings((40,)))
def test_bincount(chunk_size):
    x = RS.randint(0, 12, 40)
    t = mt.tensor(x, chunk_size=chunk_size)
    assert_eq(mt.bincount(t), np.bincount(x))
    assert_eq(mt.bincount(t, minlength=20), np.bincount(x, minlength=20))
    w = RS.rand(40)
    assert_eq(mt.bincount(t, weights=mt.tensor(w, chunk_size=7)), np.bincount(x, weights=w))
    assert_eq(mt.bincount(t[t > 100], minlength=3), np.bincount(x[x > 100], minlength=3))
    assert np.isnan(mt.bincount(t).shape[0])


def test_bincount_errors():
    with pytest.raises(ValueError, match="no negative elements"):
        mt.bincount(mt.tensor([1, -1, 2], chunk_size=1)).execute()
    with pytest.raises(TypeError, match="Cannot cast"):
        mt.bincount(mt.tensor([1.0]))
    with pytest.raises(ValueError, match="too deep"):
        mt.bincount(mt.ones((2, 2), dtype=int))
    with pytest.raises(ValueError, match="minlength"):
        mt.bincount(mt.tensor([1]), minlength=-1)
    with pytest.raises(ValueError, match="same length"):
        mt.bincount(mt.tensor([1, 2]), weights=[1.0])


@pytest.mark.parametrize("chunk_size", chunkings((5, 8)))
@pytest.mark.parametrize("right", [False, True])
def test_digitize(chunk_size, right):
    x = RS.rand(5, 8) * 4
    x[0, 0] = 2.0
    t = mt.tensor(x, chunk_size=chunk_size)
    for bins in ([0, 1, 2, 3], [3.5, 2, 0.5]):
        assert_eq(mt.digitize(t, bins, right=right), np.digitize(x, bins, right=right))
    assert_eq(mt.digitize(t, mt.tensor([0, 1, 2, 3], chunk_size=3), right=right),
              np.digitize(x, [0, 1, 2, 3], right=right))
    with pytest.raises(ValueError, match="monotonically"):
        mt.digitize(t, [3, 1, 2])
