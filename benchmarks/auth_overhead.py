"""What authentication costs: this tree beside an older checkout, in one run.

Run: ``git worktree add /tmp/base <commit before>`` then
``.venv/bin/python benchmarks/auth_overhead.py --base /tmp/base [--rounds 3] [--json PATH]``.

Every cluster has a token now (the security issue); the target is that
actor calls and the tiny job are no more than 5% slower than before, since
a connection authenticates once and its calls then run as they did. The
script alternates the two trees, ``--rounds`` times each: ``oscar_bench.py
--no-peers`` (this tree's pools with a token, the base's as they were) and
``cluster_bench.py --quick --no-dask`` (its tiny-job latencies), then prints
the median of each figure per tree and their ratio. Figures are times
(lower is better) unless their name says per second.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TINY = ("tiny", "tiny (actor protocol)")


def _run(tree: str, script: str, args: list[str]) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        env = dict(os.environ, PYTHONPATH=tree)
        subprocess.run([sys.executable, os.path.join(tree, "benchmarks", script), *args, "--json", out.name],
                       env=env, cwd=tree, check=True, stdout=subprocess.DEVNULL)
        with open(out.name) as f:
            return json.load(f)


def _flat(figures: dict[str, Any], prefix: str = "") -> dict[str, float]:
    """Numeric leaves as ``a/b`` names; latencies keep their median."""
    flat: dict[str, float] = {}
    for key, value in figures.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flat(value, name + "/"))
        elif isinstance(value, list) and len(value) == 2:  # a latency: [median, p99] in microseconds
            flat[f"{name} median us"], flat[f"{name} p99 us"] = map(float, value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            flat[name] = float(value)
    return flat


def one_round(tree: str) -> dict[str, float]:
    oscar = _flat(_run(tree, "oscar_bench.py", ["--no-peers"])["mars"], "oscar ")
    cluster = _run(tree, "cluster_bench.py", ["--quick", "--no-dask", "--repeat", "5"])
    mars = cluster.get("mars", cluster)
    return {**oscar, **{f"cluster {k}": float(mars[k]) for k in TINY if k in mars}}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--base", required=True, help="a checkout of the commit to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    runs: dict[str, list[dict[str, float]]] = {"base": [], "this": []}
    for _ in range(args.rounds):
        runs["base"].append(one_round(os.path.abspath(args.base)))
        runs["this"].append(one_round(ROOT))
    medians = {tree: {k: statistics.median(r[k] for r in rounds if k in r) for k in rounds[0]}
               for tree, rounds in runs.items()}
    print(f"{'figure':44}{'base':>12}{'this':>12}{'this/base':>11}  (slower by)")
    for name in medians["base"]:
        if name in medians["this"]:
            base, this = medians["base"][name], medians["this"][name]
            ratio = this / base if base else float("nan")
            slower = 1 / ratio - 1 if "/s" in name else ratio - 1  # rates: higher is better
            print(f"{name:44}{base:12.6g}{this:12.6g}{ratio:11.3f}  {slower:+.1%}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"runs": runs, "medians": medians}, f, indent=2)


if __name__ == "__main__":
    main()
