"""reindex, reindex_like and align equal pandas on every partitioning; each new partition gathers only the
input partitions that hold its rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, lazy, partitionings, same_error_when_run

import mars.dataframe as md
from mars.dataframe.methods.align import TakeRows

PDF = pd.DataFrame({"a": [1, 2, 3, 4, 5, 6], "b": list("uvwxyz"), "c": [0.5, np.nan, 1.5, 2.5, 3.5, 4.5]},
                   index=[10, 20, 30, 40, 50, 60])
CHUNKS = partitionings(len(PDF))


@pytest.mark.parametrize("chunk_size", CHUNKS)
@pytest.mark.parametrize("kw", [
    {"index": [30, 15, 10, 70]},
    {"index": [60, 50, 10]},
    {"index": [12, 25, 60, 65], "method": "ffill"},
    {"index": [5, 25, 61], "method": "bfill", "limit": 1},
    {"index": [12, 27, 44, 100], "method": "nearest", "tolerance": 4},
    {"index": [30, 15, 70], "fill_value": "-"},
    {"index": []},
    {"columns": ["c", "x", "a"]},
    {"index": [20, 25], "columns": ["b", "a"], "fill_value": "?"},
])
def test_frame_reindex(chunk_size, kw):
    assert_eq(lazy(PDF, chunk_size).reindex(**kw), PDF.reindex(**kw), check_meta=False)


@pytest.mark.parametrize("chunk_size", CHUNKS)
def test_series_reindex_with_a_lazy_index_and_the_meta_after_running(chunk_size):
    s = PDF["a"]
    result = lazy(s, chunk_size).reindex(md.Index([40, 45, 10], chunk_size=2))
    assert_eq(result, s.reindex([40, 45, 10]), check_meta=False)
    assert result.dtype == np.float64  # the metadata follows the run: a missing label makes ints float
    assert_eq(lazy(s, chunk_size).reindex([10, 20]), s.reindex([10, 20]))  # no label missing: the meta holds


def test_reindex_errors_are_pandas():
    dup = pd.Series([1, 2], index=[1, 1])
    same_error_when_run(lambda: md.Series(dup).reindex([1, 2]), lambda: dup.reindex([1, 2]), ValueError)
    with pytest.raises(ValueError, match="Invalid fill method"):
        md.Series([1]).reindex([0], method="sideways")
    s = pd.Series([1, 2], index=[1, 3])
    same_error_when_run(lambda: md.Series(s).reindex([2], method="nearest", tolerance=[1, 2]),
                        lambda: s.reindex([2], method="nearest", tolerance=[1, 2]), ValueError)


def test_each_new_partition_reads_only_the_partitions_holding_its_rows():
    s = pd.Series(np.arange(100), index=np.arange(100))
    result = md.Series(s, chunk_size=10).reindex(np.arange(100)[::-1])
    assert_eq(result, s.reindex(np.arange(100)[::-1]))
    graph_inputs = [len(c.inputs) for c in result.data.chunks if isinstance(c.op, TakeRows)]
    assert graph_inputs and max(graph_inputs) <= 2


@pytest.mark.parametrize("chunk_size", CHUNKS)
def test_reindex_like(chunk_size):
    other = pd.DataFrame({"c": [1.0, 2.0, 3.0], "q": [1, 2, 3]}, index=[50, 10, 35])
    assert_eq(lazy(PDF, chunk_size).reindex_like(md.DataFrame(other, chunk_size=2)), PDF.reindex_like(other),
              check_meta=False)
    assert_eq(lazy(PDF["a"], chunk_size).reindex_like(other["c"], method="ffill"),
              PDF["a"].reindex_like(other["c"], method="ffill"), check_meta=False)


@pytest.mark.parametrize("chunk_size", CHUNKS)
@pytest.mark.parametrize("join", ["outer", "inner", "left", "right"])
def test_align(chunk_size, join):
    other = pd.DataFrame({"c": [1.0, 2.0], "d": [3, 4], "a": [5, 6]}, index=[35, 10])
    left, right = lazy(PDF, chunk_size).align(md.DataFrame(other, chunk_size=1), join=join)
    el, er = PDF.align(other, join=join)
    assert_eq(left, el, check_meta=False)
    assert_eq(right, er, check_meta=False)
    sl, sr = lazy(PDF["c"], chunk_size).align(other["d"], join=join, fill_value=0)
    el, er = PDF["c"].align(other["d"], join=join, fill_value=0)
    assert_eq(sl, el, check_meta=False)
    assert_eq(sr, er, check_meta=False)
    assert_eq(sl + sr, el + er, check_meta=False)  # aligned outputs share a partitioning


@pytest.mark.parametrize("axis", [0, 1])
def test_align_one_axis_and_a_series(axis):
    other = pd.DataFrame({"c": [1.0, 2.0], "d": [3, 4]}, index=[35, 10])
    for got, want in zip(md.DataFrame(PDF, chunk_size=4).align(md.DataFrame(other), axis=axis),
                         PDF.align(other, axis=axis)):
        assert_eq(got, want, check_meta=False)
    for got, want in zip(md.DataFrame(PDF, chunk_size=4).align(md.Series(other["d"]), axis=0),
                         PDF.align(other["d"], axis=0)):
        assert_eq(got, want, check_meta=False)
    with pytest.raises(ValueError, match="Must specify axis=0 or 1"):
        md.DataFrame(PDF).align(md.Series(other["d"]))
