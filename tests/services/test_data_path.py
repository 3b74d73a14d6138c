"""Client data into the cluster: keys of pandas objects, partitions pickled without copies, and
frames put straight into workers' storage (equal to pandas, spread over the workers, freed when dropped)."""

from __future__ import annotations

import gc
import time
import weakref

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

import mars
import mars.dataframe as md
import mars.remote
from mars.core.tiling import as_data
from mars.dataframe.datasource import FromPandas, tokenize_pandas
from mars.serialization import deserialize, serialize
from mars.services.storage import upload
from mars.services.storage.upload import spread


# ---------------------------------------------------------------------- spreading chunks over workers
def test_spread_balances_bytes_per_slot():
    assert spread([10] * 6, [1, 1, 1]) == [0, 1, 2, 0, 1, 2]
    assert spread([10] * 6, [2, 1]) == [0, 1, 0, 0, 1, 0]
    assert spread([100, 1, 1, 1], [1, 1]) == [0, 1, 1, 1]
    assert spread([], [1]) == []


def test_spread_refuses_no_workers():
    with pytest.raises(ValueError, match="positive weights"):
        spread([1], [])
    with pytest.raises(ValueError, match=r"\[0\]"):
        spread([1], [0])


# ---------------------------------------------------------------------- keys
def _variants() -> list[pd.DataFrame]:
    base = pd.DataFrame({
        "i": pd.array([1, None, 3], dtype="Int64"), "c": pd.Categorical(["a", "b", "a"]),
        "t": pd.date_range("2020", periods=3, tz="UTC"), "o": pd.Series([1, "1", None], dtype=object),
        "s": pd.Series(["a", "b", "c"], dtype="string[pyarrow]"), "so": pd.Series(["x", "y", "z"], dtype=object),
    })
    return [
        base,
        base.assign(i=pd.array([1, 0, 3], dtype="Int64")),  # a missing value becomes a value
        base.assign(c=pd.Categorical(["a", "b", "b"])),
        base.assign(c=pd.Categorical(["a", "b", "a"], categories=["b", "a"])),  # same labels, other codes
        base.assign(o=pd.Series(["1", 1, None], dtype=object)),
        base.assign(o=pd.Series([1, "1", np.nan], dtype=object)),
        base.assign(s=pd.Series(["a", "b", "d"], dtype="string[pyarrow]")),
        base.assign(s=pd.Series(["a", None, "c"], dtype="string[pyarrow]")),
        base.assign(so=pd.Series(["x", "y", "zz"], dtype=object)),
        base.assign(t=pd.date_range("2020", periods=3, tz="Europe/Paris")),
    ]


def test_tokenize_pandas_is_deterministic_and_tells_values_apart():
    variants = _variants()
    tokens = [tokenize_pandas(v) for v in variants]
    assert len(set(tokens)) == len(variants)
    assert tokens == [tokenize_pandas(v.copy(deep=True)) for v in variants]


def test_tokenize_pandas_of_arrow_slices_covers_only_their_rows():
    s = pd.Series([f"v{i}" for i in range(100)], dtype="string[pyarrow]")
    assert tokenize_pandas(s.iloc[10:20]) != tokenize_pandas(s.iloc[20:30])
    assert tokenize_pandas(s.iloc[10:20]) == tokenize_pandas(s.iloc[10:20])


def test_tokenize_pandas_hashes_a_large_frame_on_threads_with_the_same_key():
    n = 1_200_000  # 4 columns of 9.6 MB: above the threaded size
    df = pd.DataFrame({f"c{i}": np.arange(n, dtype=np.float64) * i for i in range(4)})
    changed = df.copy()
    changed.iloc[n // 2, 3] = -1.0
    assert tokenize_pandas(df) == tokenize_pandas(df.copy())
    assert tokenize_pandas(df) != tokenize_pandas(changed)


# ---------------------------------------------------------------------- partitions pickle without copies
def test_partitions_of_a_2d_block_pickle_as_views_of_it():
    block = np.arange(40_000, dtype=np.float64).reshape(4, 10_000)  # pandas' layout: a row per column
    pdf = pd.DataFrame(block.T, columns=list("abcd"), copy=False)
    assert np.shares_memory(pdf["a"].to_numpy(), block)
    df = md.DataFrame(pdf, chunk_size=3_000)
    tiled = FromPandas.tile(as_data(df).op)
    for chunk, start in zip(tiled.chunks, (0, 3_000, 6_000, 9_000)):
        part = chunk.op.data
        pdt.assert_frame_equal(part, pdf.iloc[start:start + 3_000])
        _, buffers = serialize(part)
        data = [b for b in buffers if b.nbytes >= 8 * len(part)]
        assert len(data) == 4 and all(np.shares_memory(np.frombuffer(b, np.uint8), block) for b in data)
        pdt.assert_frame_equal(deserialize(*serialize(part)), part)


# ---------------------------------------------------------------------- frames put into workers' storage
@pytest.fixture
def uploads(monkeypatch):
    """Every executed pandas source goes straight into storage, however small."""
    monkeypatch.setattr(mars.remote, "UPLOAD_ABOVE", 0)


def _frame(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "k": rng.integers(0, 7, n), "x": rng.random(n),
        "s": pd.Series(rng.choice(["ab", "cde", "f"], n), dtype="string[pyarrow]"),
        "o": pd.Series(rng.choice(["p", "q"], n), dtype=object),
        "c": pd.Categorical(rng.choice(["u", "v"], n)),
        "t": pd.date_range("2021", periods=n, freq="h", tz="UTC"),
    }, index=pd.Index(np.arange(n)[::-1] * 3, name="idx"))


def _n_tasks(session) -> int:
    return len(session._backend.call("list_tasks", session.session_id))


@pytest.mark.parametrize("chunk_size", [1_000, 97, [300, 1, 699], 1])
def test_executed_frames_equal_pandas_without_a_task(session, uploads, chunk_size):
    pdf = _frame(1_000 if chunk_size != 1 else 23)
    if chunk_size == [300, 1, 699] and len(pdf) != 1_000:
        pytest.skip("uneven sizes are for 1,000 rows")
    before = _n_tasks(session)
    df = md.DataFrame(pdf, chunk_size=chunk_size).execute(session=session)
    assert _n_tasks(session) == before  # nothing ran: the partitions went straight to the workers
    pdt.assert_frame_equal(df.fetch(session=session), pdf)
    got = df.groupby("k").agg({"x": "sum"}).execute(session=session).fetch(session=session)
    pdt.assert_frame_equal(got, pdf.groupby("k").agg({"x": "sum"}))


def test_series_index_and_empty_frames_equal_pandas(session, uploads):
    pdf = _frame(50)
    for obj, make in ((pdf["s"], md.Series), (pdf["x"], md.Series), (pdf.index, md.Index), (pdf.iloc[:0], md.DataFrame)):
        got = make(obj, chunk_size=20).execute(session=session).fetch(session=session)
        (pdt.assert_index_equal if isinstance(obj, pd.Index) else
         pdt.assert_series_equal if isinstance(obj, pd.Series) else pdt.assert_frame_equal)(got, obj)


def test_partitions_are_spread_over_the_workers_and_freed_when_dropped(session, cluster, uploads):
    pdf = _frame(1_000)
    df = md.DataFrame(pdf, chunk_size=100).execute(session=session)
    keys = [c.key for c in as_data(df).chunks]
    where = session._backend._thread.run(session._backend.api._call(session.session_id, "locate", keys))
    counts = {w: sum(1 for worker, _ in where if worker == w) for w in {w for w, _ in where}}
    assert sorted(counts.values()) == [5, 5]
    del df
    gc.collect()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            session._backend._thread.run(session._backend.api._call(session.session_id, "locate", keys[:1]))
        except Exception:
            return
        time.sleep(0.05)
    pytest.fail("the partitions of a dropped frame are still held")


def test_a_client_on_another_host_sends_the_partitions_to_the_storage_actor(session, uploads, monkeypatch):
    monkeypatch.setattr(upload, "is_local_prefix", lambda prefix: False)
    written: list[str] = []
    real = upload.put_object
    monkeypatch.setattr(upload, "put_object", lambda *a, **k: written.append(a[0]) or real(*a, **k))
    pdf = _frame(300)
    df = md.DataFrame(pdf, chunk_size=64).execute(session=session)
    assert written == []  # the storage actors wrote them
    pdt.assert_frame_equal(df.fetch(session=session), pdf)


def test_an_uploaded_frame_keeps_no_copy_of_the_clients_data(session, uploads):
    from mars.dataframe.datasource import Uploaded

    pdf = _frame(1_000)
    expected = pdf.copy()
    gone = weakref.ref(pdf)
    df = md.DataFrame(pdf, chunk_size=300).execute(session=session)
    assert isinstance(as_data(df).op.data, Uploaded)  # the partitions as the workers hold them, mapped
    del pdf
    gc.collect()
    assert gone() is None  # neither the op nor the metadata keeps the user's frame alive
    pdt.assert_frame_equal(df.fetch(session=session), expected)
    # another session computes the frame again from what the op kept
    other = mars.new_session(session.address, default=False)
    try:
        got = df.groupby("k").agg({"x": "sum"}).execute(session=other).fetch(session=other)
        pdt.assert_frame_equal(got, expected.groupby("k").agg({"x": "sum"}))
    finally:
        other.close()


class _SpyPool:
    def __init__(self) -> None:
        self.released = 0

    def release_unused(self) -> None:
        self.released += 1


def test_dropping_an_uploaded_frame_returns_the_arrow_pools_idle_pages_at_the_next_call(session, uploads,
                                                                                       monkeypatch):
    import pyarrow

    pool = _SpyPool()
    monkeypatch.setattr(pyarrow, "default_memory_pool", lambda: pool)
    pdf = _frame(500)
    df = md.DataFrame(pdf, chunk_size=200).execute(session=session)
    df.x.sum().execute(session=session)
    assert pool.released == 0  # the user's frame is alive: its buffers are in use
    del pdf
    gc.collect()
    assert pool.released == 0  # not from the finalizer: the frame's buffers are freed after it
    assert df.x.sum().execute(session=session).fetch(session=session) == pytest.approx(_frame(500).x.sum())
    assert pool.released == 1  # the next call from the thread that dropped it
    df.k.max().execute(session=session)
    assert pool.released == 1  # once per frame dropped


def test_small_frames_travel_with_the_graph(session):
    pdf = _frame(40)
    before = _n_tasks(session)
    df = md.DataFrame(pdf, chunk_size=10).execute(session=session)
    assert _n_tasks(session) == before + 1
    pdt.assert_frame_equal(df.fetch(session=session), pdf)
