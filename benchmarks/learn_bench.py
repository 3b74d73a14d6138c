"""mars.learn beside scikit-learn in one process (one BLAS thread) and dask-ml (when it is installed).

Run: ``.venv/bin/python benchmarks/learn_bench.py [--quick] [--repeat N] [--json PATH] [--daskml PYTHON]``.

Workloads (issue 20), on 10M x 20 float64 in 10 row chunks (``--quick``: 1M):
``StandardScaler`` fit, ``PCA(n_components=5)`` fit, ``KMeans(8)`` with a
fixed initialisation and 10 Lloyd iterations (``tol=0``), and
``LogisticRegression`` (L-BFGS, default C and tol) on a noisy linear rule.
The data is made once, outside the timings; each timing is the best of
``--repeat`` fits (after one untimed fit) and includes building the lazy
expressions and getting the fitted attributes back. mars and scikit-learn
take turns on each row, so that the machine's load falls on both alike;
the process CPU seconds of each best fit are printed too. scikit-learn runs with
``threadpoolctl`` limits of 1 (the single-process baseline the target divides
by the cores); mars uses the cores this process may use. Rows whose mars
estimator does not exist yet are skipped. The answers are checked against
scikit-learn before anything is timed. Ends with PASS/FAIL per target:
at most 1.3x (scikit-learn single process / cores), 0.8x dask-ml where
it runs, and a peak memory at most scikit-learn's.

dask-ml lives in a venv of its own (``../shared/PEERS.md``): ``--daskml``
(or ``DASKML_PYTHON``) names its python, which runs
``benchmarks/peers/daskml_learn.py`` on a ``LocalCluster(n_workers=2,
threads_per_worker=1)`` with one BLAS thread per worker. Peak memory is the
rise of the resident set of the process tree during the untimed first fit
(``learn_common.PeakRSS``); the load average is printed beside, as the
machine may be shared.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from learn_common import BLAS_ENV, PeakRSS, workloads
from threadpoolctl import threadpool_limits

import mars
import mars.tensor as mt
from mars.core.options import options

#: (row name, mars module, sklearn module, class name, constructor keyword arguments, needs y)
ROWS = [
    ("StandardScaler", "mars.learn.preprocessing", "sklearn.preprocessing", "StandardScaler", {}, False),
    ("PCA(5)", "mars.learn.decomposition", "sklearn.decomposition", "PCA", {"n_components": 5}, False),
    ("KMeans(8) x10", "mars.learn.cluster", "sklearn.cluster", "KMeans",
     {"n_clusters": 8, "n_init": 1, "max_iter": 10, "tol": 0.0}, False),
    ("LogisticRegression", "mars.learn.linear_model", "sklearn.linear_model", "LogisticRegression", {}, True),
]


def _estimator(module: str, name: str, kwargs: dict, w: dict) -> Any | None:
    try:
        cls = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None
    kwargs = dict(kwargs, init=w["init"]) if name == "KMeans" else kwargs
    return cls(**kwargs)


def cases(w: dict[str, Any], engine: str) -> dict[str, Callable[[], Any] | None]:
    if engine == "mars":
        mars.new_session()
        x, y = mt.tensor(w["x"], chunk_size=(w["chunk"], 20)).execute(), w["y"]
    else:
        x, y = w["x"], w["y"]
    out: dict[str, Callable[[], Any] | None] = {}
    for name, mars_mod, sk_mod, cls, kwargs, needs_y in ROWS:
        est = _estimator(mars_mod if engine == "mars" else sk_mod, cls, kwargs, w)
        out[name] = None if est is None else (lambda e=est, n=needs_y: e.fit(x, y) if n else e.fit(x))
    return out


def check_results(w: dict[str, Any]) -> None:
    """The figures mean nothing if the answers are wrong."""
    ours, ref = cases(w, "mars"), cases(w, "sklearn")
    for name, fn in ours.items():
        if fn is None:
            continue
        a, b = fn(), ref[name]()
        for attr in ("mean_", "scale_", "cluster_centers_", "explained_variance_"):
            if hasattr(b, attr):
                np.testing.assert_allclose(getattr(a, attr), getattr(b, attr), rtol=1e-6, err_msg=name)
        if hasattr(b, "coef_"):
            np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-4, atol=1e-6, err_msg=name)


def measure(engines: dict[str, tuple[dict[str, Callable[[], Any] | None], int | None]], repeat: int) -> dict:
    """Per engine ``{"seconds": {row: s}, "peak": {row: bytes}, "load": [before, after], "cpu": {row: s}}``.

    ``engines`` maps a name to (its fits by row, its BLAS thread limit or None). The engines take turns
    on each row (a first, untimed fit each, under the memory sampler, then ``repeat`` timed rounds),
    so that a change in the machine's load falls on all of them alike.
    """
    out = {e: {"seconds": {}, "peak": {}, "cpu": {}, "load": [os.getloadavg()[0]]} for e in engines}
    for name in next(iter(engines.values()))[0]:
        runs = {e: fns[name] for e, (fns, _) in engines.items() if fns[name] is not None}
        for e in engines:
            out[e]["seconds"][name] = out[e]["peak"][name] = out[e]["cpu"][name] = None
        for e, fn in runs.items():
            with _blas(engines[e][1]), PeakRSS() as mem:
                fn()
            out[e]["peak"][name] = mem.peak
        for _ in range(repeat):
            for e, fn in runs.items():
                with _blas(engines[e][1]):
                    wall, cpu = time.perf_counter(), time.process_time()
                    fn()
                    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                if out[e]["seconds"][name] is None or wall < out[e]["seconds"][name]:
                    out[e]["seconds"][name], out[e]["cpu"][name] = wall, cpu
    for e in engines:
        out[e]["load"].append(os.getloadavg()[0])
    return out


def _blas(limit: int | None) -> Any:
    return threadpool_limits(limits=limit) if limit is not None else contextlib.nullcontext()


def run_daskml(python: str | None, quick: bool, repeat: int) -> dict[str, Any]:
    """dask-ml's figures from its own venv's python (``peers/daskml_learn.py``), or a note why there are none."""
    if not python:
        return {"note": "not run: pass --daskml <venv>/bin/python (dask-ml lives in a venv of its own)"}
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "daskml_learn.py")
    argv = [python, script, *(["--quick"] if quick else []), str(repeat)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=3600, env={**os.environ, **BLAS_ENV})
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"note": f"did not run: {e}"}
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        return {"note": f"failed: {done.stderr.strip().splitlines()[-1:] or done.returncode}"}
    return json.loads(lines[-1])


#: rises below this are the allocator's and the sampler's noise, not the fit's
_MEMORY_NOISE = 8 * 2**20


def verdicts(fig: dict[str, Any], threads: int) -> list[tuple[str, bool]]:
    out = []
    sk, dask = fig["sklearn-1thread"], fig["dask-ml"].get("seconds", {})
    for name, m in fig["mars"]["seconds"].items():
        if m is None:
            continue
        out.append((f"{name}: within 1.3x sklearn/{threads} cores", m <= 1.3 * sk["seconds"][name] / threads))
        if dask.get(name) is not None:
            out.append((f"{name}: at most 0.8x dask-ml", m <= 0.8 * dask[name]))
        out.append((f"{name}: peak memory at most sklearn's",
                    fig["mars"]["peak"][name] <= max(sk["peak"][name], _MEMORY_NOISE)))
    return out


def _cell(v: float | None, fmt: str) -> str:
    return f"{v:>{fmt}}" if v is not None else f"{'-':>{fmt[:2]}}"


def report(fig: dict[str, Any], threads: int) -> None:
    cols = ["mars", "sklearn-1thread", "dask-ml"]
    print(f"rows: {fig['rows']:,} x 20 float64 in 10 chunks   threads: {threads}   "
          f"(seconds, best of runs; peak: MiB the first fit added to the process tree)")
    print(f"{'workload':<20}" + "".join(f"{c:>16}" for c in cols) + f"{'mars/(sk/cores)':>16}"
          + "".join(f"{'peak ' + c:>21}" for c in cols) + f"{'cpu s mars':>12}{'cpu s sk':>10}")
    for name in fig["sklearn-1thread"]["seconds"]:
        secs = [fig[c].get("seconds", {}).get(name) for c in cols]
        peaks = [fig[c].get("peak", {}).get(name) for c in cols]
        m, sk = secs[0], secs[1]
        ratio = f"{m / (sk / threads):>16.2f}" if m is not None else f"{'skipped':>16}"
        print(f"{name:<20}" + "".join(_cell(v, "16.3f") for v in secs) + ratio
              + "".join(_cell(None if p is None else p / 2**20, "21.0f") for p in peaks)
              + _cell(fig["mars"]["cpu"][name], "12.3f") + _cell(fig["sklearn-1thread"]["cpu"][name], "10.3f"))
    for c in cols:
        print(f"{c}: load average {fig[c].get('load')} (before, after)  {fig[c].get('note', '')}"
              f"{fig[c].get('versions', '')} {fig[c].get('errors', '')}")
    for text, ok in verdicts(fig, threads):
        print(f"{'PASS' if ok else 'FAIL'}  {text}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1M rows instead of 10M")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--daskml", default=os.environ.get("DASKML_PYTHON"),
                        help="python of a venv with dask-ml installed (default: $DASKML_PYTHON)")
    parser.add_argument("--peer-repeat", type=int, default=1,
                        help="timed runs of dask-ml after a first, untimed one (0: that one only, timed; it is slow)")
    args = parser.parse_args(argv)
    threads = options.effective_threads()
    options.show_progress = False
    w = workloads(args.quick)
    check_results(w)
    fig = measure({"mars": (cases(w, "mars"), None), "sklearn-1thread": (cases(w, "sklearn"), 1)}, args.repeat)
    fig.update(threads=threads, rows=len(w["x"]))
    del w  # the peer makes its own copy of the data
    fig["dask-ml"] = run_daskml(args.daskml, args.quick, args.peer_repeat)
    report(fig, threads)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(fig, f, indent=1)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    sys.exit(main())
