"""The learn workloads on dask-ml, run in its own venv (``../../shared/PEERS.md``), beside ``learn_bench.py``.

Prints one JSON object: ``{"seconds": {row: s}, "peak": {row: bytes}, "load": [...], "versions": {...}}``.
Called by learn_bench.py as ``<venv>/bin/python daskml_learn.py [--quick] REPEAT``, on a
``LocalCluster(n_workers=2, threads_per_worker=1)`` whose workers run one BLAS thread. The data is made
here from the same seed and persisted on the workers before anything is timed; the timings are of the
fits alone. ``LogisticRegression`` uses dask-ml's L-BFGS solver (its default is ADMM), the nearest to
scikit-learn's default.
"""

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # benchmarks/: learn_common needs numpy and psutil only

from learn_common import BLAS_ENV, PeakRSS, best_of_with_peak, trim, workloads

os.environ.update(BLAS_ENV)  # before numpy loads BLAS; the workers inherit it


def _scattered(client, a, chunk):
    """``a`` cut into row chunks held by the workers (no copy of it in the graph), as a dask array."""
    import dask.array as da

    parts = [a[i:i + chunk] for i in range(0, len(a), chunk)]
    futures = client.scatter(parts)
    return da.concatenate([da.from_delayed(f, shape=p.shape, dtype=p.dtype) for f, p in zip(futures, parts)])


def _once(fit):
    """(seconds, peak memory rise) of one fit, timed and sampled together."""
    start = time.perf_counter()
    with PeakRSS() as mem:
        fit()
    return time.perf_counter() - start, mem.peak


def estimators(init):
    from dask_ml.cluster import KMeans
    from dask_ml.decomposition import PCA
    from dask_ml.linear_model import LogisticRegression
    from dask_ml.preprocessing import StandardScaler

    return [
        ("StandardScaler", StandardScaler, {}, False),
        ("PCA(5)", PCA, {"n_components": 5}, False),
        ("KMeans(8) x10", KMeans, {"n_clusters": 8, "init": init, "max_iter": 10, "tol": 0.0}, False),
        ("LogisticRegression", LogisticRegression, {"solver": "lbfgs"}, True),
    ]


def _imports():
    import dask_ml.cluster
    import dask_ml.decomposition
    import dask_ml.linear_model
    import dask_ml.preprocessing  # noqa: F401


def main():
    quick = "--quick" in sys.argv
    repeat = int(next((a for a in sys.argv[1:] if not a.startswith("-")), "3"))
    import dask
    import dask_ml
    from dask.distributed import Client, LocalCluster

    w = workloads(quick)
    out = {"seconds": {}, "peak": {}, "load": [os.getloadavg()[0]],
           "versions": {"dask": dask.__version__, "dask-ml": dask_ml.__version__}}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        client.wait_for_workers(2)
        x, y = _scattered(client, w["x"], w["chunk"]), _scattered(client, w["y"], w["chunk"])
        init = w["init"]
        del w  # the workers hold the data now
        client.run(_imports)  # a worker's first import is not the fit's memory
        for name, cls, kwargs, needs_y in estimators(init):
            client.run(trim)
            fit = (lambda c=cls, k=kwargs, n=needs_y: c(**k).fit(x, y) if n else c(**k).fit(x))
            try:
                out["seconds"][name], out["peak"][name] = best_of_with_peak(fit, repeat) if repeat else _once(fit)
            except Exception as e:  # noqa: BLE001 - a peer's failure is reported, not fatal
                out["seconds"][name], out["peak"][name] = None, None
                out.setdefault("errors", {})[name] = f"{type(e).__name__}: {e}"[:300]
    out["load"].append(os.getloadavg()[0])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
