"""The CSV text made with pyarrow (mars.dataframe.io.csv_text) equals pandas' to_csv byte for byte."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mars.dataframe as md
from mars.dataframe.io.csv_text import partition_csv

FLOATS = [0.0, -0.0, 1.0, -3.0, 0.1, 1e-4, 9.9e-5, 1e-5, 1.5e-7, 5e-324, 1e10, 9999999999.999998, 1e15, 1e16,
          1e22, 123456789012.5, -2.5e-3, np.nan, np.inf, -np.inf, 1.7976931348623157e308, 2 ** 53]


def _random_floats(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    exp = rng.integers(-8, 20, n)
    x = rng.random(n) * 10.0 ** exp * rng.choice([-1, 1], n)
    x[::7] = np.round(x[::7])
    return x


def _frame(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    f = _random_floats(n, seed)
    f[: len(FLOATS)] = FLOATS
    words = np.array(["a", "b,c", 'q"uote', "line\nbreak", "cr\rx", "", " lead", "semi;colon", "ünï"], dtype=object)
    s = rng.choice(words, n).astype(object)
    s[3] = None
    s[5] = np.nan
    t = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 10**8, n), unit="s")
    ni = pd.array(rng.integers(-5, 5, n), dtype="Int64")
    ni[2] = pd.NA
    nb = pd.array(rng.random(n) > 0.5, dtype="boolean")
    nb[4] = pd.NA
    return pd.DataFrame({
        "f": f, "f32": _random_floats(n, seed + 1).astype("float32"),
        "i": rng.integers(-10**12, 10**12, n), "u8": rng.integers(0, 255, n).astype("uint8"),
        "b": rng.random(n) > 0.5, "s": s, "str": pd.array(s, dtype="str"),
        "t": t.where(rng.random(n) > 0.1), "days": pd.Timestamp("2020-01-01") + pd.to_timedelta(np.arange(n), "D"),
        "cat": pd.Categorical(rng.choice(["x", "y,z"], n)), "ni": ni, "nb": nb,
        "tz": pd.date_range("2024-01-01", periods=n, freq="37min", tz="UTC"),
        "td": pd.to_timedelta(np.arange(n), unit="s"), "frac": pd.Timestamp("2024-01-01") +
        pd.to_timedelta(np.arange(n) * 1500, unit="ms"),
    })


@pytest.mark.parametrize("kwargs", [
    {}, {"index": False}, {"header": False}, {"na_rep": "NA"}, {"sep": ";"}, {"sep": "\t", "index": False},
    {"lineterminator": "\r\n"}, {"index_label": "idx"}, {"header": [f"h{i}" for i in range(15)]},
    {"sep": "."}, {"na_rep": "a,b"},
])
def test_partition_text_equals_pandas(kwargs: dict) -> None:
    pdf = _frame()
    got = partition_csv(pdf, None, kwargs)
    assert got is not None
    assert got == pdf.to_csv(None, **kwargs)


def test_random_floats_equal_pandas() -> None:
    for seed in range(3):
        pdf = pd.DataFrame({"x": _random_floats(20_000, seed), "y": _random_floats(20_000, seed + 9)
                            .astype("float32"), "z": 1})
        assert partition_csv(pdf, None, {"index": False}) == pdf.to_csv(None, index=False)


@pytest.mark.parametrize("index", [pd.RangeIndex(5, 10), pd.Index(["a", "b,c", "d", "e", "f"]),
                                   pd.date_range("2024-01-01", periods=5), pd.Index([0.5, 1e-7, 3.0, 1e20, -0.0])])
def test_index_equals_pandas(index: pd.Index) -> None:
    pdf = pd.DataFrame({"a": [1.5, 2.0, np.nan, 4.25, 1e-9]}, index=index)
    assert partition_csv(pdf, None, {}) == pdf.to_csv(None)


@pytest.mark.parametrize("kwargs", [{"float_format": "%.2f"}, {"decimal": ","}, {"quoting": 1}, {"columns": ["a"]},
                                    {"date_format": "%Y"}, {"escapechar": "\\"}, {"encoding": "latin-1"}])
def test_other_keywords_left_to_pandas(kwargs: dict) -> None:
    pdf = pd.DataFrame({"a": [1.5, 2.0], "b": ["x", "y"]})
    assert partition_csv(pdf, None, kwargs) is None


def test_one_field_per_row_left_to_pandas() -> None:  # csv quotes a lone empty field: pandas writes it
    pdf = pd.DataFrame({"a": ["", "x"]})
    assert partition_csv(pdf, None, {"index": False}) is None
    assert md.DataFrame(pdf, chunk_size=1).to_csv(index=False) == pdf.to_csv(index=False)


@pytest.mark.parametrize("chunk_size", [400, 150, 97, 1])
def test_mars_files_equal_pandas(tmp_path, chunk_size: int) -> None:
    pdf = _frame(400, seed=3)
    md.DataFrame(pdf, chunk_size=chunk_size).to_csv(str(tmp_path / "whole.csv"), index=False).execute()
    # each partition is formatted alone, as pandas formats each slice (a datetime column's precision is per slice)
    slices = [pdf.iloc[i:i + chunk_size] for i in range(0, len(pdf), chunk_size)]
    expected = "".join(p.to_csv(None, index=False, header=i == 0) for i, p in enumerate(slices))
    assert (tmp_path / "whole.csv").read_bytes() == expected.encode()
    md.DataFrame(pdf, chunk_size=chunk_size).to_csv(str(tmp_path / "p-*.csv")).execute()
    first = min(tmp_path.glob("p-*.csv")).read_bytes()
    assert first == pdf.iloc[:chunk_size].to_csv(None).encode()


def test_append_mode_and_empty_partition(tmp_path) -> None:
    pdf = pd.DataFrame({"a": [1.5, 2.0, 3.0], "b": [1, 2, 3]})
    path = tmp_path / "x.csv"
    path.write_text("start\n")
    assert partition_csv(pdf, str(path), {"mode": "a", "index": False}) == ""
    assert path.read_text() == "start\n" + pdf.to_csv(None, index=False)
    assert partition_csv(pdf.iloc[:0], None, {}) is None


def test_urls_and_compressed_paths_left_to_pandas() -> None:
    pdf = pd.DataFrame({"a": [1.5, 2.0], "b": ["x", "y"]})
    assert partition_csv(pdf, "memory://bucket/a.csv", {}) is None
    assert partition_csv(pdf, "a.csv.gz", {}) is None
    assert partition_csv(pdf["a"], None, {}) is None
