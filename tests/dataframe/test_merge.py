"""merge and join against pandas, across partitionings of both sides and every join strategy."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from df_testing import _check_meta, assert_eq, lazy, partitionings

import mars.dataframe as md
from mars.core.options import option_context
from mars.dataframe.map import map_partitions

merge_module = sys.modules["mars.dataframe.merge"]

HOWS = ["inner", "left", "right", "outer"]
NL, NR = 11, 8


def _left(n: int = NL, seed: int = 0) -> pd.DataFrame:
    """Keys with duplicates, NaN and keys the right lacks; a column the right has too."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "k": rng.choice([1.0, 2.0, 3.0, 5.0, np.nan], n),
        "i": rng.integers(0, 3, n),
        "s": pd.Series(rng.choice(["x", "y", "z", None], n), dtype="str"),
        "v": np.arange(n) * 10,
        "b": rng.random(n) > 0.5,
    }, index=pd.Index(rng.permutation(n) + 100, name="lidx"))


def _right(n: int = NR, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "k": rng.choice([1.0, 3.0, 4.0, np.nan, 0.0], n),
        "i": rng.integers(1, 4, n),
        "s": pd.Series(rng.choice(["y", "z", "w", None], n), dtype="str"),
        "v": np.arange(n) * 1.5,
        "w": rng.integers(0, 100, n),
    }, index=pd.Index(rng.permutation(n) + 200, name="ridx"))


def _pairs(nl: int = NL, nr: int = NR) -> list:
    """Partitionings of the two sides, each one paired with a different one of the other side."""
    left, right = partitionings(nl), partitionings(nr)
    return [(lc, right[(i + 1) % len(right)]) for i, lc in enumerate(left)] + [(left[0], right[0])]


#: "default" lets a small side be broadcast; "shuffle" makes every side too big for that (hash or range)
STRATEGIES = ["default", "shuffle"]


def _limit(strategy: str) -> dict:
    return {"chunk_store_limit": 2 if strategy == "shuffle" else 128 * 1024**2}


def assert_merged(result, expected: pd.DataFrame, strategy: str, exact_meta: bool = False) -> None:
    """``result`` equals pandas'; its meta matches the value after running (before, too, with ``exact_meta``).

    Whether an int column turns float depends on whether some row finds no
    partner, which only running tells: the meta is updated when tiling.
    """
    if exact_meta:
        _check_meta(result.meta, expected)
    with option_context(_limit(strategy)):
        assert_eq(result, expected, check_meta=False)
    _check_meta(result.meta, expected)


def _lazy_pair(lc, rc, left=None, right=None):
    left = _left() if left is None else left
    right = _right() if right is None else right
    return left, right, lazy(left, lc), lazy(right, rc)


# ----------------------------------------------------------------- on columns
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("lc,rc", _pairs())
def test_merge_on_key_column(lc, rc, how, strategy):
    left, right, ml, mr = _lazy_pair(lc, rc)
    assert_merged(md.merge(ml, mr, on="k", how=how), left.merge(right, on="k", how=how), strategy,
                  exact_meta=how == "inner")


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("lc,rc", _pairs())
def test_merge_sorted(lc, rc, how, strategy):
    left, right, ml, mr = _lazy_pair(lc, rc)
    for on in ("k", ["i", "k"], "s"):
        assert_merged(ml.merge(mr, on=on, how=how, sort=True), left.merge(right, on=on, how=how, sort=True),
                      strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("lc,rc", _pairs())
def test_merge_left_on_right_on_and_suffixes(lc, rc, how, strategy):
    left, right, ml, mr = _lazy_pair(lc, rc)
    kw = {"left_on": "i", "right_on": "w", "how": how}
    assert_merged(md.merge(ml, mr, **kw), left.merge(right, **kw), strategy)
    kw = {"left_on": ["i", "s"], "right_on": ["i", "s"], "how": how, "suffixes": ("_l", None)}
    assert_merged(md.merge(ml, mr, **kw), left.merge(right, **kw), strategy)
    kw = {"on": "k", "how": how, "suffixes": ("_a", "_a")}  # pandas 3 allows the duplicate columns
    assert_merged(md.merge(ml, mr, **kw), left.merge(right, **kw), strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("lc,rc", _pairs())
def test_merge_on_common_columns_by_default(lc, rc, how, strategy):
    left, right, ml, mr = _lazy_pair(lc, rc)
    left, right = left[["i", "s", "v"]], right[["s", "i", "w"]]
    ml, mr = lazy(left, lc), lazy(right, rc)
    assert_merged(md.merge(ml, mr, how=how), pd.merge(left, right, how=how), strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("how", HOWS)
def test_merge_many_to_many_larger(how, strategy):
    rng = np.random.default_rng(5)
    left = pd.DataFrame({"k": rng.integers(0, 30, 300), "a": rng.random(300)})
    right = pd.DataFrame({"k": rng.integers(10, 40, 120).astype(np.float64), "b": rng.integers(0, 9, 120)})
    for lc, rc in ((37, 120), (300, 13), (41, 29)):
        for sort in (False, True):
            result = md.merge(lazy(left, lc), lazy(right, rc), on="k", how=how, sort=sort)
            assert_merged(result, left.merge(right, on="k", how=how, sort=sort), strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("how", HOWS)
def test_merge_string_and_object_keys(how, strategy):
    left, right = _left(), _right()
    for lc, rc in _pairs()[:3]:
        ml, mr = lazy(left, lc), lazy(right, rc)
        assert_merged(md.merge(ml, mr, on="s", how=how), left.merge(right, on="s", how=how), strategy)
        lo, ro = left.astype({"s": object}), right.astype({"s": object})
        assert_merged(md.merge(lazy(lo, lc), lazy(ro, rc), on="s", how=how, sort=True),
                      lo.merge(ro, on="s", how=how, sort=True), strategy)


@pytest.mark.filterwarnings("ignore:You are merging on int and float columns")
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("how", HOWS)
def test_merge_int_keys_with_float_keys(how, strategy):
    left = pd.DataFrame({"k": [3, 1, 2, 3, 7, 1], "a": range(6)})
    right = pd.DataFrame({"k": [1.0, 3.0, np.nan, 2.5, 7.0], "b": list("abcde")})
    for lc, rc in ((2, 2), (1, 3), (6, (0, 5))):
        for sort in (False, True):
            result = md.merge(lazy(left, lc), lazy(right, rc), on="k", how=how, sort=sort)
            assert_merged(result, left.merge(right, on="k", how=how, sort=sort), strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("how", HOWS)
def test_merge_datetime_keys(how, strategy):
    days = pd.to_datetime(["2020-01-03", "2020-01-01", None, "2020-01-02", "2020-01-01"])
    left = pd.DataFrame({"t": days, "a": range(5)})
    right = pd.DataFrame({"t": pd.to_datetime(["2020-01-01", None, "2020-01-05"]).as_unit("s"), "b": [1, 2, 3]})
    for lc, rc in ((2, 1), (1, 3), (3, 2)):
        for sort in (False, True):  # pandas sorts NaT first, unlike NaN
            result = md.merge(lazy(left, lc), lazy(right, rc), on="t", how=how, sort=sort)
            assert_merged(result, left.merge(right, on="t", how=how, sort=sort), strategy)
        delta = left.assign(t=left["t"] - pd.Timestamp("2020-01-01"))
        rdelta = right.assign(t=right["t"] - pd.Timestamp("2020-01-01"))
        result = md.merge(lazy(delta, lc), lazy(rdelta, rc), on="t", how=how)
        assert_merged(result, delta.merge(rdelta, on="t", how=how), strategy)


# ----------------------------------------------------------------- on indexes
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("lc,rc", _pairs())
def test_merge_on_indexes(lc, rc, how, strategy):
    left = _left().set_index("i")
    right = _right().set_index("i")
    ml, mr = lazy(left, lc), lazy(right, rc)
    for sort in (False, True):
        kw = {"left_index": True, "right_index": True, "how": how, "sort": sort}
        assert_merged(md.merge(ml, mr, **kw), left.merge(right, **kw), strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("lc,rc", _pairs())
def test_merge_column_with_index(lc, rc, how, strategy):
    left = _left()
    right = _right().set_axis(pd.Index([2, 0, 7, 1, 9, 5, 6, 8], name="r"), axis=0)
    ml, mr = lazy(left, lc), lazy(right, rc)
    kw = {"left_on": "i", "right_index": True, "how": how}
    assert_merged(md.merge(ml, mr, **kw), left.merge(right, **kw), strategy)
    kw = {"left_index": True, "right_on": "i", "how": how}
    assert_merged(md.merge(mr, ml, **kw), right.merge(left, **kw), strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("how", HOWS)
def test_merge_on_index_level_name(how, strategy):
    left, right = _left(), _right().rename_axis("lidx").reset_index()
    right["lidx"] = right["lidx"] - 100
    for lc, rc in _pairs()[:3]:
        result = md.merge(lazy(left, lc), lazy(right, rc), left_on="lidx", right_on="lidx", how=how)
        assert_merged(result, left.merge(right, left_on="lidx", right_on="lidx", how=how), strategy)


# ----------------------------------------------------------------- options
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("how", HOWS)
def test_merge_indicator(how, strategy):
    left, right = _left(), _right()
    for lc, rc in _pairs()[:3]:
        ml, mr = lazy(left, lc), lazy(right, rc)
        assert_merged(md.merge(ml, mr, on="k", how=how, indicator=True),
                      left.merge(right, on="k", how=how, indicator=True), strategy)
        assert_merged(md.merge(ml, mr, on="i", how=how, indicator="came_from"),
                      left.merge(right, on="i", how=how, indicator="came_from"), strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_merge_cross(strategy):
    left, right = _left(5), _right(4)
    for lc, rc in ((2, 3), (5, 1), (1, 2)):
        assert_merged(md.merge(lazy(left, lc), lazy(right, rc), how="cross"),
                      left.merge(right, how="cross"), strategy, exact_meta=True)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_merge_validate(strategy):
    left = pd.DataFrame({"k": [1, 2, 3, 4], "a": range(4)})
    right = pd.DataFrame({"k": [2, 3, 3, 9], "b": range(4)})
    unique_right = right.drop_duplicates("k")
    with option_context(_limit(strategy)):
        for lc, rc in ((2, 2), (1, 4), (4, 1)):
            ml, mr = lazy(left, lc), lazy(right, rc)
            assert_eq(md.merge(ml, lazy(unique_right, rc), on="k", validate="1:1"),
                      left.merge(unique_right, on="k", validate="1:1"))
            assert_eq(md.merge(ml, mr, on="k", how="left", validate="one_to_many"),
                      left.merge(right, on="k", how="left", validate="one_to_many"), check_meta=False)
            with pytest.raises(pd.errors.MergeError, match="not unique in right dataset; not a many-to-one"):
                md.merge(ml, mr, on="k", validate="m:1").execute()
            with pytest.raises(pd.errors.MergeError, match="not unique in left dataset"):
                md.merge(mr, ml, on="k", validate="1:m").execute()


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("how", HOWS)
def test_merge_with_empty_side(how, strategy):
    left, right = _left(), _right()
    for lc, rc in ((3, 2), (5, 1)):
        assert_merged(md.merge(lazy(left.iloc[:0], 1), lazy(right, rc), on="k", how=how),
                      left.iloc[:0].merge(right, on="k", how=how), strategy)
        assert_merged(md.merge(lazy(left, lc), lazy(right.iloc[:0], 1), on="k", how=how),
                      left.merge(right.iloc[:0], on="k", how=how), strategy)
        kw = {"left_on": "i", "right_index": True, "how": how}
        assert_merged(md.merge(lazy(left, lc), lazy(right.set_index("i"), rc), **kw),
                      left.merge(right.set_index("i"), **kw), strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("how", HOWS)
def test_merge_inputs_of_unknown_size(how, strategy):
    left, right = _left(), _right()
    ml = map_partitions(lambda df: df[df["v"] > 20], lazy(left, 4), same_rows=False)
    mr = map_partitions(lambda df: df[df["w"] > 10], lazy(right, 3), same_rows=False)
    expected = left[left["v"] > 20].merge(right[right["w"] > 10], on="k", how=how)
    assert_merged(md.merge(ml, mr, on="k", how=how), expected, strategy)


def test_merge_dtypes_of_unmatched_rows():
    left = pd.DataFrame({"k": [1, 2, 3, 4], "a": range(4)})
    right = pd.DataFrame({"k": [1, 2, 3, 4, 5], "n": [1, 2, 3, 4, 5], "f": [True, False, True, True, False]})
    for lc, rc in ((2, 2), (1, 5), (4, 1)):
        ml, mr = lazy(left, lc), lazy(right, rc)
        for how in HOWS:
            # every left key matches: right's ints stay ints in a left join, and turn float in a right join
            assert_merged(md.merge(ml, mr, on="k", how=how), left.merge(right, on="k", how=how), "default")
            assert_merged(md.merge(ml, mr, on="k", how=how), left.merge(right, on="k", how=how), "shuffle")


def test_merged_partitions_share_the_result_dtypes():
    left = pd.DataFrame({"k": np.arange(20) % 7, "a": range(20)})
    right = pd.DataFrame({"k": [0, 1, 2, 3], "n": [5, 6, 7, 8]})
    result = md.merge(lazy(left, 5), lazy(right, 2), on="k", how="left").execute()
    expected = left.merge(right, on="k", how="left")
    assert expected["n"].dtype == np.float64
    firsts = map_partitions(lambda df: df.dtypes.astype(str).to_frame().T, result, same_rows=False).to_pandas()
    assert set(firsts["n"]) == {"float64"}


def test_merge_with_pandas_and_series():
    left, right = _left(), _right()
    ml = lazy(left, 4)
    assert_merged(md.merge(ml, right, on="k", how="left"), left.merge(right, on="k", how="left"), "default")
    assert_merged(md.merge(left, lazy(right, 3), on="k"), left.merge(right, on="k"), "default", exact_meta=True)
    assert_merged(ml.merge(right["w"], left_on="i", right_index=True),
                  left.merge(right["w"], left_on="i", right_index=True), "default")
    named = lazy(right.set_index("k")["w"], 3)
    assert_merged(md.merge(ml, named, left_on="k", right_index=True, how="outer"),
                  left.merge(right.set_index("k")["w"], left_on="k", right_index=True, how="outer"), "shuffle")
    with pytest.raises(ValueError, match="Cannot merge a Series without a name"):
        md.merge(ml, lazy(pd.Series([1, 2]), 1), left_index=True, right_index=True)


def test_merge_errors_at_build_time():
    ml, mr = lazy(_left(), 3), lazy(_right(), 3)
    with pytest.raises(KeyError, match="nope"):
        md.merge(ml, mr, on="nope")
    with pytest.raises(KeyError, match="nope"):
        md.merge(ml, mr, left_on="nope", right_on="k")
    with pytest.raises(pd.errors.MergeError, match="Can only pass argument \"on\" OR"):
        md.merge(ml, mr, on="k", left_on="k", right_on="k")
    with pytest.raises(pd.errors.MergeError, match="No common columns"):
        md.merge(lazy(_left()[["v"]], 2), lazy(_right()[["w"]], 2))
    with pytest.raises(ValueError, match="You are trying to merge on float64 and str columns"):
        md.merge(ml, mr, left_on="k", right_on="s")
    with pytest.raises(ValueError, match="len\\(right_on\\) must equal len\\(left_on\\)"):
        md.merge(ml, mr, left_on=["k", "i"], right_on=["k"])
    with pytest.raises(ValueError, match="not a valid argument"):
        md.merge(ml, mr, on="k", validate="sometimes")
    with pytest.raises(TypeError, match="Can only merge Series or DataFrame objects"):
        md.merge(ml, [1, 2], on="k")
    with pytest.raises(NotImplementedError, match="left_anti"):
        md.merge(ml, mr, on="k", how="left_anti")
    with pytest.raises(NotImplementedError, match="not arrays"):
        md.merge(ml, mr, left_on=np.arange(NL), right_on="k")


def test_merge_strategies_are_all_exercised():
    """The broadcast, hash and range paths each run (the other tests check their results)."""
    seen = []
    original = merge_module.choose_strategy

    def spy(*args):
        seen.append(original(*args))
        return seen[-1]

    left, right = _left(), _right()
    merge_module.choose_strategy = spy
    try:
        for how, limit, sort, rc in [("left", "default", False, 3), ("right", "default", False, 3),
                                     ("inner", "shuffle", False, 3), ("outer", "shuffle", False, 3),
                                     ("left", "shuffle", True, 3), ("inner", "default", False, 8)]:
            with option_context(_limit(limit)):
                md.merge(lazy(left, 4), lazy(right, rc), on="k", how=how, sort=sort).execute()
    finally:
        merge_module.choose_strategy = original
    assert seen == ["broadcast_right", "broadcast_left", "hash", "range", "range", "broadcast_right"]


# ----------------------------------------------------------------- join
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("lc,rc", _pairs())
def test_join_on_index_and_on_column(lc, rc, how, strategy):
    left = _left()
    right = _right().set_axis(pd.Index([2, 0, 7, 1, 9, 5, 6, 8], name="i"), axis=0)[["w", "s"]]
    ml, mr = lazy(left, lc), lazy(right, rc)
    assert_merged(ml.join(mr, on="i", how=how, suffixes=("_l", "_r")),
                  left.join(right, on="i", how=how, suffixes=("_l", "_r")), strategy)
    other = right.set_axis(right.index + 103, axis=0)
    assert_merged(ml.join(lazy(other, rc), how=how, suffixes=("", "_r")),
                  left.join(other, how=how, suffixes=("", "_r")), strategy)


def test_join_series_suffixes_and_errors():
    left, right = _left(), _right().drop_duplicates("i").set_index("i")
    ml = lazy(left, 4)
    assert_merged(ml.join(lazy(right["w"], 2), on="i"), left.join(right["w"], on="i"), "default")
    with pytest.warns(Warning, match="lsuffix"):
        result = ml.join(lazy(right, 2), on="i", lsuffix="_l", rsuffix="_r")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = left.join(right, on="i", lsuffix="_l", rsuffix="_r")
    assert_merged(result, expected, "default")
    with pytest.raises(ValueError, match="columns overlap but no suffix specified"):
        ml.join(lazy(right, 2), on="i")
    with pytest.raises(ValueError, match="Other Series must have a name"):
        ml.join(lazy(pd.Series([1, 2]), 1))


@pytest.mark.parametrize("how", HOWS)
def test_join_list_of_frames(how):
    base = pd.DataFrame({"a": [1, 2, 3, 4]}, index=[4, 1, 3, 2])
    others = [pd.DataFrame({"b": [1.5, 2.5, 3.5]}, index=[1, 2, 9]), pd.DataFrame({"c": list("xyz")}, index=[3, 4, 1])]
    for cs in ((2, 2, 1), (4, 3, 3), (1, 1, 2)):
        for sort in (False, True):
            result = lazy(base, cs[0]).join([lazy(o, c) for o, c in zip(others, cs[1:])], how=how, sort=sort)
            assert_merged(result, base.join(others, how=how, sort=sort), "default")


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("how", HOWS)
def test_merge_other_key_dtypes(how, strategy):
    """Categorical, bool and nullable-int keys; a categorical meeting strings; ints meeting nullable ints."""
    left = pd.DataFrame({"c": pd.Categorical(list("abcab")), "b": [True, False, True, True, False],
                         "n": pd.array([1, None, 3, 3, 2], dtype="Int64"), "v": range(5)})
    right = pd.DataFrame({"c": pd.Series(list("bcd"), dtype="str"), "b": [False, True, False],
                          "n": [3, 1, 5], "w": [1.5, 2.5, 3.5]})
    for lc, rc in ((2, 2), (5, 1), (1, 3)):
        for on in ("b", "n", ["c", "b"]):
            for sort in (False, True):
                assert_merged(md.merge(lazy(left, lc), lazy(right, rc), on=on, how=how, sort=sort),
                              left.merge(right, on=on, how=how, sort=sort), strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("how", HOWS)
def test_merge_with_itself_and_multiindex(how, strategy):
    left = _left()
    ml = lazy(left, 4)
    assert_merged(md.merge(ml, ml, on="i", how=how), left.merge(left, on="i", how=how), strategy)
    multi = left.set_index(["i", "s"])
    other = _right().set_index(["i", "s"])
    kw = {"left_index": True, "right_index": True, "how": how}
    assert_merged(md.merge(lazy(multi, 3), lazy(other, 2), **kw), multi.merge(other, **kw), strategy)
    kw = {"left_on": ["i", "s"], "right_index": True, "how": "left"}
    assert_merged(md.merge(ml, lazy(other, 2), **kw), left.merge(other, **kw), strategy)
