"""Series methods, partition-wise and metadata frame methods, and reshaping, against pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, lazy, partitionings

import mars.dataframe as md

N = 14
PARTS = partitionings(N)


def frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    p = pd.DataFrame({"a": rng.normal(size=N), "b": rng.integers(0, 4, N), "s": list("abcabcabcabcab"),
                      "ab": np.arange(N, dtype=float)}, index=np.arange(N) * 2)
    p.loc[[4, 8], "a"] = np.nan
    return p


@pytest.mark.parametrize("cs", PARTS)
def test_series_methods(cs):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 5, N).astype(float)
    x[[0, 2, 7]] = np.nan
    ps = pd.Series(x, index=[f"r{i}" for i in range(N)], name="x")
    sorted_ = pd.Series(np.sort(rng.integers(0, 20, N)))
    strings = pd.Series(list("bcabcabcabcaba"))
    s, m, t = lazy(ps, cs), lazy(sorted_, cs), lazy(strings, cs)
    assert_eq(s.between(1, 3), ps.between(1, 3))
    assert_eq(s.between(1, 3, inclusive="neither"), ps.between(1, 3, inclusive="neither"))
    for obj, p in [(s, ps), (m, sorted_), (t, strings), (lazy(sorted_[::-1], cs), sorted_[::-1])]:
        assert bool(obj.is_monotonic_increasing) == p.is_monotonic_increasing
        assert bool(obj.is_monotonic_decreasing) == p.is_monotonic_decreasing
        assert bool(obj.is_unique) == p.is_unique
        assert bool(obj.hasnans) == p.hasnans
    for v in [0, 5, 19, 25]:
        for side in ["left", "right"]:
            assert m.searchsorted(v, side=side).fetch() == sorted_.searchsorted(v, side=side)
    np.testing.assert_array_equal(m.searchsorted([3, 9], side="right").fetch(), sorted_.searchsorted([3, 9], side="right"))
    for sort in [False, True]:
        for obj, p in [(t, strings), (s, ps)]:
            codes, uniques = obj.factorize(sort=sort)
            want_codes, want_uniques = p.factorize(sort=sort)
            np.testing.assert_array_equal(codes.fetch(), want_codes)
            assert_eq(uniques, want_uniques)
    assert_eq(s.repeat(2), ps.repeat(2))
    assert_eq(m.argsort(), sorted_.argsort(kind="stable"))
    assert_eq(s.argsort(), ps.argsort(kind="stable"))


@pytest.mark.parametrize("cs", PARTS)
def test_query_eval_select(cs):
    p = frame()
    m = lazy(p, cs)
    threshold = 2  # noqa: F841 - read by the expressions' @threshold
    assert_eq(m.query("b > @threshold and a < 1"), p.query("b > @threshold and a < 1"))
    assert_eq(m.eval("c = a + b"), p.eval("c = a + b"))
    assert_eq(m.eval("a * b"), p.eval("a * b"))
    assert_eq(md.eval("m.a + m.b * 2"), pd.eval("p.a + p.b * 2"))
    assert_eq(m.select_dtypes("number"), p.select_dtypes("number"))
    assert_eq(m.select_dtypes(exclude="number"), p.select_dtypes(exclude="number"))
    assert_eq(m.filter(like="a"), p.filter(like="a"))
    assert_eq(m.filter(items=["s", "a"]), p.filter(items=["s", "a"]))
    assert_eq(m.filter(regex="^a"), p.filter(regex="^a"))
    assert_eq(m.take([3, 0, 13]), p.take([3, 0, 13]))
    assert_eq(m.take([1, 0], axis=1), p.take([1, 0], axis=1))
    assert_eq(m.truncate(4, 20), p.truncate(4, 20))
    assert m.pipe(lambda x, k: k, 1) == 1


@pytest.mark.parametrize("cs", PARTS)
def test_labels_and_levels(cs):
    p = frame()
    pm = p.set_axis(pd.MultiIndex.from_arrays([np.arange(N) % 3, np.arange(N)], names=["x", "y"]))
    m, mm = lazy(p, cs), lazy(pm, cs)
    assert_eq(mm.filter(like="1", axis=0), pm.filter(like="1", axis=0))
    assert_eq(mm.droplevel("x"), pm.droplevel("x"))
    assert_eq(mm.swaplevel(), pm.swaplevel())
    assert_eq(mm.reorder_levels([1, 0]), pm.reorder_levels([1, 0]))
    labels = list("abcdefghijklmn")
    assert_eq(m.set_axis(labels), p.set_axis(labels))
    assert_eq(m.set_axis(list("wxyz"), axis=1), p.set_axis(list("wxyz"), axis=1))
    assert_eq(m.squeeze(), p.squeeze())
    assert_eq(m[["a"]].squeeze(), p[["a"]].squeeze())


@pytest.mark.parametrize("cs", PARTS)
def test_size_memory_equals_update(cs):
    p = frame()
    m = lazy(p, cs)
    assert m.size == p.size and m["a"].size == p["a"].size
    assert m.query("b > 1").size == p.query("b > 1").size
    assert_eq(m.memory_usage(index=False, deep=True), p.memory_usage(index=False, deep=True))
    assert m["a"].memory_usage(index=False).fetch() == p["a"].memory_usage(index=False)
    assert m.equals(md.DataFrame(p, chunk_size=3))
    assert not m.equals(md.DataFrame(p.iloc[::-1], chunk_size=3))
    assert not m["a"].equals(m["b"]) and not m.equals(m[["a"]])
    other = p["a"].iloc[::2] * 10
    assert_eq(m["a"].combine_first(md.Series(other, chunk_size=3)), p["a"].combine_first(other))
    updated, want = lazy(p, cs), p.copy()
    new = pd.DataFrame({"a": [100.0, np.nan]}, index=[2, 6])
    assert updated.update(md.DataFrame(new)) is None
    want.update(new)
    assert_eq(updated, want)
    popped, want = lazy(p, cs), p.copy()
    assert_eq(popped.pop("b"), want.pop("b"))
    assert_eq(popped, want)
    assert m.get("zz", 5) == 5
    assert_eq(m.get(["a", "b"]), p.get(["a", "b"]))


def test_range_index_memory_usage():
    p = pd.DataFrame({"a": np.arange(10)})
    assert_eq(md.DataFrame(p, chunk_size=3).memory_usage(), p.memory_usage())


@pytest.mark.parametrize("cs", PARTS)
def test_reshaping(cs):
    p = pd.DataFrame({"k": list("aabbccddeeffgg"), "c": list("xyxyxyxyxyxyxz"), "v": np.arange(N),
                      "l": [[1, 2], [], [3], 4, [5, 6, 7], None, [1], [2], [3], [4], [5], [6], [7], [8]]},
                     index=np.arange(N)[::-1])
    m = lazy(p, cs)
    assert_eq(m.explode("l"), p.explode("l"))
    assert_eq(m["l"].explode(ignore_index=True), p["l"].explode(ignore_index=True))
    assert_eq(m[["v", "k"]].stack(), p[["v", "k"]].stack())
    # the new columns are the data's values: known once run
    assert_eq(md.pivot(m, index="k", columns="c", values="v"), pd.pivot(p, index="k", columns="c", values="v"),
              check_meta=False)
    assert_eq(m.pivot(index="c", columns="k", values="v"), p.pivot(index="c", columns="k", values="v"),
              check_meta=False)
    keyed = p.set_index(["k", "c"])["v"]
    assert_eq(lazy(keyed, cs).unstack(), keyed.unstack(), check_meta=False)
    assert_eq(lazy(keyed, cs).unstack(0, fill_value=0), keyed.unstack(0, fill_value=0), check_meta=False)


def test_unstack_without_holes_keeps_ints_and_duplicates_raise():
    full = pd.Series(np.arange(6), index=pd.MultiIndex.from_product([[2, 1, 3], ["u", "w"]]))
    assert_eq(md.Series(full, chunk_size=2).unstack(), full.unstack(), check_meta=False)
    dup = pd.Series([1, 2], index=pd.MultiIndex.from_tuples([("a", "x"), ("a", "x")]))
    with pytest.raises(ValueError, match="duplicate"):
        md.Series(dup, chunk_size=1).unstack().execute()
    assert callable(md.pivot)
