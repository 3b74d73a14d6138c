"""A worker that holds 8x its --cache-mem: peak memory against its limits, spilled bytes, and the cost of spilling.

Run: ``.venv/bin/python benchmarks/memory_bench.py [--quick] [--size-mib N] [--json PATH]``.

One worker with two slots (``new_cluster(n_worker=1, n_cpu=2, start_method="spawn")``: fresh
processes, as ``mars-worker`` starts) runs, on
``--size-mib`` of float64 (default 2048, in 16 MiB chunks):

- ``rand``: ``a = mt.random.rand(n).execute()`` (the data, held on the worker);
- ``sum``: ``a.sum()``, reading every chunk back;
- ``sort``: ``b = mt.sort(a).execute()`` (sample sort: sort, shuffle, merge; b is held too);
- ``check``: on the cluster, ``b`` is sorted and sums to ``a``'s sum.

twice: with ``--cache-mem`` = size / 8 and ``--phy-mem`` = size / 4 + 384 MiB
(spilling, under a hard limit), then with both big enough that nothing
spills. A thread samples the worker's process tree every 50 ms from outside:
the sum of RSS, the sum of PSS, and the worker's chunks in ``/dev/shm``.
Printed: times, peaks against the limits, bytes spilled, the slowdown in
wall time and in the worker's CPU time (the steadier figure on a shared machine).
``--quick``: 512 MiB.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
from typing import Any

MiB = 1 << 20


class Sampler:
    """Peak RSS, PSS and /dev/shm chunks of a worker's process tree, sampled every 50 ms."""

    def __init__(self, pid: int) -> None:
        import psutil

        self.root = psutil.Process(pid)
        self.prefix = f"mars-{pid}-"
        self.peak = {"rss": 0, "pss": 0, "shm": 0, "pss+shm": 0}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self) -> dict[str, int]:
        self._stop.set()
        self._thread.join(10)
        return self.peak

    def _run(self) -> None:
        import psutil

        while not self._stop.wait(0.05):
            rss = pss = shm = 0
            for proc in [self.root, *self.root.children(recursive=True)]:
                try:
                    info = proc.memory_full_info()
                except psutil.Error:
                    continue
                rss, pss = rss + info.rss, pss + info.pss
            for entry in os.scandir("/dev/shm"):
                if entry.name.startswith(self.prefix):
                    try:
                        shm += entry.stat().st_size
                    except FileNotFoundError:
                        continue
            for key, value in (("rss", rss), ("pss", pss), ("shm", shm), ("pss+shm", pss + shm)):
                self.peak[key] = max(self.peak[key], value)


def cpu_seconds(pid: int) -> float:
    """User + system time of a process and its living descendants (steadier than wall time on a busy host)."""
    import psutil

    root = psutil.Process(pid)
    total = 0.0
    for proc in [root, *root.children(recursive=True)]:
        try:
            times = proc.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


def run(size_mib: int, worker: dict[str, Any]) -> dict[str, Any]:
    import mars.tensor as mt
    from mars.deploy.local import new_cluster

    n, chunk = size_mib * MiB // 8, 2 * MiB
    out: dict[str, Any] = {}
    config = {"worker": worker, "cluster": {"heartbeat_interval": 0.2}}
    with new_cluster(n_worker=1, n_cpu=2, web=False, config=config, start_method="spawn") as cluster:
        [info] = cluster.session._backend.call("get_workers")
        sampler = Sampler(info["pid"])
        cpu = cpu_seconds(info["pid"])
        try:
            start = time.perf_counter()
            a = mt.random.rand(n, chunk_size=chunk).execute()
            out["rand"] = time.perf_counter() - start
            start = time.perf_counter()
            total = a.sum().execute().fetch()
            out["sum"] = time.perf_counter() - start
            start = time.perf_counter()
            b = mt.sort(a).execute()
            out["sort"] = time.perf_counter() - start
            out["cpu"] = cpu_seconds(info["pid"]) - cpu
            start = time.perf_counter()
            ordered = bool((b[1:] >= b[:-1]).all().execute().fetch())
            same = abs(float(b.sum().execute().fetch()) - float(total)) <= 1e-9 * abs(float(total))
            out["check"] = time.perf_counter() - start
            out["correct"] = ordered and same
            time.sleep(0.5)  # one more heartbeat
            [info] = cluster.session._backend.call("get_workers")
        finally:
            out["peak"] = sampler.stop()
        out["worker"] = {k: v for k, v in info.items() if k.startswith(("storage_", "execution_", "memory_"))}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="512 MiB")
    parser.add_argument("--size-mib", type=int, default=2048)
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    size = 512 if args.quick else args.size_mib
    cache, phy = size // 8, size // 4 + 384
    figures: dict[str, Any] = {"size_mib": size, "cache_mib": cache, "phy_mib": phy}
    with tempfile.TemporaryDirectory(prefix="mars-bench-spill-") as spill:
        roots = [os.path.join(spill, "a"), os.path.join(spill, "b")]
        figures["spilling"] = run(size, {"cache_mem": f"{cache}m", "phy_mem": f"{phy}m", "spill_dirs": roots})
        figures["in memory"] = run(size, {"cache_mem": f"{4 * size}m", "phy_mem": "90%", "spill_dirs": roots})
    report(figures)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1)


def report(figures: dict[str, Any]) -> None:
    size, cache, phy = figures["size_mib"], figures["cache_mib"], figures["phy_mib"]
    print(f"{size} MiB of float64 in 16 MiB chunks; one worker, 2 slots; --cache-mem {cache}m --phy-mem {phy}m "
          f"(soft {0.75 * phy:.0f} MiB, hard {0.9 * phy:.0f} MiB)")
    print(f"{'':12}{'rand':>8}{'sum':>8}{'sort':>8}{'check':>8}  {'peak rss':>9}{'pss':>8}{'shm':>8}{'pss+shm':>9}"
          f"  {'spilled':>9}  ok")
    for name in ("spilling", "in memory"):
        f = figures[name]
        peak = {k: v / MiB for k, v in f["peak"].items()}
        spilled = f["worker"].get("storage_spilled_bytes_total", 0) / MiB
        print(f"{name:12}" + "".join(f"{f[k]:7.2f}s" for k in ("rand", "sum", "sort", "check"))
              + f"  {peak['rss']:8.0f}M{peak['pss']:7.0f}M{peak['shm']:7.0f}M{peak['pss+shm']:8.0f}M"
              + f"  {spilled:8.0f}M  {'yes' if f['correct'] else 'NO'}")
    s, m = figures["spilling"], figures["in memory"]
    work = ("rand", "sum", "sort")
    slowdown = sum(s[k] for k in work) / max(sum(m[k] for k in work), 1e-9)
    print(f"spilling costs {slowdown:.2f}x the in-memory wall time (rand + sum + sort) and "
          f"{s['cpu'] / max(m['cpu'], 1e-9):.2f}x its CPU time ({s['cpu']:.1f} s against {m['cpu']:.1f} s)")
    checks = {
        "both runs correct": s["correct"] and m["correct"],
        "chunks in /dev/shm within --cache-mem + 2 chunks": s["peak"]["shm"] <= (cache + 32) * MiB,
        "worker (pss + shm) under the hard limit": s["peak"]["pss+shm"] <= 0.9 * phy * MiB,
        "it spilled": s["worker"].get("storage_spilled_bytes_total", 0) > 0,
    }
    for what, ok in checks.items():
        print(f"{'PASS' if ok else 'FAIL'}  {what}")


if __name__ == "__main__":
    main()
