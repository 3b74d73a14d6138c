"""Cancelling on a real cluster: a chunk function stuck in a slot process does not keep the slot.

A ``mars-supervisor`` and one ``mars-worker --n-cpu 1``: one slot, so the
next job can run only once the cancelled one's subtask has left it. The
worker kills a slot still running only a cancelled task's subtasks after
``worker.cancel_grace`` (2 s) and its main pool starts the slot again.
"""

from __future__ import annotations

import concurrent.futures
import os
import time
import urllib.parse

import pandas as pd
import pytest

import mars
import mars.dataframe as md
import mars.tensor as mt
from process_nodes import api_get, one_worker_cluster

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def cluster():
    with one_worker_cluster("--n-cpu", "1", "--n-io-process", "0") as (url, worker):
        yield url, worker


def _stuck_job(started: str, seconds: float = 120.0):
    """A one-partition job whose chunk function marks ``started`` and then sleeps for ``seconds``."""

    def stuck(part: pd.DataFrame) -> pd.DataFrame:
        open(started, "w").close()
        time.sleep(seconds)
        return part

    frame = pd.DataFrame({"x": range(4)})
    return md.DataFrame(frame, chunk_size=4).map_partitions(stuck, meta=frame.iloc[:0])


def _wait_for_file(path: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        assert time.monotonic() < deadline, "the job's chunk function never started"
        time.sleep(0.05)


def _stored_chunks(url: str, worker: str) -> int:
    """How many chunks ``worker`` holds, once its heartbeats carry its figures."""
    deadline = time.monotonic() + 30
    while True:
        figures = api_get(url, f"/api/cluster/workers/{urllib.parse.quote(worker, safe='')}")
        if "storage_n_chunks" in figures:
            return figures["storage_n_chunks"]
        assert time.monotonic() < deadline, f"worker {worker} sent no figures: {figures}"
        time.sleep(0.1)


def test_a_cancelled_job_leaves_its_slot_within_seconds_and_the_next_job_runs(cluster, tmp_path):
    url, worker = cluster
    with mars.new_session(url, default=False) as sess:
        before = _stored_chunks(url, worker.address)
        started = str(tmp_path / "started")
        future = sess.execute(_stuck_job(started), wait=False)
        _wait_for_file(started)
        t0 = time.monotonic()
        assert future.cancel()
        with pytest.raises(concurrent.futures.CancelledError):
            future.result(30)
        assert sess.run(mt.arange(10, chunk_size=3).sum()) == 45  # the only slot is free again
        took = time.monotonic() - t0
        assert took < 15, f"the next job waited {took:.1f} s for the cancelled one's slot"
        deadline = time.monotonic() + 10
        while _stored_chunks(url, worker.address) > before:  # the cancelled job's data is freed
            assert time.monotonic() < deadline, "the cancelled job's chunks stayed on the worker"
            time.sleep(0.1)


def test_closing_a_session_stops_what_it_runs(cluster, tmp_path):
    url, _ = cluster
    started = str(tmp_path / "started")
    sess = mars.new_session(url, default=False)
    sess.execute(_stuck_job(started), wait=False)
    _wait_for_file(started)
    t0 = time.monotonic()
    sess.close()
    with mars.new_session(url, default=False) as other:
        assert other.run(mt.arange(6, chunk_size=2).sum()) == 15
    took = time.monotonic() - t0
    assert took < 15, f"a job of another session waited {took:.1f} s for a closed session's subtask"
