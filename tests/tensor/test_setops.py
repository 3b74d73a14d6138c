"""unique (and its Array API forms), isin/in1d and the *1d set functions against numpy across chunkings."""

from __future__ import annotations

import numpy as np
import pytest
from tensor_testing import assert_eq, chunkings

import mars
import mars.tensor as mt
from mars.tensor.base import unique as unique_mod

RS = np.random.RandomState(7)
FLAG_SETS = [(False, False, False), (True, True, True), (True, False, True), (False, True, False)]


def _check_all(results, expected):
    results = results if isinstance(results, tuple) else (results,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(results) == len(expected)
    for r, e in zip(results, expected):
        assert_eq(r, e)


@pytest.mark.parametrize("chunk_size", chunkings((6, 8)))
@pytest.mark.parametrize("flags", FLAG_SETS)
def test_unique_flat(chunk_size, flags):
    x = RS.randint(0, 9, (6, 8)).astype(float)
    x[1, ::3] = np.nan
    _check_all(mt.unique(mt.tensor(x, chunk_size=chunk_size), *flags), np.unique(x, *flags))


@pytest.mark.parametrize("flags", FLAG_SETS)
def test_unique_by_range_shuffle(monkeypatch, flags):
    # a low threshold sends the partials through the shuffle into several result chunks
    monkeypatch.setattr(unique_mod, "SHUFFLE_ABOVE", 16)
    x = RS.randint(0, 500, 2000)
    x[::11] = -7
    u = mt.unique(mt.tensor(x, chunk_size=((150, 450, 1, 1399),)), *flags)
    _check_all(u, np.unique(x, *flags))
    first = u[0] if isinstance(u, tuple) else u
    assert len(first.data.chunks) > 1


def test_unique_shuffle_with_nans(monkeypatch):
    monkeypatch.setattr(unique_mod, "SHUFFLE_ABOVE", 8)
    x = RS.randint(0, 100, (30, 20)).astype(float)
    x[x > 80] = np.nan
    _check_all(mt.unique(mt.tensor(x, chunk_size=(7, 9)), True, True, True), np.unique(x, True, True, True))
    _check_all(mt.unique(mt.tensor(x, chunk_size=(7, 9)), True, False, True, equal_nan=False),
               np.unique(x, True, False, True, equal_nan=False))


def test_unique_empty_scalar_and_sizes():
    _check_all(mt.unique(mt.tensor(np.zeros(0, dtype="int32"), chunk_size=3), True, True, True),
               np.unique(np.zeros(0, dtype="int32"), True, True, True))
    _check_all(mt.unique(mt.tensor(np.array(5.0)), return_inverse=True), np.unique(np.array(5.0), return_inverse=True))
    u = mt.unique(mt.tensor([3, 1, 3], chunk_size=1))
    assert np.isnan(u.shape[0])
    u.execute()
    assert u.shape == (2,)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("chunk_size", chunkings((9, 4)))
def test_unique_axis(axis, chunk_size):
    x = RS.randint(0, 2, (9, 4))
    for flags in FLAG_SETS:
        _check_all(mt.unique(mt.tensor(x, chunk_size=chunk_size), *flags, axis=axis), np.unique(x, *flags, axis=axis))


def test_unique_of_unknown_sizes_and_errors():
    x = RS.randint(0, 5, 40)
    t = mt.tensor(x, chunk_size=7)
    _check_all(mt.unique(t[t > 1], return_index=True), np.unique(x[x > 1], return_index=True))
    with pytest.raises(np.exceptions.AxisError):
        mt.unique(t, axis=1)


@pytest.mark.parametrize("chunk_size", chunkings((12,)))
def test_array_api_uniques(chunk_size):
    x = RS.randint(0, 4, 12).astype(float)
    x[[2, 7]] = np.nan
    t = mt.tensor(x, chunk_size=chunk_size)
    for name in ("unique_all", "unique_counts", "unique_inverse"):
        got, expected = getattr(mt, name)(t), getattr(np, name)(x)
        assert type(got).__name__ == type(expected).__name__ and got._fields == expected._fields
        for g, e in zip(got, expected):
            assert_eq(g, e)
    assert_eq(mt.unique_values(t), np.sort(np.unique_values(x)))


@pytest.mark.parametrize("chunk_size", chunkings((5, 6)))
@pytest.mark.parametrize("invert", [False, True])
def test_isin(chunk_size, invert):
    x = RS.randint(0, 12, (5, 6))
    test = RS.randint(0, 12, 9)
    t = mt.tensor(x, chunk_size=chunk_size)
    assert_eq(mt.isin(t, test, invert=invert), np.isin(x, test, invert=invert))
    assert_eq(mt.isin(t, mt.tensor(test, chunk_size=2), invert=invert), np.isin(x, test, invert=invert))
    assert_eq(mt.isin(t, test, invert=invert, kind="table"), np.isin(x, test, invert=invert, kind="table"))
    assert_eq(mt.in1d(t, test, invert=invert), np.isin(x, test, invert=invert).ravel())


def test_isin_errors_and_dispatch():
    with pytest.raises(ValueError, match="Invalid kind"):
        mt.isin(mt.tensor([1]), [1], kind="foo")
    with pytest.raises(ValueError, match="only supported for boolean or integer"):
        mt.isin(mt.tensor([1.5]), [1.5], kind="table")
    assert_eq(np.isin(mt.tensor([1, 2, 3], chunk_size=2), [2]), np.array([False, True, False]))


@pytest.mark.parametrize("cs1,cs2", [(30, 17), (7, 4), (1, 1)])
@pytest.mark.parametrize("name", ["setdiff1d", "union1d", "intersect1d", "setxor1d"])
def test_set_functions(cs1, cs2, name):
    a = RS.randint(0, 15, 30)
    b = RS.randint(5, 25, 17).astype(float)
    assert_eq(getattr(mt, name)(mt.tensor(a, chunk_size=cs1), mt.tensor(b, chunk_size=cs2)), getattr(np, name)(a, b))
    ua, ub = np.unique(a)[::-1], np.unique(b)  # assume_unique: values as given
    assert_eq(getattr(mt, name)(mt.tensor(ua, chunk_size=cs1), ub, assume_unique=True) if name != "union1d"
              else mt.union1d(ua, ub), getattr(np, name)(ua, ub, assume_unique=True) if name != "union1d"
              else np.union1d(ua, ub))


@pytest.mark.parametrize("chunk_size", [40, 9, 1])
def test_intersect1d_indices_and_nans(chunk_size):
    a = RS.randint(0, 20, 40)
    b = RS.randint(10, 30, 25)
    got = mt.intersect1d(mt.tensor(a, chunk_size=chunk_size), b, return_indices=True)
    for g, e in zip(got, np.intersect1d(a, b, return_indices=True)):
        assert_eq(g, e)
    x, y = np.array([np.nan, 1.0, 2.0]), np.array([np.nan, 2.0])
    assert_eq(mt.setxor1d(mt.tensor(x, chunk_size=1), y), np.setxor1d(x, y))
    assert_eq(mt.union1d(mt.tensor(x, chunk_size=2), y), np.union1d(x, y))


def test_unique_wide_distinct_run_in_cluster_of_stages():
    # many distinct values across many chunks: the shuffle path with the default threshold
    x = RS.randint(0, 400_000, 600_000)
    with mars.new_session():
        u, c = mt.unique(mt.tensor(x, chunk_size=100_000), return_counts=True)
        eu, ec = np.unique(x, return_counts=True)
        assert_eq(u, eu)
        assert_eq(c, ec)
        assert len(u.data.chunks) > 1


def test_outputs_used_alone():
    # the outputs nobody keeps are dropped before tiling: each output works on its own
    x = RS.randint(0, 6, 30)
    t = mt.tensor(x, chunk_size=7)
    assert_eq(mt.unique(t, True, True, True)[2], np.unique(x, True, True, True)[2])
    assert_eq(mt.unique_counts(t).counts, np.unique_counts(x).counts)
    assert_eq(mt.histogram(t, bins=3)[1], np.histogram(x, bins=3)[1])
    assert_eq(mt.histogramdd(mt.tensor(x.reshape(15, 2), chunk_size=4), bins=2)[1][0],
              np.histogramdd(x.reshape(15, 2), bins=2)[1][0])
