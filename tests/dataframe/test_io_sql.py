"""md.read_sql / read_sql_table / read_sql_query against pandas, on a real SQLite file through SQLAlchemy."""

from __future__ import annotations

import sqlite3

import numpy as np
import pandas as pd
import pytest
import sqlalchemy as sa

import mars.dataframe as md
from mars.dataframe.io import sql as sql_io
from mars.dataframe.io.sql import _engine
from tests.dataframe.df_testing import assert_eq

N = 60
CHUNK_SIZES = [1, 7, N, 1000]


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "id": np.arange(N),
        # NULLs only late, and only early: the first page alone would mislead the dtypes
        "late_null": pd.array([None if i == N - 3 else i for i in range(N)], dtype="Int64"),
        "early_null": [None if i < 20 else f"v{i}" for i in range(N)],
        "x": rng.random(N),
        "s": rng.choice(["a", "bb", "ccc"], N),
        "when": pd.date_range("2022-01-01", periods=N, freq="D"),
        "flag": [bool(i % 2) for i in range(N)],
        "void": [None] * N,
    })


@pytest.fixture
def db(tmp_path, monkeypatch):
    # metadata from the first 10 rows: the NULLs of late_null and the values of early_null are not in them
    monkeypatch.setattr(sql_io, "_SAMPLE_ROWS", 10)
    url = f"sqlite:///{tmp_path / 'test.db'}"
    engine = sa.create_engine(url)
    _frame().to_sql("t", engine, index=False)
    pd.DataFrame({"a": pd.Series([], dtype="int64"), "b": pd.Series([], dtype="str")}).to_sql("empty", engine,
                                                                                             index=False)
    yield url, engine
    engine.dispose()
    _engine(url).dispose()


@pytest.mark.parametrize("chunk_size", CHUNK_SIZES)
def test_read_sql_table(db, chunk_size):
    url, engine = db
    df = md.read_sql_table("t", url, chunk_size=chunk_size)
    expected = pd.read_sql_table("t", engine)
    assert df.shape == expected.shape  # counted when built
    assert_eq(df, expected)
    assert isinstance(df.fetch().index, pd.RangeIndex)


@pytest.mark.parametrize("chunk_size", CHUNK_SIZES)
def test_read_sql_query(db, chunk_size):
    url, engine = db
    sql = "SELECT * FROM t WHERE id % 3 != 1 ORDER BY x"
    assert_eq(md.read_sql_query(sql, url, chunk_size=chunk_size), pd.read_sql_query(sql, engine))
    kw = {"parse_dates": ["when"], "params": (10,), "index_col": "id"}
    sql = 'SELECT id, "when", s FROM t WHERE id > ?'
    assert_eq(md.read_sql_query(sql, engine, chunk_size=chunk_size, **kw), pd.read_sql_query(sql, engine, **kw))
    kw = {"dtype": {"x": "float32", "id": "int32"}, "coerce_float": False}
    assert_eq(md.read_sql_query("SELECT * FROM t", url, chunk_size=chunk_size, **kw),
              pd.read_sql_query("SELECT * FROM t", engine, **kw))


@pytest.mark.parametrize("chunk_size", [7, 1000])
def test_read_sql_dispatch_and_options(db, chunk_size):
    url, engine = db
    for kw in [{"index_col": "id"}, {"index_col": ["s", "id"]}, {"columns": ["s", "x"]},
               {"columns": ["x"], "index_col": "id"}, {"parse_dates": {"when": {"format": "%Y-%m-%d %H:%M:%S"}}}]:
        assert_eq(md.read_sql("t", url, chunk_size=chunk_size, **kw), pd.read_sql("t", engine, **kw))
    sql = sa.select(sa.table("t", sa.column("id"), sa.column("s"))).where(sa.column("id") < 9)
    assert_eq(md.read_sql(sql, engine, chunk_size=chunk_size), pd.read_sql(sql, engine))


@pytest.mark.parametrize("num_partitions", [1, 4, 9])
def test_ranges_of_a_partition_column(db, num_partitions):
    url, engine = db
    df = md.read_sql_table("t", url, partition_col="id", num_partitions=num_partitions)
    assert_eq(df, pd.read_sql_table("t", engine))
    assert len(df.chunks) == num_partitions
    sql = "SELECT * FROM t ORDER BY x"  # rows come range by range: equal when the query is in that order
    df = md.read_sql_query(sql, url, partition_col="x", num_partitions=num_partitions, index_col="id")
    assert_eq(df, pd.read_sql_query(sql, engine, index_col="id"))
    df = md.read_sql_table("t", url, partition_col="when", num_partitions=num_partitions)
    assert_eq(df, pd.read_sql_table("t", engine))


def test_partition_column_with_nulls_reads_them_last(db):
    url, engine = db
    df = md.read_sql_table("t", url, partition_col="late_null", num_partitions=3)
    expected = pd.read_sql_table("t", engine)
    null = expected["late_null"].isna()
    assert_eq(df, pd.concat([expected[~null], expected[null]], ignore_index=True))


def test_empty_table(db):
    url, engine = db
    assert_eq(md.read_sql_table("empty", url, chunk_size=3), pd.read_sql_table("empty", engine))
    assert_eq(md.read_sql_query("SELECT * FROM t WHERE 0", url), pd.read_sql_query("SELECT * FROM t WHERE 0", engine))


def test_pages_read_only_the_selected_columns_and_rows(db):
    url, engine = db
    df = md.read_sql_table("t", url, chunk_size=7)
    statements = []

    def record(conn, cursor, statement, *args):
        statements.append(statement)

    sa.event.listen(_engine(url), "before_cursor_execute", record)
    try:
        got = df[["s", "x"]].head(3)
        assert_eq(got, pd.read_sql_table("t", engine)[["s", "x"]].head(3))
    finally:
        sa.event.remove(_engine(url), "before_cursor_execute", record)
    selects = [s for s in statements if s.lstrip().upper().startswith("SELECT") and "LIMIT" in s.upper()]
    assert len(selects) == 1, statements
    assert "t.s, t.x" in selects[0] and "t.id" not in selects[0]


def test_hooks_directly(db):
    url, engine = db
    df = md.read_sql_query("SELECT * FROM t", url, chunk_size=5, index_col="id")
    pruned = md.DataFrame(df.op.with_columns(["x", "s"]))
    assert_eq(pruned, pd.read_sql_query("SELECT * FROM t", engine, index_col="id")[["x", "s"]])
    head = md.DataFrame(df.op.with_head(12))
    assert head.shape == (12, df.shape[1])
    assert_eq(head, pd.read_sql_query("SELECT * FROM t", engine, index_col="id").head(12))
    assert md.read_sql_table("t", url, partition_col="id").op.with_head(3) is None


def test_errors(db, tmp_path):
    url, _ = db
    with pytest.raises(ValueError, match="Table nope not found"):
        md.read_sql_table("nope", url)
    with pytest.raises(TypeError, match="sqlite3.Connection|Connection"):
        md.read_sql("SELECT 1", sqlite3.connect(tmp_path / "x.db"))
    with pytest.raises(ValueError, match="in-memory"):
        md.read_sql("SELECT 1 AS a", "sqlite://")
    with pytest.raises(KeyError, match="partition_col 'zz'"):
        md.read_sql_table("t", url, partition_col="zz")
    with pytest.raises(KeyError, match="zz"):
        md.read_sql_query("SELECT * FROM t", url, index_col="zz")


# ----------------------------------------------------------------- to_sql
@pytest.mark.parametrize("chunk_size", [N, 7, (1, 30, 0, 29), 1])
def test_to_sql_round_trip_equals_pandas(db, tmp_path, chunk_size):
    url, engine = db
    pdf = _frame().drop(columns=["void"])
    df = md.DataFrame(pdf, chunk_size=chunk_size)
    written = df.to_sql("out", url, index=False)
    assert not sa.inspect(engine).has_table("out")  # lazy
    assert written.execute() is written
    pdf.to_sql("expected", engine, index=False)
    # partitions after the first insert in parallel: a table has no order, compare in "id" order
    got = pd.read_sql_table("out", engine).sort_values("id", ignore_index=True)
    pd.testing.assert_frame_equal(got, pd.read_sql_table("expected", engine))
    # the same SQL types as pandas gives the table
    cols = {c["name"]: str(c["type"]) for c in sa.inspect(engine).get_columns("out")}
    assert cols == {c["name"]: str(c["type"]) for c in sa.inspect(engine).get_columns("expected")}


def test_to_sql_if_exists_and_index(db):
    url, engine = db
    pdf = pd.DataFrame({"a": range(10), "b": [f"s{i}" for i in range(10)]}, index=pd.Index(range(5, 15), name="ix"))
    df = md.DataFrame(pdf, chunk_size=3)
    df.to_sql("w", url).execute()
    pd.testing.assert_frame_equal(pd.read_sql_table("w", engine, index_col="ix").sort_index(), pdf)
    with pytest.raises(ValueError, match="already exists"):
        df.to_sql("w", url).execute()
    df.to_sql("w", engine, if_exists="append").execute()
    assert len(pd.read_sql_table("w", engine)) == 20
    df.to_sql("w", url, if_exists="replace", index=False).execute()
    pd.testing.assert_frame_equal(pd.read_sql_table("w", engine).sort_values("a", ignore_index=True),
                                  pdf.reset_index(drop=True))
    md.Series(pdf["a"], chunk_size=4).to_sql("ser", url).execute()
    pd.testing.assert_series_equal(pd.read_sql_table("ser", engine, index_col="ix")["a"].sort_index(), pdf["a"])
    with pytest.raises(ValueError, match="'nope' is not valid for if_exists"):
        df.to_sql("w", url, if_exists="nope")
    with pytest.raises(ValueError, match="in-memory"):
        df.to_sql("w", "sqlite://")


def test_to_sql_a_failing_partition_rolls_back_only_its_rows(db):
    url, engine = db
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE u (a INTEGER UNIQUE)")
    pdf = pd.DataFrame({"a": [1, 2, 3, 4, 4, 5]})
    with pytest.raises(Exception, match="UNIQUE"):
        md.DataFrame(pdf, chunk_size=3).to_sql("u", url, if_exists="append", index=False).execute()
    # the first partition's transaction committed; the second (1 duplicate) left nothing
    assert sorted(pd.read_sql_table("u", engine)["a"]) == [1, 2, 3]
