"""Operators and their methods (add ... ge, & | ^ ~, abs, round, clip) against pandas across partitionings."""

from __future__ import annotations

import operator

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, partitionings, lazy, same_error

import mars.dataframe as md
import mars.tensor as mt
from mars.tensor.core import Tensor

N = 12
PARTS = partitionings(N)


def frame(n: int = N) -> pd.DataFrame:
    k = np.arange(n)
    return pd.DataFrame({
        "i": k * 3 - 5,
        "f": np.where(k % 3 == 1, np.nan, k / 2 - 1.5),
        "b": k % 2 == 0,
    }, index=[f"r{j:02d}" for j in k])


PDF = frame()
# positive ints: pandas turns an int column float where it divides by zero, and refuses negative int powers
DIVISOR = PDF.assign(i=np.arange(N) % 5 + 1, b=True)
STRINGS = pd.Series([f"s{j % 5}" for j in range(N)], index=PDF.index, name="s")
TIMES = pd.Series(pd.date_range("2020-01-01", periods=N, freq="h"), index=PDF.index, name="t")

OPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod, operator.pow]
COMPARE = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]
FLEX = ["add", "sub", "mul", "div", "truediv", "floordiv", "mod", "pow",
        "radd", "rsub", "rmul", "rdiv", "rtruediv", "rfloordiv", "rmod", "rpow", "subtract", "multiply", "divide"]




# ----------------------------------------------------------------- scalars
@pytest.mark.parametrize("chunk_size", PARTS)
def test_operators_with_scalars(chunk_size):
    df, pdf = lazy(PDF[["i", "f"]], chunk_size), PDF[["i", "f"]]
    for op in OPS + COMPARE:
        assert_eq(op(df, 2), op(pdf, 2))
        assert_eq(op(lazy(pdf["f"], chunk_size), 1.5), op(pdf["f"], 1.5))
    for op in OPS:
        assert_eq(op(3, lazy(DIVISOR[["i", "f"]], chunk_size)), op(3, DIVISOR[["i", "f"]]))
        assert_eq(op(2.5, lazy(DIVISOR["f"], chunk_size)), op(2.5, DIVISOR["f"]))
    for op in COMPARE:
        assert_eq(op(1, df), op(1, pdf))


@pytest.mark.parametrize("chunk_size", PARTS)
def test_flex_methods_with_scalars(chunk_size):
    df, s = lazy(DIVISOR, chunk_size), lazy(DIVISOR["f"], chunk_size)
    for name in FLEX:
        assert_eq(getattr(lazy(DIVISOR[["i", "f"]], chunk_size), name)(2),
                  getattr(DIVISOR[["i", "f"]], name)(2))
        assert_eq(getattr(s, name)(3), getattr(DIVISOR["f"], name)(3))
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        assert_eq(getattr(df, name)(1), getattr(DIVISOR, name)(1))
        assert_eq(getattr(s, name)(0.5), getattr(DIVISOR["f"], name)(0.5))


@pytest.mark.parametrize("chunk_size", PARTS)
def test_strings_and_datetimes(chunk_size):
    s, t = lazy(STRINGS, chunk_size), lazy(TIMES, chunk_size)
    assert_eq(s + "_x", STRINGS + "_x")
    assert_eq("p_" + s, "p_" + STRINGS)
    assert_eq(s == "s1", STRINGS == "s1")
    assert_eq(s < "s3", STRINGS < "s3")
    assert_eq(t + pd.Timedelta("1D"), TIMES + pd.Timedelta("1D"))
    assert_eq(t - pd.Timestamp("2020-01-01"), TIMES - pd.Timestamp("2020-01-01"))
    assert_eq(t > pd.Timestamp("2020-01-01 05:00"), TIMES > pd.Timestamp("2020-01-01 05:00"))


# ----------------------------------------------------------------- lazy operands
@pytest.mark.parametrize("chunk_size", PARTS)
def test_same_partitioning(chunk_size):
    df = lazy(DIVISOR[["i", "f"]], chunk_size)
    pdf = DIVISOR[["i", "f"]]
    for op in OPS + COMPARE:
        assert_eq(op(df, df), op(pdf, pdf))
        assert_eq(op(lazy(pdf["f"], chunk_size), lazy(pdf["i"], chunk_size)),
                  op(pdf["f"], pdf["i"]))


@pytest.mark.parametrize("chunk_size", PARTS)
def test_equal_index_chunked_differently(chunk_size):
    """Equal indexes in other partitions: re-cut by position, dtypes kept (no NaN rows)."""
    pdf = DIVISOR[["i", "f"]]
    for op in OPS + COMPARE:
        assert_eq(op(lazy(pdf, chunk_size), lazy(pdf, 5)), op(pdf, pdf))
        assert_eq(op(lazy(pdf["i"], chunk_size), lazy(pdf["i"], (2, 0, 10))), op(pdf["i"], pdf["i"]))


@pytest.mark.parametrize("chunk_size", PARTS)
def test_different_indexes(chunk_size):
    """Operands with other labels or order are aligned as pandas aligns them (outer join)."""
    left = DIVISOR["f"]
    others = [left.iloc[::-1], left.iloc[3:], left.iloc[::2].rename(lambda x: x + "z"), left.iloc[5:9].iloc[::-1]]
    for other in others:
        for op in (operator.add, operator.mul, operator.truediv):
            assert_eq(op(lazy(left, chunk_size), lazy(other, 4)), op(left, other))
        assert_eq(lazy(left, chunk_size).add(lazy(other, 3), fill_value=10), left.add(other, fill_value=10))
    pdf = DIVISOR[["i", "f"]].astype(float)
    assert_eq(lazy(pdf, chunk_size) - lazy(pdf.iloc[2:9].iloc[::-1], 3), pdf - pdf.iloc[2:9].iloc[::-1])


def test_partial_overlap_of_ints_widens():
    """Missing rows make ints float, as in pandas; that is known only once the indexes are compared."""
    a = pd.Series([1, 2, 3, 4], index=[0, 1, 2, 3])
    b = pd.Series([10, 20, 30], index=[2, 3, 4])
    assert_eq(lazy(a, 3) + lazy(b, 2), a + b, check_meta=False)
    assert_eq(lazy(a, 3).sub(lazy(b, 2), fill_value=0), a.sub(b, fill_value=0), check_meta=False)


@pytest.mark.parametrize("chunk_size", PARTS)
@pytest.mark.parametrize("name", ["add", "rsub", "mul", "rtruediv", "floordiv", "pow"])
def test_flex_fill_value(chunk_size, name):
    left, right = DIVISOR["f"], DIVISOR["f"].iloc[::-1].iloc[:8] + 0.25
    assert_eq(getattr(lazy(left, chunk_size), name)(lazy(right, 3), fill_value=1.5),
              getattr(left, name)(right, fill_value=1.5))
    pdf = DIVISOR[["i", "f"]].astype(float)
    other = pdf.iloc[4:] + 1
    assert_eq(getattr(lazy(pdf, chunk_size), name)(lazy(other, 3), fill_value=2.0),
              getattr(pdf, name)(other, fill_value=2.0))


@pytest.mark.parametrize("chunk_size", PARTS)
def test_frame_and_series(chunk_size):
    pdf = DIVISOR[["i", "f"]]
    df = lazy(pdf, chunk_size)
    # along the columns (the default): a reduction, a pandas Series, a list
    assert_eq(df - df.mean(), pdf - pdf.mean())
    assert_eq(df.div(df.max()), pdf.div(pdf.max()))
    assert_eq(df * pd.Series([2, 3], index=["i", "f"]), pdf * pd.Series([2, 3], index=["i", "f"]))
    assert_eq(df + pd.Series([1, 2, 3], index=["i", "f", "x"]), pdf + pd.Series([1, 2, 3], index=["i", "f", "x"]))
    assert_eq(df + [1, 2], pdf + [1, 2])
    assert_eq(lazy(pdf.sum(), 1) + df, pdf.sum() + pdf)
    # along the rows: lazy or pandas, partitioned alike or not
    for name in ("add", "sub", "mul", "rtruediv"):
        assert_eq(getattr(df, name)(lazy(pdf["f"], chunk_size), axis=0), getattr(pdf, name)(pdf["f"], axis=0))
        assert_eq(getattr(df, name)(lazy(pdf["f"], 5), axis="index"), getattr(pdf, name)(pdf["f"], axis="index"))
        assert_eq(getattr(df, name)(pdf["f"].iloc[2:], axis=0), getattr(pdf, name)(pdf["f"].iloc[2:], axis=0))
    assert_eq(df.eq(lazy(pdf["i"], 5), axis=0), pdf.eq(pdf["i"], axis=0))


def test_frames_with_other_columns():
    a = DIVISOR[["i", "f"]]
    b = DIVISOR[["f", "b"]].astype(float) * 2
    assert_eq(lazy(a, 5) + lazy(b, 3), a + b)
    assert_eq(lazy(a, 5).mul(lazy(b, 5), fill_value=1), a.mul(b, fill_value=1))


@pytest.mark.parametrize("chunk_size", PARTS)
def test_tensor_and_lazy_scalar_operands(chunk_size):
    df, s = lazy(DIVISOR[["i", "f"]], chunk_size), lazy(DIVISOR["f"], chunk_size)
    assert_eq(df * mt.tensor(np.float64(2.5)), DIVISOR[["i", "f"]] * 2.5)
    assert_eq(s - s.sum(), DIVISOR["f"] - DIVISOR["f"].sum())
    assert_eq(df.rsub(lazy(DIVISOR["i"], 3).max()), DIVISOR[["i", "f"]].rsub(DIVISOR["i"].max()))


@pytest.mark.parametrize("chunk_size", PARTS)
def test_positional_operands(chunk_size):
    """Arrays, Indexes and tensors are matched by position, as in pandas."""
    s, pdf = lazy(DIVISOR["f"], chunk_size), DIVISOR[["i", "f"]]
    assert_eq(s + np.arange(N), DIVISOR["f"] + np.arange(N))
    assert_eq(s * list(range(N)), DIVISOR["f"] * list(range(N)))
    assert_eq(s - mt.arange(N, chunk_size=5), DIVISOR["f"] - np.arange(N))
    assert_eq(s + pd.Index(np.arange(N)), DIVISOR["f"] + pd.Index(np.arange(N)))
    assert_eq(lazy(pdf, chunk_size) + np.ones((N, 2)), pdf + np.ones((N, 2)))
    assert_eq(lazy(pdf, chunk_size).sub(np.arange(N), axis=0), pdf.sub(np.arange(N), axis=0))
    with pytest.raises(ValueError, match="Lengths must match"):
        s + np.arange(N + 1)


# ----------------------------------------------------------------- logical, unary, round, clip
@pytest.mark.parametrize("chunk_size", PARTS)
def test_logical(chunk_size):
    b = PDF["b"]
    other = (PDF["i"] % 3 == 0).iloc[::-1]
    for op in (operator.and_, operator.or_, operator.xor):
        assert_eq(op(lazy(b, chunk_size), lazy(b, chunk_size)), op(b, b))
        assert_eq(op(lazy(b, chunk_size), lazy(other, 5)), op(b, other))
        assert_eq(op(True, lazy(b, chunk_size)), op(True, b))
        assert_eq(op(lazy(PDF[["b"]], chunk_size), False), op(PDF[["b"]], False))
    assert_eq(~lazy(b, chunk_size), ~b)
    assert_eq(lazy(PDF["i"], chunk_size) & 6, PDF["i"] & 6)


@pytest.mark.parametrize("chunk_size", PARTS)
def test_unary_round_clip(chunk_size):
    pdf = PDF[["i", "f"]]
    df, s = lazy(pdf, chunk_size), lazy(pdf["f"], chunk_size)
    assert_eq(-df, -pdf)
    assert_eq(+s, +pdf["f"])
    assert_eq(abs(df), abs(pdf))
    assert_eq(df.abs(), pdf.abs())
    assert_eq(round(s * 1.2345, 2), round(pdf["f"] * 1.2345, 2))
    assert_eq((df * 1.2345).round({"f": 1}), (pdf * 1.2345).round({"f": 1}))
    assert_eq(s.round(), pdf["f"].round())
    assert_eq(s.clip(-1, 2), pdf["f"].clip(-1, 2))
    assert_eq(df.clip(lower=0), pdf.clip(lower=0))
    bounds = pd.Series([0, 1], index=["i", "f"])
    assert_eq(df.clip(lower=bounds, axis=1), pdf.clip(lower=bounds, axis=1))
    upper = pdf["f"].fillna(0) + 1
    floats = pdf.astype(float)
    assert_eq(lazy(floats, chunk_size).clip(upper=lazy(upper, 5), axis=0), floats.clip(upper=upper, axis=0))
    assert_eq(s.clip(lower=s.min() + 1), pdf["f"].clip(lower=pdf["f"].min() + 1))
    q, r = divmod(lazy(DIVISOR["i"], chunk_size), 4)
    assert_eq(q, DIVISOR["i"] // 4)
    assert_eq(r, DIVISOR["i"] % 4)


@pytest.mark.parametrize("chunk_size", PARTS)
def test_ufuncs(chunk_size):
    s = lazy(PDF["f"], chunk_size)
    assert_eq(np.sqrt(abs(s)), np.sqrt(abs(PDF["f"])))
    assert_eq(np.float64(2) * s, np.float64(2) * PDF["f"])
    assert_eq(np.add(s, lazy(PDF["f"], 5)), np.add(PDF["f"], PDF["f"]))


# ----------------------------------------------------------------- Index
@pytest.mark.parametrize("chunk_size", PARTS)
def test_index(chunk_size):
    idx = pd.Index(np.arange(N) * 2 - 3, name="x")
    li = lazy(idx, chunk_size)
    assert_eq(li + 1, idx + 1)
    assert_eq(2 ** (li % 5), 2 ** (idx % 5))
    assert_eq(-li, -idx)
    assert_eq(li * lazy(idx, 5), idx * idx)
    assert_eq(lazy(PDF["f"], chunk_size) + li, PDF["f"] + idx)
    compared = li > 4
    assert isinstance(compared, Tensor)
    np.testing.assert_array_equal(compared.fetch(), idx > 4)
    np.testing.assert_array_equal((li == lazy(idx[::-1], 5)).fetch(), idx == idx[::-1])


# ----------------------------------------------------------------- errors, laziness
def test_errors_at_build_time():
    df, s = lazy(PDF, 5), lazy(STRINGS, 5)
    other = lazy(PDF[["i"]], 5)
    same_error(lambda: df == other, lambda: PDF == PDF[["i"]])
    same_error(lambda: s - 1, lambda: STRINGS - 1)
    same_error(lambda: lazy(PDF["f"], 5) == lazy(PDF["f"].iloc[:5], 5), lambda: PDF["f"] == PDF["f"].iloc[:5])
    same_error(lambda: df.add(1, axis=3), lambda: PDF.add(1, axis=3))
    with pytest.raises(NotImplementedError, match="level"):
        df.add(1, level=0)


def test_results_stay_lazy():
    """Nothing runs while an expression is built; equal expressions get equal keys."""
    df = lazy(PDF[["i", "f"]], 5)
    a, b = (df + 1) * df, (df + 1) * df
    assert isinstance(a, md.DataFrame) and a.key == b.key
    assert (df + 2).key != (df + 1).key
    assert (df - df.mean()).key != (df - df.max()).key
