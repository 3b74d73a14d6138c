"""Lazy tensors: mars.tensor beside numpy (one process) and dask.array (threads).

Run: ``.venv/bin/python benchmarks/tensor_bench.py [--quick] [--json PATH] [--no-peers] [--repeat N]``.

Workloads (issue 3): the latency of a tiny expression; ``((x*2+1)**2).mean()``
and ``sin(x).sum()`` over 2e7 float64 in 10 chunks; ``inner(a, a)`` for a
4000×4000 float64 in 1000×1000 chunks; a sum over 10,000 chunks of size 1.
Inputs are made once, outside the timings, for every engine; each timing is
the best of ``--repeat`` runs and includes building the expression and
getting the numpy result back. mars and dask use the same number of threads
(the cores this process may use); numpy runs once with one BLAS thread (the
"one process" baseline the targets divide by the cores) and once with its
default BLAS threads, for reference. Ends with PASS/FAIL against the targets.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Callable

import numpy as np
from threadpoolctl import threadpool_limits
from timing import best_of

import mars
import mars.tensor as mt
from mars.core.options import options

Row = dict[str, Any]


def workloads(quick: bool) -> dict[str, Any]:
    n = 2_000_000 if quick else 20_000_000
    side = 1000 if quick else 4000
    rng = np.random.default_rng(0)
    return {
        "x": rng.random(n), "x_chunk": n // 10,
        "a": rng.random((side, side)), "a_chunk": side // 4,
        "y": rng.random(1000 if quick else 10_000),
    }


def mars_cases(w: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    sess = mars.new_session()
    x = mt.tensor(w["x"], chunk_size=w["x_chunk"])
    a = mt.tensor(w["a"], chunk_size=w["a_chunk"])
    y = mt.tensor(w["y"], chunk_size=1)
    return {
        "tiny": lambda: (mt.ones((5, 5), chunk_size=3) * 4).execute(),
        "chain-mean": lambda: sess.run(((x * 2 + 1) ** 2).mean()),
        "sin-sum": lambda: sess.run(mt.sin(x).sum()),
        "inner": lambda: sess.run(mt.inner(a, a)),
        "sum-10k-chunks": lambda: sess.run(y.sum()),
    }


def numpy_cases(w: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    x, a, y = w["x"], w["a"], w["y"]
    return {
        "tiny": lambda: np.ones((5, 5)) * 4,
        "chain-mean": lambda: ((x * 2 + 1) ** 2).mean(),
        "sin-sum": lambda: np.sin(x).sum(),
        "inner": lambda: np.inner(a, a),
        "sum-10k-chunks": lambda: y.sum(),
    }


def dask_cases(w: dict[str, Any], threads: int) -> dict[str, Callable[[], Any]] | None:
    try:
        import dask
        import dask.array as da
    except ImportError:
        return None
    dask.config.set(scheduler="threads", num_workers=threads)
    x = da.from_array(w["x"], chunks=w["x_chunk"])
    a = da.from_array(w["a"], chunks=w["a_chunk"])
    y = da.from_array(w["y"], chunks=1)
    return {
        "tiny": lambda: (da.ones((5, 5), chunks=3) * 4).compute(),
        "chain-mean": lambda: ((x * 2 + 1) ** 2).mean().compute(),
        "sin-sum": lambda: da.sin(x).sum().compute(),
        "inner": lambda: da.tensordot(a, a, axes=(1, 1)).compute(),  # dask.array has no inner
        "sum-10k-chunks": lambda: y.sum().compute(),
    }


def check_results(w: dict[str, Any]) -> None:
    """The figures mean nothing if the answers are wrong."""
    m, n = mars_cases(w), numpy_cases(w)
    for name in m:
        got = m[name]()
        got = got.fetch() if hasattr(got, "fetch") else got
        np.testing.assert_allclose(got, n[name](), rtol=1e-6, err_msg=name)


def measure(cases: dict[str, Callable[[], Any]] | None, repeat: int, blas: int | None = None) -> dict[str, float] | None:
    if cases is None:
        return None
    result = {}
    for name, fn in cases.items():
        reps = repeat if name != "inner" else max(1, repeat // 2)
        if blas is None:
            result[name] = best_of(fn, reps)
        else:
            with threadpool_limits(limits=blas, user_api="blas"):
                result[name] = best_of(fn, reps)
    return result


def verdicts(fig: dict[str, Any], threads: int) -> list[tuple[str, bool]]:
    m, np1, d = fig["mars"], fig["numpy-1thread"], fig["dask"]
    out = [("tiny expression under 1 ms", m["tiny"] < 1e-3),
           ("10,000-chunk sum under 1 s", m["sum-10k-chunks"] < 1.0)]
    for name in ("chain-mean", "sin-sum", "inner"):
        if d is not None:
            out.append((f"{name}: at most 0.8x dask", m[name] <= 0.8 * d[name]))
        out.append((f"{name}: within 1.3x numpy/{threads} cores", m[name] <= 1.3 * np1[name] / threads))
    return out


def report(fig: dict[str, Any], threads: int) -> None:
    cols = ["mars", "numpy-1thread", "numpy-default", "dask"]
    print(f"threads: {threads}   (seconds; best of runs)")
    print(f"{'workload':<16}" + "".join(f"{c:>15}" for c in cols) + f"{'mars/dask':>11}{'mars/(np/cores)':>17}")
    for name in fig["mars"]:
        cells = []
        for c in cols:
            v = fig[c][name] if fig[c] is not None else None
            cells.append(f"{v:>15.6f}" if v is not None else f"{'-':>15}")
        ratio = fig["mars"][name] / fig["dask"][name] if fig["dask"] else float("nan")
        vs_np = fig["mars"][name] / (fig["numpy-1thread"][name] / threads)
        print(f"{name:<16}" + "".join(cells) + f"{ratio:>11.2f}{vs_np:>17.2f}")
    for text, ok in verdicts(fig, threads):
        print(f"{'PASS' if ok else 'FAIL'}  {text}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small inputs (a smoke run)")
    parser.add_argument("--no-peers", action="store_true", help="skip dask")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    threads = options.effective_threads()
    w = workloads(args.quick)
    check_results(w)
    fig = {
        "mars": measure(mars_cases(w), args.repeat),
        "numpy-1thread": measure(numpy_cases(w), args.repeat, blas=1),
        "numpy-default": measure(numpy_cases(w), args.repeat),
        "dask": None if args.no_peers else measure(dask_cases(w, threads), args.repeat),
        "threads": threads,
        "quick": args.quick,
    }
    report(fig, threads)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(fig, f, indent=1)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    sys.exit(main())
