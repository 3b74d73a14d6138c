"""asfreq, asof, at_time, between_time, tz_convert/tz_localize, to_period/to_timestamp equal pandas on every
partitioning."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, lazy, partitionings

import mars.dataframe as md

IDX = pd.DatetimeIndex(["2000-01-01 00:00", "2000-01-01 05:00", "2000-01-01 10:00", "2000-01-01 12:00",
                        "2000-01-02 03:00", "2000-01-02 12:00", "2000-01-03 01:00"])
PDF = pd.DataFrame({"a": [1.0, 2.0, np.nan, 4.0, 5.0, np.nan, 7.0], "b": [1, 2, 3, 4, 5, 6, 7],
                    "c": list("pqrstuv")}, index=IDX)
CHUNKS = partitionings(len(PDF))


@pytest.mark.parametrize("chunk_size", CHUNKS)
@pytest.mark.parametrize("kw", [{"freq": "6h"}, {"freq": "5h", "method": "ffill"}, {"freq": "4h", "method": "bfill"},
                                {"freq": "D", "normalize": True}, {"freq": "7h", "fill_value": "-"}])
def test_asfreq(chunk_size, kw):
    assert_eq(lazy(PDF, chunk_size).asfreq(**kw), PDF.asfreq(**kw), check_meta=False)
    if "fill_value" not in kw:
        assert_eq(lazy(PDF["b"], chunk_size).asfreq(**kw), PDF["b"].asfreq(**kw), check_meta=False)


def test_asfreq_of_periods_and_errors():
    s = pd.Series([1, 2], index=pd.period_range("2000-01", periods=2, freq="M"))
    assert_eq(md.Series(s, chunk_size=1).asfreq("D", how="end"), s.asfreq("D", how="end"), check_meta=False)
    with pytest.raises(ValueError, match="Invalid fill method"):
        md.Series(s).asfreq("D", method="nearest")


@pytest.mark.parametrize("chunk_size", CHUNKS)
def test_asof(chunk_size):
    where = pd.date_range("1999-12-31 22:00", periods=12, freq="5h")
    df = lazy(PDF[["a", "b"]], chunk_size)
    assert_eq(df.asof(where), PDF[["a", "b"]].asof(where), check_meta=False)
    assert_eq(df.asof(where, subset=["b"]), PDF[["a", "b"]].asof(where, subset=["b"]), check_meta=False)
    assert_eq(df["a"].asof(where), PDF["a"].asof(where), check_meta=False)
    assert_eq(df.asof(IDX[2]), PDF[["a", "b"]].asof(IDX[2]), check_meta=False)
    assert df["a"].asof(IDX[5]).to_numpy() == PDF["a"].asof(IDX[5])
    assert np.isnan(df["a"].asof(pd.Timestamp("1990-01-01")).to_numpy())


def test_asof_errors():
    unsorted = pd.Series([1.0, 2.0], index=[2, 1])
    with pytest.raises(ValueError) as want:
        unsorted.asof([1])
    with pytest.raises(ValueError, match=str(want.value)):
        md.Series(unsorted).asof([1]).execute()
    with pytest.raises(ValueError, match="subset is not valid for Series"):
        md.Series(unsorted).asof(1, subset=["x"])


@pytest.mark.parametrize("chunk_size", CHUNKS)
def test_time_of_day_filters(chunk_size):
    df = lazy(PDF, chunk_size)
    assert_eq(df.at_time("12:00"), PDF.at_time("12:00"))
    assert_eq(df["b"].at_time("03:00"), PDF["b"].at_time("03:00"))
    assert_eq(df.between_time("04:00", "11:00"), PDF.between_time("04:00", "11:00"))
    assert_eq(df.between_time("11:00", "04:00", inclusive="left"), PDF.between_time("11:00", "04:00",
                                                                                   inclusive="left"))
    with pytest.raises(TypeError, match="Index must be DatetimeIndex"):
        md.DataFrame({"a": [1]}).at_time("12:00")


@pytest.mark.parametrize("chunk_size", CHUNKS)
def test_time_zones_and_periods(chunk_size):
    df = lazy(PDF, chunk_size)
    assert_eq(df.tz_localize("UTC").tz_convert("Asia/Tokyo"), PDF.tz_localize("UTC").tz_convert("Asia/Tokyo"))
    assert_eq(df["b"].tz_localize("Europe/Paris"), PDF["b"].tz_localize("Europe/Paris"))
    assert_eq(df.to_period("h").to_timestamp(how="end"), PDF.to_period("h").to_timestamp(how="end"))
    assert_eq(df["a"].to_period("D"), PDF["a"].to_period("D"))
    with pytest.raises(NotImplementedError, match="pass freq="):
        df.to_period()
    with pytest.raises(NotImplementedError, match="ambiguous='infer'"):
        df.tz_localize("Europe/Paris", ambiguous="infer")
