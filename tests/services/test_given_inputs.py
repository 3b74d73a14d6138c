"""Tiny outputs (row counts, key ranges) travel with the reports; readers on other workers get them in their
specs (``SubtaskSpec.given``) rather than reading them from the worker that made them, a round trip each."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

import mars.dataframe as md
from mars.services.execution import worker as worker_module
from mars.services.task.processor import SessionProcessor


@pytest.fixture
def specs(monkeypatch) -> list:
    """Every spec the supervisor sends (with the worker it goes to)."""
    seen: list = []
    send_specs = SessionProcessor.send_specs

    async def spy(self, address, batch):
        seen.extend((address, s) for s in batch)
        await send_specs(self, address, batch)

    monkeypatch.setattr(SessionProcessor, "send_specs", spy)
    return seen


def _frame(n: int = 300_000) -> pd.DataFrame:
    """Big enough (4.8 MB) not to go whole to one slot as a small graph."""
    rng = np.random.default_rng(3)
    return pd.DataFrame({"k": rng.integers(0, 30, n), "v": rng.random(n)}, index=np.arange(n) * 3)


def test_counts_from_another_worker_come_in_the_spec(cluster, session, specs):
    """A default index numbered across filtered partitions on both workers: each partition's start is the sum
    of the counts before it, some made on the other worker."""
    pdf = _frame()
    df = md.DataFrame(pdf, chunk_size=50_000)
    session.execute(df)
    specs.clear()
    got = session.fetch(session.execute(df[df.v > 0.4].reset_index()))
    pd.testing.assert_frame_equal(got, pdf[pdf.v > 0.4].reset_index())
    given = [s for _, s in specs if s.given]
    assert given, "no spec read a count made on the other worker: the test shows nothing"
    assert all(isinstance(v, int) for s in given for v in s.given.values())
    # nothing tiny is read from another worker
    assert all(r.nbytes >= worker_module.PASS_VALUE_BELOW for _, s in specs for r in s.remote_inputs.values())
    assert all(k not in s.remote_inputs and k not in s.local_inputs for s in given for k in s.given)


def test_bigger_outputs_are_still_read_from_their_worker(cluster, session, specs):
    """A value over the limit stays where it was made (the supervisor keeps only tiny ones)."""
    pdf = _frame()
    df = md.DataFrame(pdf, chunk_size=50_000)
    session.execute(df)
    specs.clear()
    got = session.fetch(session.execute(df.merge(df[["k"]].drop_duplicates(), on="k").v.sum()))
    assert got == pytest.approx(pdf.merge(pdf[["k"]].drop_duplicates(), on="k").v.sum())
    assert all(len(pickle.dumps(v, protocol=5)) < 2 * worker_module.PASS_VALUE_BELOW
               for _, s in specs for v in s.given.values())
    assert any(s.remote_inputs for _, s in specs)
