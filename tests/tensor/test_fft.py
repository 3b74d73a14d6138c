"""mt.fft against numpy.fft: every transform, the frequencies and the shifts, across chunkings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import mars.tensor as mt
from mars.core.tiling import tile_now

from tensor_testing import assert_eq, chunkings

RS = np.random.RandomState(3)
REAL = RS.rand(5, 6, 4)
CPLX = REAL + 1j * RS.rand(5, 6, 4)
ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn"]
REAL_IN = {"rfft", "ihfft", "rfft2", "rfftn"}


def _input(func: str) -> np.ndarray:
    return REAL if func in REAL_IN else CPLX


def _close(result: mt.Tensor, expected: np.ndarray) -> None:
    assert_eq(result, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("func", ONE_D)
@pytest.mark.parametrize("chunk_size", chunkings(REAL.shape))
def test_one_d_default(func, chunk_size):
    x = _input(func)
    _close(getattr(mt.fft, func)(mt.tensor(x, chunk_size=chunk_size)), getattr(np.fft, func)(x))


@pytest.mark.parametrize("func", N_D)
@pytest.mark.parametrize("chunk_size", chunkings(REAL.shape)[:2] + [1])
def test_n_d_default(func, chunk_size):
    x = _input(func)
    _close(getattr(mt.fft, func)(mt.tensor(x, chunk_size=chunk_size)), getattr(np.fft, func)(x))


@pytest.mark.parametrize("func", ONE_D)
@pytest.mark.parametrize("kw", [{"n": 3, "axis": 0}, {"n": 9, "axis": 1, "norm": "ortho"},
                                {"axis": -2, "norm": "forward"}, {"n": 1}])
def test_one_d_options(func, kw):
    x = _input(func)
    _close(getattr(mt.fft, func)(mt.tensor(x, chunk_size=2), **kw), getattr(np.fft, func)(x, **kw))


@pytest.mark.parametrize("func", N_D)
@pytest.mark.parametrize("kw", [{"s": (3, 7), "axes": (0, 2)}, {"axes": (2, 0), "norm": "ortho"},
                                {"s": (4, -1), "axes": (1, 0), "norm": "forward"}, {"axes": (1, 1)}])
def test_n_d_options(func, kw):
    x = _input(func)
    _close(getattr(mt.fft, func)(mt.tensor(x, chunk_size=(2, 4, 3)), **kw), getattr(np.fft, func)(x, **kw))


@pytest.mark.parametrize("func", ["fftn", "ifftn", "rfftn", "irfftn"])
def test_all_axes_with_s(func):
    x = _input(func)
    with pytest.warns(DeprecationWarning):
        result = getattr(mt.fft, func)(mt.tensor(x, chunk_size=2), s=(3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        _close(result, getattr(np.fft, func)(x, s=(3, 4)))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.float16, np.int32, np.bool_])
def test_dtypes(dtype):
    x = (RS.rand(4, 6) * 3).astype(dtype)
    for func in ("fft", "ifft2", "rfft", "ihfft") if np.dtype(dtype).kind != "c" else ("fft", "ifft2", "irfft", "hfft"):
        expected = getattr(np.fft, func)(x)
        assert_eq(getattr(mt.fft, func)(mt.tensor(x, chunk_size=3)), expected, rtol=1e-5, atol=1e-5)


def test_transformed_axis_whole_and_chunk_count_kept():
    t = mt.tensor(CPLX, chunk_size=(5, 2, 4))
    result = tile_now(mt.fft.fft(t, axis=0)).data
    assert result.nsplits == ((5,), (2, 2, 2), (4,))  # already whole: nothing moves
    result = tile_now(mt.fft.fft(t, axis=1)).data
    assert result.nsplits[1] == (6,) and len(result.chunks) == 3  # the axis's 3 chunks now cut another axis
    rows = mt.tensor(RS.rand(8, 6), chunk_size=(2, 6))
    result = tile_now(mt.fft.fft2(rows)).data
    assert result.nsplits == ((8,), (2, 2, 1, 1))  # row chunks became column chunks


@pytest.mark.parametrize("func", ["fft2", "ifftn", "rfftn", "irfft2"])
def test_n_d_exactly_numpy(func):
    """An N-D transform runs numpy's own 1-D steps, so even the last bits agree."""
    x = _input(func)
    assert_eq(getattr(mt.fft, func)(mt.tensor(x, chunk_size=(2, 3, 1))), getattr(np.fft, func)(x), rtol=0)


def test_round_trip_and_chain():
    t = mt.tensor(REAL, chunk_size=2)
    _close(mt.fft.irfftn(mt.fft.rfftn(t), s=REAL.shape, axes=(0, 1, 2)), REAL)
    _close(mt.fft.fft(t).real.sum(axis=0), np.fft.fft(REAL).real.sum(axis=0))


def test_unknown_sizes():
    x = np.arange(10.0)
    t = mt.tensor(x, chunk_size=3)
    _close(mt.fft.fft(t[t > 3]), np.fft.fft(x[x > 3]))
    _close(mt.fft.rfft(t[t > 3], n=8), np.fft.rfft(x[x > 3], n=8))
    m = RS.rand(6, 4)
    rows = mt.tensor(m, chunk_size=2)
    rows = rows[rows[:, 0] > 0.3]  # rows unknown until run: the N-D transform takes both axes whole
    _close(mt.fft.fft2(rows), np.fft.fft2(m[m[:, 0] > 0.3]))
    _close(mt.fft.irfftn(rows, axes=(0, 1)), np.fft.irfftn(m[m[:, 0] > 0.3], axes=(0, 1)))


def test_empty_untransformed_axis():
    x = np.ones((0, 4))
    _close(mt.fft.fft(mt.tensor(x)), np.fft.fft(x))


def test_out():
    t = mt.tensor(CPLX, chunk_size=2)
    out = mt.zeros(CPLX.shape, dtype=np.complex128)
    assert mt.fft.fft(t, out=out) is out
    _close(out, np.fft.fft(CPLX))
    small = mt.zeros(CPLX.shape, dtype=np.complex64)
    mt.fft.fft2(t, out=small)
    assert_eq(small, np.fft.fft2(CPLX).astype(np.complex64), rtol=1e-5)
    with pytest.raises(ValueError, match="output array has wrong shape"):
        mt.fft.fft(t, out=mt.zeros((5, 6, 3), dtype=complex))
    with pytest.raises(TypeError, match="same_kind"):
        mt.fft.fft(t, out=mt.zeros(CPLX.shape))
    with pytest.raises(TypeError, match="mars Tensor"):
        mt.fft.fft(t, out=np.zeros(CPLX.shape, dtype=complex))


@pytest.mark.parametrize("call", [
    lambda m, x: m.fft(x, norm="bad"),
    lambda m, x: m.fft(x, axis=3),
    lambda m, x: m.fftn(x, axes=(0, 5)),
    lambda m, x: m.fft(x, n=0),
    lambda m, x: m.fft2(x, s=(3,), axes=(0, 1)),
    lambda m, x: m.rfft(x + 1j),
    lambda m, x: m.irfft(x[:, :, :1]),
    lambda m, x: m.fftn(x, s=(0, 3), axes=(0, 1)),
])
def test_errors_like_numpy(call):
    with pytest.raises(Exception) as np_info:
        call(np.fft, REAL)
    with pytest.raises(type(np_info.value)) as mt_info:
        call(mt.fft, mt.tensor(REAL, chunk_size=2))
    assert str(mt_info.value) == str(np_info.value)


def test_numpy_dispatch():
    t = mt.tensor(CPLX, chunk_size=2)
    result = np.fft.fft(t, axis=0)
    assert isinstance(result, mt.Tensor)
    _close(result, np.fft.fft(CPLX, axis=0))
    shifted = np.fft.fftshift(t, axes=1)
    assert isinstance(shifted, mt.Tensor)
    assert_eq(shifted, np.fft.fftshift(CPLX, axes=1))


# ----------------------------------------------------------------- helpers
@pytest.mark.parametrize("n", [1, 2, 7, 8])
@pytest.mark.parametrize("chunk_size", [None, 3, 1])
def test_frequencies(n, chunk_size):
    assert_eq(mt.fft.fftfreq(n, chunk_size=chunk_size), np.fft.fftfreq(n), rtol=0)
    assert_eq(mt.fft.fftfreq(n, d=0.1, chunk_size=chunk_size), np.fft.fftfreq(n, d=0.1), rtol=0)
    assert_eq(mt.fft.rfftfreq(n, d=np.float32(2.5), chunk_size=chunk_size),
              np.fft.rfftfreq(n, d=np.float32(2.5)), rtol=0)


def test_frequency_errors():
    with pytest.raises(ValueError, match="n should be an integer"):
        mt.fft.fftfreq(5.0)
    with pytest.raises(ValueError, match="Only \"cpu\" is allowed"):
        mt.fft.rfftfreq(5, device="gpu")
    assert_eq(mt.fft.fftfreq(4, device="cpu"), np.fft.fftfreq(4, device="cpu"))
    with pytest.raises(ZeroDivisionError):
        mt.fft.fftfreq(0)


@pytest.mark.parametrize("axes", [None, 0, 1, (0, 2), (1, 1), (-1,)])
@pytest.mark.parametrize("chunk_size", chunkings(REAL.shape)[:2] + [1])
def test_shifts(axes, chunk_size):
    t = mt.tensor(REAL, chunk_size=chunk_size)
    assert_eq(mt.fft.fftshift(t, axes=axes), np.fft.fftshift(REAL, axes=axes))
    assert_eq(mt.fft.ifftshift(t, axes=axes), np.fft.ifftshift(REAL, axes=axes))


def test_shift_moves_no_more_than_the_cut():
    t = mt.tensor(np.arange(12), chunk_size=3)
    result = tile_now(mt.fft.fftshift(t)).data
    assert len(result.chunks) == 4  # still cut, not gathered into one chunk
    assert_eq(mt.fft.ifftshift(mt.fft.fftshift(t)), np.arange(12))
    with pytest.raises(np.exceptions.AxisError):
        mt.fft.fftshift(t, axes=1)
