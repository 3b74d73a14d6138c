"""Tall-and-skinny linear algebra: mt.linalg.qr / svd beside dask.array (threads) and numpy (one process).

Run: ``.venv/bin/python benchmarks/tensor_linalg_bench.py [--quick] [--json PATH] [--no-peers] [--repeat N]``.

Workloads (issue 17): the reduced QR and the reduced SVD of a 2,000,000 x 100
float64 matrix in 10 row chunks (``--quick``: 200,000 x 100). mars runs in
the default local session, dask.array.linalg in its threads scheduler with
as many workers as mars has threads (the cores this process may use), and
numpy once with one BLAS thread (the "one process" baseline the targets
divide by the cores) and once with its default BLAS threads, for reference.
Each timing is the best of ``--repeat`` runs and includes getting every
factor back as numpy arrays. Ends with PASS/FAIL against the targets:
mars at most 0.8x dask, and within 1.3x numpy / cores.
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

CASES = ("qr", "svd")


def workload(quick: bool) -> tuple[np.ndarray, int]:
    rows = 200_000 if quick else 2_000_000
    return np.random.default_rng(0).standard_normal((rows, 100)), rows // 10


def mars_cases(a: np.ndarray, chunk: int) -> dict[str, Callable[[], Any]]:
    sess = mars.new_session()
    x = mt.tensor(a, chunk_size=(chunk, a.shape[1]))
    return {
        "qr": lambda: sess.run(*mt.linalg.qr(x), show_progress=False),
        "svd": lambda: sess.run(*mt.linalg.svd(x, full_matrices=False), show_progress=False),
    }


def numpy_cases(a: np.ndarray) -> dict[str, Callable[[], Any]]:
    return {
        "qr": lambda: np.linalg.qr(a),
        "svd": lambda: np.linalg.svd(a, full_matrices=False),
    }


def dask_cases(a: np.ndarray, chunk: int, threads: int) -> dict[str, Callable[[], Any]] | None:
    try:
        import dask
        import dask.array as da
    except ImportError:
        print("dask is not installed: the dask column is skipped")
        return None
    dask.config.set(scheduler="threads", num_workers=threads)
    x = da.from_array(a, chunks=(chunk, a.shape[1]))
    return {
        "qr": lambda: dask.compute(*da.linalg.qr(x)),
        "svd": lambda: dask.compute(*da.linalg.svd(x)),
    }


def check_results(a: np.ndarray, chunk: int) -> None:
    """The figures mean nothing if the answers are wrong: factors that rebuild ``a``, numpy's singular values."""
    m = mars_cases(a, chunk)
    q, r = m["qr"]()
    np.testing.assert_allclose(q @ r, a, atol=1e-8, err_msg="qr")
    np.testing.assert_allclose(q.T @ q, np.eye(a.shape[1]), atol=1e-8, err_msg="qr: Q orthonormal")
    u, s, vh = m["svd"]()
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-8, err_msg="svd")
    np.testing.assert_allclose((u * s) @ vh, a, atol=1e-8, err_msg="svd: product")


def measure(cases: dict[str, Callable[[], Any]] | None, repeat: int, blas: int | None = None) -> dict[str, float] | None:
    if cases is None:
        return None
    result = {}
    for name, fn in cases.items():
        if blas is None:
            result[name] = best_of(fn, repeat)
        else:
            with threadpool_limits(limits=blas, user_api="blas"):
                result[name] = best_of(fn, repeat)
    return result


def verdicts(fig: dict[str, Any], threads: int) -> list[tuple[str, bool]]:
    m, np1, d = fig["mars"], fig["numpy-1thread"], fig["dask"]
    out = []
    for name in CASES:
        if d is not None:
            out.append((f"{name}: at most 0.8x dask", m[name] <= 0.8 * d[name]))
        out.append((f"{name}: within 1.3x numpy/{threads} cores", m[name] <= 1.3 * np1[name] / threads))
    return out


def report(fig: dict[str, Any], threads: int, shape: tuple[int, int]) -> None:
    cols = ["mars", "numpy-1thread", "numpy-default", "dask"]
    print(f"matrix: {shape[0]:,} x {shape[1]} float64 in 10 row chunks   threads: {threads}   (seconds; best of runs)")
    # other work on the machine slows every column, not always alike: the figures are comparable only at a low load
    print("load average (1, 5, 15 min) at the end: " + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
    print(f"{'workload':<10}" + "".join(f"{c:>15}" for c in cols) + f"{'mars/dask':>11}{'mars/(np/cores)':>17}")
    for name in CASES:
        cells = []
        for c in cols:
            v = fig[c][name] if fig[c] is not None else None
            cells.append(f"{v:>15.3f}" if v is not None else f"{'-':>15}")
        ratio = fig["mars"][name] / fig["dask"][name] if fig["dask"] else float("nan")
        vs_np = fig["mars"][name] / (fig["numpy-1thread"][name] / threads)
        print(f"{name:<10}" + "".join(cells) + f"{ratio:>11.2f}{vs_np:>17.2f}")
    for text, ok in verdicts(fig, threads):
        print(f"{'PASS' if ok else 'FAIL'}  {text}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200,000 rows instead of 2,000,000 (a smoke run)")
    parser.add_argument("--no-peers", action="store_true", help="skip dask")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    threads = options.effective_threads()
    a, chunk = workload(args.quick)
    check_results(a, chunk)
    fig = {
        "mars": measure(mars_cases(a, chunk), args.repeat),
        "numpy-1thread": measure(numpy_cases(a), args.repeat, blas=1),
        "numpy-default": measure(numpy_cases(a), args.repeat),
        "dask": None if args.no_peers else measure(dask_cases(a, chunk, threads), args.repeat),
        "threads": threads,
        "quick": args.quick,
    }
    report(fig, threads, a.shape)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(fig, f, indent=1)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    sys.exit(main())
