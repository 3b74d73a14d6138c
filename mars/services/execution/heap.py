"""The C library's heap in a slot process: memory a subtask frees is kept for the next one.

glibc's ``malloc`` serves a request over its mmap threshold (128 KiB at
first) with fresh pages from the kernel, and gives them back on ``free``.
A partition's columns are such requests: a filter of 500,000 rows
allocates a few arrays of 2-4 MB, and the next subtask asks for the same
sizes again. Each fresh page costs a fault (the kernel zeroes it): about
2,000 faults, 4 ms, in a filter whose own work takes 4 ms (measured on a
2-core host, TPC-H-like partitions).

glibc raises the threshold by itself as it frees mapped blocks, up to
32 MiB, and trims the heap's free top above twice the threshold; a slot's
mix of sizes keeps it well below that for long. :func:`keep_freed_memory`
sets both at once to where glibc would end up (a 32 MiB threshold, 64 MiB
trimmed), so that a slot reuses its heap from its first subtasks: up to
64 MiB freed per heap stays in the process, counted in its memory like
any other (see :mod:`.memory`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging

logger = logging.getLogger(__name__)

#: ``mallopt`` parameters (glibc's malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: requests up to this size come from the heap (glibc's own ceiling for its adaptive threshold)
MMAP_THRESHOLD = 32 << 20
#: free memory at the heap's top beyond this goes back to the kernel
TRIM_THRESHOLD = 64 << 20


def keep_freed_memory() -> bool:
    """Set this process's heap thresholds (see the module); False where the C library is not glibc."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl, macOS: no mallopt, or one without these parameters
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    done = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1 and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
    if not done:
        logger.debug("mallopt refused the heap thresholds: freed memory goes back to the kernel as before")
    return done
