"""The elementwise family against numpy: ufuncs, operators, broadcasting, dtypes, fusion, funcs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mars.core.fusion as fusion
import mars.tensor as mt
from mars.tensor.arithmetic import ufuncs

from tensor_testing import assert_eq, chunkings

SHAPE = (5, 7)
RS = np.random.RandomState(0)


def _check_like_numpy(fn, np_args, mt_args, rtol=1e-7):
    """``fn(np, *np_args)`` vs ``fn(mt, *mt_args)``: same result, or the same exception when built."""
    try:
        with np.errstate(all="ignore"):
            expected = fn(np, *np_args)
    except Exception as exc:  # numpy refuses: mars must refuse the same way, at build time
        with pytest.raises(type(exc)):
            fn(mt, *mt_args)
        return
    assert_eq(fn(mt, *mt_args), expected, rtol=rtol)


# ----------------------------------------------------------------- ufuncs
def _unary_input(name: str) -> np.ndarray:
    if name in ("arcsin", "arccos", "arctanh"):
        return RS.uniform(-0.9, 0.9, SHAPE)
    if name == "arccosh":
        return RS.uniform(1.1, 5, SHAPE)
    if name in ("log", "log2", "log10", "log1p", "sqrt", "reciprocal"):
        return RS.uniform(0.1, 5, SHAPE)
    if name == "invert":
        return RS.randint(-50, 50, SHAPE).astype(np.int16)
    if name == "logical_not":
        return RS.randint(0, 2, SHAPE).astype(float)
    if name == "isnat":
        values = RS.randint(0, 10_000, SHAPE).astype("M8[D]")
        values[0, ::2] = np.datetime64("NaT")
        return values
    values = RS.uniform(-3, 3, SHAPE)
    if name in ("isfinite", "isinf", "isnan", "signbit", "spacing"):
        values[1, :3] = [np.nan, np.inf, -np.inf]
        values[2, 0] = -0.0
    return values


@pytest.mark.parametrize("name", ufuncs._UNARY)
def test_unary_ufuncs_match_numpy(name):
    x = _unary_input(name)
    func = getattr(mt, name)
    for chunk_size in chunkings(SHAPE):
        t = mt.tensor(x, chunk_size=chunk_size)
        with np.errstate(all="ignore"):
            expected = getattr(np, name)(x)
        assert_eq(func(t), expected)
    assert_eq(func(mt.tensor(x[0, 0])), getattr(np, name)(x[0, 0]))  # 0-d in, numpy scalar out


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # values outside arcsin's domain, on purpose
@pytest.mark.parametrize("name", ufuncs._UNARY)
@pytest.mark.parametrize("dtype", ["int32", "uint8", "bool", "float32", "complex64"])
def test_unary_ufuncs_dtypes_and_refusals_as_numpy(name, dtype):
    x = (np.arange(12).reshape(3, 4) % 5 + 1).astype(dtype)
    _check_like_numpy(lambda m, a: getattr(m, name)(a), [x], [mt.tensor(x, chunk_size=2)])


def _binary_inputs(name: str) -> tuple[np.ndarray, np.ndarray]:
    a, b = RS.uniform(-3, 3, SHAPE), RS.uniform(0.5, 3, SHAPE[1:])
    if name in ("gcd", "lcm", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"):
        return RS.randint(0, 40, SHAPE).astype(np.int32), RS.randint(0, 6, SHAPE[1:]).astype(np.int32)
    if name in ("power", "float_power", "logaddexp", "logaddexp2"):
        return np.abs(a) + 0.1, b
    if name == "ldexp":
        return a, RS.randint(-3, 4, SHAPE[1:])
    if name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                "logical_and", "logical_or", "logical_xor"):
        return RS.randint(0, 3, SHAPE).astype(float), RS.randint(0, 3, SHAPE[1:]).astype(float)
    if name in ("maximum", "minimum", "fmax", "fmin"):
        a[0, :2] = np.nan  # where maximum and fmax differ
    if name == "heaviside":
        a[1, :3] = 0.0
    return a, b


@pytest.mark.parametrize("name", ufuncs._BINARY)
def test_binary_ufuncs_match_numpy_with_broadcasting(name):
    a, b = _binary_inputs(name)
    func, np_func = getattr(mt, name), getattr(np, name)
    for chunk_size in chunkings(SHAPE):
        ta = mt.tensor(a, chunk_size=chunk_size)
        tb = mt.tensor(b, chunk_size=3)  # a grid unlike ta's: rechunked to align
        assert_eq(func(ta, tb), np_func(a, b))
        _check_like_numpy(lambda m, x, y: getattr(m, name)(x, y), [b, a], [tb, ta])  # ldexp(int, float) is refused
    scalar = b.flat[0].item()  # a Python scalar: weak under NEP 50
    ta = mt.tensor(a, chunk_size=3)
    _check_like_numpy(lambda m, x: getattr(m, name)(x, scalar), [a], [ta])
    _check_like_numpy(lambda m, x: getattr(m, name)(scalar, x), [a], [ta])


@pytest.mark.parametrize("name", ["add", "true_divide", "floor_divide", "power", "maximum", "bitwise_and",
                                  "left_shift", "arctan2", "gcd", "ldexp", "logical_xor", "less"])
@pytest.mark.parametrize("dtypes", [("int8", "int8"), ("int8", "uint8"), ("bool", "bool"), ("int32", "float32"),
                                    ("float32", "float64"), ("uint8", "complex64"), ("bool", "int8")])
def test_binary_ufunc_dtypes_and_refusals_as_numpy(name, dtypes):
    a = (np.arange(12).reshape(3, 4) % 4 + 1).astype(dtypes[0])
    b = (np.arange(4) % 3 + 1).astype(dtypes[1])
    _check_like_numpy(lambda m, x, y: getattr(m, name)(x, y), [a, b], [mt.tensor(a, chunk_size=2), mt.tensor(b)])


@pytest.mark.parametrize("call", [
    lambda m, x: m.add(x, 1, dtype="float32"),
    lambda m, x: m.sqrt(x, dtype="float32"),
    lambda m, x: m.add(x, 1.5, dtype="int64"),
    lambda m, x: m.add(x, 1.5, dtype="int64", casting="unsafe"),
    lambda m, x: m.multiply(x, 2, signature=(None, None, "f8")),
])
def test_ufunc_dtype_and_casting_keywords(call):
    x = np.arange(12).reshape(3, 4)
    _check_like_numpy(call, [x], [mt.tensor(x, chunk_size=3)])


@pytest.mark.parametrize("dtype", ["int8", "int64", "float16", "float32", "complex64"])
@pytest.mark.parametrize("exponent", [2, 0.5, -1, 1, 2.0, np.float32(0.5), True, np.int8(2), 3])
def test_power_shortcuts_keep_numpy_dtypes(dtype, exponent):
    if exponent == -1 and dtype.startswith("int"):
        with pytest.raises(ValueError, match="negative integer powers"):
            mt.tensor(np.ones(3, dtype=dtype)) ** exponent
        return
    x = (np.arange(12).reshape(3, 4) % 5 + 1).astype(dtype)
    t = mt.tensor(x, chunk_size=3)
    _check_like_numpy(lambda m, v: v ** exponent, [x], [t])
    _check_like_numpy(lambda m, v: m.power(v, exponent), [x], [t])


def test_bool_tensor_squared_as_numpy_operator():
    x = np.array([True, False])
    assert_eq(mt.tensor(x) ** 2, x ** 2)


def test_divmod_gives_both_parts():
    x = RS.uniform(-5, 5, SHAPE)
    q, r = mt.divmod(mt.tensor(x, chunk_size=3), 1.5)
    eq, er = np.divmod(x, 1.5)
    assert_eq(q, eq)
    assert_eq(r, er)
    q, r = divmod(mt.tensor(x, chunk_size=3), 1.5)
    assert_eq(r, er)


# ----------------------------------------------------------------- operators
BINARY_OPS = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b,
    "//": lambda a, b: a // b, "%": lambda a, b: a % b, "**": lambda a, b: a ** b,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}
INT_OPS = {
    "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
    "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b,
}


@pytest.mark.parametrize("op", list(BINARY_OPS))
@pytest.mark.parametrize("chunk_size", chunkings(SHAPE))
def test_python_operators_match_numpy(op, chunk_size):
    f = BINARY_OPS[op]
    a, b = RS.uniform(0.5, 3, SHAPE), RS.randint(1, 4, SHAPE[1:]).astype(float)
    ta, tb = mt.tensor(a, chunk_size=chunk_size), mt.tensor(b, chunk_size=2)
    assert_eq(f(ta, tb), f(a, b))
    assert_eq(f(tb, ta), f(b, a))
    assert_eq(f(ta, 2), f(a, 2))
    assert_eq(f(2, ta), f(2, a))  # reversed operands: 2 - t, 2 ** t, ...
    assert_eq(f(np.float32(2), ta.astype("float32")), f(np.float32(2), a.astype("float32")))
    assert_eq(f(ta, b), f(a, b))  # numpy array on the right
    ints = (a * 3).astype(np.int64)
    assert_eq(f(mt.tensor(ints, chunk_size=chunk_size), 2), f(ints, 2))


@pytest.mark.parametrize("op", list(INT_OPS))
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "bool"])
def test_bitwise_operators_match_numpy(op, dtype):
    f = INT_OPS[op]
    a = RS.randint(0, 8, SHAPE).astype(dtype)
    b = RS.randint(0, 3, SHAPE[1:]).astype(dtype)
    for chunk_size in chunkings(SHAPE)[:2]:
        ta = mt.tensor(a, chunk_size=chunk_size)
        _check_like_numpy(lambda m, x, y: f(x, y), [a, b], [ta, mt.tensor(b, chunk_size=3)])
        _check_like_numpy(lambda m, x: f(x, 2), [a], [ta])
        _check_like_numpy(lambda m, x: f(3, x), [a], [ta])


@pytest.mark.parametrize("dtype", ["int32", "uint8", "bool", "float64"])
def test_unary_operators_match_numpy(dtype):
    x = (RS.uniform(-3, 3, SHAPE) if dtype == "float64" else RS.randint(0, 5, SHAPE)).astype(dtype)
    t = mt.tensor(x, chunk_size=3)
    for f in (lambda v: -v, lambda v: +v, lambda v: abs(v), lambda v: ~v):
        _check_like_numpy(lambda m, v: f(v), [x], [t])


def test_operators_stay_lazy_and_numpy_scalars_defer_to_tensors():
    t = mt.ones((3, 4), chunk_size=2, dtype="float32")
    for result in (t + 1, 2 - t, np.float32(2) * t, np.float64(2) * t, np.ones(4) + t, t < np.ones(4), -t):
        assert isinstance(result, mt.Tensor)
    assert (np.float32(2) * t).dtype == np.float32
    assert (np.float64(2) * t).dtype == np.float64
    assert (2.0 * t).dtype == np.float32  # Python float is weak


def test_inplace_operators_rebind_the_tensor():
    x = RS.uniform(0, 3, SHAPE)
    t = mt.tensor(x, chunk_size=3)
    alias, before = t, t.data
    doubled = t * 2  # built before the update: keeps the old value, as numpy's eager result would
    t += 1
    assert t is alias and t.data is not before
    assert_eq(t, x + 1)
    t *= t
    assert_eq(t, (x + 1) ** 2)
    assert_eq(doubled, x * 2)
    f = mt.tensor(x.astype("float32"), chunk_size=2)
    f += np.float64(1)  # float64 result cast back to float32, as numpy does in place
    assert_eq(f, x.astype("float32") + 1)
    i = mt.tensor(np.arange(6), chunk_size=4)
    i //= 2
    i <<= 1
    assert_eq(i, (np.arange(6) // 2) << 1)


def test_inplace_result_must_keep_the_shape():
    with pytest.raises(ValueError, match="non-broadcastable output"):
        x = np.ones(3)
        x += np.ones((2, 3))
    t = mt.ones(3)
    with pytest.raises(ValueError, match="non-broadcastable output"):
        t += mt.ones((2, 3))


@pytest.mark.parametrize("dtype, update", [
    ("int64", lambda v: v.__iadd__(1.5)),
    ("int64", lambda v: v.__itruediv__(2)),
    ("bool", lambda v: v.__iadd__(1)),
    ("int32", lambda v: v.__imul__(np.ones(3))),
])
def test_inplace_casting_errors_as_numpy(dtype, update):
    with pytest.raises(TypeError, match="same_kind"):
        update(np.ones(3, dtype=dtype))
    t = mt.tensor(np.ones(3, dtype=dtype))
    before = t.data
    with pytest.raises(TypeError, match="same_kind"):
        update(t)
    assert t.data is before


# ----------------------------------------------------------------- broadcasting across chunk grids
@pytest.mark.parametrize("shapes, chunks", [
    (((5, 1), (1, 7)), (2, 3)),
    (((6, 4), (4,)), (((1, 5), (4,)), 1)),
    (((6, 4), (6, 1)), ((4, (1, 3)), ((2, 2, 2), (1,)))),
    (((3, 1, 4), (5, 1)), ((1, 1, 2), 2)),
    (((2, 3, 4), (2, 3, 4)), (((1, 1), (2, 1), (3, 1)), ((2,), (1, 2), (1, 3)))),
    (((0, 3), (3,)), (2, 1)),
    (((0, 3), (1,)), (2, 1)),
])
def test_broadcasting_aligns_different_chunk_grids(shapes, chunks):
    a, b = RS.uniform(1, 2, shapes[0]), RS.uniform(1, 2, shapes[1])
    ta, tb = mt.tensor(a, chunk_size=chunks[0]), mt.tensor(b, chunk_size=chunks[1])
    assert_eq(ta * tb - ta, a * b - a)
    assert_eq(tb / ta, b / a)
    assert_eq(mt.where(ta > 1.5, ta, tb), np.where(a > 1.5, a, b))


def test_broadcast_result_chunks_follow_the_finer_grid():
    t = mt.tensor(np.ones((6, 4)), chunk_size=((1, 5), (4,)))
    r = (t + mt.tensor(np.arange(4.0), chunk_size=1)).execute()
    assert r.nsplits == ((1, 5), (1, 1, 1, 1))


@pytest.mark.parametrize("shapes", [((3, 4), (5,)), ((2, 3), (3, 2)), ((4, 2, 3), (3, 1))])
def test_shapes_that_do_not_broadcast_raise_when_built(shapes):
    a, b = mt.ones(shapes[0], chunk_size=2), mt.ones(shapes[1])
    with pytest.raises(ValueError, match="could not be broadcast"):
        a + b
    with pytest.raises(ValueError, match="could not be broadcast"):
        mt.where(a > 0, a, b)


def test_bad_dtypes_raise_type_error_when_built():
    words = mt.tensor(np.array(["a", "b"]))
    with pytest.raises(TypeError):
        words + 1
    with pytest.raises(TypeError):
        mt.sqrt(words)
    with pytest.raises(TypeError):
        ~mt.ones(3)
    with pytest.raises(TypeError):
        mt.gcd(mt.ones(3), 2)
    with pytest.raises(TypeError):
        mt.ones(3) + "x"


# ----------------------------------------------------------------- dtypes
DTYPES = ["int8", "int32", "uint8", "float32", "float64", "bool", "complex64"]


@pytest.mark.parametrize("left", DTYPES)
@pytest.mark.parametrize("right", DTYPES + [1, -1, 300, 2.5, True, 1j, np.float32(2), np.int16(3), np.float64(1),
                                   np.array(2.0), np.array(3, dtype="int16")])  # 0-d arrays are strong
def test_dtype_promotion_as_numpy_2(left, right):
    a = (np.arange(6).reshape(2, 3) % 3 + 1).astype(left)
    b = np.ones(3, dtype=right) if isinstance(right, str) else right
    tb = mt.tensor(b, chunk_size=2) if isinstance(right, str) else right
    ta = mt.tensor(a, chunk_size=2)
    for f in (lambda m, x, y: x + y, lambda m, x, y: m.multiply(y, x), lambda m, x, y: m.maximum(x, y),
              lambda m, x, y: x / y, lambda m, x, y: m.where(x == x, x, y)):
        _check_like_numpy(f, [a, b], [ta, tb])


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("source", ["float64", "int32", "bool", "complex128"])
@pytest.mark.parametrize("target", ["float32", "int8", "int64", "bool", "uint8"])
@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind", "unsafe"])
def test_astype_casting_rules_as_numpy(source, target, casting):
    x = (np.arange(12).reshape(3, 4) - 4).astype(source)
    _check_like_numpy(lambda m, v: v.astype(target, casting=casting), [x], [mt.tensor(x, chunk_size=2)])


def test_astype_without_copy_keeps_the_tensor_data():
    t = mt.ones((3, 3), chunk_size=2)
    assert t.astype("float64", copy=False).data is t.data
    assert_eq(t.astype("int8"), np.ones((3, 3), dtype="int8"))


# ----------------------------------------------------------------- out= and where=
@pytest.mark.parametrize("chunk_size", chunkings(SHAPE))
def test_out_and_where_keywords(chunk_size):
    x = RS.uniform(0, 1, SHAPE)
    t = mt.tensor(x, chunk_size=chunk_size)
    out = mt.zeros(SHAPE, chunk_size=2)
    result = mt.add(t, 1, out=out)
    assert result is out
    assert_eq(out, x + 1)
    expected = np.full(SHAPE, -1.0)
    np.add(x, 1, out=expected, where=x > 0.5)
    out = mt.full(SHAPE, -1.0, chunk_size=3)
    mt.add(t, 1, out=out, where=t > 0.5)
    assert_eq(out, expected)
    out = mt.zeros(SHAPE, dtype="int64")
    mt.floor_divide(mt.tensor((x * 10).astype("int8"), chunk_size=chunk_size), 3, out=out, where=x[0] < 0.5)
    expected = np.zeros(SHAPE, dtype="int64")
    np.floor_divide((x * 10).astype("int8"), 3, out=expected, where=x[0] < 0.5)
    assert_eq(out, expected)
    out32 = mt.zeros(SHAPE, dtype="float32")
    mt.sin(t, out=(out32,))
    assert_eq(out32, np.sin(x).astype("float32"), rtol=1e-6)


def test_numpy_call_with_out_and_where_dispatches_to_mars():
    x = RS.uniform(0, 1, SHAPE)
    expected = np.full(SHAPE, -1.0)
    np.add(x, 1, out=expected, where=x > 0.5)
    out = mt.full(SHAPE, -1.0, chunk_size=3)
    np.add(mt.tensor(x, chunk_size=2), 1, out=out, where=x > 0.5)
    assert_eq(out, expected)


def test_out_errors_as_numpy():
    t = mt.ones((2, 3))
    with pytest.raises(TypeError, match="same_kind"):
        mt.add(t, 1.5, out=mt.zeros((2, 3), dtype="int64"))
    with pytest.raises(ValueError):
        mt.add(t, 1, out=mt.zeros((3, 3)))


def test_out_larger_than_inputs_broadcasts_as_numpy():
    expected = np.add(np.ones(3), 1, out=np.zeros((2, 3)))
    out = mt.zeros((2, 3))
    mt.add(mt.ones(3), 1, out=out)
    assert_eq(out, expected)


# ----------------------------------------------------------------- numpy protocols, 0-d, empty
def test_numpy_ufunc_calls_stay_lazy_with_mixed_operands():
    x = RS.uniform(0.1, 2, SHAPE)
    t, row = mt.tensor(x, chunk_size=3), RS.uniform(1, 2, SHAPE[1:])
    for result, expected in (
        (np.sin(t), np.sin(x)),
        (np.add(row, t), row + x),
        (np.maximum(t, row), np.maximum(x, row)),
        (row + t, row + x),  # ndarray.__add__ defers to the tensor
        (np.hypot(2.0, t), np.hypot(2.0, x)),
        (np.clip(t, 0.5, 1.5), np.clip(x, 0.5, 1.5)),
        (np.where(t > 1, t, row), np.where(x > 1, x, row)),
    ):
        assert isinstance(result, mt.Tensor)
        assert_eq(result, expected)
    with pytest.raises(TypeError):
        np.subtract.reduceat(t, [0])  # not implemented: numpy's TypeError, not a silent fetch


def test_zero_dimensional_tensors():
    s = mt.tensor(np.float64(2.5))
    assert_eq(s * 2 + 1, np.float64(2.5) * 2 + 1)
    assert_eq(mt.sqrt(s), np.sqrt(np.float64(2.5)))
    assert_eq(s + mt.ones((2, 3), chunk_size=1), 2.5 + np.ones((2, 3)))
    i = mt.tensor(np.int8(3))
    assert_eq(i + 1, np.int8(3) + 1)
    assert_eq(i + mt.tensor(np.int32(1)), np.int8(3) + np.int32(1))


@pytest.mark.parametrize("chunk_size", [2, (1, 3), (5, 1)])
def test_empty_tensors(chunk_size):
    x = np.empty((0, 3))
    t = mt.tensor(x, chunk_size=chunk_size)
    assert_eq(mt.sin(t) + 1, np.sin(x) + 1)
    assert_eq(t * mt.tensor(np.arange(3.0)), x * np.arange(3.0))
    assert_eq((t + 1).sum(axis=0), (x + 1).sum(axis=0))
    assert_eq(t.astype("int8") < 2, x.astype("int8") < 2)


def test_same_data_chunked_two_ways():
    x = np.arange(36.0).reshape(6, 6)
    assert_eq(mt.tensor(x, chunk_size=2) + mt.tensor(x), x + x)
    assert_eq(mt.tensor(x, chunk_size=3).sum(), x.sum())


def test_integer_to_negative_power_raises_when_built():
    with pytest.raises(ValueError, match="negative integer powers"):
        mt.tensor(np.arange(1, 4)) ** -1


# ----------------------------------------------------------------- random chains
_CHAIN_OPS = {
    "add": (lambda m, x, y: m.add(x, y)),
    "mul": (lambda m, x, y: x * y),
    "sin": (lambda m, x, y: m.sin(x)),
    "sqrt_abs": (lambda m, x, y: m.sqrt(m.abs(x))),
    "maximum": (lambda m, x, y: m.maximum(x, y)),
    "sub_rev": (lambda m, x, y: 1.5 - x),
}


@st.composite
def _chain_case(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 8), min_size=ndim, max_size=ndim)))
    chunks = tuple(draw(st.integers(1, s)) for s in shape)
    other_ndim = draw(st.integers(0, ndim))
    # the other operand: a trailing sub-shape, some dims broadcast from 1, its own chunking
    other_shape = tuple(draw(st.sampled_from([s, 1])) for s in shape[ndim - other_ndim:])
    other_chunks = tuple(draw(st.integers(1, s)) for s in other_shape)
    ops = draw(st.lists(st.sampled_from(sorted(_CHAIN_OPS)), min_size=2, max_size=4))
    return shape, chunks, other_shape, other_chunks, ops


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_chain_case(), st.integers(0, 2**31 - 1))
def test_random_chains_match_numpy(case, seed):
    shape, chunks, other_shape, other_chunks, ops = case
    rs = np.random.RandomState(seed)
    x, y = rs.uniform(-2, 2, shape), rs.uniform(-2, 2, other_shape)
    t, u = mt.tensor(x, chunk_size=chunks), mt.tensor(y, chunk_size=other_chunks or None)
    for name in ops:
        x, t = _CHAIN_OPS[name](np, x, y), _CHAIN_OPS[name](mt, t, u)
    assert_eq(t, x, rtol=1e-12)
    assert_eq(t.sum(axis=-1), x.sum(axis=-1), rtol=1e-10)


# ----------------------------------------------------------------- fused, block-by-block evaluation
@pytest.fixture
def blocked_runs(monkeypatch):
    """Counts fused groups that ran block by block (``fusion._run_blocked``)."""
    calls = []
    original = fusion._run_blocked

    def spy(*args, **kwargs):
        calls.append(args[2:])
        return original(*args, **kwargs)

    monkeypatch.setattr(fusion, "_run_blocked", spy)
    return calls


# chunks of more than 2 blocks of rows (fusion.BLOCK_ELEMENTS), the last block ragged
@pytest.mark.parametrize("shape, chunk_rows", [((600_000, 1), 300_000), ((200_001, 3), 100_001), ((700_000,), 350_000)])
def test_fused_chain_with_reduction_runs_in_blocks(blocked_runs, shape, chunk_rows):
    x = np.random.RandomState(1).uniform(-1, 1, shape)
    t = mt.tensor(x, chunk_size=(chunk_rows,) + shape[1:])
    row = np.linspace(0.5, 1.5, shape[-1]) if len(shape) > 1 else 0.5
    for axis in (None, 0, -1):
        assert_eq(((t * 2 + 1) ** 2).sum(axis=axis), ((x * 2 + 1) ** 2).sum(axis=axis), rtol=1e-10)
    assert_eq(mt.sqrt(mt.abs(mt.sin(t) - row)).mean(axis=0), np.sqrt(np.abs(np.sin(x) - row)).mean(axis=0), rtol=1e-10)
    assert_eq(((t > 0.2) & (t < 0.7)).sum(axis=0), ((x > 0.2) & (x < 0.7)).sum(axis=0))
    assert_eq(mt.clip(t * 3, -1, 1).max(axis=0), np.clip(x * 3, -1, 1).max(axis=0))
    assert_eq((t * 2 + 1) ** 2, (x * 2 + 1) ** 2)
    assert len(blocked_runs) >= 2 * 7, "the chains were not evaluated block by block"


def test_fused_integer_chain_changing_dtypes_in_blocks(blocked_runs):
    x = np.arange(600_000, dtype=np.int32).reshape(-1, 1) % 1000
    t = mt.tensor(x, chunk_size=300_000)
    assert_eq(((t * 3) // 2 + 0.5).sum(axis=0), ((x * 3) // 2 + 0.5).sum(axis=0), rtol=1e-12)
    assert_eq(((t << 2) ^ t).max(axis=0), ((x << 2) ^ x).max(axis=0))
    assert blocked_runs


# ----------------------------------------------------------------- funcs
@pytest.mark.parametrize("chunk_size", chunkings(SHAPE))
def test_where(chunk_size):
    x = RS.uniform(-1, 1, SHAPE)
    t = mt.tensor(x, chunk_size=chunk_size)
    assert_eq(mt.where(t > 0, t, 0), np.where(x > 0, x, 0))
    assert_eq(mt.where(t > 0, 1, -1), np.where(x > 0, 1, -1))
    column, x32 = x[:, :1] > 0, x.astype("float32")
    assert_eq(mt.where(column, t.astype("float32"), np.float32(2)), np.where(column, x32, np.float32(2)))
    row = [True, False, True, True, False, False, True]
    assert_eq(mt.where(row, t, -t), np.where(row, x, -x))
    assert_eq(mt.where(mt.tensor(np.bool_(True)), t, 0.5), np.where(np.bool_(True), x, 0.5))


def test_where_argument_errors():
    t = mt.ones(3)
    with pytest.raises(NotImplementedError, match="nonzero"):
        mt.where(t > 0)
    with pytest.raises(ValueError, match="both or neither"):
        mt.where(t > 0, t)


@pytest.mark.parametrize("chunk_size", chunkings(SHAPE))
def test_clip(chunk_size):
    x = RS.uniform(-3, 3, SHAPE)
    t = mt.tensor(x, chunk_size=chunk_size)
    assert_eq(mt.clip(t, -1, 1), np.clip(x, -1, 1))
    assert_eq(mt.clip(t, None, 0.5), np.clip(x, None, 0.5))
    assert_eq(t.clip(-1, None), x.clip(-1, None))
    assert_eq(mt.clip(t, min=-1, max=2), np.clip(x, min=-1, max=2))
    low, high = RS.uniform(-2, 0, SHAPE[1:]), mt.tensor(RS.uniform(0, 2, (SHAPE[0], 1)), chunk_size=2)
    assert_eq(mt.clip(t, low, high), np.clip(x, low, high.fetch()))
    ints = (x * 10).astype(np.int8)
    assert_eq(mt.clip(mt.tensor(ints, chunk_size=chunk_size), 0, 5), np.clip(ints, 0, 5))
    out = mt.zeros(SHAPE)
    mt.clip(t, 0, 1, out=out)
    assert_eq(out, np.clip(x, 0, 1))
    with pytest.raises(ValueError, match="a_min or min"):
        mt.clip(t, 0, 1, min=0)


@pytest.mark.parametrize("chunk_size", chunkings(SHAPE))
def test_isclose_and_allclose(chunk_size):
    a = RS.uniform(-1, 1, SHAPE)
    a[0, :3] = [np.nan, np.inf, -np.inf]
    b = a + RS.choice([0, 1e-9, 1e-3], SHAPE)
    ta, tb = mt.tensor(a, chunk_size=chunk_size), mt.tensor(b, chunk_size=2)
    for kw in ({}, {"equal_nan": True}, {"rtol": 1e-2}, {"atol": 1e-2, "rtol": 0}):
        assert_eq(mt.isclose(ta, tb, **kw), np.isclose(a, b, **kw))
        assert_eq(mt.allclose(ta, tb, **kw), np.bool_(np.allclose(a, b, **kw)))
    assert_eq(mt.isclose(ta, 0.5, atol=0.3), np.isclose(a, 0.5, atol=0.3))
    finite = a[1:]
    assert_eq(mt.isclose(mt.tensor(finite, chunk_size=2).astype("int32"), 0), np.isclose(finite.astype("int32"), 0))
    assert_eq(mt.allclose(ta, ta, equal_nan=True), np.True_)
    assert_eq(mt.allclose(ta, ta), np.False_)  # NaN is not close to itself by default
    assert isinstance(np.allclose(ta, tb), mt.Tensor)


@pytest.mark.parametrize("chunk_size", chunkings(SHAPE))
def test_array_equal(chunk_size):
    a = RS.randint(0, 3, SHAPE).astype(float)
    ta = mt.tensor(a, chunk_size=chunk_size)
    b = a.astype("float32")
    assert_eq(mt.array_equal(ta, mt.tensor(b, chunk_size=2)), np.bool_(True))
    b[4, 6] += 1
    assert_eq(mt.array_equal(ta, b), np.bool_(False))
    assert_eq(mt.array_equal(ta, a[:, :1]), np.bool_(False))  # broadcastable, yet shapes differ
    assert_eq(mt.array_equal(ta, a.ravel()), np.bool_(False))
    a[1, 2] = np.nan
    ta = mt.tensor(a, chunk_size=chunk_size)
    assert_eq(mt.array_equal(ta, a.astype("float32")), np.bool_(False))
    assert_eq(mt.array_equal(ta, a.astype("float32"), equal_nan=True), np.bool_(True))
    assert_eq(mt.array_equal(ta, ta, equal_nan=True), np.bool_(True))
    ints = a[2:].astype(np.int64)
    assert_eq(mt.array_equal(mt.tensor(ints), ints, equal_nan=True), np.bool_(True))
    assert isinstance(np.array_equal(ta, ta), mt.Tensor)


@pytest.mark.parametrize("chunk_size", chunkings(SHAPE))
def test_around_and_round(chunk_size):
    x = RS.uniform(-100, 100, SHAPE)
    t = mt.tensor(x, chunk_size=chunk_size)
    for decimals in (0, 1, 3, -1):
        assert_eq(mt.around(t, decimals), np.round(x, decimals))
        assert_eq(mt.round(t, decimals=decimals), np.round(x, decimals=decimals))
    assert_eq(mt.round_(t), np.round(x))
    assert_eq(t.round(2), x.round(2))
    assert_eq(np.round(t, 1), np.round(x, 1))
    ints = x.astype(np.int32)
    assert_eq(mt.round(mt.tensor(ints, chunk_size=chunk_size), -1), np.round(ints, -1))
    halves = np.array([0.5, 1.5, 2.5, -0.5], dtype="float32")
    assert_eq(mt.round(mt.tensor(halves, chunk_size=3)), np.round(halves))


@pytest.mark.parametrize("chunk_size", chunkings(SHAPE))
def test_nan_to_num(chunk_size):
    x = RS.uniform(-1, 1, SHAPE)
    x[0, :3], x[3, 3] = [np.nan, np.inf, -np.inf], np.nan
    t = mt.tensor(x, chunk_size=chunk_size)
    assert_eq(mt.nan_to_num(t), np.nan_to_num(x))
    assert_eq(mt.nan_to_num(t, nan=-9, posinf=99, neginf=-99), np.nan_to_num(x, nan=-9, posinf=99, neginf=-99))
    assert_eq(mt.nan_to_num(t.astype("float32")), np.nan_to_num(x.astype("float32")))
    assert_eq(mt.nan_to_num(mt.tensor(np.arange(4))), np.nan_to_num(np.arange(4)))
    z = np.empty(SHAPE, dtype=complex)
    z.real, z.imag = x, x[::-1]
    assert_eq(mt.nan_to_num(mt.tensor(z, chunk_size=chunk_size)), np.nan_to_num(z))
    alias = t
    assert mt.nan_to_num(t, copy=False) is alias
    assert_eq(t, np.nan_to_num(x))
    assert_eq(mt.tensor(x) + 0, x)  # the source data was not filled in place


@pytest.mark.parametrize("chunk_size", chunkings(SHAPE))
def test_complex_parts(chunk_size):
    z = RS.uniform(-1, 1, SHAPE) + 1j * RS.uniform(-1, 1, SHAPE)
    z[1, :3] = [2, -3, 0]
    tz = mt.tensor(z, chunk_size=chunk_size)
    assert_eq(mt.real(tz), np.real(z))
    assert_eq(mt.imag(tz), np.imag(z))
    assert_eq(tz.real + tz.imag, z.real + z.imag)
    assert_eq(mt.angle(tz), np.angle(z))
    assert_eq(mt.angle(tz, deg=True), np.angle(z, deg=True))
    assert_eq(mt.isreal(tz), np.isreal(z))
    assert_eq(mt.iscomplex(tz), np.iscomplex(z))
    assert_eq(np.real(tz), np.real(z))
    z64 = z.astype("complex64")
    assert_eq(mt.imag(mt.tensor(z64, chunk_size=chunk_size)), np.imag(z64))
    x = z.real
    tx = mt.tensor(x, chunk_size=chunk_size)
    for name in ("real", "imag", "angle", "isreal", "iscomplex"):
        assert_eq(getattr(mt, name)(tx), getattr(np, name)(x))
    ints = np.arange(6, dtype="int16")
    assert_eq(mt.imag(mt.tensor(ints)), np.imag(ints))
    assert_eq(mt.angle(mt.tensor(ints)), np.angle(ints))


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # sinc(inf), in numpy too
@pytest.mark.filterwarnings("ignore:numpy.fix is deprecated:DeprecationWarning")  # the reference, in numpy 2.5
@pytest.mark.parametrize("chunk_size", chunkings(SHAPE))
def test_fix_sinc_and_infinity_tests(chunk_size):
    x = RS.uniform(-3, 3, SHAPE)
    x[0, :4] = [0, np.inf, -np.inf, np.nan]
    t = mt.tensor(x, chunk_size=chunk_size)
    for name in ("fix", "sinc", "isposinf", "isneginf"):
        assert_eq(getattr(mt, name)(t), getattr(np, name)(x))
    assert_eq(mt.fix(mt.tensor(np.arange(-3, 3))), np.fix(np.arange(-3, 3)))
    assert_eq(mt.sinc(mt.tensor(np.arange(-3, 3))), np.sinc(np.arange(-3, 3)))
    out = mt.zeros(SHAPE, dtype=bool)
    mt.isposinf(t, out=out)
    assert_eq(out, np.isposinf(x))
    with pytest.raises(TypeError):
        mt.isposinf(mt.tensor(x + 1j))
