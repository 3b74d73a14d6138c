"""``Index.join`` of a MultiIndex's level with a flat Index equals pandas' across partitionings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

import mars.dataframe as md
from tests.dataframe.df_testing import lazy, partitionings

HOWS = ("left", "right", "inner", "outer")

MULTI = pd.MultiIndex.from_arrays([[3, 1, 2, 2, 5, 1, 3], ["a", "b", "a", "c", "b", "a", "c"]], names=["x", "y"])

FLATS = {
    "unsorted, some absent": pd.Index([2, 1, 4], name="x"),
    "sorted superset": pd.Index([1, 2, 3, 5, 7], name="x"),
    "equal labels": pd.Index([1, 2, 3, 5], name="x"),
    "sorted subset": pd.Index([1, 2, 3]),
    "floats": pd.Index([2.0, 1.0, 4.5], name="x"),
    "empty": pd.Index([], dtype="int64", name="x"),
}


def _check(got: tuple, expected: tuple) -> None:
    pdt.assert_index_equal(got[0].to_pandas(), expected[0], exact=True)
    for g, e, side in zip(got[1:], expected[1:], ("left", "right")):
        if e is None:
            assert g is None, f"{side} indexer: pandas gives None, got {g.fetch()!r}"
        else:
            assert g is not None, f"{side} indexer: pandas gives {e!r}, got None"
            value = g.fetch()
            np.testing.assert_array_equal(value, e)
            assert value.dtype == e.dtype


@pytest.mark.parametrize("case", sorted(FLATS))
def test_level_join_equals_pandas(case):
    flat = FLATS[case]
    for chunk_size in partitionings(len(MULTI)):
        for how in HOWS:
            level = "x" if how in ("left", "outer") else 0
            expected = MULTI.join(flat, level=level, how=how, return_indexers=True)
            _check(lazy(MULTI, chunk_size).join(lazy(flat, 2), level=level, how=how, return_indexers=True), expected)


@pytest.mark.parametrize("how", HOWS)
def test_flat_joins_multi(how):
    flat = FLATS["unsorted, some absent"]
    for chunk_size in (1, 3, (2, 0, 5)):
        expected = flat.join(MULTI, level="x", how=how, return_indexers=True)
        _check(lazy(flat, 1).join(lazy(MULTI, chunk_size), level="x", how=how, return_indexers=True), expected)
    got = lazy(flat, 2).join(lazy(MULTI, 3), level="x", how=how)
    pdt.assert_index_equal(got.to_pandas(), flat.join(MULTI, level="x", how=how), exact=True)


@pytest.mark.parametrize("how", HOWS)
def test_inner_level_by_position(how):
    flat = pd.Index(["c", "a", "z"], name="y")
    for level in (1, -1, "y"):
        expected = MULTI.join(flat, level=level, how=how, return_indexers=True)
        _check(lazy(MULTI, 3).join(lazy(flat, 1), level=level, how=how, return_indexers=True), expected)


def test_empty_multi():
    # pandas' answer depends on the labels a level holds, used or not: a lazy MultiIndex's are those used
    empty = MULTI[:0].remove_unused_levels()
    for how in HOWS:
        expected = empty.join(pd.Index([1, 2]), level=0, how=how, return_indexers=True)
        _check(lazy(empty, 1).join(md.Index([1, 2]), level=0, how=how, return_indexers=True), expected)


def test_level_from_the_names():
    flat = pd.Index([2, 1, 4], name="x")
    for how in HOWS:
        _check(lazy(MULTI, 3).join(lazy(flat, 2), how=how, return_indexers=True),
               MULTI.join(flat, how=how, return_indexers=True))
        _check(lazy(flat, 2).join(lazy(MULTI, 3), how=how, return_indexers=True),
               flat.join(MULTI, how=how, return_indexers=True))
    with pytest.raises(ValueError, match="no overlapping index names"):
        md.Index(MULTI).join(md.Index([1, 2], name="q"))


@pytest.mark.parametrize(("level", "error", "message"), [
    ("q", KeyError, "Level q not found"),
    (5, IndexError, "Too many levels: Index has only 2 levels, not 6"),
    (-3, IndexError, "-3 is not a valid level number"),
])
def test_bad_levels(level, error, message):
    with pytest.raises(error) as pandas_error:
        MULTI.join(pd.Index([1, 2]), level=level)
    with pytest.raises(error, match=message) as ours:
        md.Index(MULTI, chunk_size=3).join(md.Index([1, 2]), level=level)
    assert str(ours.value) == str(pandas_error.value)


def test_unsupported_joins_raise_as_pandas():
    with pytest.raises(TypeError, match="between two MultiIndex objects is ambiguous"):
        md.Index(MULTI).join(md.Index(MULTI), level="x")
    with pytest.raises(NotImplementedError, match="non-unique index"):
        md.Index(MULTI, chunk_size=2).join(md.Index([1, 1, 2]), level="x")
    with pytest.raises(ValueError, match="do not recognize join method"):
        md.Index(MULTI).join(md.Index([1, 2]), level="x", how="cross")
    holes = pd.MultiIndex.from_arrays([[1.0, np.nan], ["a", "b"]], names=["x", "y"])
    with pytest.raises(NotImplementedError, match="missing labels"):
        md.Index(holes).join(md.Index([1.0]), level="x")


FRAME = pd.DataFrame({"v": range(len(MULTI))}, index=MULTI)
OTHERS = {
    "x": pd.DataFrame({"w": [10, 20, 40]}, index=pd.Index([2, 1, 4], name="x")),
    "y": pd.DataFrame({"w": [1.5, 2.5]}, index=pd.Index(["c", "a"], name="y")),
}


@pytest.mark.parametrize("level", sorted(OTHERS))
@pytest.mark.parametrize("how", HOWS)
def test_frame_join_on_a_level(level, how):
    """DataFrame.join of a MultiIndexed frame and a flat one keeps the MultiIndex's row order, as pandas."""
    other = OTHERS[level]
    for chunk_size in partitionings(len(FRAME))[:4]:
        for other_chunks in (1, 2):
            left, right = lazy(FRAME, chunk_size), lazy(other, other_chunks)
            pdt.assert_frame_equal(left.join(right, how=how).to_pandas(), FRAME.join(other, how=how))
            pdt.assert_frame_equal(right.join(left, how=how).to_pandas(), other.join(FRAME, how=how))
            pdt.assert_frame_equal(md.merge(left, right, left_index=True, right_index=True, how=how).to_pandas(),
                                   pd.merge(FRAME, other, left_index=True, right_index=True, how=how))
