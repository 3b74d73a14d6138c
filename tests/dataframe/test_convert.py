"""Conversions, iteration and top-level helpers: equal to pandas on every partitioning."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, partitionings

import mars.dataframe as md
import mars.tensor as mt

PDF = pd.DataFrame({"a": [1.0, 2.0, None, 4.0, 5.0], "b": list("vwxyz"), "c": [1, 2, 3, 4, 5]},
                   index=[3, 1, 2, 0, 9])
CHUNKS = partitionings(5)


@pytest.mark.parametrize("chunk_size", CHUNKS)
def test_to_dict_records_and_text(chunk_size):
    df = md.DataFrame(PDF, chunk_size=chunk_size)
    for orient in ("dict", "list", "series", "split", "tight", "records", "index"):
        assert str(df.to_dict(orient=orient)) == str(PDF.to_dict(orient=orient)), orient
    assert str(df.a.to_dict()) == str(PDF.a.to_dict())
    assert df.c.to_dict() == PDF.c.to_dict()
    for kw in ({}, {"index": False}, {"column_dtypes": {"c": "int8"}}):
        got, want = df.to_records(**kw), PDF.to_records(**kw)
        assert got.dtype == want.dtype and str(got.tolist()) == str(want.tolist())
    assert df.to_string() == PDF.to_string()
    assert df.to_html() == PDF.to_html()
    assert df.a.to_string(float_format="{:.2f}".format) == PDF.a.to_string(float_format="{:.2f}".format)
    buf = io.StringIO()
    assert df.to_string(buf=buf) is None and buf.getvalue() == PDF.to_string()


def test_errors_come_before_running():
    df = md.DataFrame(PDF, chunk_size=2)
    with pytest.raises(ValueError, match="orient"):
        df.to_dict(orient="bad")
    try:
        expected = PDF.to_markdown()
    except ImportError as err:
        with pytest.raises(ImportError) as got:
            df.to_markdown()
        assert str(got.value) == str(err)
    else:
        assert df.to_markdown() == expected


def _info_text(obj, **kw):
    buf = io.StringIO()
    obj.info(buf=buf, **kw)
    return buf.getvalue()


@pytest.mark.parametrize("chunk_size", CHUNKS)
@pytest.mark.parametrize("kw", [{}, {"memory_usage": "deep"}, {"verbose": False}, {"show_counts": False},
                                {"memory_usage": False}])
def test_info_prints_like_pandas(chunk_size, kw):
    df = md.DataFrame(PDF, chunk_size=chunk_size)
    # compared with the value the user would hold (pandas' memory use of strings depends on their history)
    assert _info_text(df, **kw) == _info_text(df.to_pandas(), **kw)
    assert _info_text(df.a, **kw) == _info_text(df.a.to_pandas(), **kw)


def test_info_prints_to_stdout(capsys):
    md.DataFrame({"x": [1, 2]}, chunk_size=1).info()
    mine = capsys.readouterr().out
    pd.DataFrame({"x": [1, 2]}).info()
    assert mine == capsys.readouterr().out


@pytest.mark.parametrize("chunk_size", CHUNKS)
def test_iteration(chunk_size):
    df = md.DataFrame(PDF, chunk_size=chunk_size)
    for (k1, r1), (k2, r2) in zip(df.iterrows(), PDF.iterrows(), strict=True):
        assert k1 == k2
        pd.testing.assert_series_equal(r1, r2)
    assert str(list(df.itertuples())) == str(list(PDF.itertuples()))  # str: NaN != NaN
    assert str(list(df.itertuples(index=False, name=None))) == str(list(PDF.itertuples(index=False, name=None)))
    assert [k for k, _ in df.items()] == list(PDF.columns)
    assert [k for k, _ in df.iteritems()] == list(PDF.columns)
    assert list(df.c.items()) == list(PDF.c.items())
    assert list(df) == list(PDF) and list(df.c) == list(PDF.c)
    assert_eq(df.c.keys(), PDF.c.keys())
    assert list(df.keys()) == list(PDF.keys())


@pytest.mark.parametrize("chunk_size", CHUNKS)
def test_item_and_nbytes(chunk_size):
    s = md.Series(PDF.c, chunk_size=chunk_size)
    assert s.nbytes == PDF.c.nbytes
    assert md.Series(PDF.a, chunk_size=chunk_size).nbytes == PDF.a.nbytes
    assert s[s == 3].item() == 3
    with pytest.raises(ValueError) as got:
        s.item()
    with pytest.raises(ValueError) as want:
        PDF.c.item()
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("chunk_size", CHUNKS)
@pytest.mark.parametrize("values, kw", [
    (["1", "-1", "200", "3", "4"], {"downcast": "integer"}),
    (["1", "2.5", "3", "4", "5"], {}),
    (["1", "x", "3", "4", "5"], {"errors": "coerce"}),
    (["1", "2", "3", "4", "5"], {"downcast": "unsigned"}),
    (["1", "2", "3", "4", "5e40"], {"downcast": "float"}),
])
def test_to_numeric(chunk_size, values, kw):
    s = pd.Series(values, index=PDF.index)
    result = md.to_numeric(md.Series(s, chunk_size=chunk_size), **kw)
    expected = pd.to_numeric(s, **kw)
    assert_eq(result, expected, check_meta=False)  # the dtype is the data's: known once it has run
    assert result.dtype == expected.dtype


def test_to_numeric_errors_and_eager_inputs():
    with pytest.raises(TypeError, match="arg must be"):
        md.to_numeric(md.DataFrame(PDF))
    with pytest.raises(ValueError, match="Unable to parse"):
        md.to_numeric(md.Series(["1", "x"], chunk_size=1)).execute()
    np.testing.assert_array_equal(md.to_numeric(["1", "2"]), pd.to_numeric(["1", "2"]))
    assert md.to_numeric("3") == 3


@pytest.mark.parametrize("chunk_size", CHUNKS)
def test_isna_notna_unique(chunk_size):
    df = md.DataFrame(PDF, chunk_size=chunk_size)
    for name in ("isna", "isnull", "notna", "notnull"):
        assert_eq(getattr(md, name)(df), getattr(pd, name)(PDF))
        assert_eq(getattr(md, name)(df.a), getattr(pd, name)(PDF.a))
        assert getattr(md, name)(None) == getattr(pd, name)(None)
    t = mt.tensor(np.array([1.0, np.nan, 3.0]), chunk_size=2)
    np.testing.assert_array_equal(md.isna(t).fetch(), pd.isna(np.array([1.0, np.nan, 3.0])))
    values = pd.Series([3, 1, 3, 2, 1])
    np.testing.assert_array_equal(md.unique(md.Series(values, chunk_size=chunk_size)).fetch(), pd.unique(values))
    np.testing.assert_array_equal(md.unique(np.array([3, 1, 3])), pd.unique(np.array([3, 1, 3])))


@pytest.mark.parametrize("chunk_size", [1, 2, 3])
def test_from_records_and_dict(chunk_size):
    records = [(1, "a", 0.5), (2, "b", 1.5), (3, "c", 2.5)]
    expected = pd.DataFrame.from_records(records, columns=["n", "s", "f"], index="n")
    assert_eq(md.from_records(records, columns=["n", "s", "f"], index="n", chunk_size=chunk_size), expected)
    assert_eq(md.DataFrame.from_records(records, chunk_size=chunk_size), pd.DataFrame.from_records(records))
    rec = np.array(records, dtype=[("n", "i8"), ("s", "U1"), ("f", "f8")])
    assert_eq(md.from_records(mt.tensor(rec), chunk_size=chunk_size), pd.DataFrame.from_records(rec))
    data = {"r1": [1, 2], "r2": [3, 4]}
    assert_eq(md.DataFrame.from_dict(data, orient="index", chunk_size=chunk_size),
              pd.DataFrame.from_dict(data, orient="index"))
    assert_eq(md.from_dict(data, chunk_size=chunk_size), pd.DataFrame.from_dict(data))
    assert md.NamedAgg is pd.NamedAgg


class _Sum(md.CustomReduction):
    def agg(self, v):
        return v.sum()


class _Mixed(md.CustomReduction):
    def pre(self, value):
        return value + 1, value ** 2

    def agg(self, v1, v2):
        return v1.sum(), v2.prod()

    def post(self, v1, v2):
        return v1 + v2


@pytest.mark.parametrize("chunk_size", CHUNKS)
def test_custom_reduction(chunk_size):
    frame = pd.DataFrame({"a": [1.0, 2, 3, 4, 5], "b": [0.5, 1, 1.5, 2, 2.5]})
    df = md.DataFrame(frame, chunk_size=chunk_size)
    assert_eq(df.agg(_Mixed()), (frame + 1).sum() + (frame ** 2).prod())
    assert_eq(df.a.agg(_Sum()), frame.a.sum())
    assert_eq(df.aggregate(_Sum()), frame.sum())
    assert_eq(df.agg("sum"), frame.agg("sum"))  # other functions still go to agg
    with pytest.raises(NotImplementedError, match="must define agg"):
        md.CustomReduction()(frame.a)


@pytest.mark.parametrize("chunk_size", CHUNKS)
@pytest.mark.parametrize("name", ["sum", "mean", "min", "max", "prod", "std", "var", "sem", "median", "any", "all"])
def test_reductions_over_both_axes(chunk_size, name):
    frame = pd.DataFrame({"a": [1, 2, 3, 4, 5], "b": [0.5, 1.0, 1.5, 2.0, 2.5], "c": list("vwxyz")})
    df = md.DataFrame(frame, chunk_size=chunk_size)
    numeric = frame[["a", "b"]]
    assert_eq(getattr(md.DataFrame(numeric, chunk_size=chunk_size), name)(axis=None),
              getattr(numeric, name)(axis=None), rtol=1e-12)
    if name not in ("any", "all"):
        assert_eq(getattr(df, name)(axis=None, numeric_only=True), getattr(frame, name)(axis=None, numeric_only=True),
                  rtol=1e-12)
    ints = md.DataFrame(frame[["a"]], chunk_size=chunk_size)
    assert_eq(getattr(ints, name)(axis=None), getattr(frame[["a"]], name)(axis=None), rtol=1e-12)


def test_level_and_count_over_both_axes_raise_like_pandas():
    index = pd.MultiIndex.from_tuples([(1, "x"), (1, "y"), (2, "x")])
    frame = pd.DataFrame({"a": [1, 2, 3]}, index=index)
    df = md.DataFrame(frame, chunk_size=2)
    for name in ("sum", "mean", "max", "std"):
        for obj, pobj in ((df, frame), (df.a, frame.a)):
            with pytest.raises(TypeError) as want:
                getattr(pobj, name)(level=0)
            with pytest.raises(TypeError) as got:
                getattr(obj, name)(level=0)
            assert str(got.value) == str(want.value)
    with pytest.raises(ValueError, match="No axis named None"):
        df.count(axis=None)
    assert_eq(df.a.sum(axis=None), frame.a.sum(axis=None))
