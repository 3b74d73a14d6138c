"""GPU slots without a GPU: device flags through tiling and fusion, placement, worker lanes, device lists.

A GPU slot is a slot with a device label: all of this runs on CI's CPUs.
The tests that need CUDA are in test_gpu_device.py (marked ``gpu``).
"""

from __future__ import annotations

import types

import numpy as np
import pytest

import mars.oscar as mo
import mars.tensor as mt
from mars.core.device import is_device_array, run_op, to_host
from mars.core.graph import Subtask
from mars.deploy.oscar.node import _worker_pool_layout
from mars.services.cluster.gpus import GPUDeviceError, GPUMonitor, resolve_devices
from mars.services.errors import NoGPUWorkersError
from mars.services.execution.devicecache import DeviceCache
from mars.services.scheduling.placement import Placer, WorkerLoad


def _tiled_ops(t):
    """Every chunk op of ``t``'s tiled graph (tiled without running)."""
    from mars.core.tiling import Tiler

    def refuse(chunks, fetch=False):
        raise AssertionError("tiling asked to run chunks")

    Tiler(refuse).tile([t.data])
    seen, stack, ops = set(), list(t.data.chunks), []
    while stack:
        c = stack.pop()
        if id(c) in seen:
            continue
        seen.add(id(c))
        ops.append(c.op)
        stack.extend(c.op.inputs)
    return ops


def test_gpu_flag_follows_inputs_and_stops_at_to_cpu():
    x = mt.ones((4, 4), chunk_size=2)
    g = x.to_gpu()
    assert g.op.gpu is True and not x.op.gpu
    y = (g * 2 + 1).sum(axis=0)
    assert y.op.gpu is True
    back = y.to_cpu()
    assert back.op.gpu is False and not (back + 1).op.gpu
    # the same expression on the GPU is another result: its keys differ
    assert (x * 2).key != (g * 2).key


def test_every_chunk_op_of_a_gpu_op_runs_on_the_gpu():
    g = mt.ones((12, 12), chunk_size=2).to_gpu()
    s = (g.T @ g).sum()  # a transpose, block products and a reduction tree made inside tile()
    ops = _tiled_ops(s)
    gpu_ops = [op for op in ops if op.gpu]
    assert len({type(op).__name__ for op in gpu_ops}) >= 4
    cpu_ops = [op for op in ops if not op.gpu]
    assert cpu_ops and all(type(op).__name__ == "TensorFull" for op in cpu_ops)  # the host source


def test_to_cpu_chunks_stay_on_the_cpu():
    t = (mt.ones(5, chunk_size=2).to_gpu() + 1).to_cpu() * 3
    ops = _tiled_ops(t)
    moves = sorted(bool(op.gpu) for op in ops if type(op).__name__ == "TensorToDevice")
    assert moves == [False] * 3 + [True] * 3  # to_gpu and to_cpu, per chunk
    assert not t.data.chunks[0].op.gpu


def test_subtask_and_fused_op_say_gpu():
    from mars.core.fusion import FusedOp

    g = mt.ones(4, chunk_size=4).to_gpu() + 1
    chunk_op = _tiled_ops(g)[0]
    st = Subtask(chunk_op, [], ["k"])
    assert st.gpu
    fused = FusedOp([st, Subtask(types.SimpleNamespace(gpu=None), ["k"], ["j"])], [], "j")
    assert fused.gpu and fused._plan is None
    assert not Subtask(types.SimpleNamespace(gpu=None), [], ["k"]).gpu


def test_cpu_results_equal_numpy_with_the_device_code_in_place():
    x = np.arange(12.0).reshape(3, 4)
    t = mt.tensor(x, chunk_size=2)
    np.testing.assert_array_equal(((t * 2 + 1) ** 2).sum(axis=1).to_cpu().execute().fetch(),
                                  ((x * 2 + 1) ** 2).sum(axis=1))


def test_run_op_leaves_host_values_alone():
    op = types.SimpleNamespace(gpu=None, execute=lambda a, b: a + b)
    assert run_op(op, [np.ones(2), np.ones(2)]).tolist() == [2.0, 2.0]
    assert not is_device_array(np.ones(2)) and to_host((np.ones(1),))[0].tolist() == [1.0]


def test_placer_sends_gpu_subtasks_to_gpu_workers_only():
    placer = Placer([WorkerLoad("cpu:1", 4), WorkerLoad("gpu:1", 2, n_gpu=1), WorkerLoad("gpu:2", 2, n_gpu=2)])
    chosen = [placer.place({}, gpu=True) for _ in range(6)]
    assert set(chosen) == {"gpu:1", "gpu:2"}
    assert chosen.count("gpu:2") == 4  # twice the devices, twice the work
    # a GPU subtask goes where its inputs are, unless that worker's GPUs are far busier
    assert placer.place({"gpu:1": 100}, gpu=True) == "gpu:1"
    # inputs on a CPU-only worker do not draw a GPU subtask there
    assert placer.place({"cpu:1": 100}, gpu=True) != "cpu:1"
    placer.done("gpu:1", gpu=True)
    assert placer.workers["gpu:1"].gpu_in_flight >= 0


def test_a_gpu_job_without_gpu_workers_fails_at_once():
    placer = Placer([WorkerLoad("cpu:1", 4)])
    with pytest.raises(NoGPUWorkersError, match="this job needs a GPU worker; none is registered"):
        placer.place({}, gpu=True)
    assert placer.place({}) == "cpu:1"


def test_worker_layout_pins_one_device_per_gpu_slot():
    labels, envs = _worker_pool_layout(2, 1, [0, 3])
    assert labels == ["main", "slot-0", "slot-1", "io-0", "gpu-0", "gpu-3"]
    assert [e["CUDA_VISIBLE_DEVICES"] for e in envs] == ["", "", "", "0", "3"]
    assert all(e["OMP_NUM_THREADS"] == "1" for e in envs)
    _, plain = _worker_pool_layout(1, 0, [])
    assert "CUDA_VISIBLE_DEVICES" not in plain[0]


def test_devices_are_resolved_against_what_is_visible():
    visible = [(0, "NVIDIA H100"), (1, "NVIDIA H100")]
    assert resolve_devices("auto", visible) == [0, 1]
    assert resolve_devices([], visible) == [] and resolve_devices(None, visible) == []
    with pytest.raises(GPUDeviceError, match=r"CUDA device 3, which does not exist here; visible devices: "
                                             r"0 \(NVIDIA H100\), 1 \(NVIDIA H100\)"):
        resolve_devices([0, 3], visible)
    with pytest.raises(GPUDeviceError, match="visible devices: none"):
        resolve_devices([0], [])


def test_gpu_monitor_reports_nothing_without_devices_and_survives_a_missing_driver(monkeypatch):
    assert GPUMonitor([]).sample() == []
    import mars.services.cluster.gpus as gpus

    def broken():
        raise GPUDeviceError("no driver")

    monkeypatch.setattr(gpus, "_nvml", broken)
    monitor = GPUMonitor([0])
    assert monitor.sample() == [] and monitor.sample() == []


def test_gpu_monitor_reads_nvml(monkeypatch):
    import mars.services.cluster.gpus as gpus

    fake = types.SimpleNamespace(
        nvmlDeviceGetHandleByIndex=lambda i: i,
        nvmlDeviceGetMemoryInfo=lambda h: types.SimpleNamespace(used=5 << 30, total=80 << 30),
        nvmlDeviceGetName=lambda h: b"NVIDIA H100",
        nvmlDeviceGetUtilizationRates=lambda h: types.SimpleNamespace(gpu=37),
    )
    monkeypatch.setattr(gpus, "_nvml", lambda: fake)
    assert GPUMonitor([1]).sample() == [{"index": 1, "name": "NVIDIA H100", "memory_used": 5 << 30,
                                         "memory_total": 80 << 30, "utilization": 37}]


class _FakeDeviceArray:
    __module__ = "cupy._core.core"
    __cuda_array_interface__ = {}

    def __init__(self, nbytes):
        self.nbytes = nbytes


def test_device_cache_drops_least_recently_used_beyond_its_limit():
    cache = DeviceCache(limit=100)
    a, b, c = _FakeDeviceArray(40), _FakeDeviceArray(40), _FakeDeviceArray(40)
    cache.put("a", a)
    cache.put("b", b)
    assert cache.get("a") is a  # a is now the most recent
    cache.put("c", c)
    assert cache.get("b") is None and cache.get("a") is a and cache.get("c") is c
    assert cache.nbytes == 80
    cache.put("huge", _FakeDeviceArray(1000))  # bigger than the budget: host memory only
    assert cache.get("huge") is None and len(cache) == 2


@pytest.mark.timeout(120)
def test_a_gpu_job_on_a_cluster_without_gpu_slots_fails_at_once_and_the_cluster_carries_on():
    import time

    from mars.deploy.local import new_cluster

    with new_cluster(n_worker=1, n_cpu=1):
        started = time.monotonic()
        with pytest.raises(NoGPUWorkersError, match="this job needs a GPU worker; none is registered"):
            (mt.ones(10, chunk_size=5).to_gpu() + 1).sum().execute()
        assert time.monotonic() - started < 10
        assert float((mt.ones(10, chunk_size=5) + 1).sum().execute().fetch()) == 20.0


def _fused(t):
    """The fused subtasks of ``t``'s graph, as the session builds them."""
    from mars.core.fusion import FusedOp, fuse
    from mars.core.graph import build_subtasks

    _tiled_ops(t)
    subtasks = fuse(build_subtasks(list(t.data.chunks), lambda key: False), {c.key for c in t.data.chunks})
    return [st.op for st in subtasks if isinstance(st.op, FusedOp)]


def test_a_leading_elementwise_chain_becomes_one_kernel_plan():
    from mars.core import gpufuse

    x = mt.tensor(np.arange(10.0), chunk_size=5).to_gpu()
    fused = _fused(((x * 2 + 1) ** 2).sum())
    chains = [op._chain for op in fused if op._chain is not None]
    assert chains, [op.steps for op in fused]
    _, n, keys, (_, desc), consts = chains[0]
    assert n == 3
    assert [d[0] for d in desc] == ["multiply", "add", "square"] and len(keys) == 1
    # scalars are the kernel's arguments, not its code
    assert desc[0][1] == (("in", 0), ("k", 0)) and desc[1][1] == (("v", 0), ("k", 1)) and consts == (2, 1)
    # the same structure for every chunk, and for other scalars: one compiled kernel
    other = [op._chain for op in _fused(((x * 3 + 5) ** 2).sum()) if op._chain is not None]
    assert len({c[3] for c in chains + other}) == 1 and other[0][4] == (3, 5)
    # on the CPU nothing is planned
    cpu = mt.tensor(np.arange(10.0), chunk_size=5)
    assert all(op._chain is None for op in _fused(((cpu * 2 + 1) ** 2).sum()))
    assert gpufuse.plan([], [], "k") is None


def test_a_chain_whose_middle_value_is_read_later_is_cut_before_it():
    from mars.core import gpufuse

    a = types.SimpleNamespace(op=types.SimpleNamespace(gpu=True, kernel_spec=lambda: ("negative", [("arg", 0)])),
                              input_keys=["x"], output_keys=["a"])
    b = types.SimpleNamespace(op=types.SimpleNamespace(gpu=True, kernel_spec=lambda: ("exp", [("arg", 0)])),
                              input_keys=["a"], output_keys=["b"])
    c = types.SimpleNamespace(op=types.SimpleNamespace(gpu=True, kernel_spec=lambda: ("add", [("arg", 0), ("arg", 1)])),
                              input_keys=["b", "a"], output_keys=["c"])
    assert gpufuse.plan([a, b, c], ["x"], "c")[:2] == (0, 3)
    reads_a = types.SimpleNamespace(op=types.SimpleNamespace(), input_keys=["a"], output_keys=["d"])
    assert gpufuse.plan([a, b, reads_a], ["x"], "d") is None  # a escapes the chain a -> b


def test_a_gpu_sort_that_fits_the_device_runs_as_one_kernel_without_an_exchange():
    g = mt.sort(mt.tensor(np.arange(100.0)[::-1], chunk_size=30).to_gpu())
    ops = _tiled_ops(g)  # no Fetch of samples: the tiler would fail the test
    assert len(g.data.chunks) == 1 and g.data.chunks[0].op.gpu
    assert not any("Split" in type(op).__name__ for op in ops)
    cpu = mt.sort(mt.tensor(np.arange(100.0)[::-1], chunk_size=30))
    with pytest.raises(AssertionError, match="tiling asked to run chunks"):
        _tiled_ops(cpu)  # the CPU sort exchanges runs between chunks, after a sampling stage


class _GPUFakeOp:
    gpu = True


def test_gpu_subtasks_go_to_the_gpu_slot_whole_and_cpu_ones_to_the_cpu_slots():
    import asyncio

    asyncio.run(_gpu_lane_run())


async def _gpu_lane_run() -> None:
    import asyncio
    import math

    from mars.services.execution.api import SubtaskSpec
    from mars.services.execution.worker import ExecutionActor
    from mars.services.storage.cache import ChunkCache
    from mars.services.storage.core import ChunkStore
    from mars.services.storage.shm import StoredObject
    from tests.fake_slots import GatedSlot, Reports

    def spec(op, inputs, shapes, dtypes, index):
        st = Subtask(op, inputs, [f"out{index}"], shapes, dtypes)
        return SubtaskSpec("s", "t", index, st, (0, index))

    pool = await mo.create_actor_pool("127.0.0.1", n_process=0)
    try:
        cpus = [await mo.create_actor(GatedSlot, uid=f"slot/{i}", address=pool.address) for i in range(2)]
        gpu = await mo.create_actor(GatedSlot, uid="slot/gpu-0", address=pool.address)
        reports = await mo.create_actor(Reports, address=pool.address)
        store = ChunkStore()
        store.put("s", [StoredObject("big", 100 << 20, b"", (100 << 20,), "mars-test-not-a-segment")])
        execution = await mo.create_actor(ExecutionActor, cpus, ChunkCache(store), "w", None,
                                          gpu_slots=[gpu], address=pool.address)
        f64 = np.dtype("float64")
        await execution.submit([spec(object(), [], [(10,)], [f64], index=i) for i in range(2)], reports)
        await _until(lambda: _seen(cpus), [0, 1])
        # the GPU slot is busy with subtask 2: the 8 after it queue, and then go to it as one batch
        await execution.submit([spec(_GPUFakeOp(), [], [(10,)], [f64], index=2)], reports)
        await _until(gpu.seen, [2])
        # outputs of no known size (a reduction's partial tuple) are estimated as big as the inputs: no matter
        await execution.submit([spec(_GPUFakeOp(), ["big"], [(math.nan,)], [None], index=i) for i in range(3, 11)],
                               reports)
        await asyncio.sleep(0.05)
        await gpu.open()
        await _until(gpu.seen, list(range(2, 11)))
        assert await _seen(cpus) == [0, 1]  # no GPU subtask ran on a CPU slot
        await gpu.open()
        for s in cpus:
            await s.open()
        await _until(reports.get, list(range(11)))
    finally:
        await pool.stop()


async def _seen(slots) -> list[int]:
    return sorted([i for s in slots for i in await s.seen()])


async def _until(fn, expected, timeout: float = 5.0) -> None:
    import asyncio
    import time

    deadline = time.monotonic() + timeout
    while await fn() != expected:
        assert time.monotonic() < deadline, f"still {await fn()!r}, not {expected!r}"
        await asyncio.sleep(0.01)


def _chained_run(holders: list[str], shape: tuple = (10,)) -> dict:
    """What a GPU graph of 8 partial reductions and their sum is sent as, its inputs held as ``holders`` say."""
    import asyncio
    from types import SimpleNamespace

    from mars.services.meta.core import ChunkMeta, MetaStore
    from mars.services.scheduling.placement import Placer, WorkerLoad
    from mars.services.task.graphrun import GraphRun

    meta = MetaStore()
    for i, w in enumerate(holders):
        meta.put(ChunkMeta(f"x{i}", w, (1_000_000,), 8 << 20))
    op = _GPUFakeOp()
    subtasks = [Subtask(op, [f"x{i}"], [f"p{i}"], [shape]) for i in range(len(holders))]
    subtasks.append(Subtask(op, [f"p{i}" for i in range(len(holders))], ["sum"], [()]))
    sent: dict = {}

    async def send_specs(address, specs):
        sent.setdefault(address, []).extend((s.index, s.chained) for s in specs)

    placer = Placer([WorkerLoad("w1", 2, n_gpu=1), WorkerLoad("w2", 2, n_gpu=1), WorkerLoad("cpu", 2)])

    async def get_placer(task):
        return placer

    view = SimpleNamespace(scheduled=lambda i, w: None)
    proc = SimpleNamespace(meta=meta, session_id="s", placer=get_placer, send_specs=send_specs,
                           pins=SimpleNamespace(pin=lambda keys: None),
                           task_graph=lambda task: SimpleNamespace(add_run=lambda base, subtasks: view))

    async def go():
        await GraphRun(proc, SimpleNamespace(task_id="t", order=0), subtasks, keep=set(), base=0).start()

    asyncio.run(go())
    return sent


def test_a_gpu_graph_on_one_device_goes_to_its_slot_whole():
    # its inputs on one single-GPU worker: the whole graph, chained, in one message (one round trip)
    assert _chained_run(["w1"] * 8) == {"w1": [(i, True) for i in range(9)]}
    # inputs on two GPU workers, or outputs too big to keep on a device until the chain ends: level by level
    spread = _chained_run(["w1", "w2"] * 4)
    assert sorted(i for w in spread.values() for i, chained in w if not chained) == list(range(8))
    big = _chained_run(["w1"] * 8, shape=(20_000, 10_000))
    assert sorted(i for w in big.values() for i, chained in w if not chained) == list(range(8))
