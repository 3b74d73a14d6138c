"""corr/cov partials of partitions with no missing value (the one-product path) next to ones with some."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mars.dataframe as md
from mars.dataframe.methods.stats import CoMoments, _complete_pairs


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    # offsets and scales far apart: raw sums of squares would cancel
    return pd.DataFrame(rng.normal(size=(400, 4)) * [1.0, 1e-3, 1e5, 7.0] + [0.0, 1e3, -3.0, 2.5], columns=list("wxyz"))


@pytest.mark.parametrize("cs", [400, 150, (1, 300, 0, 99)])
def test_corr_cov_complete_partitions_equal_pandas(cs):
    p = _frame()
    m = md.DataFrame(p, chunk_size=cs)
    pd.testing.assert_frame_equal(m.corr().execute().fetch(), p.corr(), rtol=1e-8)
    pd.testing.assert_frame_equal(m.cov(ddof=0).execute().fetch(), p.cov(ddof=0), rtol=1e-8)


def test_complete_and_missing_partitions_merge():
    p = _frame()
    p.iloc[[5, 250], [0, 2]] = np.nan  # partitions 0 and 2 have gaps, 1 and 3 are complete
    m = md.DataFrame(p, chunk_size=(100, 100, 100, 100))
    pd.testing.assert_frame_equal(m.corr().execute().fetch(), p.corr(), rtol=1e-8)
    pd.testing.assert_frame_equal(m.cov().execute().fetch(), p.cov(), rtol=1e-8)


def test_complete_pairs_equal_the_general_partials():
    x = _frame().to_numpy()
    general = CoMoments(positions=None)
    # a NaN-free copy through the general formulas: the same arrays as the one-product path
    with_gap = np.vstack([x, np.full((1, 4), np.nan)])
    want = general.chunk(pd.DataFrame(with_gap))
    got = _complete_pairs(x)
    for a, b in zip(got[:6], want[:6]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-6)
    assert got[6] == 400.0 and want[6] == 401.0
