"""A frame the client uploads carries its integer columns' ranges (``HeldData.ranges``): a grouping by one of them
on the cluster plans at once, with no stage of :class:`KeyRange` subtasks reading every partition first."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

import mars.dataframe as md
import mars.dataframe.groupby.agg as agg_module
import mars.dataframe.uniques as uniques_module
from mars import remote
from mars.core.operator import HeldData
from mars.dataframe.datasource import column_ranges
from mars.services.task.processor import SessionProcessor

N = 240


@pytest.fixture
def op_names(monkeypatch) -> list:
    """The op names of every subtask the supervisor sends (a fused subtask's steps each)."""
    seen: list = []
    send_specs = SessionProcessor.send_specs

    async def spy(self, address, batch):
        for spec in batch:
            op = spec.subtask.op
            seen.extend(type(s.op).__name__ for s in op.steps) if hasattr(op, "steps") else seen.append(
                type(op).__name__)
        await send_specs(self, address, batch)

    monkeypatch.setattr(SessionProcessor, "send_specs", spy)
    return seen


@pytest.fixture(autouse=True)
def _small_frames_are_uploaded(monkeypatch):
    monkeypatch.setattr(remote, "UPLOAD_ABOVE", 0)
    monkeypatch.setattr(agg_module, "SINGLE_ROWS", -1)  # small frames still take the partitioned paths


def _frame(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "sorted": np.sort(rng.integers(-5, 40, N)),  # in key order: each partition grouped alone
        "dense": rng.integers(0, 30, N).astype(np.int32),  # a narrow range: partials indexed by key
        "wide": rng.integers(0, 2**40, N),  # neither: the other plans
        "x": rng.random(N),
        "s": rng.choice(["a", "b"], N),
    })


@pytest.mark.parametrize("chunk_size", [N, 50, 1, (100, 0, 97, 43)])
@pytest.mark.parametrize("by", ["sorted", "dense", "wide"])
def test_grouping_an_uploaded_frame_reads_no_key_ranges_and_equals_pandas(session, op_names, chunk_size, by):
    if chunk_size == 1 and by == "wide":
        pytest.skip("240 partitions of one row each: the shuffle path, slow and not about ranges")
    pdf = _frame()
    held = md.DataFrame(pdf, chunk_size=chunk_size).execute(session=session)
    assert all(isinstance(c.op, HeldData) and c.op.ranges is not None for c in held.data.chunks)
    op_names.clear()
    got = session.fetch(session.execute(held.groupby(by).agg(total=("x", "sum"), n=("x", "count"))))
    pdt.assert_frame_equal(got, pdf.groupby(by).agg(total=("x", "sum"), n=("x", "count")))
    assert "KeyRange" not in op_names
    # a selection of the held columns keeps the rows, and so the ranges
    op_names.clear()
    got = session.fetch(session.execute(held[[by, "x"]].groupby(by).x.sum()))
    pdt.assert_series_equal(got, pdf[[by, "x"]].groupby(by).x.sum())
    assert "KeyRange" not in op_names


def test_ranges_not_known_are_still_read_from_the_partitions(session, op_names):
    """uint64 keys from 2**63 up have no int64 range: those partitions are asked, as before."""
    pdf = pd.DataFrame({"k": np.array([2**63 + 5, 3, 2**63 + 5, 7] * 30, dtype=np.uint64), "x": np.arange(120.0)})
    held = md.DataFrame(pdf, chunk_size=50).execute(session=session)
    got = session.fetch(session.execute(held.groupby("k").x.sum()))
    pdt.assert_series_equal(got, pdf.groupby("k").x.sum())
    assert "KeyRange" in op_names


def test_column_ranges_are_exact_and_only_for_unique_integer_labels():
    frame = pd.DataFrame([[1, -4, 2.5, 9, np.uint64(7)], [6, 3, 1.0, 2, np.uint64(2)]],
                         columns=["a", "b", "f", "a", "u"]).astype({"b": np.int8, "u": np.uint64})
    assert column_ranges(frame) == {"b": (-4, 3), "u": (2, 7)}
    assert column_ranges(frame.iloc[:0]) == {"b": None, "u": None}
    big = pd.DataFrame({"u": np.array([2**63, 1], dtype=np.uint64), "i": [5, 2]})
    assert column_ranges(big) == {"i": (2, 5)}


def test_an_upload_goes_on_when_the_ranges_cannot_be_read(session, op_names, monkeypatch):
    from mars.dataframe.datasource import FromPandas

    def broken(self):
        raise ValueError("no ranges today")

    monkeypatch.setattr(FromPandas, "int_ranges", broken)
    pdf = _frame(1)
    held = md.DataFrame(pdf, chunk_size=50).execute(session=session)
    assert all(c.op.ranges is None for c in held.data.chunks)
    got = session.fetch(session.execute(held.groupby("dense").x.sum()))
    pdt.assert_series_equal(got, pdf.groupby("dense").x.sum())
    assert "KeyRange" in op_names  # read from the partitions, as before


def _stages(monkeypatch) -> list:
    """The graphs each task runs before its final one (its tiling stages)."""
    runs: list = []
    run_graph = SessionProcessor._run_graph

    async def spy(self, task, chunks, keep, carried, final=False):
        runs.append(final)
        return await run_graph(self, task, chunks, keep, carried, final)

    monkeypatch.setattr(SessionProcessor, "_run_graph", spy)
    return runs


@pytest.mark.parametrize("chunk_size", [50, (100, 0, 97, 43), 60])
def test_distinct_values_of_an_uploaded_column_are_bounded_by_its_ranges(session, monkeypatch, chunk_size):
    """drop_duplicates of one integer column, read by a merge: a partition holds at most its key span's values,
    so the partials go to a tree with no stage counting them first (TPC-H Q22's customers with orders)."""
    monkeypatch.setattr(uniques_module, "TREE_MAX_ROWS", 200)  # 240 rows are too many; 30 keys a partition are not
    pdf = _frame(2)
    left = pd.DataFrame({"dense": np.arange(-5, 40, dtype=np.int32), "w": np.arange(45.0)})
    held = md.DataFrame(pdf, chunk_size=chunk_size).execute(session=session)
    expected = left.merge(pdf[["dense"]].drop_duplicates(), on="dense")
    runs = _stages(monkeypatch)
    got = session.fetch(session.execute(md.DataFrame(left, chunk_size=20).merge(held[["dense"]].drop_duplicates(),
                                                                                on="dense")))
    pdt.assert_frame_equal(got.sort_values("dense", ignore_index=True), expected.sort_values("dense", ignore_index=True))
    with_ranges = runs.count(False)
    runs.clear()
    monkeypatch.setattr(uniques_module, "held_bound", lambda chunk, column: uniques_module.UNKNOWN)
    got = session.fetch(session.execute(md.DataFrame(left, chunk_size=20).merge(held[["dense"]].drop_duplicates(),
                                                                                on="dense")))
    pdt.assert_frame_equal(got.sort_values("dense", ignore_index=True), expected.sort_values("dense", ignore_index=True))
    assert with_ranges < runs.count(False)  # the stage that counted the partials is gone


def _through_rows(t: object, names: object) -> object:
    """A filter, an assignment and a merge between the upload and the grouping: none makes new key values."""
    kept = t[t.x > 0.3]
    kept = kept.assign(y=kept.x * 2)
    return kept.merge(names, on="dense")[["dense", "y", "label"]]


@pytest.mark.parametrize("chunk_size", [50, 1, (100, 0, 97, 43)])
def test_a_narrow_key_taken_through_filters_and_merges_plans_at_once(session, op_names, chunk_size):
    """The rows of an uploaded frame, filtered and merged, keep their key within the upload's ranges: a grouping
    by a narrow key indexes its partials by key with no KeyRange stage."""
    pdf = _frame(3)
    names = pd.DataFrame({"dense": np.arange(0, 30, dtype=np.int32), "label": [f"n{i}" for i in range(30)]})
    held = md.DataFrame(pdf, chunk_size=chunk_size).execute(session=session)
    lazy_names = md.DataFrame(names).execute(session=session)
    op_names.clear()
    got = session.fetch(session.execute(_through_rows(held, lazy_names).groupby("dense").y.sum()))
    pdt.assert_series_equal(got, _through_rows(pdf, names).groupby("dense").y.sum())
    assert "KeyRange" not in op_names
    # (one-row partitions: the merge counts them first, finds them small and merges them whole, in one call)
    assert ("GroupPartial" in op_names) is (chunk_size != 1)


def test_a_wide_key_taken_through_a_filter_still_reads_its_ranges(session, op_names):
    """Only the dense plan takes a bound: the others want the partitions' sizes too, which a KeyRange stage
    learns and a bound through a filter does not give."""
    pdf = _frame(4)
    held = md.DataFrame(pdf, chunk_size=(100, 0, 97, 43)).execute(session=session)
    got = session.fetch(session.execute(held[held.x > 0.5].groupby("wide").x.sum()))
    pdt.assert_series_equal(got, pdf[pdf.x > 0.5].groupby("wide").x.sum())
    assert "KeyRange" in op_names
