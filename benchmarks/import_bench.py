"""Wall time of ``import mars`` (and ``import mars.oscar``) in a fresh interpreter.

Run: ``.venv/bin/python benchmarks/import_bench.py``. Reports the median of
ten runs of ``python -c "import X"`` minus the median of ``python -c "pass"``,
and the slowest modules that ``-X importtime`` lists for ``mars.oscar``.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

RUNS = 10


def wall(code: str) -> float:
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def slowest_imports(module: str, top: int = 8) -> list[tuple[int, str]]:
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                         capture_output=True, text=True, check=True).stderr
    rows = []
    for line in err.splitlines()[1:]:  # "import time: self | cumulative | name"
        fields = line.split("|")
        try:
            rows.append((int(fields[1]), fields[2].rstrip()))
        except (IndexError, ValueError):
            continue
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    base = wall("pass")
    print(f"interpreter start-up: {base * 1e3:.1f} ms (subtracted below)")
    for module in ("mars", "mars.oscar", "numpy", "pandas"):
        print(f"import {module:12} {(wall(f'import {module}') - base) * 1e3:8.1f} ms")
    print("\nslowest cumulative imports under mars.oscar (us):")
    for cumulative, name in slowest_imports("mars.oscar"):
        print(f"  {cumulative:8d}  {name}")


if __name__ == "__main__":
    main()
