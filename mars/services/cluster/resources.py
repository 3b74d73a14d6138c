"""What a worker may use (``--n-cpu``, memory limits) and what it does use.

Usage is measured over the worker's own process tree (its main pool and the
sub pools below it), never machine-wide, so that two workers on one host, or
other programs, do not show up in each other's figures.
"""

from __future__ import annotations

import math
import os
import re
import threading
import time
from collections.abc import Callable, Collection
from numbers import Integral, Real
from typing import Any

import psutil

#: CPU figures over a window shorter than this are mostly noise: the previous figure is kept
_MIN_WINDOW = 0.05
#: seconds between two readings of a process's PSS (see ProcessTreeMonitor)
PSS_EVERY = 5.0
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

_UNITS = {
    "": 1, "b": 1,
    "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
    "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
    "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
    "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
}  # fmt: skip
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-z]*)\s*$")
_PERCENT = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*%\s*$")


class ProcessTreeMonitor:
    """CPU and memory use of a process and all its living descendants.

    CPU use is the user + system time the tree spent between two samples over
    the wall time between them, in cores, clamped to ``[0, n_cpu]``. Times are
    kept per process, so a child that exits between samples takes its history
    with it instead of making the difference negative. Memory is the sum of
    the proportional set sizes (PSS: shared pages split among the processes
    that map them) where the OS gives them, else of resident sizes.

    PSS costs a walk of the process's page tables: about 12 ms for a slot
    that maps 1.5 GB of a worker's held tables, once a second per process of
    the tree. It is read every :data:`PSS_EVERY` seconds; the samples between
    add to it the change in the process's anonymous resident memory
    (``/proc/<pid>/statm``, microseconds), where a chunk function's arrays
    live. Samples may be taken from any thread (a heartbeat takes them off its
    event loop), one at a time.

    Examples
    --------
    >>> import os
    >>> monitor = ProcessTreeMonitor(os.getpid(), n_cpu=1, memory_limit=1 << 30)
    >>> cores, rss = monitor.sample()
    >>> 0.0 <= cores <= 1.0 and rss > 0
    True
    """

    def __init__(self, pid: int, n_cpu: int, memory_limit: int) -> None:
        if n_cpu <= 0:
            raise ValueError(f"n_cpu must be positive, got {n_cpu!r}")
        self.pid = pid
        self.n_cpu = n_cpu
        self.memory_limit = memory_limit
        self._root = psutil.Process(pid)
        self._use_pss = True
        #: PSS by (pid, create time), read every PSS_EVERY seconds
        self._pss = AnonFollowed()
        self._lock = threading.Lock()
        self._last_cpu = 0.0
        self._last_wall = time.monotonic()
        self._times: dict[tuple[int, float], float] = self._measure()[0]

    def sample(self) -> tuple[float, int]:
        """``(cores busy since the previous sample, memory bytes now)`` of the process tree."""
        with self._lock:
            wall = time.monotonic()
            times, memory = self._measure()
            self._pss.keep_only(times)  # forget exited processes
            elapsed = wall - self._last_wall
            if elapsed < _MIN_WINDOW:
                return self._last_cpu, memory
            busy = sum(max(0.0, t - self._times.get(key, 0.0)) for key, t in times.items())
            self._times, self._last_wall = times, wall
            self._last_cpu = min(max(busy / elapsed, 0.0), float(self.n_cpu))
            return self._last_cpu, memory

    def _measure(self) -> tuple[dict[tuple[int, float], float], int]:
        """CPU seconds by (pid, create time) — pids get reused — and total memory of the tree."""
        try:
            procs = [self._root, *self._root.children(recursive=True)]
        except psutil.NoSuchProcess:
            raise ProcessLookupError(f"process {self.pid} that the monitor watches is gone") from None
        times: dict[tuple[int, float], float] = {}
        memory = 0
        for proc in procs:
            try:
                with proc.oneshot():
                    # children_user/children_system are left out: a reaped child's time
                    # was already counted while it lived
                    cpu = proc.cpu_times()
                    key = (proc.pid, proc.create_time())
                    times[key] = cpu.user + cpu.system
                    memory += self._memory_of(proc, key)
            except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
                continue  # exited (or was never ours to read) since children() listed it
        return times, memory

    def _memory_of(self, proc: psutil.Process, key: tuple[int, float]) -> int:
        if self._use_pss:
            try:
                pss = self._pss.read(key, proc.pid, lambda: _pss_of(proc), time.monotonic(), PSS_EVERY)
            except psutil.AccessDenied:
                pss = None
            if pss is not None:
                return pss
            self._use_pss = False  # not on this platform: resident size from now on
        return int(proc.memory_info().rss)


def _pss_of(proc: psutil.Process) -> int | None:
    pss = getattr(proc.memory_full_info(), "pss", None)
    return None if pss is None else int(pss)


class AnonFollowed:
    """A costly memory reading of each process (its PSS: a walk of its page tables), taken again after
    ``every`` seconds; the readings between are the last one plus the change since in the process's
    anonymous resident memory (:func:`anon_bytes`, microseconds), where a chunk function's arrays land.

    >>> import os
    >>> followed = AnonFollowed()
    >>> followed.read("me", os.getpid(), lambda: 1000, now=0.0, every=5.0)
    1000
    >>> followed.read("me", os.getpid(), lambda: 2000, now=1.0, every=5.0) >= 0  # followed, not read again
    True
    """

    def __init__(self) -> None:
        #: by key: (when read, the reading, anonymous resident bytes then)
        self._last: dict[Any, tuple[float, int, int]] = {}

    def read(self, key: Any, pid: int, precise: Callable[[], int | None], now: float, every: float) -> int | None:
        """Process ``pid``'s memory: ``precise()`` when its last reading is ``every`` seconds old (or none)."""
        anon = anon_bytes(pid)
        last = self._last.get(key)
        if last is not None and anon is not None and now - last[0] < every:
            return max(0, last[1] + anon - last[2])
        value = precise()
        if value is not None and anon is not None:
            self._last[key] = (now, value, anon)
        return value

    def keep_only(self, keys: Collection) -> None:
        """Forget the readings of processes not among ``keys`` (gone)."""
        self._last = {k: v for k, v in self._last.items() if k in keys}


def anon_bytes(pid: int) -> int | None:
    """Anonymous resident bytes of process ``pid`` (resident less file-backed and shared memory); None
    where ``/proc/<pid>/statm`` cannot be read."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            fields = f.read().split()
        return (int(fields[1]) - int(fields[2])) * _PAGE
    except (OSError, IndexError, ValueError):
        return None


def parse_memory_limit(value: str | int | float | None, total: int | None = None) -> int:
    """Bytes from a memory limit as given on the command line or in a config file.

    Accepted: a byte count (``1073741824``), a size with a binary unit
    (``"4g"``, ``"512m"``, ``"1.5GiB"``, ``"100kb"``; k/m/g/t all mean powers
    of 1024), a percentage (``"50%"``) or a fraction in (0, 1] (``0.5``) of
    ``total``, and ``None`` for all of ``total``. ``total`` defaults to this
    machine's memory (or its container's limit, if lower).

    Raises
    ------
    ValueError
        The value is none of these, or not positive; the message names it.

    Examples
    --------
    >>> parse_memory_limit("4g"), parse_memory_limit("1.5GiB"), parse_memory_limit(1024)
    (4294967296, 1610612736, 1024)
    >>> parse_memory_limit("50%", total=1000), parse_memory_limit(0.25, total=1000)
    (500, 250)
    """
    rule = (
        "a memory limit must be a byte count, a size like '4g' or '1.5GiB', "
        f"a percentage like '50%' or a fraction in (0, 1], got {value!r}"
    )
    if value is None:
        return _total(total)
    if isinstance(value, bool):
        raise ValueError(rule)
    if isinstance(value, Integral):
        return _positive(int(value), rule)
    if isinstance(value, Real):
        return _from_number(float(value), total, rule)
    if not isinstance(value, str):
        raise ValueError(rule)
    percent = _PERCENT.match(value)
    if percent:
        fraction = float(percent.group(1)) / 100
        if not 0 < fraction <= 1:
            raise ValueError(f"a memory limit in percent must be in (0%, 100%], got {value!r}")
        return _positive(int(fraction * _total(total)), rule)
    size = _SIZE.match(value.lower())
    if size is None or size.group(2) not in _UNITS:
        raise ValueError(rule)
    number, unit = size.group(1), size.group(2)
    if unit == "" and "." in number:
        return _from_number(float(number), total, rule)  # "0.5" reads as the fraction 0.5
    return _positive(int(float(number) * _UNITS[unit]), rule)


def _from_number(value: float, total: int | None, rule: str) -> int:
    """A float: a fraction of ``total`` up to 1, else a byte count."""
    if not math.isfinite(value) or value <= 0:
        raise ValueError(rule)
    if value <= 1:
        return _positive(int(value * _total(total)), rule)
    return _positive(int(value), rule)


def _positive(n: int, rule: str) -> int:
    if n <= 0:
        raise ValueError(rule)
    return n


def _total(total: int | None) -> int:
    if total is not None:
        return total
    machine = int(psutil.virtual_memory().total)
    limit = _cgroup_memory_limit()
    return machine if limit is None else min(machine, limit)


def parse_n_cpu(value: str | int | None) -> int:
    """The number of CPU slots of a worker, from ``--n-cpu``.

    ``None`` or ``"auto"`` means the cores this process may run on: its CPU
    affinity, and its container's CPU quota if that is lower (rounded up).

    Raises
    ------
    ValueError
        The value is not a positive integer or ``"auto"``; the message names it.

    Examples
    --------
    >>> parse_n_cpu(4), parse_n_cpu("4")
    (4, 4)
    >>> parse_n_cpu("auto") >= 1
    True
    """
    rule = f"n_cpu must be a positive integer or 'auto', got {value!r}"
    if value is None or (isinstance(value, str) and value.strip().lower() == "auto"):
        return available_cpus()
    if isinstance(value, bool):
        raise ValueError(rule)
    if isinstance(value, Integral):
        n = int(value)
    elif isinstance(value, str) and value.strip().isdigit():
        n = int(value.strip())
    else:
        raise ValueError(rule)
    if n <= 0:
        raise ValueError(rule)
    return n


def available_cpus(cgroup_root: str = "/sys/fs/cgroup") -> int:
    """Cores this process may use: its affinity, capped by a cgroup CPU quota (at least 1)."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        n = psutil.cpu_count() or os.cpu_count() or 1
    quota = cgroup_cpu_quota(cgroup_root)
    if quota is not None:
        n = min(n, math.ceil(quota))
    return max(n, 1)


def cgroup_cpu_quota(root: str = "/sys/fs/cgroup") -> float | None:
    """Cores allowed by the container's CPU quota (cgroup v2 ``cpu.max`` or v1 CFS), None if unlimited."""
    v2 = _read(os.path.join(root, "cpu.max"))
    if v2 is not None:
        parts = v2.split()
        if len(parts) == 2 and parts[0] != "max":
            return _ratio(parts[0], parts[1])
        return None
    quota = _read(os.path.join(root, "cpu", "cpu.cfs_quota_us"))
    period = _read(os.path.join(root, "cpu", "cpu.cfs_period_us"))
    if quota is None or period is None or quota.strip() == "-1":
        return None
    return _ratio(quota, period)


def _cgroup_memory_limit(root: str = "/sys/fs/cgroup") -> int | None:
    """Bytes allowed by the container's memory limit, None if unlimited or unknown."""
    for path in (os.path.join(root, "memory.max"), os.path.join(root, "memory", "memory.limit_in_bytes")):
        text = _read(path)
        if text is not None and text.strip().isdigit():
            limit = int(text)
            # v1 says "unlimited" with a huge page-aligned number
            return limit if limit < (1 << 60) else None
    return None


def _ratio(quota: str, period: str) -> float | None:
    try:
        q, p = float(quota), float(period)
    except ValueError:
        return None
    return q / p if q > 0 and p > 0 else None


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None
