"""TPC-H side by side: pandas, mars (embedded and a 2-worker cluster), dask and DuckDB in one run.

Run: ``.venv/bin/python benchmarks/tpch/run.py [--scale 1] [--queries 1,6]
[--engines pandas,mars,mars-cluster,dask,duckdb] [--chunk-rows 500000]
[--load-from pandas|parquet] [--repeat 1] [--timeout 300] [--json PATH]``.

The data is made first if missing (``generate.py``), and DuckDB's answers
are computed once (``answers.py``). Then each engine runs in a process of its
own (``engines.py``), one after the other: it loads the tables the queries
read into memory (timed as ``load``; the cluster's start is not in it), then
runs the queries in order. A query that runs past ``--timeout`` seconds is
stopped with the engine's whole process group; the engine restarts with the
next query. Each answer is checked against DuckDB's: same row count, the
``ORDER BY`` columns in the same order, and the same rows (numbers within a
relative 1e-6; dates and numbers compared whatever their dtype; column names
are not compared, only positions). Peak memory is the highest total of the
engine's process tree (its workers included), sampled every 20 ms: each
process's share of its resident pages but shared memory (a page shared by
several processes counts once in all), plus the shared-memory segments of
mars workers once; ``RSS MB`` counts a shared page once per process, as
runs before 2026-11-27 did (see ``engines.PeakRSS``).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np
import pandas as pd
from answers import answer, connect
from engines import ENGINES
from generate import DEFAULT_DIR, generate
from queries import ORDER_BY

HERE = os.path.dirname(os.path.abspath(__file__))
RTOL = 1e-6


# ----------------------------------------------------------------- checking an answer
def as_frame(value: Any) -> pd.DataFrame:
    """Any query result (frame, Series, scalar, 0-d array) as a frame with a fresh 0..n-1 index.

    >>> as_frame(3.5).shape, as_frame(pd.Series([1, 2])).shape
    ((1, 1), (2, 1))
    """
    if isinstance(value, pd.DataFrame):
        return value.reset_index(drop=True)
    if isinstance(value, pd.Series):
        return value.reset_index(drop=True).to_frame()
    return pd.DataFrame({"value": [np.asarray(value).item()]})


def plain_column(s: pd.Series) -> pd.Series:
    """A column as float64 (numbers, booleans, decimals), datetime64[ns] (dates) or str."""
    if pd.api.types.is_datetime64_any_dtype(s):
        return s.astype("datetime64[ns]")
    if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
        return s.astype("float64")
    first = s.dropna().iloc[0] if s.notna().any() else None
    if hasattr(first, "isoformat"):
        return pd.to_datetime(s).astype("datetime64[ns]")
    try:
        return s.astype("float64") if first is not None and not isinstance(first, str) else s.astype(str)
    except (TypeError, ValueError):
        return s.astype(str)


def normalized(df: pd.DataFrame) -> pd.DataFrame:
    """Positional column names ``c0, c1, ...`` and plain dtypes (see :func:`plain_column`)."""
    out = pd.DataFrame({f"c{i}": plain_column(df.iloc[:, i]) for i in range(df.shape[1])})
    return out.reset_index(drop=True)


def first_difference(got: pd.DataFrame, expected: pd.DataFrame, names: list[str]) -> str | None:
    """The first cell where two equally shaped normalized frames differ, as text; None when they agree."""
    for i, col in enumerate(expected.columns):
        a, b = got[col], expected[col]
        if pd.api.types.is_float_dtype(b) and pd.api.types.is_float_dtype(a):
            same = np.isclose(a.to_numpy(), b.to_numpy(), rtol=RTOL, atol=1e-9, equal_nan=True)
        else:
            same = (a.astype(str) == b.astype(str)).to_numpy()
        if not same.all():
            row = int(np.argmin(same))
            x, y = (v.item() if isinstance(v, np.generic) else v for v in (a.iloc[row], b.iloc[row]))
            return f"column {names[i]!r} row {row}: got {x!r}, expected {y!r}"
    return None


def check(value: Any, expected: pd.DataFrame, order_by: list[str]) -> str | None:
    """Why ``value`` is not DuckDB's ``expected`` answer (the first mismatch), or None if it is."""
    got_raw = as_frame(value)
    if got_raw.shape[1] != expected.shape[1]:
        return f"{got_raw.shape[1]} columns {list(got_raw.columns)}, expected {list(expected.columns)}"
    if len(got_raw) != len(expected):
        return f"{len(got_raw)} rows, expected {len(expected)}"
    names = [str(c) for c in expected.columns]
    got, exp = normalized(got_raw), normalized(expected)
    keys = [f"c{names.index(c)}" for c in order_by]
    if keys:
        diff = first_difference(got[keys], exp[keys], [names[int(k[1:])] for k in keys])
        if diff:
            return "order: " + diff
    # same rows in any order: sort on exact columns first, then on the numbers
    exact = [c for c in exp.columns if not pd.api.types.is_float_dtype(exp[c])]
    by = exact + [c for c in exp.columns if c not in exact]
    got = got.sort_values(by, kind="stable").reset_index(drop=True)
    exp = exp.sort_values(by, kind="stable").reset_index(drop=True)
    return first_difference(got, exp, names)


# ----------------------------------------------------------------- running the engines
def read_events(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.endswith("\n")]


def stop_group(proc: subprocess.Popen) -> None:
    """Stop the engine process and everything it started (its own process group)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def run_engine(engine: str, numbers: list[int], args: argparse.Namespace, folder: str) -> dict:
    """Run ``numbers`` on ``engine``, restarting it after a query that timed out; its events and results."""
    out = {"load": None, "start": None, "peak": 0, "peak_rss": 0, "queries": {}}
    todo = list(numbers)
    while todo:
        with tempfile.TemporaryDirectory() as tmp:
            events, timed_out = run_child(engine, todo, args, folder, tmp)
            for e in events:
                out["peak"] = max(out["peak"], e["peak"])
                out["peak_rss"] = max(out["peak_rss"], e["peak_rss"])
                if e["step"] in ("start", "load") and out[e["step"]] is None:
                    out[e["step"]] = e
                if e["step"] == "query":
                    with open(os.path.join(tmp, f"q{e['query']}.pkl"), "rb") as f:
                        e["value"] = pickle.load(f)
                    out["queries"][e["query"]] = e
        load = next((e for e in events if e["step"] == "load"), None)
        if load is None or load["error"]:
            error = load["error"] if load else "engine did not start or load within the timeout"
            for n in todo:
                out["queries"].setdefault(n, {"seconds": float("nan"), "error": "load failed: " + error})
            break
        if timed_out is not None:
            out["queries"][timed_out] = {"seconds": float("nan"), "error": f"timeout after {args.timeout} s"}
        todo = [n for n in todo if n not in out["queries"]]
    return out


def run_child(engine: str, todo: list[int], args: argparse.Namespace, folder: str,
              tmp: str) -> tuple[list[dict], int | None]:
    """One engine process over ``todo``; its events, and the query it was stopped in (None: it finished)."""
    cmd = [sys.executable, os.path.join(HERE, "engines.py"), engine, tmp, "--folder", folder,
           "--scale", f"{args.scale:g}", "--queries", ",".join(map(str, todo)),
           "--chunk-rows", str(args.chunk_rows), "--load-from", args.load_from, "--repeat", str(args.repeat)]
    proc = subprocess.Popen(cmd, cwd=HERE, start_new_session=True)
    path = os.path.join(tmp, "events.jsonl")
    since = time.monotonic()
    seen = 0
    while proc.poll() is None:
        time.sleep(0.2)
        events = read_events(path)
        if len(events) != seen:
            seen, since = len(events), time.monotonic()
        if time.monotonic() - since > args.timeout:
            stop_group(proc)
            last = events[-1] if events else {}
            return read_events(path), last.get("query") if last.get("step") == "begin" else None
    return read_events(path), None


# ----------------------------------------------------------------- the report
def verdicts(results: dict, answers: dict[int, pd.DataFrame]) -> dict[str, dict[int, str | None]]:
    """For each engine and query: None when right, else the error or the first mismatch."""
    out: dict[str, dict[int, str | None]] = {}
    for engine, r in results.items():
        out[engine] = {}
        for n, q in r["queries"].items():
            if q["error"]:
                out[engine][n] = q["error"].strip()
            else:
                try:
                    out[engine][n] = check(q["value"], answers[n], ORDER_BY[n])
                except Exception as exc:  # noqa: BLE001 - an unreadable result is a wrong one
                    out[engine][n] = f"result not comparable: {exc!r}"
    return out


def report(results: dict, wrong: dict, numbers: list[int], info: dict) -> None:
    engines = list(results)
    print(f"\nTPC-H SF{info['scale']:g}, {info['cores']} cores, load average {info['load_before']} before, "
          f"{info['load_after']} after; seconds per query (x: wrong answer, E: error, T: timeout)")
    print(f"{'':<7}" + "".join(f"{e:>14}" for e in engines))
    for n in numbers:
        row = f"Q{n:<6}"
        for e in engines:
            q, bad = results[e]["queries"].get(n), wrong[e].get(n)
            mark = "" if not bad else ("T" if bad.startswith("timeout") else "E" if q["error"] else "x")
            row += f"{q['seconds']:>13.2f}{mark or ' '}" if q and q["seconds"] == q["seconds"] else f"{'-':>13}{mark}"
        print(row)
    lines = {
        "total": lambda e: f"{sum(q['seconds'] for q in results[e]['queries'].values() if q['seconds'] == q['seconds']):.2f}",
        "correct": lambda e: f"{sum(1 for n in numbers if wrong[e].get(n) is None)}/{len(numbers)}",
        "load": lambda e: f"{results[e]['load']['seconds']:.2f}" if results[e]["load"] else "-",
        "start": lambda e: f"{results[e]['start']['seconds']:.2f}" if results[e]["start"] else "-",
        "peak MB": lambda e: f"{results[e]['peak'] / 2**20:.0f}",
        "RSS MB": lambda e: f"{results[e]['peak_rss'] / 2**20:.0f}",
    }
    for name, fn in lines.items():
        print(f"{name:<7}" + "".join(f"{fn(e):>14}" for e in engines))
    for e in engines:
        for n in numbers:
            if wrong[e].get(n):
                text = wrong[e][n].replace("\n", "\n      ")
                print(f"\n{e} Q{n}: {text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--data-dir", default=DEFAULT_DIR)
    parser.add_argument("--queries", default="", help="comma-separated query numbers (default: all 22)")
    parser.add_argument("--engines", default=",".join(ENGINES), help=f"comma-separated, of {', '.join(ENGINES)}")
    parser.add_argument("--chunk-rows", type=int, default=500_000, help="rows per partition of in-memory tables")
    parser.add_argument("--load-from", choices=("pandas", "parquet"), default="pandas",
                        help="mars/dask: hand over pandas frames read by the client, or read the Parquet files")
    parser.add_argument("--repeat", type=int, default=1, help="runs per query; the best counts")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds one query (or the load) may take")
    parser.add_argument("--json", help="write the figures and verdicts here")
    args = parser.parse_args()
    numbers = [int(q) for q in args.queries.split(",")] if args.queries else list(range(1, 23))
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    for name in engines:
        if name not in ENGINES:
            parser.error(f"unknown engine {name!r}; choose from {', '.join(ENGINES)}")
    folder = generate(args.scale, args.data_dir)
    con = connect(folder, threads=2, in_memory=False)
    answers = {n: answer(con, n, args.scale) for n in numbers}
    con.close()
    info = {"scale": args.scale, "cores": len(os.sched_getaffinity(0)),
            "load_before": " ".join(f"{x:.2f}" for x in os.getloadavg())}
    results = {e: run_engine(e, numbers, args, folder) for e in engines}
    info["load_after"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    wrong = verdicts(results, answers)
    report(results, wrong, numbers, info)
    if args.json:
        for r in results.values():
            for q in r["queries"].values():
                q.pop("value", None)
        with open(args.json, "w") as f:
            json.dump({"info": info, "results": results, "verdicts": wrong}, f, indent=1, default=str)


if __name__ == "__main__":
    main()
