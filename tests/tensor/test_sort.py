"""sort, argsort, quantile, percentile and median against numpy across chunkings."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tensor_testing import assert_eq, chunkings

import mars.tensor as mt

RS = np.random.RandomState(3)


@pytest.mark.parametrize("n,chunk_size", [(100, 7), (1000, 100), (5, 1), (50, 50), (0, 3), (37, 10)])
def test_sort_1d_by_partitions(n, chunk_size):
    x = RS.randint(0, 20, n).astype(float)
    if n > 3:
        x[3] = np.nan  # NaNs sort last, as numpy
    s = mt.sort(mt.tensor(x, chunk_size=chunk_size))
    assert_eq(s, np.sort(x))
    assert s.shape == (n,)
    assert_eq(s[::-1][:3], np.sort(x)[::-1][:3])


@pytest.mark.parametrize("chunk_size", chunkings((5, 7)))
@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_sort_nd(chunk_size, axis):
    y = RS.rand(5, 7)
    assert_eq(mt.sort(mt.tensor(y, chunk_size=chunk_size), axis=axis), np.sort(y, axis=axis))
    yi = (y * 10).astype("int16")
    t = mt.tensor(yi, chunk_size=chunk_size)
    before = t * 1
    assert t.sort(axis=axis if axis is not None else -1) is None  # in place, as ndarray.sort
    assert_eq(t, np.sort(yi, axis=axis if axis is not None else -1))
    assert_eq(before, yi)


@pytest.mark.parametrize("n,chunk_size", [(100, 7), (1000, 100), (5, 1), (50, 50), (0, 3), (37, 10)])
def test_argsort_1d_is_stable_and_sorts(n, chunk_size):
    x = RS.randint(0, 20, n).astype(float)
    if n > 3:
        x[3] = np.nan
    t = mt.tensor(x, chunk_size=chunk_size)
    assert_eq(mt.argsort(t), np.argsort(x, kind="stable"))
    assert_eq(t.argsort(), np.argsort(x, kind="stable"))


@pytest.mark.parametrize("chunk_size", chunkings((5, 7)))
@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_argsort_nd(chunk_size, axis):
    y = RS.randint(0, 4, (5, 7))
    assert_eq(mt.argsort(mt.tensor(y, chunk_size=chunk_size), axis=axis), np.argsort(y, axis=axis, kind="stable"))


QS = [0.5, 0.0, 1.0, 0.33, [0.1, 0.9], [[0.2, 0.4], [0.6, 0.8]]]


@pytest.mark.parametrize("chunk_size", chunkings((9, 7)))
@pytest.mark.parametrize("q", QS, ids=[str(q) for q in QS])
def test_quantile(chunk_size, q):
    x = RS.rand(9, 7)
    t = mt.tensor(x, chunk_size=chunk_size)
    for axis in [None, 0, 1, -1]:
        for keepdims in (False, True):
            assert_eq(mt.quantile(t, q, axis=axis, keepdims=keepdims), np.quantile(x, q, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("dtype", ["int64", "int8", "float32", "float64"])
def test_median_and_percentile_dtypes(dtype):
    x = (RS.rand(11, 4) * 50).astype(dtype)
    t = mt.tensor(x, chunk_size=3)
    assert_eq(mt.median(t), np.median(x), rtol=1e-6)
    assert_eq(mt.median(t, axis=0), np.median(x, axis=0), rtol=1e-6)
    assert_eq(mt.percentile(t, 30), np.percentile(x, 30), rtol=1e-6)
    assert_eq(mt.percentile(t, [25, 75], axis=1), np.percentile(x, [25, 75], axis=1), rtol=1e-6)


def test_quantile_nan_and_errors():
    x = RS.rand(6, 5)
    x[2, 3] = np.nan
    assert_eq(mt.median(mt.tensor(x, chunk_size=2), axis=0), np.median(x, axis=0))
    with pytest.raises(ValueError, match=r"range \[0, 1\]"):
        mt.quantile(mt.tensor(x), 1.5)
    with pytest.raises(ValueError, match=r"range \[0, 100\]"):
        mt.percentile(mt.tensor(x), -1)
    with pytest.raises(NotImplementedError, match="method"):
        mt.quantile(mt.tensor(x), 0.5, method="nearest")


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 60), chunk=st.integers(1, 20), q=st.floats(0, 1), seed=st.integers(0, 100))
def test_random_sorts_and_quantiles(n, chunk, q, seed):
    x = np.random.RandomState(seed).randint(-5, 5, n).astype(float)
    t = mt.tensor(x, chunk_size=chunk)
    assert_eq(mt.sort(t), np.sort(x))
    assert_eq(mt.argsort(t), np.argsort(x, kind="stable"))
    assert_eq(mt.quantile(t, q), np.quantile(x, q))
