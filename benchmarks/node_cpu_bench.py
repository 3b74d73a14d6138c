"""Where a job's CPU goes: each node process's CPU seconds per job, for comparing two commits.

Run: ``.venv/bin/python benchmarks/node_cpu_bench.py [--seconds S] [--rounds N] [--json PATH]``;
for another commit, check it out elsewhere (``git worktree add /tmp/old REV``) and run this file
with ``PYTHONPATH=/tmp/old``: the nodes it starts import that tree's ``mars`` too.

A best-of wall time swings by 15% between identical runs on a shared 2-core
machine; CPU seconds per process, averaged over many jobs, show a few per
cent. ``new_cluster(n_worker=2, n_cpu=1)``; the job is the sum over 10,000
chunks of size 1 (``cluster_bench``'s sum10k), run back to back for
``--seconds``, after one untimed run. Reported per job: wall time, and the
CPU of the supervisor, of each worker's main process, of its slot processes,
and of this client; then the CPU per second of the same processes idle.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np
import psutil


def _processes(root: psutil.Process) -> dict[str, list[psutil.Process]]:
    """The cluster's processes by role: the first child is the supervisor, the others workers."""
    nodes = sorted(root.children(), key=lambda p: p.pid)
    roles: dict[str, list[psutil.Process]] = {"supervisor": nodes[:1], "worker main": nodes[1:], "slots": []}
    for worker in nodes[1:]:
        roles["slots"].extend(worker.children(recursive=True))
    roles["client"] = [root]
    return roles


def _cpu(roles: dict[str, list[psutil.Process]]) -> dict[str, float]:
    out = {}
    for role, procs in roles.items():
        total = 0.0
        for p in procs:
            try:
                total += sum(p.cpu_times()[:2])
            except psutil.NoSuchProcess:
                pass
        out[role] = total
    return out


def one_round(seconds: float) -> dict[str, Any]:
    import mars
    import mars.tensor as mt
    from mars.deploy.local import new_cluster

    y = np.random.default_rng(1).random(10_000)
    with new_cluster(n_worker=2, n_cpu=1, web=True):
        mt.tensor(y, chunk_size=1).sum().execute().fetch()
        time.sleep(1.0)  # start-up work (imports on a thread) is not the job's
        roles = _processes(psutil.Process())
        before, start, n = _cpu(roles), time.perf_counter(), 0
        while time.perf_counter() - start < seconds:
            assert np.isclose(mt.tensor(y, chunk_size=1).sum().execute().fetch(), y.sum())
            n += 1
        wall, after = (time.perf_counter() - start) / n, _cpu(roles)
        time.sleep(0.1)
        idle_start = _cpu(roles)
        time.sleep(3.0)
        idle_end = _cpu(roles)
    return {"mars": mars.__file__, "jobs": n, "wall_per_job": wall,
            "cpu_per_job": {k: (after[k] - before[k]) / n for k in before},
            "idle_cpu_per_s": {k: (idle_end[k] - idle_start[k]) / 3.0 for k in idle_start}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="jobs back to back for this long")
    parser.add_argument("--rounds", type=int, default=1, help="clusters started one after another")
    parser.add_argument("--json", help="also write the rounds here")
    args = parser.parse_args()
    rounds = [one_round(args.seconds) for _ in range(args.rounds)]
    print(f"mars from {rounds[0]['mars']}")
    for r in rounds:
        cpu = "  ".join(f"{k} {v:.3f}" for k, v in r["cpu_per_job"].items())
        idle = "  ".join(f"{k} {v:.3f}" for k, v in r["idle_cpu_per_s"].items())
        print(f"{r['jobs']} jobs, wall {r['wall_per_job']:.3f} s/job; CPU s/job: {cpu}; idle CPU s/s: {idle}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rounds, f, indent=1)


if __name__ == "__main__":
    main()
