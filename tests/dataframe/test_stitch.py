"""Carried rows stitched into a partition's result (mars.dataframe.stitch): shift/diff/pct_change and rolling.

Partitions here are long enough for the stitched path (more than twice the
rows a result reads) next to short ones that take the concatenating path,
with empty and size-1 partitions between them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest
from df_testing import assert_eq

import mars.dataframe as md
from mars.dataframe.stitch import stitched

N = 60


@pytest.fixture(autouse=True)
def _stitch_every_partition(monkeypatch):
    """These partitions are small: without this they would be computed the plain way (test_stitch_small.py)."""
    monkeypatch.setattr("mars.dataframe.stitch.SMALL_CELLS", 0)


CHUNKINGS = [N, 20, (25, 1, 0, 34), (7, 30, 0, 23), (1, 0, 40, 19)]


def _series() -> pd.Series:
    rng = np.random.default_rng(1)
    values = rng.normal(size=N).cumsum()
    values[[3, 26, 27, 45]] = np.nan
    return pd.Series(values, index=pd.date_range("2021-01-01", periods=N, freq="min"), name="v")


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(2)
    return pd.DataFrame({
        "f": np.where(rng.random(N) < 0.1, np.nan, rng.normal(size=N)),
        "i": rng.integers(0, 100, N),
        "b": rng.random(N) < 0.5,
        "t": pd.date_range("2021-01-01", periods=N, freq="h", tz="Europe/Paris"),
        "n": pd.array(rng.integers(0, 9, N), dtype="Int64"),
        "c": pd.Categorical(rng.choice(["x", "y", "z"], N)),
    }, index=pd.Index(rng.permutation(N) * 3, name="k"))


@pytest.mark.parametrize("cs", CHUNKINGS)
@pytest.mark.parametrize("periods", [1, 3, -2, 7])
def test_shift_diff_pct_change_series(cs, periods):
    p = _series()
    m = md.Series(p, chunk_size=cs)
    assert_eq(m.shift(periods), p.shift(periods), check_exact=True)
    assert_eq(m.diff(periods), p.diff(periods), check_exact=True)
    assert_eq(m.pct_change(periods), p.pct_change(periods), check_exact=True)


@pytest.mark.parametrize("cs", CHUNKINGS)
@pytest.mark.parametrize("periods", [2, -3])
def test_shift_mixed_frame(cs, periods):
    p = _frame()
    m = md.DataFrame(p, chunk_size=cs)
    assert_eq(m.shift(periods), p.shift(periods), check_exact=True)
    numbers = p[["f", "i", "n"]]
    assert_eq(md.DataFrame(numbers, chunk_size=cs).shift(periods, fill_value=0), numbers.shift(periods, fill_value=0),
              check_exact=True)
    assert_eq(m[["f", "i", "b", "t"]].diff(periods), p[["f", "i", "b", "t"]].diff(periods), check_exact=True)


@pytest.mark.parametrize("cs", CHUNKINGS)
@pytest.mark.parametrize("kw", [{"window": 3}, {"window": 5, "min_periods": 2}, {"window": 4, "center": True},
                                {"window": 5, "center": True, "min_periods": 1}, {"window": 3, "closed": "left"},
                                {"window": 4, "closed": "both"}, {"window": 12}, {"window": 3, "closed": "neither"}])
def test_rolling_series(cs, kw):
    p = _series()
    m = md.Series(p, chunk_size=cs)
    for how in ("mean", "sum", "std", "count", "min", "median"):
        assert_eq(getattr(m.rolling(**kw), how)(), getattr(p.rolling(**kw), how)())


@pytest.mark.parametrize("cs", [N, (25, 1, 0, 34), (1, 0, 40, 19)])
def test_rolling_frame_and_weighted_and_apply(cs):
    p = _frame()[["f", "i"]].assign(g=lambda d: d.f * 2)
    m = md.DataFrame(p, chunk_size=cs)
    assert_eq(m.rolling(4, min_periods=1).var(), p.rolling(4, min_periods=1).var())
    assert_eq(m.rolling(3, center=True).max(), p.rolling(3, center=True).max())
    assert_eq(m.rolling(5, win_type="triang", center=True).mean(), p.rolling(5, win_type="triang", center=True).mean())
    assert_eq(m.rolling(3).apply(lambda w: w[-1] - w[0], raw=True), p.rolling(3).apply(lambda w: w[-1] - w[0], raw=True))
    t = _frame()[["f", "t"]].reset_index(drop=True)
    assert_eq(md.DataFrame(t, chunk_size=cs).rolling(3, on="t").sum(), t.rolling(3, on="t").sum())


def test_the_chained_workload():
    p = _series()
    m = md.Series(p, chunk_size=(25, 1, 0, 34))
    assert_eq(m.shift(1) + m.diff(5) + m.rolling(10).mean(), p.shift(1) + p.diff(5) + p.rolling(10).mean())


# ----------------------------------------------------------------- stitched() itself
def _plain(compute, before, own, after):
    parts = [x for x in (before, own, after) if x is not None and len(x)]
    nb = len(before) if before is not None else 0
    return compute(pd.concat(parts)).iloc[nb:nb + len(own)]


@pytest.mark.parametrize("reach", [(1, 0), (0, 2), (3, 2), (5, 5)])
def test_stitched_reads_the_partition_once_and_equals_the_concatenation(reach):
    p = _frame().reset_index(drop=True)
    before, own, after = p.iloc[:reach[0]], p.iloc[reach[0]:50], p.iloc[50:50 + reach[1]]
    rb, ra = reach
    sizes = []

    def compute(frame):
        sizes.append(len(frame))
        return frame.shift(rb) if rb else frame.shift(-ra)

    got = stitched(compute, before, own, after, reach)
    assert sizes.count(len(own)) == 1 and sum(sizes) <= len(own) + 3 * (rb + ra) * 2, sizes
    pdt.assert_frame_equal(got, _plain(compute, before, own, after))


def test_stitched_small_partitions_and_mixed_dtypes_concatenate():
    s = pd.Series(np.arange(10.0))
    got = stitched(lambda x: x.rolling(3).sum(), s.iloc[:2], s.iloc[2:7], s.iloc[7:], (3, 0))
    pdt.assert_series_equal(got, s.rolling(3).sum().iloc[2:7])

    # the partition alone gives int, the small edge frame float: the result is the concatenation's, not a mix
    def compute(x):
        return x.shift(1, fill_value=0) if len(x) > 20 else x.shift(1)

    s = pd.Series(np.arange(40))
    pdt.assert_series_equal(stitched(compute, s.iloc[:1], s.iloc[1:], None, (1, 0)), s.shift(1, fill_value=0).iloc[1:])


def test_stitched_writes_every_column_of_a_homogeneous_frame():
    p = pd.DataFrame(np.arange(120.0).reshape(40, 3), columns=list("abc"))
    got = stitched(lambda x: x.rolling(4).mean(), p.iloc[:4], p.iloc[4:36], p.iloc[36:], (4, 0))
    pdt.assert_frame_equal(got, p.rolling(4).mean().iloc[4:36])


@pytest.mark.parametrize("kw", [{}, {"center": True}, {"closed": "left"}, {"closed": "both", "min_periods": 1},
                                {"closed": "neither", "center": True}])
def test_kept_bounds_give_pandas_own_windows(kw):
    from mars.dataframe.window import _KEPT_BOUNDS_METHODS, RowBounds

    s = _series()
    for window in (0, 1, 4, 70):
        if window == 0 and "min_periods" in kw:
            continue
        for how in sorted(_KEPT_BOUNDS_METHODS):
            args = (0.3,) if how == "quantile" else ()
            for _ in range(2):  # the second time from the bounds kept
                got = getattr(s.rolling(RowBounds(window_size=window), **kw), how)(*args)
                pdt.assert_series_equal(got, getattr(s.rolling(window, **kw), how)(*args), check_exact=True)
