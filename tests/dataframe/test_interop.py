"""pandas, numpy and mars tensors meet lazy DataFrames and Series as pandas meets numpy (issue 18, item 5)."""

from __future__ import annotations

import operator

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, partitionings

import mars.dataframe as md
import mars.tensor as mt

PDF = pd.DataFrame({"a": [1, 2, 3, 4, 5], "b": [0.5, 1.5, 2.5, 3.5, 4.5]}, index=[4, 3, 2, 1, 0])
OPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.lt, operator.eq]


@pytest.mark.parametrize("chunk_size", partitionings(5))
@pytest.mark.parametrize("op", OPS)
def test_pandas_on_the_left_hands_the_operation_over(chunk_size, op):
    df = md.DataFrame(PDF, chunk_size=chunk_size)
    assert_eq(op(PDF, df), op(PDF, PDF))
    assert_eq(op(PDF.a, df.a), op(PDF.a, PDF.a))
    shuffled = PDF.b.iloc[::-1]
    if op not in (operator.lt, operator.eq):  # comparisons need identical labels, in pandas too
        assert_eq(op(shuffled, df.b), op(shuffled, PDF.b))


@pytest.mark.parametrize("chunk_size", partitionings(5))
def test_tensors_and_arrays_mix_like_numpy_with_pandas(chunk_size):
    b = np.array([True, False, True, False, True])
    s = pd.Series([False, False, True, True, False], index=PDF.index)
    ms = md.Series(s, chunk_size=chunk_size)
    assert_eq(mt.tensor(b, chunk_size=2) | ms, b | s)
    assert_eq(b | ms, b | s)
    assert_eq(ms & mt.tensor(b, chunk_size=3), s & b)
    values = np.arange(5)
    assert_eq(mt.tensor(values, chunk_size=2) + md.Series(PDF.a, chunk_size=chunk_size), values + PDF.a)
    assert_eq(values - md.Series(PDF.a, chunk_size=chunk_size), values - PDF.a)
    assert_eq(mt.tensor(values, chunk_size=2) < md.Series(PDF.a, chunk_size=chunk_size), values < PDF.a)
    grid = np.arange(10).reshape(5, 2)
    assert_eq(mt.tensor(grid, chunk_size=2) * md.DataFrame(PDF, chunk_size=chunk_size), grid * PDF)
    assert_eq(np.sqrt(md.Series(PDF.b, chunk_size=chunk_size)), np.sqrt(PDF.b))


def test_attribute_access_to_columns_like_pandas():
    frame = pd.DataFrame({"_x": [1, 2], "a_b": [3, 4], "sum": [5, 6]})
    df = md.DataFrame(frame, chunk_size=1)
    assert_eq(df._x, frame._x)
    assert_eq(df.a_b, frame.a_b)
    assert callable(df.sum)  # a method is not shadowed by a column, as in pandas
    with pytest.raises(AttributeError, match="_y"):
        df._y  # noqa: B018
    with pytest.raises(AttributeError):
        df.__array_interface__  # noqa: B018
