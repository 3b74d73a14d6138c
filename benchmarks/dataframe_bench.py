"""Lazy DataFrames beside pandas and dask.dataframe, in one run.

Run: ``.venv/bin/python benchmarks/dataframe_bench.py [--quick] [--repeat N]
[--csv-gb G] [--no-dask] [--no-cluster] [--only WORKLOAD] [--with-load] [--target X]
[--json PATH]``.

Workloads (issue 5):

- groupby-agg: 10M rows, 1,000 int keys, two float columns (``sum`` of one, ``mean`` of the other);
- merge: 2M × 200k rows on an int key (inner; every left key has a match);
- sort_values: 5M rows by a float column (two more columns carried along);
- read_csv of a ~1 GB file (``--csv-gb``) and a groupby-agg on it.

Engines: pandas in this process (one core); mars' embedded session
(``mars.new_session()``, threads = cores); a mars cluster of 2 workers × 1
slot (``new_cluster(2, n_cpu=1)``); dask.dataframe with its threaded
scheduler and the same number of threads. In-memory inputs are loaded into
each engine before timing (mars: executed; dask: persisted) and every
result is fetched as a pandas object, checked against pandas'. Each time is
the best of ``--repeat`` runs, each after the previous run's results were
released (on a cluster a dropped result is released a moment later: without
the pause a repeated expression would find its chunks still computed); the
CSV workload runs once per engine. Peak memory
is the highest RSS of the whole process tree (client and, for the cluster,
its workers) during the timed runs, above what it was before them.

With ``--with-load`` each timed run loads the in-memory inputs into the
engine first (mars: ``md.DataFrame(pdf)`` executed, which on a cluster is
the client's upload; dask: persisted), as a user holding pandas frames
would.

Ends with PASS/FAIL per workload against the target: at most ``--target``
(2) × pandas' time, and peak memory no higher than dask's (within 16 MB of
sampling noise).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import tempfile
import threading
import time
from typing import Any, Callable

import numpy as np
import pandas as pd
import psutil
from timing import once

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

N_PARTS = 8
#: RSS sampling every 10 ms sees allocator noise of a few MB: differences below this are equal
MEMORY_NOISE = 16e6


class PeakRSS:
    """Samples the RSS of this process and its children every 10 ms; ``peak`` is above the start."""

    def __init__(self) -> None:
        self._proc = psutil.Process()
        self._stop = threading.Event()
        self.base = self._rss()
        self.peak = 0

    def _rss(self) -> int:
        total = 0
        for p in [self._proc, *self._proc.children(recursive=True)]:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                continue
        return total

    def _sample(self) -> None:
        while not self._stop.wait(0.01):
            self.peak = max(self.peak, self._rss() - self.base)

    def __enter__(self) -> PeakRSS:
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._rss() - self.base)


def make_inputs(quick: bool) -> dict[str, Any]:
    scale = 10 if quick else 1
    rng = np.random.default_rng(0)
    n = 10_000_000 // scale
    groupby = pd.DataFrame({"k": rng.integers(0, 1000, n), "x": rng.random(n), "y": rng.random(n)})
    n_left, n_right = 2_000_000 // scale, 200_000 // scale
    left = pd.DataFrame({"k": rng.integers(0, n_right, n_left), "a": rng.random(n_left)})
    right = pd.DataFrame({"k": rng.permutation(n_right), "b": rng.random(n_right)})
    n_sort = 5_000_000 // scale
    sort = pd.DataFrame({"x": rng.random(n_sort), "i": np.arange(n_sort), "y": rng.random(n_sort)})
    return {"groupby": groupby, "left": left, "right": right, "sort": sort}


def csv_file(gb: float) -> str:
    """A cached CSV of about ``gb`` GB: an int key (1,000 values), two floats and a short string."""
    path = os.path.join(tempfile.gettempdir(), "mars-bench", f"frame-{gb:g}gb.csv")
    if os.path.exists(path):
        return path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    rng = np.random.default_rng(1)
    rows = 1_000_000
    with open(path + ".part", "w") as f:
        first = True
        while f.tell() < gb * 1e9:
            block = pd.DataFrame({"k": rng.integers(0, 1000, rows), "x": rng.random(rows).round(6),
                                  "y": rng.random(rows).round(6),
                                  "s": rng.choice(np.array(["alpha", "beta", "gamma", "delta"]), rows)})
            block.to_csv(f, index=False, header=first)
            first = False
    os.replace(path + ".part", path)
    return path


# ----------------------------------------------------------------- the workloads, per engine
def agg_spec() -> dict:
    return {"x": "sum", "y": "mean"}


def pandas_work(w: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    return {
        "groupby-agg": lambda: w["groupby"].groupby("k").agg(agg_spec()),
        "merge": lambda: w["left"].merge(w["right"], on="k"),
        "sort_values": lambda: w["sort"].sort_values("x"),
    }


def _inputs(w: dict[str, Any], load: Callable[[pd.DataFrame], Any]) -> Callable[[str], Any]:
    """The engine's frames by name: loaded now, or (``WITH_LOAD``) loaded again inside each timed call."""
    if WITH_LOAD:
        return lambda name: load(w[name])
    loaded = {name: load(w[name]) for name in ("groupby", "left", "right", "sort")}
    return loaded.__getitem__


def mars_work(w: dict[str, Any], session: Any) -> dict[str, Callable[[], Any]]:
    import mars.dataframe as md

    def load(pdf: pd.DataFrame) -> Any:
        return md.DataFrame(pdf, chunk_size=-(-len(pdf) // N_PARTS)).execute(session=session)

    f = _inputs(w, load)
    return {
        "groupby-agg": lambda: f("groupby").groupby("k").agg(agg_spec()).execute(session=session).fetch(
            session=session),
        "merge": lambda: f("left").merge(f("right"), on="k").execute(session=session).fetch(session=session),
        "sort_values": lambda: f("sort").sort_values("x").execute(session=session).fetch(session=session),
    }


def dask_work(w: dict[str, Any], threads: int) -> dict[str, Callable[[], Any]]:
    import dask.dataframe as dd

    def load(pdf: pd.DataFrame) -> Any:
        return dd.from_pandas(pdf, npartitions=N_PARTS).persist(scheduler="threads", num_workers=threads)

    f = _inputs(w, load)
    kw = {"scheduler": "threads", "num_workers": threads}
    return {
        "groupby-agg": lambda: f("groupby").groupby("k").agg(agg_spec()).compute(**kw),
        "merge": lambda: f("left").merge(f("right"), on="k").compute(**kw),
        "sort_values": lambda: f("sort").sort_values("x").compute(**kw),
    }


def csv_work(path: str, engine: str, session: Any = None, threads: int = 2) -> Callable[[], Any]:
    if engine == "pandas":
        return lambda: pd.read_csv(path).groupby("k").agg(agg_spec())
    if engine == "dask":
        import dask.dataframe as dd

        return lambda: dd.read_csv(path, blocksize=64_000_000).groupby("k").agg(agg_spec()).compute(
            scheduler="threads", num_workers=threads)
    import mars.dataframe as md

    return lambda: md.read_csv(path).groupby("k").agg(agg_spec()).execute(session=session).fetch(session=session)


# ----------------------------------------------------------------- running and checking
def check(name: str, got: Any, expected: pd.DataFrame) -> None:
    """Results must equal pandas' (row order is pandas' for every engine but dask's merge/groupby)."""
    if name == "merge":
        got = got.sort_values(["k", "a"]).reset_index(drop=True)
        expected = expected.sort_values(["k", "a"]).reset_index(drop=True)
    if name in ("groupby-agg", "read_csv+groupby"):
        got = got.sort_index()
    pd.testing.assert_frame_equal(got, expected, check_exact=False, rtol=1e-9)


def settle() -> None:
    """Let the previous run's results go before the next run.

    A result dropped by the client is released on a cluster a moment later
    (batched, from a thread): without this pause the next run of the same
    expression would find its chunks still there and compute nothing.
    """
    gc.collect()
    time.sleep(0.3)


def best_settled(fn: Callable[[], Any], repeat: int) -> float:
    """The fastest of ``repeat`` timed calls, each on a settled engine (see :func:`settle`)."""
    times = []
    for _ in range(repeat):
        settle()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


ONLY: list[str] = []  # --only: the workloads to run (all when empty)
WITH_LOAD = False  # --with-load: each timed run loads the in-memory inputs into the engine first
TARGET = 2.0  # --target: the most time a mars engine may take, in multiples of pandas' time


def measure(work: dict[str, Callable[[], Any]], expected: dict[str, Any], repeat: int) -> dict[str, tuple]:
    out = {}
    for name, fn in work.items():
        if ONLY and name not in ONLY:
            continue
        check(name, fn(), expected[name])
        settle()
        with PeakRSS() as mem:
            seconds = once(fn) if name == "read_csv+groupby" else best_settled(fn, repeat)
        out[name] = (seconds, mem.peak)
    return out


def run_engines(args: argparse.Namespace) -> tuple[dict, dict]:
    w = make_inputs(args.quick)
    threads = len(os.sched_getaffinity(0))
    results: dict[str, dict[str, tuple]] = {}
    expected = {name: fn() for name, fn in pandas_work(w).items()}
    path = csv_file(args.csv_gb) if args.csv_gb else None
    if path:
        expected["read_csv+groupby"] = csv_work(path, "pandas")()
    pandas_fns = pandas_work(w)
    if path:
        pandas_fns["read_csv+groupby"] = csv_work(path, "pandas")
    results["pandas"] = measure(pandas_fns, expected, args.repeat)
    results["mars"] = run_mars(w, path, expected, args.repeat, cluster=False)
    if not args.no_cluster:
        results["mars cluster"] = run_mars(w, path, expected, args.repeat, cluster=True)
    if not args.no_dask:
        fns = dask_work(w, threads)
        if path:
            fns["read_csv+groupby"] = csv_work(path, "dask", threads=threads)
        results["dask"] = measure(fns, expected, args.repeat)
    return results, {"threads": threads, "csv_bytes": os.path.getsize(path) if path else 0, "with_load": WITH_LOAD}


def run_mars(w: dict, path: str | None, expected: dict, repeat: int, cluster: bool) -> dict[str, tuple]:
    import mars

    if cluster:
        from mars.deploy.local import new_cluster

        c = new_cluster(n_worker=2, n_cpu=1, web=False)
        session = c.session
    else:
        c, session = None, mars.new_session(default=True)
    try:
        fns = mars_work(w, session)
        if path:
            fns["read_csv+groupby"] = csv_work(path, "mars", session)
        return measure(fns, expected, repeat)
    finally:
        session.close()
        if c is not None:
            c.stop()


def report(results: dict, info: dict) -> list[str]:
    engines = list(results)
    workloads = [w for w in results["pandas"] if all(w in r for r in results.values())]
    loads = "; loading the inputs timed too" if WITH_LOAD else ""
    print(f"\n{info['threads']} cores; CSV {info['csv_bytes'] / 1e9:.2f} GB{loads}; seconds (peak MB above start)")
    print(f"{'workload':<18}" + "".join(f"{e:>22}" for e in engines))
    fails = []
    for name in workloads:
        row = f"{name:<18}"
        for e in engines:
            t, mem = results[e].get(name, (float('nan'), 0))
            row += f"{t:>12.3f} ({mem / 1e6:>6.0f})"
        print(row)
    print()
    base = {name: results["pandas"][name][0] for name in workloads}
    for e in (x for x in engines if x.startswith("mars")):
        for name in workloads:
            t, mem = results[e][name]
            ok_t = t <= TARGET * base[name]
            dask_mem = results.get("dask", {}).get(name, (0, None))[1]
            ok_m = dask_mem is None or mem <= dask_mem + MEMORY_NOISE
            verdict = "PASS" if ok_t and ok_m else "FAIL"
            if verdict == "FAIL":
                fails.append(f"{e} {name}")
            dask_t = results.get("dask", {}).get(name, (float("nan"),))[0]
            print(f"{verdict}  {e:<13} {name:<18} {t / base[name]:5.2f}x pandas (target <= {TARGET:g}x), "
                  f"{t / dask_t:5.2f}x dask; peak {mem / 1e6:.0f} MB vs dask "
                  f"{'-' if dask_mem is None else f'{dask_mem / 1e6:.0f} MB'}")
    return fails


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="inputs 10x smaller, no CSV")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--csv-gb", type=float, default=1.0, help="size of the CSV file (0: skip)")
    parser.add_argument("--no-dask", action="store_true")
    parser.add_argument("--no-cluster", action="store_true")
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--only", action="append", default=[],
                        help="run only this workload (repeatable): groupby-agg, merge, sort_values, read_csv+groupby")
    parser.add_argument("--with-load", action="store_true",
                        help="time loading the in-memory inputs into the engine too (the client's upload)")
    parser.add_argument("--target", type=float, default=2.0, help="PASS at most this many times pandas' time")
    args = parser.parse_args()
    ONLY.extend(args.only)
    global WITH_LOAD, TARGET
    WITH_LOAD, TARGET = args.with_load, args.target
    if args.quick:
        args.csv_gb = 0.0
    results, info = run_engines(args)
    fails = report(results, info)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"info": info, "results": {e: {k: list(v) for k, v in r.items()} for e, r in results.items()}},
                      f, indent=1)
    print("\nall PASS" if not fails else f"\n{len(fails)} FAIL: " + ", ".join(fails))


if __name__ == "__main__":
    main()
