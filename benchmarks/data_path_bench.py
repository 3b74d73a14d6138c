"""Moving pandas frames from the client into the engine, and computing on them (issue 19, data paths).

Run: ``.venv/bin/python benchmarks/data_path_bench.py [--quick] [--repeat N] [--no-graph-path] [--lineitem]
[--plain-pickle] [--no-workloads] [--segments-only]``.

Frames: 10M rows × 8 numeric columns (640 MB); 10M rows × 6 numeric columns
and an Arrow-backed string column; the 10M × 3 frame of dataframe_bench's
groupby (240 MB). For each: the time to key it (``tokenize_pandas``), and
the best of ``--repeat`` loads (``md.DataFrame(pdf, chunk_size=n/8).execute()``)
in an embedded session and on a 2-worker ``new_cluster``, its session over
the actor protocol and over the web API: partitions put straight into
workers' storage (the default), and, unless ``--no-graph-path``, carried by
the graph through the supervisor and the slots (the path before issue 19,
with today's partitions). Then dataframe_bench's groupby-agg, merge and
sort_values on the cluster, loading included, beside pandas. ``--quick``:
inputs 10× smaller. ``--lineitem``: TPC-H's lineitem table too (SF1, 1 GB:
string, date and numeric columns, as ``pd.read_parquet`` reads it from
``benchmarks/tpch/data/sf1``; see benchmarks/tpch/README.md to make it).
``--plain-pickle``: on the 2-worker cluster, the loads again with the client
serializing by plain pickle (datetime columns in the stream, Arrow chunks
combined: the path before issue 19's Arrow work), side by side in one run.
Rows give the fetch of the loaded frame back to the client: over the actor
protocol, and over the web API (segments mapped from the workers' shared
memory, and, as before, the values over HTTP). First, without
a session: each frame's 8 partitions written into shared-memory segments and
read back in this process (what a client and a worker do, less the
messages), by the serializer and by plain pickle, side by side.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import pickle
import time
from collections.abc import Callable, Iterator
from typing import Any

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np
import pandas as pd

import mars
import mars.dataframe as md
import mars.remote
import mars.serialization.core
from mars.dataframe.datasource import tokenize_pandas
from mars.services.web.client import WebClient


def frames(n: int) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(0)
    numeric = pd.DataFrame({f"c{i}": rng.random(n) if i % 2 else rng.integers(0, 1000, n) for i in range(8)})
    words = np.array([f"w{i:04d}" for i in range(1000)])
    strings = numeric.iloc[:, :6].assign(s=pd.Series(rng.choice(words, n), dtype="string[pyarrow]"))
    groupby = pd.DataFrame({"k": rng.integers(0, 1000, n), "x": rng.random(n), "y": rng.random(n)})
    return {"numeric 8 cols": numeric, "6 numeric + arrow str": strings, "groupby 3 cols": groupby}


LINEITEM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tpch", "data", "sf1", "lineitem.parquet")


def nbytes(pdf: pd.DataFrame) -> int:
    return int(pdf.memory_usage(index=True, deep=True).sum())


def best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        time.sleep(0.3)  # a dropped result is released on a cluster a moment later
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def load(pdf: pd.DataFrame, session: Any) -> Any:
    return md.DataFrame(pdf, chunk_size=-(-len(pdf) // 8)).execute(session=session, show_progress=False)


def load_figures(data: dict[str, pd.DataFrame], session: Any, repeat: int) -> dict[str, float]:
    return {name: best(lambda pdf=pdf: load(pdf, session), repeat) for name, pdf in data.items()}


def fetch_figures(data: dict[str, pd.DataFrame], session: Any, repeat: int) -> dict[str, float]:
    out = {}
    for name, pdf in data.items():
        loaded = load(pdf, session)
        out[name] = best(lambda loaded=loaded: loaded.fetch(session=session), repeat)
        del loaded
    return out


@contextlib.contextmanager
def plain_pickle() -> Iterator[None]:
    """The client serializes as plain protocol-5 pickle does (no reductions of its own)."""
    dumps = mars.serialization.core._dumps
    mars.serialization.core._dumps = lambda obj, callback: pickle.dumps(obj, protocol=5, buffer_callback=callback)
    try:
        yield
    finally:
        mars.serialization.core._dumps = dumps


def segment_figures(data: dict[str, pd.DataFrame], repeat: int) -> dict[str, dict[str, tuple[float, float]]]:
    """Per frame, its 8 partitions written into shared-memory segments and read back, as a client and a worker
    do, this process alone: (wall, CPU) seconds, best of ``repeat``, by the serializer and by plain pickle."""
    from mars.services.storage.shm import get_object, put_object, unlink_object

    def once(parts: list[pd.DataFrame]) -> tuple[float, float]:
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        descs = [put_object(f"k{i}", part, "mars-bench-dp") for i, part in enumerate(parts)]
        for d in descs:
            get_object(d)
        out = time.perf_counter() - wall, time.process_time() - cpu
        for d in descs:
            unlink_object(d)
        return out

    out: dict[str, dict[str, tuple[float, float]]] = {"serializer": {}, "plain pickle": {}}
    for name, pdf in data.items():
        step = -(-len(pdf) // 8)
        parts = [pdf.iloc[i : i + step] for i in range(0, len(pdf), step)]
        for _ in range(repeat):  # the two side by side, so that both see the same load
            for mode, figures in out.items():
                with plain_pickle() if mode == "plain pickle" else contextlib.nullcontext():
                    t = once(parts)
                figures[name] = min(figures.get(name, t), t)
    return out


def workloads(n: int, session: Any) -> dict[str, Callable[[], Any]]:
    rng = np.random.default_rng(1)
    g = pd.DataFrame({"k": rng.integers(0, 1000, n), "x": rng.random(n), "y": rng.random(n)})
    n_left, n_right = n // 5, n // 50
    left = pd.DataFrame({"k": rng.integers(0, n_right, n_left), "a": rng.random(n_left)})
    right = pd.DataFrame({"k": rng.permutation(n_right), "b": rng.random(n_right)})
    sort = pd.DataFrame({"x": rng.random(n // 2), "i": np.arange(n // 2), "y": rng.random(n // 2)})
    agg = {"x": "sum", "y": "mean"}
    if session is None:
        return {"groupby-agg": lambda: g.groupby("k").agg(agg), "merge": lambda: left.merge(right, on="k"),
                "sort_values": lambda: sort.sort_values("x")}
    return {
        "groupby-agg": lambda: load(g, session).groupby("k").agg(agg).execute(session=session).fetch(session=session),
        "merge": lambda: load(left, session).merge(load(right, session), on="k").execute(session=session)
        .fetch(session=session),
        "sort_values": lambda: load(sort, session).sort_values("x").execute(session=session).fetch(session=session),
    }


def run(args: argparse.Namespace) -> None:
    n = 1_000_000 if args.quick else 10_000_000
    data = frames(n)
    if args.lineitem:
        if not os.path.exists(LINEITEM):
            raise SystemExit(f"--lineitem reads {LINEITEM}: make it first (benchmarks/tpch/README.md)")
        data["tpch lineitem sf1"] = pd.read_parquet(LINEITEM)
    print(f"{'frame':<24}{'MB':>8}{'tokenize s':>12}")
    for name, pdf in data.items():
        start = time.perf_counter()
        tokenize_pandas(pdf)
        print(f"{name:<24}{nbytes(pdf) / 1e6:>8.0f}{time.perf_counter() - start:>12.3f}")
    print(f"\ninto shared memory and back, 8 partitions, this process alone, best of {args.repeat}: "
          "wall s (GB/s), CPU s")
    for mode, figures in segment_figures(data, args.repeat).items():
        cells = "".join(f"{w:>10.3f} ({nbytes(data[k]) / 1e9 / w:>5.2f}) {c:>6.3f}  " for k, (w, c) in figures.items())
        print(f"{mode:<26}{cells}")
    if args.segments_only:
        return
    rows: dict[str, dict[str, float]] = {}
    work: dict[str, dict[str, float]] = {}
    if not args.no_workloads:
        work["pandas"] = {k: best(f, args.repeat) for k, f in workloads(n, None).items()}
    embedded = mars.new_session(default=False)
    rows["embedded"] = load_figures(data, embedded, args.repeat)
    embedded.close()
    from mars.deploy.local import new_cluster

    with new_cluster(n_worker=2, n_cpu=1, web=True) as cluster:  # its session uses the web API
        rows["cluster web API, storage"] = load_figures(data, cluster.session, args.repeat)
        rows["web API, fetch"] = fetch_figures(data, cluster.session, args.repeat)
        WebClient.map_shared_memory = False  # the values over HTTP: the path before the client mapped segments
        rows["web API, fetch over HTTP"] = fetch_figures(data, cluster.session, args.repeat)
        WebClient.map_shared_memory = True
    with new_cluster(n_worker=2, n_cpu=1, web=False) as cluster:
        rows["cluster, into storage"] = load_figures(data, cluster.session, args.repeat)
        if args.plain_pickle:
            with plain_pickle():
                rows["cluster, plain pickle"] = load_figures(data, cluster.session, args.repeat)
        rows["cluster, fetch"] = fetch_figures(data, cluster.session, args.repeat)
        if work:
            work["cluster, into storage"] = {k: best(f, args.repeat) for k, f in workloads(n, cluster.session).items()}
        if not args.no_graph_path:
            mars.remote.UPLOAD_ABOVE = 1 << 62
            rows["cluster, with the graph"] = load_figures(data, cluster.session, args.repeat)
            if work:
                work["cluster, with the graph"] = {k: best(f, args.repeat)
                                                   for k, f in workloads(n, cluster.session).items()}
    print(f"\nloads (fetch: the loaded frame back), best of {args.repeat}: seconds (GB/s)")
    print(f"{'engine':<26}" + "".join(f"{name:>26}" for name in data))
    for engine, figures in rows.items():
        cells = "".join(f"{figures[k]:>14.3f} ({nbytes(data[k]) / 1e9 / figures[k]:>6.2f})    " for k in data)
        print(f"{engine:<26}{cells}")
    if not work:
        return
    print(f"\nloading included, best of {args.repeat}: seconds (x pandas)")
    for engine, figures in work.items():
        cells = "".join(f"{k}: {t:.3f} ({t / work['pandas'][k]:.2f}x)   " for k, t in figures.items())
        print(f"{engine:<26}{cells}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="inputs 10x smaller")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-graph-path", action="store_true", help="skip loads through the supervisor")
    parser.add_argument("--lineitem", action="store_true", help="load TPC-H SF1 lineitem from Parquet too")
    parser.add_argument("--segments-only", action="store_true", help="only the shared-memory round trip, no session")
    parser.add_argument("--no-workloads", action="store_true", help="loads only: skip groupby, merge and sort")
    parser.add_argument("--plain-pickle", action="store_true",
                        help="on the cluster, the loads again with the client serializing by plain pickle")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
