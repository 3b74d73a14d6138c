"""The storage service: chunks in shared memory, read in place by other processes."""

from __future__ import annotations

import gc
import os
import sys
import uuid
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
import pytest_asyncio

import mars.oscar as mo
from mars.serialization import deserialize, serialize
from mars.services.errors import DataNotFound
from mars.services.storage.api import fetch_values
from mars.services.storage.core import ChunkStore
from mars.services.storage.mock import MockStorage
from mars.services.storage.shm import (
    INLINE_BELOW,
    SHM_DIR,
    Serialized,
    StoredObject,
    get_object,
    keep_mappings,
    put_object,
    segment_path,
    sweep_kept,
    unlink_object,
    unlink_prefix,
    unwrap,
)
from mars.services.storage.worker import (
    STORAGE_UID,
    TRANSFER_UID,
    StorageActor,
    TransferActor,
)

in_pool = pytest.mark.asyncio(loop_scope="module")

BIG = np.arange(300_000, dtype=np.float64)  # 2.4 MB


def segments(prefix: str) -> list[str]:
    return sorted(n for n in os.listdir(SHM_DIR) if n.startswith(f"{prefix}-"))


@pytest.fixture
def prefix():
    """A segment prefix of this test's own; the test must leave no segment behind."""
    prefix = f"mars-test-{uuid.uuid4().hex[:12]}"
    yield prefix
    left = segments(prefix)
    unlink_prefix(prefix)
    assert not left, f"segments left behind: {left}"


def assert_same(got: Any, expected: Any) -> None:
    if isinstance(expected, np.ndarray):
        assert type(got) is np.ndarray and got.dtype == expected.dtype and got.shape == expected.shape
        assert got.flags.f_contiguous == expected.flags.f_contiguous
        np.testing.assert_array_equal(got, expected)
    elif isinstance(expected, pd.DataFrame):
        pd.testing.assert_frame_equal(got, expected)
    elif isinstance(expected, pd.Series):
        pd.testing.assert_series_equal(got, expected)
    else:
        assert type(got) is type(expected) and got == expected


VALUES = {
    "c-order": np.arange(24, dtype=np.int32).reshape(4, 6),
    "f-order": np.asfortranarray(np.arange(24.0).reshape(4, 6)),
    "0-d": np.array(3.5),
    "empty": np.empty((0, 3)),
    "object-dtype": np.array(["a", None, 3, (1, 2)], dtype=object),
    "big": np.random.default_rng(0).random((400, 400)),  # 1.28 MB
    "dataframe": pd.DataFrame({"i": np.arange(50_000), "f": np.linspace(0, 1, 50_000), "s": ["x", "yz"] * 25_000},
                              index=pd.RangeIndex(50_000, 100_000)),
    "series": pd.Series(np.arange(10.0), index=list("abcdefghij"), name="v"),
    "dict": {"a": [1, 2.5, "three"], "b": None},
    "none": None,
    "int": 7,
}


@pytest.mark.parametrize("inline_below", [INLINE_BELOW, 0], ids=["default", "all-shared"])
@pytest.mark.parametrize("name", list(VALUES))
def test_round_trip(prefix, name, inline_below):
    value = VALUES[name]
    desc = put_object("k", value, prefix, inline_below=inline_below)
    assert desc.inline == (inline_below > 0 and name not in ("big", "dataframe"))
    assert len(segments(prefix)) == (0 if desc.inline else 1)
    assert_same(get_object(desc), value)
    unlink_object(desc)


def test_small_objects_travel_inline_and_big_ones_in_one_segment(prefix):
    small = put_object("s", np.arange(10), prefix)
    assert small.inline and small.shm_name is None and small.value is not None and segments(prefix) == []
    big = put_object("b", BIG, prefix)
    assert not big.inline and big.value is None and big.nbytes == BIG.nbytes
    assert segments(prefix) == [big.shm_name] and big.shm_name.startswith(f"{prefix}-")
    assert os.path.getsize(os.path.join(SHM_DIR, big.shm_name)) == BIG.nbytes
    unlink_object(big)
    unlink_object(small)  # an inline descriptor has nothing to remove


def test_reads_are_read_only_aligned_views_of_one_mapping(prefix):
    desc = put_object("b", {"x": BIG, "y": BIG[:1001] * 2}, prefix)
    a, b = get_object(desc), get_object(desc)
    assert np.shares_memory(a["x"], b["x"])
    assert not a["x"].flags.owndata and not a["x"].flags.writeable
    assert a["x"].ctypes.data % 64 == 0 and a["y"].ctypes.data % 64 == 0
    np.testing.assert_array_equal(a["y"], BIG[:1001] * 2)
    unlink_object(desc)


def test_views_outlive_the_unlink_and_close_without_warnings(prefix):
    unraisable: list = []
    hook, sys.unraisablehook = sys.unraisablehook, unraisable.append
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            desc = put_object("b", pd.DataFrame({"a": BIG, "b": BIG + 1}), prefix)
            df = get_object(desc)
            unlink_object(desc)
            unlink_object(desc)  # already gone: ignored
            assert segments(prefix) == []
            assert df["b"].sum() == BIG.sum() + len(BIG)
            del df
            gc.collect()
    finally:
        sys.unraisablehook = hook
    assert unraisable == []


def test_reading_an_unlinked_segment_raises_data_not_found_naming_the_key(prefix):
    desc = put_object("chunk-xyz", BIG, prefix)
    unlink_object(desc)
    with pytest.raises(DataNotFound, match="chunk-xyz"):
        get_object(desc)


def _mapped(desc: StoredObject) -> bool:
    """Whether this process maps ``desc``'s segment (its mappings are listed in /proc/self/maps)."""
    with open("/proc/self/maps") as f:
        return any(line.rstrip().endswith(segment_path(desc.shm_name)) for line in f)


def _read_and_drop(desc: StoredObject) -> float:
    value = get_object(desc)
    total = float(value.sum())
    del value
    gc.collect()
    return total


@pytest.fixture
def keeping():
    keep_mappings()
    yield
    keep_mappings(False)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_a_segment_read_again_stays_mapped_after_its_readers_until_it_is_deleted(prefix, keeping):
    desc, other = put_object("t", BIG, prefix), put_object("u", BIG * 2, prefix)
    assert _read_and_drop(desc) == BIG.sum()
    assert not _mapped(desc)  # read once (an intermediate, say): unmapped with its last reader
    assert _read_and_drop(desc) == BIG.sum()
    assert _mapped(desc)  # read again (a table's partition): kept mapped
    assert _read_and_drop(desc) == BIG.sum()
    assert _read_and_drop(other) == 2 * BIG.sum() and _read_and_drop(other) == 2 * BIG.sum()
    assert sweep_kept() == 0 and _mapped(other)
    os.unlink(segment_path(desc.shm_name))  # the worker deleted it (or spilled it), from another process
    assert sweep_kept() == 1
    assert not _mapped(desc) and _mapped(other)  # its pages are let go; the other stays
    unlink_object(other)  # deleted by this process: let go at once
    assert not _mapped(other)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_a_segment_in_a_file_on_disk_is_not_kept_mapped(keeping, monkeypatch, tmp_path):
    # a worker's memory counts the page cache its slots map: a spilled chunk kept mapped would stay in it
    from mars.services import storage

    monkeypatch.setattr(storage.shm, "DISK_DIR", str(tmp_path / "disk"))
    real_write = storage.shm._write_segment

    def full_tmpfs(name, key, buffers):
        if not name.startswith("@"):
            raise storage.shm.StorageFull(f"no shared memory left to store chunk {key}")
        return real_write(name, key, buffers)

    monkeypatch.setattr(storage.shm, "_write_segment", full_tmpfs)
    desc = put_object("k", BIG, f"mars-test-{uuid.uuid4().hex[:8]}")
    assert desc.shm_name.startswith("@")
    for _ in range(3):
        assert _read_and_drop(desc) == BIG.sum()
        assert not _mapped(desc)
    unlink_object(desc)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_a_process_that_did_not_ask_keeps_no_mapping(prefix):
    desc = put_object("t", BIG, prefix)
    for _ in range(3):
        assert _read_and_drop(desc) == BIG.sum()
        assert not _mapped(desc)
    unlink_object(desc)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_turning_keeping_off_lets_go_of_what_was_kept(prefix):
    keep_mappings()
    try:
        desc = put_object("t", BIG, prefix)
        _read_and_drop(desc), _read_and_drop(desc)
        assert _mapped(desc)
    finally:
        keep_mappings(False)
    assert not _mapped(desc)
    unlink_object(desc)


def test_a_big_pickle_header_is_kept_in_the_segment_not_the_descriptor(prefix):
    words = np.array([f"word-{i}" for i in range(20_000)], dtype=object)  # pickled in band
    desc = put_object("w", words, prefix)
    assert not desc.inline and desc.header == b"" and desc.shm_header_size > INLINE_BELOW
    assert_same(get_object(desc), words)
    unlink_object(desc)


def test_objects_without_buffers_and_zero_size_buffers_can_be_shared(prefix):
    pairs = [("none", None), ("empty", np.empty(0)), ("mixed", {"e": np.empty(0, np.int8), "x": np.arange(5)})]
    descs = [put_object(k, v, prefix, inline_below=0) for k, v in pairs]
    assert [d.buffer_sizes for d in descs] == [(), (0,), (0, 40)]
    assert all(d.header and not d.shm_header_size for d in descs)  # small headers stay in the descriptor
    assert get_object(descs[0]) is None and get_object(descs[1]).shape == (0,)
    mixed = get_object(descs[2])
    assert mixed["e"].shape == (0,) and mixed["x"].tolist() == [0, 1, 2, 3, 4]
    for d in descs:
        unlink_object(d)


def test_unlink_prefix_removes_only_that_workers_segments(prefix):
    mine = [put_object(str(i), BIG, prefix) for i in range(3)]
    other = put_object("o", BIG, prefix + "0")  # a worker whose prefix extends ours
    assert unlink_prefix(prefix) == 3 and segments(prefix) == []
    assert segments(prefix + "0") == [other.shm_name]
    assert unlink_prefix(prefix + "0") == 1 and unlink_prefix(prefix) == 0
    assert len(mine) == 3
    with pytest.raises(ValueError, match="prefix"):
        unlink_prefix("")


def test_unlink_prefix_keeps_the_registered_segments_of_a_dead_slot(prefix):
    slot = f"{prefix}-slot-0"
    registered = put_object("done", BIG, slot)
    cut_off = [put_object(f"half-{i}", BIG, slot) for i in range(2)]  # written, never reported
    assert unlink_prefix(slot, {registered.shm_name}) == 2
    assert segments(slot) == [registered.shm_name]
    assert get_object(registered).shape == BIG.shape and len(cut_off) == 2
    assert unlink_prefix(prefix) == 1  # the worker's own end takes the rest


def test_a_killed_workers_segments_are_removed_by_the_next_worker_and_live_ones_stay(prefix):
    import subprocess
    import sys

    from mars.services.storage.shm import claim_prefix, release_prefix, remove_abandoned_prefixes

    dead, alive = f"{prefix}-dead", f"{prefix}-alive"
    child = subprocess.run([sys.executable, "-c", "from mars.services.storage.shm import claim_prefix, put_object;"
                            "import numpy as np, sys; claim_prefix(sys.argv[1]);"
                            "put_object('k', np.ones(100_000), sys.argv[1])", dead], check=True)
    assert child.returncode == 0 and len(segments(dead)) == 1  # a worker that never cleaned up
    claim_prefix(alive)
    mine = put_object("mine", BIG, alive)
    assert remove_abandoned_prefixes() >= 1
    assert segments(dead) == [] and not os.path.exists(os.path.join(SHM_DIR, f"{dead}.owner"))
    assert segments(alive) == [mine.shm_name]  # this process lives: its segments stay
    unlink_object(mine)
    release_prefix(alive)
    assert not os.path.exists(os.path.join(SHM_DIR, f"{alive}.owner"))


def test_a_serialized_object_pickles_as_the_object_with_the_segment_bytes_out_of_band(prefix):
    value = {"x": BIG, "words": np.array([f"w{i}" for i in range(20_000)], dtype=object)}
    desc = put_object("k", value, prefix)
    wrapped = Serialized.of(desc)
    header, buffers = serialize([wrapped])
    assert len(header) < 1024  # the big in-band pickle travels out of band too
    assert sorted(b.nbytes for b in buffers) == sorted([desc.shm_header_size, *desc.buffer_sizes])
    got = deserialize(header, [bytearray(b) for b in buffers])[0]  # as a receiving socket hands them
    assert_same(got["x"], BIG)
    assert_same(got["words"], value["words"])
    assert_same(unwrap(wrapped)["x"], BIG)
    assert unwrap(7) == 7
    inline_desc = put_object("s", 7, prefix)
    assert Serialized.of(inline_desc) == 7
    unlink_object(desc)


# -- the index ---------------------------------------------------------------
def inline(key: str, nbytes: int = 10, value: Any = 1) -> StoredObject:
    return StoredObject(key, nbytes, b"", (), None, value)


def test_chunk_store_index_and_totals():
    store = ChunkStore()
    store.put("s1", [inline("a", 10), inline("b", 20)])
    store.put("s2", [inline("a", 5)])
    assert store.contains("s1", "a") and not store.contains("s2", "b") and not store.contains("s3", "a")
    assert [d.nbytes for d in store.get("s1", ["b", "a"])] == [20, 10]
    assert store.stats() == {"n_chunks": 3, "memory_bytes": 35}
    assert [d.key for d in store.delete("s1", ["a", "missing"])] == ["a"]
    assert store.delete("nope", ["a"]) == []
    assert [d.key for d in store.delete_session("s2")] == ["a"] and store.delete_session("s2") == []
    assert [d.key for d in store.all()] == ["b"] and store.stats() == {"n_chunks": 1, "memory_bytes": 20}


def test_chunk_store_names_the_first_missing_key_and_the_session():
    store = ChunkStore()
    store.put("sess-1", [inline("a")])
    with pytest.raises(DataNotFound, match="chunk b of session sess-1"):
        store.get("sess-1", ["a", "b", "c"])
    with pytest.raises(DataNotFound, match="chunk a of session other"):
        store.get("other", ["a"])


def test_chunk_store_reports_a_replaced_segment_once():
    store = ChunkStore()
    first = StoredObject("a", 8, b"h", (8,), "seg-1")
    assert store.put("s", [first]) == []
    assert store.put("s", [first]) == []  # the same segment again: nothing to free
    assert store.put("s", [StoredObject("a", 16, b"h", (16,), "seg-2")]) == [first]
    assert store.stats() == {"n_chunks": 1, "memory_bytes": 16}


async def test_mock_storage_behaves_like_the_actor():
    storage = MockStorage()
    descs = await storage.put_values("s", {"a": np.arange(3), "b": "text"})
    assert all(d.inline for d in descs)
    assert (await storage.get_descs("s", ["b"]))[0].value == "text"
    values = await storage.get_values("s", ["a", "b"])
    assert values[0].tolist() == [0, 1, 2] and values[1] == "text"
    await storage.delete("s", ["a"])
    with pytest.raises(DataNotFound, match="chunk a of session s"):
        await storage.get_values("s", ["a"])
    await storage.delete_session("s")
    assert await storage.stats() == {"n_chunks": 0, "memory_bytes": 0, "disk_bytes": 0}


# -- across processes --------------------------------------------------------
class Slot(mo.Actor):
    """Plays a slot process of a worker: stores and reads chunks where it lives."""

    def put(self, key: str, value: Any, prefix: str) -> StoredObject:
        return put_object(key, value, prefix)

    def read(self, desc: StoredObject) -> tuple[Any, int, bool]:
        value = get_object(desc)
        viewed = isinstance(value, np.ndarray) and not value.flags.owndata and not value.flags.writeable
        return value, os.getpid(), viewed

    async def fetch(self, session_id: str, keys: list[str], storage: str, transfers: list[str],
                    map_local: bool = True) -> list[Any]:
        return await fetch_values(session_id, keys, storage, transfers, map_local=map_local)

    async def fetch_mapped(self, session_id: str, keys: list[str], storage: str, transfers: list[str],
                           name: str) -> tuple[list[Any], bool]:
        """What :meth:`fetch` gets, and whether this process maps segment ``name`` while it holds that."""
        from mars.services.storage import shm

        values = await fetch_values(session_id, keys, storage, transfers)
        return values, name in shm._attached


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pool():
    pool = await mo.create_actor_pool("127.0.0.1", n_process=2, labels=["main", "cpu-0", "io-0"])
    yield pool
    await pool.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def slots(pool):
    """A Slot in each sub pool: [cpu-0, io-0]."""
    refs = [await mo.create_actor(Slot, address=pool.address, allocate_strategy=mo.ProcessIndex(i)) for i in (1, 2)]
    yield refs
    for ref in refs:
        await mo.destroy_actor(ref)


@pytest_asyncio.fixture(loop_scope="module")
async def worker(pool, prefix):
    """The storage actors of a worker: (StorageActor ref, TransferActor ref in io-0)."""
    storage = await mo.create_actor(StorageActor, prefix, uid=STORAGE_UID, address=pool.address)
    transfer = await mo.create_actor(
        TransferActor, pool.address, uid=TRANSFER_UID, address=pool.address, allocate_strategy=mo.ProcessIndex(2)
    )
    yield storage, transfer
    await mo.destroy_actor(transfer)
    if await mo.has_actor(storage):
        await mo.destroy_actor(storage)


@in_pool
async def test_a_segment_written_in_one_process_is_read_in_place_by_the_others(pool, slots, prefix):
    writer, reader = slots
    desc = await writer.put("k", BIG, prefix)
    value, pid, viewed = await reader.read(desc)
    assert pid not in (os.getpid(), pool.sub_pools[0].pid) and viewed
    assert_same(value, BIG)
    here = get_object(desc)
    assert not here.flags.owndata
    assert_same(here, BIG)
    unlink_object(desc)


@in_pool
async def test_storage_actor_indexes_frees_and_cleans_up_on_destroy(pool, slots, worker, prefix):
    storage, _ = worker
    descs = [await slots[0].put(k, v, prefix) for k, v in [("a", BIG), ("b", BIG[:10]), ("c", BIG * 2)]]
    await slots[0].put("stray", BIG, prefix)  # stored, but its slot died before registering it
    await storage.register("s", descs)
    assert await storage.stats() == {"n_chunks": 3, "memory_bytes": 2 * BIG.nbytes + descs[1].nbytes,
                                     "disk_bytes": 0}
    assert [d.key for d in await storage.get_descs("s", ["c", "a"])] == ["c", "a"]
    await storage.delete("s", ["a", "missing"])
    assert descs[0].shm_name not in segments(prefix) and descs[2].shm_name in segments(prefix)
    with pytest.raises(DataNotFound, match="chunk a of session s"):
        await storage.get_descs("s", ["b", "a"])
    await mo.destroy_actor(storage)
    assert segments(prefix) == []


@in_pool
async def test_storage_actor_delete_session_frees_its_segments(pool, slots, worker, prefix):
    storage, _ = worker
    await storage.register("s1", [await slots[0].put("a", BIG, prefix)])
    await storage.register("s2", [await slots[0].put("a", BIG, prefix)])
    await storage.delete_session("s1")
    assert len(segments(prefix)) == 1 and (await storage.stats())["n_chunks"] == 1
    await storage.delete_session("s2")
    assert segments(prefix) == []


@in_pool
async def test_a_transfer_actor_serves_reads_to_callers_in_other_processes(pool, slots, worker, prefix):
    storage, transfer = worker
    frame = VALUES["dataframe"]
    descs = [await slots[0].put(k, v, prefix) for k, v in [("arr", BIG), ("df", frame), ("small", 42)]]
    await storage.register("s", descs)
    keys = ["df", "small", "arr"]
    for transfers in ([transfer.address], []):  # through the IO pool; through the main pool
        got = await fetch_values("s", keys, pool.address, transfers, map_local=False)  # a caller in the main process
        for value, expected in zip(got, [frame, 42, BIG]):
            assert_same(value, expected)
        got = await slots[0].fetch("s", keys, pool.address, transfers, False)  # a caller in a sub pool
        assert_same(got[0], frame)
        assert_same(got[2], BIG)
    # called directly, in this process or another, the methods return the objects themselves
    assert_same((await transfer.read("s", ["arr"]))[0], BIG)
    assert_same((await storage.get_values("s", ["arr"]))[0], BIG)
    assert isinstance((await storage.get_values("s", ["arr"], serialized=True))[0], Serialized)
    assert await fetch_values("s", [], pool.address, [transfer.address]) == []
    with pytest.raises(DataNotFound, match="chunk gone of session s"):
        await fetch_values("s", ["arr", "gone"], pool.address, [transfer.address])
    await storage.delete("s", ["arr", "df", "small"])


@in_pool
async def test_a_reader_on_the_owners_host_maps_its_segments(pool, slots, worker, prefix):
    from mars.services.storage import api, shm

    storage, transfer = worker
    descs = [await slots[0].put(k, v, prefix) for k, v in [("arr", BIG), ("small", 42)]]
    await storage.register("s", descs)
    got, mapped = await slots[1].fetch_mapped("s", ["arr", "small"], pool.address, [transfer.address],
                                              descs[0].shm_name)
    assert_same(got[0], BIG)
    assert got[1] == 42
    assert mapped  # the reader's own mapping: no bytes came through a socket
    held = await fetch_values("s", ["arr"], pool.address, [transfer.address])
    assert descs[0].shm_name in shm._attached
    assert not held[0].flags.writeable and not held[0].flags.owndata
    # an owner whose segments this host does not hold is read the sending way from then on
    real = api.is_local_prefix
    api._MAPS_OWNER.pop(pool.address, None)
    try:
        api.is_local_prefix = lambda prefix: False
        assert_same((await fetch_values("s", ["arr"], pool.address, [transfer.address]))[0], BIG)
        assert api._MAPS_OWNER[pool.address] is False
    finally:
        api.is_local_prefix = real
        api._MAPS_OWNER.pop(pool.address, None)
    del held
    await storage.delete("s", ["arr", "small"])
    with pytest.raises(DataNotFound, match="chunk arr of session s"):
        await fetch_values("s", ["arr"], pool.address, [transfer.address])


def test_shared_memory_filling_up_part_way_through_a_write_leaves_nothing_and_goes_to_disk(monkeypatch, tmp_path):
    """Shared memory is not claimed ahead of the writes: ENOSPC part way through removes the segment, and the
    chunk goes to a file on disk."""
    import errno

    from mars.services.storage import shm

    monkeypatch.setattr(shm, "DISK_DIR", str(tmp_path / "disk"))
    real_pwrite, calls = os.pwrite, []

    def fills_up(fd, data, offset):
        calls.append(os.readlink(f"/proc/self/fd/{fd}"))
        if calls[-1].startswith(shm.SHM_DIR) and len([c for c in calls if c.startswith(shm.SHM_DIR)]) > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_pwrite(fd, data[:1 << 16], offset)  # short writes: several calls per buffer

    monkeypatch.setattr(shm.os, "pwrite", fills_up)
    prefix = f"mars-test-{uuid.uuid4().hex[:8]}"
    value = np.arange(200_000, dtype=np.float64)
    desc = shm.put_object("k", value, prefix)
    monkeypatch.setattr(shm.os, "pwrite", real_pwrite)
    assert desc.shm_name.startswith("@") and any(c.startswith(shm.SHM_DIR) for c in calls)
    assert not [f for f in os.listdir(shm.SHM_DIR) if f.startswith(prefix)]  # the part-written segment is gone
    np.testing.assert_array_equal(shm.get_object(desc), value)
    assert shm.unlink_prefix(prefix) == 1


def test_a_full_shared_memory_falls_back_to_files_on_disk(monkeypatch, tmp_path):
    from mars.services.storage import shm

    monkeypatch.setattr(shm, "DISK_DIR", str(tmp_path / "disk"))
    real_write = shm._write_segment

    def full_tmpfs(name, key, buffers):
        if not name.startswith("@"):
            raise shm.StorageFull(f"no shared memory left in {shm.SHM_DIR} to store chunk {key}")
        return real_write(name, key, buffers)

    monkeypatch.setattr(shm, "_write_segment", full_tmpfs)
    prefix = f"mars-test-{uuid.uuid4().hex[:8]}"
    value = np.arange(200_000, dtype=np.float64)
    desc = shm.put_object("k", value, prefix)
    assert desc.shm_name.startswith("@") and os.listdir(tmp_path / "disk")
    np.testing.assert_array_equal(shm.get_object(desc), value)
    assert shm.unlink_prefix(prefix) == 1
    assert not os.listdir(tmp_path / "disk")
