"""The bugs issue 18 found (each a test), except read_csv's, which the IO tests keep."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, partitionings

import mars.dataframe as md
import mars.tensor as mt

FRAME = pd.DataFrame({"a": range(10), "b": np.arange(10) * 0.5}, index=range(10))


@pytest.mark.parametrize("chunk_size", partitionings(10))
def test_drop_with_a_lazy_series_of_labels(chunk_size):
    df = md.DataFrame(FRAME, chunk_size=chunk_size)
    labels = md.Series([3, 6, 7], chunk_size=2)
    assert_eq(df.drop(labels), FRAME.drop(pd.Series([3, 6, 7])))
    assert_eq(df.drop(index=labels), FRAME.drop(index=pd.Series([3, 6, 7])))
    assert_eq(df.a.drop(labels), FRAME.a.drop(pd.Series([3, 6, 7])))
    assert_eq(df.drop(md.Series([3, 60]), errors="ignore"), FRAME.drop([3, 60], errors="ignore"))
    assert_eq(df.drop(columns=md.Series(["a"])), FRAME.drop(columns=pd.Series(["a"])))
    with pytest.raises(KeyError) as want:
        FRAME.drop(pd.Series([3, 60]))
    with pytest.raises(KeyError) as got:
        df.drop(md.Series([3, 60])).execute()
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("chunk_size", [1, 2, 4])
def test_loc_columns_with_a_duplicate_label(chunk_size):
    frame = pd.DataFrame(np.arange(20).reshape(4, 5), columns=["a", "b", "c", "b", "d"])
    df = md.DataFrame(frame, chunk_size=chunk_size)
    for key in (["b", "a", "d"], ["d", "a"], "b", ["d", "b"], slice("c", "d"), [True, False, True, True, False]):
        assert_eq(df.loc[:, key], frame.loc[:, key])


@pytest.mark.parametrize("chunk_size", [1, 2, 4])
def test_iloc_with_a_lazy_boolean_series_and_columns(chunk_size):
    frame = pd.DataFrame(np.arange(20).reshape(4, 5), index=[10, 11, 12, 13])
    mask = pd.Series([True, False, True, True], index=frame.index)
    df = md.DataFrame(frame, chunk_size=chunk_size)
    assert_eq(df.iloc[md.Series(mask, chunk_size=3), [2, 1]], frame.iloc[mask, [2, 1]])
    assert_eq(df[1].iloc[md.Series(mask, chunk_size=2)], frame[1].iloc[mask])
    shuffled = mask.iloc[::-1]
    assert_eq(df.iloc[md.Series(shuffled, chunk_size=3), [2, 1]], frame.iloc[shuffled, [2, 1]])


def test_pandas_plus_lazy_frame():
    df = md.DataFrame(FRAME, chunk_size=3)
    assert_eq(FRAME + df, FRAME + FRAME)


def test_tensor_or_lazy_series():
    b = np.array([True, False] * 5)
    s = pd.Series([False, True, True, False, False] * 2)
    assert_eq(mt.tensor(b, chunk_size=3) | md.Series(s, chunk_size=4), b | s)


def test_underscore_column_as_attribute():
    frame = pd.DataFrame({"_x": [1, 2]})
    assert_eq(md.DataFrame(frame)._x, frame._x)


def test_reductions_with_level_and_over_both_axes():
    frame = pd.DataFrame({"a": [1, 2, 3], "b": [4.0, 5.0, 6.0]},
                         index=pd.MultiIndex.from_tuples([(1, "x"), (1, "y"), (2, "x")]))
    df = md.DataFrame(frame, chunk_size=2)
    with pytest.raises(TypeError) as want:
        frame.sum(level=0)  # pandas 3 has no level= on reductions
    with pytest.raises(TypeError) as got:
        df.sum(level=0)
    assert str(got.value) == str(want.value)
    assert_eq(df.groupby(level=0).sum(), frame.groupby(level=0).sum())  # the way pandas 3 offers
    for name in ("sum", "mean", "min", "max", "prod", "std", "var"):
        assert_eq(getattr(df, name)(axis=None), getattr(frame, name)(axis=None), rtol=1e-12)
