"""meshgrid, mgrid, ogrid, indices and the triangle / diagonal index tuples against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from tensor_testing import assert_eq

import mars.tensor as mt
from mars.core.options import option_context


def _all_eq(results, expected):
    assert len(results) == len(expected)
    for r, e in zip(results, expected):
        assert_eq(r, e)


@pytest.mark.parametrize("chunk", [5, 2, 1])
@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid(chunk, indexing, sparse):
    x, y, z = np.arange(5), np.linspace(0, 1, 3), np.array([[7, 8]])
    tx, ty, tz = (mt.tensor(v, chunk_size=chunk) for v in (x, y, z))
    _all_eq(mt.meshgrid(tx, ty, tz, indexing=indexing, sparse=sparse),
            np.meshgrid(x, y, z, indexing=indexing, sparse=sparse))
    _all_eq(mt.meshgrid(tx, indexing=indexing, sparse=sparse), np.meshgrid(x, indexing=indexing, sparse=sparse))
    assert isinstance(mt.meshgrid(tx, ty), tuple)


def test_meshgrid_errors():
    with pytest.raises(ValueError, match="Valid values for `indexing`"):
        mt.meshgrid(mt.arange(3), indexing="xx")


@pytest.mark.parametrize("dtype", [int, np.float32])
def test_indices(dtype):
    assert_eq(mt.indices((3, 4), dtype=dtype), np.indices((3, 4), dtype=dtype))
    _all_eq(mt.indices((3, 1, 2), dtype=dtype, sparse=True), np.indices((3, 1, 2), dtype=dtype, sparse=True))
    assert_eq(mt.indices(()), np.indices(()))


@pytest.mark.parametrize("key", [
    (slice(0, 5), slice(0, 3)), (slice(-1, 1, 0.5), slice(0, 2, 4j)), (slice(0, 1, 3j),), (slice(2, 7, 2),),
    (slice(0, 3, 1j), slice(5)),
])
def test_mgrid_ogrid(key):
    if len(key) == 1:
        assert_eq(mt.mgrid[key[0]], np.mgrid[key[0]])
        assert_eq(mt.ogrid[key[0]], np.ogrid[key[0]])
    else:
        assert_eq(mt.mgrid[key], np.mgrid[key])
        _all_eq(mt.ogrid[key], np.ogrid[key])


@pytest.mark.parametrize("n,k,m", [(4, 0, None), (4, 1, None), (5, -2, 3), (3, 5, 7), (4, -9, None), (0, 0, None)])
def test_triangle_indices(n, k, m):
    _all_eq(mt.tril_indices(n, k, m), np.tril_indices(n, k, m))
    _all_eq(mt.triu_indices(n, k, m), np.triu_indices(n, k, m))


def test_triangle_indices_chunked():
    with option_context({"chunk_size": 7}):  # the source op itself cut in chunks (ragged last one)
        lower, upper = mt.tril_indices(40, 3, 30), mt.triu_indices(40, -3, 30)
    assert len(lower[0].execute().nsplits[0]) > 1
    _all_eq(lower, np.tril_indices(40, 3, 30))
    _all_eq(upper, np.triu_indices(40, -3, 30))
    a = np.arange(12).reshape(3, 4)
    _all_eq(mt.tril_indices_from(mt.tensor(a), 1), np.tril_indices_from(a, 1))
    _all_eq(mt.triu_indices_from(a), np.triu_indices_from(a))
    t = mt.tensor(a, chunk_size=2)
    assert_eq(t[mt.triu_indices_from(t)], a[np.triu_indices_from(a)])
    with pytest.raises(ValueError, match="input array must be 2-d"):
        mt.tril_indices_from(mt.ones(3))


def test_diag_and_mask_indices():
    _all_eq(mt.diag_indices(4, 3), np.diag_indices(4, 3))
    a = np.ones((3, 3, 3))
    _all_eq(mt.diag_indices_from(mt.tensor(a)), np.diag_indices_from(a))
    with pytest.raises(ValueError, match="All dimensions of input must be of equal length"):
        mt.diag_indices_from(mt.ones((2, 3)))
    with pytest.raises(ValueError, match="at least 2-d"):
        mt.diag_indices_from(mt.ones(3))
    _all_eq(mt.mask_indices(4, mt.triu, 1), np.mask_indices(4, np.triu, 1))
    _all_eq(mt.mask_indices(3, mt.tril), np.mask_indices(3, np.tril))
