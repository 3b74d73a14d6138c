"""Methods with carries and global ranks: mars beside pandas and dask.dataframe, in one run.

Run: ``.venv/bin/python benchmarks/dataframe_methods_bench.py [--quick] [--repeat N] [--no-dask] [--only NAME ...]
[--json PATH]``.

Workloads (issue 18):

- carries: ``shift(1)`` + ``diff(5)`` + ``rolling(100).mean()`` of a 20M-row float time series
  (summed into one Series, so all three run in one expression);
- rank: ``DataFrame.rank()`` (average, ties by value) of a 10M × 8 float frame;
- corr: ``DataFrame.corr()`` (pearson) of the same frame.

Engines: pandas in this process; mars' default embedded session (threads =
cores); dask.dataframe with its threaded scheduler and as many threads.
Inputs are loaded into each engine before timing (mars: executed; dask:
persisted) in 16 partitions, and each result is fetched as a pandas object
and checked against pandas'. Each time is the best of ``--repeat`` runs.
``--quick`` uses a tenth of the rows. dask has no distributed ``rank``: its
row says so (``n/a``).
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from timing import best_of

import mars
import mars.dataframe as md

N_PARTS = 16


def inputs(quick: bool) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    n_series, n_frame = (2_000_000, 1_000_000) if quick else (20_000_000, 10_000_000)
    index = pd.date_range("2020-01-01", periods=n_series, freq="s")
    series = pd.Series(rng.normal(size=n_series).cumsum(), index=index, name="v")
    frame = pd.DataFrame(rng.normal(size=(n_frame, 8)), columns=[f"c{i}" for i in range(8)])
    return {"series": series, "frame": frame}


def _carries(s: Any) -> Any:
    return s.shift(1) + s.diff(5) + s.rolling(100).mean()


def pandas_cases(w: dict) -> dict[str, Callable[[], Any]]:
    s, f = w["series"], w["frame"]
    return {"carries": lambda: _carries(s), "rank": lambda: f.rank(), "corr": lambda: f.corr()}


def mars_cases(w: dict) -> dict[str, Callable[[], Any]]:
    sess = mars.new_session()
    s = md.Series(w["series"], chunk_size=len(w["series"]) // N_PARTS).execute()
    f = md.DataFrame(w["frame"], chunk_size=len(w["frame"]) // N_PARTS).execute()
    return {"carries": lambda: sess.fetch(_carries(s).execute()), "rank": lambda: sess.fetch(f.rank().execute()),
            "corr": lambda: sess.fetch(f.corr().execute())}


def dask_cases(w: dict, threads: int) -> dict[str, Callable[[], Any]] | None:
    try:
        import dask
        import dask.dataframe as dd
    except ImportError:
        return None
    dask.config.set(scheduler="threads", num_workers=threads)
    s = dd.from_pandas(w["series"], npartitions=N_PARTS).persist()
    f = dd.from_pandas(w["frame"], npartitions=N_PARTS).persist()
    return {"carries": lambda: _carries(s).compute(), "rank": None, "corr": lambda: f.corr().compute()}


def check(got: Any, want: Any, name: str) -> None:
    if isinstance(want, pd.DataFrame):
        pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-6, obj=name)
    else:
        pd.testing.assert_series_equal(got, want, check_exact=False, rtol=1e-6, obj=name)


def run(quick: bool, repeat: int, with_dask: bool, only: list[str] | None = None) -> list[dict]:
    w = inputs(quick)
    threads = len(os.sched_getaffinity(0))
    engines = {"pandas": pandas_cases(w), "mars": mars_cases(w)}
    if with_dask:
        dask_c = dask_cases(w, threads)
        if dask_c is not None:
            engines["dask"] = dask_c
    wanted = {name: fn() for name, fn in engines["pandas"].items() if not only or name in only}
    rows = []
    for name, want in wanted.items():
        row: dict = {"workload": name}
        for engine, cases in engines.items():
            fn = cases.get(name)
            if fn is None:
                row[engine] = None
                continue
            check(fn(), want, f"{engine} {name}")
            row[engine] = best_of(fn, repeat)
        rows.append(row)
    return rows


def table(rows: list[dict]) -> str:
    engines = [k for k in rows[0] if k != "workload"]
    lines = ["| workload | " + " | ".join(f"{e} (s)" for e in engines) + " | mars / pandas | mars / dask |",
             "|---|" + "---|" * (len(engines) + 2)]
    for r in rows:
        cells = ["n/a" if r[e] is None else f"{r[e]:.2f}" for e in engines]
        vs_pandas = f"{r['mars'] / r['pandas']:.2f}"
        vs_dask = "n/a" if r.get("dask") is None else f"{r['mars'] / r['dask']:.2f}"
        lines.append(f"| {r['workload']} | " + " | ".join(cells) + f" | {vs_pandas} | {vs_dask} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the rows")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--no-dask", action="store_true")
    parser.add_argument("--only", nargs="+", choices=("carries", "rank", "corr"), help="run these workloads only")
    parser.add_argument("--json", help="write the rows here as JSON")
    args = parser.parse_args()
    rows = run(args.quick, args.repeat, not args.no_dask, args.only)
    print(f"cores: {len(os.sched_getaffinity(0))}, rows: {'quick' if args.quick else 'full'}")
    print(table(rows))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=2)


if __name__ == "__main__":
    main()
