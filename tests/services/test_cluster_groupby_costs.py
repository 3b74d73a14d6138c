"""Grouped aggregations planned to write less on a cluster (see tests/dataframe/test_groupby_cluster_costs.py) give
pandas' results there: a boundary key's rows cut where their partition lies, partials made with their partitions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

import mars.dataframe as md
import mars.dataframe.groupby.agg as agg_module

RNG = np.random.default_rng(5)
N = 300
FRAME = pd.DataFrame({"k": np.sort(RNG.integers(0, 40, N)), "j": RNG.choice(["a", "b", "c"], N),
                      "x": RNG.random(N), "y": RNG.integers(-5, 5, N)})


@pytest.mark.parametrize("chunk_size", [45, (100, 0, 120, 80)])
def test_grouped_partitions_equal_pandas_on_a_cluster(session, monkeypatch, chunk_size):
    monkeypatch.setattr(agg_module, "SINGLE_ROWS", -1)
    held = md.DataFrame(FRAME, chunk_size=chunk_size).execute(session=session)
    # in key order: each partition grouped alone, boundary keys joined to one partition
    pdt.assert_frame_equal(session.run(held.groupby("k", as_index=False).agg(s=("x", "sum"), n=("y", "size"))),
                           FRAME.groupby("k", as_index=False).agg(s=("x", "sum"), n=("y", "size")))
    # a filter of held data: two partitions probed, the others made where their partials are
    lazy = held[held.y > -3]
    pdt.assert_frame_equal(session.run(lazy.groupby("j").agg(s=("x", "sum"), m=("y", "mean"))),
                           FRAME[FRAME.y > -3].groupby("j").agg(s=("x", "sum"), m=("y", "mean")))
