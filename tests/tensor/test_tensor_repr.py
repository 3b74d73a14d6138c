"""What a tensor shows: its layout before running, numpy's view after."""

from __future__ import annotations

import numpy as np
import pytest

import mars.tensor as mt
from mars.core.reprs import planned_nsplits

CHUNKINGS = [
    (10, "((10,), (7,))"),                   # one chunk per axis
    (3, "((3, 3, 3, 1), (3, 3, 1))"),       # ragged last chunks
    (1, "((1, 1, 1, <5 more>, 1, 1), (1, 1, 1, <2 more>, 1, 1))"),  # size-1 chunks, abbreviated
]


@pytest.mark.parametrize("chunk_size, chunks", CHUNKINGS)
def test_before_running_shape_dtype_and_chunk_sizes(chunk_size, chunks):
    t = mt.ones((10, 7), chunk_size=chunk_size)
    text = repr(t)
    assert text == f"Tensor(shape=(10, 7), dtype=float64, chunks={chunks}, op=TensorFull)"
    assert t.chunks is None  # showing the layout did not tile the user's tensor
    page = t._repr_html_()
    assert "<table>" in page and "(10, 7)" in page and "float64" in page
    if "<" not in chunks:
        assert chunks in page
    planned = planned_nsplits(t.data)
    t.execute()
    assert t.nsplits == planned  # the layout shown is the layout that ran


@pytest.mark.parametrize("chunk_size", [10, 3, 1])
def test_after_running_numpys_repr(chunk_size):
    data = np.arange(70.0).reshape(10, 7)
    t = (mt.tensor(data, chunk_size=chunk_size) + 1).execute()
    assert repr(t) == repr(data + 1)
    assert t._repr_html_() == "<pre>" + repr(data + 1) + "</pre>"


def test_a_large_result_is_summarised_as_numpy_does():
    t = mt.arange(100_000, chunk_size=7_000).execute()
    assert repr(t) == repr(np.arange(100_000))
    assert "..." in repr(t)


def test_sizes_known_only_after_running_show_a_question_mark():
    x = mt.tensor(np.arange(10), chunk_size=4)
    picked = x[x > 3]
    assert repr(picked) == "Tensor(shape=(?,), dtype=int64, chunks=((?, ?, ?),), op=TensorBoolIndex)"
    picked.execute()
    assert repr(picked) == repr(np.arange(4, 10))


def test_a_layout_that_needs_data_first_is_a_question_mark_and_runs_nothing(_fresh_session):
    t = mt.sort(mt.tensor(np.arange(10)[::-1], chunk_size=3))
    assert repr(t) == "Tensor(shape=(10,), dtype=int64, chunks=?, op=TensorSort)"
    assert not _fresh_session.is_executed(t)


def test_a_scalar_and_a_reduction():
    s = mt.ones((6, 4), chunk_size=(4, 3)).sum(axis=0)
    assert repr(s) == "Tensor(shape=(4,), dtype=float64, chunks=((3, 1),), op=TensorSum)"
    total = s.sum()
    assert repr(total).startswith("Tensor(shape=(), dtype=float64, chunks=(), ")
    total.execute()
    assert repr(total) == repr(np.float64(24.0))
