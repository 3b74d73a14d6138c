"""Merges of columns with an index where a side has a MultiIndex: pandas' index, names and dtypes, every chunking.

pandas labels such a merge's rows with the index of the side whose columns
are joined (NaN in every level where that side lacks the row), the other
side's index when that side is wholly empty, and that side's last label
for the rows it lacks when the other side's index is a MultiIndex.
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
HOWS = ["inner", "left", "right", "outer"]
#: "default" lets a small side be broadcast; "shuffle" makes both sides too big for that (hash or range)
LIMITS = {"default": 128 * 1024**2, "shuffle": 2}


def _multi(n: int = 9, seed: int = 0) -> pd.DataFrame:
    """A MultiIndex (int and str levels, named) and key columns with values the other side lacks."""
    rng = np.random.default_rng(seed)
    index = pd.MultiIndex.from_arrays([rng.integers(0, 4, n), pd.array(rng.choice(list("abc"), n), dtype="str")],
                                      names=["p", "q"])
    return pd.DataFrame({"x": rng.choice([10, 20, 30, 99], n), "y": rng.choice([1, 2], n),
                         "a": np.arange(n) * 1.5}, index=index)


def _flat() -> pd.DataFrame:
    """A flat named index with a duplicate label and labels the MultiIndexed side's keys lack."""
    return pd.DataFrame({"b": [100, 200, 300, 400, 500]}, index=pd.Index([10, 20, 30, 40, 10], name="k"))


def _check(result, expected: pd.DataFrame, strategy: str) -> None:
    """``result`` equals pandas'; its meta, settled when tiling, matches too."""
    with option_context({"chunk_store_limit": LIMITS[strategy]}):
        assert_eq(result, expected, check_meta=False)
    _check_meta(result.meta, expected)
    pd.testing.assert_index_equal(result.meta.index, expected.index[:0], exact=False)


def _cases(frame: pd.DataFrame) -> list:
    """``frame`` whole and empty, each with its partitionings (empty partitions among them)."""
    return [(frame, cs) for cs in partitionings(len(frame))] + [(frame.iloc[:0], 1), (frame.iloc[:0], 3)]


@pytest.mark.parametrize("strategy", list(LIMITS))
@pytest.mark.parametrize("how", HOWS)
def test_columns_of_a_multiindexed_frame_to_a_flat_index(how, strategy):
    """``left_on`` with ``right_index``: the left's MultiIndex, NaN where a right row has no left partner."""
    right = _flat()
    for left, lc in _cases(_multi()):
        for rsize in (right, right.iloc[:0]):
            for rc in (len(rsize) or 1, 2):
                kw = {"left_on": "x", "right_index": True, "how": how}
                _check(md.merge(lazy(left, lc), lazy(rsize, rc), **kw), left.merge(rsize, **kw), strategy)


@pytest.mark.parametrize("strategy", list(LIMITS))
@pytest.mark.parametrize("how", HOWS)
def test_flat_index_to_columns_of_a_multiindexed_frame(how, strategy):
    """``left_index`` with ``right_on``: the right's MultiIndex, NaN where a left row has no right partner."""
    left = _flat()
    for right, rc in _cases(_multi()):
        for lsize in (left, left.iloc[:0]):
            for lc in (len(lsize) or 1, 2):
                kw = {"left_index": True, "right_on": "x", "how": how, "sort": how == "outer"}
                _check(md.merge(lazy(lsize, lc), lazy(right, rc), **kw), lsize.merge(right, **kw), strategy)


@pytest.mark.parametrize("strategy", list(LIMITS))
@pytest.mark.parametrize("how", HOWS)
def test_join_on_columns_of_a_multiindexed_frame(how, strategy):
    other = _flat().iloc[:4].rename_axis(None)
    for left, lc in _cases(_multi()):
        for oc in (4, 1):
            _check(lazy(left, lc).join(lazy(other, oc), on="x", how=how), left.join(other, on="x", how=how),
                   strategy)


@pytest.mark.parametrize("strategy", list(LIMITS))
@pytest.mark.parametrize("how", HOWS)
def test_join_of_two_multiindexed_frames_on_columns(how, strategy):
    """Rows the left lacks take its last label, which only the whole left knows: one partition does it."""
    other = _multi(6, seed=3).drop_duplicates(["x", "y"]).set_index(["x", "y"]).rename(columns={"a": "c"})
    for left, lc in _cases(_multi()):
        for oc in (len(other), 2):
            _check(lazy(left, lc).join(lazy(other, oc), on=["x", "y"], how=how),
                   left.join(other, on=["x", "y"], how=how), strategy)


@pytest.mark.parametrize("how", HOWS)
def test_flat_index_takes_the_last_label_where_the_other_index_is_a_multiindex(how):
    flat = _multi().reset_index(drop=True).set_axis(pd.Index(np.arange(9) + 50, name="i"))
    multi = _flat().set_axis(pd.MultiIndex.from_arrays([[10, 20, 30, 40, 10], [1, 1, 2, 2, 2]], names=["k", "m"]))
    for cs in partitionings(len(flat)):
        kw = {"left_on": ["x", "y"], "right_index": True, "how": how}
        _check(md.merge(lazy(flat, cs), lazy(multi, 2), **kw), flat.merge(multi, **kw), "shuffle")
        kw = {"left_index": True, "right_on": ["x", "y"], "how": how}
        _check(md.merge(lazy(multi, 2), lazy(flat, cs), **kw), multi.merge(flat, **kw), "shuffle")


def test_meta_before_running_has_the_labelling_sides_index():
    left, right = _multi(), _flat()
    for how in HOWS:
        result = md.merge(lazy(left, 3), lazy(right, 2), left_on="x", right_index=True, how=how)
        assert list(result.meta.index.names) == ["p", "q"]
        assert list(result.reset_index().meta.columns) == list(left.merge(right, left_on="x", right_index=True,
                                                                           how=how).reset_index().columns)


def test_last_label_joins_run_in_one_partition():
    seen = []
    original = merge_module.choose_strategy

    def spy(*args):
        seen.append(original(*args))
        return seen[-1]

    left = _multi()
    other = _multi(6, seed=3).drop_duplicates(["x", "y"]).set_index(["x", "y"])
    merge_module.choose_strategy = spy
    try:
        with option_context({"chunk_store_limit": 2}):
            lazy(left, 3).join(lazy(other, 2), on=["x", "y"], how="outer", suffixes=("", "_r")).execute()
            lazy(left, 3).join(lazy(other, 2), on=["x", "y"], how="inner", suffixes=("", "_r")).execute()
    finally:
        merge_module.choose_strategy = original
    assert seen == ["single", "hash"]
