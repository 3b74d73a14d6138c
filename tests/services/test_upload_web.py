"""A client's pandas frames into workers' storage over the web API: descriptors only from the workers'
host, the values from elsewhere; bodies and descriptors that break the rules are refused."""

from __future__ import annotations

import asyncio
import os

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

import mars
import mars.dataframe as md
import mars.remote
from mars.services.errors import DataNotFound, NodeNotFound, SessionNotFound
from mars.services.storage import upload
from mars.services.storage.shm import StoredObject, put_object, unlink_object
from mars.services.storage.worker import check_uploaded
from mars.services.web.client import WebClient
from mars.services.web.wire import BadRequest


@pytest.fixture(scope="module")
def cluster():
    from mars.deploy.local import new_cluster

    c = new_cluster(n_worker=2, n_cpu=1, web=True, processes=False)
    yield c
    c.stop()


@pytest.fixture
def session(cluster, monkeypatch):
    monkeypatch.setattr(mars.remote, "UPLOAD_ABOVE", 0)  # every executed frame is uploaded, however small
    sess = mars.new_session(cluster.web_address, token=cluster.token, default=False)
    assert isinstance(sess._backend, mars.remote._WebBackend)
    yield sess
    sess.close()


def _frame(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "k": rng.integers(0, 7, n), "x": rng.random(n),
        "s": pd.Series(rng.choice(["ab", "cde", "f"], n), dtype="string[pyarrow]"),
        "t": pd.date_range("2021", periods=n, freq="h"),
    })


def _n_tasks(session) -> int:
    return len(session._backend.call("list_tasks", session.session_id))


@pytest.mark.parametrize("chunk_size", [1_000, 97, [300, 1, 699], 1])
def test_a_local_client_writes_the_segments_and_sends_only_descriptors(session, monkeypatch, chunk_size):
    async def no_values(*args, **kw):
        raise AssertionError("values travelled over HTTP although the client shares the workers' memory")

    monkeypatch.setattr(WebClient, "put_chunks", no_values)
    pdf = _frame(1_000 if chunk_size != 1 else 17)
    before = _n_tasks(session)
    df = md.DataFrame(pdf, chunk_size=chunk_size).execute(session=session)
    assert _n_tasks(session) == before  # nothing ran on the cluster: the partitions are in the workers' storage
    pdt.assert_frame_equal(df.fetch(session=session), pdf)
    got = df.groupby("k").agg({"x": "sum"}).execute(session=session).fetch(session=session)
    pdt.assert_frame_equal(got, pdf.groupby("k").agg({"x": "sum"}))


def test_a_client_on_another_host_sends_the_values_over_http(session, monkeypatch):
    monkeypatch.setattr(upload, "is_local_prefix", lambda prefix: False)
    stored: list = []
    real = WebClient.adopt_stored
    monkeypatch.setattr(WebClient, "adopt_stored", lambda self, *a: stored.append(a) or real(self, *a))
    pdf = _frame(500)
    df = md.DataFrame(pdf, chunk_size=60).execute(session=session)
    assert stored == []
    pdt.assert_frame_equal(df.fetch(session=session), pdf)
    pdt.assert_series_equal((df["x"] * 2).execute(session=session).fetch(session=session), pdf["x"] * 2)


def test_values_are_sent_in_batches_under_the_body_limit(session, monkeypatch):
    monkeypatch.setattr(upload, "is_local_prefix", lambda prefix: False)
    monkeypatch.setattr(upload, "SEND_BATCH_BYTES", 2_000)
    sizes: list[int] = []
    real = WebClient.put_chunks
    monkeypatch.setattr(WebClient, "put_chunks", lambda self, sid, w, chunks: sizes.append(len(chunks)) or
                        real(self, sid, w, chunks))
    pdf = pd.DataFrame({"x": np.arange(1_000.0)})  # 8 kB in 10 chunks of 800 bytes: 2 per request
    df = md.DataFrame(pdf, chunk_size=100).execute(session=session)
    assert sum(sizes) == 10 and max(sizes) == 2
    pdt.assert_frame_equal(df.fetch(session=session), pdf)


def _client(cluster) -> WebClient:
    return WebClient(cluster.web_address, token=cluster.token)


def test_an_upload_naming_no_worker_of_the_cluster_is_refused(cluster, session):
    async def go():
        async with _client(cluster) as client:
            await client.put_chunks(session.session_id, "127.0.0.1:1", [("k", (1,), np.zeros(1))])

    with pytest.raises(NodeNotFound, match="127.0.0.1:1"):
        asyncio.run(go())


def test_the_workers_taking_uploads_are_told_only_for_an_open_session(cluster, session):
    async def go(session_id):
        async with _client(cluster) as client:
            return await client.upload_targets(session_id)

    assert len(asyncio.run(go(session.session_id))) == 2
    with pytest.raises(SessionNotFound, match="no-such-session"):
        asyncio.run(go("no-such-session"))


@pytest.mark.parametrize("body, message", [
    ({"worker": "w"}, "an upload body is"),
    ({"worker": "w", "files": []}, '"stored" or "values"'),
    ({"worker": "w", "values": [("k", [1], 0)]}, "shape tuple"),
    ({"worker": "w", "stored": [("k", (1,), "/etc/passwd")]}, "StoredObject"),
    (["w", []], "an upload body is"),
])
def test_an_upload_body_that_breaks_the_rules_is_a_bad_request(cluster, session, body, message):
    async def go():
        async with _client(cluster) as client:
            await client._upload(session.session_id, body)

    with pytest.raises(BadRequest, match=message):
        asyncio.run(go())


def test_descriptors_may_name_only_the_workers_own_segments(tmp_path):
    prefix = f"mars-test-upload-{os.getpid()}"
    desc = put_object("k", np.arange(100_000), prefix)
    try:
        assert check_uploaded(prefix, [desc]) == [desc]
        other = put_object("k", np.arange(100_000), prefix + "x")
        try:
            with pytest.raises(ValueError, match="not one of this worker's"):
                check_uploaded(prefix, [other])
        finally:
            unlink_object(other)
        for name in (f"{prefix}-../../etc/passwd", "/etc/passwd", f"@{prefix}-a/b"):
            with pytest.raises(ValueError, match="not one of this worker's"):
                check_uploaded(prefix, [StoredObject("k", 8, b"", (8,), name)])
        with pytest.raises(DataNotFound, match="not in this worker's shared memory"):
            check_uploaded(prefix, [StoredObject("k", 8, b"", (8,), f"{prefix}-missing")])
        with pytest.raises(ValueError, match="smaller than its descriptor"):
            check_uploaded(prefix, [StoredObject("k", 8 << 20, b"", (8 << 20,), desc.shm_name)])
        with pytest.raises(ValueError, match="device memory"):
            check_uploaded(prefix, [StoredObject("k", 8, b"", (), None, None, 0, "127.0.0.1:1#slot")])
        with pytest.raises(TypeError, match="StoredObject"):
            check_uploaded(prefix, ["/etc/passwd"])
    finally:
        unlink_object(desc)
