"""The benchmark scripts still run (their figures are checked by people, not here)."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

BENCHMARKS = pathlib.Path(__file__).parents[2] / "benchmarks"


def test_oscar_bench_quick_run_reports_every_figure(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "figures.json"
    subprocess.run(
        [sys.executable, str(BENCHMARKS / "oscar_bench.py"), "--quick", "--no-peers", "--json", str(out)],
        check=True, capture_output=True, timeout=300,
    )
    figures = json.loads(out.read_text())
    mars = figures["mars"]
    for key in ("in-process", "unix", "tcp"):
        median, p99 = mars[key]
        assert 0 < median <= p99
    assert mars["calls/s"] > 0 and mars["GiB/s"] > 0
    assert figures["raw"]["unix"] > 0 and figures["raw"]["ping-pong"] > 0
    assert figures["xoscar"] is None


def test_tensor_bench_quick_run_checks_answers_and_reports_every_workload(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "figures.json"
    subprocess.run(
        [sys.executable, str(BENCHMARKS / "tensor_bench.py"), "--quick", "--no-peers", "--repeat", "1",
         "--json", str(out)],
        check=True, capture_output=True, timeout=300,
    )
    figures = json.loads(out.read_text())
    for engine in ("mars", "numpy-1thread", "numpy-default"):
        assert set(figures[engine]) == {"tiny", "chain-mean", "sin-sum", "inner", "sum-10k-chunks"}
        assert all(v > 0 for v in figures[engine].values())
    assert figures["dask"] is None and figures["quick"] is True


def test_cluster_bench_quick_run_reports_every_workload(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "figures.json"
    subprocess.run(
        [sys.executable, str(BENCHMARKS / "cluster_bench.py"), "--quick", "--no-dask", "--repeat", "1",
         "--json", str(out)],
        check=True, capture_output=True, timeout=300,
    )
    figures = json.loads(out.read_text())
    assert set(figures) == {"mars"}
    assert set(figures["mars"]) == {"start", "tiny", "tiny (actor protocol)", "inner", "sum10k"}
    assert all(v > 0 for v in figures["mars"].values())
