"""The last hour of every worker's load, one sample a second, kept by the supervisor from heartbeats.

Each heartbeat's :class:`~.core.WorkerStats` becomes one :class:`Sample`
per worker: cores busy, memory held by chunks (the storage's in-memory
bytes), memory the worker's processes use otherwise, bytes spilled to disk,
and bytes per second received from and sent to other workers. A worker
counts what it *received* (the execution service's ``received_from``); what
it *sent* is what the others say they received from it. Samples land in
whole-second buckets (a later sample in the same second replaces the
earlier one) in a ring of :data:`SERIES_SECONDS`. The cluster's series is
the sum over workers of each one's latest sample at most
:data:`STALE_AFTER` seconds old. Plain data, no I/O: the clock is passed in.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from .core import WorkerStats

#: one hour at one sample a second
SERIES_SECONDS = 3600
#: a worker's sample counts in the cluster's sum for this long (a heartbeat may come late)
STALE_AFTER = 3.0
#: the figures of a sample, in the order of :meth:`SeriesStore.series`' columns
FIELDS = ("cpu", "memory_chunks", "memory_other", "spilled", "bytes_received", "bytes_sent")


@dataclass
class Sample:
    second: int  # unix time, whole seconds, by the supervisor's clock
    cpu: float
    memory_chunks: int
    memory_other: int
    spilled: int
    bytes_received: float  # per second since the worker's previous sample
    bytes_sent: float


class _WorkerSeries:
    def __init__(self, capacity: int) -> None:
        self.samples: deque[Sample] = deque(maxlen=capacity)
        self.received_total = 0
        self.sent_total = 0
        self.last_counts: tuple[float, int, int] | None = None  # (time, received_total, sent_total)
        self.received_from: dict[str, int] = {}


class SeriesStore:
    """Per-worker series of the last ``seconds`` seconds.

    Examples
    --------
    >>> store = SeriesStore()
    >>> stats = WorkerStats(0.5, 300, 1000, storage={"memory_bytes": 100, "disk_bytes": 7})
    >>> store.record("w1:1", stats, now=100.2)
    >>> cols = store.series("w1:1")["columns"]
    >>> cols["time"], cols["cpu"], cols["memory_chunks"], cols["memory_other"], cols["spilled"]
    ([100], [0.5], [100], [200], [7])
    """

    def __init__(self, seconds: int = SERIES_SECONDS) -> None:
        if seconds < 1:
            raise ValueError(f"a series must keep at least 1 second, got {seconds!r}")
        self.seconds = seconds
        self._workers: dict[str, _WorkerSeries] = {}

    def record(self, address: str, stats: WorkerStats, now: float) -> None:
        """Add the sample a heartbeat of ``address`` brought at ``now`` (the supervisor's clock)."""
        series = self._workers.get(address)
        if series is None:
            series = self._workers[address] = _WorkerSeries(self.seconds)
        self._count_transfers(address, series, stats.execution.get("received_from") or {})
        received, sent = self._rates(series, now)
        chunks = int(stats.storage.get("memory_bytes") or 0)
        sample = Sample(int(now), float(stats.cpu_usage), chunks, max(int(stats.memory_used) - chunks, 0),
                        int(stats.storage.get("disk_bytes") or 0), received, sent)
        if series.samples and series.samples[-1].second == sample.second:
            series.samples[-1] = sample
        else:
            series.samples.append(sample)

    def _count_transfers(self, address: str, series: _WorkerSeries, received_from: dict) -> None:
        """Add what ``address`` received since its last report, and credit each sender with it."""
        for peer, total in received_from.items():
            new = int(total) - series.received_from.get(peer, 0)
            if new <= 0:
                continue  # unchanged, or the worker restarted and counts from 0 again
            series.received_total += new
            sender = self._workers.get(peer)
            if sender is None:
                sender = self._workers[peer] = _WorkerSeries(self.seconds)
            sender.sent_total += new
        series.received_from = {p: int(t) for p, t in received_from.items()}

    @staticmethod
    def _rates(series: _WorkerSeries, now: float) -> tuple[float, float]:
        # a worker's first sample counts from zero over one second (a heartbeat's interval)
        last = series.last_counts or (now - 1.0, 0, 0)
        series.last_counts = (now, series.received_total, series.sent_total)
        if now <= last[0]:
            return 0.0, 0.0
        dt = now - last[0]
        return (series.received_total - last[1]) / dt, (series.sent_total - last[2]) / dt

    def forget(self, address: str) -> None:
        """Drop a worker's series (it was lost long ago)."""
        self._workers.pop(address, None)

    def workers(self) -> list[str]:
        return [a for a, s in self._workers.items() if s.samples]

    def series(self, address: str | None = None, since: float = 0.0) -> dict:
        """Columns (``time`` and :data:`FIELDS`) of one worker, or with ``address=None`` the cluster's sum."""
        if address is None:
            rows = self._cluster_rows(since)
        else:
            series = self._workers.get(address)
            rows = [s for s in series.samples if s.second >= since] if series is not None else []
        columns: dict[str, list] = {"time": [r.second for r in rows]}
        for name in FIELDS:
            columns[name] = [_finite(getattr(r, name)) for r in rows]
        return {"worker": address, "fields": ["time", *FIELDS], "columns": columns}

    def _cluster_rows(self, since: float) -> list[Sample]:
        """For each second any worker reported in, the sum of every worker's latest fresh sample."""
        lists = [[s for s in w.samples if s.second >= since - STALE_AFTER] for w in self._workers.values()]
        seconds = sorted({s.second for samples in lists for s in samples if s.second >= since})
        cursors = [0] * len(lists)
        rows = []
        for second in seconds:
            total = Sample(second, 0.0, 0, 0, 0, 0.0, 0.0)
            for i, samples in enumerate(lists):
                while cursors[i] < len(samples) and samples[cursors[i]].second <= second:
                    cursors[i] += 1
                latest = samples[cursors[i] - 1] if cursors[i] else None
                if latest is not None and second - latest.second <= STALE_AFTER:
                    for name in FIELDS:
                        setattr(total, name, getattr(total, name) + getattr(latest, name))
            rows.append(total)
        return rows


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None
