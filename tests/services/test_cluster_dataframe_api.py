"""Issue 18's dataframe features on a cluster of processes (a supervisor and two one-slot workers): each
result equals pandas, so the operators, their tiling stages and their chunk functions travel between
processes as they run in the embedded session."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

import mars.dataframe as md
from mars.deploy.local import new_cluster


@pytest.fixture(scope="module")
def session():
    with new_cluster(n_worker=2, n_cpu=1, web=False) as cluster:
        yield cluster.session


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(7)
    n = 300
    return pd.DataFrame({"k": rng.integers(0, 6, n), "x": rng.random(n), "y": rng.normal(size=n),
                         "s": rng.choice(["ab", "cd", "ef", None], n), "i": np.arange(n)},
                        index=pd.RangeIndex(1000, 1000 + n))


def run(session, obj):
    return obj.execute(session=session).fetch(session=session)


def test_assignment_by_loc_and_iloc(session, frame):
    df, want = md.DataFrame(frame, chunk_size=70), frame.copy()
    df.loc[df["x"] > 0.5, "y"] = 0.0
    want.loc[want["x"] > 0.5, "y"] = 0.0
    df.iloc[[3, 150, 299], 1] = -1.0
    want.iloc[[3, 150, 299], 1] = -1.0
    pdt.assert_frame_equal(run(session, df), want)


def test_shift_and_diff_carry_rows_between_workers(session, frame):
    df = md.DataFrame(frame[["k", "x", "y"]], chunk_size=(50, 100, 0, 150))
    pdt.assert_frame_equal(run(session, df.shift(2)), frame[["k", "x", "y"]].shift(2))
    pdt.assert_frame_equal(run(session, df.diff(-3)), frame[["k", "x", "y"]].diff(-3))


def test_ranks_moments_and_ewm(session, frame):
    df = md.DataFrame(frame[["k", "x", "y"]], chunk_size=(50, 100, 0, 150))
    pdt.assert_frame_equal(run(session, df.rank(method="dense")), frame[["k", "x", "y"]].rank(method="dense"))
    pdt.assert_frame_equal(run(session, df.corr()), frame[["k", "x", "y"]].corr())
    pdt.assert_series_equal(run(session, df["y"].ewm(span=5).mean()), frame["y"].ewm(span=5).mean())


def test_groupby_ngroup_and_value_counts(session, frame):
    df = md.DataFrame(frame, chunk_size=80)
    pdt.assert_series_equal(run(session, df.groupby("k").ngroup()), frame.groupby("k").ngroup())
    pdt.assert_series_equal(run(session, df.groupby("k")["s"].value_counts()),
                            frame.groupby("k")["s"].value_counts())


def test_reindex_query_and_eval(session, frame):
    df = md.DataFrame(frame, chunk_size=90)
    labels = [1299, 1000, 5, 1150]
    pdt.assert_frame_equal(run(session, df.reindex(labels)), frame.reindex(labels))
    pdt.assert_frame_equal(run(session, df.query("x > y and k != 2")), frame.query("x > y and k != 2"))
    pdt.assert_series_equal(run(session, df.eval("x * 2 + y")), frame.eval("x * 2 + y"))


def test_lazy_parquet_round_trip(session, frame, tmp_path):
    df = md.DataFrame(frame, chunk_size=100)
    written = df.to_parquet(str(tmp_path / "part-*.parquet"))
    assert not list(tmp_path.iterdir())  # nothing is written before it runs
    written.execute(session=session)
    assert len(list(tmp_path.glob("part-*.parquet"))) == 3
    back = run(session, md.read_parquet(str(tmp_path / "part-*.parquet")))
    pdt.assert_frame_equal(back, pd.read_parquet(tmp_path))  # pandas reads the files' rows renumbered, as here
    pdt.assert_frame_equal(back, frame.reset_index(drop=True))


def test_accessors_and_index_set_operations(session, frame):
    s = md.Series(frame["s"], chunk_size=60)
    pdt.assert_series_equal(run(session, s.str.upper().str.len()), frame["s"].str.upper().str.len())
    cats = frame["s"].astype("category")
    pdt.assert_series_equal(run(session, md.Series(cats, chunk_size=60).cat.codes), cats.cat.codes)
    left, right = pd.Index(frame["k"].to_numpy()[:120]), pd.Index([3, 4, 9, 11])
    got = run(session, md.Index(left, chunk_size=25).union(md.Index(right, chunk_size=2)))
    pdt.assert_index_equal(got, left.union(right))
    sorted_idx = md.Index(frame.index, chunk_size=64)
    assert sorted_idx.slice_locs(1010, 1200) == frame.index.slice_locs(1010, 1200)
