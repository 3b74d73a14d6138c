"""mars.tensor as an Array API (2024.12) namespace: creation, keywords, attributes, names."""

from __future__ import annotations

import math

import numpy as np
import pytest
from tensor_testing import assert_eq, chunkings

import mars.tensor as mt

# the main namespace of the Array API standard 2024.12 (functions, constants, dtypes)
STANDARD_NAMES = """
__array_api_version__ __array_namespace_info__ e inf nan newaxis pi
bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 float64 complex64 complex128
astype can_cast finfo iinfo isdtype result_type
arange asarray empty empty_like eye from_dlpack full full_like linspace meshgrid ones ones_like tril triu
zeros zeros_like
abs acos acosh add asin asinh atan atan2 atanh bitwise_and bitwise_left_shift bitwise_invert bitwise_or
bitwise_right_shift bitwise_xor ceil clip conj copysign cos cosh divide equal exp expm1 floor floor_divide
greater greater_equal hypot imag isfinite isinf isnan less less_equal log log1p log2 log10 logaddexp
logical_and logical_not logical_or logical_xor maximum minimum multiply negative nextafter not_equal positive
pow real reciprocal remainder round sign signbit sin sinh square sqrt subtract tan tanh trunc
take take_along_axis matmul matrix_transpose tensordot vecdot
broadcast_arrays broadcast_to concat expand_dims flip moveaxis permute_dims repeat reshape roll squeeze stack
tile unstack argmax argmin count_nonzero nonzero searchsorted where unique_all unique_counts unique_inverse
unique_values argsort sort cumulative_prod cumulative_sum max mean min prod std sum var all any diff isin
""".split()

# the names this module provides; the rest come from the families (checked by the test below)
OWN_NAMES = ["__array_api_version__", "__array_namespace_info__", "concat", "permute_dims", "unstack",
             "matrix_transpose", "cumulative_sum", "cumulative_prod", "bitwise_left_shift",
             "bitwise_right_shift", "from_dlpack", "broadcast_shapes"]


def test_own_names_are_in_the_namespace():
    missing = [n for n in OWN_NAMES if not hasattr(mt, n)]
    assert not missing, missing
    assert mt.__array_api_version__ == "2024.12"


def test_every_standard_name_is_in_the_namespace():
    missing = [n for n in STANDARD_NAMES if not hasattr(mt, n)]
    assert not missing, f"mars.tensor lacks the Array API names {missing}"


# ----------------------------------------------------------------- asarray
class _DLPackOnly:
    """A producer that speaks only DLPack (no __array__): numpy cannot read it any other way."""

    def __init__(self, value: np.ndarray):
        self._value = value

    def __dlpack__(self, **kw):
        return self._value.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._value.__dlpack_device__()


@pytest.mark.parametrize("obj", [0, 1.5, True, 2 + 3j, [1, 2], [[1.0, 2.0], [3.0, 4.0]], (1, 2, 3),
                                 np.float32(2.5), np.arange(6).reshape(2, 3)])
def test_asarray_python_and_numpy_inputs(obj):
    assert_eq(mt.asarray(obj), np.asarray(obj))


def test_asarray_buffers_and_dlpack():
    assert_eq(mt.asarray(memoryview(b"abc")), np.asarray(memoryview(b"abc")))
    assert_eq(mt.asarray(bytearray(b"\x01\x02")), np.asarray(bytearray(b"\x01\x02")))
    value = np.arange(5.0)
    assert_eq(mt.asarray(_DLPackOnly(value)), value)
    assert_eq(mt.asarray(_DLPackOnly(value), dtype=np.float32), value.astype(np.float32))
    assert_eq(mt.from_dlpack(_DLPackOnly(value)), value)
    assert_eq(mt.from_dlpack(value), value)
    with pytest.raises(TypeError, match="__dlpack__"):
        mt.from_dlpack([1, 2])


def test_asarray_copy_semantics():
    value = np.arange(4)
    copied = mt.asarray(value, copy=True)
    assert_eq(mt.asarray(value, copy=False), value)
    value[0] = 100  # a copy does not see later writes (a tensor that shares the array is undefined then)
    assert copied.execute().fetch()[0] == 0
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        mt.asarray([1, 2], copy=False)
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        mt.asarray(np.arange(3), dtype=np.float64, copy=False)


def test_asarray_of_a_tensor():
    t = mt.arange(4, chunk_size=2)
    assert mt.asarray(t) is t
    assert mt.asarray(t, copy=False) is t
    c = mt.asarray(t, copy=True)
    assert c is not t
    t[0] = 9  # writes into t are not seen by the copy
    assert_eq(c, np.arange(4))
    assert_eq(mt.asarray(t, dtype=np.float32), np.array([9, 1, 2, 3], dtype=np.float32))
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        mt.asarray(t, dtype=np.float32, copy=False)


def test_device_keywords():
    assert_eq(mt.zeros((2, 2), device="cpu"), np.zeros((2, 2)))
    assert_eq(mt.ones(3, dtype=None, device=None), np.ones(3))
    assert_eq(mt.empty_like(mt.ones(2), device="cpu"), np.zeros(2))
    assert_eq(mt.full_like(mt.ones(2), 3, device="cpu"), np.full(2, 3.0))
    assert_eq(mt.arange(3, device="cpu"), np.arange(3))
    assert_eq(mt.linspace(0, 1, 3, device="cpu"), np.linspace(0, 1, 3))
    assert_eq(mt.eye(2, 3, k=1, dtype=None, device="cpu"), np.eye(2, 3, k=1))
    assert_eq(mt.asarray([1], device="cpu"), np.array([1]))
    assert_eq(mt.astype(mt.ones(2), np.int8, device="cpu"), np.ones(2, np.int8))
    with pytest.raises(ValueError, match="unsupported device 'tpu'"):
        mt.ones(2, device="tpu")


# ----------------------------------------------------------------- inspection and attributes
def test_namespace_info():
    info = mt.__array_namespace_info__()
    assert info.capabilities() == {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}
    assert info.default_device() == "cpu" and info.devices() == ["cpu"]
    assert info.default_dtypes() == {"real floating": np.float64, "complex floating": np.complex128,
                                     "integral": np.int64, "indexing": np.intp}
    assert list(info.dtypes(kind="bool")) == ["bool"]
    assert list(info.dtypes(kind=("real floating", "complex floating"))) == [
        "float32", "float64", "complex64", "complex128"]
    assert len(info.dtypes()) == 13 and len(info.dtypes(kind="integral")) == 8
    with pytest.raises(ValueError, match="unsupported kind: 'text'"):
        info.dtypes(kind="text")


def test_tensor_attributes():
    x = mt.tensor(np.arange(6.0).reshape(2, 3), chunk_size=2)
    assert x.__array_namespace__() is mt
    assert x.__array_namespace__(api_version="2023.12") is mt
    with pytest.raises(ValueError, match="Unrecognized array API version"):
        x.__array_namespace__(api_version="2020.01")
    assert x.device == "cpu" and x.to_device("cpu") is x
    with pytest.raises(ValueError, match="unsupported device"):
        x.to_device("gpu:7")
    assert_eq(x.mT, np.arange(6.0).reshape(2, 3).T)
    with pytest.raises(ValueError, match="at least 2-dimensional"):
        _ = mt.ones(3).mT
    assert complex(mt.tensor(2 + 1j)) == 2 + 1j
    np.testing.assert_array_equal(np.from_dlpack(x), np.arange(6.0).reshape(2, 3))
    assert x.__dlpack_device__() == (1, 0)


def test_unknown_sizes_stay_nan_in_shape():
    t = mt.arange(6, chunk_size=2)
    masked = t[t > 2]
    assert len(masked.shape) == 1 and math.isnan(masked.shape[0])


# ----------------------------------------------------------------- functions
@pytest.mark.parametrize("chunk_size", chunkings((4, 5)))
def test_std_var_correction(chunk_size):
    value = np.random.RandomState(0).rand(4, 5)
    x = mt.tensor(value, chunk_size=chunk_size)
    assert_eq(mt.std(x, correction=1), np.std(value, correction=1))
    assert_eq(mt.var(x, axis=0, correction=1.5, keepdims=True), np.var(value, axis=0, correction=1.5, keepdims=True))
    assert_eq(mt.nanvar(x, axis=1, correction=1), np.nanvar(value, axis=1, correction=1))
    with pytest.raises(ValueError, match="ddof and correction"):
        mt.std(x, ddof=1, correction=1)


@pytest.mark.parametrize("chunk_size", chunkings((9,)))
def test_sort_descending_is_stable(chunk_size):
    value = np.array([3, 1, 2, 1, 3, 0, 1, 2, 3])
    x = mt.tensor(value, chunk_size=chunk_size)
    assert_eq(mt.sort(x, descending=True), np.sort(value)[::-1])
    assert_eq(mt.argsort(x, descending=True), np.argsort(-value, stable=True))
    assert_eq(mt.argsort(x, descending=True, stable=True), np.argsort(-value, stable=True))
    assert_eq(mt.sort(x, stable=True), np.sort(value, stable=True))


@pytest.mark.parametrize("chunk_size", chunkings((3, 4)))
def test_sort_descending_2d(chunk_size):
    value = np.array([[1, 3, 3, 0], [2, 2, 5, 2], [0, 1, 0, 1]])
    x = mt.tensor(value, chunk_size=chunk_size)
    assert_eq(mt.sort(x, axis=0, descending=True), np.flip(np.sort(value, axis=0), axis=0))
    assert_eq(mt.argsort(x, axis=1, descending=True), np.argsort(-value, axis=1, stable=True))
    assert_eq(mt.argsort(x, axis=None, descending=True), np.argsort(-value, axis=None, stable=True))


@pytest.mark.parametrize("chunk_size", chunkings((3, 4)))
def test_cumulative(chunk_size):
    value = np.arange(1, 13, dtype=np.int8).reshape(3, 4)
    x = mt.tensor(value, chunk_size=chunk_size)
    for axis in (0, 1, -1):
        for include in (False, True):
            assert_eq(mt.cumulative_sum(x, axis=axis, include_initial=include),
                      np.cumulative_sum(value, axis=axis, include_initial=include))
            assert_eq(mt.cumulative_prod(x, axis=axis, dtype=np.float64, include_initial=include),
                      np.cumulative_prod(value, axis=axis, dtype=np.float64, include_initial=include))
    flat = mt.tensor(value.ravel(), chunk_size=chunk_size if chunk_size == 1 else 5)
    assert_eq(mt.cumulative_sum(flat, include_initial=True), np.cumulative_sum(value.ravel(), include_initial=True))
    with pytest.raises(ValueError, match="axis"):
        mt.cumulative_sum(x)


@pytest.mark.parametrize("chunk_size", chunkings((3, 4)))
def test_manipulation(chunk_size):
    value = np.arange(12).reshape(3, 4)
    x = mt.tensor(value, chunk_size=chunk_size)
    assert_eq(mt.concat([x, x], axis=1), np.concat([value, value], axis=1))
    assert_eq(mt.concat([x, x[:1]]), np.concat([value, value[:1]]))
    assert_eq(mt.concat([x, x], axis=None), np.concat([value, value], axis=None))
    assert_eq(mt.permute_dims(x, (1, 0)), np.permute_dims(value, (1, 0)))
    assert_eq(mt.matrix_transpose(x), np.matrix_transpose(value))
    for axis in (0, 1, -1):
        parts = mt.unstack(x, axis=axis)
        expected = np.unstack(value, axis=axis)
        assert isinstance(parts, tuple) and len(parts) == len(expected)
        for p, e in zip(parts, expected):
            assert_eq(p, e)
    with pytest.raises(ValueError, match="at least 1-d"):
        mt.unstack(mt.tensor(1))


@pytest.mark.parametrize("chunk_size", chunkings((6,)))
def test_bitwise_shifts_and_aliases(chunk_size):
    value = np.array([1, 2, 3, 4, 5, 6], dtype=np.int32)
    x = mt.tensor(value, chunk_size=chunk_size)
    assert_eq(mt.bitwise_left_shift(x, 2), np.bitwise_left_shift(value, 2))
    assert_eq(mt.bitwise_right_shift(x, np.int32(1)), np.bitwise_right_shift(value, np.int32(1)))
    assert_eq(mt.bitwise_invert(x), np.bitwise_invert(value))
    assert_eq(mt.pow(x, 2), np.pow(value, 2))
    angles = np.linspace(-0.9, 0.9, 6)
    a = mt.tensor(angles, chunk_size=chunk_size)
    for name in ("acos", "asin", "atan", "asinh", "atanh"):
        assert_eq(getattr(mt, name)(a), getattr(np, name)(angles))
    assert_eq(mt.atan2(a, 0.5), np.atan2(angles, 0.5))


def test_broadcast_shapes():
    assert mt.broadcast_shapes((3, 1), (1, 4), 4) == np.broadcast_shapes((3, 1), (1, 4), 4)
    assert mt.broadcast_shapes((2, 1), (math.nan, 5))[1] == 5
    with pytest.raises(ValueError):
        mt.broadcast_shapes((2,), (3,))


@pytest.mark.parametrize("chunk_size", chunkings((3, 4)))
def test_standard_keyword_forms(chunk_size):
    value = np.arange(12, dtype=np.int32).reshape(3, 4) - 5
    x = mt.tensor(value, chunk_size=chunk_size)
    assert_eq(mt.sum(x, axis=1, dtype=np.float32, keepdims=True), np.sum(value, axis=1, dtype=np.float32, keepdims=True))
    assert_eq(mt.prod(x, axis=0, dtype=np.int64), np.prod(value, axis=0, dtype=np.int64))
    assert_eq(mt.max(x, axis=(0, 1), keepdims=True), np.max(value, axis=(0, 1), keepdims=True))
    assert_eq(mt.min(x, axis=-1), np.min(value, axis=-1))
    assert_eq(mt.expand_dims(x, axis=(0, 3)), np.expand_dims(value, axis=(0, 3)))
    assert_eq(mt.squeeze(mt.expand_dims(x, axis=0), axis=0), value)
    assert_eq(mt.repeat(x, 2, axis=1), np.repeat(value, 2, axis=1))
    assert_eq(mt.repeat(x, mt.tensor([1, 0, 2]), axis=0), np.repeat(value, [1, 0, 2], axis=0))
    assert_eq(mt.clip(x, min=-2, max=3), np.clip(value, min=-2, max=3))
    assert_eq(mt.count_nonzero(x, axis=0, keepdims=True), np.count_nonzero(value, axis=0, keepdims=True))
    assert_eq(mt.moveaxis(x, 0, -1), np.moveaxis(value, 0, -1))
    assert_eq(mt.broadcast_to(x[0], (2, 4)), np.broadcast_to(value[0], (2, 4)))
    assert_eq(mt.astype(x, np.float64, copy=False), value.astype(np.float64))
    assert_eq(mt.signbit(x), np.signbit(value))
    assert_eq(mt.copysign(x, -1.0), np.copysign(value, -1.0))
    assert_eq(mt.hypot(x, 2.0), np.hypot(value, 2.0))
    assert_eq(mt.logaddexp(x, 1.0), np.logaddexp(value, 1.0))
    assert_eq(mt.nextafter(x.astype(np.float64), 0.0), np.nextafter(value.astype(np.float64), 0.0))
    assert_eq(mt.reciprocal(x.astype(np.float32) + 0.5), np.reciprocal(value.astype(np.float32) + 0.5))
    assert_eq(mt.trunc(x / 3), np.trunc(value / 3))
