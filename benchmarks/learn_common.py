"""What ``learn_bench.py`` and its dask-ml peer (``peers/daskml_learn.py``) share: the data and the measuring.

numpy and psutil only, so that the peer's own virtualenv can import it too.
Peak memory is the resident set of this process and its children (a
LocalCluster's workers), sampled every 2 ms during one fit, less what it was
just before the fit: the memory the fit itself needed.
"""

from __future__ import annotations

import ctypes
import gc
import os
import threading
import time
from collections.abc import Callable
from typing import Any, Self

import numpy as np
import psutil

__all__ = ["BLAS_ENV", "PeakRSS", "best_of_with_peak", "trim", "workloads"]

#: one BLAS / OpenMP thread per worker, so that every engine uses the same cores (PEERS.md)
BLAS_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def workloads(quick: bool) -> dict[str, Any]:
    """10M (``quick``: 1M) x 20 float64 rows with some cluster structure, labels of a noisy linear rule,
    the row chunk size (10 chunks) and 8 initial centres drawn from the rows."""
    n, d = (1_000_000 if quick else 10_000_000), 20
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, d))
    x[:, :5] += rng.integers(0, 4, size=(n, 1)) * 3.0
    y = (x @ rng.standard_normal(d) + rng.standard_normal(n) > 0).astype(np.int64)
    return {"x": x, "y": y, "chunk": n // 10, "init": x[rng.choice(n, 8, replace=False)]}


def trim() -> None:
    """Give the heap's free memory back to the system (glibc), so that a fit's rise is not hidden by the last's."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


class PeakRSS:
    """``with PeakRSS() as p: ...`` then ``p.peak``: the largest rise in resident bytes of this process tree."""

    def __init__(self, interval: float = 0.002):
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._procs: list[psutil.Process] = []

    def _rss(self) -> int:
        total = 0
        for p in self._procs:
            try:
                total += p.memory_info().rss
            except psutil.Error:  # a worker that went away
                pass
        return total

    def _sample(self) -> None:
        while not self._stop.wait(self.interval):
            self.peak = max(self.peak, self._rss() - self._base)

    def __enter__(self) -> Self:
        gc.collect()
        trim()
        me = psutil.Process(os.getpid())
        self._procs = [me, *me.children(recursive=True)]
        self._base = self._rss()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._rss() - self._base)


def best_of_with_peak(fn: Callable[[], Any], repeat: int) -> tuple[float, int]:
    """(fastest of ``repeat`` timed calls, peak memory rise of the first, untimed, call)."""
    with PeakRSS() as mem:
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), mem.peak
