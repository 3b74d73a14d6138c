"""diff, gradient, trapezoid, convolve/correlate, interp, kron, vander, cov/corrcoef, frexp/modf/i0,
apply_*, and the NaN-ignoring quantiles against numpy across chunkings."""

from __future__ import annotations

import numpy as np
import pytest
from tensor_testing import assert_eq, chunkings

import mars.tensor as mt

rng = np.random.default_rng(0)
A = rng.normal(size=(5, 7))
I = np.arange(35).reshape(5, 7) ** 2


@pytest.mark.parametrize("chunk", chunkings(A.shape))
def test_diff_ediff1d(chunk):
    for a in (A, I, I % 3 == 0):
        t = mt.tensor(a, chunk_size=chunk)
        for kw in [{}, {"n": 2, "axis": 0}, {"n": 0}, {"prepend": 1, "append": a[:, :2]}, {"n": 3, "axis": -1}]:
            assert_eq(mt.diff(t, **kw), np.diff(a, **kw))
    t = mt.tensor(I, chunk_size=chunk)
    assert_eq(mt.ediff1d(t), np.ediff1d(I))
    assert_eq(mt.ediff1d(t, to_end=[7, 8], to_begin=-1), np.ediff1d(I, to_end=[7, 8], to_begin=-1))
    with pytest.raises(TypeError, match="same_kind"):
        mt.ediff1d(t, to_begin=1.5)
    with pytest.raises(ValueError, match="order must be non-negative"):
        mt.diff(t, -1)


@pytest.mark.parametrize("chunk", chunkings(A.shape))
def test_gradient_trapezoid(chunk):
    x = np.cumsum(rng.uniform(0.5, 1.5, size=7))
    for a in (A, I, A.astype(np.float32)):
        t = mt.tensor(a, chunk_size=chunk)
        for args, kw in [((), {}), ((2.0,), {"edge_order": 2}), ((0.5, x), {}), ((x,), {"axis": 1, "edge_order": 2}),
                         ((np.arange(5),), {"axis": 0})]:
            result, expected = mt.gradient(t, *args, **kw), np.gradient(a, *args, **kw)
            for r, e in zip(result if isinstance(result, tuple) else [result],
                            expected if isinstance(expected, tuple) else [expected]):
                assert_eq(r, e, rtol=1e-6)
        assert_eq(mt.trapezoid(t), np.trapezoid(a), rtol=1e-6)
        assert_eq(mt.trapezoid(t, x=x), np.trapezoid(a, x=x), rtol=1e-6)
        assert_eq(mt.trapezoid(t, dx=0.5, axis=0), np.trapezoid(a, dx=0.5, axis=0), rtol=1e-6)
    with pytest.raises(ValueError, match="too small"):
        mt.gradient(mt.ones(2), edge_order=2)
    with pytest.raises(ValueError, match="greater than 2"):
        mt.gradient(mt.ones(5), edge_order=3)


@pytest.mark.parametrize("chunk", [13, 4, 1])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_correlate(chunk, mode):
    a, v, c = rng.normal(size=13), np.array([1.0, -2.0, 0.5, 3.0]), np.array([1 + 2j, 3 - 1j])
    ta = mt.tensor(a, chunk_size=chunk)
    assert_eq(mt.convolve(ta, v, mode), np.convolve(a, v, mode))
    assert_eq(mt.convolve(v, ta, mode), np.convolve(v, a, mode))
    assert_eq(mt.correlate(ta, v, mode), np.correlate(a, v, mode))
    assert_eq(mt.correlate(v, ta, mode), np.correlate(v, a, mode))
    assert_eq(mt.correlate(ta, c, mode), np.correlate(a, c, mode))
    assert_eq(mt.correlate(c, ta, mode), np.correlate(c, a, mode))
    ints = np.arange(13)
    assert_eq(mt.convolve(mt.tensor(ints, chunk_size=chunk), [1, 2], mode), np.convolve(ints, [1, 2], mode))


def test_convolve_errors():
    with pytest.raises(ValueError, match="cannot be empty"):
        mt.convolve(mt.ones(3), [])
    with pytest.raises(ValueError, match="mode"):
        mt.convolve(mt.ones(3), [1], "bogus")
    with pytest.raises(ValueError):
        mt.convolve(mt.ones((2, 2)), [1])


@pytest.mark.parametrize("chunk", chunkings(A.shape))
def test_interp_kron_vander(chunk):
    xp, fp = np.array([-1.0, 0.0, 0.5, 2.0]), np.array([3.0, 1.0, -2.0, 0.0])
    t = mt.tensor(A, chunk_size=chunk)
    assert_eq(mt.interp(t, xp, fp), np.interp(A, xp, fp))
    assert_eq(mt.interp(t, mt.tensor(xp, chunk_size=2), fp, left=-9, right=9), np.interp(A, xp, fp, -9, 9))
    assert_eq(mt.interp(t, xp, fp + 1j, period=3), np.interp(A, xp, fp + 1j, period=3))
    with pytest.raises(ValueError, match="not of the same length"):
        mt.interp(t, xp, fp[:2])
    small = np.array([[1, 2], [3, 4]])
    ti = mt.tensor(I, chunk_size=chunk)
    assert_eq(mt.kron(ti, small), np.kron(I, small))
    assert_eq(mt.kron(small, ti), np.kron(small, I))
    assert_eq(mt.kron(ti, [1, 10]), np.kron(I, [1, 10]))
    assert_eq(mt.kron(ti, 3), np.kron(I, 3))
    x = np.array([1.5, -2.0, 3.0, 0.1, 7.0])
    tx = mt.tensor(x, chunk_size=(chunk[0],) if isinstance(chunk, tuple) else chunk)
    for n, inc in [(None, False), (3, True), (0, False), (8, False)]:
        assert_eq(mt.vander(tx, n, inc), np.vander(x, n, inc))
    assert_eq(mt.vander(mt.tensor([1, 2, 3]), 4), np.vander([1, 2, 3], 4))


@pytest.mark.parametrize("chunk", chunkings(A.shape))
def test_cov_corrcoef(chunk):
    t = mt.tensor(A, chunk_size=chunk)
    y = rng.normal(size=(2, 7))
    fw, aw = np.array([1, 2, 1, 3, 1, 1, 2]), rng.uniform(size=7)
    for kw in [{}, {"bias": True}, {"ddof": 3}, {"fweights": fw}, {"aweights": aw}, {"fweights": fw, "aweights": aw},
               {"y": y}, {"dtype": np.float32}]:
        assert_eq(mt.cov(t, **kw), np.cov(A, **kw), rtol=1e-5)
    assert_eq(mt.cov(t, rowvar=False), np.cov(A, rowvar=False))
    assert_eq(mt.cov(mt.tensor(A[0], chunk_size=2)), np.cov(A[0]))
    assert_eq(mt.corrcoef(t), np.corrcoef(A))
    assert_eq(mt.corrcoef(t, y, rowvar=True), np.corrcoef(A, y))
    assert_eq(mt.corrcoef(t[0]), np.corrcoef(A[0]))
    z = A[:2] + 1j * A[2:4]
    assert_eq(mt.cov(mt.tensor(z, chunk_size=(1, 3))), np.cov(z))
    with pytest.raises(ValueError, match="more than 2 dimensions"):
        mt.cov(mt.ones((2, 2, 2)))
    with pytest.raises(TypeError, match="fweights must be integer"):
        mt.cov(t, fweights=aw)
    with pytest.raises(RuntimeError, match="incompatible numbers of samples"):
        mt.cov(t, aweights=aw[:3])


@pytest.mark.parametrize("chunk", chunkings(A.shape))
def test_frexp_modf_i0(chunk):
    for a in (A * 100, I.astype(np.int16), A.astype(np.float32)):
        t = mt.tensor(a, chunk_size=chunk)
        for r, e in zip(mt.frexp(t), np.frexp(a)):
            assert_eq(r, e)
        for r, e in zip(mt.modf(t), np.modf(a)):
            assert_eq(r, e)
        assert_eq(mt.i0(t / 50), np.i0(a / 50))
    m, e = np.frexp(mt.tensor(A, chunk_size=chunk))  # numpy's own ufunc dispatches here
    assert_eq(m * 2.0 ** e, A)


@pytest.mark.parametrize("chunk", chunkings(A.shape))
def test_apply(chunk):
    t = mt.tensor(A, chunk_size=chunk)
    assert_eq(mt.apply_along_axis(np.sort, 1, t), np.apply_along_axis(np.sort, 1, A))
    assert_eq(mt.apply_along_axis(lambda r: r[:2].sum(), 0, t), np.apply_along_axis(lambda r: r[:2].sum(), 0, A))
    assert_eq(mt.apply_along_axis(np.outer, 1, t, [1, 2]), np.apply_along_axis(np.outer, 1, A, [1, 2]))
    assert_eq(mt.apply_over_axes(mt.sum, t, [0, 1]), np.apply_over_axes(np.sum, A, [0, 1]))
    assert_eq(mt.apply_over_axes(mt.mean, t, -1), np.apply_over_axes(np.mean, A, -1))


@pytest.mark.parametrize("chunk", chunkings(A.shape))
def test_nan_quantiles(chunk):
    a = A.copy()
    a[a > 1] = np.nan
    a[2] = np.nan  # an all-NaN lane
    t = mt.tensor(a, chunk_size=chunk)
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        cases = [
            (mt.nanquantile(t, 0.3), np.nanquantile(a, 0.3)),
            (mt.nanquantile(t, [0.1, 0.9], axis=1), np.nanquantile(a, [0.1, 0.9], axis=1)),
            (mt.nanquantile(t, 0.5, axis=1, keepdims=True), np.nanquantile(a, 0.5, axis=1, keepdims=True)),
            (mt.nanpercentile(t, [[10, 50], [70, 100]], axis=1), np.nanpercentile(a, [[10, 50], [70, 100]], axis=1)),
            (mt.nanmedian(t, axis=1), np.nanmedian(a, axis=1)),
        ]
    for r, e in cases:
        assert_eq(r, e)
    assert_eq(mt.nanmedian(t, axis=0), np.nanmedian(a, axis=0))
    assert_eq(mt.nanmedian(mt.tensor(I, chunk_size=chunk), axis=0), np.nanmedian(I, axis=0))
    with pytest.raises(ValueError, match="Quantiles must be in the range"):
        mt.nanquantile(t, 2)
