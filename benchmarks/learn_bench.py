"""mars.learn beside scikit-learn in one process (one BLAS thread) and dask-ml (when it is installed).

Run: ``.venv/bin/python benchmarks/learn_bench.py [--quick] [--repeat N] [--json PATH]``.

Workloads (issue 20), on 10M x 20 float64 in 10 row chunks (``--quick``: 1M):
``StandardScaler`` fit, ``PCA(n_components=5)`` fit, ``KMeans(8)`` with a
fixed initialisation and 10 Lloyd iterations (``tol=0``), and
``LogisticRegression`` (L-BFGS, default C and tol) on a noisy linear rule.
The data is made once, outside the timings; each timing is the best of
``--repeat`` fits (after one untimed fit) and includes building the lazy
expressions and getting the fitted attributes back. scikit-learn runs with
``threadpoolctl`` limits of 1 (the single-process baseline the target divides
by the cores); mars uses the cores this process may use. Rows whose mars
estimator does not exist yet are skipped. The answers are checked against
scikit-learn before anything is timed. Ends with PASS/FAIL per target:
at most 1.3x (scikit-learn single process / cores), and 0.8x dask-ml where
it is installed.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits
from timing import best_of

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


def workloads(quick: bool) -> dict[str, Any]:
    n, d = (1_000_000 if quick else 10_000_000), 20
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, d))
    x[:, :5] += rng.integers(0, 4, size=(n, 1)) * 3.0  # some cluster structure
    y = (x @ rng.standard_normal(d) + rng.standard_normal(n) > 0).astype(np.int64)
    return {"x": x, "y": y, "chunk": n // 10, "init": x[rng.choice(n, 8, replace=False)]}


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
    elif engine == "dask-ml":
        import dask.array as da

        x, y = da.from_array(w["x"], chunks=(w["chunk"], 20)), da.from_array(w["y"], chunks=w["chunk"])
    else:
        x, y = w["x"], w["y"]
    out: dict[str, Callable[[], Any] | None] = {}
    for name, mars_mod, sk_mod, cls, kwargs, needs_y in ROWS:
        module = {"mars": mars_mod, "sklearn": sk_mod}.get(engine) or _dask_module(sk_mod)
        est = _estimator(module, cls, kwargs, w)
        out[name] = None if est is None else (lambda e=est, n=needs_y: e.fit(x, y) if n else e.fit(x))
    return out


def _dask_module(sk_module: str) -> str:
    return sk_module.replace("sklearn", "dask_ml")


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


def measure(fns: dict[str, Callable[[], Any] | None] | None, repeat: int, blas: int | None = None) -> dict | None:
    if fns is None:
        return None
    result: dict[str, float | None] = {}
    for name, fn in fns.items():
        if fn is None:
            result[name] = None
        elif blas is None:
            result[name] = best_of(fn, repeat)
        else:
            with threadpool_limits(limits=blas):
                result[name] = best_of(fn, repeat)
    return result


def dask_ml_cases(w: dict[str, Any]) -> dict | None:
    try:
        import dask_ml  # noqa: F401
    except ImportError:
        return None
    return cases(w, "dask-ml")


def verdicts(fig: dict[str, Any], threads: int) -> list[tuple[str, bool]]:
    out = []
    for name, m in fig["mars"].items():
        if m is None:
            continue
        out.append((f"{name}: within 1.3x sklearn/{threads} cores", m <= 1.3 * fig["sklearn-1thread"][name] / threads))
        d = fig["dask-ml"][name] if fig["dask-ml"] else None
        if d is not None:
            out.append((f"{name}: at most 0.8x dask-ml", m <= 0.8 * d))
    return out


def report(fig: dict[str, Any], threads: int) -> None:
    cols = ["mars", "sklearn-1thread", "dask-ml"]
    print(f"rows: {fig['rows']:,} x 20 float64 in 10 chunks   threads: {threads}   (seconds; best of runs)")
    print(f"{'workload':<20}" + "".join(f"{c:>17}" for c in cols) + f"{'mars/(sk/cores)':>17}")
    for name in fig["sklearn-1thread"]:
        cells = []
        for c in cols:
            v = fig[c][name] if fig[c] is not None else None
            cells.append(f"{v:>17.3f}" if v is not None else f"{'-':>17}")
        m = fig["mars"][name]
        ratio = f"{m / (fig['sklearn-1thread'][name] / threads):>17.2f}" if m is not None else f"{'skipped':>17}"
        print(f"{name:<20}" + "".join(cells) + ratio)
    if fig["dask-ml"] is None:
        print("dask-ml: not installed, its column is skipped")
    for text, ok in verdicts(fig, threads):
        print(f"{'PASS' if ok else 'FAIL'}  {text}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1M rows instead of 10M")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    threads = options.effective_threads()
    options.show_progress = False
    w = workloads(args.quick)
    check_results(w)
    fig = {
        "mars": measure(cases(w, "mars"), args.repeat),
        "sklearn-1thread": measure(cases(w, "sklearn"), args.repeat, blas=1),
        "dask-ml": measure(dask_ml_cases(w), args.repeat),
        "threads": threads,
        "rows": len(w["x"]),
    }
    report(fig, threads)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(fig, f, indent=1)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    sys.exit(main())
