"""Jobs on a cluster of processes whose workers are killed at random points: are the results right, and how slow?

Run: ``.venv/bin/python benchmarks/chaos_bench.py [--rounds 20] [--seed 0] [--workers 3]
[--kills 1] [--io-kills 0] [--baseline 3] [--serial] [--quick] [--json PATH] [--log DIR]``.

A supervisor and ``--workers`` workers (one slot and one IO process each)
run as ``mars-supervisor``/``mars-worker`` processes on loopback, with
heartbeats every 0.2 s and a worker taken for lost after 2 s of silence (the
``ProcessCluster`` of ``tests/process_nodes.py`` that the chaos tests use).
Each round opens a session, puts
seeded inputs on the cluster (untimed), then submits five jobs, all at once
(one after another with ``--serial``): a tensor reduction, a matrix product,
and a dataframe groupby, sort and hash merge (over 128 MB in all, so both sides shuffle). At seeded
random moments within the shortest undisturbed round it SIGKILLs ``--kills``
random workers (whole process trees; at least one worker is always left) and
``--io-kills`` random IO processes of the workers left. Each job's result is
checked against numpy or pandas on the same data, and timed from its
submission to its end. Killed workers are started again at the same address
before the next round.

One untimed round warms every op; the next ``--baseline`` rounds run
undisturbed. A job counts as hit when a kill landed while it ran; its
slowdown is its time over the median undisturbed time of the same job. The
report counts jobs, kills (and those that landed while jobs ran), jobs right,
wrong or failed (with the errors), losses the supervisor logged that no kill
accounts for, and the slowdown of hit jobs (ratio and extra seconds, median
and maximum). Target: every job right.

``--quick``: 3 rounds (1 baseline) on smaller data; the merge is then small
enough to run on one partition.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import re
import statistics
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd

import mars
import mars.dataframe as md
import mars.tensor as mt

HERE = os.path.dirname(os.path.abspath(__file__))
HARNESS = os.path.join(HERE, os.pardir, "tests", "process_nodes.py")


def load_harness() -> Any:
    """The tests' process-node harness (one copy of it, not two)."""
    spec = importlib.util.spec_from_file_location("process_nodes", HARNESS)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(f"the tests' process-node harness is not at {HARNESS}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass
class Job:
    name: str
    expr: Any
    check: Callable[[Any], None]


@dataclass
class Outcome:
    round: int
    job: str
    disturbed: bool  # a kill landed while it ran
    seconds: float
    ok: bool
    error: str = ""
    detail: str = ""  # the traceback, for the JSON


@dataclass
class RoundReport:
    round: int
    makespan: float = float("nan")
    wall: tuple[float, float] = (0.0, 0.0)  # time.time() at the first submission and at the last job's end
    kills: list[dict] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)


def sizes(quick: bool) -> dict[str, int]:
    if quick:
        return {"side": 600, "chunk": 100, "left": 200_000, "right": 100_000, "rows_chunk": 25_000}
    # the merge's sides: over options.chunk_store_limit (128 MB) in all, the right too big to broadcast
    return {"side": 1200, "chunk": 200, "left": 1_500_000, "right": 1_200_000, "rows_chunk": 150_000}


def frames(sess: Any, seed: int, s: dict[str, int]) -> tuple[Any, Any, pd.DataFrame, pd.DataFrame]:
    """Two frames made on the cluster (an upload would take longer than the jobs), with their values."""
    rs = mt.random.RandomState(seed)
    keys, cs = max(s["left"], s["right"]), s["rows_chunk"]
    left_t = mt.concatenate([mt.floor(rs.rand(s["left"], 1, chunk_size=(cs, 1)) * keys),
                             mt.floor(rs.rand(s["left"], 1, chunk_size=(cs, 1)) * 100),
                             rs.rand(s["left"], 5, chunk_size=(cs, 5))], axis=1)
    right_t = mt.concatenate([mt.floor(rs.rand(s["right"], 1, chunk_size=(cs, 1)) * keys),
                              rs.rand(s["right"], 2, chunk_size=(cs, 2))], axis=1)
    left = md.DataFrame(left_t, columns=["k", "g", *[f"x{i}" for i in range(5)]])
    right = md.DataFrame(right_t, columns=["k", "v", "w"])
    sess.execute(left, right)
    pleft, pright = sess.fetch(left, right)
    return left, right, pleft, pright


def make_jobs(sess: Any, seed: int, quick: bool) -> list[Job]:
    """The round's jobs, their inputs held on the cluster (a kill takes some of those along)."""
    s = sizes(quick)
    data = np.random.default_rng(seed)
    x, y = data.random((s["side"], s["side"])), data.random((s["side"], s["side"]))
    a, b = mt.tensor(x, chunk_size=s["chunk"]), mt.tensor(y, chunk_size=s["chunk"])
    sess.execute(a, b)
    left, right, pleft, pright = frames(sess, seed, s)

    def close_to(expected: Any) -> Callable[[Any], None]:
        return lambda got: np.testing.assert_allclose(got, expected, rtol=1e-9)

    grouped = pleft.groupby("g")[["x0", "x1"]].sum()
    return [
        Job("tensor reduction", (mt.sqrt(a) * 2 + b).sum(axis=0) + (a - b).max(axis=1),
            close_to((np.sqrt(x) * 2 + y).sum(axis=0) + (x - y).max(axis=1))),
        Job("matmul", (a @ b.T).sum(axis=1), close_to((x @ y.T).sum(axis=1))),
        Job("groupby", left.groupby("g")[["x0", "x1"]].sum(),
            lambda got: pd.testing.assert_frame_equal(got, grouped, check_exact=False, rtol=1e-9)),
        Job("sort", left.sort_values("x0"), lambda got: pd.testing.assert_frame_equal(got, pleft.sort_values("x0"))),
        Job("merge", left.merge(right, on="k"),
            lambda got: pd.testing.assert_frame_equal(got, pleft.merge(pright, on="k"))),
    ]


def plan_kills(pick: random.Random, cluster: Any, n_kills: int, n_io: int, window: float) -> list[tuple]:
    """``(when, kind, node)`` sorted by time: distinct workers, always leaving one alive."""
    alive = cluster.alive_workers()
    victims = pick.sample(alive, min(n_kills, len(alive) - 1))
    plan = [(pick.uniform(0, window), "worker", v) for v in victims]
    survivors = [w for w in alive if w not in victims]
    plan += [(pick.uniform(0, window), "io", pick.choice(survivors)) for _ in range(n_io)]
    return sorted(plan, key=lambda p: p[0])


def strike(cluster: Any, kind: str, node: Any) -> None:
    if kind == "worker":
        node.kill()
    else:
        cluster.io_process(node).kill()


@dataclass
class Clock:
    """When each job of a round was submitted and ended, in seconds from the round's start."""

    starts: list[float | None]
    ends: list[float | None]

    def running(self) -> int:
        return sum(s is not None and e is None for s, e in zip(self.starts, self.ends))


def watch(cluster: Any, submits: Sequence[Callable[..., Any]], serial: bool, plan: list[tuple],
          timeout: float) -> tuple[list[Any], Clock, list[dict]]:
    """Submit the jobs (one after another when ``serial``), strike as planned, and wait for every job."""
    started = time.perf_counter()
    clock = Clock([None] * len(submits), [None] * len(submits))
    futures: list[Any] = [None] * len(submits)
    kills: list[dict] = []
    plan = list(plan)
    while any(e is None for e in clock.ends) and time.perf_counter() - started < timeout:
        for i, submit in enumerate(submits):
            if futures[i] is None and (not serial or i == 0 or clock.ends[i - 1] is not None):
                clock.starts[i], futures[i] = time.perf_counter() - started, submit()
        while plan and plan[0][0] <= time.perf_counter() - started:
            _, kind, node = plan.pop(0)
            kill = {"kind": kind, "worker": node.address, "at": round(time.perf_counter() - started, 3),
                    "jobs_running": clock.running(), "wall": time.time()}
            strike(cluster, kind, node)
            kills.append(kill)
        for i, f in enumerate(futures):
            if f is not None and clock.ends[i] is None and f.done():
                clock.ends[i] = time.perf_counter() - started
        time.sleep(0.01)
    return futures, clock, kills


def run_round(cluster: Any, index: int, seed: int, args: argparse.Namespace, window: float | None) -> RoundReport:
    """One round: inputs (untimed), the jobs, the planned kills (none when ``window`` is None), checks."""
    report = RoundReport(index)
    with mars.new_session(cluster.url, default=False) as sess:
        jobs = make_jobs(sess, seed, args.quick)
        began = time.time()
        pick = random.Random(seed)
        plan = [] if window is None else plan_kills(pick, cluster, args.kills, args.io_kills, window)
        submits = [lambda job=job: sess.execute(job.expr, wait=False) for job in jobs]
        futures, clock, report.kills = watch(cluster, submits, args.serial, plan, args.timeout)
        report.makespan = max((e for e in clock.ends if e is not None), default=float("nan"))
        report.wall = (began, time.time())
        for job, future, start, end in zip(jobs, futures, clock.starts, clock.ends):
            hit = any(start is not None and start <= k["at"] and (end is None or k["at"] <= end)
                      for k in report.kills)
            seconds = end - start if start is not None and end is not None else float("nan")
            report.outcomes.append(check(index, job, sess, future, seconds, hit))
    return report


def check(index: int, job: Job, sess: Any, future: Any, seconds: float, disturbed: bool) -> Outcome:
    outcome = Outcome(index, job.name, disturbed, seconds, False)
    try:
        if future is None or not future.done():
            raise TimeoutError(f"{job.name} did not finish within the round's timeout")
        future.result(0)
        job.check(sess.fetch(job.expr))
        outcome.ok = True
    except AssertionError as e:
        outcome.error = "wrong result: " + str(e).strip().splitlines()[0]
        outcome.detail = traceback.format_exc()
    except Exception as e:  # noqa: BLE001 - every failure is a figure of the report
        outcome.error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        outcome.detail = traceback.format_exc()
    return outcome


def restore(cluster: Any, n_workers: int, report: RoundReport) -> None:
    """Workers killed in the round start again at their addresses."""
    for kill in report.kills:
        if kill["kind"] == "worker":
            cluster.start_worker(int(kill["worker"].rsplit(":", 1)[1]))
    cluster.top_up(n_workers)


_LOSS = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) .*worker (\S+) "
                   r"(?:lost: no heartbeat|declared lost by a caller)")


def losses(cluster: Any) -> list[tuple[float, str]]:
    """``(time, address)`` of each worker the supervisor took for lost, from what it printed."""
    out = []
    for line in list(cluster.supervisor.output):
        m = _LOSS.match(line)
        if m:
            out.append((datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S,%f").timestamp(), m[2]))
    return out


def unexplained(found: list[tuple[float, str]], kills: list[dict], since: float) -> list[tuple[float, str]]:
    """Losses after ``since`` that no kill of that worker (at most one loss each) accounts for."""
    pending = sorted((k["wall"], k["worker"]) for k in kills if k["kind"] == "worker")
    out = []
    for when, address in sorted(found):
        if when < since:
            continue
        cause = next((k for k in pending if k[1] == address and k[0] <= when + 0.01), None)
        if cause is None:
            out.append((when, address))
        else:
            pending.remove(cause)
    return out


def summarize(baseline: list[RoundReport], rounds: list[RoundReport], unplanned: int,
              during: int) -> dict[str, Any]:
    times: dict[str, list[float]] = {}
    for o in (o for r in baseline for o in r.outcomes if o.ok):
        times.setdefault(o.job, []).append(o.seconds)
    undisturbed = {job: statistics.median(t) for job, t in times.items()}
    jobs = [o for r in rounds for o in r.outcomes]
    kills = [k for r in rounds for k in r.kills]
    hit = [o for o in jobs if o.disturbed and o.ok and o.job in undisturbed]
    ratios = [o.seconds / undisturbed[o.job] for o in hit]
    extra = [o.seconds - undisturbed[o.job] for o in hit]
    slow = {}
    for job, seconds in undisturbed.items():
        mine = [o.seconds / seconds for o in hit if o.job == job]
        if mine:
            slow[job] = {"median": statistics.median(mine), "max": max(mine), "jobs": len(mine)}
    wrong = [o for o in jobs if o.error.startswith("wrong result")]
    return {
        "rounds": len(rounds),
        "jobs run": len(jobs),
        "jobs running at a kill": sum(o.disturbed for o in jobs),
        "workers killed": sum(1 for k in kills if k["kind"] == "worker"),
        "IO processes killed": sum(1 for k in kills if k["kind"] == "io"),
        "kills while jobs ran": sum(1 for k in kills if k["jobs_running"]),
        "jobs completed correctly": sum(o.ok for o in jobs),
        "jobs wrong": len(wrong),
        "jobs failed": sum(not o.ok for o in jobs) - len(wrong),
        "losses no kill caused": unplanned,
        "... of them while jobs ran": during,
        "slowdown median": statistics.median(ratios) if ratios else float("nan"),
        "slowdown max": max(ratios) if ratios else float("nan"),
        "extra seconds median": statistics.median(extra) if extra else float("nan"),
        "extra seconds max": max(extra) if extra else float("nan"),
        "undisturbed seconds": undisturbed,
        "slowdown by job": slow,
        "failures": [{k: v for k, v in asdict(o).items() if k != "detail"} for o in jobs if not o.ok],
    }


def print_report(summary: dict[str, Any]) -> None:
    print()
    for key in ("rounds", "jobs run", "jobs running at a kill", "workers killed", "IO processes killed",
                "kills while jobs ran", "jobs completed correctly", "jobs wrong", "jobs failed",
                "losses no kill caused", "... of them while jobs ran"):
        print(f"{key:<28}{summary[key]:>10}")
    print(f"{'slowdown median / max':<28}{summary['slowdown median']:>9.2f}x / {summary['slowdown max']:.2f}x")
    print(f"{'extra seconds median / max':<28}{summary['extra seconds median']:>9.2f}s / "
          f"{summary['extra seconds max']:.2f}s")
    print(f"\n{'job':<18}{'undisturbed s':>14}{'slowdown median':>17}{'max':>8}")
    for job, seconds in summary["undisturbed seconds"].items():
        s = summary["slowdown by job"].get(job, {"median": float("nan"), "max": float("nan")})
        print(f"{job:<18}{seconds:>14.2f}{s['median']:>16.2f}x{s['max']:>7.2f}x")
    for f in summary["failures"]:
        print(f"FAILED round {f['round']} {f['job']}: {f['error']}")
    ok = summary["jobs completed correctly"] == summary["jobs run"]
    print(f"\n{'PASS' if ok else 'FAIL'}: every job completes correctly while at least one worker stays alive")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, help="rounds with kills (default 20; 3 with --quick)")
    parser.add_argument("--baseline", type=int, help="undisturbed rounds first (default 3; 1 with --quick)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--kills", type=int, default=1, help="workers killed per round (at most workers - 1)")
    parser.add_argument("--io-kills", type=int, default=0, help="IO processes killed per round")
    parser.add_argument("--serial", action="store_true", help="a round's jobs one after another, not at once")
    parser.add_argument("--timeout", type=float, default=300.0, help="a round's jobs fail after this long")
    parser.add_argument("--quick", action="store_true", help="smaller data, fewer rounds: a smoke run")
    parser.add_argument("--json", metavar="PATH", help="write the figures and every round's details there")
    parser.add_argument("--log", metavar="DIR", help="keep the nodes' output (DIR/nodes.log) and config there")
    args = parser.parse_args()
    if args.rounds is None:
        args.rounds = 3 if args.quick else 20
    if args.baseline is None:
        args.baseline = 1 if args.quick else 3
    if args.workers < 2 or not 1 <= args.kills < args.workers or args.baseline < 1:
        parser.error(f"need --workers >= 2, 1 <= --kills < --workers and --baseline >= 1; got "
                     f"{args.workers}, {args.kills}, {args.baseline}")
    return args


def run(args: argparse.Namespace, workdir: str) -> dict[str, Any]:
    harness = load_harness()
    with open(os.path.join(workdir, "nodes.log"), "w") as log:
        cluster = harness.ProcessCluster(workdir, n_workers=args.workers, log=log)
        try:
            run_round(cluster, -1, args.seed * 1000 + 999, args, None)  # untimed: first calls of every op
            since = time.time()
            baseline = [announce(run_round(cluster, i, args.seed * 1000 + i, args, None))
                        for i in range(args.baseline)]
            # kills fall within the shortest undisturbed round, so that most land while jobs run
            window = 0.9 * min(r.makespan for r in baseline)
            rounds: list[RoundReport] = []
            for i in range(args.baseline, args.baseline + args.rounds):
                rounds.append(announce(run_round(cluster, i, args.seed * 1000 + i, args, window)))
                restore(cluster, args.workers, rounds[-1])
            kills = [k for r in rounds for k in r.kills]
            unplanned = unexplained(losses(cluster), kills, since)
            during = [u for u in unplanned if any(r.wall[0] <= u[0] <= r.wall[1] for r in baseline + rounds)]
        finally:
            cluster.stop()
    summary = summarize(baseline, rounds, len(unplanned), len(during))
    summary["rounds_detail"] = [asdict(r) for r in baseline + rounds]
    return summary


def announce(report: RoundReport) -> RoundReport:
    jobs = ", ".join(f"{o.job} {o.seconds:.2f}s{'' if o.ok else ' FAILED'}" for o in report.outcomes)
    kills = "".join(f"; killed {k['kind']} of {k['worker']} at {k['at']:.2f}s" for k in report.kills)
    print(f"round {report.round}: {jobs}{kills}", flush=True)
    return report


def main() -> None:
    args = parse_args()
    started = time.perf_counter()
    if args.log:
        os.makedirs(args.log, exist_ok=True)
        summary = run(args, args.log)
    else:
        with tempfile.TemporaryDirectory(prefix="chaos-bench-") as workdir:
            summary = run(args, workdir)
    print_report(summary)
    print(f"({time.perf_counter() - started:.0f} s in all)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), **summary}, f, indent=1, default=str)


if __name__ == "__main__":
    main()
