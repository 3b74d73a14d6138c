"""Timing helpers shared by the benchmark scripts (each run as ``python benchmarks/<name>.py``)."""

from __future__ import annotations

import time
from typing import Any, Callable


def best_of(fn: Callable[[], Any], repeat: int) -> float:
    """The fastest of ``repeat`` timed calls of ``fn``, after one untimed call (imports, page faults, caches)."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def once(fn: Callable[[], Any]) -> float:
    """One timed call: for workloads that take the peers tens of seconds."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start
