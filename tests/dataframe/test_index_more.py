"""Index lookups in sorted labels, grouping, reindexing, sorting and sizes against pandas across partitionings."""

from __future__ import annotations

import decimal

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest
from df_testing import partitionings, same_error

import mars.dataframe as md

INC = pd.Index([1, 3, 3, 3, 5, 8, 9, 12], name="k")
DEC = INC[::-1]
UNSORTED = pd.Index([5, 3, 9, 3, 1, 7, 2, 8], name="u")
DATES = pd.DatetimeIndex(pd.date_range("2000-01-01", periods=8, freq="17D"), name="t")
WORDS = pd.Index(list("abcdefgh"), dtype=object)
PARTS = partitionings(8)
PROBES = [0, 1, 2, 3, 4, 5, 8, 10, 12, 13]


def lazy(labels, cs):
    """``labels`` partitioned as ``cs`` is among ``PARTS``, scaled to their length."""
    return md.Index(labels, chunk_size=partitionings(len(labels))[PARTS.index(cs)])


def same_value(got, want):
    assert type(got) is type(want), f"{type(got).__name__} != {type(want).__name__}"
    if isinstance(want, pd.Index):  # pandas' asof of a label repeated in a decreasing Index: all of them
        pdt.assert_index_equal(got, want)
        return
    assert got == want or (pd.isna(got) and pd.isna(want)), f"{got!r} != {want!r}"


def same_outcome(idx, labels, name, *args, **kwargs):
    """``idx.name(...)`` returns what ``labels.name(...)`` returns, or raises the same error."""
    try:
        want = getattr(labels, name)(*args, **kwargs)
    except Exception as err:  # noqa: BLE001 - whatever pandas raises, mars must raise alike
        with pytest.raises(type(err)) as got:
            getattr(idx, name)(*args, **kwargs)
        assert str(got.value) == str(err)
        return
    got = getattr(idx, name)(*args, **kwargs)
    if isinstance(want, np.ndarray):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype
    elif isinstance(want, (slice, tuple)):
        assert got == want, f"{got!r} != {want!r}"
    else:
        same_value(got, want)


@pytest.mark.parametrize("cs", PARTS)
@pytest.mark.parametrize("labels", [INC, DEC], ids=["increasing", "decreasing"])
def test_asof_and_slice_bounds_in_sorted_labels(labels, cs):
    idx = md.Index(labels, chunk_size=cs)
    unique = lazy(labels.drop_duplicates(), cs)
    for x in PROBES:
        same_outcome(idx, labels, "asof", x)
        same_value(unique.asof(x), labels.drop_duplicates().asof(x))
        for side in ("left", "right"):
            assert idx.get_slice_bound(x, side) == labels.get_slice_bound(x, side)
    for start, end, step in [(3, 9, None), (None, 5, None), (4, None, None), (9, 3, -1), (None, 3, -1),
                             (12, None, -2), (0, 13, None), (13, 0, -1)]:
        same_outcome(idx, labels, "slice_locs", start, end, step)
        same_outcome(idx, labels, "slice_indexer", start, end, step)


@pytest.mark.parametrize("cs", PARTS)
def test_unsorted_labels_behave_as_pandas(cs):
    idx = md.Index(UNSORTED, chunk_size=cs)
    for x in (3, 9, 4):
        for side in ("left", "right"):
            same_outcome(idx, UNSORTED, "get_slice_bound", x, side)
    same_outcome(idx, UNSORTED, "slice_locs", 9, 2)
    same_outcome(idx, UNSORTED, "slice_locs", 3, 2)
    same_error(lambda: idx.asof(3), lambda: UNSORTED.asof(3))
    same_error(lambda: idx.asof([3]), lambda: UNSORTED.asof([3]))
    same_error(lambda: idx.get_slice_bound(3, "middle"), lambda: UNSORTED.get_slice_bound(3, "middle"))
    unique = UNSORTED.drop_duplicates()
    mu = lazy(unique, cs)
    for x in (9, 1):
        same_outcome(mu, unique, "get_slice_bound", x, "right")


@pytest.mark.parametrize("cs", PARTS)
def test_dates_partial_strings_and_words(cs):
    idx = md.Index(DATES, chunk_size=cs)
    for x in ("2000-01-18", "2000-02", "1999", "2000-03-05", pd.Timestamp("2000-02-20")):
        same_value(idx.asof(x), DATES.asof(x))
        same_outcome(idx, DATES, "slice_locs", x, None)
        same_outcome(idx, DATES, "slice_indexer", None, x)
    shuffled = DATES[[3, 0, 5, 1, 7, 2, 6, 4]]
    sidx = md.Index(shuffled, chunk_size=cs)
    for start, end in [("2000-01-18", "2000-03-21"), ("2000-02", None), (None, "2000-02"), ("1999", "2000-02")]:
        same_outcome(sidx, shuffled, "slice_indexer", start, end)
    words = md.Index(WORDS, chunk_size=cs)
    for a, b in [("b", "e"), ("bb", "ee"), ("0", "z")]:
        same_outcome(words, WORDS, "slice_locs", a, b)
    same_value(words.asof("cc"), WORDS.asof("cc"))
    same_value(words.asof("0"), WORDS.asof("0"))


@pytest.mark.parametrize("cs", PARTS)
def test_asof_locs(cs):
    idx = md.Index(INC, chunk_size=cs)
    where = pd.Index([0, 1, 2, 3, 4, 9, 10, 12, 20])
    rng = np.random.default_rng(0)
    for mask in (np.ones(8, bool), rng.random(8) < 0.5, np.eye(8, dtype=bool)[5], np.eye(8, dtype=bool)[0]):
        want = INC.asof_locs(where, mask)
        got = idx.asof_locs(where, mask)
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype
    np.testing.assert_array_equal(idx.asof_locs(where, md.Series(rng.random(8) < 2, chunk_size=3)),
                                  INC.asof_locs(where, np.ones(8, bool)))
    assert len(idx.asof_locs(where[:0], np.ones(8, bool))) == 0
    same_error(lambda: idx.asof_locs(where, np.zeros(8, bool)), lambda: INC.asof_locs(where, np.zeros(8, bool)))
    with pytest.raises(ValueError, match="Length of values"):
        idx.asof_locs(where, np.ones(3, bool))


def same_groups(got, want):
    assert list(got) == list(want)
    for key in want:
        pdt.assert_index_equal(got[key], want[key])


@pytest.mark.parametrize("cs", PARTS)
def test_groupby(cs):
    idx = md.Index(UNSORTED, chunk_size=cs)
    for values in ([1, 0, 1, 2, 0, 1, 2, 2], ["b", "a", None, "b", "a", "c", "b", None],
                   np.array([2.0, np.nan, 1.0, 1.0, 2.0, np.nan, 3.0, 1.0]), pd.Index([1, 1, 1, 1, 1, 1, 1, 1])):
        same_groups(idx.groupby(values), UNSORTED.groupby(values))
    values = np.array([3, 1, 3, 1, 2, 2, 3, 1])
    same_groups(idx.groupby(md.Series(values, chunk_size=3)), UNSORTED.groupby(values))
    dates = md.Index(DATES, chunk_size=cs)
    same_groups(dates.groupby(DATES.month), DATES.groupby(DATES.month))
    with pytest.raises(ValueError, match="Length of values"):
        idx.groupby([1, 2])


@pytest.mark.parametrize("cs", PARTS)
def test_reindex_sortlevel_ravel(cs):
    idx = lazy(UNSORTED.drop_duplicates(), cs)
    base = UNSORTED.drop_duplicates()
    for target in ([7, 1, 100], pd.Index([9, 5], name="z"), list(base), [], np.array([2, 2, 9])):
        got, want = idx.reindex(target), base.reindex(target)
        pdt.assert_index_equal(got[0], want[0])
        assert (got[1] is None) == (want[1] is None)
        if want[1] is not None:
            np.testing.assert_array_equal(got[1], want[1])
    same_error(lambda: md.Index(UNSORTED, chunk_size=cs).reindex([1]), lambda: UNSORTED.reindex([1]))
    with pytest.raises(NotImplementedError, match="reindex"):
        idx.reindex([1], method="pad")
    repeated = md.Index(UNSORTED, chunk_size=cs)
    for kwargs in ({}, {"ascending": False}, {"ascending": [False]}):
        got, positions = repeated.sortlevel(**kwargs)
        want = UNSORTED.sortlevel(**kwargs)[0]
        pdt.assert_index_equal(got.to_pandas(), want)
        pdt.assert_index_equal(UNSORTED.take(positions.fetch()), want)  # ties: numpy's quicksort has no set order
        got, positions = idx.sortlevel(**kwargs)
        want, want_positions = base.sortlevel(**kwargs)
        pdt.assert_index_equal(got.to_pandas(), want)
        np.testing.assert_array_equal(positions.fetch(), want_positions)
    floats = pd.Index([2.0, np.nan, 1.0, 2.0])
    for na in ("first", "last"):
        got, positions = lazy(floats, cs).sortlevel(na_position=na)
        pdt.assert_index_equal(got.to_pandas(), floats.sortlevel(na_position=na)[0])
    for bad in ("yes", [True, False], [1]):
        same_outcome(repeated, UNSORTED, "sortlevel", ascending=bad)
    pdt.assert_index_equal(repeated.ravel().to_pandas(), UNSORTED.ravel())


OBJECT_LABELS = [
    [1, 2, 3], [1, "a", 2], [1.5, 2, np.nan], ["a", None, "b"], ["a", "b", b"c"], [b"a", b"b", b"c"],
    [np.nan, np.nan, np.nan], [decimal.Decimal(1), decimal.Decimal(2), decimal.Decimal(3)],
    [pd.Timestamp("2000"), pd.Timestamp("2001"), None], [pd.Timestamp("2000", tz="UTC"), pd.Timestamp("2001"), None],
    [pd.Period("2000", "D"), pd.Period("2001", "D"), pd.Period("2001", "M")], [True, False, True], [True, 1, 0],
    [pd.Interval(0, 1), pd.Interval(1, 2), pd.Interval(2, 3, closed="left")], [1 + 2j, 2, 3], [(1, 2), (3, 4), 5],
]


@pytest.mark.parametrize("cs", [3, 1, (0, 2, 0, 1)])
def test_inferred_type(cs):
    for labels in OBJECT_LABELS:
        want = pd.Index(labels, dtype=object, tupleize_cols=False)
        assert md.Index(want, chunk_size=cs).inferred_type == want.inferred_type, labels
    for want in (INC, DATES, pd.Index([1.5]), pd.Index(["a"]), pd.CategoricalIndex(["a"]), pd.Index([], dtype=object),
                 pd.Index([True])):
        assert md.Index(want, chunk_size=1).inferred_type == want.inferred_type


SIZED = [INC, DATES.tz_localize("UTC"), pd.Index(["a", "bb", None, "dddd"] * 2, dtype=object),
         pd.Index(["a", "bb", None, "dddd"] * 2), pd.CategoricalIndex(list("abcabcab")), pd.RangeIndex(8),
         pd.Index([1, None, 3, 4] * 2, dtype="Int64"), pd.Index([1.0, None] * 4, dtype="float64[pyarrow]"),
         pd.interval_range(0, 8), pd.period_range("2000", periods=8, freq="D")]


@pytest.mark.parametrize("cs", PARTS)
def test_nbytes_and_memory_usage(cs):
    for labels in SIZED:
        labels = labels.copy(deep=True)  # pandas adds its lookup table's size once it is built: not yet here
        idx = md.Index(labels, chunk_size=cs)
        assert idx.nbytes == labels.nbytes, labels
        for deep in (False, True):
            assert idx.memory_usage(deep=deep) == labels.memory_usage(deep=deep), (labels, deep)
    stepped = md.Index(pd.RangeIndex(8), chunk_size=cs)[::2]
    assert stepped.nbytes == stepped.to_pandas().nbytes
    filtered = md.Index(pd.RangeIndex(8), chunk_size=cs)[[0, 3, 4]]
    assert filtered.nbytes == pd.Index([0, 3, 4]).nbytes


def test_ewm_attributes():
    for obj in (pd.Series([1.0, 2.0]), pd.DataFrame({"a": [1.0], "b": [2.0]})):
        window, want = md.DataFrame(obj) if obj.ndim == 2 else md.Series(obj), obj
        assert window.ewm(span=2).ndim == want.ewm(span=2).ndim
        assert window.ewm(span=2).exclusions == want.ewm(span=2).exclusions
