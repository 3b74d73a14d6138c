"""The local session shares the cores between chunk ops that run BLAS side by side, at little cost per run."""

from __future__ import annotations

import numpy as np
import pytest

import mars
import mars.tensor as mt
from mars import session as session_mod
from mars.core.options import option_context
from mars.learn._rowops import row_reduce

threadpoolctl = pytest.importorskip("threadpoolctl")


def _blas_threads_seen(start: int, x: np.ndarray) -> np.ndarray:
    infos = threadpoolctl.threadpool_info()
    return np.array([max((i["num_threads"] for i in infos if i["user_api"] == "blas"), default=-1)], float)


def _keep_max(*parts: np.ndarray) -> np.ndarray:
    return np.maximum.reduce(parts)


def test_blas_ops_side_by_side_get_one_thread_each_and_limits_come_back():
    blas = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    if not blas:
        pytest.skip("no BLAS library that threadpoolctl can control")
    before = {i["filepath"]: i["num_threads"] for i in blas}
    x = mt.tensor(np.ones((8, 2)), chunk_size=2)
    with mars.new_session(default=False) as sess, option_context({"n_threads": 2}):
        seen = sess.run(row_reduce(_blas_threads_seen, x, shape=(1,), combine=_keep_max))
    assert seen[0] == 1  # 4 BLAS chunk ops on 2 threads: one BLAS thread each
    after = {i["filepath"]: i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"}
    assert after == before


def test_one_thread_gives_blas_one_thread():
    blas = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    if not blas or all(i["num_threads"] == 1 for i in blas):
        pytest.skip("no BLAS library with several threads that threadpoolctl can control")
    x = mt.tensor(np.ones((8, 2)), chunk_size=8)
    with mars.new_session(default=False) as sess, option_context({"n_threads": 1}):
        seen = sess.run(row_reduce(_blas_threads_seen, x, shape=(1,), combine=_keep_max))
    assert seen[0] == 1


def test_the_library_scan_is_made_once_not_per_run():
    first = session_mod._blas_controller()
    assert session_mod._blas_controller() is first
