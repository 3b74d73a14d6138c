"""The 'mars' joblib backend: joblib's and scikit-learn's n_jobs loops run as mars tasks."""

from __future__ import annotations

import threading

import joblib
import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import cross_val_score

from mars.core.options import options
from mars.learn.contrib import joblib as mars_joblib


def _where(i):
    return i * i, threading.current_thread().name


def test_batches_run_as_mars_tasks_in_order():
    with joblib.parallel_backend("mars", n_jobs=2):
        out = joblib.Parallel(batch_size=2)(joblib.delayed(_where)(i) for i in range(9))
    assert [v for v, _ in out] == [i * i for i in range(9)]
    assert all(name != threading.main_thread().name for _, name in out)  # not run inline by the caller


def test_local_functions_travel_and_errors_surface():
    offset = 10

    def shifted(i):
        if i == 3:
            raise KeyError("three")
        return i + offset

    with joblib.parallel_backend("mars"):
        assert joblib.Parallel(n_jobs=2)(joblib.delayed(shifted)(i) for i in (0, 1)) == [10, 11]
        with pytest.raises(KeyError, match="three"):
            joblib.Parallel(n_jobs=2)(joblib.delayed(shifted)(i) for i in range(5))


def test_sklearn_n_jobs_loops_give_the_same_result():
    x, y = make_classification(300, 6, random_state=0)
    forest = RandomForestClassifier(n_estimators=8, random_state=0, n_jobs=2)
    expected = cross_val_score(forest, x, y, cv=3)
    with joblib.parallel_backend("mars", n_jobs=2):
        got = cross_val_score(forest, x, y, cv=3, n_jobs=2)
    np.testing.assert_allclose(got, expected)
    assert isinstance(mars_joblib.MarsJoblibBackend().get_nested_backend()[0], joblib.parallel.SequentialBackend)
    assert mars_joblib.MarsJoblibBackend().effective_n_jobs(-1) == options.effective_threads()
    assert mars_joblib.MarsJoblibBackend(n_parallel=5).effective_n_jobs(None) == 5
