"""A stage's intermediates stay while tiling goes on: a later graph of the task that reads one (the
other branch of a query over one join) reads it instead of computing it again (issue 19)."""

from __future__ import annotations

import collections

import numpy as np
import pandas as pd

import mars.dataframe as md
from mars.services.execution import slot as slot_module
from mars.services.meta.core import ChunkMeta
from mars.services.task.processor import SessionProcessor, TaskConfig, TaskRecord

from .test_concurrent_tasks import _assert_only_results_stay


def _count_runs(monkeypatch) -> collections.Counter:
    """How many times each chunk key was computed in a slot."""
    runs: collections.Counter = collections.Counter()
    run_one = slot_module._run_one

    def counting(spec, *args, **kw):
        runs.update(spec.subtask.output_keys)
        return run_one(spec, *args, **kw)

    monkeypatch.setattr(slot_module, "_run_one", counting)
    return runs


def _frames(n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(11)
    left = pd.DataFrame({"k": rng.integers(0, 50, n), "q": rng.integers(1, 9, n), "c": rng.random(n)})
    right = pd.DataFrame({"k": np.arange(50), "g": rng.integers(0, 3, 50)})
    return left, right


def _q11_like(left, right, lib):
    """A join read by two branches: a groupby (whose tiling runs the join in a stage) and a total."""
    j = left.merge(right[right.g == 1], on="k")
    j = j.assign(value=j.c * j.q)
    threshold = j.value.sum() * 0.01
    out = j.groupby("k").agg(value=("value", "sum")).reset_index()
    return out[out.value > threshold].sort_values("value", ascending=False)


def test_a_join_read_by_a_stage_and_by_the_final_graph_is_computed_once(cluster, session, monkeypatch):
    left, right = _frames(3000)
    for chunk_size in (3000, 1000, 701):
        a, b = md.DataFrame(left, chunk_size=chunk_size), md.DataFrame(right, chunk_size=50)
        session.execute(a, b)
        runs = _count_runs(monkeypatch)
        got = session.fetch(session.execute(_q11_like(a, b, md)))
        want = _q11_like(left, right, pd)
        pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True))
        assert runs and max(runs.values()) == 1, {k: n for k, n in runs.items() if n > 1}
        monkeypatch.undo()
        del a, b
    _assert_only_results_stay(cluster, session)


def test_stage_intermediates_are_kept_up_to_the_tasks_budget():
    proc = SessionProcessor("s", "127.0.0.1:1", None, TaskConfig(keep_stage_intermediates=100))
    for key, nbytes in (("a", 60), ("b", 60), ("c", 40), ("d", 10)):
        proc.meta.put(ChunkMeta(key, "w1", (1,), nbytes))
    task = TaskRecord("t", [])
    assert proc.keep_for_tiling(task, ["a", "b", "c", "gone"]) == ["b", "gone"]  # "b" would pass 100 bytes
    assert task.pinned == {"a", "c"} and "a" in proc.pins and task.kept_bytes == 100
    task.cancelled = True
    assert proc.keep_for_tiling(task, ["d"]) == ["d"]  # a cancelled task keeps nothing more
