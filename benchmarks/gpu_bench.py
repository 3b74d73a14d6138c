"""Tensors on a GPU: our GPU slot beside CuPy called directly on the same device, and beside our CPU slots.

Run: ``python benchmarks/gpu_bench.py [--quick] [--repeat N] [--json PATH]`` on a machine with a CUDA
device (``make test-gpu`` runs it). Workloads (issue 22): ``inner(a, a)`` of a 16000² float32 in 4
chunks; ``((x*2+1)**2).mean()`` over 1e9 float32 in 8 chunks; ``sort`` of 2e8 float32 in 4 chunks.

Engines, one run, one device:
- ``cupy``: CuPy called directly (the limit: our GPU slot within 1.3x of it);
- ``gpu-slot``: a local cluster, one worker with ``cuda_devices=[0]`` (one GPU slot);
- ``gpu-embedded``: ``mars.new_session()`` in this process on the same device;
- ``cpu-slots``: the same cluster's CPU slots on the same data in host memory.
Inputs are made once, outside the timings, by each engine on its own device. A timing
runs the expression until its result is stored (the 1 GiB product is not fetched); the
mean's timing includes fetching the scalar. CuPy's timings end with a device sync.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import traceback
from typing import Any, Callable

import numpy as np
from timing import best_of, once

import mars
import mars.tensor as mt

Row = dict[str, Any]


def sizes(quick: bool) -> dict[str, int]:
    if quick:
        return {"side": 4000, "n": 50_000_000, "n_sort": 10_000_000}
    return {"side": 16000, "n": 1_000_000_000, "n_sort": 200_000_000}


def cupy_cases(s: dict[str, int]) -> dict[str, Callable[[], Any]]:
    import cupy as cp

    rng = cp.random.default_rng(0)
    a = rng.random((s["side"], s["side"]), dtype=cp.float32)
    x = rng.random(s["n"], dtype=cp.float32)
    y = rng.random(s["n_sort"], dtype=cp.float32)
    sync = cp.cuda.Device().synchronize

    def inner() -> None:
        cp.inner(a, a)
        sync()

    def sort() -> None:
        cp.sort(y)
        sync()

    return {"inner": inner, "chain-mean": lambda: float(((x * 2 + 1) ** 2).mean()), "sort": sort}


def mars_cases(s: dict[str, int], session: Any, gpu: bool, copies: int) -> dict[str, Callable[[], Any]]:
    """The workloads on ``session``, each call on the next of ``copies`` inputs made alike (a repeated
    expression would find its result still held by the cluster: the timing would measure nothing).
    On the GPU each timing ends with a device sync (the embedded session returns once kernels are launched)."""
    side, n, n_sort = s["side"], s["n"], s["n_sort"]
    done = _device_sync if gpu else (lambda value: value)
    a = [mt.random.rand(side, side, dtype=np.float32, chunk_size=side // 2, gpu=gpu) for _ in range(copies)]
    x = [mt.random.rand(n, dtype=np.float32, chunk_size=n // 8, gpu=gpu) for _ in range(copies)]
    y = [mt.random.rand(n_sort, dtype=np.float32, chunk_size=n_sort // 4, gpu=gpu) for _ in range(copies)]
    session.execute(*a, *x, *y)
    na, nx, ny = itertools.cycle(a), itertools.cycle(x), itertools.cycle(y)

    def inner() -> Any:
        t = next(na)
        return done(session.execute(mt.inner(t, t)))

    return {
        "inner": inner,
        "chain-mean": lambda: session.fetch(session.execute(((next(nx) * 2 + 1) ** 2).mean())),
        "sort": lambda: done(session.execute(mt.sort(next(ny)))),
    }


def _device_sync(value: Any) -> Any:
    import cupy as cp

    cp.cuda.Device().synchronize()
    return value


def measure(cases: dict[str, Callable[[], Any]], repeat: int, slow: set[str] = frozenset()) -> dict[str, float]:
    return {name: once(fn) if name in slow else best_of(fn, repeat) for name, fn in cases.items()}


def check(session: Any, gpu: bool) -> None:
    """The figures mean nothing if the answers are wrong: a small case of each against numpy."""
    rng = np.random.default_rng(1)
    a = rng.random((300, 200), dtype=np.float32)
    t = mt.tensor(a, chunk_size=150)
    t = t.to_gpu() if gpu else t
    np.testing.assert_allclose(session.fetch(session.execute(mt.inner(t, t))), np.inner(a, a), rtol=1e-4)
    np.testing.assert_allclose(session.fetch(session.execute(((t * 2 + 1) ** 2).mean())),
                               ((a * 2 + 1) ** 2).mean(), rtol=1e-5)
    np.testing.assert_array_equal(session.fetch(session.execute(mt.sort(t.ravel()))), np.sort(a.ravel()))


def run(s: dict[str, int], repeat: int, n_cpu: int) -> dict[str, dict[str, float]]:
    """Each engine in turn; one that fails is reported with its traceback and left out of the table."""
    from mars.deploy.local import new_cluster

    fig: dict[str, dict[str, float]] = {}

    def engine(name: str, measure_it: Callable[[], dict[str, float]]) -> None:
        print(f"{name} ...", flush=True)
        try:
            fig[name] = measure_it()
        except Exception:  # noqa: BLE001 - the other engines' figures still count
            traceback.print_exc()
        _free_device()

    engine("cupy", lambda: measure(cupy_cases(s), repeat))

    def embedded() -> dict[str, float]:
        with mars.new_session() as session:
            check(session, True)
            return measure(mars_cases(s, session, True, repeat + 1), repeat)

    engine("gpu-embedded", embedded)
    with new_cluster(n_worker=1, n_cpu=n_cpu, cuda_devices=[0], n_io_process=1) as cluster:
        session = cluster.session

        def slot() -> dict[str, float]:
            check(session, True)
            return measure(mars_cases(s, session, True, repeat + 1), repeat)

        def cpu() -> dict[str, float]:
            check(session, False)
            return measure(mars_cases(s, session, False, 2), 1, slow={"inner", "sort"})

        engine("gpu-slot", slot)
        engine("cpu-slots", cpu)
    return fig


def _free_device() -> None:
    import cupy as cp

    cp.get_default_memory_pool().free_all_blocks()


def report(fig: dict[str, dict[str, float]]) -> list[tuple[str, bool]]:
    cols = ["cupy", "gpu-slot", "gpu-embedded", "cpu-slots"]
    print("seconds (best of runs; cpu-slots inner and sort: one run)")
    print(f"{'workload':<12}" + "".join(f"{c:>14}" for c in cols) + f"{'slot/cupy':>11}{'cpu/slot':>10}")
    verdicts = []
    names = next(iter(fig.values()), {})
    for name in names:
        cells = "".join(f"{fig[c][name]:>14.4f}" if c in fig else f"{'-':>14}" for c in cols)
        slot, cupy_t, cpu_t = (fig.get(c, {}).get(name) for c in ("gpu-slot", "cupy", "cpu-slots"))
        ratio = slot / cupy_t if slot and cupy_t else float("nan")
        print(f"{name:<12}{cells}{ratio:>11.2f}{(cpu_t / slot) if cpu_t and slot else float('nan'):>10.1f}")
        verdicts.append((f"{name}: GPU slot within 1.3x CuPy directly", ratio <= 1.3))
    for text, ok in verdicts:
        print(f"{'PASS' if ok else 'FAIL'}  {text}")
    return verdicts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--n-cpu", type=int, default=max(1, (os.cpu_count() or 2) - 2), help="CPU slots")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args(argv)
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - no CuPy or no device: nothing to measure
        print(f"gpu_bench: needs CuPy and a CUDA device ({type(e).__name__}: {e})", file=sys.stderr)
        return 2
    s = sizes(args.quick)
    print(f"sizes: {s}", flush=True)
    fig = run(s, args.repeat, args.n_cpu)
    verdicts = report(fig)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"sizes": s, "figures": fig, "verdicts": verdicts}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
