"""Tensors on a CUDA device: results equal numpy's, in the embedded session and on a worker's GPU slot.

Run by ``make test-gpu`` on a machine with a GPU; elsewhere every test here skips with the reason.
"""

from __future__ import annotations

import json
import urllib.request

import numpy as np
import pytest

import mars
import mars.tensor as mt

pytestmark = [pytest.mark.gpu, pytest.mark.timeout(240)]

RS = np.random.RandomState(7)


def _cases():
    x = RS.rand(37, 23)
    y = RS.rand(23, 11)
    return [
        ("elementwise", lambda t: ((t * 2 + 1) ** 2 - mt.sin(t)).sum(axis=0), lambda a: ((a * 2 + 1) ** 2 - np.sin(a)).sum(axis=0), x),
        ("reductions", lambda t: mt.stack([t.mean(axis=1), t.std(axis=1), t.max(axis=1)]),
         lambda a: np.stack([a.mean(axis=1), a.std(axis=1), a.max(axis=1)]), x),
        ("argmax", lambda t: t.argmax(axis=0), lambda a: a.argmax(axis=0), x),
        ("matmul", lambda t: t @ mt.tensor(y, chunk_size=7).to_gpu(), lambda a: a @ y, x),
        ("inner", lambda t: mt.inner(t, t), lambda a: np.inner(a, a), x),
        ("indexing", lambda t: t[3:30:2, [1, 5, 7]], lambda a: a[3:30:2, [1, 5, 7]], x),
        ("mask", lambda t: t[t > 0.5], lambda a: a[a > 0.5], x),
        ("sort", lambda t: mt.sort(t.ravel()), lambda a: np.sort(a.ravel()), x),
        ("sort-axis", lambda t: mt.sort(t, axis=0), lambda a: np.sort(a, axis=0), x),
        ("cumsum", lambda t: mt.cumsum(t, axis=0), lambda a: np.cumsum(a, axis=0), x),
        ("transpose-reshape", lambda t: t.T.reshape(23 * 37), lambda a: a.T.reshape(23 * 37), x),
        ("concatenate", lambda t: mt.concatenate([t, t * 2]), lambda a: np.concatenate([a, a * 2]), x),
    ]


CASES = _cases()


@pytest.mark.parametrize("name,build,expect,data", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("chunk_size", [(37, 23), 10, (5, 23)])
def test_embedded_session_runs_gpu_tensors(name, build, expect, data, chunk_size):
    import cupy

    with mars.new_session():
        t = mt.tensor(data, chunk_size=chunk_size).to_gpu()
        result = build(t)
        assert result.op.gpu
        value = result.execute().fetch()
        assert isinstance(value, np.ndarray)
        np.testing.assert_allclose(value, expect(data), rtol=1e-10)
        on_device = result.fetch(gpu=True)
        assert isinstance(on_device, cupy.ndarray)


def test_gpu_random_and_creation_stay_on_the_device():
    import cupy

    with mars.new_session():
        r = mt.random.rand(1000, 10, chunk_size=300, gpu=True)
        v = r.execute().fetch()
        assert v.shape == (1000, 10) and 0 <= v.min() and v.max() < 1
        np.testing.assert_array_equal(r.fetch(), v)  # fixed by its seed: the same values when run again
        z = mt.random.normal(size=(10000,), chunk_size=3000, gpu=True)
        assert abs(float(z.mean().execute().fetch())) < 0.1
        assert isinstance(z.fetch(gpu=True), cupy.ndarray)


def test_cpu_and_gpu_tensors_mix_and_come_back():
    x = RS.rand(20, 6)
    with mars.new_session():
        cpu = mt.tensor(x, chunk_size=7)
        both = (cpu.to_gpu() * 3 + cpu).to_cpu() - 1
        np.testing.assert_allclose(both.execute().fetch(), x * 4 - 1)


def test_worker_gpu_slot_runs_gpu_subtasks_and_reports_its_device():
    from mars.deploy.local import new_cluster

    x = RS.rand(300, 40)
    with new_cluster(n_worker=1, n_cpu=2, cuda_devices="auto", n_io_process=1) as cluster:
        t = mt.tensor(x, chunk_size=70)
        g = ((t.to_gpu() * 2 + 1) ** 2).sum(axis=0)
        np.testing.assert_allclose(g.execute().fetch(), ((x * 2 + 1) ** 2).sum(axis=0))
        # GPU results are read by CPU subtasks (through host memory) and the other way round
        mixed = (g.to_cpu() + mt.tensor(x, chunk_size=70).sum(axis=0)).to_gpu() @ mt.ones(40).to_gpu()
        np.testing.assert_allclose(mixed.execute().fetch(), (((x * 2 + 1) ** 2).sum(axis=0) + x.sum(axis=0)).sum())
        s = mt.sort(mt.random.rand(100_000, chunk_size=30_000, gpu=True))
        v = s.execute().fetch()
        assert v.shape == (100_000,) and (np.diff(v) >= 0).all()
        gpus = _gpu_stats(cluster)
        assert gpus and gpus[0]["memory_total"] > 0 and gpus[0]["name"]


def test_gpu_results_stay_on_the_device_until_something_elsewhere_reads_them():
    from mars.deploy.local import new_cluster

    x = RS.rand(1500, 1000)  # 12 MB: stored in device memory, not as an inline value
    with new_cluster(n_worker=1, n_cpu=2, cuda_devices="auto", n_io_process=1) as cluster:
        g = mt.tensor(x, chunk_size=500).to_gpu() * 2
        g.execute()
        held = _worker_field(cluster, "storage_device_bytes", lambda v: v and v >= x.nbytes)
        assert held >= x.nbytes  # on the device only: no host copy was made
        np.testing.assert_allclose((g + 1).sum().execute().fetch(), (x * 2 + 1).sum())  # GPU reads GPU in place
        np.testing.assert_allclose((g.to_cpu() - 1).execute().fetch(), x * 2 - 1)  # CPU slots read host copies
        np.testing.assert_allclose(g.fetch(), x * 2)
        del g
        _worker_field(cluster, "storage_device_bytes", lambda v: not v)


def _worker_field(cluster, name: str, ok, timeout: float = 15.0):
    """The worker's ``name`` figure from the web API once ``ok(value)`` (heartbeats carry it: a second or so)."""
    import time

    deadline = time.time() + timeout
    value = None
    while time.time() < deadline:
        request = urllib.request.Request(f"{cluster.web_address}/api/cluster/workers",
                                         headers={"Authorization": f"Bearer {cluster.token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            value = json.loads(response.read())[0].get(name)
        if ok(value):
            return value
        time.sleep(0.3)
    raise AssertionError(f"{name} stayed {value!r}")


def _gpu_stats(cluster) -> list[dict]:
    import time

    deadline = time.time() + 10
    while time.time() < deadline:
        request = urllib.request.Request(f"{cluster.web_address}/api/cluster/workers",
                                         headers={"Authorization": f"Bearer {cluster.token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            body = json.loads(response.read())
        gpus = body[0].get("gpus") or []
        if gpus:
            return gpus
        time.sleep(0.5)
    return []


def test_a_missing_device_is_named_with_what_is_visible():
    from mars.services.cluster.gpus import GPUDeviceError, resolve_devices, visible_devices

    visible = visible_devices()
    assert visible
    with pytest.raises(GPUDeviceError, match="CUDA device 99, which does not exist here; visible devices: 0 "):
        resolve_devices([99])
