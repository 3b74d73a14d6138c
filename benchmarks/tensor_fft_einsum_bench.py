"""FFT and einsum: mars.tensor beside numpy (one process) and dask.array (threads).

Run: ``.venv/bin/python benchmarks/tensor_fft_einsum_bench.py [--quick] [--no-peers] [--repeat N]``.

Workloads (issue 17): ``fft2`` of a 4096×4096 complex128 cut into 8 row
chunks (mars turns the row chunks into column chunks for the second axis;
dask needs both axes whole, so it is given the same row chunks and a rechunk
to one chunk, which is what its ``fft2`` asks for); ``einsum('ij,jk->ik')``
of 3000×3000 float64 in 1000×1000 chunks; ``einsum('bij,bjk->bik')`` of
64×256×256 float64 chunked by 8 along ``b``. Inputs are made once, outside
the timings; each timing is the best of ``--repeat`` runs and includes
building the expression and getting the numpy result back. numpy runs with
one BLAS thread and with its default threads; mars and dask use the cores
this process may use. Answers are checked against numpy first.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable

import numpy as np
from threadpoolctl import threadpool_limits
from timing import best_of

import mars
import mars.tensor as mt
from mars.core.options import options

Cases = dict[str, Callable[[], Any]]


def workloads(quick: bool) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    side, mat, batch = (1024, 1000, 16) if quick else (4096, 3000, 64)
    return {
        "signal": rng.random((side, side)) + 1j * rng.random((side, side)), "signal_chunks": (side // 8, side),
        "a": rng.random((mat, mat)), "b": rng.random((mat, mat)), "mat_chunk": mat // 3,
        "x": rng.random((batch, 256, 256)), "y": rng.random((batch, 256, 256)), "batch_chunk": (batch // 8, 256, 256),
    }


def mars_cases(w: dict[str, Any]) -> Cases:
    sess = mars.new_session()
    s = mt.tensor(w["signal"], chunk_size=w["signal_chunks"])
    a, b = (mt.tensor(w[k], chunk_size=w["mat_chunk"]) for k in "ab")
    x, y = (mt.tensor(w[k], chunk_size=w["batch_chunk"]) for k in "xy")
    return {
        "fft2": lambda: sess.run(mt.fft.fft2(s)),
        "einsum-ij,jk": lambda: sess.run(mt.einsum("ij,jk->ik", a, b)),
        "einsum-bij,bjk": lambda: sess.run(mt.einsum("bij,bjk->bik", x, y)),
    }


def numpy_cases(w: dict[str, Any]) -> Cases:
    return {
        "fft2": lambda: np.fft.fft2(w["signal"]),
        "einsum-ij,jk": lambda: np.einsum("ij,jk->ik", w["a"], w["b"], optimize=True),
        "einsum-bij,bjk": lambda: np.einsum("bij,bjk->bik", w["x"], w["y"], optimize=True),
    }


def dask_cases(w: dict[str, Any], threads: int) -> Cases | None:
    try:
        import dask
        import dask.array as da
    except ImportError:
        return None
    dask.config.set(scheduler="threads", num_workers=threads)
    s = da.from_array(w["signal"], chunks=w["signal_chunks"])
    a, b = (da.from_array(w[k], chunks=w["mat_chunk"]) for k in "ab")
    x, y = (da.from_array(w[k], chunks=w["batch_chunk"]) for k in "xy")
    return {
        "fft2": lambda: da.fft.fft2(s.rechunk({0: -1, 1: -1})).compute(),
        "einsum-ij,jk": lambda: da.einsum("ij,jk->ik", a, b).compute(),
        "einsum-bij,bjk": lambda: da.einsum("bij,bjk->bik", x, y).compute(),
    }


def check_results(w: dict[str, Any]) -> None:
    """The figures mean nothing if the answers are wrong."""
    m, n = mars_cases(w), numpy_cases(w)
    for name in m:
        got = m[name]()
        np.testing.assert_allclose(got.fetch() if hasattr(got, "fetch") else got, n[name](), rtol=1e-9, err_msg=name)


def measure(cases: Cases | None, repeat: int, blas: int | None = None) -> dict[str, float] | None:
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


def report(fig: dict[str, Any], threads: int) -> None:
    cols = ["mars", "numpy-1thread", "numpy-default", "dask"]
    print(f"threads: {threads}   (seconds; best of runs)")
    if fig["dask"] is None:
        print("dask.array is not installed: its column is skipped (pip install -e .[bench])")
    print(f"{'workload':<16}" + "".join(f"{c:>15}" for c in cols) + f"{'mars/dask':>11}{'mars/numpy-1':>14}")
    for name in fig["mars"]:
        cells = [f"{fig[c][name]:>15.4f}" if fig[c] is not None else f"{'-':>15}" for c in cols]
        ratio = f"{fig['mars'][name] / fig['dask'][name]:>11.2f}" if fig["dask"] else f"{'-':>11}"
        print(f"{name:<16}" + "".join(cells) + ratio + f"{fig['mars'][name] / fig['numpy-1thread'][name]:>14.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small inputs (a smoke run)")
    parser.add_argument("--no-peers", action="store_true", help="skip dask")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    threads = options.effective_threads()
    w = workloads(args.quick)
    check_results(w)
    fig = {
        "mars": measure(mars_cases(w), args.repeat),
        "numpy-1thread": measure(numpy_cases(w), args.repeat, blas=1),
        "numpy-default": measure(numpy_cases(w), args.repeat),
        "dask": None if args.no_peers else measure(dask_cases(w, threads), args.repeat),
    }
    report(fig, threads)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    sys.exit(main())
