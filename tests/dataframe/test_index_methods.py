"""``Index`` methods and set operations against pandas across partitionings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, partitionings, same_error

import mars.dataframe as md

LABELS = pd.Index([5, 3, 9, 3, 1, 7, 2, 8], name="k")
FLOATS = pd.Index([2.5, np.nan, 1.0, 4.0, np.nan, 0.5], name="f")
WORDS = pd.Index(["d", "b", "a", "c", "e"], name="w")
PARTS = partitionings(len(LABELS))


def ran(result):
    return result.execute()


@pytest.mark.parametrize("cs", PARTS)
def test_partitionwise(cs):
    idx = md.Index(LABELS, chunk_size=cs)
    assert_eq(idx.copy(name="z"), LABELS.copy(name="z"))
    assert_eq(idx.set_names("q"), LABELS.set_names("q"))
    assert_eq(idx.to_series(), LABELS.to_series())
    assert_eq(idx.to_frame(index=False), LABELS.to_frame(index=False))
    assert_eq(idx.to_frame(name="c"), LABELS.to_frame(name="c"))
    assert_eq(idx.T, LABELS.T)
    assert_eq(ran(idx.map(lambda x: x * 2)), LABELS.map(lambda x: x * 2))
    assert_eq(ran(idx.map({5: "five", 3: "three"})), LABELS.map({5: "five", 3: "three"}))
    assert_eq(idx.repeat(2), LABELS.repeat(2))
    assert_eq(idx.drop([3, 7]), LABELS.drop([3, 7]))
    assert_eq(idx.drop([3, 70], errors="ignore"), LABELS.drop([3, 70], errors="ignore"))
    assert_eq(ran(idx.replace(3, 30)), LABELS.replace(3, 30))
    assert_eq(idx.diff(), LABELS.diff())
    assert_eq(idx.diff(2), LABELS.diff(2))
    assert_eq(idx.take([7, 0, 3]), LABELS.take([7, 0, 3]))
    assert idx.nlevels == 1 and idx.size == LABELS.size


@pytest.mark.parametrize("cs", partitionings(len(FLOATS)))
def test_missing_values(cs):
    idx = md.Index(FLOATS, chunk_size=cs)
    assert_eq(idx.fillna(0.0), FLOATS.fillna(0.0))
    assert_eq(idx.dropna(), FLOATS.dropna())
    assert_eq(idx.round(), FLOATS.round())
    for name in ("isna", "isnull", "notna", "notnull"):
        np.testing.assert_array_equal(getattr(idx, name)().fetch(), getattr(FLOATS, name)())
    mask = np.array([True, False, True, False, True, False])
    assert_eq(ran(idx.putmask(mask, -1.0)), FLOATS.putmask(mask, -1.0))
    assert_eq(ran(idx.where(mask, 9.0)), FLOATS.where(mask, 9.0))
    assert bool(md.Index(FLOATS, chunk_size=cs).has_duplicates) == FLOATS.has_duplicates


@pytest.mark.parametrize("cs", PARTS)
def test_values_methods(cs):
    idx = md.Index(LABELS, chunk_size=cs)
    assert int(idx.argmax()) == LABELS.argmax() and int(idx.argmin()) == LABELS.argmin()
    np.testing.assert_array_equal(idx.argsort().fetch(), LABELS.argsort(kind="stable"))
    assert_eq(idx.sort_values(), LABELS.sort_values())
    assert_eq(idx.sort_values(ascending=False), LABELS.sort_values(ascending=False))
    result, indexer = idx.sort_values(return_indexer=True)
    expected, expected_indexer = LABELS.sort_values(return_indexer=True)
    assert_eq(result, expected)
    np.testing.assert_array_equal(indexer.fetch(), expected_indexer)
    codes, uniques = idx.factorize()
    want_codes, want_uniques = LABELS.factorize()
    np.testing.assert_array_equal(codes.fetch(), want_codes)
    assert_eq(uniques, want_uniques)
    ordered = md.Index(LABELS.sort_values(), chunk_size=cs)
    assert int(ordered.searchsorted(4)) == LABELS.sort_values().searchsorted(4)
    assert bool(idx.has_duplicates) and not bool(md.Index(WORDS).has_duplicates)


@pytest.mark.parametrize("cs", PARTS)
def test_positions(cs):
    idx = md.Index(LABELS, chunk_size=cs)
    assert_eq(idx.delete(0), LABELS.delete(0))
    assert_eq(idx.delete([1, -1, 4]), LABELS.delete([1, -1, 4]))
    for loc in (0, 3, 8, -1):
        assert_eq(idx.insert(loc, 100), LABELS.insert(loc, 100))
    assert_eq(idx.insert(2, "x"), LABELS.insert(2, "x"))
    same_error(lambda: idx.delete(8), lambda: LABELS.delete(8), IndexError)


@pytest.mark.parametrize("cs", partitionings(len(WORDS)))
def test_lookups(cs):
    idx = md.Index(WORDS, chunk_size=cs)
    target = ["a", "zz", "e", "d"]
    np.testing.assert_array_equal(idx.get_indexer(target).fetch(), WORDS.get_indexer(target))
    np.testing.assert_array_equal(idx.get_indexer_for(target), WORDS.get_indexer_for(target))
    for key in ("d", "a", "e"):
        assert idx.get_loc(key) == WORDS.get_loc(key)
    with pytest.raises(KeyError):
        idx.get_loc("zz")


@pytest.mark.parametrize("cs", PARTS)
def test_lookups_repeated_labels(cs):
    dup = md.Index(LABELS, chunk_size=cs)
    for got, want in zip(dup.get_indexer_non_unique([3, 4, 5]), LABELS.get_indexer_non_unique([3, 4, 5])):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(dup.get_loc(3), LABELS.get_loc(3))
    assert md.Index(LABELS.sort_values(), chunk_size=cs).get_loc(3) == LABELS.sort_values().get_loc(3)
    with pytest.raises(pd.errors.InvalidIndexError, match="uniquely valued"):
        dup.get_indexer([3]).fetch()


def test_equals_identical_item():
    idx = md.Index(LABELS, chunk_size=3)
    assert idx.equals(md.Index(LABELS.astype(float), chunk_size=5)) == LABELS.equals(LABELS.astype(float))
    assert idx.equals(LABELS) and not idx.equals(LABELS[::-1]) and not idx.equals(list(LABELS))
    assert not idx.equals(md.Index(LABELS[:-1]))
    assert idx.identical(md.Index(LABELS)) and not idx.identical(md.Index(LABELS.rename("other")))
    assert md.Index([7]).item() == 7
    with pytest.raises(KeyError, match=r"\[70\] not found in axis"):
        idx.drop([3, 70]).execute()


SETS = [
    (pd.Index([3, 1, 2, 2, 5], name="x"), pd.Index([2, 7, 1, 1], name="y")),
    (pd.Index([3, 1, 2], name="x"), pd.Index([3, 1, 2], name="x")),
    (pd.Index([3, 1, 2]), pd.Index([], dtype="int64")),
    (pd.Index([], dtype="int64"), pd.Index([4, 1])),
    (pd.Index(["b", "a", "c"]), pd.Index(["c", "d"])),
    (pd.Index(["b", "a"], dtype=object), pd.Index([1, 2])),
    (pd.Index([1.5, np.nan, 2.0]), pd.Index([2, 3])),
]


@pytest.mark.parametrize("how", ["union", "intersection", "difference", "symmetric_difference"])
@pytest.mark.parametrize("left,right", SETS)
def test_set_operations(how, left, right):
    for sort in (None, False, True):
        expected = getattr(left, how)(right, sort=sort)
        for cs in {max(1, len(left)), 1, (0, len(left))}:
            result = getattr(md.Index(left, chunk_size=cs), how)(md.Index(right, chunk_size=2), sort=sort)
            assert_eq(result, expected)
    assert_eq(getattr(md.Index(left, chunk_size=2), how)(list(right)), getattr(left, how)(list(right)))


def test_append():
    a, b = pd.Index([1, 2, 3], name="n"), pd.Index([2.5], name="n")
    for cs in (3, 1, (0, 3)):
        assert_eq(md.Index(a, chunk_size=cs).append(md.Index(b)), a.append(b))
        assert_eq(md.Index(a, chunk_size=cs).append([b, pd.Index(["x"])]), a.append([b, pd.Index(["x"])]))


@pytest.mark.parametrize("cs", [5, 2, (0, 3, 2)])
def test_shift_infer_objects_and_levels(cs):
    d = pd.date_range("2020", periods=5, freq="D", name="d")
    assert_eq(md.Index(d, chunk_size=cs).shift(2, freq="h"), d.shift(2, freq="h"))
    o = pd.Index([1, 2, 3, 4, 5], dtype=object)
    assert_eq(ran(md.Index(o, chunk_size=cs).infer_objects()), o.infer_objects())
    mi = pd.MultiIndex.from_tuples([(1, "a"), (2, "b"), (3, "c"), (4, "d"), (5, "e")], names=["x", "y"])
    m = md.Index(mi, chunk_size=cs)
    assert_eq(m.droplevel("x"), mi.droplevel("x"))
    assert_eq(m.get_level_values(1), mi.get_level_values(1))
    assert_eq(m.to_flat_index(), mi.to_flat_index())
    assert m.nlevels == 2
