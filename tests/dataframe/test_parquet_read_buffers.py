"""md.read_parquet takes arrow's buffers over without a copy: what a user gets stays equal to pandas and writable."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mars.dataframe as md


def _frame(n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    f = rng.random(n)
    f[::11] = np.nan
    return pd.DataFrame({
        "i": np.arange(n), "f": f, "g": rng.random(n).astype("float32"), "b": rng.random(n) > 0.5,
        "s": rng.choice(["x", "y", None], n), "t": pd.date_range("2024-01-01", periods=n, freq="h"),
        "tz": pd.date_range("2024-01-01", periods=n, freq="h", tz="Europe/Paris"),
        "c": pd.Categorical(rng.choice(["p", "q"], n)), "n": pd.array(rng.integers(0, 5, n), dtype="Int64"),
    })


@pytest.mark.parametrize("chunk_size", [300, 100, 37, 1])
def test_fetched_whole_is_writable_and_equal(tmp_path, chunk_size: int) -> None:
    pdf = _frame()
    md.DataFrame(pdf, chunk_size=chunk_size).to_parquet(str(tmp_path) + "/").execute()
    got = md.read_parquet(str(tmp_path)).execute().fetch()
    pd.testing.assert_frame_equal(got, pd.read_parquet(tmp_path))
    got.iloc[0, 0] = -1  # a user's in-place edit: no "assignment destination is read-only"
    got.loc[1, "f"] = 7.5
    got["i"] += 1
    assert got["i"].iloc[0] == 0 and got["f"].iloc[1] == 7.5


@pytest.mark.parametrize("chunk_size", [300, 64])
def test_operations_on_read_chunks_equal_pandas(tmp_path, chunk_size: int) -> None:
    pdf = _frame()
    pdf.to_parquet(tmp_path / "one.parquet", row_group_size=chunk_size)
    df = md.read_parquet(str(tmp_path / "one.parquet"), chunk_bytes=1)
    expected = pd.read_parquet(tmp_path / "one.parquet")
    pd.testing.assert_frame_equal(df.sort_values("f").execute().fetch(), expected.sort_values("f"))
    pd.testing.assert_series_equal((df["f"] * 2 + df["i"]).execute().fetch(), expected["f"] * 2 + expected["i"])
    pd.testing.assert_frame_equal(df.fillna({"f": 0.0}).execute().fetch(), expected.fillna({"f": 0.0}))
    pd.testing.assert_frame_equal(df.groupby("s")[["f", "i"]].sum().execute().fetch(),
                                  expected.groupby("s")[["f", "i"]].sum())
    df["f"] = df["f"] + 1
    expected["f"] = expected["f"] + 1
    pd.testing.assert_frame_equal(df.execute().fetch(), expected)


def test_user_to_pandas_kwargs_still_apply(tmp_path) -> None:
    pdf = pd.DataFrame({"a": [1, 2, 3], "b": [1.5, np.nan, 3.0]})
    pdf.to_parquet(tmp_path / "x.parquet")
    kwargs = {"to_pandas_kwargs": {"integer_object_nulls": True}}
    got = md.read_parquet(str(tmp_path / "x.parquet"), **kwargs).execute().fetch()
    pd.testing.assert_frame_equal(got, pd.read_parquet(tmp_path / "x.parquet", **kwargs))
