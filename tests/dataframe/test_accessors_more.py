"""``str.get_dummies``, the rest of ``.dt`` and the ``.cat`` accessor against pandas across partitionings."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, partitionings, same_error

import mars.dataframe as md

TAGS = ["a|b", None, "c", "b|a|", "", "x||y", "c|a"]


@pytest.mark.parametrize("dtype", ["str", "object", "string"])
@pytest.mark.parametrize("cs", partitionings(len(TAGS)))
def test_str_get_dummies(cs, dtype):
    ps = pd.Series(TAGS, dtype=dtype, name="t", index=[f"r{i}" for i in range(len(TAGS))])
    s = md.Series(ps, chunk_size=cs)
    for kwargs in ({}, {"dtype": bool}, {"sep": "b"}):
        assert_eq(s.str.get_dummies(**kwargs).execute(), ps.str.get_dummies(**kwargs))


def test_str_get_dummies_all_missing_and_errors():
    ps = pd.Series([None, None, "a"], dtype=object)
    assert_eq(md.Series(ps, chunk_size=(2, 1)).str.get_dummies().execute(), ps.str.get_dummies())
    with pytest.raises(NotImplementedError, match="Index.str.get_dummies"):
        md.Index(["a|b"]).str.get_dummies()


@pytest.mark.parametrize("cs", partitionings(8))
def test_dt_freq_and_python_objects(cs):
    pt = pd.Series(pd.date_range("2020-01-31", periods=8, freq="ME"), name="t")
    t = md.Series(pt, chunk_size=cs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert t.dt.freq.fetch() == pt.dt.freq
        irregular = pt.iloc[[0, 1, 3, 4, 5, 6, 7, 2]]
        assert md.Series(irregular, chunk_size=cs).dt.freq.fetch() == irregular.dt.freq
    assert_eq(t.dt.to_pydatetime(), pt.dt.to_pydatetime())
    delta = pt - pt.iloc[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = md.Series(delta, chunk_size=cs).dt.to_pytimedelta().fetch()
        want = delta.dt.to_pytimedelta()
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype
    periods = pd.Series(pd.period_range("2020-01", periods=8, freq="W"), name="p")
    p = md.Series(periods, chunk_size=cs)
    assert_eq(p.dt.week.execute(), periods.dt.week)
    assert_eq(p.dt.weekofyear.execute(), periods.dt.weekofyear)
    assert p.dt.freq == periods.dt.freq


def test_dt_new_names_check_kind():
    t = md.Series(pd.date_range("2020", periods=3))
    with pytest.raises(AttributeError):
        _ = t.dt.to_pytimedelta
    with pytest.raises(AttributeError):
        _ = t.dt.week
    with pd.option_context("future.infer_freq_returns_offset", True):
        assert t.dt.freq.fetch() == pd.Series(pd.date_range("2020", periods=3)).dt.freq


CATS = pd.Series(pd.Categorical(["b", "a", None, "d", "b", "a", "b", "d"], categories=["d", "c", "b", "a"]),
                 name="c", index=list("abcdefgh"))
CAT_CALLS = [("add_categories", (["z"],), {}), ("remove_categories", (["a"],), {}),
             ("rename_categories", (str.upper,), {}), ("rename_categories", ({"a": "A"},), {}),
             ("reorder_categories", (["a", "b", "c", "d"],), {"ordered": True}),
             ("set_categories", (["a", "b", "x"],), {}), ("set_categories", (["p", "q", "r", "s"],), {"rename": True}),
             ("as_ordered", (), {}), ("as_unordered", (), {}), ("remove_unused_categories", (), {})]


@pytest.mark.parametrize("cs", partitionings(len(CATS)))
def test_cat(cs):
    s = md.Series(CATS, chunk_size=cs)
    pdt_index = CATS.cat.categories
    assert s.cat.categories.equals(pdt_index) and s.cat.ordered == CATS.cat.ordered
    assert_eq(s.cat.codes, CATS.cat.codes)
    for name, args, kwargs in CAT_CALLS:
        assert_eq(getattr(s.cat, name)(*args, **kwargs), getattr(CATS.cat, name)(*args, **kwargs))


def test_cat_from_lazy_astype_and_errors():
    ps = pd.Series(["x", "y", "x", None, "z"])
    s = md.Series(ps, chunk_size=2).astype("category")
    assert_eq(s[s != "y"].cat.remove_unused_categories(), ps.astype("category")[ps != "y"].cat.remove_unused_categories())
    with pytest.raises(AttributeError, match="Can only use .cat accessor"):
        _ = md.Series([1, 2]).cat
    same_error(lambda: md.Series(CATS).cat.remove_categories(["nope"]), lambda: CATS.cat.remove_categories(["nope"]),
               ValueError)
    same_error(lambda: md.Series(CATS).cat.add_categories(["a"]), lambda: CATS.cat.add_categories(["a"]), ValueError)
