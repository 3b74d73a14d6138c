"""md.read_parquet and to_parquet against pandas, on real files."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import mars.dataframe as md
from tests.dataframe.df_testing import assert_eq, partitionings

CHUNK_BYTES = [1, 2000, "64M"]


def _frame(n: int = 100, seed: int = 0, index: pd.Index | None = None) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "a": np.arange(n),
        "b": rng.random(n),
        "s": rng.choice(["x", "yy", None], n),
        "t": pd.date_range("2021-01-01", periods=n, freq="h"),
    }, index=index)


@pytest.fixture
def pq_file(tmp_path):
    path = tmp_path / "a.parquet"
    _frame(100, index=pd.RangeIndex(5, 505, 5, name="ix")).to_parquet(path, row_group_size=7)
    return path


@pytest.mark.parametrize("chunk_bytes", CHUNK_BYTES)
def test_read_parquet_equals_pandas(pq_file, chunk_bytes):
    df = md.read_parquet(pq_file, chunk_bytes=chunk_bytes)
    expected = pd.read_parquet(pq_file)
    assert expected.index.name == "ix" and expected.index.start == 5
    assert df.shape == expected.shape  # row counts come from the footers, before running
    assert_eq(df, expected)
    assert isinstance(df.fetch().index, pd.RangeIndex)
    if chunk_bytes == 1:
        assert len(df.chunks) == 15  # one per row group
        assert df.nsplits[0] == (7,) * 14 + (2,)


@pytest.mark.parametrize("chunk_bytes", CHUNK_BYTES)
@pytest.mark.parametrize("columns", [["b"], ["s", "a"], []])
def test_columns(pq_file, chunk_bytes, columns):
    assert_eq(md.read_parquet(pq_file, columns=columns, chunk_bytes=chunk_bytes),
              pd.read_parquet(pq_file, columns=columns))


@pytest.mark.parametrize("chunk_bytes", [1, "64M"])
def test_stored_index_columns(tmp_path, chunk_bytes):
    path = tmp_path / "idx.parquet"
    pdf = _frame(50).set_index(["s", "a"])
    pdf.to_parquet(path, row_group_size=9)
    assert_eq(md.read_parquet(path, chunk_bytes=chunk_bytes), pd.read_parquet(path))
    assert_eq(md.read_parquet(path, columns=["t"], chunk_bytes=chunk_bytes), pd.read_parquet(path, columns=["t"]))


def test_file_without_pandas_metadata(tmp_path):
    path = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"x": list(range(30)), "y": [str(i) for i in range(30)]}), path, row_group_size=4)
    assert_eq(md.read_parquet(path, chunk_bytes=1), pd.read_parquet(path))


@pytest.mark.parametrize("chunk_bytes", [1, "64M"])
@pytest.mark.parametrize("filters", [[("a", ">", 50)], [[("a", "<", 10)], [("s", "==", "x")]], [("a", ">", 1000)]])
def test_filters(pq_file, chunk_bytes, filters):
    expected = pd.read_parquet(pq_file, filters=filters)
    assert_eq(md.read_parquet(pq_file, filters=filters, chunk_bytes=chunk_bytes), expected)
    expected = pd.read_parquet(pq_file, filters=filters, columns=["b"])
    assert_eq(md.read_parquet(pq_file, filters=filters, columns=["b"], chunk_bytes=chunk_bytes), expected)


def test_directory_glob_and_list(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    for i in (0, 1, 2, 10):  # pyarrow lists part.10 before part.2
        _frame(8 + i, seed=i).to_parquet(d / f"part.{i}.parquet", row_group_size=5)
    (d / "_SUCCESS").write_text("")
    assert_eq(md.read_parquet(d, chunk_bytes=1), pd.read_parquet(d))
    files = [d / "part.2.parquet", d / "part.0.parquet"]
    expected = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    assert_eq(md.read_parquet(files), expected)
    natural = pd.concat([pd.read_parquet(d / f"part.{i}.parquet") for i in (0, 1, 2, 10)], ignore_index=True)
    assert_eq(md.read_parquet(str(d / "part.*.parquet")), natural)


def test_a_directory_whose_first_file_holds_the_whole_range(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    pdf = _frame(10, index=pd.RangeIndex(3, 13, name="r"))
    pdf.to_parquet(d / "a.parquet")
    pdf.iloc[:0].to_parquet(d / "b.parquet")
    expected = pd.read_parquet(d)
    assert expected.index.name == "r"
    assert_eq(md.read_parquet(d), expected)


def test_empty_file(tmp_path):
    path = tmp_path / "empty.parquet"
    _frame(0).to_parquet(path)
    assert_eq(md.read_parquet(path), pd.read_parquet(path))


def test_categories(tmp_path):
    path = tmp_path / "cat.parquet"
    pd.DataFrame({"k": pd.Categorical(list("aabbccdd")), "v": range(8)}).to_parquet(path, row_group_size=3)
    assert_eq(md.read_parquet(path, chunk_bytes=1), pd.read_parquet(path))


def test_errors(pq_file, tmp_path):
    with pytest.raises(ValueError, match="fastparquet"):
        md.read_parquet(pq_file, engine="fastparquet")
    with pytest.raises(pa.ArrowInvalid, match="zz"):
        md.read_parquet(pq_file, columns=["a", "zz"])
    with pytest.raises(FileNotFoundError, match="nope"):
        md.read_parquet(tmp_path / "nope.parquet")


# ----------------------------------------------------------------- reading less
@pytest.fixture
def reads(monkeypatch):
    """(row groups, columns) of each read the chunk ops make."""
    calls = []
    real = pq.ParquetFile.read_row_groups

    def spy(self, row_groups, columns=None, **kw):
        calls.append((list(row_groups), None if columns is None else list(columns)))
        return real(self, row_groups, columns=columns, **kw)

    monkeypatch.setattr(pq.ParquetFile, "read_row_groups", spy)
    return calls


def test_one_column_of_one_row_group_for_a_head(pq_file, reads):
    expected = pd.read_parquet(pq_file)[["a"]].head(5)
    got = md.read_parquet(pq_file, chunk_bytes="64M")[["a"]].head(5)
    assert_eq(got, expected)
    assert reads == [([0], ["a"])]


def test_a_head_spanning_row_groups_reads_only_those(pq_file, reads):
    expected = pd.read_parquet(pq_file)["s"].head(16)
    assert_eq(md.read_parquet(pq_file, chunk_bytes=1)["s"].head(16), expected)
    assert sorted(g for groups, _ in reads for g in groups) == [0, 1, 2]
    assert all(cols == ["s"] for _, cols in reads)


def test_hooks_directly(pq_file):
    df = md.read_parquet(pq_file, chunk_bytes=1)
    pruned = md.DataFrame(df.op.with_columns(["t", "a"]))
    assert_eq(pruned, pd.read_parquet(pq_file)[["t", "a"]])
    head = md.DataFrame(df.op.with_head(9))
    assert head.shape == (9, 4)
    assert_eq(head, pd.read_parquet(pq_file).head(9))
    assert df.op.with_columns(["a", "a"]) is None
    assert md.read_parquet(pq_file, filters=[("a", ">", 3)]).op.with_head(3) is None


# ----------------------------------------------------------------- writing
@pytest.mark.parametrize("chunk_size", partitionings(20))
@pytest.mark.parametrize("index", [pd.RangeIndex(20), pd.RangeIndex(10, 70, 3, name="r"),
                                   pd.Index(list("abcdefghijklmnopqrst"), name="l")])
def test_to_parquet_one_file_a_row_group_per_partition(tmp_path, chunk_size, index):
    pdf = _frame(20, index=index)
    df = md.DataFrame(pdf, chunk_size=chunk_size)
    path = tmp_path / "out.parquet"
    written = df.to_parquet(path)
    assert not path.exists()  # lazy: nothing is written before .execute()
    assert written.execute() is written
    pdt.assert_frame_equal(pd.read_parquet(path), pdf)
    sizes = [n for n in df.execute().nsplits[0] if n]
    md_ = pq.ParquetFile(path).metadata
    assert [md_.row_group(i).num_rows for i in range(md_.num_row_groups)] == sizes
    expected_meta = pa.Table.from_pandas(pdf).schema.pandas_metadata["index_columns"]
    assert pq.read_schema(path).pandas_metadata["index_columns"] == expected_meta


def test_to_parquet_index_false_and_true(tmp_path):
    pdf = _frame(20, index=pd.RangeIndex(10, 30))
    df = md.DataFrame(pdf, chunk_size=6)
    df.to_parquet(tmp_path / "f.parquet", index=False).execute()
    pdt.assert_frame_equal(pd.read_parquet(tmp_path / "f.parquet"), pdf.reset_index(drop=True))
    df.to_parquet(tmp_path / "t.parquet", index=True).execute()
    pdt.assert_frame_equal(pd.read_parquet(tmp_path / "t.parquet"), pdf, check_index_type=False)
    assert "__index_level_0__" in pq.read_schema(tmp_path / "t.parquet").names


@pytest.mark.parametrize("chunk_size", [3, 20])
def test_to_parquet_directory_and_pattern(tmp_path, chunk_size):
    pdf = _frame(20)
    df = md.DataFrame(pdf, chunk_size=chunk_size)
    df.to_parquet(str(tmp_path / "d") + os.sep).execute()
    n = len(df.execute().chunks)
    names = sorted(os.listdir(tmp_path / "d"))
    assert len(names) == n and names[0] == ("part.0.parquet" if n <= 10 else "part.00.parquet")
    pdt.assert_frame_equal(pd.read_parquet(tmp_path / "d"), pdf)
    assert_eq(md.read_parquet(tmp_path / "d"), pd.read_parquet(tmp_path / "d"))
    df.to_parquet(str(tmp_path / "p-*.parquet"), compression="gzip").execute()
    assert len(list(tmp_path.glob("p-*.parquet"))) == n
    assert_eq(md.read_parquet(str(tmp_path / "p-*.parquet")), pdf)


def test_to_parquet_unifies_partition_schemas(tmp_path):
    # the first partition's strings are all missing: alone it would be a null column
    pdf = pd.DataFrame({"s": [None, None, "a", "b"], "v": [1, 2, 3, 4]})
    md.DataFrame(pdf, chunk_size=2).to_parquet(tmp_path / "u.parquet").execute()
    pdt.assert_frame_equal(pd.read_parquet(tmp_path / "u.parquet"), pdf)


def test_to_parquet_errors(tmp_path):
    df = md.DataFrame(_frame(5), chunk_size=2)
    with pytest.raises(KeyError, match="partition_cols.*'zz'"):
        df.to_parquet(tmp_path / "x", partition_cols=["zz"])
    with pytest.raises(ValueError, match="engine"):
        df.to_parquet(tmp_path / "x.parquet", engine="fastparquet")


# ----------------------------------------------------------------- hive-partitioned directories
def _hive_frame(n: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    return pd.DataFrame({"a": np.arange(n), "year": rng.choice([2020, 2021, 2022], n),
                         "s": rng.choice(["x", "y"], n), "v": rng.random(n)})


@pytest.fixture
def hive_dir(tmp_path):
    path = tmp_path / "hive"
    _hive_frame().to_parquet(path, partition_cols=["year", "s"])
    return path


@pytest.mark.parametrize("chunk_bytes", [1, "64M"])
def test_read_hive_partitioned_as_pandas(hive_dir, chunk_bytes):
    expected = pd.read_parquet(hive_dir)
    assert isinstance(expected["year"].dtype, pd.CategoricalDtype)
    df = md.read_parquet(hive_dir, chunk_bytes=chunk_bytes)
    assert df.shape == expected.shape
    assert_eq(df, expected)
    for columns in (["v", "year"], ["s", "a"], ["year"]):
        assert_eq(md.read_parquet(hive_dir, columns=columns, chunk_bytes=chunk_bytes),
                  pd.read_parquet(hive_dir, columns=columns))


@pytest.mark.parametrize("filters", [[("year", ">", 2020)], [("year", "=", 2021), ("v", "<", 0.5)],
                                     [[("s", "==", "x")], [("a", "<", 5)]], [("year", "==", 1999)]])
def test_hive_filters_prune_files(hive_dir, filters, monkeypatch):
    expected = pd.read_parquet(hive_dir, filters=filters)
    opened = []
    real = pq.ParquetFile.__init__

    def spy(self, source, *args, **kw):
        opened.append(str(source))
        real(self, source, *args, **kw)

    monkeypatch.setattr(pq.ParquetFile, "__init__", spy)
    df = md.read_parquet(hive_dir, filters=filters)
    assert_eq(df, expected)
    if filters == [("year", ">", 2020)]:
        assert opened and not any("year=2020" in p for p in opened)  # pruned before anything is read


@pytest.mark.parametrize("chunk_size", partitionings(30))
def test_to_parquet_partition_cols_round_trip(tmp_path, chunk_size):
    pdf = _hive_frame(30)
    out = tmp_path / "out"
    written = md.DataFrame(pdf, chunk_size=chunk_size).to_parquet(out, partition_cols=["year"])
    assert not out.exists()
    written.execute()
    assert sorted(p.name for p in out.iterdir()) == ["year=2020", "year=2021", "year=2022"]
    pdf.to_parquet(tmp_path / "pandas", partition_cols=["year"])
    expected = pd.read_parquet(tmp_path / "pandas")
    got = pd.read_parquet(out)
    # the same rows in each partition directory, in the same order (files are written partition by partition)
    pdt.assert_frame_equal(got, expected)
    assert_eq(md.read_parquet(out, filters=[("year", "!=", 2021)]),
              pd.read_parquet(out, filters=[("year", "!=", 2021)]))
