"""The cluster service: membership, heartbeats, lost workers, and what workers report."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import subprocess
import sys
import time

import psutil
import pytest

import mars.oscar as mo
from mars.serialization import deserialize, serialize
from mars.services.cluster import (
    CLUSTER_UID,
    WORKER_CLUSTER_UID,
    ClusterAPI,
    ClusterManagerActor,
    Membership,
    MockClusterAPI,
    ProcessTreeMonitor,
    WorkerHeartbeatActor,
    WorkerInfo,
    WorkerStats,
    local_worker_info,
    parse_memory_limit,
    parse_n_cpu,
)
from mars.services.cluster.resources import available_cpus, cgroup_cpu_quota

GiB = 1 << 30


def _info(address: str = "w1:1", n_cpu: int = 2) -> WorkerInfo:
    return WorkerInfo(address, n_cpu, 4 * GiB, 123, "host", [f"{address}/s{i}" for i in range(n_cpu)], [], [], 0.0)


def _stats(cpu: float = 0.5, storage: dict | None = None, execution: dict | None = None) -> WorkerStats:
    return WorkerStats(cpu, 1 << 20, 4 * GiB, storage or {}, execution or {}, 1.0)


# -- Membership: the state machine, on a fake clock ----------------------------------


def test_registered_worker_stays_alive_while_it_heartbeats():
    m = Membership(timeout=5.0)
    m.register(_info("w1:1"), now=0.0)
    for t in (4.0, 8.0, 12.0):
        assert m.heartbeat("w1:1", _stats(cpu=t), now=t)
        assert m.check(now=t + 4.9) == []
    [status] = m.alive()
    assert (status.state, status.last_heartbeat, status.stats.cpu_usage) == ("alive", 12.0, 12.0)


def test_silent_worker_is_lost_after_the_timeout_and_reported_once():
    m = Membership(timeout=5.0)
    m.register(_info("w1:1"), now=0.0)
    m.register(_info("w2:1"), now=0.0)
    m.heartbeat("w2:1", _stats(), now=3.0)
    assert m.check(now=5.0) == []  # exactly at the timeout is not yet past it
    assert m.check(now=5.5) == ["w1:1"]
    assert m.check(now=9.0) == ["w2:1"]
    assert m.check(now=100.0) == []
    assert m.alive() == []
    assert [(s.address, s.state, s.lost_at) for s in m.all()] == [("w1:1", "lost", 5.5), ("w2:1", "lost", 9.0)]


def test_heartbeat_from_unknown_or_lost_worker_is_refused():
    m = Membership(timeout=1.0)
    assert not m.heartbeat("nobody:1", _stats(), now=0.0)
    m.register(_info("w1:1"), now=0.0)
    m.check(now=2.0)
    assert not m.heartbeat("w1:1", _stats(), now=2.1)
    assert m.all()[0].state == "lost"  # a refused heartbeat does not revive it


def test_worker_that_comes_back_rejoins_as_a_new_one():
    m = Membership(timeout=1.0)
    m.register(_info("w1:1", n_cpu=2), now=0.0)
    m.heartbeat("w1:1", _stats(), now=0.5)
    m.check(now=2.0)
    m.register(_info("w1:1", n_cpu=8), now=3.0)
    [status] = m.all()
    assert (status.state, status.stats, status.lost_at, status.info.n_cpu) == ("alive", None, None, 8)
    assert m.heartbeat("w1:1", _stats(), now=3.5)


def test_version_bumps_on_every_join_and_loss_but_not_on_heartbeats():
    m = Membership(timeout=1.0)
    assert m.version == 0
    m.register(_info("w1:1"), now=0.0)
    m.register(_info("w2:1"), now=0.0)
    assert m.version == 2
    m.heartbeat("w1:1", _stats(), now=0.9)
    m.check(now=0.95)
    assert m.version == 2
    m.check(now=1.5)  # w2 is lost
    assert m.version == 3
    m.register(_info("w1:1"), now=1.6)  # an alive worker registering again is a join too
    assert m.mark_lost("w1:1", now=1.7) and not m.mark_lost("w1:1", now=1.8)
    assert m.version == 5


def test_statuses_handed_out_are_snapshots():
    m = Membership(timeout=1.0)
    m.register(_info("w1:1"), now=0.0)
    before = m.alive()[0]
    m.heartbeat("w1:1", _stats(), now=0.5)
    before.state = "lost"
    assert before.stats is None and before.last_heartbeat == 0.0
    assert m.alive()[0].state == "alive"


def test_only_the_latest_lost_workers_are_remembered():
    m = Membership(timeout=1.0, max_lost=2)
    for i in range(4):
        m.register(_info(f"w{i}:1"), now=float(i))
        m.mark_lost(f"w{i}:1", now=float(i))
    assert [s.address for s in m.all()] == ["w2:1", "w3:1"]


@pytest.mark.parametrize("timeout", [0, -1.0, float("nan"), float("inf")])
def test_membership_timeout_must_be_positive_and_finite(timeout):
    with pytest.raises(ValueError, match=r"worker timeout must be a positive number of seconds, got"):
        Membership(timeout=timeout)


def test_status_to_json_is_flat_and_json_able():
    m = Membership(timeout=1.0)
    m.register(_info("w1:1", n_cpu=4), now=10.0)
    fresh = m.alive()[0].to_json()
    assert (fresh["cpu_usage"], fresh["memory_used"], fresh["memory_limit"]) == (None, None, 4 * GiB)
    storage = {"n_chunks": 3, "memory_bytes": 300, "disk_bytes": 0, "nested": {"no": 1}}
    m.heartbeat("w1:1", _stats(cpu=1.5, storage=storage, execution={"n_running": 2, "n_queued": 7}), now=11.0)
    d = json.loads(json.dumps(m.alive()[0].to_json(), allow_nan=False))
    assert d["address"] == "w1:1" and d["state"] == "alive" and d["n_cpu"] == 4 and d["n_slots"] == 4
    assert (d["cpu_usage"], d["memory_used"], d["last_heartbeat"]) == (1.5, 1 << 20, 11.0)
    assert (d["storage_n_chunks"], d["storage_memory_bytes"], d["execution_n_queued"]) == (3, 300, 7)
    assert "storage_nested" not in d


def test_status_survives_the_wire():
    m = Membership(timeout=1.0)
    m.register(_info("w1:1"), now=0.0)
    m.heartbeat("w1:1", _stats(execution={"n_running": 1}), now=0.5)
    [copy] = deserialize(*serialize(m.all()))
    assert copy == m.all()[0]


# -- parsing limits ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, expected",
    [
        (1073741824, GiB),
        ("1073741824", GiB),
        ("4g", 4 * GiB),
        ("4G", 4 * GiB),
        ("4gb", 4 * GiB),
        ("512m", 512 << 20),
        ("512 MiB", 512 << 20),
        ("1.5GiB", 3 * GiB // 2),
        ("100k", 100 << 10),
        ("2t", 2 << 40),
        ("50%", 500),
        ("12.5 %", 125),
        (0.5, 500),
        ("0.25", 250),
        (1.0, 1000),
        (2048.0, 2048),
        (None, 1000),
    ],
)
def test_parse_memory_limit(value, expected):
    assert parse_memory_limit(value, total=1000) == expected


@pytest.mark.parametrize("value", ["4x", "g", "", "-1g", "1e9", 0, -5, 0.0, -0.5, True, float("nan"), [], "0b"])
def test_parse_memory_limit_refuses_bad_values_naming_them(value):
    with pytest.raises(ValueError, match="memory limit") as e:
        parse_memory_limit(value, total=1000)
    assert repr(value) in str(e.value)


@pytest.mark.parametrize("value", ["150%", "0%"])
def test_parse_memory_limit_percentages_must_be_at_most_100(value):
    with pytest.raises(ValueError, match=r"must be in \(0%, 100%\], got '\d+%'"):
        parse_memory_limit(value, total=1000)


def test_parse_memory_limit_defaults_to_this_machines_memory():
    machine = psutil.virtual_memory().total
    assert 0 < parse_memory_limit(None) <= machine
    assert parse_memory_limit("100%") == parse_memory_limit(None)


def test_parse_n_cpu():
    assert parse_n_cpu(3) == parse_n_cpu("3") == parse_n_cpu(" 3 ") == 3
    assert parse_n_cpu("auto") == parse_n_cpu(None) == parse_n_cpu("AUTO") == available_cpus()
    assert 1 <= available_cpus() <= len(os.sched_getaffinity(0))


@pytest.mark.parametrize("value", [0, -1, "0", "-2", "1.5", 1.5, "two", True, ""])
def test_parse_n_cpu_refuses_bad_values_naming_them(value):
    with pytest.raises(ValueError, match="n_cpu must be a positive integer or 'auto', got") as e:
        parse_n_cpu(value)
    assert repr(value) in str(e.value)


def test_auto_n_cpu_respects_a_container_cpu_quota(tmp_path):
    assert cgroup_cpu_quota(str(tmp_path)) is None
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert cgroup_cpu_quota(str(tmp_path)) is None
    (tmp_path / "cpu.max").write_text("150000 100000\n")
    assert cgroup_cpu_quota(str(tmp_path)) == 1.5
    assert available_cpus(str(tmp_path)) == min(2, len(os.sched_getaffinity(0)))
    v1 = tmp_path / "v1"
    (v1 / "cpu").mkdir(parents=True)
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    (v1 / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert cgroup_cpu_quota(str(v1)) is None
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("50000\n")
    assert available_cpus(str(v1)) == 1


# -- measuring a process tree -----------------------------------------------------------

_BURN = "import time\nwhile True: pass"


def _burners(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", _BURN]) for _ in range(n)]


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


def _cpu_seconds(proc: subprocess.Popen) -> float:
    t = psutil.Process(proc.pid).cpu_times()
    return t.user + t.system


def test_cpu_of_a_busy_child_counts_and_stays_within_the_slots():
    procs = _burners(1)
    try:
        time.sleep(0.1)  # past the interpreter's start
        monitor = ProcessTreeMonitor(os.getpid(), n_cpu=2, memory_limit=GiB)
        child_before, start = _cpu_seconds(procs[0]), time.monotonic()
        time.sleep(0.5)
        cores, memory = monitor.sample()
        child_cores = (_cpu_seconds(procs[0]) - child_before) / (time.monotonic() - start)
    finally:
        _stop(procs)
    assert 0.5 < cores <= 2.0
    assert abs(cores - child_cores) < 0.25  # it is the child's time that was measured
    assert memory > 10 << 20  # this interpreter and the child's


def test_cpu_is_clamped_to_n_cpu():
    procs = _burners(2)
    try:
        monitor = ProcessTreeMonitor(os.getpid(), n_cpu=1, memory_limit=GiB)
        time.sleep(0.4)
        cores, _ = monitor.sample()
    finally:
        _stop(procs)
    assert 0.5 < cores <= 1.0


def test_a_child_that_exits_neither_goes_negative_nor_hides_the_others():
    doomed, steady = _burners(2)
    try:
        time.sleep(0.4)  # the doomed child piles up CPU time that the baseline holds
        monitor = ProcessTreeMonitor(os.getpid(), n_cpu=2, memory_limit=GiB)
        _stop([doomed])
        time.sleep(0.5)
        cores, _ = monitor.sample()
        time.sleep(0.1)
        after, _ = monitor.sample()
    finally:
        _stop([doomed, steady])
    # a tree-wide total would drop by the doomed child's history and read 0 here
    assert cores > 0.5 and after >= 0.0


#: a process that holds 64 MiB more (touched) on "grow", lets go of it all on "free", and answers "ok"
_GROW = """
import sys
held = []
for line in sys.stdin:
    if line.strip() == "grow":
        held.append(bytearray(b"x") * (64 << 20))
    elif line.strip() == "free":
        held.clear()
    print("ok", flush=True)
"""


def _tell(proc: subprocess.Popen, what: str) -> None:
    proc.stdin.write(what + "\n")
    proc.stdin.flush()
    assert proc.stdout.readline().strip() == "ok"


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="anonymous memory is read from /proc")
def test_pss_is_read_once_per_interval_and_followed_by_anonymous_memory_between(monkeypatch):
    """A slot mapping a worker's held tables takes ~12 ms a PSS reading: once a second per process was a
    heartbeat's worth of blocked event loop. Between readings a new array still shows at once."""
    from mars.services.cluster import resources

    child = subprocess.Popen([sys.executable, "-c", _GROW], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        _tell(child, "start")
        monitor = ProcessTreeMonitor(child.pid, n_cpu=1, memory_limit=GiB)  # PSS read here, at the start
        reads: list[int] = []
        real = psutil.Process.memory_full_info
        monkeypatch.setattr(psutil.Process, "memory_full_info", lambda self: reads.append(self.pid) or real(self))
        _, before = monitor.sample()
        _tell(child, "grow")
        _, after = monitor.sample()
        assert reads == []
        assert after - before > 48 << 20
        _tell(child, "free")
        monkeypatch.setattr(resources, "PSS_EVERY", 0.0)
        _, precise = monitor.sample()
        assert reads and precise < after - (32 << 20)
    finally:
        child.kill()
        child.wait()


# -- the actors, in two pools of this event loop -------------------------------------------


class FakeExecution(mo.Actor):
    def stats(self) -> dict:
        return {"n_running": 1, "n_queued": 4}


def _free_address() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


async def _start_supervisor(address: str = "127.0.0.1", timeout: float = 0.5) -> tuple[mo.MainActorPool, ClusterAPI]:
    pool = await mo.create_actor_pool(address, n_process=0)
    await mo.create_actor(ClusterManagerActor, timeout, 0.05, uid=CLUSTER_UID, address=pool.address)
    return pool, ClusterAPI(pool.address)


async def _start_worker(supervisors: list[str], interval: float = 0.1) -> tuple[mo.MainActorPool, mo.ActorRef]:
    pool = await mo.create_actor_pool("127.0.0.1", n_process=0)
    info = local_worker_info(pool.address, n_cpu=2, memory_limit=GiB, slot_addresses=[pool.address])
    ref = await mo.create_actor(WorkerHeartbeatActor, supervisors, info, interval, uid=WORKER_CLUSTER_UID,
                                address=pool.address)  # fmt: skip
    return pool, ref


@pytest.fixture
async def pools():
    """Pools a test starts; stopped (and their connections closed) after it."""
    started: list = []
    yield started
    for pool in reversed(started):
        await pool.stop()
    mo.close_connections()


async def _until(probe, check, timeout: float = 3.0):
    deadline = time.monotonic() + timeout
    while True:
        value = await probe()
        if check(value):
            return value
        assert time.monotonic() < deadline, f"not met within {timeout} s; last value: {value!r}"
        await asyncio.sleep(0.02)


async def test_worker_registers_and_its_heartbeats_carry_its_load(pools):
    sup, api = await _start_supervisor()
    pools.append(sup)
    # tcp:// keeps the calls on the wire although both pools live in this process
    worker, _ = await _start_worker([f"tcp://{sup.address}"])
    pools.append(worker)
    await mo.create_actor(FakeExecution, uid="execution", address=worker.address)
    [status] = await _until(api.get_workers, lambda ws: ws and ws[0].stats and ws[0].stats.execution)
    assert status.address == worker.address and status.info.pid == os.getpid()
    stats = status.stats
    assert 0.0 <= stats.cpu_usage <= 2.0 and stats.memory_used > 0 and stats.memory_limit == GiB
    assert stats.storage == {} and stats.execution == {"n_running": 1, "n_queued": 4}
    first = status.last_heartbeat
    await _until(api.get_workers, lambda ws: ws[0].last_heartbeat > first)  # they keep coming


async def test_worker_whose_heartbeats_stop_is_declared_lost(pools, caplog):
    sup, api = await _start_supervisor(timeout=0.5)
    worker, ref = await _start_worker([sup.address])
    pools += [sup, worker]
    await api.wait_for_workers(1, timeout=2.0)
    version = await api.get_version()
    stopped = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="mars.services.cluster.supervisor"):
        await mo.destroy_actor(ref)
        version, alive = await api.watch(version, timeout=3.0)
    assert alive == [] and 0.4 < time.monotonic() - stopped < 2.0
    [lost] = await api.get_workers(include_lost=True)
    assert lost.state == "lost" and lost.lost_at is not None
    assert any(worker.address in r.getMessage() and "no heartbeat for" in r.getMessage() for r in caplog.records)


async def test_worker_started_before_its_supervisors_registers_with_each(pools):
    early_sup, early_api = await _start_supervisor()
    pools.append(early_sup)
    late_address = _free_address()
    worker, _ = await _start_worker([early_sup.address, late_address])
    pools.append(worker)
    # the supervisor that is up is not held back by the one that is not
    assert [w.address for w in await early_api.wait_for_workers(1, timeout=2.0)] == [worker.address]
    await asyncio.sleep(0.3)
    late_sup, late_api = await _start_supervisor(late_address)
    pools.append(late_sup)
    waited = time.monotonic()
    assert [w.address for w in await late_api.wait_for_workers(1, timeout=3.0)] == [worker.address]
    assert time.monotonic() - waited < 1.5  # retried every 0.5 s
    await _until(late_api.get_workers, lambda ws: ws[0].stats is not None)


async def test_waiting_for_workers_lets_them_register(pools):
    sup, api = await _start_supervisor()
    pools.append(sup)
    assert await api.wait_for_workers(1, timeout=0.05) == []  # what there is, at the timeout
    waiting = asyncio.ensure_future(api.wait_for_workers(1, timeout=3.0))
    await asyncio.sleep(0.05)
    worker, _ = await _start_worker([sup.address])
    pools.append(worker)
    assert [w.address for w in await waiting] == [worker.address]


async def test_worker_forgotten_by_the_supervisor_registers_again(pools):
    sup, api = await _start_supervisor(timeout=5.0)
    worker, _ = await _start_worker([sup.address])
    pools += [sup, worker]
    await api.wait_for_workers(1, timeout=2.0)
    version = await api.get_version()
    assert await api.mark_lost(worker.address)
    version, workers = await api.watch(version + 1, timeout=2.0)  # the rejoin after the loss
    assert [w.address for w in workers] == [worker.address] and version == (await api.get_version())


async def test_watch_returns_at_its_timeout_when_nothing_changes(pools):
    sup, api = await _start_supervisor()
    pools.append(sup)
    version, _ = await api.watch(-1, timeout=5.0)
    start = time.monotonic()
    assert await api.watch(version, timeout=0.1) == (version, [])
    assert 0.08 < time.monotonic() - start < 1.0


async def test_mock_api_behaves_like_the_real_one():
    api = MockClusterAPI()
    version, _ = await api.watch(-1, timeout=0)
    waiting = asyncio.ensure_future(api.watch(version, timeout=2.0))
    await asyncio.sleep(0)
    api.add_worker("w1:1", n_cpu=4)
    version, [w] = await waiting
    assert (w.address, w.info.n_cpu, len(w.info.slot_addresses)) == ("w1:1", 4, 4)
    assert api.lose_worker("w1:1")
    assert await api.get_workers() == [] and await api.get_version() == version + 1
    assert not await api.heartbeat("w1:1", _stats())
    assert [w.state for w in await api.get_workers(include_lost=True)] == ["lost"]
