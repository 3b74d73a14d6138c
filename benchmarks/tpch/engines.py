"""One engine's side of ``run.py``: load the tables, run the queries, write what happened.

``run.py`` starts ``python engines.py ENGINE OUT_DIR --scale ... --queries ...``
once per engine, in a process group of its own (so a query that hangs can be
stopped with everything it started). The process writes ``OUT_DIR/events.jsonl``
line by line (the load, then each query: seconds, error, peak memory so far)
and each query's result as ``OUT_DIR/q<N>.pkl``, so that what finished before
a kill is kept.

Engines: ``pandas`` (this process), ``mars`` (embedded session),
``mars-cluster`` (``new_cluster(n_worker=2, n_cpu=1)``), ``dask``
(``LocalCluster(n_workers=2, threads_per_worker=1)``) and ``duckdb`` (the
SQL of ``answers.py``, 2 threads, tables in memory).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import pickle
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import pandas as pd
import psutil
import queries
from generate import TABLES

ENGINES = ("pandas", "mars", "mars-cluster", "dask", "duckdb")
#: seconds between two readings of a process's proportional share (see PeakRSS)
PRECISE_EVERY = 1.0


class PeakRSS:
    """Samples the memory of this process and its descendants every 20 ms; ``peak`` is the highest total seen.

    A process counts its share of its resident anonymous and file pages
    (``Pss_Anon`` + ``Pss_File`` of ``/proc/<pid>/smaps_rollup``): a page that
    n processes share counts 1/n in each, so the pages a forked cluster
    process still shares with its parent, and the shared libraries, count
    once in the total. Shared memory counts once, as the bytes held by the
    segments of mars workers in the tree (named ``mars-<worker pid>-...`` in
    ``/dev/shm``), mapped or not: a segment's pages would count in no process
    while none maps it.

    ``peak_rss`` is the same total with whole resident pages (``RssAnon`` +
    ``RssFile`` of ``/proc/<pid>/status``), which counts a shared page once
    per process: the measure of earlier runs, kept beside for comparison. On a
    kernel without ``smaps_rollup`` both are that one.

    Reading ``smaps_rollup`` walks a process's page tables: about 12 ms for a
    mars slot that maps a worker's held tables, so that reading every process
    every 20 ms kept most of a core busy, on a 2-core machine, while the
    cluster's queries ran. A process's proportional share is read once every
    :data:`PRECISE_EVERY` seconds; the samples between add to it the change
    in its ``RssAnon`` (where new arrays land), read every time.
    """

    def __init__(self) -> None:
        self._proc = psutil.Process()
        self._stop = threading.Event()
        #: by pid: (when its share was read, the share then, its RssAnon then)
        self._precise: dict[int, tuple[float, int, int]] = {}
        self.peak, self.peak_rss = self.sample()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def sample(self) -> tuple[int, int]:
        """The tree's memory now: (proportional, whole resident pages), in bytes."""
        share = whole = 0
        pids = []
        now = time.monotonic()
        for p in [self._proc, *self._proc.children(recursive=True)]:
            try:
                anon, file = _resident_bytes(p.pid)
                share += self._share(p.pid, anon, anon + file, now)
            except OSError:  # gone meanwhile
                continue
            whole += anon + file
            pids.append(p.pid)
        self._precise = {pid: v for pid, v in self._precise.items() if pid in pids}
        shm = _segment_bytes(pids)
        return share + shm, whole + shm

    def _share(self, pid: int, anon: int, resident: int, now: float) -> int:
        last = self._precise.get(pid)
        if last is not None and now - last[0] < PRECISE_EVERY:
            return max(0, last[1] + anon - last[2])
        share = _proportional_bytes(pid, resident)
        self._precise[pid] = (now, share, anon)
        return share

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            share, whole = self.sample()
            self.peak, self.peak_rss = max(self.peak, share), max(self.peak_rss, whole)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


_SHM_DIR = "/dev/shm"


def _resident_bytes(pid: int) -> tuple[int, int]:
    """``RssAnon`` and ``RssFile`` of a process: its resident pages but those of shared memory."""
    anon = file = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                anon = int(line.split()[1]) * 1024
            elif line.startswith("RssFile:"):
                file = int(line.split()[1]) * 1024
    return anon, file


def _proportional_bytes(pid: int, fallback: int) -> int:
    """``Pss_Anon`` + ``Pss_File`` of a process (``fallback`` where the kernel does not say)."""
    total, seen = 0, 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith(("Pss_Anon:", "Pss_File:")):
                    total += int(line.split()[1]) * 1024
                    seen += 1
    except FileNotFoundError:
        return fallback
    return total if seen == 2 else fallback


def _segment_bytes(pids: list[int]) -> int:
    """Bytes held in ``/dev/shm`` by the segments of the mars workers among ``pids``."""
    starts = tuple(f"mars-{pid}-" for pid in pids)
    total = 0
    try:
        entries = os.scandir(_SHM_DIR)
    except OSError:
        return 0
    with entries:
        for e in entries:
            if e.name.startswith(starts) and not e.name.endswith(".owner"):
                try:
                    total += e.stat(follow_symlinks=False).st_blocks * 512
                except OSError:
                    continue
    return total


def partitions(rows: int, chunk_rows: int) -> int:
    """How many partitions a table of ``rows`` rows gets: at most ``chunk_rows`` each.

    >>> partitions(6_001_215, 500_000), partitions(25, 500_000), partitions(0, 10)
    (13, 1, 1)
    """
    return max(1, math.ceil(rows / chunk_rows))


class Engine:
    """An engine as the runner sees it: ``load`` the tables, ``run`` one query to a pandas result, ``close``."""

    def __init__(self, folder: str, scale: float, chunk_rows: int, load_from: str) -> None:
        self.folder, self.scale, self.chunk_rows, self.load_from = folder, scale, chunk_rows, load_from
        self.tables: dict[str, Any] = {}

    def path(self, table: str) -> str:
        return os.path.join(self.folder, f"{table}.parquet")

    def start(self) -> None:
        """Start the engine's workers (not timed as load)."""

    def load(self, names: list[str]) -> None:
        for name in names:
            self.tables[name] = self.load_one(name)

    def load_one(self, name: str) -> Any:
        return pd.read_parquet(self.path(name))

    def run(self, n: int) -> Any:
        return self.compute(queries.QUERIES[n](self.tables, self.module()))

    def module(self) -> Any:
        return pd

    def compute(self, result: Any) -> Any:
        return result

    def close(self) -> None:
        self.tables.clear()


class MarsEngine(Engine):
    cluster: Any = None

    def start(self) -> None:
        import mars

        if self.cluster_mode:
            from mars.deploy.local import new_cluster

            self.cluster = new_cluster(n_worker=2, n_cpu=1, web=False)
            self.session = self.cluster.session
        else:
            self.session = mars.new_session(default=True)

    cluster_mode = False

    def load_one(self, name: str) -> Any:
        import mars.dataframe as md

        if self.load_from == "parquet":
            return md.read_parquet(self.path(name)).execute(session=self.session)
        pdf = pd.read_parquet(self.path(name))
        size = math.ceil(len(pdf) / partitions(len(pdf), self.chunk_rows)) or 1
        return md.DataFrame(pdf, chunk_size=size).execute(session=self.session)

    def module(self) -> Any:
        import mars.dataframe as md

        return md

    def compute(self, result: Any) -> Any:
        if hasattr(result, "execute"):
            return result.execute(session=self.session).fetch(session=self.session)
        return result

    def close(self) -> None:
        super().close()
        if self.cluster is not None:
            self.cluster.stop()
        else:
            self.session.close()


class MarsClusterEngine(MarsEngine):
    cluster_mode = True


class DaskEngine(Engine):
    def start(self) -> None:
        import logging

        from dask.distributed import Client, LocalCluster

        logging.getLogger("distributed").setLevel(logging.ERROR)  # a warning per shuffle otherwise
        self.cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                    silence_logs=logging.ERROR)
        self.client = Client(self.cluster)

    def load_one(self, name: str) -> Any:
        import dask.dataframe as dd
        from dask.distributed import wait

        if self.load_from == "parquet":
            ddf = dd.read_parquet(self.path(name))
        else:
            pdf = pd.read_parquet(self.path(name))
            ddf = dd.from_pandas(pdf, npartitions=partitions(len(pdf), self.chunk_rows), sort=False)
        ddf = ddf.persist()
        wait(ddf)
        return ddf

    def module(self) -> Any:
        import dask.dataframe as dd

        return dd

    def compute(self, result: Any) -> Any:
        return result.compute() if hasattr(result, "compute") else result

    def close(self) -> None:
        super().close()
        self.client.close()
        self.cluster.close()


class DuckDBEngine(Engine):
    def load(self, names: list[str]) -> None:
        from answers import connect

        self.con = connect(self.folder, threads=2, in_memory=True)

    def run(self, n: int) -> Any:
        from answers import answer

        return answer(self.con, n, self.scale)

    def close(self) -> None:
        self.con.close()


KINDS: dict[str, type[Engine]] = {"pandas": Engine, "mars": MarsEngine, "mars-cluster": MarsClusterEngine,
                                  "dask": DaskEngine, "duckdb": DuckDBEngine}


def error_text(exc: BaseException) -> str:
    """The exception and the innermost frames of its traceback (where it was raised)."""
    frames = traceback.format_exception(exc)
    return "".join(frames[-4:])[-3000:]


def timed(fn: Callable[[], Any]) -> tuple[float, Any, str | None]:
    start = time.perf_counter()
    try:
        value = fn()
    except Exception as exc:  # noqa: BLE001 - a failing query is a result to report, not a crash
        return time.perf_counter() - start, None, error_text(exc)
    return time.perf_counter() - start, value, None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("engine", choices=ENGINES)
    parser.add_argument("out")
    parser.add_argument("--folder", required=True)
    parser.add_argument("--scale", type=float, required=True)
    parser.add_argument("--queries", required=True)
    parser.add_argument("--chunk-rows", type=int, default=500_000)
    parser.add_argument("--load-from", choices=("pandas", "parquet"), default="pandas")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    queries.SCALE = args.scale
    numbers = [int(q) for q in args.queries.split(",")]
    mem = PeakRSS()
    engine = KINDS[args.engine](args.folder, args.scale, args.chunk_rows, args.load_from)
    with open(os.path.join(args.out, "events.jsonl"), "a", buffering=1) as events:

        def emit(**fields: Any) -> None:
            share, whole = mem.sample()
            events.write(json.dumps({**fields, "peak": mem.peak, "peak_rss": mem.peak_rss, "memory": share,
                                     "rss": whole}) + "\n")

        seconds, _, error = timed(engine.start)
        emit(step="start", seconds=seconds, error=error)
        names = sorted({t for n in numbers for t in queries.TABLES_USED[n]}, key=TABLES.index)
        seconds, _, error = timed(lambda: engine.load(names))
        emit(step="load", seconds=seconds, error=error)
        if error is None:
            for n in numbers:
                run_query(engine, n, args.repeat, args.out, emit)
        engine.close()
        mem.stop()
        emit(step="end", seconds=0.0, error=None)


def run_query(engine: Engine, n: int, repeat: int, out: str, emit: Callable[..., None]) -> None:
    """Run query ``n`` ``repeat`` times (its best time counts), write its result and one event."""
    best, value, error = math.inf, None, None
    for _ in range(repeat):
        gc.collect()
        emit(step="begin", query=n, seconds=0.0, error=None)
        seconds, value, error = timed(lambda: engine.run(n))
        best = min(best, seconds)
        if error is not None:
            break
    with open(os.path.join(out, f"q{n}.pkl"), "wb") as f:
        pickle.dump(value, f)
    emit(step="query", query=n, seconds=best, error=error)


if __name__ == "__main__":
    sys.exit(main())
