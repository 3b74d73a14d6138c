"""DataFrame jobs on an in-process cluster (a supervisor and two workers): results equal pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

import mars.dataframe as md
import mars.tensor as mt


@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    n = 400
    return pd.DataFrame({"k": rng.integers(0, 13, n), "x": rng.random(n), "s": rng.choice(list("abcde"), n),
                         "i": np.arange(n)})


def test_the_seeds_dataframe_sum_of_a_random_tensor(session):
    a = mt.random.rand(200, 60, chunk_size=(30, 20))
    got = session.run(md.DataFrame(a).sum())
    pdt.assert_series_equal(got, pd.DataFrame(session.fetch(a)).sum())


def test_groupby_merge_sort_and_filter_equal_pandas(session, frame):
    df = md.DataFrame(frame, chunk_size=37)
    pdt.assert_frame_equal(session.run(df.groupby("k").agg({"x": "sum", "i": "mean"})),
                           frame.groupby("k").agg({"x": "sum", "i": "mean"}))
    right = pd.DataFrame({"k": np.arange(10), "w": np.arange(10) * 2.5})
    pdt.assert_frame_equal(session.run(df.merge(md.DataFrame(right, chunk_size=3), on="k")),
                           frame.merge(right, on="k"))
    pdt.assert_frame_equal(session.run(df.sort_values(["s", "x"])), frame.sort_values(["s", "x"]))
    pdt.assert_frame_equal(session.run(df[df["x"] > 0.5][["s", "x"]]), frame[frame["x"] > 0.5][["s", "x"]])


def test_series_with_different_partitionings_align_on_their_index(session):
    left = pd.Series(np.arange(30.0), index=np.arange(30)[::-1])
    right = pd.Series(np.arange(20.0), index=np.arange(5, 25))
    got = session.run(md.Series(left, chunk_size=7) + md.Series(right, chunk_size=6))
    pdt.assert_series_equal(got, left + right)


def test_read_csv_and_parquet_from_files(session, frame, tmp_path):
    frame.to_csv(tmp_path / "f.csv", index=False)
    frame.to_parquet(tmp_path / "f.parquet")
    pdt.assert_frame_equal(session.run(md.read_csv(str(tmp_path / "f.csv"), chunk_bytes=2000)),
                           pd.read_csv(tmp_path / "f.csv"))
    pdt.assert_frame_equal(session.run(md.read_parquet(str(tmp_path / "f.parquet"), columns=["x", "k"])),
                           pd.read_parquet(tmp_path / "f.parquet", columns=["x", "k"]))


def test_a_user_error_in_a_partition_comes_back_as_itself(session, frame):
    df = md.DataFrame(frame, chunk_size=100)

    def boom(part: pd.DataFrame) -> pd.DataFrame:
        if len(part) and part["i"].iloc[0] >= 200:
            raise ZeroDivisionError("partition two")
        return part

    with pytest.raises(ZeroDivisionError, match="partition two"):
        session.run(df.map_partitions(boom, meta=frame.iloc[:0]))
    assert session.run(df["x"].sum()) == pytest.approx(frame["x"].sum())
