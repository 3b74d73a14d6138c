"""Assignment through loc, iloc and []: results equal pandas' on every partitioning."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest
from df_testing import assert_eq, lazy, partitionings

import mars.dataframe as md
import mars.tensor as mt

PDF = pd.DataFrame({"a": [1, 2, 3, 4, 5, 6], "b": [4.0, 5.0, 6.0, 7.0, 8.0, 9.0], "c": list("uvwxyz")},
                   index=[10, 20, 30, 40, 50, 60])
PS = pd.Series([1, 2, 3, 4, 5, 6], index=list("abcdef"), name="s")
CHUNKS = partitionings(6)


def _check(write, chunk_size, base=PDF):
    """``write(obj, lazy)`` applied to a pandas copy and to a mars object: the mars object now equals pandas'."""
    expected = base.copy()
    obj = lazy(base, chunk_size)
    before = obj.data
    write(expected, obj, False)
    write(obj, obj, True)
    assert obj.data is not before  # the object the user holds now points at the new expression
    assert_eq(obj, expected)


@pytest.mark.parametrize("chunk_size", CHUNKS)
@pytest.mark.parametrize("key, value", [
    ((slice(None), "a"), 0),
    (([20, 50], "a"), 0),
    (([50, 20], "a"), [7, 8]),
    ((30, "b"), 1.5),
    ((30, ["a", "b"]), [70, 80.5]),
    ((slice(20, 40), "b"), 1.5),
    ((slice(20, 50, 2), ["a", "b"]), np.array([[1, 2], [3, 4]])),
    ((slice(None), "new"), 7),
    (([20, 60], "new"), "q"),
    ((slice(None), ["b", "a"]), np.arange(12).reshape(6, 2)),
    (([True, False, True, False, False, True], "a"), [9, 8, 7]),
    (([20, 30], "a"), pd.Series([8, 9], index=[30, 20])),
    (([20, 30], ["b", "a"]), pd.DataFrame({"a": [1, 2], "b": [3.0, 4.0]}, index=[30, 20])),
    (([20], "a"), np.nan),
])
def test_loc_literal(chunk_size, key, value):
    def write(target, _, is_lazy):
        target.loc[key] = value

    _check(write, chunk_size)


@pytest.mark.parametrize("chunk_size", CHUNKS)
def test_loc_lazy_mask_and_lazy_values(chunk_size):
    def write(target, obj, is_lazy):
        target.loc[target.a > 2, "b"] = target.a * 10.0
        target.loc[target["a"] % 2 == 0, "new"] = -1
        target.loc[target.b > 50, ["a", "b"]] = 0

    _check(write, chunk_size)


@pytest.mark.parametrize("chunk_size", CHUNKS)
def test_loc_values_along_rows_of_a_lazy_mask(chunk_size):
    def write(target, obj, is_lazy):
        values = [100, 200, 300, 400]
        target.loc[target.a > 2, "a"] = mt.tensor(values, chunk_size=3) if is_lazy else values
        target.loc[target.a < 100, "b"] = np.array([0.5, 1.5])

    _check(write, chunk_size)


@pytest.mark.parametrize("chunk_size", CHUNKS)
def test_loc_value_aligned_from_another_layout(chunk_size):
    other = pd.DataFrame({"a": [-1, -2, -3], "b": [0.1, 0.2, 0.3]}, index=[60, 10, 40])

    def write(target, obj, is_lazy):
        value = md.DataFrame(other, chunk_size=2) if is_lazy else other
        target.loc[[10, 40, 60], ["a", "b"]] = value
        series = md.Series(other.b, chunk_size=1) if is_lazy else other.b
        target.loc[[60, 10], "b"] = series

    _check(write, chunk_size)


@pytest.mark.parametrize("chunk_size", CHUNKS)
@pytest.mark.parametrize("key, value", [
    ((slice(1, 4), 0), [7, 8, 9]),
    (([4, 0], [1, 0]), np.array([[1, 2], [3, 4]])),
    ((-1, 1), 2.5),
    ((2, slice(None)), [9, 9.5, "q"]),
    (([True, False] * 3, 0), 0),
    ((slice(None, None, -2), [0, 1]), 0),
    (([0, 1], 0), pd.Series([7, 8], index=[30, 10])),  # iloc: by position
])
def test_iloc(chunk_size, key, value):
    def write(target, _, is_lazy):
        target.iloc[key] = value

    _check(write, chunk_size)


@pytest.mark.parametrize("chunk_size", CHUNKS)
def test_iloc_tensor_values_in_key_order(chunk_size):
    def write(target, obj, is_lazy):
        values = [10, 20, 30]
        target.iloc[[5, 0, 3], 0] = mt.tensor(values, chunk_size=2) if is_lazy else values

    _check(write, chunk_size)


@pytest.mark.parametrize("chunk_size", CHUNKS)
def test_frame_setitem_rows(chunk_size):
    base = PDF[["a", "b"]]

    def write(target, obj, is_lazy):
        target[target.a > 3] = 0
        target[[True, False, False, True, False, False]] = -1
        target[1:3] = 5
        mask = np.array([False, True, True, False, False, False])
        target[mt.tensor(mask, chunk_size=4) if is_lazy else mask] = 8
        target[target > 7] = 100

    _check(write, chunk_size, base)


@pytest.mark.parametrize("chunk_size", partitionings(6))
@pytest.mark.parametrize("key, value", [
    ("b", 10),
    ("z", 10),
    (["f", "a"], [1, 2]),
    (slice(1, 3), 0),
    (slice("b", "d"), 0),
    ([True, False, True, False, True, False], [7, 8, 9]),
    ([True, False, True, False, True, False], list(range(6))),
    (slice(None), np.arange(6)),
    ("c", np.nan),
])
def test_series_setitem(chunk_size, key, value):
    def write(target, _, is_lazy):
        target[key] = value

    _check(write, chunk_size, PS)


@pytest.mark.parametrize("chunk_size", partitionings(6))
def test_series_lazy_keys_and_loc(chunk_size):
    def write(target, obj, is_lazy):
        target[target > 4] = 0
        target.loc[target == 0] = target * 2 + 1
        target.iloc[[1, 3]] = mt.tensor([10, 30]) if is_lazy else [10, 30]
        target.loc["b":"d"] = -target.loc["b":"d"]

    _check(write, chunk_size, PS)


def test_setitem_keeps_other_expressions():
    s = md.Series(PS, chunk_size=2)
    doubled = s * 2
    s["a"] = 100
    assert_eq(doubled, PS * 2)
    assert_eq(s, PS.where(PS.index != "a", 100))


def test_appending_a_row_like_pandas():
    for chunk_size in CHUNKS:
        expected = PDF[["a", "b"]].copy()
        df = md.DataFrame(expected, chunk_size=chunk_size)
        expected.loc[99, "b"] = 5.5
        df.loc[99, "b"] = 5.5
        assert_eq(df, expected, check_meta=False)  # whether a row is appended is known once it runs
        assert df.dtypes.equals(expected.dtypes)


@pytest.mark.parametrize("write, error", [
    (lambda t: t.loc.__setitem__(([10, 99], "a"), 1), KeyError),
    (lambda t: t.loc.__setitem__((t.a > 1, "a"), [1, 2]), ValueError),
    (lambda t: t.iloc.__setitem__((10, 0), 1), IndexError),
    (lambda t: t.iloc.__setitem__(([0, 10], 0), 1), IndexError),
    (lambda t: t.loc.__setitem__((slice(None), "a"), 1.5), TypeError),
])
def test_errors_like_pandas(write, error):
    with pytest.raises(error) as want:
        write(PDF.copy())
    df = md.DataFrame(PDF, chunk_size=4)
    with pytest.raises(error) as got:
        write(df)
        df.execute()
    assert str(got.value) == str(want.value)


def test_tensor_mask_of_wrong_length():
    s = md.Series(PS, chunk_size=4)
    with pytest.raises(IndexError, match="wrong length"):
        s[mt.tensor([True, False])] = 0
        s.execute()


def test_empty_selection_keeps_values():
    df = md.DataFrame(PDF, chunk_size=(0, 3, 3))
    df.loc[df.a > 100, "a"] = 0
    pdt.assert_frame_equal(df.to_pandas(), PDF)
