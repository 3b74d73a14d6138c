"""Small partitions skip the stitched edges: one computation on the partition with its carried rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

from mars.dataframe import stitch
from mars.dataframe.stitch import stitched


def _counting(func):
    sizes = []

    def compute(frame):
        sizes.append(len(frame))
        return func(frame)

    return compute, sizes


@pytest.mark.parametrize("reach", [(1, 0), (0, 2), (5, 5)])
def test_a_small_partition_is_computed_once_with_its_carried_rows(reach):
    rb, ra = reach
    s = pd.Series(np.arange(1000.0), index=pd.date_range("2000", periods=1000, freq="s"))
    before, own, after = s.iloc[:rb], s.iloc[rb:1000 - ra], s.iloc[1000 - ra:]
    compute, sizes = _counting(lambda x: x.rolling(rb + ra + 1, center=bool(ra), min_periods=1).sum())
    got = stitched(compute, before, own, after, reach)
    assert sizes == [1000], sizes
    pdt.assert_series_equal(got, compute(s).iloc[rb:1000 - ra])


def test_the_size_counts_cells_of_frames():
    """A frame past the threshold in cells (not in rows) takes the stitched path: the partition alone, and edges."""
    rows = stitch.SMALL_CELLS // 4 + 10
    p = pd.DataFrame(np.arange(rows * 4.0).reshape(rows, 4))
    compute, sizes = _counting(lambda x: x.shift(1))
    got = stitched(compute, p.iloc[:1], p.iloc[1:], None, (1, 0))
    assert sizes[0] == rows - 1 and len(sizes) == 2, sizes
    pdt.assert_frame_equal(got, p.shift(1).iloc[1:])
    one_column = p[[0]].iloc[:rows]
    compute, sizes = _counting(lambda x: x.shift(1))
    stitched(compute, one_column.iloc[:1], one_column.iloc[1:], None, (1, 0))
    assert sizes == [rows], sizes
