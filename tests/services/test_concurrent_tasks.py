"""Jobs running at once in one session: they compute the same chunks and must not free each other's."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mars.dataframe as md
import mars.tensor as mt


def _wait_all(futures, timeout=60):
    for f in futures:
        f.result(timeout)


@pytest.mark.parametrize("chunk_size", [40, 17])
def test_concurrent_jobs_sharing_intermediates_all_complete_right(cluster, session, chunk_size):
    x = np.random.default_rng(0).random((200, 200))
    a = mt.tensor(x, chunk_size=chunk_size)
    session.execute(a)
    shared = a @ a.T  # the same chunks (same keys) in every job below
    exprs = [(shared + i).sum(axis=0) for i in range(6)] + [shared.max(axis=1), (shared * 2).sum()]
    _wait_all([session.execute(e, wait=False) for e in exprs])
    xx = x @ x.T
    expected = [(xx + i).sum(axis=0) for i in range(6)] + [xx.max(axis=1), (xx * 2).sum()]
    for got, want in zip(session.fetch(*exprs), expected):
        np.testing.assert_allclose(got, want, rtol=1e-9)
    _assert_only_results_stay(cluster, session)


def test_the_same_shuffle_submitted_many_times_at_once(cluster, session):
    rng = np.random.default_rng(1)
    pdf = pd.DataFrame({"k": rng.integers(0, 50, 3000), "v": rng.random(3000)})
    df = md.DataFrame(pdf, chunk_size=700)
    session.execute(df)
    jobs = [df.sort_values("v") for _ in range(4)] + [df.groupby("k").sum() for _ in range(3)]
    _wait_all([session.execute(j, wait=False) for j in jobs])
    for got in session.fetch(*jobs[:4]):
        pd.testing.assert_frame_equal(got, pdf.sort_values("v"))
    for got in session.fetch(*jobs[4:]):
        pd.testing.assert_frame_equal(got, pdf.groupby("k").sum())
    _assert_only_results_stay(cluster, session)


def test_a_job_reading_what_a_finished_job_made_while_a_third_runs(cluster, session):
    """Keys made by a job that ended are freed only once no job still running reads them."""
    x = np.arange(10_000, dtype=float).reshape(100, 100)
    a = mt.tensor(x, chunk_size=10)
    session.execute(a)
    first = (a.T @ a).sum(axis=1)
    futures = [session.execute(first, wait=False)]
    futures += [session.execute((a.T @ a).max(axis=0) + i, wait=False) for i in range(4)]
    _wait_all(futures)
    np.testing.assert_allclose(session.fetch(first), (x.T @ x).sum(axis=1))
    _assert_only_results_stay(cluster, session)


def _assert_only_results_stay(cluster, session):
    """Nothing leaks: meta holds only the held results, nothing stays pinned, the workers hold no more."""
    import time

    deadline = time.monotonic() + 5
    while True:
        stray, pinned, on_workers = cluster.run(_leftovers(cluster, session.session_id))
        if not stray and not pinned and not on_workers:
            return
        assert time.monotonic() < deadline, (f"left behind: {len(stray)} keys in meta, {pinned} pinned, "
                                             f"{len(on_workers)} on workers")
        time.sleep(0.05)


async def _leftovers(cluster, session_id):
    from mars.services.session.api import task_manager_uid
    from mars.services.storage.worker import STORAGE_UID

    proc = cluster.supervisor.pool._actors[task_manager_uid(session_id)].actor.proc
    held = set(proc.refs._refs)
    stray = [k for k in proc.meta._meta if k not in held]
    on_workers = set()
    for w in cluster.workers:
        storage = w.pool._actors[STORAGE_UID].actor
        on_workers |= set(storage._store._sessions.get(session_id, {})) - held
    return stray, len(proc.pins), on_workers
