"""The dataframe optimizer on and off, beside pandas, in one run.

Run: ``.venv/bin/python benchmarks/dataframe_optimizer_bench.py [--rows N] [--repeat N] [--no-parquet]``.

Workloads, on a ``lineitem``-like frame of ``--rows`` rows (default 6M) and
16 columns (5 used, 11 int64 columns carried along):

- q6: TPC-H Q6's shape: five comparisons ``&``-ed, a filter, a product of
  two columns, a sum; the frame is a lazy ``md.DataFrame(pdf)``;
- q6-held: the same on a frame already executed (held by the session: the
  optimizer cannot narrow it, only fuse);
- filter-select: ``df[df.l_quantity < 24][["l_extendedprice", "l_discount"]]``
  fetched whole (projection: two columns travel, not sixteen);
- sort-head: ``df.sort_values("l_extendedprice", ascending=False).head(10)`` (top-n);
- q6-parquet: Q6 on a Parquet file sorted by ship date, 64 row groups
  (predicate pushdown skips the row groups outside the year).

Each time is the best of ``--repeat`` runs after one untimed run; every
result is checked against pandas'. Engines: pandas in this process, mars'
embedded session with ``options.optimize`` False and True.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(__file__))

from timing import best_of

import mars
import mars.dataframe as md


def lineitem(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    cols: dict[str, Any] = {
        "l_quantity": rng.integers(1, 51, n).astype("float64"),
        "l_extendedprice": rng.uniform(900, 105000, n),
        "l_discount": rng.integers(0, 11, n) / 100,
        "l_tax": rng.integers(0, 9, n) / 100,
        "l_shipdate": pd.Timestamp("1992-01-01") + pd.to_timedelta(rng.integers(0, 2500, n), unit="D"),
    }
    for i in range(11):
        cols[f"c{i}"] = rng.integers(0, 1000, n)
    return pd.DataFrame(cols)


def q6(df: Any) -> Any:
    m = ((df.l_shipdate >= pd.Timestamp("1994-01-01")) & (df.l_shipdate < pd.Timestamp("1995-01-01"))
         & (df.l_discount >= 0.05) & (df.l_discount <= 0.07) & (df.l_quantity < 24))
    f = df[m]
    return (f.l_extendedprice * f.l_discount).sum()


def filter_select(df: Any) -> Any:
    return df[df.l_quantity < 24][["l_extendedprice", "l_discount"]]


def sort_head(df: Any) -> Any:
    return df.sort_values("l_extendedprice", ascending=False).head(10)


def _check(got: Any, want: Any) -> bool:
    if isinstance(want, pd.DataFrame):
        return got.equals(want) and list(got.index) == list(want.index)
    return bool(np.isclose(got, want, rtol=1e-9))


def _time_mars(build: Callable[[], Any], optimize: bool, repeat: int) -> tuple[float, Any]:
    out: dict[str, Any] = {}

    def run() -> None:
        mars.options.optimize = optimize
        out["value"] = build().execute().fetch()

    try:
        return best_of(run, repeat), out["value"]
    finally:
        mars.options.optimize = True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=6_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-parquet", action="store_true")
    args = parser.parse_args()
    pdf = lineitem(args.rows)
    mars.options.show_progress = False
    mars.new_session()
    lazy_df = md.DataFrame(pdf)
    # cut otherwise than lazy_df: the same cuts would give its chunks the held chunks' keys (computed already)
    held = md.DataFrame(pdf, chunk_size=1_000_000).execute()
    workloads: list[tuple[str, Callable[[Any], Any], Any, Any]] = [
        ("q6", q6, pdf, lambda: lazy_df),
        ("q6-held", q6, pdf, lambda: held),
        ("filter-select", filter_select, pdf, lambda: lazy_df),
        ("sort-head", sort_head, pdf, lambda: lazy_df),
    ]
    tmp = tempfile.TemporaryDirectory()
    if not args.no_parquet:
        path = os.path.join(tmp.name, "lineitem.parquet")
        pdf.sort_values("l_shipdate", ignore_index=True).to_parquet(path, row_group_size=max(1, args.rows // 64))
        on_disk = pd.read_parquet(path)
        workloads.append(("q6-parquet", lambda df: q6(df), on_disk, lambda: md.read_parquet(path)))
    print(f"{'workload':<14} {'pandas':>8} {'mars off':>9} {'mars on':>8} {'on/pandas':>9} {'on/off':>7}  ok")
    for name, query, pinput, source in workloads:
        t_pd = best_of(lambda q=query, p=pinput: q(p), args.repeat)
        want = query(pinput)
        if name == "q6-parquet":
            t_pd += best_of(lambda: pd.read_parquet(path), 1)  # pandas reads the file too
        build = lambda q=query, s=source: q(s())
        t_off, v_off = _time_mars(build, False, args.repeat)
        t_on, v_on = _time_mars(build, True, args.repeat)
        ok = _check(v_off, want) and _check(v_on, want)
        print(f"{name:<14} {t_pd:8.3f} {t_off:9.3f} {t_on:8.3f} {t_on / t_pd:9.2f} {t_on / t_off:7.2f}  "
              f"{'yes' if ok else 'NO'}")
    tmp.cleanup()


if __name__ == "__main__":
    main()
