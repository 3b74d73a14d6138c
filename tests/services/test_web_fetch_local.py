"""Results fetched over the web API by a client on the workers' host: their shared memory mapped, not sent.

The server answers a fetch with ``"segments": true`` with descriptors of what
the workers hold in shared memory; the client maps them (copy on write) and
asks again for the values of any it cannot map. What the user gets is what
the values path gives: equal, writable, and valid after the worker frees the
chunks.
"""

from __future__ import annotations

import asyncio
import gc
import os
import time

import aiohttp
import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

import mars
import mars.dataframe as md
import mars.tensor as mt
from mars.services.errors import DataNotFound
from mars.services.storage import shm
from mars.services.storage.shm import (
    StoredObject,
    claim_prefix,
    get_object,
    put_object,
    release_prefix,
)
from mars.services.web import client as web_client
from mars.services.web.client import ForeignSegment, WebClient, map_segment

PREFIX = f"mars-test-wfl-{os.getpid()}"


@pytest.fixture(scope="module")
def cluster():
    from mars.deploy.local import new_cluster

    c = new_cluster(n_worker=2, n_cpu=1, web=True, processes=False)
    yield c
    c.stop()


@pytest.fixture
def session(cluster):
    sess = mars.new_session(cluster.web_address, token=cluster.token, default=False)
    assert isinstance(sess._backend, mars.remote._WebBackend)
    yield sess
    sess.close()


@pytest.fixture
def traffic(monkeypatch):
    """What the client did: ``mapped`` segment names, and each ``values`` request's number of keys."""
    seen: dict[str, list] = {"mapped": [], "values": []}
    real_map, real_values = web_client.map_segment, WebClient._fetch_values

    def mapping(desc):
        value = real_map(desc)
        seen["mapped"].append(desc.shm_name)
        return value

    async def values(self, sid, keys):
        seen["values"].append(len(keys))
        return await real_values(self, sid, keys)

    monkeypatch.setattr(web_client, "map_segment", mapping)
    monkeypatch.setattr(WebClient, "_fetch_values", values)
    return seen


def _frame(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "i": rng.integers(0, 1000, n), "x": rng.random(n),
        "o": np.array([f"w{i % 977}" for i in range(n)], dtype=object),
        "s": pd.Series(rng.choice(["ab", "cde", "f"], n), dtype="string[pyarrow]"),
        "t": pd.date_range("2021", periods=n, freq="min"),
    })


def _both_ways(session, traffic, obj):
    """``obj`` fetched by mapping (checked: no values travelled), then as values."""
    before = len(traffic["values"])
    got = obj.fetch(session=session)
    assert len(traffic["values"]) == before, "values travelled although the client shares the workers' memory"
    WebClient.map_shared_memory = False
    try:
        plain = obj.fetch(session=session)
    finally:
        WebClient.map_shared_memory = True
    return got, plain


CHUNKINGS = [40_000, 9_000, [20_000, 1, 5_000, 14_999], 1]


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
def test_frames_series_tensors_and_strings_are_equal_either_way(session, traffic, chunk_size):
    n = 40_000 if chunk_size != 1 else 23
    pdf = _frame(n)
    df = md.DataFrame(pdf, chunk_size=chunk_size).execute(session=session, show_progress=False)
    got, plain = _both_ways(session, traffic, df)
    pdt.assert_frame_equal(got, pdf)
    pdt.assert_frame_equal(plain, pdf)
    sizes = chunk_size if isinstance(chunk_size, list) else None
    ser = (df["x"] * 2).execute(session=session, show_progress=False)
    pdt.assert_series_equal(_both_ways(session, traffic, ser)[0], pdf["x"] * 2)
    strings = df["o"].execute(session=session, show_progress=False)
    pdt.assert_series_equal(_both_ways(session, traffic, strings)[0], pdf["o"])
    arr = np.arange(n * 3, dtype=np.float64).reshape(n, 3)
    t = (mt.tensor(arr, chunk_size=(sizes or chunk_size, 3)) + 1).execute(session=session, show_progress=False)
    got_t, plain_t = _both_ways(session, traffic, t)
    np.testing.assert_array_equal(got_t, arr + 1)
    np.testing.assert_array_equal(plain_t, arr + 1)
    # chunk by chunk, as the web client gives them (chunks of one row come inline with their descriptors)
    keys = [c.key for c in df.data.chunks]
    before = len(traffic["values"])
    mapped = session._backend.call("fetch", session.session_id, keys)
    assert len(traffic["values"]) == before
    WebClient.map_shared_memory = False
    try:
        sent = session._backend.call("fetch", session.session_id, keys)
    finally:
        WebClient.map_shared_memory = True
    assert len(mapped) == len(sent) == len(keys)
    for a, b in zip(mapped, sent):
        pdt.assert_frame_equal(a, b)
    if chunk_size != 1:  # chunks of one row are small enough to travel inline with their descriptors
        assert traffic["mapped"] and all(name.startswith("mars-") for name in traffic["mapped"])


def test_results_are_writable_and_writes_stay_in_the_client(session, traffic):
    arr = np.arange(300_000, dtype=np.int64)
    t = (mt.tensor(arr, chunk_size=100_000) * 3).execute(session=session, show_progress=False)
    keys = [c.key for c in t.data.chunks]
    raw = session._backend.call("fetch", session.session_id, keys)
    assert len(traffic["mapped"]) == 3 and traffic["values"] == []
    assert all(v.flags.writeable for v in raw)  # as values received over HTTP are
    raw[0][:] = -1
    again = session._backend.call("fetch", session.session_id, keys)
    np.testing.assert_array_equal(np.concatenate(again), arr * 3)  # the worker's chunk is untouched
    whole = t.fetch(session=session)
    assert whole.flags.writeable
    df = md.DataFrame(_frame(30_000), chunk_size=10_000).execute(session=session, show_progress=False)
    got, plain = _both_ways(session, traffic, df)
    flags = [b.values.flags.writeable for b in got._mgr.blocks if isinstance(b.values, np.ndarray)]
    assert flags == [b.values.flags.writeable for b in plain._mgr.blocks if isinstance(b.values, np.ndarray)]
    assert all(flags)
    got.loc[0, "x"] = 5.0
    assert got.loc[0, "x"] == 5.0 and plain.loc[0, "x"] != 5.0


def test_mapped_values_stay_valid_after_the_worker_frees_the_chunks(session, traffic):
    arr = np.random.default_rng(3).random(400_000)
    t = (mt.tensor(arr, chunk_size=100_000) + 0).execute(session=session, show_progress=False)
    keys = [c.key for c in t.data.chunks]
    raw = session._backend.call("fetch", session.session_id, keys)
    names = list(traffic["mapped"])
    assert len(names) == 4
    session._backend.call("release", session.session_id, keys)
    deadline = time.monotonic() + 10
    while any(os.path.exists(shm.segment_path(n)) for n in names):
        assert time.monotonic() < deadline, "the worker did not free the released chunks"
        time.sleep(0.05)
    gc.collect()
    np.testing.assert_array_equal(np.concatenate(raw), arr)
    with pytest.raises(DataNotFound):
        session._backend.call("fetch", session.session_id, keys[:1])


def test_a_client_on_another_host_gets_the_values_and_then_asks_for_them_directly(session, traffic, monkeypatch):
    client = session._backend._client.client
    bodies: list = []
    real = WebClient._request

    async def request(self, method, path, **kw):
        if path.endswith("/fetch"):
            bodies.append(kw["json_body"])
        return await real(self, method, path, **kw)

    monkeypatch.setattr(WebClient, "_request", request)
    monkeypatch.setattr(web_client, "is_local_prefix", lambda prefix: False)
    pdf = _frame(30_000)
    df = md.DataFrame(pdf, chunk_size=10_000).execute(session=session, show_progress=False)
    pdt.assert_frame_equal(df.fetch(session=session), pdf)
    assert traffic["mapped"] == [] and traffic["values"] == [3]
    assert bodies[0].get("segments") is True and len(client._unmapped) >= 1
    pdt.assert_frame_equal(df.fetch(session=session), pdf)
    assert bodies[-1] == {"keys": [c.key for c in df.data.chunks]}  # no second try at mapping


def test_with_workers_on_two_hosts_the_other_hosts_segments_come_as_values(session, traffic, monkeypatch):
    real = web_client.is_local_prefix
    local = []

    def one_host(prefix):  # the first worker seen is on this host, the other is not
        local.append(local[0] if local else prefix)
        return real(prefix) and prefix == local[0]

    monkeypatch.setattr(web_client, "is_local_prefix", one_host)
    pdf = _frame(60_000)
    df = md.DataFrame(pdf, chunk_size=10_000).execute(session=session, show_progress=False)
    pdt.assert_frame_equal(df.fetch(session=session), pdf)
    n_mapped, n_sent = len(traffic["mapped"]), sum(traffic["values"])
    assert n_mapped and n_sent and n_mapped + n_sent == 6  # chunks spread over both workers
    pdt.assert_frame_equal(df.fetch(session=session), pdf)
    # the other host's segments came with the answer, as values: no second request
    assert len(traffic["mapped"]) == 2 * n_mapped and sum(traffic["values"]) == n_sent


def test_a_segment_gone_meanwhile_is_fetched_again_as_a_value(session, traffic, monkeypatch):
    client = session._backend._client.client
    monkeypatch.setattr(web_client, "segment_path", lambda name: f"/dev/shm/gone-{name}")
    pdf = _frame(30_000)
    df = md.DataFrame(pdf, chunk_size=10_000).execute(session=session, show_progress=False)
    pdt.assert_frame_equal(df.fetch(session=session), pdf)
    assert traffic["values"] == [3] and client._unmapped == set()  # the worker is still taken for local


def test_spilled_chunks_come_as_values_never_as_paths(tmp_path):
    from mars.deploy.local import new_cluster

    config = {"worker": {"cache_mem": "2m", "spill_dirs": [str(tmp_path)]}}
    pdf = _frame(60_000)
    with new_cluster(n_worker=1, n_cpu=1, web=True, processes=False, config=config) as c:
        sess = mars.new_session(c.web_address, token=c.token, default=False)
        try:
            df = md.DataFrame(pdf, chunk_size=5_000).execute(session=sess, show_progress=False)
            keys = [ch.key for ch in df.data.chunks]
            deadline = time.monotonic() + 10
            while not any(name.startswith("mars-") for _, _, names in os.walk(tmp_path) for name in names):
                assert time.monotonic() < deadline, "nothing spilled"  # (a read would hold the chunks a while)
                time.sleep(0.05)
            reply = _raw_fetch(c.web_address, sess.session_id, keys, c.token)
            assert len(reply["segments"]) < len(keys)
            assert all(not d.spilled and not d.shm_name.startswith("@") for d in reply["segments"].values())
            assert all((v is None) == (i in reply["segments"]) for i, v in enumerate(reply["values"]))
            pdt.assert_frame_equal(df.fetch(session=sess), pdf)
        finally:
            sess.close()


def _raw_fetch(url: str, sid: str, keys: list[str], token: str) -> dict:
    async def go():
        async with WebClient(url, token) as client:
            return await client._request("POST", f"/api/sessions/{sid}/fetch",
                                         json_body={"keys": keys, "segments": True}, binary=True)

    return asyncio.run(go())


@pytest.mark.parametrize("how", ["none", "wrong"])
def test_a_fetch_for_descriptors_needs_the_token(cluster, session, how):
    t = mt.ones(100_000, chunk_size=50_000).execute(session=session, show_progress=False)
    keys = [c.key for c in t.data.chunks]
    headers = {} if how == "none" else {"Authorization": "Bearer guess"}

    async def go():
        async with aiohttp.ClientSession() as raw:
            url = f"{cluster.web_address}/api/sessions/{session.session_id}/fetch"
            async with raw.post(url, json={"keys": keys, "segments": True}, headers=headers) as resp:
                return resp.status, await resp.read()

    status, body = asyncio.run(go())
    assert status == 401 and b"Unauthorized" in body and b"mars-" not in body
    reply = _raw_fetch(cluster.web_address, session.session_id, keys, cluster.token)
    assert sorted(reply["segments"]) == [0, 1] and reply["values"] == [None, None]


@pytest.mark.parametrize("body, needle", [
    ({"keys": [], "segments": "yes"}, "segments must be true or false"),
    ({"keys": [], "segments": True, "skip_prefixes": "mars"}, "skip_prefixes must be a list"),
])
def test_bad_fetch_flags_are_400(cluster, session, body, needle):
    async def go():
        async with aiohttp.ClientSession() as raw:
            url = f"{cluster.web_address}/api/sessions/{session.session_id}/fetch"
            async with raw.post(url, json=body, headers={"Authorization": f"Bearer {cluster.token}"}) as resp:
                return resp.status, await resp.text()

    status, text = asyncio.run(go())
    assert status == 400 and needle in text


# ---------------------------------------------------------------------- what a descriptor may open
@pytest.fixture
def prefix():
    claim_prefix(PREFIX)
    yield PREFIX
    shm.unlink_prefix(PREFIX)
    release_prefix(PREFIX)


def test_map_segment_reads_a_worker_segment_copy_on_write(prefix):
    desc = put_object("k", np.arange(50_000), prefix)
    value = map_segment(desc)
    value[:10] = -7
    np.testing.assert_array_equal(get_object(desc), np.arange(50_000))
    shm.unlink_object(desc)
    assert value[10:].sum() == np.arange(10, 50_000).sum()  # the pages outlive the name


@pytest.mark.parametrize("name", [
    "../../etc/passwd", "/etc/passwd", "@{p}-" + "0" * 32, "{p}-" + "0" * 31, "{p}-" + "G" * 32,
    "other-prefix-" + "0" * 32, "{p}/../x-" + "0" * 32,
])
def test_map_segment_opens_no_path_a_descriptor_spells_out(prefix, name):
    desc = StoredObject("k", 8, b"", (8,), name.format(p=prefix))
    with pytest.raises(ForeignSegment, match="not a segment of this host's workers"):
        map_segment(desc)


def test_map_segment_refuses_links_fifos_short_files_and_other_users_files(prefix, tmp_path):
    desc = put_object("k", np.arange(50_000), prefix)
    target = tmp_path / "secret"
    target.write_bytes(b"x" * 1_000_000)

    def named(suffix: str) -> StoredObject:
        return StoredObject("k", desc.nbytes, desc.header, desc.buffer_sizes, f"{prefix}-{suffix * 32}")

    os.symlink(target, shm.segment_path(named("a").shm_name))
    with pytest.raises(OSError):  # O_NOFOLLOW: ELOOP
        map_segment(named("a"))
    os.mkfifo(shm.segment_path(named("b").shm_name))
    with pytest.raises(ForeignSegment, match="not a file of this user"):
        map_segment(named("b"))  # refused without waiting for a writer
    with open(shm.segment_path(named("c").shm_name), "wb") as f:
        f.write(b"x" * 100)
    with pytest.raises(ForeignSegment, match="as big as"):
        map_segment(named("c"))
    with pytest.raises(DataNotFound, match="gone"):
        map_segment(named("d"))
    real_open = os.open

    def refused(path, *args, **kw):  # as for a client of another user than the worker's
        if PREFIX in str(path):
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, *args, **kw)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "open", refused)
        with pytest.raises(ForeignSegment, match="not a file of this user"):
            map_segment(desc)
    if os.geteuid() == 0:  # a file of another user, put where a worker's segment would be
        os.chown(shm.segment_path(desc.shm_name), 12345, -1)
        with pytest.raises(ForeignSegment, match="not a file of this user"):
            map_segment(desc)
