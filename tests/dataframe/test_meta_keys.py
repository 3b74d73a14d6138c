"""Metadata worked out once per expression shape (mars/dataframe/metakey.py): the second build of the same
expression runs no pandas on metas, and every meta is exactly the one worked out without the cache."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import mars.dataframe as md
from mars.dataframe import accessors, indexing, metakey
from mars.dataframe import map as map_module
from mars.dataframe.meta import METAS

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(autouse=True)
def fresh_cache():
    METAS._values.clear()
    metakey._SIGNED.clear()
    metakey._TOKENS.clear()
    metakey._OUT_TOKENS.clear()
    yield
    METAS._values.clear()
    metakey._SIGNED.clear()
    metakey._TOKENS.clear()
    metakey._OUT_TOKENS.clear()


@pytest.fixture
def no_cache(monkeypatch):
    """Turns the cache off (every meta worked out as before it existed)."""
    def off():
        for module in (map_module, accessors, indexing):
            monkeypatch.setattr(module, "meta_key", lambda *a, **k: None)
    return off


@pytest.fixture
def pandas_runs(monkeypatch):
    """Counts the metadata inferences (pandas run on metas) and selections of several columns of metas."""
    calls = []
    for module in (map_module, accessors):
        real = module.infer
        monkeypatch.setattr(module, "infer", lambda *a, _real=real, **k: calls.append(1) or _real(*a, **k))
    real_getitem = pd.DataFrame.__getitem__
    def getitem(self, key):
        if isinstance(key, list):  # several columns (one column is taken afresh: quicker than a look-up)
            calls.append(1)
        return real_getitem(self, key)

    monkeypatch.setattr(pd.DataFrame, "__getitem__", getitem)
    return calls


def _frame() -> pd.DataFrame:
    n = 6
    return pd.DataFrame({
        "s": pd.Series(["ab", "bc", None, "ca", "ab", "d"], dtype=pd.StringDtype("pyarrow")),
        "t": pd.Series(["x", "yy", "x", None, "zz", "x"]),
        "o": pd.Series(["p", "q", None, "p", "q", "r"], dtype=object),
        "c": pd.Categorical(["a", "b", "a", "c", "b", "a"], categories=["c", "b", "a"]),
        "n": pd.array([1, None, 3, 4, 5, 6], dtype="Int64"),
        "i": np.arange(n, dtype=np.int8),
        "f": np.linspace(0.5, 3.0, n),
        "d": pd.date_range("2020-01-01", periods=n, freq="37h"),
        "z": pd.date_range("2020-01-01", periods=n, freq="h", tz="Europe/Paris"),
        "b": [True, False, True, True, False, False],
    })


def _expressions(df):
    """One expression per op family, over several dtypes."""
    return [
        df.s == "ab", df.s != "zz", df.s < "b", df.t == "x", df.o == "p", df.c == "a", df.n > 2, df.i + 1,
        df.i + 1.0, df.i + True, df.f * 2, df.i * df.f, df.n + df.i, df.d < pd.Timestamp("2020-01-02"),
        df.z >= pd.Timestamp("2020-01-01", tz="UTC"), df.d - pd.Timedelta("1D"), df.b & (df.i > 2), ~df.b,
        df.s.isin(["ab", "d"]), df.c.isin(["a"]), df.n.isin([1, 3]), df.f.isin([0.5]), df.i.map({0: "zero"}),
        df.n.fillna(0), df.c.astype(str), df.i.astype("Int32"),
        df.s.str.contains("b"), df.s.str.startswith("a"), df.t.str.slice(0, 1), df.o.str.len(), df.s.str.len(),
        df.t.str.upper(), df.s.str.split("b"), df.d.dt.year, df.z.dt.floor("D"), df.d.dt.strftime("%Y"),
        df[["s", "c", "n"]], df["z"], df[df.i > 2], df[df.c == "a"][["f", "d"]], df.f.round(1),
    ]


def _metas(df) -> list:
    return [e.data.meta for e in _expressions(df)]


def _assert_same_meta(got, want) -> None:
    assert type(got) is type(want)
    if isinstance(want, pd.DataFrame):
        pd.testing.assert_frame_equal(got, want, check_index_type=True, check_column_type=True)
        assert list(map(str, got.dtypes)) == list(map(str, want.dtypes))
    elif isinstance(want, pd.Series):
        pd.testing.assert_series_equal(got, want, check_index_type=True)
        assert str(got.dtype) == str(want.dtype) and got.name == want.name
    else:
        pd.testing.assert_index_equal(got, want, exact=True)


@pytest.mark.parametrize("chunk_size", [6, 4, 1])
def test_cached_metas_are_the_metas_without_cache(no_cache, chunk_size):
    df = md.DataFrame(_frame(), chunk_size=chunk_size)
    first, second = _metas(df), _metas(df)  # filled, then read from the cache
    no_cache()
    for got1, got2, want in zip(first, second, _metas(df)):
        _assert_same_meta(got1, want)
        _assert_same_meta(got2, want)


def test_results_equal_pandas_with_cached_metas():
    pdf = _frame()
    df = md.DataFrame(pdf, chunk_size=4)
    _expressions(df)
    lazy, eager = _expressions(df), _expressions(pdf)
    for got, want in zip(lazy, eager):
        got = got.execute().fetch()
        if isinstance(want, pd.DataFrame):
            pd.testing.assert_frame_equal(got, want)
        else:
            pd.testing.assert_series_equal(got, want)


def test_second_build_runs_no_pandas_on_metas(pandas_runs):
    df = md.DataFrame(_frame(), chunk_size=3)

    def build():
        part = df[(df.t != "Brand#45") & ~df.t.str.startswith("x") & df.i.isin([1, 3])]
        return part[["s", "f"]].assign(g=part.f * 2.0)

    build()
    assert pandas_runs  # the spy sees the first build's inference
    pandas_runs.clear()
    build()
    assert pandas_runs == []


def test_arguments_of_other_types_are_other_keys():
    s = md.Series(np.arange(3, dtype=np.int8), chunk_size=2)
    assert (s + 1).dtype == np.int8
    assert (s + 1.0).dtype == np.float64
    assert (s + np.int64(1)).dtype == (pd.Series(np.arange(3, dtype=np.int8)) + np.int64(1)).dtype
    assert (s + 1).dtype == np.int8
    assert (s.astype("int64") + 1).dtype == np.int64


def test_user_functions_are_not_cached():
    s = md.Series([1, 2, 3], chunk_size=2)
    kind = {"out": float}

    def convert(x):
        return kind["out"](x)

    assert s.map(convert).dtype == np.float64
    kind["out"] = str
    assert s.map(convert).dtype == pd.Series(["1"]).dtype


def test_categories_order_is_kept():
    a = md.Series(pd.Categorical(["x"], categories=["x", "y"]), chunk_size=1)
    b = md.Series(pd.Categorical(["x"], categories=["y", "x"]), chunk_size=1)
    assert list(a.fillna("x").dtype.categories) == ["x", "y"]
    assert list(b.fillna("x").dtype.categories) == ["y", "x"]
    for cats in (["x", "y"], ["y", "x"]):
        df = md.DataFrame({"c": pd.Categorical(["x"], categories=cats), "v": [1]}, chunk_size=1)
        assert list(df[["c"]].dtypes.iloc[0].categories) == cats


def test_pandas_future_options_are_part_of_the_key():
    s = md.Series([1, 2], chunk_size=1)
    assert s.astype(str).dtype == pd.Series(["a"]).dtype
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pd.option_context("future.infer_string", False):
            assert s.astype(str).dtype == object
    assert s.astype(str).dtype == pd.Series(["a"]).dtype


def test_warnings_come_every_time():
    s = md.Series(["ab", "c"], chunk_size=1)
    for _ in range(2):
        with pytest.warns(UserWarning, match="match groups"):
            s.str.contains("(a)")


def test_errors_are_not_cached():
    df = md.DataFrame({"a": [1], "b": [2]}, chunk_size=1)
    for _ in range(2):
        with pytest.raises(KeyError):
            df[["a", "nope"]]
        with pytest.raises(AttributeError):
            df.a.str.upper()


def test_renamed_columns_in_place_are_seen():
    df = md.DataFrame({"a": [1], "b": [2]}, chunk_size=1)
    assert df[["a"]].data.meta.columns.name is None
    df.columns.name = "cols"  # pandas' way of naming the columns, in place
    assert df[["a"]].data.meta.columns.name == "cols"


def test_describe():
    d = metakey.describe
    assert d(0.0) != d(-0.0) and d(1) != d(True) and d([1]) != d((1,))
    assert d(pd.Timestamp("2020-01-01").as_unit("s")) != d(pd.Timestamp("2020-01-01").as_unit("ns"))
    assert d({"a": 1, "b": 2}) != d({"b": 2, "a": 1})
    assert d(np.float32(1)) != d(np.float64(1))
    for undescribable in (lambda: 1, {1, 2}, pd.Series([1]), pd.CategoricalDtype(["a"]), list(range(5000)), object()):
        with pytest.raises(metakey.Undescribable):
            d(undescribable)
    ab, ba = (pd.Series(pd.Categorical([], categories=c)) for c in (["a", "b"], ["b", "a"]))
    assert ab.dtype == ba.dtype  # pandas: unordered categories compare equal whatever their order
    assert metakey.meta_key("x", (ab,)) != metakey.meta_key("x", (ba,))
    assert metakey.meta_key("x", (ab,)) == metakey.meta_key("x", (ab.copy(),))
    assert metakey.meta_key("x", (ab,)) != metakey.meta_key("x", (ab.astype(pd.CategoricalDtype(["a", "b"], True)),))
    assert metakey.meta_key("x", (pd.Series([1]),), lambda: 1) is None


def test_metas_handed_out_are_signed_as_themselves():
    s = md.Series([1.0, 2.0], chunk_size=1)
    metas = [(s + 1).data.meta for _ in range(3)]  # the second and third are copies of the kept one
    remembered = [metakey.signed(m) for m in metas]
    metakey._SIGNED.clear()
    assert remembered == [metakey.signed(m) for m in metas] == [metakey.signed(metas[0].copy())] * 3
    renamed = (s + 1).data.meta
    renamed.index.name = "r"  # in place: the token remembered for this copy no longer holds
    assert metakey.signed(renamed) != remembered[0]
