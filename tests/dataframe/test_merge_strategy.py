"""A small left side broadcast to a big right side's partitions (``inner``/``left`` joins), in pandas' order."""

from __future__ import annotations

import contextlib
import math
import sys

import numpy as np
import pandas as pd
import pytest
from df_testing import _check_meta, assert_eq, lazy, partitionings

import mars.dataframe as md
from mars.core.options import option_context
from mars.dataframe import merge_strategy

merge_module = sys.modules["mars.dataframe.merge"]
order_module = sys.modules["mars.dataframe.merge_order"]
ORDERED = "broadcast_left_ordered"
NL, NR = 9, 40


def _left(n: int = NL, seed: int = 0) -> pd.DataFrame:
    """Duplicate keys, NaN keys and keys the right lacks; a column the right has too; a non-default index."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "k": rng.choice([1.0, 2.0, 3.0, 6.0, np.nan], n),
        "a": np.arange(n) * 10,
        "s": pd.Series(rng.choice(["x", "y", None], n), dtype="str"),
        "v": rng.integers(0, 100, n),
    }, index=pd.Index(rng.permutation(n) + 100, name="lidx"))


def _right(n: int = NR, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "k": rng.choice([1.0, 3.0, 4.0, 6.0, np.nan, 0.0], n),
        "b": rng.integers(0, 1000, n),
        "v": rng.random(n),
        "t": pd.to_datetime(rng.integers(0, 10**6, n), unit="s"),
    }, index=pd.Index(rng.permutation(n) + 500, name="ridx"))


@contextlib.contextmanager
def _strategies():
    """The strategies chosen while the block runs, in order."""
    seen: list = []
    original = merge_module.choose_strategy

    def spy(*args):
        seen.append(original(*args))
        return seen[-1]

    merge_module.choose_strategy = spy
    try:
        yield seen
    finally:
        merge_module.choose_strategy = original


def _left_fits(left: pd.DataFrame) -> dict:
    """A store limit the left side fits in and the (bigger) right does not: only the left is broadcast."""
    return {"chunk_store_limit": max(2, math.ceil(merge_strategy._nbytes(left, len(left))))}


def check(left: pd.DataFrame, right: pd.DataFrame, lc, rc, strategy: str | None = ORDERED, **kw) -> None:
    """md.merge equals pd.merge on these partitionings, by ``strategy`` when both sides are not one partition."""
    expected = pd.merge(left, right, **kw)
    result = md.merge(lazy(left, lc), lazy(right, rc), **kw)
    with option_context(_left_fits(left)), _strategies() as seen:
        assert_eq(result, expected, check_meta=False)
    _check_meta(result.meta, expected)
    if strategy is not None and seen != ["single"]:
        assert seen == [strategy]


def _pairs(nl: int = NL, nr: int = NR) -> list:
    left, right = partitionings(nl), partitionings(nr)
    return [(lc, right[(i + 1) % len(right)]) for i, lc in enumerate(left)] + [(left[0], rc) for rc in right[1:]]


# ----------------------------------------------------------------- inner and left joins of columns
@pytest.mark.parametrize("how", ["inner", "left"])
@pytest.mark.parametrize("lc,rc", _pairs())
def test_small_left_on_key_column(lc, rc, how):
    check(_left(), _right(), lc, rc, on="k", how=how)
    check(_left(), _right(), lc, rc, left_on="a", right_on="b", how=how, suffixes=("_l", "_r"))


@pytest.mark.parametrize("how", ["inner", "left"])
def test_small_left_many_to_many_and_several_keys(how):
    rng = np.random.default_rng(3)
    left = pd.DataFrame({"k": rng.integers(0, 4, 30), "j": rng.choice(["p", "q"], 30), "x": range(30)})
    right = pd.DataFrame({"k": rng.integers(0, 5, 200), "j": rng.choice(["p", "q", "r"], 200), "y": range(200)})
    for lc, rc in ((30, 17), (7, (50, 0, 1, 149)), (1, 200), (11, 40)):
        check(left, right, lc, rc, on="k", how=how)
        check(left, right, lc, rc, on=["j", "k"], how=how)


@pytest.mark.parametrize("how", ["inner", "left"])
def test_small_left_key_dtypes(how):
    """Ints meet floats and nullable ints, datetimes of two units, strings, objects."""
    rng = np.random.default_rng(4)
    keys = rng.integers(0, 6, 12)
    more = rng.integers(0, 8, 60)
    left = pd.DataFrame({"i": keys, "n": pd.array(keys, dtype="Int64"), "d": pd.to_datetime(keys, unit="D"),
                         "s": pd.Series(keys.astype(str), dtype="str"), "o": keys.astype(str).astype(object),
                         "x": range(12)})
    right = pd.DataFrame({"f": more.astype(float), "i": more, "d": pd.to_datetime(more, unit="D").as_unit("s"),
                          "s": pd.Series(more.astype(str), dtype="str"), "o": more.astype(str).astype(object),
                          "y": np.arange(60) * 2})
    for lc, rc in ((5, 13), (12, (0, 30, 0, 30))):
        check(left, right, lc, rc, left_on="i", right_on="f", how=how)
        check(left, right, lc, rc, left_on="n", right_on="i", how=how)
        for on in ("d", "s", "o"):
            check(left, right, lc, rc, on=on, how=how)


def test_small_left_left_join_dtypes_follow_matches():
    """Right int columns stay int when every left row finds a partner, and turn float when one does not."""
    left = pd.DataFrame({"k": [3, 1, 3, 2], "x": [1, 2, 3, 4]})
    right = pd.DataFrame({"k": np.arange(40) % 4, "y": np.arange(40), "z": np.arange(40) > 20})
    for lc, rc in ((2, 7), (4, (0, 39, 1)), (1, 13), (3, 1)):
        check(left, right, lc, rc, on="k", how="left")
        check(left.assign(k=[3, 1, 9, 2]), right, lc, rc, on="k", how="left")
        check(left.assign(k=[7, 8, 9, 9]), right, lc, rc, on="k", how="left")


@pytest.mark.parametrize("how", ["inner", "left"])
def test_small_left_indicator_and_validate(how):
    left, right = _left(), _right()
    check(left, right, 3, 7, on="k", how=how, indicator=True)
    unique = left.drop_duplicates("k")
    check(unique, right, 2, (0, 13, 27), on="k", how=how, validate="one_to_many")
    with option_context(_left_fits(left)), pytest.raises(pd.errors.MergeError, match="not a one-to-many merge"):
        md.merge(lazy(left, 3), lazy(right, 7), on="k", how=how, validate="1:m").execute()


@pytest.mark.parametrize("how", ["inner", "left"])
def test_small_left_empty_sides(how):
    left, right = _left(), _right()
    check(left.iloc[:0], right, 1, 7, on="k", how=how)
    check(left, right.iloc[:0], 3, 1, on="k", how=how, strategy=None)
    partners = right[right.k.isin([4.0, 0.0, 6.0])]  # one partition with no left partners, one empty
    check(left, partners, 3, (1, 0, len(partners) - 1), on="k", how=how)


# ----------------------------------------------------------------- index joins (inner)
@pytest.mark.parametrize("lc,rc", _pairs())
def test_small_left_inner_join_of_indexes(lc, rc):
    left = _left().set_axis(pd.Index([1, 3, 3, 5, 0, 8, 1, 2, 3], name="key"), axis=0)
    right = _right().set_axis(pd.Index(np.arange(NR) % 10, name="key"), axis=0)
    check(left, right, lc, rc, left_index=True, right_index=True, how="inner")
    check(left, right, lc, rc, left_on="a", right_index=True, how="inner")
    check(left, right.reset_index(), lc, rc, left_index=True, right_on="key", how="inner")


# ----------------------------------------------------------------- order already right
def test_small_left_partitions_already_in_order_skip_the_shuffle():
    """A sorted left with unique keys and a right sorted by key: the merged partitions follow one another."""
    left = pd.DataFrame({"k": np.arange(0, 40, 3), "x": np.arange(14)})
    right = pd.DataFrame({"k": np.repeat(np.arange(45), 2), "y": np.arange(90)})
    follows = []
    original = order_module.spans_follow

    def spy(infos):
        follows.append(original(infos))
        return follows[-1]

    order_module.spans_follow = spy
    try:
        check(left, right, 5, 13, on="k", how="inner")
        check(left, right, 5, 13, on="k", how="left")
        check(left[::-1].reset_index(drop=True), right, 5, 13, on="k", how="inner")
    finally:
        order_module.spans_follow = original
    assert follows == [True, True, False]


# ----------------------------------------------------------------- when it does not apply
def test_other_joins_do_not_broadcast_a_small_left_in_order():
    """A left join of indexes, keys needing a unique right, and a bool key meeting ints take other paths."""
    left, right = _left(), _right()
    indexed = right.set_axis(pd.Index(np.arange(NR) % 10, name="key"), axis=0)
    with option_context(_left_fits(left)), _strategies() as seen:
        assert_eq(md.merge(lazy(left, 3), lazy(indexed, 7), left_on="v", right_index=True, how="left"),
                  left.merge(indexed, left_on="v", right_index=True, how="left"), check_meta=False)
        unique = right.drop_duplicates("k")
        assert_eq(md.merge(lazy(left, 3), lazy(unique, 2), on="k", validate="m:1"),
                  left.merge(unique, on="k", validate="m:1"), check_meta=False)
        flags = pd.DataFrame({"k": [True, False, True], "x": [1, 2, 3]})
        ints = pd.DataFrame({"k": np.arange(40) % 3, "y": np.arange(40)})
        assert_eq(md.merge(lazy(flags, 2), lazy(ints, 7), on="k"), flags.merge(ints, on="k"), check_meta=False)
    assert ORDERED not in seen
