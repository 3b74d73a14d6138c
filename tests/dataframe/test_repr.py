"""What a DataFrame, Series or Index shows: columns, dtypes and partitions before running, pandas' view after."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mars.dataframe as md

PDF = pd.DataFrame({"a": range(10), "b": list("abcdefghij"), "c": np.linspace(0, 1, 10)})
CHUNKINGS = [(10, "1", "(10,)"), (4, "3", "(4, 4, 2)"), (1, "10", "(1, 1, 1, <5 more>, 1, 1)")]


@pytest.mark.parametrize("chunk_size, n, rows", CHUNKINGS)
def test_a_dataframe_before_running_shows_columns_dtypes_and_partitions(chunk_size, n, rows):
    df = md.DataFrame(PDF, chunk_size=chunk_size)
    lines = repr(df).splitlines()
    assert lines[0] == f"DataFrame(rows=10, npartitions={n}, partition_rows={rows}, op=FromPandas)"
    assert lines[1].split() == ["a", "b", "c"]
    assert lines[2].split() == ["dtype", "int64", str(PDF.dtypes["b"]), "float64"]
    assert len(lines) == 3
    assert df.chunks is None  # showing the layout did not tile the user's frame
    page = df._repr_html_()
    assert "<table" in page and "<th>a</th>" in page and "float64" in page and f"<td>{n}</td>" in page


@pytest.mark.parametrize("chunk_size, n, rows", CHUNKINGS)
def test_a_series_and_an_index_before_running(chunk_size, n, rows):
    df = md.DataFrame(PDF, chunk_size=chunk_size)
    assert repr(df["c"]) == (f"Series(name='c', dtype=float64, length=10, npartitions={n}, "
                             f"partition_rows={rows}, op=SelectColumns)")
    assert repr(df.index).startswith(f"Index(name=None, dtype=int64, length=10, npartitions={n}, ")
    assert "<table>" in df["c"]._repr_html_()


def test_rows_unknown_before_running_after_a_filter():
    df = md.DataFrame(PDF, chunk_size=4)
    kept = df[df["a"] > 3]
    assert repr(kept).splitlines()[0].startswith("DataFrame(rows=?, npartitions=3, partition_rows=(?, ?, ?), ")
    kept.execute()
    assert repr(kept) == repr(PDF[PDF["a"] > 3])


def test_a_layout_that_needs_data_first_shows_a_question_mark(_fresh_session):
    df = md.DataFrame(PDF, chunk_size=3).sort_values("c")
    assert repr(df).splitlines()[0] == "DataFrame(rows=10, npartitions=?, op=SortRows)"
    assert not _fresh_session.is_executed(df)


@pytest.mark.parametrize("chunk_size", [10, 3, 1])
def test_after_running_pandas_own_repr_and_html(chunk_size):
    df = md.DataFrame(PDF, chunk_size=chunk_size).execute()
    assert repr(df) == repr(PDF)
    assert df._repr_html_() == PDF._repr_html_()
    s = md.DataFrame(PDF, chunk_size=chunk_size)["b"].execute()
    assert repr(s) == repr(PDF["b"])
    index = md.DataFrame(PDF, chunk_size=chunk_size).index.execute()
    assert repr(index) == repr(PDF.index)


def test_a_large_result_is_truncated_as_pandas_does():
    big = pd.DataFrame({"x": np.arange(10_000), "y": np.arange(10_000) * 0.5})
    df = md.DataFrame(big, chunk_size=999).execute()
    assert repr(df) == repr(big)
    assert "[10000 rows x 2 columns]" in repr(df) and len(repr(df).splitlines()) < 20


def test_many_columns_are_truncated_in_the_dtype_table():
    wide = pd.DataFrame({f"col{i}": range(3) for i in range(60)})
    with pd.option_context("display.max_columns", 10):
        text = repr(md.DataFrame(wide, chunk_size=2))
    assert "..." in text.splitlines()[1] and "col59" in text and "col30" not in text
