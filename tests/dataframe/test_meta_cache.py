"""Metadata worked out once per exact description of the metas (mars.dataframe.meta: signature, MetaCache, fake)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mars.dataframe import meta as meta_module
from mars.dataframe.meta import MetaCache, _fake, fake, signature


def empty(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.iloc[:0]


BASE = empty(pd.DataFrame({"a": [1], "b": ["x"], "c": [1.5]}))


@pytest.mark.parametrize("other", [
    BASE.astype({"a": "float64"}),                                  # a dtype
    BASE.rename(columns={"a": "z"}),                                # a label
    BASE[["b", "a", "c"]],                                          # the order of the columns
    BASE.set_axis(pd.Index(["a", "b", "c"], dtype=object), axis=1),  # the columns' own dtype
    BASE.set_axis(BASE.index.rename("i"), axis=0),                  # the index's name
    BASE.set_axis(pd.Index([], dtype="float64"), axis=0),           # the index's dtype
])
def test_signature_tells_apart_what_pandas_would(other):
    assert signature(BASE) == signature(BASE.copy())
    assert signature(other) != signature(BASE)


def test_equal_labels_of_other_types_are_other_signatures():
    ints = empty(pd.DataFrame({1: [1.0]}))
    floats = empty(pd.DataFrame({1.0: [1.0]}))
    assert signature(ints) != signature(floats)
    assert signature(pd.Series([], dtype="int64", name=True)) != signature(pd.Series([], dtype="int64", name=1))


def test_what_cannot_be_told_exactly_has_no_signature():
    cats = pd.Series(pd.Categorical([], categories=["b", "a"]))
    assert signature(cats) is None  # unordered categoricals compare equal whatever the categories' order
    with_attrs = BASE.copy()
    with_attrs.attrs["unit"] = "m"
    assert signature(with_attrs) is None
    assert signature(3) is None


@pytest.mark.parametrize("meta", [
    BASE,
    empty(pd.DataFrame({"t": pd.to_datetime(["2000-01-01"]), "f": [True], "u": np.array([1], dtype="uint8")})),
    pd.Series([], dtype="float32", name="s"),
    pd.Index([], dtype="str", name="k"),
    empty(pd.DataFrame({"x": [1]}, index=pd.MultiIndex.from_tuples([(1, "a")], names=["i", "j"]))),
    pd.Series(pd.Categorical([], categories=["q", "p"]), name="c"),
])
def test_fake_is_the_same_sample_cached_or_not(meta):
    for _ in range(2):
        got, expected = fake(meta), _fake(meta, 2)
        if isinstance(meta, pd.Index):
            pd.testing.assert_index_equal(got, expected, exact=True)
        elif isinstance(meta, pd.Series):
            pd.testing.assert_series_equal(got, expected, check_index_type=True)
        else:
            pd.testing.assert_frame_equal(got, expected, check_index_type=True, check_column_type=True)


def test_fake_is_made_once_per_signature_and_handed_out_as_copies(monkeypatch):
    made = []
    real = meta_module._fake
    monkeypatch.setattr(meta_module, "_fake", lambda m, n: made.append(n) or real(m, n))
    monkeypatch.setattr(meta_module, "_FAKES", MetaCache())
    first = fake(BASE)
    first.iloc[0, 0] = 99  # a caller changing its sample changes nobody else's
    second = fake(BASE.copy())
    assert made == [2]
    assert second.iloc[0, 0] != 99
    fake(BASE, 1)
    assert made == [2, 1]


def test_the_cache_forgets_the_least_recently_used():
    cache = MetaCache(size=2)
    made = []

    def make(v):
        return lambda: made.append(v) or pd.Series([v])

    cache.get("a", make(1))
    cache.get("b", make(2))
    cache.get("a", make(1))  # "a" used again: "b" is now the oldest
    cache.get("c", make(3))
    cache.get("a", make(1))
    cache.get("b", make(2))
    assert made == [1, 2, 3, 2]


def test_a_failing_computation_is_not_cached():
    cache = MetaCache()
    with pytest.raises(KeyError):
        cache.get("k", lambda: pd.DataFrame()["missing"])
    assert cache.get("k", lambda: pd.Series([1.0])).tolist() == [1.0]


def test_a_groupby_aggregation_infers_its_metas_once_per_exact_description(monkeypatch):
    import mars.dataframe as md
    from mars.dataframe.groupby.groupby import GroupBy

    calls = []
    real = GroupBy._agg_metas

    def counted(self, *args):
        calls.append(args[0])
        return real(self, *args)

    monkeypatch.setattr(GroupBy, "_agg_metas", counted)
    monkeypatch.setattr("mars.dataframe.groupby.groupby.METAS", MetaCache())  # nothing from other tests
    pdf = pd.DataFrame({"k": [1, 2, 1, 3], "v": [1.0, 2.0, 3.0, 4.0], "w": [4, 3, 2, 1]})
    for chunk_size in (1, 3):
        got = md.DataFrame(pdf, chunk_size=chunk_size).groupby("k").agg({"v": "sum", "w": "max"}).execute().fetch()
        pd.testing.assert_frame_equal(got, pdf.groupby("k").agg({"v": "sum", "w": "max"}))
    assert len(calls) == 1  # the second build found the first one's metas
    md.DataFrame(pdf.astype({"w": "float64"})).groupby("k").agg({"v": "sum", "w": "max"})
    assert len(calls) == 2  # another dtype: worked out again
    for _ in range(2):  # a user's function is never cached
        md.DataFrame(pdf).groupby("k").agg(lambda s: s.max())
    assert len(calls) == 4


def test_a_merge_infers_its_meta_once_per_exact_description(monkeypatch):
    import mars.dataframe as md

    computed = []

    class Counting(MetaCache):
        def get(self, key, compute):
            return super().get(key, lambda: computed.append(key) or compute())

    import sys

    monkeypatch.setattr(sys.modules["mars.dataframe.merge"], "METAS", Counting())  # the module: md.merge is the function
    left = pd.DataFrame({"k": [1, 2, 2, 3], "a": [1.0, 2.0, 3.0, 4.0]})
    right = pd.DataFrame({"k": [2, 3, 4], "b": ["x", "y", "z"]})
    for chunk_size in (1, 3):
        got = md.DataFrame(left, chunk_size=chunk_size).merge(md.DataFrame(right, chunk_size=2), on="k").execute()
        pd.testing.assert_frame_equal(got.fetch().reset_index(drop=True), left.merge(right, on="k"))
    assert len(computed) == 1
    md.DataFrame(left).merge(md.DataFrame(right), on="k", how="left")  # other keywords: worked out again
    md.DataFrame(left.astype({"a": "float32"})).merge(md.DataFrame(right), on="k")  # another dtype: again
    assert len(computed) == 3
    with pytest.raises(pd.errors.MergeError):  # pandas' error, and nothing kept for it
        md.DataFrame(left).merge(md.DataFrame(right), on="k", left_on="k")
