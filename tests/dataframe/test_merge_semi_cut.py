"""A broadcast inner join's right side cut to the left's keys, where each partition lies, before it is gathered."""

from __future__ import annotations

import math
import sys

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, lazy, partitionings

import mars.dataframe as md
from mars.core.options import option_context
from mars.dataframe import merge_strategy
from mars.dataframe.merge_order import WithPositions
from mars.dataframe.merge_semi import SemiCut, cut_on
from mars.dataframe.merge_table import BuildKeyTable
from mars.dataframe.rows import ConcatChunks, RenumberRows

merge_module = sys.modules["mars.dataframe.merge"]
NL, NR = 5, 60


def _frames(seed: int = 0, dtype: str = "int64") -> tuple[pd.DataFrame, pd.DataFrame]:
    """A small left and a big right, keys duplicated on both sides, some on one side only; strings beside."""
    rng = np.random.default_rng(seed)
    left = pd.DataFrame({"k": rng.integers(0, 12, NL).astype(dtype), "x": rng.random(NL),
                         "s": pd.Series(rng.choice(["a", "b", None], NL), dtype="str")},
                        index=pd.Index(rng.permutation(NL) + 100, name="lidx"))
    right = pd.DataFrame({"rk": rng.integers(0, 30, NR).astype(dtype), "y": np.arange(NR),
                          "t": pd.to_datetime(rng.integers(0, 10**6, NR), unit="s")})
    return left, right


@pytest.fixture
def gathered(monkeypatch):
    """Rows each gathering of a broadcast side (a concatenation or a key table) was given, and the cuts run."""
    seen: dict[str, list] = {"rows": [], "cuts": []}
    concat, build, cut = ConcatChunks.execute, BuildKeyTable.execute, SemiCut.execute

    def concat_spy(self, *parts):
        seen["rows"].append(sum(len(p) for p in parts))
        return concat(self, *parts)

    def build_spy(self, *parts):
        seen["rows"].append(sum(len(p) for p in parts))
        return build(self, *parts)

    def cut_spy(self, part, keys):
        seen["cuts"].append(len(part))
        return cut(self, part, keys)

    monkeypatch.setattr(ConcatChunks, "execute", concat_spy)
    monkeypatch.setattr(BuildKeyTable, "execute", build_spy)
    monkeypatch.setattr(SemiCut, "execute", cut_spy)
    return seen


def _pairs() -> list:
    left, right = partitionings(NL), partitionings(NR)
    return [(lc, rc) for lc in left for rc in right]


@pytest.mark.parametrize("lc,rc", _pairs())
def test_inner_merges_equal_pandas_over_chunkings(lc, rc):
    """Through the key table (one key column named alike) and pandas' merge of the gathered side (two names)."""
    left, right = _frames()
    same = right.rename(columns={"rk": "k"})
    for kw, other in [({"left_on": "k", "right_on": "rk"}, right), ({"on": "k"}, same),
                      ({"on": "k"}, same.drop(columns="t")), ({"left_on": "k", "right_on": "rk", "indicator": True},
                                                              right)]:
        assert_eq(md.merge(lazy(left, lc), lazy(other, rc), **kw), pd.merge(left, other, **kw))


def test_the_right_side_is_cut_before_it_is_gathered(gathered, strategies):
    """Only the right rows whose key the left has are gathered (a filtered table joined to a big one)."""
    left, right = _frames(1)
    matching = int(right.rk.isin(left.k).sum())
    assert 0 < matching < NR // 2
    for kw, other in [({"left_on": "k", "right_on": "rk"}, right), ({"on": "k"}, right.rename(columns={"rk": "k"}))]:
        gathered["rows"].clear()
        gathered["cuts"].clear()
        assert_eq(md.merge(lazy(left, 3), lazy(other, (7, 0, 30, 23)), **kw), pd.merge(left, other, **kw))
        assert strategies[-1] == "broadcast_right"
        assert gathered["rows"] == [matching]  # the whole right side was gathered before
        assert sorted(gathered["cuts"]) == [0, 7, 23, 30]  # every partition cut where it lies


@pytest.mark.parametrize("dtype", ["int32", "uint16", "uint64"])
def test_other_integer_keys_and_no_partner_at_all(dtype):
    left, right = _frames(2, dtype)
    for lc, rc in ((2, 13), ((0, 5), (20, 0, 40))):
        assert_eq(md.merge(lazy(left, lc), lazy(right, rc), left_on="k", right_on="rk"),
                  pd.merge(left, right, left_on="k", right_on="rk"))
        apart = left.assign(k=left.k + 100)  # no left key meets a right one: the cut side is empty
        assert_eq(md.merge(lazy(apart, lc), lazy(right, rc), left_on="k", right_on="rk"),
                  pd.merge(apart, right, left_on="k", right_on="rk"))
        empty = left.iloc[:0]
        assert_eq(md.merge(lazy(empty, 1), lazy(right, rc), left_on="k", right_on="rk"),
                  pd.merge(empty, right, left_on="k", right_on="rk"))


def test_validation_sees_the_whole_right_side():
    """Duplicate right keys the left lacks still fail ``many_to_one``, as in pandas: no cut hides them."""
    left, right = _frames(3)
    right = right.drop_duplicates("rk")
    right = pd.concat([right, right[~right.rk.isin(left.k)].iloc[:1]], ignore_index=True)
    with pytest.raises(pd.errors.MergeError, match="many-to-one"):
        pd.merge(left, right, left_on="k", right_on="rk", validate="m:1")
    with pytest.raises(pd.errors.MergeError, match="many-to-one"):
        md.merge(lazy(left, 2), lazy(right, 9), left_on="k", right_on="rk", validate="m:1").execute()


def test_when_a_cut_applies():
    left, right = _frames()
    keys = merge_module.join_keys(left, right, {"how": "inner", "on": None, "left_on": ["k"], "right_on": ["rk"],
                                                "left_index": False, "right_index": False})
    inner = {"how": "inner", "validate": None}
    assert cut_on(inner, keys, left, right, [3, 2], [30, 30]) == ("k", "rk")
    assert cut_on(inner, keys, left, right, [3, 2], [60]) is None  # one partition: nothing gathered
    assert cut_on(inner, keys, left, right, [30, 20], [30, 30]) is None  # not many more rows on the right
    assert cut_on({"how": "left", "validate": None}, keys, left, right, [3, 2], [30, 30]) is None
    assert cut_on({"how": "inner", "validate": "m:1"}, keys, left, right, [3, 2], [30, 30]) is None
    floats = merge_module.join_keys(left.assign(k=left.k * 1.0), right, {
        "how": "inner", "on": None, "left_on": ["k"], "right_on": ["rk"], "left_index": False, "right_index": False})
    assert cut_on(inner, floats, left.assign(k=left.k * 1.0), right, [3, 2], [30, 30]) is None


# ----------------------------------------------------------------- copies the gathering saves
@pytest.fixture
def renumbered(monkeypatch):
    """The partitions a RenumberRows renumbered (their lengths)."""
    seen: list[int] = []
    original = RenumberRows.execute
    monkeypatch.setattr(RenumberRows, "execute", lambda self, df, *counts: seen.append(len(df)) or original(
        self, df, *counts))
    return seen


def test_the_first_merged_partition_keeps_the_numbering_pandas_gave_it(renumbered, strategies):
    left, right = _frames(4)
    kw = {"left_on": "k", "right_on": "rk"}
    expected = pd.merge(left, right, **kw)
    assert_eq(md.merge(lazy(left, NL), lazy(right, NR), **kw), expected)
    assert strategies == ["single"] and renumbered == []  # one pandas merge: numbered 0..n-1 already
    assert_eq(md.merge(lazy(left, (2, 0, 3)), lazy(right, NR), **kw), expected)
    assert strategies[-1] == "broadcast_right"
    assert len(renumbered) == 2  # the second and third partitions, numbered on from the rows before


@pytest.mark.parametrize("lc", [(2, 0, 3), 1, (0, 5), NL])
def test_a_small_left_is_numbered_as_it_is_gathered(monkeypatch, strategies, lc):
    """The left of a join in its order, in several partitions, is given its positions in the concatenation."""
    placed = []
    original = WithPositions.execute
    monkeypatch.setattr(WithPositions, "execute", lambda self, part: placed.append(len(part)) or original(self, part))
    left, right = _frames(5)
    left = left.assign(k=left.k * 1.0)  # no cut: pandas' merge of the left with each right partition
    for how in ("inner", "left"):
        with option_context({"chunk_store_limit": max(2, math.ceil(merge_strategy._nbytes(left, NL)))}):
            assert_eq(md.merge(lazy(left, lc), lazy(right, (20, 0, 40)), left_on="k", right_on="rk", how=how),
                      pd.merge(left, right, left_on="k", right_on="rk", how=how))
        assert strategies[-1] == "broadcast_left_ordered"
    assert placed == ([NL, NL] if lc == NL else [])
