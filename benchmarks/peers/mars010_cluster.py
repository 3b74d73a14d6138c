"""The cluster workloads on the original Mars (pymars 0.10), run in its own venv.

Prints one JSON object: seconds per workload. Called by cluster_bench.py as
``<venv>/bin/python mars010_cluster.py REPEAT``.
"""

import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/: stdlib only
from timing import best_of  # noqa: E402


def main():
    repeat = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    import mars
    import mars.tensor as mt

    start = time.perf_counter()
    sess = mars.new_session(n_cpu=2, web=False)
    out = {"start": time.perf_counter() - start}
    out["tiny"] = best_of(lambda: (mt.ones((5, 5), chunk_size=3) * 4).sum().execute(session=sess).fetch(session=sess), repeat)
    a_np = np.random.default_rng(0).random((4000, 4000))
    a = mt.tensor(a_np, chunk_size=1000).execute(session=sess)
    out["inner"] = best_of(lambda: mt.inner(a, a).execute(session=sess).fetch(session=sess), repeat)
    y = np.random.default_rng(1).random(10_000)
    out["sum10k"] = best_of(lambda: mt.tensor(y, chunk_size=1).sum().execute(session=sess).fetch(session=sess), 1)
    print(json.dumps(out))
    sess.stop_server() if hasattr(sess, "stop_server") else None


if __name__ == "__main__":
    main()
