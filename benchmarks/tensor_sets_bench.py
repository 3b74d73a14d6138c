"""Sets, selection and histograms: mars.tensor beside numpy (one process) and dask.array (threads).

Run: ``.venv/bin/python benchmarks/tensor_sets_bench.py [--quick] [--repeat N] [--no-peers]``.

Workloads (issue 17): ``unique`` of 5e7 int64 with 1e6 distinct values;
``topk(x, 100)`` of 1e8 float64; ``histogram(x, bins=100, range=...)`` of
1e8 float64. ``--quick`` divides the sizes by 10. Inputs are made once,
outside the timings, cut in 10 chunks for mars and dask alike; each timing is
the best of ``--repeat`` runs and includes building the expression and getting
the numpy result back. mars and dask (threads scheduler) use the same number
of threads, the cores this process may use. Ends with PASS/FAIL against the
targets (mars at most 0.8x dask).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable

import numpy as np
from timing import best_of

import mars
import mars.tensor as mt
from mars.core.options import options

CASES = ("unique", "topk-100", "histogram-100")


def workloads(quick: bool) -> dict[str, Any]:
    scale = 10 if quick else 1
    rng = np.random.default_rng(0)
    n_int, n_float = 50_000_000 // scale, 100_000_000 // scale
    return {"ints": rng.integers(0, 1_000_000 // scale, n_int), "floats": rng.random(n_float),
            "int_chunk": n_int // 10, "float_chunk": n_float // 10}


def mars_cases(w: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    sess = mars.new_session()
    ints = mt.tensor(w["ints"], chunk_size=w["int_chunk"])
    floats = mt.tensor(w["floats"], chunk_size=w["float_chunk"])
    return {
        "unique": lambda: sess.run(mt.unique(ints)),
        "topk-100": lambda: sess.run(mt.topk(floats, 100)),
        "histogram-100": lambda: sess.run(mt.histogram(floats, bins=100, range=(0.0, 1.0))[0]),
    }


def numpy_cases(w: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    ints, floats = w["ints"], w["floats"]
    return {
        "unique": lambda: np.unique(ints),
        "topk-100": lambda: np.sort(np.partition(floats, len(floats) - 100)[-100:])[::-1],
        "histogram-100": lambda: np.histogram(floats, bins=100, range=(0.0, 1.0))[0],
    }


def dask_cases(w: dict[str, Any], threads: int) -> dict[str, Callable[[], Any]] | None:
    try:
        import dask
        import dask.array as da
    except ImportError:
        print("dask is not installed: its column is skipped")
        return None
    dask.config.set(scheduler="threads", num_workers=threads)
    ints = da.from_array(w["ints"], chunks=w["int_chunk"])
    floats = da.from_array(w["floats"], chunks=w["float_chunk"])
    return {
        "unique": lambda: da.unique(ints).compute(),
        "topk-100": lambda: da.topk(floats, 100).compute(),
        "histogram-100": lambda: da.histogram(floats, bins=100, range=(0.0, 1.0))[0].compute(),
    }


def check_results(m: dict[str, Callable[[], Any]], n: dict[str, Callable[[], Any]]) -> None:
    """The figures mean nothing if the answers are wrong."""
    for name in CASES:
        np.testing.assert_array_equal(m[name](), n[name](), err_msg=name)


def report(fig: dict[str, Any], threads: int) -> bool:
    cols = ["mars", "numpy", "dask"]
    print(f"threads: {threads}   (seconds; best of runs)")
    print(f"{'workload':<16}" + "".join(f"{c:>12}" for c in cols) + f"{'mars/dask':>11}")
    for name in CASES:
        cells = [f"{fig[c][name]:>12.4f}" if fig[c] is not None else f"{'-':>12}" for c in cols]
        ratio = fig["mars"][name] / fig["dask"][name] if fig["dask"] else float("nan")
        print(f"{name:<16}" + "".join(cells) + f"{ratio:>11.2f}")
    ok = True
    for name in CASES:
        if fig["dask"] is None:
            print(f"SKIP  {name}: at most 0.8x dask (dask is not installed)")
            continue
        passed = fig["mars"][name] <= 0.8 * fig["dask"][name]
        ok &= passed
        print(f"{'PASS' if passed else 'FAIL'}  {name}: at most 0.8x dask")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="inputs a tenth of the size (a smoke run)")
    parser.add_argument("--no-peers", action="store_true", help="skip dask")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    threads = options.effective_threads()
    w = workloads(args.quick)
    m, n = mars_cases(w), numpy_cases(w)
    check_results(m, n)
    d = None if args.no_peers else dask_cases(w, threads)
    fig = {
        "mars": {name: best_of(m[name], args.repeat) for name in CASES},
        "numpy": {name: best_of(n[name], args.repeat) for name in CASES},
        "dask": None if d is None else {name: best_of(d[name], args.repeat) for name in CASES},
    }
    report(fig, threads)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    sys.exit(main())
