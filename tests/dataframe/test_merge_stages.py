"""An inner merge of columns whose dtypes the metadata gives runs without a tiling stage of its own.

Each tiling stage is a round trip to the workers on a cluster; a merge used
to run its partitions in one and fetch their dtypes and sizes in a second.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest
from df_testing import _check_meta, assert_eq, lazy, partitionings

import mars.dataframe as md
from mars.core.options import option_context

merge_module = sys.modules["mars.dataframe.merge"]
NL, NR = 12, 9


def _frames(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Strings, datetimes and timedeltas beside int keys (with duplicates and keys the other side lacks)."""
    rng = np.random.default_rng(seed)
    left = pd.DataFrame({
        "k": rng.integers(0, 6, NL),
        "s": pd.Series(rng.choice(["x", "y", None], NL), dtype="str"),
        "t": pd.to_datetime(rng.integers(0, 10**6, NL), unit="s"),
        "v": rng.random(NL),
    })
    right = pd.DataFrame({
        "rk": rng.integers(2, 8, NR),
        "u": pd.Series(rng.choice(["p", "q"], NR), dtype="str"),
        "d": pd.to_timedelta(rng.integers(0, 100, NR), unit="h"),
        "b": rng.random(NR) > 0.5,
    })
    return left, right


def _pairs() -> list:
    left, right = partitionings(NL), partitionings(NR)
    return [(lc, right[(i + 1) % len(right)]) for i, lc in enumerate(left)] + [(left[0], right[0])]


#: a small side may be broadcast / every side is too big for that (a hash shuffle)
LIMITS = {"broadcast": 128 * 1024**2, "hash": 2}


@pytest.mark.parametrize("strategy", list(LIMITS))
@pytest.mark.parametrize("lc,rc", _pairs())
def test_inner_merge_of_strings_and_datetimes_equals_pandas_with_no_stage(stages, strategies, lc, rc, strategy):
    left, right = _frames()
    cases = [({"left_on": "k", "right_on": "rk"}, right),
             ({"on": "k"}, right.rename(columns={"rk": "k"}))]  # one key column: the key-table path
    for kw, other in cases:
        expected = left.merge(other, **kw)
        result = md.merge(lazy(left, lc), lazy(other, rc), **kw)
        stages.clear()
        strategies.clear()
        with option_context({"chunk_store_limit": LIMITS[strategy]}):
            assert_eq(result, expected)
        if strategies == ["broadcast_left_ordered"]:  # fetches where its partitions' rows fall, to skip a shuffle
            assert [s[0] for s in stages] == ["MergeChunk", "MergeInfo"]
        else:  # sizes and dtypes of the inputs are known: nothing runs before the final graph
            assert stages == [], strategies


@pytest.mark.parametrize("lc,rc", _pairs())
def test_keys_of_two_datetime_units_still_settle_the_dtype_from_the_data(lc, rc):
    """pandas gives a shared key column the unit of whichever side has rows: the partitions' dtypes are fetched."""
    left, right = _frames(1)
    left = left.assign(t=left.t.dt.floor("D").dt.as_unit("ns"))
    right = right.assign(t=left.t.iloc[:NR].to_numpy().astype("datetime64[s]"))
    expected = left.merge(right, on="t")
    result = md.merge(lazy(left, lc), lazy(right, rc), on="t")
    for limit in LIMITS.values():
        with option_context({"chunk_store_limit": limit}):
            assert_eq(result, expected, check_meta=False)
        _check_meta(result.meta, expected)


def test_the_merged_result_feeds_a_later_merge_and_groupby(stages):
    """A chain: the second merge learns the first's sizes in the stage that runs it (one stage, not two)."""
    left, right = _frames(2)
    third = pd.DataFrame({"u": pd.Series(["p", "q", "r"], dtype="str"), "w": [1.5, 2.5, 3.5]})
    expected = left.merge(right, left_on="k", right_on="rk").merge(third, on="u").groupby("s").w.sum()
    first = md.merge(lazy(left, 5), lazy(right, 4), left_on="k", right_on="rk")
    result = first.merge(lazy(third, 2), on="u").groupby("s").w.sum()
    assert_eq(result, expected)
    assert len([s for s in stages if "MergeInfo" in s]) == 0


@pytest.mark.parametrize("how", ["inner", "left", "right", "outer"])
def test_filtered_one_partition_sides_merge_in_the_stage_that_filters_them(stages, how):
    """Sizes decide nothing when each side is one partition: no stage counts the filtered sides first
    (TPC-H's nation, region and supplier, filtered, meet one another so)."""
    left, right = _frames(3)
    other = right.rename(columns={"rk": "k"})
    for keep_left, keep_right in ((0.5, 5), (2.0, 5), (0.5, 99)):  # rows on both sides; none on one side
        expected = left[left.v < keep_left].merge(other[other.k < keep_right], on="k", how=how)
        lz, rz = lazy(left, NL), lazy(other, NR)
        result = lz[lz.v < keep_left].merge(rz[rz.k < keep_right], on="k", how=how)
        stages.clear()
        # unmatched rows make a bool column object: the metadata cannot know that before the data is seen
        assert_eq(result, expected, check_meta=how == "inner")
        assert all("MapPartitions" not in s for s in stages), stages  # nothing counted the sides first


@pytest.mark.parametrize("chunk_size", partitionings(NL)[1:])
@pytest.mark.parametrize("how", ["inner", "left"])
def test_a_filtered_one_partition_side_met_by_several_partitions_is_broadcast_uncounted(stages, how, chunk_size):
    """The one-partition side goes whole to every partition of the other, whatever its size (as Dask merges
    it): no stage counts it first (TPC-H Q11's German suppliers meeting partsupp, Q17's parts lineitem)."""
    left, right = _frames(4)
    other = right.rename(columns={"rk": "k"})
    for keep in (6, 99, -1):  # some rows, all, none
        expected = left.merge(other[other.k < keep], on="k", how=how)
        rz = lazy(other, NR)
        stages.clear()
        assert_eq(lazy(left, chunk_size).merge(rz[rz.k < keep], on="k", how=how), expected, check_meta=how == "inner")
        assert all("MapPartitions" not in s for s in stages), stages


@pytest.mark.parametrize("how", ["right", "outer"])
def test_a_one_partition_side_that_cannot_be_broadcast_is_still_counted(stages, how):
    """A right or outer join keeps the one-partition side's unmatched rows: each partition of the other
    cannot merge it whole, and its size weighs the other plans."""
    left, right = _frames(4)
    other = right.rename(columns={"rk": "k"})
    rz = lazy(other, NR)
    assert_eq(lazy(left, 5).merge(rz[rz.k < 6], on="k", how=how), left.merge(other[other.k < 6], on="k", how=how),
              check_meta=False)
    assert any("MapPartitions" in s for s in stages), stages  # the strategy needs the filtered side's size
