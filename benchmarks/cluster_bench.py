"""The distributed runtime beside dask.distributed and the original Mars, in one run.

Run: ``.venv/bin/python benchmarks/cluster_bench.py [--quick] [--repeat N] [--json PATH]
[--no-dask] [--mars010 PYTHON]``.

Every engine gets the same cores: two workers with one slot (thread) each.
mars: ``new_cluster(n_worker=2, n_cpu=1)``, used through its web service as
a user's ``new_session("http://...")`` would (and once more over the actor
protocol, for the tiny job). dask: ``LocalCluster(n_workers=2,
threads_per_worker=1)``. The original Mars (pymars 0.10, which needs
numpy<1.24 and pandas<2, so it lives in a venv of its own: see
``../shared/PEERS.md``) runs ``benchmarks/peers/mars010_cluster.py`` when
``--mars010`` names that venv's python; otherwise its column says why not.

Workloads (issue 4): cluster start (imports excluded); the latency of
``(ones((5,5), chunk_size=3)*4).sum()``; ``inner(a, a)`` for a 4000×4000
float64 in 1000-chunks (the input already on the cluster, the 128 MB result
fetched; ours adds a different scalar each run, so that no run reuses the
result of the one before while its release is still on its way); a sum over 10,000 chunks of size 1. Each is the best of
``--repeat`` runs (the 10,000-chunk sum: of 1 for the peers, which take
tens of seconds). Ends with PASS/FAIL against the targets.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import time
from typing import Any

import numpy as np
from timing import best_of, once

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")  # the peers' workers inherit it; ours set it in their slots

HERE = os.path.dirname(os.path.abspath(__file__))


def inputs(quick: bool) -> dict[str, Any]:
    side = 1000 if quick else 4000
    return {"a": np.random.default_rng(0).random((side, side)), "a_chunk": side // 4,
            "y": np.random.default_rng(1).random(1000 if quick else 10_000)}


def run_mars(w: dict[str, Any], repeat: int) -> dict[str, float]:
    import mars
    import mars.dataframe  # noqa: F401 - imports are not the start's: nodes import it as they start
    import mars.tensor as mt
    from mars.deploy.local import new_cluster

    start = time.perf_counter()
    cluster = new_cluster(n_worker=2, n_cpu=1, web=True)
    out = {"start": time.perf_counter() - start}
    try:
        sess = cluster.session
        out["tiny"] = best_of(lambda: (mt.ones((5, 5), chunk_size=3) * 4).sum().execute().fetch(), repeat * 10)
        direct = mars.new_session(cluster.endpoint, default=False)
        out["tiny (actor protocol)"] = best_of(lambda: direct.run((mt.ones((5, 5), chunk_size=3) * 4).sum()),
                                               repeat * 10)
        direct.close()
        a = mt.tensor(w["a"], chunk_size=w["a_chunk"]).execute()
        # the result of the call before may still be held (its release is on its way) and would be reused:
        # each call adds a different scalar, so that each computes the product
        shift = itertools.count()
        out["inner"] = best_of(lambda: (mt.inner(a, a) + next(shift)).execute().fetch(), repeat)
        y = w["y"]
        out["sum10k"] = best_of(lambda: mt.tensor(y, chunk_size=1).sum().execute().fetch(), repeat)
        assert np.isclose(sess.run(mt.tensor(y, chunk_size=1).sum()), y.sum())
    finally:
        cluster.stop()
    return out


def run_dask(w: dict[str, Any], repeat: int) -> dict[str, float]:
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    start = time.perf_counter()
    # with its dashboard, as users get it (ours starts its web service too)
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    client = Client(cluster)
    out = {"start": time.perf_counter() - start}
    try:
        out["tiny"] = best_of(lambda: (da.ones((5, 5), chunks=3) * 4).sum().compute(), repeat * 10)
        a = da.from_array(w["a"], chunks=w["a_chunk"]).persist()
        out["inner"] = best_of(lambda: da.tensordot(a, a, axes=(1, 1)).compute(), repeat)
        y = w["y"]
        out["sum10k"] = once(lambda: da.from_array(y, chunks=1).sum().compute())
    finally:
        client.close()
        cluster.close()
    return out


def run_mars010(python: str | None, repeat: int) -> dict[str, Any]:
    if not python:
        return {"note": "not run: pass --mars010 <venv>/bin/python (pymars 0.10 needs numpy<1.24, pandas<2)"}
    script = os.path.join(HERE, "peers", "mars010_cluster.py")
    try:
        done = subprocess.run([python, script, str(repeat)], capture_output=True, text=True, timeout=1200)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"note": f"did not run: {e}"}
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        return {"note": f"failed: {done.stderr.strip().splitlines()[-1:] or done.returncode}"}
    return json.loads(lines[-1])


#: (workload, check(mars, dask) -> bool, the target in words)
TARGETS = [
    ("start", lambda m, d: m < 0.5 * d, "under 0.5x dask's"),
    ("tiny", lambda m, d: m < 0.005, "under 5 ms"),
    ("inner", lambda m, d: m <= 0.8 * d, "at most 0.8x dask's"),
    ("sum10k", lambda m, d: m < 2.0, "under 2 s"),
]


def report(results: dict[str, dict[str, Any]]) -> list[str]:
    engines = list(results)
    names = ["start", "tiny", "tiny (actor protocol)", "inner", "sum10k"]
    lines = [f"{'workload':24}" + "".join(f"{e:>14}" for e in engines)]
    for name in names:
        cells = []
        for e in engines:
            v = results[e].get(name)
            cells.append(f"{v:14.4f}" if isinstance(v, (int, float)) else f"{'-':>14}")
        lines.append(f"{name:24}" + "".join(cells))
    for e in engines:
        if "note" in results[e]:
            lines.append(f"{e}: {results[e]['note']}")
    mars, dask = results.get("mars", {}), results.get("dask", {})
    for name, check, words in TARGETS:
        if name in mars and (name in dask or "dask" not in words):
            ok = check(mars[name], dask.get(name, float("nan")))
            ratio = f", {mars[name] / dask[name]:.2f}x dask" if name in dask else ""
            lines.append(f"{'PASS' if ok else 'FAIL'} {name}: {mars[name]:.4f} s{ratio} (target {words})")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small inputs (a smoke run)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--no-dask", action="store_true")
    parser.add_argument("--mars010", help="python of a venv with pymars 0.10 installed")
    args = parser.parse_args(argv)
    w = inputs(args.quick)
    results: dict[str, dict[str, Any]] = {"mars": run_mars(w, args.repeat)}
    if not args.no_dask:
        results["dask"] = run_dask(w, args.repeat)
    if not args.quick:
        results["mars 0.10"] = run_mars010(args.mars010 or os.environ.get("MARS010_PYTHON"), args.repeat)
    print("\n".join(report(results)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
