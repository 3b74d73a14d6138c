"""``Index.join`` equals pandas' (result, indexers, which indexers are None) across partitionings."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

import mars.dataframe as md
from mars.dataframe.inventory import NOT_YET
from tests.dataframe.df_testing import lazy, partitionings

HOWS = ("left", "right", "inner", "outer")

CASES = {
    "unique unsorted": (pd.Index([5, 3, 1, 9, 7, 11], name="a"), pd.Index([9, 2, 3, 8, 11], name="b")),
    "both sorted unique": (pd.Index([1, 2, 3, 5, 8, 9]), pd.Index([2, 3, 4, 8, 9])),
    "sorted, left repeats": (pd.Index([1, 2, 2, 3, 5, 5]), pd.Index([2, 3, 4, 5])),
    "sorted, right repeats": (pd.Index([1, 2, 3, 5, 6]), pd.Index([2, 2, 3, 4, 6, 6])),
    "repeats both": (pd.Index([3, 1, 3, 2, 1, 4]), pd.Index([1, 3, 3, 7, 1])),
    "right covers left": (pd.Index([1, 2, 3, 4]), pd.Index([1, 2, 3, 4, 5])),
    "strings": (pd.Index(["b", "a", "c", "e"]), pd.Index(["c", "d", "a"])),
    "missing labels": (pd.Index([1.0, np.nan, 3.0, 2.0]), pd.Index([np.nan, 3.0, 4.0])),
    "dates": (pd.date_range("2000", periods=6, name="t"), pd.date_range("2000-01-03", periods=5, name="t")),
}


def _check(got: tuple, expected: tuple) -> None:
    pdt.assert_index_equal(got[0].to_pandas(), expected[0], exact=True, check_freq=False)
    for g, e, side in zip(got[1:], expected[1:], ("left", "right")):
        if e is None:
            assert g is None, f"{side} indexer: pandas gives None, got {g.fetch()!r}"
        else:
            assert g is not None, f"{side} indexer: pandas gives {e!r}, got None"
            value = g.fetch()
            np.testing.assert_array_equal(value, e)
            assert value.dtype == e.dtype


@pytest.mark.parametrize("case", sorted(CASES))
def test_join_equals_pandas(case):
    a, b = CASES[case]
    for chunk_size in partitionings(len(a))[:3]:
        for how in HOWS:
            for sort in (False, True):
                expected = a.join(b, how=how, sort=sort, return_indexers=True)
                got = lazy(a, chunk_size).join(lazy(b, 2), how=how, sort=sort, return_indexers=True)
                _check(got, expected)


@pytest.mark.parametrize("chunk_size", partitionings(8))
def test_join_partitionings(chunk_size):
    a, b = pd.Index([7, 3, 3, 9, 1, 5, 2, 8]), pd.Index([3, 1, 9, 10])
    for how in HOWS:
        expected = a.join(b, how=how, return_indexers=True)
        _check(lazy(a, chunk_size).join(lazy(b, 1), how=how, return_indexers=True), expected)
        pdt.assert_index_equal(lazy(b, 1).join(lazy(a, chunk_size), how=how).to_pandas(), b.join(a, how=how))


def test_equal_sides_give_no_indexers():
    a = pd.Index([3, 1, 2], name="x")
    for how in HOWS:
        for sort in (False, True):
            expected = a.join(a.rename("y"), how=how, sort=sort, return_indexers=True)
            _check(md.Index(a, chunk_size=2).join(md.Index(a.rename("y"), chunk_size=1), how=how, sort=sort,
                                                   return_indexers=True), expected)


@pytest.mark.parametrize("how", HOWS)
def test_empty_sides(how):
    a, e = pd.Index([3, 1, 2]), pd.Index([], dtype="int64")
    for left, right in ((a, e), (e, a), (e, e)):
        for sort in (False, True):
            expected = left.join(right, how=how, sort=sort, return_indexers=True)
            _check(md.Index(left, chunk_size=2).join(md.Index(right, chunk_size=2), how=how, sort=sort,
                                                     return_indexers=True), expected)


@pytest.mark.parametrize("how", HOWS)
def test_different_dtypes(how):
    a, b = pd.Index([3, 1, 2, 5]), pd.Index([1.0, 2.5, 3.0])
    _check(md.Index(a, chunk_size=3).join(md.Index(b, chunk_size=2), how=how, return_indexers=True),
           a.join(b, how=how, return_indexers=True))
    _check(md.Index(b, chunk_size=3).join(md.Index(a, chunk_size=2), how=how, return_indexers=True),
           b.join(a, how=how, return_indexers=True))


def test_without_indexers_and_in_memory_other():
    a, b = pd.Index([4, 2, 6, 2]), pd.Index([2, 6, 7])
    got = md.Index(a, chunk_size=3).join(b, how="outer")
    pdt.assert_index_equal(got.to_pandas(), a.join(b, how="outer"))
    with pytest.warns(FutureWarning, match="Pass an Index instead"):
        got = md.Index(a, chunk_size=3).join([2, 6, 7], how="inner")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pdt.assert_index_equal(got.to_pandas(), a.join([2, 6, 7], how="inner"))


def test_bad_arguments():
    idx = md.Index([1, 2])
    with pytest.raises(ValueError, match="do not recognize join method cross"):
        idx.join(md.Index([1]), how="cross")
    with pytest.raises(TypeError, match="tz-naive with tz-aware"):
        md.Index(pd.date_range("2000", periods=2)).join(md.Index(pd.date_range("2000", periods=2, tz="UTC")))
    two = md.Index(pd.MultiIndex.from_tuples([(1, 2)], names=["a", "b"]))
    with pytest.raises(NotImplementedError, match="two MultiIndexes"):  # level= joins: test_index_join_level.py
        two.join(md.Index(pd.MultiIndex.from_tuples([(1, 2)], names=["a", "c"])))


def test_join_is_no_longer_listed_as_missing():
    assert "Index.join" not in NOT_YET
    assert not hasattr(md.Index.join, "qualified")
