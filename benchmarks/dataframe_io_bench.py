"""DataFrame IO: mars.dataframe beside pandas (one process) and dask.dataframe (threads).

Run: ``.venv/bin/python benchmarks/dataframe_io_bench.py [--quick] [--rows N] [--json PATH] [--no-dask]
[--engines pandas,mars,dask] [--workloads parquet,csv]`` (one engine or workload per process gives each the
same fresh memory: the timings of 10M rows depend on what ran before in the process).

Workloads (issue 18): a ``to_parquet`` + ``read_parquet`` round trip of a
10M-row × 8-column frame in 16 files (a directory of 16 files; pandas writes
the same 16 slices and reads the directory back), and ``to_csv`` of the same
frame into 16 files (``out-*.csv``). ``--quick`` uses 1M rows. The frame is
made once, outside the timings; mars and dask start from the frame cut into
16 partitions (built outside the timings too); each timing includes running
the write (and the read, fetched whole as pandas) and is taken once, in a
fresh directory. Results are checked equal to pandas' before timing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from timing import once

import mars
import mars.dataframe as md

PARTS = 16


def frame(rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "i": np.arange(rows),
        "k": rng.integers(0, 1000, rows),
        "a": rng.random(rows), "b": rng.random(rows), "c": rng.standard_normal(rows),
        "d": rng.random(rows).astype("float32"),
        "t": pd.Timestamp("2024-01-01") + pd.to_timedelta(np.arange(rows), unit="s"),
        "s": rng.choice(np.array(["alpha", "beta", "gamma", "delta"], dtype=object), rows),
    })


def _slices(pdf: pd.DataFrame) -> list[pd.DataFrame]:
    step = -(-len(pdf) // PARTS)
    return [pdf.iloc[i:i + step] for i in range(0, len(pdf), step)]


def pandas_cases(pdf: pd.DataFrame, tmp: str) -> dict[str, Callable[[], Any]]:
    def parquet() -> pd.DataFrame:
        d = os.path.join(tmp, "pd-parquet")
        os.makedirs(d)
        for i, part in enumerate(_slices(pdf)):
            part.to_parquet(os.path.join(d, f"part.{i:02d}.parquet"))
        return pd.read_parquet(d)

    def csv() -> None:
        for i, part in enumerate(_slices(pdf)):
            part.to_csv(os.path.join(tmp, f"pd-{i:02d}.csv"), index=False)

    return {"parquet round trip": parquet, "to_csv": csv}


def mars_cases(pdf: pd.DataFrame, tmp: str) -> dict[str, Callable[[], Any]]:
    sess = mars.new_session()
    df = md.DataFrame(pdf, chunk_size=-(-len(pdf) // PARTS)).execute(session=sess)

    def parquet() -> pd.DataFrame:
        d = os.path.join(tmp, "md-parquet") + "/"
        df.to_parquet(d).execute(session=sess)
        return md.read_parquet(d).execute(session=sess).fetch(session=sess)

    def csv() -> None:
        df.to_csv(os.path.join(tmp, "md-*.csv"), index=False).execute(session=sess)

    return {"parquet round trip": parquet, "to_csv": csv}


def dask_cases(pdf: pd.DataFrame, tmp: str) -> dict[str, Callable[[], Any]]:
    import dask
    import dask.dataframe as dd

    ddf = dd.from_pandas(pdf, npartitions=PARTS).persist(scheduler="threads")

    def parquet() -> pd.DataFrame:
        d = os.path.join(tmp, "dd-parquet")
        with dask.config.set(scheduler="threads"):
            ddf.to_parquet(d, write_index=False)
            return dd.read_parquet(d).compute()

    def csv() -> None:
        with dask.config.set(scheduler="threads"):
            ddf.to_csv(os.path.join(tmp, "dd-*.csv"), index=False)

    return {"parquet round trip": parquet, "to_csv": csv}


def check(pdf: pd.DataFrame, tmp: str) -> None:
    """mars' files read back equal pandas (run once before the timings, on a small slice)."""
    small = pdf.iloc[:50_000]
    d = os.path.join(tmp, "check")
    md.DataFrame(small, chunk_size=5000).to_parquet(d + "/").execute()
    pd.testing.assert_frame_equal(md.read_parquet(d).execute().fetch(), small)
    md.DataFrame(small, chunk_size=5000).to_csv(os.path.join(tmp, "check-*.csv"), index=False).execute()
    back = md.read_csv(os.path.join(tmp, "check-*.csv"), parse_dates=["t"]).execute().fetch()
    pd.testing.assert_frame_equal(back, small, check_dtype=False)
    shutil.rmtree(tmp)
    os.makedirs(tmp)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="1M rows instead of 10M")
    parser.add_argument("--rows", type=int, default=None)
    parser.add_argument("--no-dask", action="store_true")
    parser.add_argument("--json", default=None, help="write the rows here")
    parser.add_argument("--engines", default="pandas,mars,dask", help="comma-separated engines to time")
    parser.add_argument("--workloads", default="parquet,csv", help="comma-separated: parquet, csv")
    args = parser.parse_args()
    chosen = set(args.engines.split(","))
    names = {"parquet": "parquet round trip", "csv": "to_csv"}
    workloads = {names[w] for w in args.workloads.split(",")}
    rows = args.rows or (1_000_000 if args.quick else 10_000_000)
    pdf = frame(rows)
    engines = {k: v for k, v in {"pandas": pandas_cases, "mars": mars_cases}.items() if k in chosen}
    if not args.no_dask and "dask" in chosen:
        try:
            import dask.dataframe  # noqa: F401

            engines["dask"] = dask_cases
        except ImportError:
            pass
    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        check(pdf, tmp)
        for engine, make in engines.items():
            for name, fn in make(pdf, tmp).items():
                if name not in workloads:
                    continue
                out.append({"workload": name, "engine": engine, "rows": rows, "seconds": round(once(fn), 3)})
                shutil.rmtree(tmp)
                os.makedirs(tmp)
    print(f"{rows:,} rows x 8 columns, {PARTS} files, {os.cpu_count()} cpus")
    print(f"{'workload':<20}{'engine':<8}{'seconds':>10}")
    for r in out:
        print(f"{r['workload']:<20}{r['engine']:<8}{r['seconds']:>10.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
