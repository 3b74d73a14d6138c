"""infer_objects, convert_dtypes, combine, compare, transpose, dot, divmod, case_when, xs, isetitem, select,
axes, Series.get/pop, from_arrow, to_orc/to_feather equal pandas on every partitioning."""

from __future__ import annotations

import glob
import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from df_testing import assert_eq, lazy, partitionings

import mars.dataframe as md
import mars.tensor as mt

PDF = pd.DataFrame({"a": [1, 2, 3, 4, 5, 6], "b": [1.5, 2.0, np.nan, 4.0, 5.0, 6.0], "c": list("uvwxyz")},
                   index=[10, 20, 30, 40, 50, 60])
CHUNKS = partitionings(len(PDF))


@pytest.mark.parametrize("chunk_size", CHUNKS)
def test_dtypes_decided_over_all_partitions(chunk_size):
    objects = pd.DataFrame({"ints": [1, 2, 3, 4, 5, None], "mixed": [1, 2, 3, "x", 5, 6],
                            "floats": [1, 2.5, 3, 4, 5, 6], "dates": [pd.Timestamp("2000")] * 5 + [None]},
                           dtype=object)
    assert_eq(lazy(objects, chunk_size).infer_objects(), objects.infer_objects(), check_meta=False)
    assert_eq(lazy(objects["ints"], chunk_size).infer_objects(), objects["ints"].infer_objects(), check_meta=False)
    frame = PDF.assign(d=[1.0, 2.0, 3.0, 4.0, 5.0, 6.5], e=[True, False, None, True, True, False])
    assert_eq(lazy(frame, chunk_size).convert_dtypes(), frame.convert_dtypes(), check_meta=False)
    assert_eq(lazy(frame, chunk_size).convert_dtypes(convert_integer=False),
              frame.convert_dtypes(convert_integer=False), check_meta=False)
    assert_eq(lazy(objects, chunk_size).convert_dtypes(), objects.convert_dtypes(), check_meta=False)


@pytest.mark.parametrize("chunk_size", CHUNKS)
def test_combine(chunk_size):
    other = pd.Series([10, 0, 5], index=[20, 70, 40])
    s = lazy(PDF["a"], chunk_size)
    assert_eq(s.combine(md.Series(other, chunk_size=2), max), PDF["a"].combine(other, max), check_meta=False)
    same_labels = PDF["a"] * 2
    assert_eq(s.combine(s * 2, min, fill_value=0), PDF["a"].combine(same_labels, min, fill_value=0),
              check_meta=False)
    with pytest.raises(NotImplementedError, match="align them first"):
        s.combine(md.Series(other), min, fill_value=0)
    assert_eq(s.combine(3, lambda x, y: x * y), PDF["a"].combine(3, lambda x, y: x * y), check_meta=False)
    o = pd.DataFrame({"a": [9, 0], "b": [0.0, 9.0]}, index=[10, 20])
    f = lambda x, y: x.where(x > y, y)
    assert_eq(lazy(PDF[["a", "b"]], chunk_size).combine(md.DataFrame(o), f), PDF[["a", "b"]].combine(o, f),
              check_meta=False)


@pytest.mark.parametrize("chunk_size", CHUNKS)
@pytest.mark.parametrize("kw", [{}, {"keep_shape": True}, {"keep_equal": True}, {"align_axis": 0},
                                {"keep_shape": True, "keep_equal": True, "result_names": ("l", "r")}])
def test_compare(chunk_size, kw):
    other = PDF.copy()
    other.loc[30, "a"] = 9
    other.loc[50, "c"] = "q"
    got = lazy(PDF, chunk_size).compare(md.DataFrame(other, chunk_size=4), **kw)
    assert_eq(got, PDF.compare(other, **kw), check_meta=False)
    assert_eq(lazy(PDF["a"], chunk_size).compare(md.Series(other["a"]), **kw), PDF["a"].compare(other["a"], **kw),
              check_meta=False)


def test_compare_errors():
    with pytest.raises(ValueError, match="identically-labeled"):
        md.DataFrame(PDF).compare(md.DataFrame(PDF[["a"]]))
    with pytest.raises(TypeError, match="can only compare"):
        md.DataFrame(PDF).compare(md.Series(PDF["a"]))


@pytest.mark.parametrize("chunk_size", CHUNKS)
def test_transpose_and_dot(chunk_size):
    df = lazy(PDF, chunk_size)
    assert_eq(df.T, PDF.T, check_meta=False)  # the columns (the rows' labels) are known once it runs
    transposed = df[["a", "b"]].transpose()
    assert_eq(transposed, PDF[["a", "b"]].transpose(), check_meta=False)
    column = df["a"]
    assert column.T is column and column.transpose() is column
    o = pd.DataFrame([[1, 2], [3, 4]], index=["a", "b"], columns=["x", "y"])
    nums = PDF[["a", "b"]]
    assert_eq(df[["a", "b"]].dot(md.DataFrame(o)), nums.dot(o))
    assert_eq(df[["a", "b"]] @ o, nums @ o)
    assert_eq(df[["a", "b"]].dot(o["x"]), nums.dot(o["x"]))
    assert_eq(df[["a", "b"]].dot(np.array([1, 2])), nums.dot(np.array([1, 2])))
    assert_eq(df[["a", "b"]].dot(mt.tensor(o.to_numpy())), nums.dot(o.to_numpy()))
    assert_eq(df["a"].dot(df["b"]), PDF["a"].dot(PDF["b"]))
    assert_eq(df["a"].dot(md.DataFrame(nums)), PDF["a"].dot(nums))


@pytest.mark.parametrize("chunk_size", CHUNKS)
def test_divmod_and_case_when(chunk_size):
    s = lazy(PDF["a"], chunk_size)
    for got, want in zip(s.divmod(4), PDF["a"].divmod(4)):
        assert_eq(got, want)
    for got, want in zip(s.rdivmod(7), PDF["a"].rdivmod(7)):
        assert_eq(got, want)
    for got, want in zip(divmod(7, s), divmod(7, PDF["a"])):
        assert_eq(got, want)
    p = PDF["a"]
    assert_eq(s.case_when([(s > 4, 0), (s > 2, -1)]), p.case_when([(p > 4, 0), (p > 2, -1)]))
    assert_eq(s.case_when([(lambda x: x % 2 == 0, lambda x: x * 10.5)]),
              p.case_when([(lambda x: x % 2 == 0, lambda x: x * 10.5)]))
    assert_eq(s.case_when([(p > 3, PDF["b"])]), p.case_when([(p > 3, PDF["b"])]))
    with pytest.raises(NotImplementedError, match="pass a Series"):
        s.case_when([(np.ones(6, bool), 0)])


@pytest.mark.parametrize("chunk_size", [1, 2, 5])
def test_xs(chunk_size):
    ix = pd.MultiIndex.from_tuples([("a", 1, "x"), ("a", 2, "y"), ("b", 1, "x"), ("b", 2, "x"), ("c", 1, "y")],
                                   names=["k", "n", "m"])
    pdf = pd.DataFrame({"v": [1, 2, 3, 4, 5], "w": list("pqrst")}, index=ix)
    df = lazy(pdf, chunk_size)
    for kw in [{"key": "a"}, {"key": 1, "level": 1}, {"key": ("b", 1)}, {"key": 1, "level": "n", "drop_level": False},
               {"key": (1, "x"), "level": ["n", "m"]}]:
        assert_eq(df.xs(**kw), pdf.xs(**kw))
    assert_eq(df["v"].xs("b"), pdf["v"].xs("b"))
    assert_eq(df.xs("w", axis=1), pdf.xs("w", axis=1))
    flat = lazy(PDF, chunk_size)
    assert_eq(flat.xs(30), PDF.xs(30), check_meta=False)


@pytest.mark.parametrize("chunk_size", CHUNKS)
def test_isetitem_select_axes(chunk_size):
    df, expected = lazy(PDF, chunk_size), PDF.copy()
    df.isetitem(1, 0)
    expected.isetitem(1, 0)
    assert_eq(df, expected)
    df.isetitem(0, md.Series(PDF["b"] * 2))
    expected.isetitem(0, PDF["b"] * 2)
    assert_eq(df, expected)
    df = lazy(PDF, chunk_size)
    assert_eq(df.select("c", "a"), PDF.select("c", "a"))
    assert_eq(df.select(["b"], d=lambda d: d.a + 1), PDF.select(["b"], d=lambda d: d.a + 1))
    with pytest.raises(KeyError):
        df.select("zz")
    index, columns = df.axes
    assert_eq(index, PDF.index)
    assert list(columns) == list(PDF.columns)


def test_series_get_pop_and_from_arrow():
    s = md.Series(PDF["c"], chunk_size=2)
    assert s.get(40) == "x" and s.get(99, "none") == "none" and s.get(99) is None
    pd.testing.assert_series_equal(s.get([20, 50]), PDF["c"].get([20, 50]))
    value = s.pop(20)
    expected = PDF["c"].copy()
    assert value == expected.pop(20)
    assert_eq(s, expected)
    with pytest.raises(KeyError):
        s.pop(20)
    table = pa.table({"a": [1, 2], "b": ["x", None]})
    assert_eq(md.DataFrame.from_arrow(table), pd.DataFrame.from_arrow(table))
    assert_eq(md.Series.from_arrow(pa.array([1.5, None])), pd.Series.from_arrow(pa.array([1.5, None])))


@pytest.mark.parametrize("chunk_size", CHUNKS)
@pytest.mark.parametrize("fmt", ["orc", "feather"])
def test_lazy_orc_and_feather_writers(tmp_path, chunk_size, fmt):
    frame = PDF.reset_index(drop=True)
    df = lazy(frame, chunk_size)
    write = getattr(df, f"to_{fmt}")
    read = getattr(pd, f"read_{fmt}")
    one = str(tmp_path / f"one.{fmt}")
    lazy_writer = write(one)
    assert not os.path.exists(one)  # nothing written before execute()
    lazy_writer.execute()
    pd.testing.assert_frame_equal(read(one), frame)
    write(str(tmp_path / f"part-*.{fmt}")).execute()
    files = sorted(glob.glob(str(tmp_path / f"part-*.{fmt}")))
    assert len(files) == len(df.execute().data.chunks)
    back = pd.concat([read(f) for f in files], ignore_index=True)
    pd.testing.assert_frame_equal(back, frame)
    with pytest.raises(ValueError, match="one file per partition"):
        write(one, single_file=False)


def test_transpose_of_a_homogeneous_frame_keeps_its_dtype():
    pdf = pd.DataFrame({"a": [1, 2, 3], "b": [4, 5, 6]}, index=list("xyz"))
    result = md.DataFrame(pdf, chunk_size=2).T
    assert_eq(result, pdf.T, check_meta=False)
    assert result.shape == (2, 3) and list(result.dtypes) == [np.dtype(np.int64)] * 3
