"""``make run``: a local cluster running the seeds' example.

Starts a supervisor (with the web service) and two workers as processes on
this machine, runs ``mt.inner`` of a 2000×2000 random tensor in 200-chunks on
them with a progress bar, checks it against numpy, then the seeds'
``md.DataFrame(a).sum()`` checked against pandas, prints the timings and the
dashboard URL, and stops the cluster (``--keep`` leaves it serving until
Ctrl-C, for a look at the dashboard or a session of one's own).
"""

from __future__ import annotations

import argparse
import signal
import time

import numpy as np

from .. import tensor as mt
from .local import new_cluster


def inner_job(session: object, n: int = 2000, chunk: int = 200) -> mt.Tensor:
    """The seeds' example: the inner product of a random matrix with itself, in chunks."""
    a = mt.random.rand(n, n, chunk_size=chunk)
    start = time.perf_counter()
    product = mt.inner(a, a).execute(show_progress=True)
    elapsed = time.perf_counter() - start
    result = product.fetch()
    values = a.fetch()
    assert np.allclose(result, np.inner(values, values)), "mt.inner differs from numpy"
    print(f"mt.inner of a {n}x{n} random tensor in {chunk}x{chunk} chunks: {elapsed:.2f} s on the cluster "
          f"(matches numpy); result[0, :3] = {np.round(result[0, :3], 4).tolist()}")
    return a


def dataframe_job(a: mt.Tensor) -> None:
    """The seeds' next line: ``md.DataFrame(a).sum()``, checked against pandas."""
    import pandas as pd

    from .. import dataframe as md

    times = []
    for _ in range(2):  # the first run includes the workers loading pandas
        start = time.perf_counter()
        sums = md.DataFrame(a).sum().execute()
        times.append(time.perf_counter() - start)
        result = sums.fetch()
        del sums
        time.sleep(0.3)  # the dropped result is released on the cluster: the next run computes it again
    expected = pd.DataFrame(a.fetch()).sum()
    pd.testing.assert_series_equal(result, expected)
    print(f"md.DataFrame(a).sum(): {times[1]:.2f} s on the cluster (the first run, workers loading pandas: "
          f"{times[0]:.2f} s); matches pandas; "
          f"a Series of {len(result)} column sums, the first {np.round(result.iloc[:3].to_numpy(), 2).tolist()}")


def tiny_job(repeat: int = 20) -> None:
    """The latency of a tiny job: the first run (workers load its code) and the best of the rest."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        value = (mt.ones((5, 5), chunk_size=3) * 4).sum().execute().fetch()
        times.append(time.perf_counter() - start)
    print(f"(mt.ones((5, 5), chunk_size=3) * 4).sum() = {value}: first run {times[0] * 1000:.1f} ms, "
          f"then {min(times[1:]) * 1000:.1f} ms (best of {repeat - 1})")


def cli(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="pymars: a local cluster running the seeds' example")
    parser.add_argument("--n-worker", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--n-cpu", default="auto", help="slots per worker (default: the cores shared out)")
    parser.add_argument("--keep", action="store_true", help="leave the cluster serving until Ctrl-C")
    args = parser.parse_args(argv)
    n_cpu = args.n_cpu if args.n_cpu == "auto" else int(args.n_cpu)
    start = time.perf_counter()
    with new_cluster(n_worker=args.n_worker, n_cpu=n_cpu, web=True) as cluster:
        print(f"cluster started in {time.perf_counter() - start:.2f} s: supervisor {cluster.endpoint}, "
              f"workers {cluster.worker_addresses}")
        print(f"dashboard: {cluster.web_address}/?token={cluster.token} (web API under {cluster.web_address}/api, "
              "with that token; see docs/security.md)")
        a = inner_job(cluster.session)
        dataframe_job(a)
        tiny_job()
        if args.keep:
            print(f"serving; connect with mars.new_session({cluster.web_address!r}) (this user, this host: the "
                  "token is found). Ctrl-C to stop")
            try:
                signal.pause()
            except KeyboardInterrupt:
                pass
    print("cluster stopped")


if __name__ == "__main__":
    cli()
