"""Chunks held in a GPU slot's device memory: the worker's index, host copies on demand, and frees.

No CUDA is needed: a "GPU slot" here is an actor that holds values by key and
answers the two calls a real one answers (``host_copies``, ``drop_device``),
and the slot-side cache runs on stand-in device arrays.
"""

from __future__ import annotations

import asyncio
import uuid

import numpy as np
import pytest
import pytest_asyncio

import mars.oscar as mo
from mars.services.errors import DataNotFound
from mars.services.execution import devicecache
from mars.services.execution.devicecache import DeviceCache
from mars.services.storage.api import fetch_values
from mars.services.storage.device import holder_name
from mars.services.storage.shm import (
    StoredObject,
    get_object,
    put_object,
    unlink_prefix,
)
from mars.services.storage.worker import (
    STORAGE_UID,
    TRANSFER_UID,
    StorageActor,
    TransferActor,
)

in_pool = pytest.mark.asyncio(loop_scope="module")

BIG = np.arange(200_000, dtype=np.float64)


class FakeGPUSlot(mo.Actor):
    """Holds values "on its device" by key; writes host copies when asked, as a GPU slot does."""

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self.held: dict[str, np.ndarray] = {}
        self.copies = 0
        self.dropped: list[str] = []

    def hold(self, key: str, value: np.ndarray) -> StoredObject:
        self.held[key] = value
        return StoredObject(key, value.nbytes, b"", (), None, None, 0, holder_name(self.address, self.uid))

    def host_copies(self, keys: list[str]) -> list[StoredObject]:
        self.copies += len(keys)
        return [put_object(k, self.held[k], self._prefix) for k in keys]

    def drop_device(self, keys: list[str]) -> None:
        self.dropped.extend(keys)
        for k in keys:
            self.held.pop(k, None)

    def state(self) -> tuple[int, list[str]]:
        return self.copies, self.dropped


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pool():
    pool = await mo.create_actor_pool("127.0.0.1", n_process=2, labels=["main", "gpu-0", "io-0"])
    yield pool
    await pool.stop()


@pytest_asyncio.fixture(loop_scope="module")
async def worker(pool):
    prefix = f"mars-test-{uuid.uuid4().hex[:12]}"
    storage = await mo.create_actor(StorageActor, prefix, uid=STORAGE_UID, address=pool.address)
    transfer = await mo.create_actor(TransferActor, pool.address, uid=TRANSFER_UID, address=pool.address,
                                     allocate_strategy=mo.ProcessIndex(2))
    gpu = await mo.create_actor(FakeGPUSlot, prefix, address=pool.address, allocate_strategy=mo.ProcessIndex(1))
    yield storage, transfer, gpu
    for ref in (gpu, transfer, storage):
        await mo.destroy_actor(ref)
    unlink_prefix(prefix)


@in_pool
async def test_a_device_chunk_costs_no_host_memory_until_read_then_is_copied_once(worker):
    storage, transfer, gpu = worker
    desc = await gpu.hold("a", BIG)
    assert desc.on_device and not desc.inline
    with pytest.raises(DataNotFound, match="device memory of GPU slot"):
        get_object(desc)
    await storage.register("s", [desc])
    stats = await storage.stats()
    assert stats["memory_bytes"] == 0 and stats["device_bytes"] == BIG.nbytes and stats["n_chunks"] == 1
    # a reader elsewhere (a client's fetch, another worker through the IO pool) gets a host copy...
    np.testing.assert_array_equal((await fetch_values("s", ["a"], storage.address, [transfer.address]))[0], BIG)
    host = (await storage.get_descs("s", ["a"]))[0]
    assert not host.on_device and host.shm_name is not None
    np.testing.assert_array_equal(get_object(host), BIG)
    # ...made once: the index now holds it in place of the device descriptor
    copies, dropped = await gpu.state()
    assert copies == 1 and dropped == []
    stats = await storage.stats()
    assert stats["memory_bytes"] == BIG.nbytes and "device_bytes" not in stats


@in_pool
async def test_forgetting_a_device_chunk_frees_it_on_its_slot(worker):
    storage, _, gpu = worker
    await storage.register("s", [await gpu.hold("a", BIG), await gpu.hold("b", BIG[:9000])])
    await storage.delete("s", ["a"])
    await storage.delete_session("s")
    for _ in range(50):
        if len((await gpu.state())[1]) == 2:
            break
        await asyncio.sleep(0.02)
    assert sorted((await gpu.state())[1]) == ["a", "b"]
    assert (await storage.stats())["n_chunks"] == 0


@in_pool
async def test_a_device_chunk_whose_slot_lost_it_reads_as_data_not_found(worker):
    storage, _, gpu = worker
    desc = await gpu.hold("gone", BIG)
    await storage.register("s", [desc])
    await gpu.drop_device(["gone"])  # the slot restarted, say
    with pytest.raises(DataNotFound, match="chunk gone of session s .*GPU slot"):
        await storage.get_descs("s", ["gone"])


# ---------------------------------------------------------------- the slot's side


class _FakeDeviceArray:
    """Passes for a CuPy array (module and ``__cuda_array_interface__``); its host copy is ``data``."""

    __module__ = "cupy._core.core"
    __cuda_array_interface__: dict = {}

    def __init__(self, data: np.ndarray):
        self.data = data
        self.nbytes = data.nbytes


@pytest.fixture
def device(monkeypatch):
    monkeypatch.setattr(devicecache, "to_host", lambda v: v.data if isinstance(v, _FakeDeviceArray) else v)
    prefix = f"mars-test-{uuid.uuid4().hex[:12]}"
    yield prefix
    unlink_prefix(prefix)


def test_a_kept_chunk_stays_on_the_device_until_a_host_copy_is_asked_for(device):
    cache = DeviceCache(limit=10 * BIG.nbytes)
    value = _FakeDeviceArray(BIG)
    desc = cache.keep("k", value, "s", "slot#gpu", device)
    assert desc.on_device and desc.device == "slot#gpu" and desc.nbytes == BIG.nbytes
    assert cache.get("k") is value and cache.take_moved() == []
    host = cache.host_copy("k", device)
    np.testing.assert_array_equal(get_object(host), BIG)
    assert cache.host_copy("k", device) is host  # a second reader gets the same copy
    assert cache.get("k") is value  # the device copy stays, as a cache
    with pytest.raises(KeyError, match="chunk nope is not held"):
        cache.host_copy("nope", device)


def test_under_pressure_device_only_chunks_are_written_out_and_reported_cached_ones_just_dropped(device):
    cache = DeviceCache(limit=2 * BIG.nbytes)
    only = cache.keep("only", _FakeDeviceArray(BIG), "s", "slot#gpu", device)
    cache.put("cached", _FakeDeviceArray(BIG))
    cache.keep("new", _FakeDeviceArray(BIG * 2), "s", "slot#gpu", device)  # "only" leaves first (least recent)
    (session, old, copy), = cache.take_moved()
    assert session == "s" and old is only and copy.key == "only"
    np.testing.assert_array_equal(get_object(copy), BIG)
    assert cache.get("only") is None and cache.host_copy("only", device) is copy
    cache.keep("newer", _FakeDeviceArray(BIG * 3), "s", "slot#gpu", device)  # "cached" goes, nothing written
    assert cache.take_moved() == [] and cache.get("cached") is None and cache.nbytes == 2 * BIG.nbytes
    cache.drop(["new", "newer"])
    assert len(cache) == 0 and cache.nbytes == 0


def test_a_chunk_bigger_than_the_device_share_is_not_kept(device):
    cache = DeviceCache(limit=100)
    assert cache.keep("huge", _FakeDeviceArray(BIG), "s", "slot#gpu", device) is None
    assert len(cache) == 0
