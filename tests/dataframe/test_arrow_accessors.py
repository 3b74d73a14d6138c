"""``Series.list`` and ``Series.struct`` on pyarrow-backed values against pandas across partitionings."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from df_testing import assert_eq, partitionings, same_error

import mars.dataframe as md

LISTS = pd.Series([[1, 2], [3], None, [], [4, 5, 6], [7], [8, 9], [10]],
                  dtype=pd.ArrowDtype(pa.list_(pa.int64())), index=list("abcdefgh"), name="l")
INNER = pa.struct([("x", pa.float64())])
STRUCTS = pd.Series([{"a": i, "b": f"s{i}" if i % 3 else None, "c": {"x": i / 2}} for i in range(8)],
                    dtype=pd.ArrowDtype(pa.struct([("a", pa.int64()), ("b", pa.string()), ("c", INNER)])),
                    name="st")
PARTS = partitionings(8)


@pytest.mark.parametrize("cs", PARTS)
def test_list_accessor(cs):
    s = md.Series(LISTS, chunk_size=cs)
    assert_eq(s.list.len(), LISTS.list.len())
    assert_eq(s.list.flatten(), LISTS.list.flatten())
    assert_eq(s.list[0:2], LISTS.list[0:2])
    assert_eq(s.list[1::2], LISTS.list[1::2])
    same_error(lambda: s.list[::-1], lambda: LISTS.list[::-1])
    full = md.Series(LISTS.iloc[[0, 4, 6]], chunk_size=2)
    assert_eq(full.list[0], LISTS.iloc[[0, 4, 6]].list[0])
    assert_eq(full.list[1], LISTS.iloc[[0, 4, 6]].list[1])
    with pytest.raises(pa.ArrowInvalid, match="out of bounds"):
        s.list[0].execute()  # an empty list has no item 0, as pandas says
    with pytest.raises(TypeError, match="not iterable"):
        iter(s.list)


@pytest.mark.parametrize("cs", PARTS)
def test_struct_accessor(cs):
    s = md.Series(STRUCTS, chunk_size=cs)
    pd.testing.assert_series_equal(s.struct.dtypes, STRUCTS.struct.dtypes)
    for key in ("a", 1, ["c", "x"], [2, 0], pc.field("b")):
        assert_eq(s.struct.field(key), STRUCTS.struct.field(key))
    assert_eq(s.struct.explode(), STRUCTS.struct.explode())
    kept = (s.struct.field("a") > 2).astype(bool)  # a lazy bool[pyarrow] mask cannot select rows yet
    assert_eq(s[kept].struct.field("b"), STRUCTS[STRUCTS.struct.field("a") > 2].struct.field("b"))
    same_error(lambda: s.struct.field("nope"), lambda: STRUCTS.struct.field("nope"))


def test_other_dtypes_are_refused_as_pandas_does():
    plain = pd.Series([1.0, 2.0])
    same_error(lambda: md.Series(plain).list, lambda: plain.list)
    same_error(lambda: md.Series(plain).struct, lambda: plain.struct)
    same_error(lambda: md.Series(LISTS).struct, lambda: LISTS.struct)
    same_error(lambda: md.Series(STRUCTS).list, lambda: STRUCTS.list)
