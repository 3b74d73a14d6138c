"""A worker's memory: the chunk cache within --cache-mem, spilling, --phy-mem's soft and hard limits.

The store's LRU, pins and spill states, the cache's spilling, the spill
directories, the estimates and the guard are tested without a cluster; then
a cluster of processes with 64 MiB of cache sums and sorts 512 MiB, measured
from outside, and a subtask over the hard limit fails with WorkerMemoryError.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import psutil
import pytest
import pytest_asyncio

import mars.oscar as mo
from mars.core.graph import Subtask
from mars.services.errors import WorkerMemoryError
from mars.services.execution.api import RemoteInput, SubtaskSpec
from mars.services.execution.guard import MemoryGuard
from mars.services.execution.memory import (
    HARD,
    OK,
    SOFT,
    MemoryBudget,
    MemorySample,
    estimate,
    private_bytes,
)
from mars.services.execution.worker import ExecutionActor
from mars.services.storage import cache as cache_module
from mars.services.storage.api import fetch_values
from mars.services.storage.cache import ChunkCache
from mars.services.storage.core import ChunkStore
from mars.services.storage.shm import (
    SHM_DIR,
    StoredObject,
    get_object,
    put_object,
    unlink_prefix,
)
from mars.services.storage.spill import SpillDirs
from mars.services.storage.worker import (
    STORAGE_UID,
    TRANSFER_UID,
    StorageActor,
    TransferActor,
)
from tests.fake_slots import GatedSlot, Reports

MiB = 1 << 20


def seg(key: str, nbytes: int = 10) -> StoredObject:
    return StoredObject(key, nbytes, b"h", (nbytes,), f"seg-{key}")


def keys(candidates: list[tuple[str, StoredObject]]) -> list[str]:
    return [d.key for _, d in candidates]


@pytest.fixture
def prefix():
    prefix = f"mars-test-{uuid.uuid4().hex[:12]}"
    yield prefix
    left = [n for n in os.listdir(SHM_DIR) if n.startswith(f"{prefix}-")]
    unlink_prefix(prefix)
    assert not left, f"segments left behind: {left}"


def files_under(root: Any) -> list[str]:
    return [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f != "owner"]


# -- the store: LRU, pins, spill states ------------------------------------------
def test_the_store_offers_least_recently_used_chunks_never_pinned_or_just_read_ones():
    store = ChunkStore()
    store.put("s", [seg("a"), seg("b"), seg("c"), StoredObject("inline", 5, b"", (), None, 1)])
    assert keys(store.spill_candidates(15, now=100.0, lease=1.0)) == ["a", "b"]
    store.touch("s", ["a"], now=100.0)  # read now: most recent, and leased
    assert keys(store.spill_candidates(100, now=100.5, lease=1.0)) == ["b", "c"]
    assert keys(store.spill_candidates(100, now=101.5, lease=1.0)) == ["b", "c", "a"]
    store.pin("s", ["b"])
    store.pin("s", ["b"])
    store.unpin("s", ["b"])
    assert store.pinned("s", "b") and keys(store.spill_candidates(100, 200.0, 1.0)) == ["c", "a"]
    store.unpin("s", ["b"])
    assert not store.pinned("s", "b") and keys(store.spill_candidates(100, 200.0, 1.0)) == ["c", "a", "b"]
    assert store.memory_bytes == 35 and store.disk_bytes == 0


def test_a_spill_moves_a_chunk_to_disk_unless_it_was_freed_pinned_read_or_stored_again():
    store = ChunkStore()
    store.put("s", [seg("a", 10), seg("b", 20), seg("c", 30), seg("d", 40)])

    def spilled(d: StoredObject) -> StoredObject:
        return StoredObject(d.key, d.nbytes, d.header, d.buffer_sizes, f"/spill/{d.key}")

    descs = {d.key: d for d in store.all()}
    for key in "abcd":
        store.begin_spill("s", descs[key], now=10.0)
    assert store.spilling_bytes == 100 and store.memory_bytes == 100
    assert keys(store.spill_candidates(100, 20.0, 1.0)) == []  # all under way
    assert store.finish_spill("s", descs["a"], spilled(descs["a"]))
    assert store.get("s", ["a"])[0].spilled and (store.memory_bytes, store.disk_bytes) == (90, 10)
    store.delete("s", ["b"])
    assert not store.finish_spill("s", descs["b"], spilled(descs["b"]))
    store.pin("s", ["c"])
    assert not store.finish_spill("s", descs["c"], spilled(descs["c"]))
    store.touch("s", ["d"], now=11.0)
    assert not store.finish_spill("s", descs["d"], spilled(descs["d"]))
    assert store.spilling_bytes == 0 and (store.memory_bytes, store.disk_bytes) == (70, 10)
    # stored again while its first copy was spilling: the new copy is what counts
    store.unpin("s", ["c"])
    store.begin_spill("s", descs["c"], now=12.0)
    store.put("s", [seg("c", 35)])
    assert not store.finish_spill("s", descs["c"], spilled(descs["c"]))
    assert store.spilling_bytes == 0 and store.memory_bytes == 75
    assert store.stats() == {"n_chunks": 3, "memory_bytes": 75}


# -- the cache: spilling real segments --------------------------------------------
async def test_the_cache_keeps_memory_within_its_limit_and_every_reader_gets_the_data(tmp_path, prefix):
    roots = [str(tmp_path / "d1"), str(tmp_path / "d2")]
    cache = ChunkCache(ChunkStore(), 1 * MiB, SpillDirs(roots, prefix))
    values = {f"k{i}": np.arange(50_000, dtype=np.float64) + i for i in range(6)}  # 400 kB each
    for key, value in values.items():
        cache.register("s", [put_object(key, value, prefix)])
    await cache.settled()
    stats = cache.stats()
    assert stats["memory_bytes"] <= 1 * MiB and stats["disk_bytes"] == 6 * 400_000 - stats["memory_bytes"]
    assert stats["n_spilled"] == 4 and stats["spilled_bytes_total"] == 1_600_000
    assert all(files_under(r) for r in roots)  # spread over both directories
    for desc, (key, value) in zip(cache.read("s", list(values)), values.items()):
        np.testing.assert_array_equal(get_object(desc), value)
    spilled = [d for d in cache.store.all() if d.spilled]
    assert [d.key for d in spilled] == ["k0", "k1", "k2", "k3"]  # the least recently stored
    cache.delete("s", ["k0"])
    assert not os.path.exists(spilled[0].shm_name) and len(files_under(tmp_path)) == 3
    await cache.close()
    assert not files_under(tmp_path) and not os.listdir(roots[0])


async def test_the_cache_spills_ahead_of_reserved_outputs_and_under_pressure(tmp_path, prefix):
    cache = ChunkCache(ChunkStore(), 2 * MiB, SpillDirs([str(tmp_path)], prefix))
    for i in range(4):
        cache.register("s", [put_object(f"k{i}", np.zeros(50_000), prefix)])  # 1.6 MB in all
    await cache.settled()
    assert cache.store.disk_bytes == 0 and cache.room() == 2 * MiB - 1_600_000
    cache.reserve(1 * MiB)  # an output on its way: room is made for it first
    await cache.settled()
    assert cache.store.memory_bytes == 800_000 and cache.room() >= 0
    cache.release(1 * MiB)
    cache.set_pressure(0)  # over the soft limit: everything that may go, goes
    await cache.settled()
    assert cache.store.memory_bytes == 0 and cache.store.disk_bytes == 1_600_000
    cache.set_pressure(None)
    assert cache.target() == 2 * MiB
    await cache.close()


async def test_what_a_reader_was_given_or_a_subtask_pins_is_not_spilled_under_it(tmp_path, prefix, monkeypatch):
    monkeypatch.setattr(cache_module, "READ_LEASE", 0.3)
    cache = ChunkCache(ChunkStore(), 1 * MiB, SpillDirs([str(tmp_path)], prefix))
    cache.register("s", [put_object("read", np.zeros(100_000), prefix)])
    cache.register("s", [put_object("pinned", np.ones(100_000), prefix)])
    [given] = cache.read("s", ["read"])  # a reader in another process maps this name next
    cache.store.pin("s", ["pinned"])
    cache.set_pressure(0)
    await cache.settled()
    np.testing.assert_array_equal(get_object(given), 0)  # still there
    assert cache.store.disk_bytes == 0
    await asyncio.sleep(0.5)  # the lease ran out: it goes now
    await cache.settled()
    assert cache.store.get("s", ["read"])[0].spilled and not cache.store.get("s", ["pinned"])[0].spilled
    cache.store.unpin("s", ["pinned"])
    cache.spill_if_needed()
    await cache.settled()
    assert cache.store.memory_bytes == 0
    await cache.close()


def test_spill_directories_skip_a_full_one_and_say_why_when_none_has_room(tmp_path, prefix, monkeypatch):
    from mars.services.storage import spill

    full, roomy = str(tmp_path / "full"), str(tmp_path / "roomy")
    monkeypatch.setattr(spill, "_free_bytes", lambda root: 0 if root == full else 1 << 40)
    dirs = SpillDirs([full, roomy], prefix)
    desc = put_object("k", np.arange(100_000), prefix)
    try:
        assert [dirs.write(desc).shm_name.startswith(roomy) for _ in range(3)] == [True] * 3
        monkeypatch.setattr(spill, "_free_bytes", lambda root: 0)
        with pytest.raises(spill.SpillFailed, match=r"cannot spill chunk k \(800000 bytes\).*full: less than"):
            dirs.write(desc)
    finally:
        unlink_prefix(prefix)
        dirs.remove_all()
    assert not files_under(tmp_path)


def test_start_up_removes_the_spill_directories_of_dead_workers_only(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    me = psutil.Process()
    owners = {
        "mars-dead": {"host": socket.gethostname(), "pid": dead.pid, "started": 1.0},
        "mars-alive": {"host": socket.gethostname(), "pid": me.pid, "started": me.create_time()},
        "mars-elsewhere": {"host": "another-host", "pid": dead.pid, "started": 1.0},
    }
    for name, owner in owners.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "owner").write_text(json.dumps(owner))
        (tmp_path / name / "chunk").write_bytes(b"x")
    (tmp_path / "users-own-dir").mkdir()
    assert SpillDirs([str(tmp_path)], "mars-new").remove_strays() == 1
    assert sorted(os.listdir(tmp_path)) == ["mars-alive", "mars-elsewhere", "users-own-dir"]


# -- estimates and the budget -------------------------------------------------------
class FakeOp:
    pass


class HungryOp:
    memory_factor = 4.0


@dataclass
class FakeFused:
    steps: list = field(default_factory=list)


def spec(op: Any, inputs: list[str], shapes: list[tuple], dtypes: list[Any], remote: dict | None = None,
         index: int = 0) -> SubtaskSpec:
    st = Subtask(op, inputs, [f"out{i}" for i in range(len(shapes))], shapes, dtypes)
    return SubtaskSpec("s", "t", index, st, (0, index), remote_inputs=remote or {})


def test_a_need_counts_what_the_slot_loads_and_its_outputs_times_the_op_factor():
    store = ChunkStore()
    store.put("s", [seg("here", 1000), StoredObject("disk", 300, b"", (300,), "/spill/x")])
    remote = {"far": RemoteInput("w2", [], nbytes=200)}
    f64 = np.dtype("float64")
    need = estimate([spec(FakeOp(), ["here", "disk", "far", "here"], [(10, 10)], [f64], remote)], store)
    assert (need.loaded, need.outputs, need.factor, need.inputs) == (500, 800, 2.0, 1500)
    assert need.total == 500 + 2 * 800
    # shapes known only once run (nan), or no dtype (a frame): as big as the inputs
    assert estimate([spec(FakeOp(), ["here"], [(math.nan,)], [f64])], store).outputs == 1000
    assert estimate([spec(FakeOp(), ["here", "disk"], [(5, 2)], [None])], store).outputs == 1300
    assert estimate([spec(HungryOp(), [], [(100,)], [f64])], store).total == 4 * 800
    # a fused chain holds its biggest intermediate
    inner = Subtask(FakeOp(), [], ["x"], [(1000,)], [f64])
    assert estimate([spec(FakeFused([inner]), [], [()], [f64])], store).outputs == 8000


def test_the_budget_admits_work_within_the_soft_limit_and_big_work_alone():
    budget = MemoryBudget(1000 * MiB, baseline=100 * MiB)
    assert (budget.soft, budget.hard) == (750 * MiB, 900 * MiB)
    assert [budget.level(n * MiB) for n in (700, 750, 899, 900)] == [OK, SOFT, SOFT, HARD]
    assert budget.admits(300 * MiB, running=300 * MiB, stored=50 * MiB, n_running=1)
    assert not budget.admits(300 * MiB, running=300 * MiB, stored=51 * MiB, n_running=1)
    assert budget.admits(5000 * MiB, running=0, stored=600 * MiB, n_running=0)


def test_private_memory_leaves_out_the_shared_memory_a_process_maps(prefix):
    before = private_bytes(os.getpid())
    desc = put_object("k", np.ones(8 * MiB), prefix)  # 64 MiB in shared memory
    value = get_object(desc)
    assert value.sum() == 8 * MiB  # every page mapped and touched
    assert private_bytes(os.getpid()) - before < 16 * MiB
    assert psutil.Process().memory_info().rss - 0 > 64 * MiB
    del value
    unlink_prefix(prefix)


_PSS_PROBE = """
import os, sys
import numpy as np
from mars.services.execution.memory import TreeMemory
from mars.services.storage.shm import get_object, put_object, unlink_prefix
MiB, prefix = 1 << 20, sys.argv[1]
tree, me = TreeMemory(), os.getpid()
first = tree.sample(0.0).by_pid[me]  # PSS read
block = np.ones(8 * MiB)  # 64 MiB of a chunk function's own memory
shared = get_object(put_object("k", np.ones(8 * MiB), prefix))  # and 64 MiB of a mapped chunk
assert shared.sum() == 8 * MiB
grew = tree.sample(0.1).by_pid[me] - first  # from statm, not PSS
again = tree.sample(2.5).by_pid[me] - first  # PSS read again
del block, shared
unlink_prefix(prefix)
print(grew / MiB, again / MiB)
"""


def test_samples_between_readings_of_pss_follow_the_anonymous_memory(prefix):
    # in a process of its own: threads of the test process (other tests' sessions) would free memory meanwhile
    out = subprocess.run([sys.executable, "-c", _PSS_PROBE, prefix], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    grew, again = map(float, out.stdout.split())
    assert 56 < grew < 80, grew
    assert 56 < again < 80, again


# -- the guard -----------------------------------------------------------------------
@dataclass
class FakeHand:
    slot: Any
    batch: list
    need: Any


def test_the_guard_pauses_and_spills_over_the_soft_limit_and_kills_the_biggest_slot_over_the_hard_one(tmp_path):
    cache = ChunkCache(ChunkStore(), 100 * MiB, SpillDirs([str(tmp_path)], "mars-test-guard"))
    sleepers = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) for _ in range(2)]
    try:
        slots = [mo.ActorRef(f"127.0.0.1:{1000 + i}", "slot") for i in range(2)]
        pids = {s.address: p.pid for s, p in zip(slots, sleepers)}
        guard = MemoryGuard(MemoryBudget(1000 * MiB), cache, lambda: pids, worker="127.0.0.1:999")
        need = estimate([spec(FakeOp(), [], [(1000, 1000)], [np.dtype("float64")])], cache.store)
        hands = {(s.address, s.uid): FakeHand(s, [(spec(FakeOp(), [], [(1000, 1000)], [np.dtype("float64")],
                                                        index=i), None)], need) for i, s in enumerate(slots)}
        lowered = []
        guard.on_sample(MemorySample(800 * MiB, {p.pid: 400 * MiB for p in sleepers}), hands, lambda: lowered.append(1))
        assert guard.level == SOFT and guard.stats()["memory_paused"] == 1
        assert cache.target() == 0  # 50 MiB over the soft limit, and no chunks: spill all there is
        by_pid = {sleepers[0].pid: 300 * MiB, sleepers[1].pid: 650 * MiB}
        guard.on_sample(MemorySample(950 * MiB, by_pid), hands, lambda: lowered.append(1))
        assert guard.level == HARD and sleepers[1].wait(10) == -9 and sleepers[0].poll() is None
        error = guard.stopped(slots[1])
        assert isinstance(error, WorkerMemoryError) and guard.stopped(slots[0]) is None
        for part in ("worker 127.0.0.1:999 ran out of memory", "subtask 1 of task t", "FakeOp",
                     "output chunk of shape (1000, 1000), about 7.6 MiB", "used 950.0 MiB",
                     "hard limit of 900.0 MiB", "slot process held 650.0 MiB", "--phy-mem"):
            assert part in str(error)
        guard.on_sample(MemorySample(100 * MiB, {}), {}, lambda: lowered.append(1))
        assert guard.level == OK and lowered == [1] and cache.target() == 100 * MiB
        assert guard.budget.baseline == 100 * MiB and guard.stats()["n_memory_stops"] == 1
    finally:
        for p in sleepers:
            p.kill()
            p.wait()
        asyncio.run(cache.close())


# -- the execution actor: admission ---------------------------------------------------
async def _until(fn: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not await fn():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


@pytest.mark.parametrize("limit, at_once", [(1 << 50, 2), (1, 1)], ids=["within-budget", "over-the-limits"])
async def test_over_the_soft_limit_the_queue_holds_new_subtasks_and_one_runs_at_a_time(limit, at_once):
    pool = await mo.create_actor_pool("127.0.0.1", n_process=0)
    try:
        slots = [await mo.create_actor(GatedSlot, uid=f"slot/{i}", address=pool.address) for i in range(2)]
        reports = await mo.create_actor(Reports, address=pool.address)
        execution = await mo.create_actor(ExecutionActor, slots, ChunkCache(ChunkStore()), "w",
                                          MemoryBudget(limit), None, 0.01, address=pool.address)
        await asyncio.sleep(0.1)  # a few samples of this process's memory
        f64 = np.dtype("float64")
        await execution.submit([spec(FakeOp(), [], [(10,)], [f64], index=i) for i in range(3)], reports)

        async def running() -> int:
            return sum([len(await s.seen()) for s in slots])

        await _until(lambda: _eq(running, at_once))
        await asyncio.sleep(0.1)
        assert await running() == at_once  # the rest waits in the queue
        assert (await execution.stats())["memory_paused"] == int(at_once == 1)
        for _ in range(3):
            for s in slots:
                await s.open()
            await asyncio.sleep(0.05)
        await _until(lambda: _eq(reports.get, [0, 1, 2]))
    finally:
        await pool.stop()


async def test_a_cut_runs_queued_subtasks_are_dropped_and_the_rest_run():
    pool = await mo.create_actor_pool("127.0.0.1", n_process=0)
    try:
        slot = await mo.create_actor(GatedSlot, uid="slot/0", address=pool.address)
        reports = await mo.create_actor(Reports, address=pool.address)
        execution = await mo.create_actor(ExecutionActor, [slot], ChunkCache(ChunkStore()), "w", None,
                                          address=pool.address)
        f64 = np.dtype("float64")
        await execution.submit([spec(FakeOp(), [], [(10,)], [f64], index=i) for i in range(5)], reports)
        await _until(lambda: _eq(slot.seen, [0]))
        assert await execution.drop_queued("s", "t", 2, 4) == 2  # the run numbered 2 and 3 was cut short
        assert await execution.drop_queued("s", "other", 0, 5) == 0
        for _ in range(3):
            await slot.open()
            await asyncio.sleep(0.05)
        await _until(lambda: _eq(reports.get, [0, 1, 4]))
    finally:
        await pool.stop()


async def _eq(fn: Any, expected: Any) -> bool:
    return await fn() == expected


# -- a storage actor that spills, read from other processes ---------------------------
in_pool = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pool():
    pool = await mo.create_actor_pool("127.0.0.1", n_process=1, labels=["main", "io-0"])
    yield pool
    await pool.stop()


@in_pool
async def test_spilled_chunks_are_served_from_another_process_and_freed_on_destroy(pool, tmp_path, prefix):
    cache = ChunkCache(ChunkStore(), 1 * MiB, SpillDirs([str(tmp_path)], prefix))
    storage = await mo.create_actor(StorageActor, prefix, cache=cache, uid=STORAGE_UID, address=pool.address)
    transfer = await mo.create_actor(TransferActor, pool.address, uid=TRANSFER_UID, address=pool.address,
                                     allocate_strategy=mo.ProcessIndex(1))
    try:
        values = {f"k{i}": np.arange(100_000) * i for i in range(4)}  # 800 kB each: three spill
        await storage.register("s", [put_object(k, v, prefix) for k, v in values.items()])
        await cache.settled()
        stats = await storage.stats()
        assert stats["disk_bytes"] == 2_400_000 and stats["cache_limit"] == 1 * MiB
        for transfers in ([transfer.address], []):
            got = await fetch_values("s", list(values), pool.address, transfers)
            for value, expected in zip(got, values.values()):
                np.testing.assert_array_equal(value, expected)
        assert len(files_under(tmp_path)) == 3
    finally:
        await mo.destroy_actor(transfer)
        await mo.destroy_actor(storage)
    assert not files_under(tmp_path)


# -- a cluster of processes ---------------------------------------------------------------
class TreeSampler:
    """Samples a worker's process tree from outside, every 50 ms: PSS, and its chunks in /dev/shm."""

    def __init__(self, pid: int) -> None:
        self.root = psutil.Process(pid)
        self.prefix = f"mars-{pid}-"
        self.peak_pss = self.peak_shm = self.peak_total = 0
        self.n = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            pss = 0
            for proc in [self.root, *self.root.children(recursive=True)]:
                try:
                    pss += proc.memory_full_info().pss
                except psutil.Error:
                    continue
            shm = 0
            for entry in os.scandir(SHM_DIR):
                if entry.name.startswith(self.prefix):
                    try:
                        shm += entry.stat().st_size
                    except FileNotFoundError:
                        continue
            self.peak_pss, self.peak_shm = max(self.peak_pss, pss), max(self.peak_shm, shm)
            self.peak_total = max(self.peak_total, pss + shm)  # mapped chunks counted twice: on the safe side
            self.n += 1


def worker_figures(cluster: Any) -> dict:
    [worker] = cluster.session._backend.call("get_workers")
    return worker


@pytest.mark.timeout(150)
def test_a_worker_with_64m_of_cache_sums_and_sorts_512m_spilling_and_stays_within_its_limits(tmp_path):
    import mars.tensor as mt
    from mars.deploy.local import new_cluster

    roots = [str(tmp_path / "spill-a"), str(tmp_path / "spill-b")]
    config = {"worker": {"cache_mem": "64m", "phy_mem": "512m", "spill_dirs": roots},
              "cluster": {"heartbeat_interval": 0.2}}
    n, chunk = 64 * MiB, 2 * MiB  # 512 MiB of float64 in 16 MiB chunks
    # spawned, as mars-worker is: forked from this test process, the worker's memory would grow with pytest's
    with new_cluster(n_worker=1, n_cpu=2, web=False, config=config, start_method="spawn") as cluster:
        pid = worker_figures(cluster)["pid"]
        sampler = TreeSampler(pid)
        sampler.start()
        try:
            a = mt.random.rand(n, chunk_size=chunk).execute()
            total = a.sum().execute().fetch()
            b = mt.sort(a).execute()
            time.sleep(0.5)  # a heartbeat with the figures after the sort
            figures = worker_figures(cluster)
            spilled = {r: len(files_under(r)) for r in roots}
        finally:
            sampler.stop()
        assert figures["storage_disk_bytes"] > 0 and figures["storage_memory_bytes"] <= 64 * MiB
        assert figures["storage_disk_bytes"] + figures["storage_memory_bytes"] >= 2 * n * 8  # a and b are held
        assert all(spilled.values()), spilled
        av, bv = a.fetch(), b.fetch()
        assert av.shape == (n,) and np.isclose(total, av.sum(), rtol=1e-9)
        np.testing.assert_array_equal(bv, np.sort(av))
        del a, b, av, bv
    assert sampler.n > 20
    # measured from outside: chunks in shared memory stay near --cache-mem (one chunk in flight
    # may pass it), and the whole worker under the hard limit of --phy-mem
    assert sampler.peak_shm <= 64 * MiB + 2 * 16 * MiB, sampler.peak_shm / MiB
    assert sampler.peak_total <= 0.9 * 512 * MiB, (sampler.peak_pss / MiB, sampler.peak_shm / MiB)
    assert not any(files_under(r) for r in roots)  # spill files are gone once the worker stopped


@pytest.mark.timeout(120)
def test_a_subtask_over_the_hard_limit_fails_with_a_memory_error_naming_it_and_the_worker_carries_on(tmp_path):
    import mars.tensor as mt
    from mars.deploy.local import new_cluster

    config = {"worker": {"cache_mem": "64m", "phy_mem": "600m", "spill_dirs": [str(tmp_path)]}}
    # spawned, as mars-worker is: forked from this test process, the worker's memory would grow with pytest's
    with new_cluster(n_worker=1, n_cpu=2, web=False, config=config, start_method="spawn") as cluster:
        pid = worker_figures(cluster)["pid"]
        sampler = TreeSampler(pid)
        sampler.start()
        try:
            big = mt.random.rand(150_000_000, chunk_size=150_000_000)  # 1.1 GiB in one chunk
            with pytest.raises(WorkerMemoryError, match=r"ran out of memory: subtask 0 of task \w+ \(Tensor\w+, "
                               r"output chunk of shape \(150000000,\), about 1144.4 MiB.*hard limit of 540.0 MiB"):
                big.execute()
        finally:
            sampler.stop()
        assert sampler.peak_pss < 900 * MiB  # stopped well before the 1.1 GiB were there
        assert (mt.ones(1000, chunk_size=100) + 1).sum().execute().fetch() == 2000  # both slots work on
        x = mt.random.rand(4, 2_000_000, chunk_size=(1, 2_000_000))
        np.testing.assert_allclose(x.sum(axis=1).execute().fetch(), x.fetch().sum(axis=1))
