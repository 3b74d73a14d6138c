"""md.read_json and the lazy to_json against pandas, on real files."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

import mars.dataframe as md
from tests.dataframe.df_testing import assert_eq, partitionings


def _frame(n: int = 120, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"k": rng.integers(0, 10, n), "x": rng.random(n).round(4),
                         "s": rng.choice(["alpha", "beta", None], n), "b": rng.random(n) < 0.5})


@pytest.fixture
def jsonl(tmp_path):
    path = tmp_path / "a.jsonl"
    _frame().to_json(path, orient="records", lines=True)
    return path


@pytest.mark.parametrize("chunk_bytes", [1, 300, None])
def test_read_json_lines_in_byte_ranges(jsonl, chunk_bytes):
    df = md.read_json(jsonl, lines=True, chunk_bytes=chunk_bytes)
    assert_eq(df, pd.read_json(jsonl, lines=True))
    if chunk_bytes == 1:
        assert len(df.chunks) > 10


def test_read_json_lines_later_chunks_conform(tmp_path):
    # "x" is whole numbers early and decimals later; "s" missing in a whole chunk
    lines = [f'{{"x": {i}, "s": "t{i}"}}' for i in range(30)] + [f'{{"x": {i}.5, "s": null}}' for i in range(30)]
    path = tmp_path / "drift.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert_eq(md.read_json(path, lines=True, chunk_bytes=100, sample_bytes=2000), pd.read_json(path, lines=True))


@pytest.mark.parametrize("orient", ["records", "split", "columns", "index", "values", "table"])
def test_read_json_documents(tmp_path, orient):
    pdf = _frame(20).set_axis(pd.RangeIndex(3, 23), axis=0)
    for i in range(2):
        pdf.iloc[i * 10:(i + 1) * 10].to_json(tmp_path / f"d-{i}.json", orient=orient)
    parts = [pd.read_json(tmp_path / f"d-{i}.json", orient=orient) for i in range(2)]
    expected = pd.concat(parts, ignore_index=orient in ("records", "values"))
    assert_eq(md.read_json(str(tmp_path / "d-*.json"), orient=orient), expected)


def test_read_json_nrows_and_errors(jsonl, tmp_path):
    assert_eq(md.read_json(jsonl, lines=True, nrows=7), pd.read_json(jsonl, lines=True, nrows=7))
    with pytest.raises(ValueError, match="nrows can only be passed if lines=True"):
        md.read_json(jsonl, nrows=3)
    with pytest.raises(TypeError, match="chunksize"):
        md.read_json(jsonl, lines=True, chunksize=3)
    with pytest.raises(FileNotFoundError, match="nope"):
        md.read_json(tmp_path / "nope.json")


@pytest.mark.parametrize("chunk_size", partitionings(23))
def test_to_json_lines_one_file_matches_pandas_bytes(tmp_path, chunk_size):
    pdf = _frame(23)
    df = md.DataFrame(pdf, chunk_size=chunk_size)
    out = tmp_path / "out.jsonl"
    written = df.to_json(out, orient="records", lines=True)
    assert not out.exists()
    written.execute()
    assert out.read_text() == pdf.to_json(orient="records", lines=True)
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]
    assert df.to_json(orient="records", lines=True) == pdf.to_json(orient="records", lines=True)


@pytest.mark.parametrize("chunk_size", [5, 23])
@pytest.mark.parametrize("orient", ["records", "split", "index", "columns"])
def test_to_json_documents(tmp_path, chunk_size, orient):
    pdf = _frame(23)
    df = md.DataFrame(pdf, chunk_size=chunk_size)
    df.to_json(tmp_path / "one.json", orient=orient).execute()
    assert (tmp_path / "one.json").read_text() == pdf.to_json(orient=orient)
    assert df.to_json(orient=orient) == pdf.to_json(orient=orient)
    df.to_json(str(tmp_path / "p-*.json"), orient=orient).execute()
    files = sorted(tmp_path.glob("p-*.json"))
    assert len(files) == len(df.execute().chunks)
    back = pd.concat([pd.read_json(f, orient=orient) for f in files], ignore_index=orient == "records")
    pdt.assert_frame_equal(back, pd.read_json(io.StringIO(pdf.to_json(orient=orient)), orient=orient))
    series = md.Series(pdf["x"], chunk_size=chunk_size)
    assert series.to_json() == pdf["x"].to_json()
