"""md.read_csv and to_csv against pandas, on real files, across chunk sizes."""

from __future__ import annotations

import gzip
import io

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

import mars.dataframe as md
from mars.dataframe.io.csv import ReadCSV, ReadCSVRange
from tests.dataframe.df_testing import assert_eq, partitionings

CHUNK_BYTES = [None, 1, 7, 64, 1000, "64M"]


def _frame(n: int = 200, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "k": rng.integers(0, 10, n),
        "x": rng.random(n).round(4),
        "s": rng.choice(["alpha", "beta", "", "gamma delta"], n),
        "f": np.where(rng.random(n) < 0.2, np.nan, rng.random(n).round(3)),
    })


def _read(path, **kw) -> pd.DataFrame:
    value = md.read_csv(path, **kw).execute().fetch()
    return value


@pytest.fixture
def csv_file(tmp_path):
    path = tmp_path / "a.csv"
    _frame().to_csv(path, index=False)
    return path


@pytest.mark.parametrize("chunk_bytes", CHUNK_BYTES)
def test_read_csv_equals_pandas_across_chunk_bytes(csv_file, chunk_bytes):
    df = md.read_csv(csv_file, chunk_bytes=chunk_bytes)
    expected = pd.read_csv(csv_file)
    assert_eq(df, expected)
    value = df.fetch()
    assert isinstance(value.index, pd.RangeIndex)
    if chunk_bytes in (1, 7, 64):
        assert len(df.chunks) > 10
        assert df.nsplits[0] and sum(df.nsplits[0]) == len(expected)  # row counts known after running


@pytest.mark.parametrize("chunk_bytes", [5, 6, 7, 12, 13])
def test_chunks_ending_exactly_at_line_boundaries(tmp_path, chunk_bytes):
    # "a,b\n" is 4 bytes and every row "dd,dd\n" 6: with chunk_bytes 6 or 12 every cut is a line start
    path = tmp_path / "fixed.csv"
    path.write_bytes(b"a,b\n" + b"".join(b"%02d,%02d\n" % (i, 99 - i) for i in range(30)))
    assert_eq(md.read_csv(path, chunk_bytes=chunk_bytes), pd.read_csv(path))


@pytest.mark.parametrize("chunk_bytes", [1, 5, 9, 1000])
def test_no_trailing_newline(tmp_path, chunk_bytes):
    path = tmp_path / "nonl.csv"
    path.write_bytes(b"a,b\n1,x\n2,y\n3,z")
    assert_eq(md.read_csv(path, chunk_bytes=chunk_bytes), pd.read_csv(path))


@pytest.mark.parametrize("chunk_bytes", [1, 3, 10, 1000])
def test_crlf_line_endings(tmp_path, chunk_bytes):
    path = tmp_path / "crlf.csv"
    path.write_bytes(b"a,b,c\r\n1,x,1.5\r\n2,yy,\r\n3,z,2.5\r\n4,,3.0\r\n")
    expected = pd.read_csv(path)
    assert expected["c"].dtype == np.float64
    assert_eq(md.read_csv(path, chunk_bytes=chunk_bytes), expected)


@pytest.mark.parametrize("chunk_bytes", [1, 1000])
def test_header_only_file(tmp_path, chunk_bytes):
    path = tmp_path / "empty.csv"
    path.write_text("a,b,c\n")
    expected = pd.read_csv(path)
    assert expected.empty
    assert_eq(md.read_csv(path, chunk_bytes=chunk_bytes), expected)


def test_empty_file_raises_as_pandas(tmp_path):
    path = tmp_path / "nothing.csv"
    path.write_text("")
    with pytest.raises(pd.errors.EmptyDataError):
        md.read_csv(path)


def test_missing_file_raises_at_build(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.csv"):
        md.read_csv(tmp_path / "nope.csv")
    with pytest.raises(FileNotFoundError, match=r"nope-\*"):
        md.read_csv(str(tmp_path / "nope-*.csv"))


def test_bad_arguments(csv_file):
    with pytest.raises(TypeError, match="iterator"):
        md.read_csv(csv_file, iterator=True)
    with pytest.raises(TypeError, match="chunksize"):
        md.read_csv(csv_file, chunksize=10)
    with pytest.raises(ValueError, match="chunk_bytes.*'lots'"):
        md.read_csv(csv_file, chunk_bytes="lots")
    with pytest.raises(ValueError, match="chunk_bytes must be positive"):
        md.read_csv(csv_file, chunk_bytes=0)
    with pytest.raises(NotImplementedError, match="category"):
        md.read_csv(csv_file, dtype={"s": "category"})


@pytest.mark.parametrize("chunk_bytes", [1, 50, None])
def test_several_files_numbered_across(tmp_path, chunk_bytes):
    frames = [_frame(30, 1), _frame(0, 2), _frame(45, 3)]
    for i, f in enumerate(frames):
        f.to_csv(tmp_path / f"part-{i + 8}.csv", index=False)  # part-8, part-9, part-10: natural order
    # an empty file adds no rows (and does not turn the columns to object, as concatenating it would)
    expected = pd.concat([pd.read_csv(tmp_path / f"part-{i + 8}.csv") for i in (0, 2)], ignore_index=True)
    assert_eq(md.read_csv(str(tmp_path / "part-*.csv"), chunk_bytes=chunk_bytes), expected)
    paths = [tmp_path / "part-10.csv", tmp_path / "part-8.csv"]
    expected = pd.concat([pd.read_csv(p) for p in paths], ignore_index=True)
    assert_eq(md.read_csv(paths, chunk_bytes=chunk_bytes), expected)


KWARGS = [
    {"usecols": ["s", "k"]},
    {"usecols": [0, 2]},
    {"index_col": "k"},
    {"index_col": [0, 2]},
    {"dtype": {"k": "float64", "s": "object"}},
    {"header": None, "skiprows": 1, "names": ["K", "X", "S", "F"]},
    {"header": None, "skiprows": 1},
    {"skiprows": 3, "header": None},
    {"na_values": ["alpha"], "keep_default_na": True},
    {"converters": {"k": lambda v: int(v) * 2}},
    {"true_values": ["beta"], "false_values": ["alpha"]},
]


@pytest.mark.parametrize("kwargs", KWARGS, ids=lambda k: ",".join(k))
@pytest.mark.parametrize("chunk_bytes", [9, 300, None])
def test_pandas_keywords_pass_through(csv_file, kwargs, chunk_bytes):
    assert_eq(md.read_csv(csv_file, chunk_bytes=chunk_bytes, **kwargs), pd.read_csv(csv_file, **kwargs))


@pytest.mark.parametrize("chunk_bytes", [1, 20, 1000])
def test_separator_comments_and_blank_lines_before_the_header(tmp_path, chunk_bytes):
    path = tmp_path / "semi.csv"
    path.write_text("# made by hand\n\nid;name;when\n1;a;2021-01-03\n\n2;b;2021-02-03\n# a comment line\n3;c;\n")
    kw = {"sep": ";", "comment": "#", "parse_dates": ["when"]}
    expected = pd.read_csv(path, **kw)
    assert expected["when"].dtype.kind == "M"
    assert_eq(md.read_csv(path, chunk_bytes=chunk_bytes, **kw), expected)


@pytest.mark.parametrize("chunk_bytes", [1, 40, 1000])
def test_parse_dates_with_one_format_for_the_whole_column(tmp_path, chunk_bytes):
    path = tmp_path / "dates.csv"
    days = pd.date_range("2020-01-01", periods=40, freq="37h")
    pd.DataFrame({"d": days.strftime("%d/%m/%Y %H:%M"), "v": range(40)}).to_csv(path, index=False)
    kw = {"parse_dates": ["d"], "dayfirst": True}
    expected = pd.read_csv(path, **kw)
    assert expected["d"].dtype.kind == "M"
    assert_eq(md.read_csv(path, chunk_bytes=chunk_bytes, **kw), expected)


@pytest.mark.parametrize("chunk_bytes", [1, 12, None])
@pytest.mark.parametrize("encoding", ["latin-1", "utf-8-sig", "utf-16"])
def test_encodings(tmp_path, chunk_bytes, encoding):
    path = tmp_path / "enc.csv"
    pd.DataFrame({"nom": ["café", "crème", "brûlée", "x"] * 5, "n": range(20)}).to_csv(path, index=False,
                                                                                       encoding=encoding)
    assert_eq(md.read_csv(path, chunk_bytes=chunk_bytes, encoding=encoding), pd.read_csv(path, encoding=encoding))


@pytest.mark.parametrize("chunk_bytes", [1, 30])
def test_implicit_index_when_the_header_is_short(tmp_path, chunk_bytes):
    path = tmp_path / "implicit.csv"
    path.write_text("a,b\nx,1,2\ny,3,4\nz,5,6\n")
    expected = pd.read_csv(path)
    assert list(expected.index) == ["x", "y", "z"]
    assert_eq(md.read_csv(path, chunk_bytes=chunk_bytes), expected)


@pytest.mark.parametrize("nrows", [0, 1, 7, 10_000])
def test_nrows_reads_the_head_only(tmp_path, csv_file, nrows):
    assert_eq(md.read_csv(csv_file, nrows=nrows, chunk_bytes=50), pd.read_csv(csv_file, nrows=nrows))
    df = md.read_csv(csv_file, nrows=nrows, chunk_bytes=50).execute()
    assert len(df.chunks) == 1


def test_nrows_over_several_files(tmp_path):
    _frame(5, 1).to_csv(tmp_path / "p1.csv", index=False)
    _frame(5, 2).to_csv(tmp_path / "p2.csv", index=False)
    expected = pd.concat([pd.read_csv(tmp_path / "p1.csv"), pd.read_csv(tmp_path / "p2.csv", nrows=3)],
                         ignore_index=True)
    assert_eq(md.read_csv(str(tmp_path / "p*.csv"), nrows=8), expected)


def test_compressed_files_are_read_whole(tmp_path):
    path = tmp_path / "a.csv.gz"
    with gzip.open(path, "wt") as f:
        _frame().to_csv(f, index=False)
    df = md.read_csv(path, chunk_bytes=10)
    assert_eq(df, pd.read_csv(path))
    assert len(df.chunks) == 1


def test_later_chunks_conform_to_the_metadata(tmp_path):
    # "f" has decimals in the sample and only whole numbers later; "s" is text in the sample
    # and empty (all missing) in a later chunk: both come out as pandas reads the whole file
    lines = ["f,s"] + [f"{i}.5,t{i}" for i in range(20)] + [f"{i},x" for i in range(20)] + [f"{i}," for i in range(20)]
    path = tmp_path / "drift.csv"
    path.write_text("\n".join(lines) + "\n")
    expected = pd.read_csv(path)
    assert_eq(md.read_csv(path, chunk_bytes=40, sample_bytes=60), expected)


def test_a_dtype_the_sample_did_not_show_is_an_error_naming_the_column(tmp_path):
    path = tmp_path / "late_nan.csv"
    path.write_text("a,b\n" + "".join(f"{i},{i}\n" for i in range(200)) + "1,\n")
    with pytest.raises(ValueError, match=r"column 'b'.*float64.*int64.*dtype="):
        md.read_csv(path, chunk_bytes=100, sample_bytes=100).execute()
    assert_eq(md.read_csv(path, chunk_bytes=100, sample_bytes=100, dtype={"b": "float64"}), pd.read_csv(path))


def test_quoted_line_breaks_in_the_sample_read_files_whole(tmp_path):
    path = tmp_path / "quoted.csv"
    path.write_text('a,b\n1,"two\nlines"\n2,plain\n3,"more\r\nlines"\n' * 20)
    df = md.read_csv(path, chunk_bytes=16)
    assert_eq(df, pd.read_csv(path))
    assert len(df.chunks) == 1


def test_quoted_line_breaks_after_the_sample_raise_a_clear_error(tmp_path):
    path = tmp_path / "late_quoted.csv"
    body = "".join(f"{i},plain\n" for i in range(40)) + '99,"a\n' + "b" * 40 + '\nc"\n' + "100,end\n"
    path.write_text("a,b\n" + body)
    with pytest.raises(ValueError, match="chunk_bytes=None"):
        md.read_csv(path, chunk_bytes=30, sample_bytes=50).execute()
    assert_eq(md.read_csv(path, chunk_bytes=None, sample_bytes=50), pd.read_csv(path))


def test_groupby_style_partition_work_on_a_read(csv_file):
    from mars.dataframe.map import map_partitions

    df = md.read_csv(csv_file, chunk_bytes=500)
    sums = map_partitions(lambda p: p.groupby("k")["x"].sum(), df, same_rows=False)
    got = sums.execute().fetch().groupby(level=0).sum()
    pdt.assert_series_equal(got, pd.read_csv(csv_file).groupby("k")["x"].sum(), check_exact=False)


def test_file_changes_give_new_keys(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("a\n1\n")
    first = md.read_csv(path)
    path.write_text("a\n1\n2\n")
    second = md.read_csv(path)
    assert first.key != second.key
    assert_eq(second, pd.read_csv(path))


# ----------------------------------------------------------------- pruning hooks
def _spy_read_csv(monkeypatch) -> list:
    calls = []
    real = pd.read_csv

    def spy(*args, **kw):
        calls.append(kw)
        return real(*args, **kw)

    monkeypatch.setattr(pd, "read_csv", spy)
    return calls


def test_with_columns_reads_only_those_columns(csv_file, monkeypatch):
    df = md.read_csv(csv_file, chunk_bytes=700)
    pruned = df.op.with_columns(["s", "k"])
    assert isinstance(pruned.op, ReadCSV)
    expected = pd.read_csv(csv_file)[["s", "k"]]
    calls = _spy_read_csv(monkeypatch)
    assert_eq(md.DataFrame(pruned), expected)
    assert calls and all(c.get("usecols") == ["s", "k"] for c in calls)


def test_with_columns_keeps_the_index_column(csv_file):
    df = md.read_csv(csv_file, chunk_bytes=700, index_col=0)
    pruned = df.op.with_columns(["x"])
    assert_eq(md.DataFrame(pruned), pd.read_csv(csv_file, index_col=0)[["x"]])
    assert df.op.with_columns(["x", "x"]) is None
    assert df.op.with_columns(["nope"]) is None


def test_column_selection_and_head_read_less(csv_file, monkeypatch):
    expected = pd.read_csv(csv_file)
    got = md.read_csv(csv_file, chunk_bytes=300)[["x", "k"]].head(3)
    calls = _spy_read_csv(monkeypatch)  # what running reads (building read a sample)
    assert_eq(got, expected[["x", "k"]].head(3))
    assert len(calls) == 1 and calls[0]["nrows"] == 3 and calls[0]["usecols"] == ["x", "k"]


def test_with_head_over_chunk_boundaries(csv_file):
    df = md.read_csv(csv_file, chunk_bytes=20)
    head = md.DataFrame(df.op.with_head(57))
    assert_eq(head, pd.read_csv(csv_file).head(57))


def test_range_chunk_op_reads_its_own_lines(tmp_path):
    path = tmp_path / "r.csv"
    path.write_bytes(b"a\n10\n20\n30\n")
    meta = pd.read_csv(path).iloc[:0]
    op = ReadCSVRange(path=str(path), start=3, end=8, data_start=2, kwargs={}, meta=meta, columns=None)
    # lines starting in bytes [3, 8): "20" (at 5); "10" starts at 2, "30" at 8
    pdt.assert_frame_equal(op.execute(), pd.DataFrame({"a": [20]}))


# ----------------------------------------------------------------- writing
@pytest.mark.parametrize("chunk_size", partitionings(23))
def test_to_csv_one_file_matches_pandas_bytes(tmp_path, chunk_size):
    pdf = _frame(23)
    out = tmp_path / "out.csv"
    written = md.DataFrame(pdf, chunk_size=chunk_size).to_csv(out)
    assert not out.exists()  # lazy: nothing is written before .execute()
    assert written.execute() is written
    assert out.read_bytes() == pdf.to_csv().encode()
    assert not [p for p in tmp_path.iterdir() if p.name != "out.csv"]  # no part files left


@pytest.mark.parametrize("chunk_size", partitionings(23))
def test_to_csv_one_file_per_partition(tmp_path, chunk_size):
    pdf = _frame(23)
    df = md.DataFrame(pdf, chunk_size=chunk_size)
    df.to_csv(str(tmp_path / "out-*.csv"), index=False).execute()
    files = sorted(tmp_path.glob("out-*.csv"))
    assert len(files) == len(df.execute().chunks)
    expected = pd.read_csv(io.StringIO(pdf.to_csv(index=False)))  # "" comes back as NaN
    pdt.assert_frame_equal(md.read_csv(str(tmp_path / "out-*.csv")).execute().fetch(), expected)
    first = files[0].read_text().splitlines()[0]
    assert first == "k,x,s,f"


@pytest.mark.parametrize("chunk_size", [5, 23])
def test_to_csv_text_buffer_and_options(tmp_path, chunk_size):
    pdf = _frame(23)
    df = md.DataFrame(pdf, chunk_size=chunk_size)
    assert df.to_csv() == pdf.to_csv()
    kw = {"sep": ";", "index": False, "header": ["K", "X", "S", "F"], "float_format": "%.2f", "na_rep": "NA"}
    assert df.to_csv(**kw) == pdf.to_csv(**kw)
    buf = io.StringIO()
    assert df.to_csv(buf, index=False) is None
    assert buf.getvalue() == pdf.to_csv(index=False)
    series = md.Series(pdf["x"], chunk_size=chunk_size)
    assert series.to_csv() == pdf["x"].to_csv()


def test_to_csv_append_and_compression(tmp_path):
    pdf = _frame(23)
    df = md.DataFrame(pdf, chunk_size=5)
    out = tmp_path / "out.csv"
    out.write_text("first line\n")
    df.to_csv(out, mode="a", index=False, header=False).execute()
    assert out.read_text() == "first line\n" + pdf.to_csv(index=False, header=False)
    gz = tmp_path / "out.csv.gz"
    df.to_csv(gz, index=False).execute()
    with gzip.open(gz) as f:
        assert f.read() == pdf.to_csv(index=False).encode()
    with pytest.raises(IsADirectoryError):
        df.to_csv(tmp_path)


def test_round_trip_through_files(tmp_path):
    pdf = _frame(100)
    md.DataFrame(pdf, chunk_size=17).to_csv(tmp_path / "rt.csv", index=False).execute()
    assert_eq(md.read_csv(tmp_path / "rt.csv", chunk_bytes=256), pd.read_csv(io.StringIO(pdf.to_csv(index=False))))


# ----------------------------------------------------------------- the index column (issue 18's bug)
@pytest.fixture
def indexed_csv(tmp_path):
    rng = np.random.default_rng(3)
    n = 2000
    path = tmp_path / "indexed.csv"
    # "k" holds 0..n-1 (pandas makes it a RangeIndex named k), "r" holds numbers from 5 by 3
    pd.DataFrame({"k": np.arange(n), "r": np.arange(5, 5 + 3 * n, 3), "x": rng.random(n).round(4),
                  "s": rng.choice(["a", "bb", "ccc"], n)}).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("chunk_bytes", [4000, 777, None])
@pytest.mark.parametrize("kwargs", [{"index_col": 0}, {"index_col": "k"}, {"index_col": 1}, {"index_col": "r"},
                                    {"index_col": "s", "usecols": ["s", "x"]},
                                    {"index_col": 0, "usecols": ["k", "s"]},
                                    {"index_col": ["s", "k"]}, {"index_col": False}],
                         ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()))
def test_index_col_is_the_files_column_across_chunks(indexed_csv, chunk_bytes, kwargs):
    df = md.read_csv(indexed_csv, chunk_bytes=chunk_bytes, **kwargs)
    expected = pd.read_csv(indexed_csv, **kwargs)
    assert_eq(df, expected)
    if chunk_bytes == 777:
        assert len(df.chunks) > 5
    got = df.fetch()
    assert got.index.names == expected.index.names
    assert (got.index == expected.index).all()


def test_index_col_on_several_files(tmp_path, indexed_csv):
    frame = pd.read_csv(indexed_csv)
    frame.iloc[:700].to_csv(tmp_path / "p-1.csv", index=False)
    frame.iloc[700:].to_csv(tmp_path / "p-2.csv", index=False)
    expected = pd.concat([pd.read_csv(tmp_path / f"p-{i}.csv", index_col=0) for i in (1, 2)])
    assert_eq(md.read_csv(str(tmp_path / "p-*.csv"), index_col=0, chunk_bytes=3000), expected)
