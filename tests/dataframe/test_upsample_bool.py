"""``resample(...).interpolate()`` of data with a bool column equals pandas' across partitionings.

pandas interpolates the rows reindexed onto the bin edges: where every edge
has a row the bool column stays bool; where one lacks a row the column holds
a NaN (object) and pandas raises its TypeError.
"""

from __future__ import annotations

import pandas as pd
import pytest
from df_testing import assert_eq, lazy, partitionings

import mars.dataframe as md

ON_EDGES = pd.date_range("2000-01-01", periods=7, freq="h")
#: a row at every hour and some between: no edge of a frequency of whole hours lacks a row
OFF_EDGES = pd.to_datetime(["2000-01-01 00:00", "2000-01-01 00:40", "2000-01-01 01:00", "2000-01-01 02:00",
                            "2000-01-01 03:00", "2000-01-01 03:20", "2000-01-01 04:00"])


def _frame(index: pd.DatetimeIndex) -> pd.DataFrame:
    n = len(index)
    return pd.DataFrame({"a": [float(i * i) for i in range(n)], "b": [i % 3 == 0 for i in range(n)],
                         "c": range(n)}, index=index)


def _expected_error(call) -> str:
    with pytest.raises(TypeError) as caught:
        call()
    return str(caught.value)


@pytest.mark.parametrize("freq", ["h", "2h", "3h"])
def test_every_edge_has_a_row_keeps_the_bool_column(freq):
    for data in (_frame(ON_EDGES), _frame(OFF_EDGES)):
        expected = data.resample(freq).interpolate()
        assert expected["b"].dtype == bool
        for cs in partitionings(len(data)):
            result = lazy(data, cs).resample(freq).interpolate()
            assert result.meta.dtypes["b"] == bool
            assert_eq(result, expected)


@pytest.mark.parametrize("freq", ["30min", "h"])
def test_an_edge_without_a_row_raises_pandas_type_error(freq):
    data = _frame(ON_EDGES.delete(2) if freq == "h" else ON_EDGES)
    message = _expected_error(lambda: data.resample(freq).interpolate())
    for cs in partitionings(len(data)):
        result = lazy(data, cs).resample(freq).interpolate()  # only the data tells: raised when run
        with pytest.raises(TypeError) as caught:
            result.execute()
        assert str(caught.value) == message


def test_bool_series_and_empty_frame():
    s = pd.Series([True, False, False, True], index=ON_EDGES[:4], name="s")
    for cs in partitionings(len(s)):
        assert_eq(md.Series(s, chunk_size=cs).resample("h").interpolate(), s.resample("h").interpolate())
        message = _expected_error(lambda: s.resample("30min").interpolate())
        with pytest.raises(TypeError) as caught:
            md.Series(s, chunk_size=cs).resample("30min").interpolate().execute()
        assert str(caught.value) == message
    empty = _frame(ON_EDGES).iloc[:0]
    for cs in (1, 3):
        assert_eq(lazy(empty, cs).resample("30min").interpolate(), empty.resample("30min").interpolate())


def test_other_columns_that_cannot_interpolate_still_raise_when_built():
    data = _frame(ON_EDGES).assign(s=pd.array(list("abcdefg"), dtype="str"))
    message = _expected_error(lambda: data.resample("h").interpolate())
    with pytest.raises(TypeError) as caught:
        lazy(data, 3).resample("h").interpolate()
    assert str(caught.value) == message
