"""The fast paths of distinct rows, grouped shuffles and merges give pandas' results, and shared work runs once."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mars
import mars.dataframe as md
from mars.dataframe import uniques
from mars.dataframe.groupby import agg as group_agg
from mars.dataframe.groupby.keys import range_codes
from mars.dataframe.groupby.shuffle import _lex_ranks
from mars.dataframe.merge_semi import members, semi_filtered
from mars.dataframe.shuffle import narrow_codes
from mars.dataframe.uniques import (
    MergeDistinct,
    duplicated_keys,
    mostly_unique,
    packed_keys,
)
from tests.dataframe.df_testing import assert_eq


@pytest.mark.parametrize("dtypes", [("int64", "int64"), ("int8", "uint16"), ("bool", "int32", "int64")])
@pytest.mark.parametrize("keep", ["first", "last", False])
def test_packed_integer_keys_find_pandas_duplicates(dtypes, keep):
    rng = np.random.default_rng(len(dtypes))
    keys = pd.DataFrame({i: rng.integers(-100, 100, 300).astype(d) for i, d in enumerate(dtypes)})
    np.testing.assert_array_equal(duplicated_keys(keys, keep), keys.duplicated(keep=keep).to_numpy())


def test_keys_too_wide_to_pack_or_not_integers_take_pandas_path():
    wide = pd.DataFrame({0: np.array([0, 2**62, 0]), 1: np.array([-(2**62), 5, -(2**62)])})
    assert packed_keys(wide) is None
    np.testing.assert_array_equal(duplicated_keys(wide, "first"), [False, False, True])
    floats = pd.DataFrame({0: [1.0, np.nan, np.nan], 1: [1, 2, 2]})
    assert packed_keys(floats) is None
    np.testing.assert_array_equal(duplicated_keys(floats, "first"), [False, False, True])
    big = pd.DataFrame({0: np.array([2**63 + 1, 2**63 + 2, 2**63 + 1], dtype=np.uint64), 1: [1, 1, 1]})
    np.testing.assert_array_equal(duplicated_keys(big, "first"), [False, False, True])


def test_keys_with_a_column_of_strings_are_turned_down_before_any_column_is_read(monkeypatch):
    """The dtypes say a key of strings cannot be packed: none of its columns is made into an array for nothing."""
    keys = pd.DataFrame({0: pd.array(["a", "b", "a"], dtype="str"), 1: [1, 2, 1]})
    read = []
    real = pd.Series.to_numpy
    monkeypatch.setattr(pd.Series, "to_numpy", lambda self, *a, **k: read.append(self.name) or real(self, *a, **k))
    assert packed_keys(keys) is None and read == []
    np.testing.assert_array_equal(duplicated_keys(keys, "first"), [False, False, True])


def test_narrow_codes():
    assert narrow_codes(np.array([0, 254]), 254).dtype == np.uint8
    assert narrow_codes(np.array([0, 300]), 300).dtype == np.int16
    assert narrow_codes(np.array([0, 40_000]), 40_000).dtype == np.int64


@pytest.mark.parametrize("keep", ["first", "last", False])
def test_mostly_unique_partitions_skip_their_own_pass_and_keep_pandas_order(keep):
    n = 10 * uniques.PROBE_ROWS  # partitions large enough to be probed
    rng = np.random.default_rng(0)
    pdf = pd.DataFrame({"a": np.arange(n) // 2, "b": np.arange(n) % 3, "v": rng.integers(0, 9, n)})
    pdf = pdf.iloc[rng.permutation(n)].reset_index(drop=True)
    pdf.loc[n - 10:, ["a", "b"]] = pdf.loc[:9, ["a", "b"]].to_numpy()  # repeats across partitions
    assert mostly_unique(pdf[["a", "b"]].set_axis([0, 1], axis=1).iloc[: n // 2])
    df = md.DataFrame(pdf, chunk_size=n // 2 + 7)
    assert_eq(df.drop_duplicates(["a", "b"], keep=keep), pdf.drop_duplicates(["a", "b"], keep=keep))
    assert_eq(df.duplicated(["a", "b"], keep=keep), pdf.duplicated(["a", "b"], keep=keep))
    assert_eq(df.a.nunique(), pdf.a.nunique())


def test_lexicographic_ranks_match_the_sorted_ranks():
    rng = np.random.default_rng(1)
    for t in range(30):
        keys = pd.DataFrame({0: rng.integers(0, 5, 200), 1: rng.integers(0, 5, 200), 2: rng.integers(-2, 2, 200)})
        bounds = keys.sample(6, random_state=t).sort_values([0, 1, 2]).drop_duplicates().reset_index(drop=True)
        got = _lex_ranks([keys[i].to_numpy() for i in range(3)], [bounds[i].to_numpy() for i in range(3)])
        np.testing.assert_array_equal(got, range_codes(keys, bounds))


def test_a_sorted_groupby_on_two_integer_keys_by_range_shuffle(monkeypatch):
    monkeypatch.setattr(group_agg, "TREE_ROWS", 1)
    monkeypatch.setattr(group_agg, "TREE_RATIO", 0.0)  # the shuffle, whatever the number of groups
    rng = np.random.default_rng(2)
    pdf = pd.DataFrame({"a": rng.integers(0, 40, 400), "b": rng.integers(-3, 3, 400), "v": rng.uniform(size=400)})
    df = md.DataFrame(pdf, chunk_size=90)
    assert_eq(df.groupby(["a", "b"]).agg(s=("v", "sum")), pdf.groupby(["a", "b"]).agg(s=("v", "sum")), rtol=1e-12)
    assert_eq(df.groupby(["a", "b"]).v.count(), pdf.groupby(["a", "b"]).v.count())


def test_a_groupby_after_drop_duplicates_merges_the_partials_once(monkeypatch):
    calls = []
    execute = MergeDistinct.execute
    monkeypatch.setattr(MergeDistinct, "execute", lambda self, *p: calls.append(1) or execute(self, *p))
    monkeypatch.setattr(uniques, "TREE_MAX_ROWS", 10)  # a hash shuffle of the partials: one merge per partition
    rng = np.random.default_rng(4)
    pdf = pd.DataFrame({"k": rng.integers(0, 30, 200), "s": rng.integers(0, 4, 200)})
    df = md.DataFrame(pdf, chunk_size=50)
    expr = df.drop_duplicates().groupby("k").agg(n=("s", "count"))
    with mars.option_context({"optimize": False}):  # the optimizer would fold the distinct rows into the groupby
        assert_eq(expr, pdf.drop_duplicates().groupby("k").agg(n=("s", "count")))
    assert len(calls) == 4  # four partitions' mergers, each once (the groupby's probe used to run them again)


def test_merge_of_two_filtered_sides_equals_pandas():
    rng = np.random.default_rng(5)
    left = pd.DataFrame({"k": rng.integers(0, 20, 120), "x": rng.uniform(size=120)})
    right = pd.DataFrame({"k": rng.integers(0, 20, 60), "y": rng.integers(0, 9, 60)})
    lm, rm = md.DataFrame(left, chunk_size=25), md.DataFrame(right, chunk_size=13)
    got = lm[lm.x > 0.3].merge(rm[rm.y < 6], on="k")
    assert_eq(got, left[left.x > 0.3].merge(right[right.y < 6], on="k"))


@pytest.mark.parametrize("how_sizes", [(400, 9), (9, 400), (60, 50)])
@pytest.mark.parametrize("sort", [False, True])
def test_inner_merges_that_cut_the_larger_side_first_equal_pandas(how_sizes, sort):
    nl, nr = how_sizes
    rng = np.random.default_rng(nl)
    left = pd.DataFrame({"k": rng.integers(0, 30, nl), "x": rng.uniform(size=nl)})
    right = pd.DataFrame({"rk": rng.integers(0, 30, nr).astype("uint32"), "y": rng.integers(0, 9, nr)})
    for cs in (nl, max(1, nl // 3)):
        got = md.DataFrame(left, chunk_size=cs).merge(md.DataFrame(right, chunk_size=max(1, nr // 2)),
                                                      left_on="k", right_on="rk", sort=sort)
        assert_eq(got, left.merge(right, left_on="k", right_on="rk", sort=sort))
    assert semi_filtered(left, right, {"how": "left", "left_on": "k", "right_on": "rk"})[0] is left


def _dense_frame(n: int, spread: int, key_dtype: str = "int64") -> pd.DataFrame:
    rng = np.random.default_rng(spread)
    x = rng.uniform(size=n)
    x[rng.integers(0, n, n // 5)] = np.nan
    return pd.DataFrame({"k": (rng.integers(0, spread, n) + 1000).astype(key_dtype), "x": x,
                         "i": rng.integers(-5, 5, n).astype("int32"), "b": rng.integers(0, 2, n).astype(bool)})


@pytest.mark.parametrize("spread,key_dtype", [(50, "int64"), (300, "int32"), (10**9, "int64"), (40, "uint16")])
def test_dense_integer_keys_by_bincount_equal_pandas(monkeypatch, spread, key_dtype):
    monkeypatch.setattr(group_agg, "TREE_ROWS", 1)
    monkeypatch.setattr(group_agg, "TREE_RATIO", 0.0)  # whole groups in reducers
    pdf = _dense_frame(500, spread, key_dtype)
    aggs = {"s": ("x", "sum"), "n": ("x", "count"), "m": ("x", "mean"), "si": ("i", "sum"), "mi": ("i", "mean"),
            "sb": ("b", "sum"), "nb": ("b", "count")}
    for cs in (500, 70):
        got = md.DataFrame(pdf, chunk_size=cs).groupby("k").agg(**aggs)
        assert_eq(got, pdf.groupby("k").agg(**aggs))
    got = md.DataFrame(pdf, chunk_size=70).groupby(["k"]).agg(s=("x", "sum"))
    assert_eq(got, pdf.groupby(["k"]).agg(s=("x", "sum")))
    got = md.DataFrame(pdf, chunk_size=70).groupby("k", as_index=False).agg(s=("x", "sum"))
    assert_eq(got, pdf.groupby("k", as_index=False).agg(s=("x", "sum")))


@pytest.mark.parametrize("spread,key_dtype", [(50, "int64"), (10**9, "int64"), (40, "uint16"), (300, "int32")])
def test_keys_in_order_are_summed_over_their_runs_and_equal_pandas(monkeypatch, spread, key_dtype):
    """A partition whose keys never decrease (a table stored in key order) takes one reduceat per column, sparse
    keys too; NaN left out, all-NaN groups, integer and boolean sums as pandas gives them."""
    from mars.dataframe.groupby import dense
    from mars.dataframe.groupby.keys import GroupSpec

    runs = []
    real = dense._ByRun
    monkeypatch.setattr(dense, "_ByRun", lambda *a: runs.append(1) or real(*a))
    pdf = _dense_frame(500, spread, key_dtype).sort_values("k", kind="stable", ignore_index=True)
    pdf.loc[pdf.k == pdf.k.iloc[0], "x"] = np.nan  # a group of NaN only
    aggs = {"s": ("x", "sum"), "n": ("x", "count"), "m": ("x", "mean"), "si": ("i", "sum"), "mi": ("i", "mean"),
            "sb": ("b", "sum"), "nb": ("b", "count")}
    meta = pdf.iloc[:0].groupby("k").agg(**aggs)
    for part in (pdf, pdf.iloc[:1], pdf.iloc[37:301]):
        got = dense.dense_agg(GroupSpec(by="k"), ("agg", (None,), aggs), part, meta)
        pd.testing.assert_frame_equal(got, part.groupby("k").agg(**aggs))
    assert len(runs) == 3
    runs.clear()
    shuffled = pdf.sample(frac=1, random_state=1)  # not in order: bincount over the range, or pandas
    got = dense.dense_agg(GroupSpec(by="k"), ("agg", (None,), aggs), shuffled, meta)
    assert runs == []
    if got is not None:
        pd.testing.assert_frame_equal(got, shuffled.groupby("k").agg(**aggs))
    for cs in (500, 70, (1, 200, 0, 299)):  # keys in order across partitions: each grouped alone, in order
        assert_eq(md.DataFrame(pdf, chunk_size=cs).groupby("k").agg(**aggs), pdf.groupby("k").agg(**aggs))


def test_dense_path_leaves_large_integer_sums_to_pandas():
    from mars.dataframe.groupby.dense import dense_agg
    from mars.dataframe.groupby.keys import GroupSpec

    part = pd.DataFrame({"k": [1, 1, 2], "v": np.array([2**60, 1, 3], dtype=np.int64)})
    meta = part.iloc[:0].groupby("k").agg(s=("v", "sum"))
    assert dense_agg(GroupSpec(by="k"), ("agg", (None,), {"s": ("v", "sum")}), part, meta) is None
    assert dense_agg(GroupSpec(by="k"), ("agg", (None,), {"s": ("v", "max")}), part, meta) is None


@pytest.mark.parametrize("vdtype,kdtype", [("int64", "int64"), ("int8", "int32"), ("uint16", "int64"), ("uint64", "uint64")])
def test_members_by_a_table_of_flags_equal_isin(vdtype, kdtype):
    rng = np.random.default_rng(7)
    for size in (0, 1, 50):
        values = rng.integers(0 if vdtype.startswith("u") else -60, 60, 200).astype(vdtype)
        keys = rng.integers(0 if vdtype.startswith("u") else -30, 90, size).astype(kdtype)
        np.testing.assert_array_equal(members(values, keys), pd.Series(values).isin(keys).to_numpy())
    extremes = np.array([-(2**63), 2**63 - 1, 0, 5], dtype=np.int64)
    for keys in (np.array([0, 5]), np.array([5, 2**62 - 1]), np.array([-(2**62) - 1, 5]), np.array([0, 2**25])):
        np.testing.assert_array_equal(members(extremes, keys), pd.Series(extremes).isin(keys).to_numpy())
