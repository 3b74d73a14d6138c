"""Wall time of ``import mars`` and ``import mars.oscar`` in a fresh interpreter.

Run: ``.venv/bin/python benchmarks/import_bench.py [--runs N] [--json PATH]``.

Reports the median of ``N`` (default 10) runs of ``python -c "import X"`` minus
the median of as many runs of ``python -c "pass"``, alternating with them
(interpreter start-up, site and the editable-install finder), beside numpy,
pandas and, when installed, xoscar, with bytecode cached as for an installed
package; then, from ``python -X importtime`` (median over 5 runs), the slowest
``mars.*`` modules and the slowest modules of any package that each import
pulls in (those the interpreter loads at start-up left out).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict

MODULES = ("mars", "mars.oscar")
CONTEXT = ("numpy", "pandas", "xoscar")
IMPORTTIME_RUNS = 5


def cached_env(prefix: str) -> dict[str, str]:
    """An environment in which bytecode is cached, under ``prefix`` (outside the source tree).

    Installed packages ship their .pyc; an editable checkout run with
    PYTHONDONTWRITEBYTECODE=1 would otherwise recompile mars at every start.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = prefix
    return env


def wall(code: str, runs: int, env: dict[str, str]) -> tuple[float, float]:
    """Median wall seconds of ``python -c code`` and of ``python -c pass``, fresh interpreters.

    The two alternate, after one warm-up of each, so that the machine's drift
    during the runs weighs on both alike.
    """
    samples: dict[str, list[float]] = {code: [], "pass": []}
    for i in range(runs + 1):
        for each in (code, "pass"):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", each], check=True, env=env)
            if i:
                samples[each].append(time.perf_counter() - start)
    return statistics.median(samples[code]), statistics.median(samples["pass"])


def importtime(module: str, env: dict[str, str]) -> list[tuple[int, int, str]]:
    """(self us, cumulative us, name) per module that ``import module`` loads, medians over runs."""
    samples: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for _ in range(IMPORTTIME_RUNS):
        err = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                             capture_output=True, text=True, check=True, env=env).stderr
        for line in err.splitlines():  # "import time: self [us] | cumulative | imported package"
            fields = line.removeprefix("import time:").split("|")
            try:
                own, cumulative, name = int(fields[0]), int(fields[1]), fields[2].strip()
            except (IndexError, ValueError):
                continue  # the header line
            samples[name].append((own, cumulative))
    return [(int(statistics.median(s for s, _ in v)), int(statistics.median(c for _, c in v)), name)
            for name, v in samples.items()]


def print_slowest(module: str, rows: list[tuple[int, int, str]], startup: set[str], top: int) -> None:
    rows = [r for r in rows if r[2] not in startup]
    ours = sorted((r for r in rows if r[2] == "mars" or r[2].startswith("mars.")), key=lambda r: -r[1])
    print(f"\n`import {module}`: {len(rows)} modules loaded beyond start-up's, {len(ours)} of them mars.*")
    print(f"  slowest mars.* by cumulative time (us):   {'self':>8} {'cumulative':>10}")
    for self_us, cumulative, name in ours[:top]:
        print(f"    {name:40} {self_us:8d} {cumulative:10d}")
    print("  slowest modules of any package by own time (us):")
    for self_us, _, name in sorted(rows, reverse=True)[:top]:
        print(f"    {name:40} {self_us:8d}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="interpreters started per figure (default 10)")
    parser.add_argument("--top", type=int, default=8, help="rows per importtime list (default 8)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="mars-import-bench-") as prefix:
        env = cached_env(prefix)
        for module in MODULES + CONTEXT:
            if module not in MODULES and importlib.util.find_spec(module) is None:
                continue
            took, base = wall(f"import {module}", args.runs, env)
            figures[module] = (took - base) * 1e3
            print(f"import {module:12} {figures[module]:8.1f} ms   (start-up {base * 1e3:.1f} ms subtracted)")
        took, base = wall("import mars.oscar", args.runs, dict(os.environ))
        figures["mars.oscar, this environment"] = (took - base) * 1e3
        flag = os.environ.get("PYTHONDONTWRITEBYTECODE", "unset")
        print(f"import mars.oscar in this shell's environment (PYTHONDONTWRITEBYTECODE={flag}): "
              f"{(took - base) * 1e3:.1f} ms")
        startup = {name for _, _, name in importtime("sys", env)}
        for module in MODULES:
            print_slowest(module, importtime(module, env), startup, args.top)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"import ms, start-up subtracted": figures}, f, indent=2)


if __name__ == "__main__":
    main()
