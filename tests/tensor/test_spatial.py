"""mt.spatial.distance: cdist, pdist, squareform equal to scipy across chunkings."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.spatial.distance as sd
from tensor_testing import assert_eq, chunkings

import mars.tensor as mt

RNG = np.random.RandomState(0)
XA = RNG.rand(7, 3)
XB = RNG.rand(5, 3)
BOOL_A = RNG.rand(7, 4) > 0.5
BOOL_B = RNG.rand(5, 4) > 0.5

METRICS = ["euclidean", "sqeuclidean", "cityblock", "chebyshev", "cosine", "correlation", "braycurtis",
           "canberra", "seuclidean", "mahalanobis"]


def _manhattan(u, v):
    return float(np.abs(u - v).sum())


@pytest.mark.parametrize("chunk", chunkings((7, 3)))
@pytest.mark.parametrize("metric", METRICS)
def test_cdist_and_pdist(chunk, metric):
    a = mt.tensor(XA, chunk_size=chunk)
    assert_eq(mt.spatial.distance.cdist(a, mt.tensor(XB, chunk_size=2), metric),
              sd.cdist(XA, XB, metric), atol=1e-13)
    assert_eq(mt.spatial.distance.pdist(a, metric), sd.pdist(XA, metric), atol=1e-13)


@pytest.mark.parametrize("chunk", chunkings((7, 4)))
def test_boolean_metrics_kwargs_and_callables(chunk):
    a, b = mt.tensor(BOOL_A, chunk_size=chunk), mt.tensor(BOOL_B, chunk_size=3)
    for metric in ("hamming", "jaccard", "dice"):
        assert_eq(mt.spatial.distance.cdist(a, b, metric), sd.cdist(BOOL_A, BOOL_B, metric))
        assert_eq(mt.spatial.distance.pdist(a, metric), sd.pdist(BOOL_A, metric))
    x = mt.tensor(XA, chunk_size=chunk if chunk != 1 else 2)
    assert_eq(mt.spatial.distance.pdist(x, "minkowski", p=3), sd.pdist(XA, "minkowski", p=3))
    assert_eq(mt.spatial.distance.cdist(x, XB, "minkowski", p=1.5, w=mt.tensor([1.0, 2.0, 0.5])),
              sd.cdist(XA, XB, "minkowski", p=1.5, w=[1.0, 2.0, 0.5]))
    assert_eq(mt.spatial.distance.pdist(x, _manhattan), sd.pdist(XA, _manhattan))
    assert_eq(mt.spatial.distance.cdist(x, XB, _manhattan), sd.cdist(XA, XB, _manhattan))


@pytest.mark.parametrize("rows", [0, 1, 2])
def test_pdist_few_rows(rows):
    x = XA[:rows]
    assert_eq(mt.spatial.distance.pdist(mt.tensor(x, chunk_size=1)), sd.pdist(x))


def test_distance_errors():
    with pytest.raises(ValueError, match="Unknown Distance Metric"):
        mt.spatial.distance.cdist(mt.ones((2, 2)), mt.ones((2, 2)), "bogus")
    with pytest.raises(ValueError, match="same number of columns"):
        mt.spatial.distance.cdist(mt.ones((2, 2)), mt.ones((2, 3)))
    with pytest.raises(ValueError, match="2-dimensional"):
        mt.spatial.distance.pdist(mt.ones(3))
    with pytest.raises(ValueError, match="2-dimensional"):
        mt.spatial.distance.cdist(mt.ones(3), mt.ones((2, 3)))


@pytest.mark.parametrize("chunk", [21, 5, 1, ((1, 19, 1),)])
def test_squareform_to_matrix(chunk):
    v = np.arange(1, 22, dtype=np.float32)  # 7 x 7
    assert_eq(mt.spatial.distance.squareform(mt.tensor(v, chunk_size=chunk)), sd.squareform(v))
    assert_eq(mt.spatial.distance.squareform(mt.tensor(v[:1], chunk_size=1)), sd.squareform(v[:1]))
    assert_eq(mt.spatial.distance.squareform(mt.tensor(np.array([]))), sd.squareform(np.array([])))


@pytest.mark.parametrize("chunk", chunkings((7, 7)))
def test_squareform_to_vector(chunk):
    m = sd.squareform(np.arange(1, 22)).astype(np.int32)
    assert_eq(mt.spatial.distance.squareform(mt.tensor(m, chunk_size=chunk)), sd.squareform(m))
    assert_eq(mt.spatial.distance.squareform(mt.tensor(m, chunk_size=chunk), checks=False), sd.squareform(m))
    d = mt.spatial.distance.pdist(mt.tensor(XA, chunk_size=chunk))
    assert_eq(mt.spatial.distance.squareform(mt.spatial.distance.squareform(d)), sd.pdist(XA))
    assert_eq(mt.spatial.distance.squareform(mt.tensor(np.zeros((1, 1)))), sd.squareform(np.zeros((1, 1))))


def test_squareform_errors():
    bad = np.arange(9.0).reshape(3, 3)
    with pytest.raises(ValueError, match="must be symmetric"):
        mt.spatial.distance.squareform(mt.tensor(bad, chunk_size=2)).fetch()
    with pytest.raises(ValueError, match="diagonal must be zero"):
        mt.spatial.distance.squareform(mt.tensor(np.ones((3, 3)), chunk_size=2)).fetch()
    with pytest.raises(ValueError, match="Incompatible vector size"):
        mt.spatial.distance.squareform(mt.ones(4))
    with pytest.raises(ValueError, match="must be square"):
        mt.spatial.distance.squareform(mt.ones((2, 3)))
    with pytest.raises(ValueError, match="Forcing 'tovector'"):
        mt.spatial.distance.squareform(mt.ones(3), force="tovector")
    with pytest.raises(ValueError, match="3-dimensional"):
        mt.spatial.distance.squareform(mt.ones((2, 2, 2)))
