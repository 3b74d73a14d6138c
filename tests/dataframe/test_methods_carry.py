"""``shift``, ``diff``, ``pct_change``, ``interpolate`` across partitions, against pandas.

Partitionings put empty and one-row partitions where the carried rows must
reach past them, and runs of missing values across partition edges.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, lazy, partitionings

import mars.dataframe as md

N = 14
PARTS = partitionings(N) + [(2, 0, 1, 0, 0, 1, 1, 9)]


def frame() -> pd.DataFrame:
    x = np.random.default_rng(0).normal(size=N)
    x[[0, 2, 7, 8, 9, 13]] = np.nan
    c = np.arange(N)[::-1] * 1.5
    c[3:11] = np.nan
    return pd.DataFrame({"a": x, "b": np.arange(N), "c": c}, index=np.arange(N) * 2)


@pytest.mark.parametrize("cs", PARTS)
@pytest.mark.parametrize("kind", ["frame", "series"])
def test_shift_diff_pct_change(cs, kind):
    p = frame() if kind == "frame" else frame()["a"]
    m = lazy(p, cs)
    for k in [1, 3, -2, 0, N + 2]:
        assert_eq(m.shift(k), p.shift(k))
        assert_eq(m.shift(k, fill_value=0), p.shift(k, fill_value=0))
        assert_eq(m.diff(k), p.diff(k))
        assert_eq(m.pct_change(k), p.pct_change(k))


@pytest.mark.parametrize("cs", PARTS)
def test_int_column_turns_float_in_every_partition(cs):
    p = pd.Series(np.arange(N), name="i")
    assert_eq(lazy(p, cs).shift(1), p.shift(1))
    assert_eq(lazy(p, cs).diff(-1), p.diff(-1))


def test_shift_freq_and_axis1():
    p = frame().set_axis(pd.date_range("2020", periods=N))
    m = md.DataFrame(p, chunk_size=4)
    assert_eq(m.shift(2, freq="D"), p.shift(2, freq="D"))
    assert_eq(m.shift(1, axis=1), p.shift(1, axis=1))
    assert_eq(m.diff(axis=1), p.diff(axis=1))
    with pytest.raises(NotImplementedError):
        m.shift([1, 2])
    with pytest.raises(ValueError, match="fill_method"):
        m.pct_change(fill_method="ffill")


INTERP = [{}, {"limit": 1}, {"limit_direction": "both"}, {"limit_direction": "backward", "limit": 2},
          {"limit_area": "inside"}, {"limit_area": "outside", "limit_direction": "both"}, {"method": "nearest"},
          {"method": "index"}]


@pytest.mark.parametrize("cs", PARTS)
@pytest.mark.parametrize("kind", ["frame", "series"])
def test_interpolate(cs, kind):
    p = frame() if kind == "frame" else frame()["a"]
    m = lazy(p, cs)
    for kw in INTERP:
        assert_eq(m.interpolate(**kw), p.interpolate(**kw))


def test_interpolate_inplace_and_unsupported():
    p = frame()
    m = md.DataFrame(p, chunk_size=3)
    assert m.interpolate(inplace=True) is None
    assert_eq(m, p.interpolate())
    with pytest.raises(NotImplementedError, match="polynomial"):
        m.interpolate(method="polynomial", order=2)
