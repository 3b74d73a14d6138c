"""The cluster's figures in Prometheus' text exposition format, served as ``GET /metrics``.

The supervisor's ``/metrics`` carries every worker's figures with a
``worker`` label (from the heartbeats it keeps) and the cluster's tasks by
state; a worker started with ``--metrics-port`` also serves its own,
sampled when scraped. Rendering is a pure function of
that data, so it is tested without a cluster.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..cluster.core import WorkerStatus

#: the Content-Type of the text format, version 0.0.4
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


@dataclass
class Family:
    """One metric: its name, type and help, and its samples as ``(suffix, labels, value)``."""

    name: str
    kind: str  # gauge | counter | histogram
    help: str
    samples: list[tuple[str, dict[str, str], float]] = field(default_factory=list)

    def add(self, value: float | None, suffix: str = "", **labels: str) -> None:
        if value is not None:
            self.samples.append((suffix, labels, float(value)))


def escape_label(value: str) -> str:
    r"""A label value as the text format quotes it: backslash, double quote and newline escaped.

    >>> escape_label('a"b\\c\nd')
    'a\\"b\\\\c\\nd'
    """
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def render(families: Iterable[Family]) -> str:
    """The text exposition of ``families`` (families with no sample are left out).

    Examples
    --------
    >>> f = Family("mars_tasks", "gauge", "Tasks by state.")
    >>> f.add(2, state="running")
    >>> print(render([f]), end="")
    # HELP mars_tasks Tasks by state.
    # TYPE mars_tasks gauge
    mars_tasks{state="running"} 2
    """
    lines: list[str] = []
    for f in families:
        if not f.samples:
            continue
        lines += [f"# HELP {f.name} {f.help}", f"# TYPE {f.name} {f.kind}"]
        for suffix, labels, value in f.samples:
            text = ",".join(f'{k}="{escape_label(str(v))}"' for k, v in labels.items())
            lines.append(f"{f.name}{suffix}{{{text}}} {_number(value)}" if text else f"{f.name}{suffix} {_number(value)}")
    return "\n".join(lines) + "\n" if lines else ""


def _worker_families() -> dict[str, Family]:
    specs = [
        ("mars_worker_up", "gauge", "1 for a worker that heartbeats, 0 for one lost."),
        ("mars_worker_slots", "gauge", "Slots (CPU and GPU) of the worker."),
        ("mars_worker_slots_busy", "gauge", "Slots running a subtask now."),
        ("mars_worker_queued_subtasks", "gauge", "Subtasks waiting in the worker's queue."),
        ("mars_worker_cpu_usage_cores", "gauge", "Cores busy over the worker's processes."),
        ("mars_worker_memory_used_bytes", "gauge", "Memory used by the worker's processes."),
        ("mars_worker_memory_limit_bytes", "gauge", "Memory the worker may use."),
        ("mars_worker_chunk_memory_bytes", "gauge", "Bytes of chunks held in memory."),
        ("mars_worker_spilled_bytes", "gauge", "Bytes of chunks on disk now."),
        ("mars_worker_spilled_bytes_total", "counter", "Bytes ever spilled to disk."),
        ("mars_worker_received_bytes_total", "counter", "Bytes of chunks fetched from other workers."),
        ("mars_worker_last_heartbeat_timestamp_seconds", "gauge", "Unix time of the latest heartbeat."),
        ("mars_subtask_duration_seconds", "histogram", "How long subtasks ran on the worker's slots."),
    ]
    return {name: Family(name, kind, text) for name, kind, text in specs}


def worker_families(workers: Sequence[WorkerStatus]) -> list[Family]:
    """The per-worker families (label ``worker``) from the statuses the supervisor keeps."""
    fams = _worker_families()
    for w in workers:
        label = {"worker": w.address}
        fams["mars_worker_up"].add(1 if w.alive else 0, **label)
        fams["mars_worker_last_heartbeat_timestamp_seconds"].add(w.last_heartbeat, **label)
        stats = w.stats
        if stats is None or not w.alive:
            continue
        ex, st = stats.execution, stats.storage
        if "n_slots" in ex:
            fams["mars_worker_slots"].add(ex["n_slots"], **label)
            fams["mars_worker_slots_busy"].add(ex["n_slots"] - ex.get("n_free_slots", 0), **label)
        fams["mars_worker_queued_subtasks"].add(ex.get("n_queued"), **label)
        fams["mars_worker_cpu_usage_cores"].add(stats.cpu_usage, **label)
        fams["mars_worker_memory_used_bytes"].add(stats.memory_used, **label)
        fams["mars_worker_memory_limit_bytes"].add(stats.memory_limit, **label)
        fams["mars_worker_chunk_memory_bytes"].add(st.get("memory_bytes"), **label)
        fams["mars_worker_spilled_bytes"].add(st.get("disk_bytes"), **label)
        fams["mars_worker_spilled_bytes_total"].add(st.get("spilled_bytes_total"), **label)
        fams["mars_worker_received_bytes_total"].add(ex.get("bytes_received"), **label)
        _histogram(fams["mars_subtask_duration_seconds"], ex.get("durations"), label)
    return list(fams.values())


def _histogram(family: Family, snapshot: Mapping | None, labels: dict[str, str]) -> None:
    """Add a :class:`~mars.services.execution.stream.DurationHistogram` snapshot's samples."""
    if not snapshot:
        return
    bounds, counts = list(snapshot["le"]), list(snapshot["counts"])
    for bound, count in zip([*bounds, math.inf], counts):
        family.add(count, "_bucket", **labels, le=_number(float(bound)))
    family.add(snapshot["sum"], "_sum", **labels)
    family.add(counts[-1], "_count", **labels)


def cluster_families(task_states: Mapping[str, int], n_sessions: int) -> list[Family]:
    """Tasks by state (every state listed, 0 when none) and the number of open sessions."""
    tasks = Family("mars_tasks", "gauge", "Tasks of the cluster's sessions by state.")
    for state in ("pending", "running", "succeeded", "failed", "cancelled"):
        tasks.add(task_states.get(state, 0), state=state)
    for state, n in task_states.items():
        if state not in ("pending", "running", "succeeded", "failed", "cancelled"):
            tasks.add(n, state=state)
    sessions = Family("mars_sessions", "gauge", "Sessions the supervisors hold.")
    sessions.add(n_sessions)
    return [tasks, sessions]
