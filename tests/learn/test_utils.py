"""mars.learn.utils against scikit-learn: same permutation for the same seed, same checks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import sklearn.utils as sku

import mars.dataframe as md
import mars.tensor as mt
from mars.learn.utils import check_array, shuffle

X = np.arange(26.0).reshape(13, 2)
Y = np.arange(13)


@pytest.mark.parametrize("chunks", [None, 4, ((6, 1, 6), (1, 1)), 1], ids=["one", "even", "uneven", "rows1"])
def test_shuffle_matches_sklearn(chunks):
    rows = chunks[0] if isinstance(chunks, tuple) else chunks
    x, y = shuffle(mt.tensor(X, chunk_size=chunks), mt.tensor(Y, chunk_size=(rows,) if rows else None),
                   random_state=7)
    ex, ey = sku.shuffle(X, Y, random_state=7)
    np.testing.assert_array_equal(x.execute().fetch(), ex)
    np.testing.assert_array_equal(y.fetch(), ey)
    part = shuffle(mt.tensor(X, chunk_size=chunks), random_state=np.random.RandomState(2), n_samples=5)
    np.testing.assert_array_equal(part.fetch(), sku.shuffle(X, random_state=np.random.RandomState(2), n_samples=5))


def test_shuffle_frames_and_errors():
    frame = pd.DataFrame({"a": Y, "b": Y * 2.0})
    got = shuffle(md.DataFrame(frame, chunk_size=4), random_state=0)
    pd.testing.assert_frame_equal(got.fetch(), sku.shuffle(frame, random_state=0))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        shuffle(X, Y[:5])
    assert shuffle() is None


def test_check_array():
    np.testing.assert_array_equal(check_array(X).fetch(), sku.check_array(X))
    assert check_array([[1, 2]], dtype=[np.float64, np.float32]).dtype == np.float64
    assert check_array(np.float32(X), dtype=[np.float64, np.float32]).dtype == np.float32
    assert check_array([["1", "2"]], dtype="numeric").dtype == np.float64
    with pytest.raises(ValueError, match="Expected 2D array"):
        check_array([1.0, 2.0])
    with pytest.raises(ValueError, match="contains infinity"):
        check_array([[np.inf]])
    assert check_array([[np.nan]], ensure_all_finite="allow-nan").shape == (1, 1)
    with pytest.raises(ValueError, match="0 feature"):
        check_array(np.empty((3, 0)))
    with pytest.raises(ValueError, match="Complex data not supported"):
        check_array(np.ones((2, 2), dtype=complex))
    lazy = mt.ones((4, 2), chunk_size=2)
    assert check_array(lazy) is lazy  # already a float tensor: used as is, not run
