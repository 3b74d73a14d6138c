"""Reductions and cumulative ops against numpy, across chunkings, axes, keepdims and dtypes."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mars
import mars.tensor as mt
from mars.core.operator import Tiled
from mars.tensor.core import TensorOperator
from mars.tensor.reduction.core import ReduceCombine
from mars.tensor.reduction.cumulative import CumulativeCarry

from tensor_testing import assert_eq, chunkings

SHAPE = (5, 7)
AXES = [None, 0, 1, -1, (0, 1), (-1, 0)]
_rs = np.random.RandomState(0)
# quarters, so that minima and maxima are tied across chunks
FLOAT = np.round(_rs.rand(*SHAPE) * 4) / 4
INT8 = _rs.randint(-5, 6, SHAPE).astype(np.int8)
BOOL = _rs.rand(*SHAPE) > 0.5
NANS = _rs.rand(*SHAPE)
NANS[_rs.rand(*SHAPE) > 0.7] = np.nan
NANS[1, :] = np.nan  # an all-NaN row
NANS[:, 2] = np.nan  # an all-NaN column
DATA = {"float": FLOAT, "int8": INT8, "bool": BOOL}


def expected(func, *args, **kw):
    """numpy's result, without the warnings it gives for empty or all-NaN slices."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return func(*args, **kw)


def assert_quiet_eq(result, exp, **kw):
    """Like ``assert_eq``, and the run must not warn (numpy warns for empty or all-NaN slices)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_eq(result, exp, **kw)


# ----------------------------------------------------------------- the monoids and the mean
@pytest.mark.parametrize("chunk_size", chunkings(SHAPE))
@pytest.mark.parametrize("kind", sorted(DATA))
@pytest.mark.parametrize("name", ["sum", "prod", "min", "max", "any", "all", "mean"])
def test_basic_reductions(name, kind, chunk_size):
    x = DATA[kind]
    t = mt.tensor(x, chunk_size=chunk_size)
    for axis in AXES:
        for keepdims in (False, True):
            assert_eq(getattr(mt, name)(t, axis=axis, keepdims=keepdims), getattr(np, name)(x, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("chunk_size", chunkings(SHAPE))
@pytest.mark.parametrize("name", ["sum", "prod", "mean", "nansum", "nanprod", "nanmean"])
@pytest.mark.parametrize("dtype", ["float32", "int64", "complex128"])
def test_dtype_argument(name, dtype, chunk_size):
    x = INT8 if not name.startswith("nan") else NANS
    t = mt.tensor(x, chunk_size=chunk_size)
    if name in ("nanmean",) and dtype == "int64":
        with pytest.raises(TypeError, match="dtype must be inexact"):
            np.nanmean(x, dtype=dtype)
        with pytest.raises(TypeError, match="dtype must be inexact"):
            mt.nanmean(t, dtype=dtype)
        return
    for axis in (None, 1, (0, 1)):
        result = getattr(mt, name)(t, axis=axis, dtype=dtype)
        assert_eq(result, expected(getattr(np, name), x, axis=axis, dtype=dtype), rtol=1e-5)


@pytest.mark.parametrize(
    "func, dtype",
    [
        ("sum", np.int8), ("sum", np.uint8), ("sum", np.bool_), ("sum", np.float32), ("prod", np.int16),
        ("mean", np.int32), ("mean", np.float32), ("mean", np.bool_), ("var", np.int64), ("var", np.float32),
        ("std", np.complex64), ("nanmean", np.float32), ("nanvar", np.int8), ("count_nonzero", np.float32),
        ("argmax", np.uint8), ("ptp", np.int8), ("nanmax", np.float32), ("cumsum", np.int8),
        ("cumprod", np.uint16), ("nancumsum", np.float32),
    ],
)
def test_dtypes_follow_numpy(func, dtype):
    x = np.arange(1, 7).astype(dtype)
    result = getattr(mt, func)(mt.tensor(x, chunk_size=4))
    exp = getattr(np, func)(x)
    assert result.dtype == np.asarray(exp).dtype
    assert_eq(result, exp, rtol=1e-6)


def test_sum_over_ten_thousand_chunks_uses_a_tree():
    x = np.arange(10_000)
    t = mt.tensor(x, chunk_size=1).sum()
    assert_eq(t, x.sum())
    ops = _chunk_ops(t)
    assert max(len(op.inputs) for op in ops) <= mars.options.combine_size
    assert sum(isinstance(op, ReduceCombine) for op in ops) < 10_000 // (mars.options.combine_size - 1) + 10


def test_combine_size_option_changes_the_tree_not_the_result():
    x = np.arange(100.0).reshape(10, 10)
    with mars.option_context({"combine_size": 2}):
        assert_eq(mt.tensor(x, chunk_size=1).sum(axis=1), x.sum(axis=1))
        assert_eq(mt.tensor(x, chunk_size=1).var(axis=0), x.var(axis=0))
        assert_eq(mt.tensor(x, chunk_size=1).argmax(), x.argmax())


# ----------------------------------------------------------------- var / std
@pytest.mark.parametrize("chunk_size", chunkings(SHAPE))
@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std(name, chunk_size):
    for x in (FLOAT, INT8, BOOL, FLOAT + 1j * FLOAT[::-1]):
        t = mt.tensor(x, chunk_size=chunk_size)
        for axis in AXES:
            for keepdims in (False, True):
                for ddof in (0, 1):
                    kw = dict(axis=axis, keepdims=keepdims, ddof=ddof)
                    assert_eq(getattr(mt, name)(t, **kw), getattr(np, name)(x, **kw))


@pytest.mark.parametrize("chunk_size", [3, 1])
def test_var_degrees_of_freedom_and_dtype(chunk_size):
    t = mt.tensor(FLOAT, chunk_size=chunk_size)
    for ddof in (4, 5, 7, 9.5):  # as many or more than the values: inf or NaN, as numpy
        assert_quiet_eq(mt.var(t, axis=0, ddof=ddof), expected(np.var, FLOAT, axis=0, ddof=ddof))
        assert_quiet_eq(mt.nanstd(t, axis=1, ddof=ddof), expected(np.nanstd, FLOAT, axis=1, ddof=ddof))
    assert_eq(mt.std(t, dtype=np.float32), np.std(FLOAT, dtype=np.float32), rtol=1e-5)
    assert_eq(t.var(axis=1, dtype="float64"), FLOAT.var(axis=1, dtype="float64"))


def test_var_is_stable_for_a_large_offset():
    # a sum of squares in float64 loses every digit here; (count, mean, M2) partials do not
    x = 1e9 + np.random.RandomState(1).rand(2000)
    assert_eq(mt.tensor(x, chunk_size=7).var(), x.var(), rtol=1e-6)
    assert_eq(mt.tensor(x, chunk_size=1).std(ddof=1), x.std(ddof=1), rtol=1e-6)


def test_float16_sums_without_overflow():
    # numpy's own var and nanmean of this overflow float16 (inf); ours work in float32, as np.mean does
    x = np.full(100_000, 3, dtype=np.float16)
    x[::2] = 1
    assert_eq(mt.tensor(x, chunk_size=30_000).var(), np.float16(1))
    assert_eq(mt.nanmean(mt.tensor(x, chunk_size=30_000)), np.float16(2))


# ----------------------------------------------------------------- argmin / argmax
@pytest.mark.parametrize("chunk_size", chunkings(SHAPE))
@pytest.mark.parametrize("name", ["argmin", "argmax"])
def test_arg_reductions(name, chunk_size):
    with_nan = FLOAT.copy()
    with_nan[[1, 3], [4, 2]] = np.nan
    for x in (FLOAT, INT8, BOOL, with_nan):
        t = mt.tensor(x, chunk_size=chunk_size)
        for axis in (None, 0, 1, -1, -2):
            for keepdims in (False, True):
                kw = dict(axis=axis, keepdims=keepdims)
                assert_eq(getattr(mt, name)(t, **kw), getattr(np, name)(x, **kw))


def test_arg_first_occurrence_across_chunks():
    x = np.array([[5, 1, 1], [1, 0, 0], [0, 7, 0]])  # ties whose flat order differs from chunk order
    for chunk_size in (1, 2, ((1, 2), (2, 1))):
        t = mt.tensor(x, chunk_size=chunk_size)
        assert_eq(t.argmin(), x.argmin())
        assert_eq(mt.argmax(t, axis=0), x.argmax(axis=0))
        assert_eq(mt.argmin(t, axis=1), x.argmin(axis=1))
    x = np.array([1.0, np.nan, 0.0, np.nan])
    assert_eq(mt.argmin(mt.tensor(x, chunk_size=1)), np.argmin(x))  # the first NaN, as numpy
    assert_eq(mt.argmax(mt.tensor(x, chunk_size=3)), np.argmax(x))


def test_partials_survive_fusion_in_row_blocks():
    # (x + 1) fuses into the chunk stage; a long chunk is evaluated in row blocks
    x = np.random.RandomState(2).rand(300_000, 2)
    t = mt.tensor(x, chunk_size=(300_000, 2)) + 1
    assert_eq(t.argmin(axis=0), (x + 1).argmin(axis=0))
    assert_eq(t.argmax(), (x + 1).argmax())
    assert_eq(mt.nanargmin(t), np.nanargmin(x + 1))
    assert_eq(t.var(axis=0), (x + 1).var(axis=0))  # (count, mean, M2) of row blocks merge too
    assert_eq(mt.nanstd(t), np.nanstd(x + 1))


@pytest.mark.parametrize("chunk_size", chunkings(SHAPE))
@pytest.mark.parametrize("name", ["nanargmin", "nanargmax"])
def test_nan_arg_reductions(name, chunk_size):
    x = NANS.copy()
    x[1, 0] = 0.5  # no all-NaN row
    t = mt.tensor(x, chunk_size=chunk_size)
    for axis in (None, 1, -1):
        for keepdims in (False, True):
            assert_quiet_eq(getattr(mt, name)(t, axis=axis, keepdims=keepdims), getattr(np, name)(x, axis=axis, keepdims=keepdims))
    assert_eq(getattr(mt, name)(mt.tensor(INT8, chunk_size=chunk_size), axis=0), getattr(np, name)(INT8, axis=0))
    edge = np.array([np.nan, np.inf, -np.inf, np.nan])  # numpy's NaN becomes +-inf, ties go first
    assert_eq(getattr(mt, name)(mt.tensor(edge, chunk_size=1)), getattr(np, name)(edge))


@pytest.mark.parametrize("name", ["nanargmin", "nanargmax"])
def test_nan_arg_all_nan_slice_raises_when_run(name):
    t = getattr(mt, name)(mt.tensor(NANS, chunk_size=2), axis=0)  # column 2 is all NaN
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        t.execute()
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        getattr(mt, name)(mt.tensor(np.full(5, np.nan), chunk_size=2)).execute()


def test_arg_axis_must_be_an_integer():
    t = mt.ones((3, 4), chunk_size=2)
    with pytest.raises(TypeError, match="tuple"):
        mt.argmin(t, axis=(0, 1))
    with pytest.raises(np.exceptions.AxisError):
        mt.argmax(t, axis=2)


# ----------------------------------------------------------------- count_nonzero, nan*, ptp, average
@pytest.mark.parametrize("chunk_size", chunkings(SHAPE))
def test_count_nonzero(chunk_size):
    for x in (INT8, BOOL, FLOAT):
        t = mt.tensor(x, chunk_size=chunk_size)
        for axis in AXES:
            for keepdims in (False, True):
                assert_eq(mt.count_nonzero(t, axis=axis, keepdims=keepdims), np.count_nonzero(x, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("chunk_size", chunkings(SHAPE))
@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmin", "nanmax", "nanmean", "nanvar", "nanstd"])
def test_nan_reductions(name, chunk_size):
    for x in (NANS, INT8, np.full(SHAPE, np.nan)):
        t = mt.tensor(x, chunk_size=chunk_size)
        for axis in AXES:
            for keepdims in (False, True):
                exp = expected(getattr(np, name), x, axis=axis, keepdims=keepdims)
                assert_quiet_eq(getattr(mt, name)(t, axis=axis, keepdims=keepdims), exp)


@pytest.mark.parametrize("chunk_size", chunkings(SHAPE))
def test_ptp(chunk_size):
    for x in (FLOAT, INT8, NANS):
        t = mt.tensor(x, chunk_size=chunk_size)
        for axis in AXES:
            for keepdims in (False, True):
                assert_eq(mt.ptp(t, axis=axis, keepdims=keepdims), np.ptp(x, axis=axis, keepdims=keepdims))
    assert_eq(mt.tensor(np.array([-100, 100], dtype=np.int8), chunk_size=1).ptp(), np.int8(-56))  # wraps as numpy
    with pytest.raises(TypeError, match="boolean subtract"):
        mt.ptp(mt.tensor(BOOL))


@pytest.mark.parametrize("chunk_size", chunkings(SHAPE))
def test_average(chunk_size):
    t = mt.tensor(INT8, chunk_size=chunk_size)
    w = FLOAT + 1
    for axis in AXES:
        assert_eq(mt.average(t, axis=axis), np.average(INT8, axis=axis))
        assert_eq(mt.average(t, axis=axis, weights=w), np.average(INT8, axis=axis, weights=w))
        avg, scale = mt.average(t, axis=axis, weights=mt.tensor(w, chunk_size=3), returned=True)
        exp_avg, exp_scale = np.average(INT8, axis=axis, weights=w, returned=True)
        assert_eq(avg, exp_avg)
        assert_eq(scale, exp_scale)
    w1 = np.arange(1.0, 8.0)
    for keepdims in (False, True):
        assert_eq(mt.average(t, axis=1, weights=w1, keepdims=keepdims), np.average(INT8, axis=1, weights=w1, keepdims=keepdims))
        assert_eq(mt.average(t, axis=0, weights=w1[:5], keepdims=keepdims), np.average(INT8, axis=0, weights=w1[:5], keepdims=keepdims))
    w2 = FLOAT.T + 1
    assert_eq(mt.average(t, axis=(1, 0), weights=w2), np.average(INT8, axis=(1, 0), weights=w2))
    avg, scale = mt.average(t, axis=0, returned=True)
    assert_eq(scale, np.average(INT8, axis=0, returned=True)[1])


def test_average_errors():
    t = mt.tensor(FLOAT, chunk_size=2)
    with pytest.raises(TypeError, match="Axis must be specified"):
        mt.average(t, weights=np.ones(7))
    with pytest.raises(ValueError, match="Shape of weights"):
        mt.average(t, axis=0, weights=np.ones(7))
    zero = mt.average(t, axis=1, weights=np.zeros(7))
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        zero.execute()


# ----------------------------------------------------------------- empty, 0-d, bad axes
def test_empty_reductions():
    x = np.ones((0, 3))
    for chunk_size in (2, (1, 1)):
        t = mt.tensor(x, chunk_size=chunk_size)
        assert_eq(t.sum(), np.float64(0))
        assert_eq(t.sum(axis=0), x.sum(axis=0))
        assert_eq(mt.prod(t, axis=0), x.prod(axis=0))
        assert_eq(t.max(axis=1), x.max(axis=1))  # nothing reduced over an empty axis: fine
        assert_eq(mt.tensor(x.astype(int), chunk_size=chunk_size).sum(), np.int64(0))
        assert_eq(mt.count_nonzero(t, axis=0), np.count_nonzero(x, axis=0))
        assert_quiet_eq(t.mean(axis=0), expected(np.mean, x, axis=0))
        assert_quiet_eq(t.var(axis=0), expected(np.var, x, axis=0))
        assert_quiet_eq(mt.nanmean(t, axis=0), expected(np.nanmean, x, axis=0))
        assert_eq(mt.nansum(t), np.float64(0))
        assert_eq(mt.argmin(t, axis=1), x.argmin(axis=1))
        assert_eq(mt.cumsum(t), np.cumsum(x))
        assert_eq(mt.cumprod(t, axis=0), np.cumprod(x, axis=0))


@pytest.mark.parametrize(
    "name, message",
    [
        ("max", "zero-size array to reduction operation maximum"),
        ("min", "zero-size array to reduction operation minimum"),
        ("nanmax", "zero-size array to reduction operation fmax"),
        ("nanmin", "zero-size array to reduction operation fmin"),
        ("ptp", "zero-size array to reduction operation maximum"),
        ("argmin", "attempt to get argmin of an empty sequence"),
        ("nanargmax", "attempt to get argmax of an empty sequence"),
    ],
)
def test_empty_without_identity_raises_when_built(name, message):
    t = mt.tensor(np.ones((0, 3)), chunk_size=2)
    with pytest.raises(ValueError, match=message):
        getattr(mt, name)(t)
    with pytest.raises(ValueError, match=message):
        getattr(mt, name)(t, axis=0)
    with pytest.raises(ValueError, match=message):
        getattr(np, name)(np.ones((0, 3)), axis=0)


@pytest.mark.parametrize(
    "name",
    ["sum", "prod", "max", "mean", "var", "std", "argmin", "nanargmax", "count_nonzero", "nansum", "nanmin",
     "nanmean", "nanstd", "ptp", "cumsum", "nancumprod", "average"],
)
def test_zero_dim_input(name):
    x = np.array(2.5)
    assert_eq(getattr(mt, name)(mt.tensor(x)), getattr(np, name)(x))
    if name not in ("argmin", "nanargmax", "cumsum", "nancumprod", "average"):
        assert_eq(getattr(mt, name)(mt.tensor(x), keepdims=True), getattr(np, name)(x, keepdims=True))


@pytest.mark.parametrize("name", ["argmin", "nanargmax", "count_nonzero", "nansum", "nanmin", "nanmean", "nanstd",
                                  "ptp", "cumsum", "nancumprod"])
def test_zero_dim_input_takes_axis_zero_as_numpy(name):
    x = np.array(2.5)
    for axis in (0, -1):
        assert_eq(getattr(mt, name)(mt.tensor(x), axis=axis), getattr(np, name)(x, axis=axis))
    with pytest.raises(np.exceptions.AxisError):
        getattr(mt, name)(mt.tensor(x), axis=1)


@pytest.mark.parametrize(
    "name",
    ["sum", "prod", "min", "max", "any", "all", "mean", "var", "std", "argmin", "argmax", "nanargmin",
     "nanargmax", "count_nonzero", "nansum", "nanprod", "nanmin", "nanmax", "nanmean", "nanvar", "nanstd",
     "ptp", "cumsum", "cumprod", "nancumsum", "nancumprod", "average"],
)
def test_bad_axis_raises_when_built(name):
    t = mt.ones((3, 4), chunk_size=2)
    for axis in (2, -3):
        with pytest.raises(np.exceptions.AxisError, match=str(axis)):
            getattr(mt, name)(t, axis=axis)
        with pytest.raises(np.exceptions.AxisError):
            getattr(np, name)(np.ones((3, 4)), axis=axis)


def test_duplicate_axis_raises():
    with pytest.raises(ValueError, match="duplicate"):
        mt.var(mt.ones((3, 4)), axis=(0, -2))
    with pytest.raises(ValueError, match="duplicate"):
        mt.nansum(mt.ones((3, 4)), axis=(1, 1))


def test_methods():
    x = FLOAT
    t = mt.tensor(x, chunk_size=3)
    assert_eq(t.var(axis=0, ddof=1), x.var(axis=0, ddof=1))
    assert_eq(t.std(), x.std())
    assert_eq(t.argmin(axis=1), x.argmin(axis=1))
    assert_eq(t.argmax(), x.argmax())
    assert_eq(t.ptp(axis=0), np.ptp(x, axis=0))
    assert_eq(t.cumsum(axis=1), x.cumsum(axis=1))
    assert_eq(t.cumprod(), x.cumprod())


# ----------------------------------------------------------------- cumulative
@pytest.mark.parametrize("chunk_size", chunkings((5, 4, 3)))
@pytest.mark.parametrize("name", ["cumsum", "cumprod", "nancumsum", "nancumprod"])
def test_cumulative(name, chunk_size):
    rs = np.random.RandomState(3)
    floats = rs.rand(5, 4, 3) + 0.5
    floats[rs.rand(5, 4, 3) > 0.8] = np.nan
    ints = rs.randint(-3, 4, (5, 4, 3)).astype(np.int8)
    for x in (floats, ints, ints > 0):
        t = mt.tensor(x, chunk_size=chunk_size)
        for axis in (None, 0, 1, 2, -1):
            assert_eq(getattr(mt, name)(t, axis=axis), getattr(np, name)(x, axis=axis))
        assert_eq(getattr(mt, name)(t, axis=1, dtype=np.float32), getattr(np, name)(x, axis=1, dtype=np.float32), rtol=1e-5)


def test_cumulative_tiles_in_linear_chunk_ops():
    n = 60
    t = mt.cumsum(mt.tensor(np.arange(n * 2.0).reshape(n, 2), chunk_size=1), axis=0)
    assert_eq(t, np.cumsum(np.arange(n * 2.0).reshape(n, 2), axis=0))
    ops = _chunk_ops(t)
    assert len(ops) <= 4 * 2 * n  # source, own cumsum, carry, apply: per chunk
    assert max(len(op.inputs) for op in ops) <= 2
    assert sum(isinstance(op, CumulativeCarry) for op in ops) == 2 * (n - 1)


def test_cumulative_fused_in_row_blocks():
    x = np.random.RandomState(4).rand(300_000, 2)
    t = mt.tensor(x, chunk_size=(300_000, 1)) * 2
    assert_eq(t.cumsum(axis=1), (x * 2).cumsum(axis=1))
    assert_eq(t.cumsum(axis=0), (x * 2).cumsum(axis=0))
    assert_eq(t.cumsum(), (x * 2).cumsum())


def test_cumulative_errors():
    t = mt.ones((3, 4), chunk_size=2)
    with pytest.raises(TypeError, match="tuple"):
        mt.cumsum(t, axis=(0, 1))
    with pytest.raises(np.exceptions.AxisError):
        mt.cumprod(mt.tensor(np.array(1.0)), axis=1)


# ----------------------------------------------------------------- random shapes and chunkings
_FUNCS = ["sum", "prod", "max", "min", "mean", "var", "std", "argmin", "argmax", "count_nonzero", "nansum",
          "nanmax", "nanmean", "nanstd", "ptp", "cumsum", "nancumprod"]


@st.composite
def _cases(draw):
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=ndim, max_size=ndim)))
    chunks = tuple(draw(st.integers(1, max(s, 1))) for s in shape)
    name = draw(st.sampled_from(_FUNCS))
    if name.startswith(("arg", "cum", "nancum")):
        axis = draw(st.none() | st.integers(-ndim, ndim - 1)) if ndim else None
    else:
        axes = draw(st.permutations(range(ndim)))[: draw(st.integers(0, ndim))]
        axis = draw(st.none() | st.just(tuple(a - ndim if draw(st.booleans()) else a for a in axes)))
    keepdims = draw(st.booleans()) and not name.startswith(("cum", "nancum"))
    return shape, chunks, name, axis, keepdims, draw(st.integers(0, 2**16))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases())
def test_random_shapes_and_chunkings(case):
    shape, chunks, name, axis, keepdims, seed = case
    rs = np.random.RandomState(seed)
    x = np.asarray(np.round(rs.rand(*shape) * 3) / 2 + 0.5)  # ties, and products that stay near 1
    if name.startswith("nan"):
        x[rs.rand(*shape) > 0.7] = np.nan
    kw = {"axis": axis}
    if keepdims:
        kw["keepdims"] = True
    try:
        exp = expected(getattr(np, name), x, **kw)
    except ValueError as e:  # an empty reduction without identity: raised when built
        with pytest.raises(ValueError, match=str(e)[:30]):
            getattr(mt, name)(mt.tensor(x, chunk_size=chunks), **kw)
        return
    assert_eq(getattr(mt, name)(mt.tensor(x, chunk_size=chunks), **kw), exp)


# ----------------------------------------------------------------- edge cases numpy handles its own way
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_float16_mean_of_a_long_array():
    x = np.ones(100_000, dtype=np.float16)
    assert_eq(mt.tensor(x, chunk_size=100_000).mean(), x.mean())


def test_max_with_a_numpy_integer_axis():
    assert_eq(mt.tensor(FLOAT, chunk_size=2).max(axis=np.int64(0)), FLOAT.max(axis=np.int64(0)))


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "any", "all"])
def test_zero_dim_monoid_with_axis_zero(name):
    x = np.array(2.5)
    assert_eq(getattr(mt, name)(mt.tensor(x), axis=0), getattr(np, name)(x, axis=0))


def _chunk_ops(t):
    """Every chunk op that ``t``'s chunks were made from."""
    seen, stack = {}, list(t.data.chunks)
    while stack:
        chunk = stack.pop()
        if id(chunk.op) not in seen:
            seen[id(chunk.op)] = chunk.op
            stack.extend(chunk.op.inputs)
    return list(seen.values())


# ----------------------------------------------------------------- sizes known only after running
class _KeepAbove(TensorOperator):
    """A 1-d filter whose chunk sizes are unknown until it runs (as boolean indexing makes)."""

    params = ("threshold",)

    @classmethod
    def tile(cls, op):
        out = op.outputs[0]
        chunks = [
            op.copy().new_chunk([c], index=c.index, shape=(math.nan,), dtype=out.dtype, order="C")
            for c in op.inputs[0].chunks
        ]
        return Tiled(chunks, ((math.nan,) * len(chunks),))

    def execute(self, x):
        return x[x > self.threshold]


def test_reductions_of_unknown_sizes():
    x = np.random.RandomState(5).rand(40)
    kept = x[x > 0.5]
    t = _KeepAbove(threshold=0.5).new_tensor([mt.tensor(x, chunk_size=7).data], (math.nan,), x.dtype)
    assert_eq(t.argmin(), kept.argmin())
    assert_eq(mt.nanargmax(t), kept.argmax())
    assert_eq(t.var(), kept.var())
    assert_eq(t.cumsum(), kept.cumsum())
    assert_eq(mt.cumprod(t, axis=0), kept.cumprod())


@pytest.mark.parametrize("offset", [-3, -1, 0, 2, 5])
@pytest.mark.parametrize("chunk_size", chunkings((5, 4)))
def test_trace(offset, chunk_size):
    x = np.arange(20.0).reshape(5, 4)
    assert_eq(mt.trace(mt.tensor(x, chunk_size=chunk_size), offset), np.trace(x, offset))
    assert_eq(mt.tensor(x.astype("int32"), chunk_size=chunk_size).trace(offset), np.trace(x.astype("int32"), offset))


@pytest.mark.parametrize("chunk_size", [1, 3, 10])
@pytest.mark.parametrize("name", ["max", "min", "nanmax", "nanmin", "argmax", "ptp"])
def test_extremes_skip_chunks_a_filter_left_empty(name, chunk_size):
    x = np.arange(10.0)
    t = mt.tensor(x, chunk_size=chunk_size)
    kept = t[t > 5]  # the first chunks hold nothing
    assert_eq(getattr(mt, name)(kept), getattr(np, name)(x[x > 5]))
    m = np.arange(12.0).reshape(6, 2)
    tm = mt.tensor(m, chunk_size=(chunk_size, 2))
    rows = tm[tm[:, 0] > 5]
    assert_eq(getattr(mt, name)(rows, axis=0), getattr(np, name)(m[m[:, 0] > 5], axis=0))
    with pytest.raises(ValueError):  # numpy's error where nothing is left at all
        getattr(mt, name)(t[t > 100]).execute()
