"""``GridSearchCV``: every (candidate, fold) fit, run side by side, then scikit-learn's ``cv_results_``.

Each fit is submitted to a thread pool of ``n_jobs`` workers: a mars
estimator's fit runs its own distributed executions, so candidates overlap
on the cluster; scikit-learn estimators receive the fold's rows (fetched on
their first use). Folds are taken lazily (fancy indexing), the splitter
needs only the number of rows (and the labels, for a classifier's
stratified folds). Scores are Python floats.
"""

from __future__ import annotations

import os
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import numpy as np
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.exceptions import FitFailedWarning
from sklearn.model_selection import ParameterGrid, check_cv
from sklearn.utils.metaestimators import available_if

from .. import metrics
from ..base import check_fitted, fetch, is_mars
from ..utils import num_samples, take_rows

__all__ = ["GridSearchCV", "get_scorer"]


def _predicted(metric: Callable, **kw: Any) -> Callable:
    return lambda est, X, y: metric(y, est.predict(X), **kw)


def _negated(metric: Callable) -> Callable:
    return lambda est, X, y: -metric(y, est.predict(X))


def _probability(est: Any, X: Any) -> Any:
    if hasattr(est, "predict_proba"):
        proba = est.predict_proba(X)
        return proba[:, 1]
    return est.decision_function(X)


_SCORERS: dict[str, Callable] = {
    "accuracy": _predicted(metrics.accuracy_score),
    "f1": _predicted(metrics.f1_score), "f1_macro": _predicted(metrics.f1_score, average="macro"),
    "f1_micro": _predicted(metrics.f1_score, average="micro"),
    "f1_weighted": _predicted(metrics.f1_score, average="weighted"),
    "precision": _predicted(metrics.precision_score), "recall": _predicted(metrics.recall_score),
    "r2": _predicted(metrics.r2_score),
    "neg_mean_squared_error": _negated(metrics.mean_squared_error),
    "neg_root_mean_squared_error": _negated(metrics.root_mean_squared_error),
    "neg_mean_absolute_error": _negated(metrics.mean_absolute_error),
    "roc_auc": lambda est, X, y: metrics.roc_auc_score(y, _probability(est, X)),
    "neg_log_loss": lambda est, X, y: -metrics.log_loss(y, est.predict_proba(X), labels=est.classes_),
}


def get_scorer(scoring: Any) -> Callable:
    """A scorer ``(estimator, X, y) -> float``: mars.learn's metrics for the common names, else scikit-learn's.

    >>> get_scorer("accuracy").__name__
    '<lambda>'
    """
    if scoring is None:
        return lambda est, X, y: float(est.score(X, y))
    if callable(scoring):
        return scoring
    if isinstance(scoring, str):
        if scoring in _SCORERS:
            return _SCORERS[scoring]
        from sklearn.metrics import get_scorer as sk_get_scorer

        return sk_get_scorer(scoring)
    raise NotImplementedError(f"multi-metric scoring ({scoring!r}) is not offered by mars.learn's GridSearchCV; "
                              "pass one scorer")


def _n_threads(n_jobs: Any) -> int:
    if n_jobs is None:
        return 1
    return max(1, os.cpu_count() or 1) if n_jobs < 0 else int(n_jobs)


class GridSearchCV(MetaEstimatorMixin, BaseEstimator):
    """Exhaustive search over a parameter grid with cross-validation, as ``sklearn.model_selection.GridSearchCV``.

    ``n_jobs`` candidate fits run at a time (threads; each mars fit is itself
    distributed). One scorer only (multi-metric scoring is not offered);
    ``pre_dispatch`` is accepted and ignored.

    >>> import numpy as np
    >>> from mars.learn.decomposition import PCA
    >>> from mars.learn.model_selection import GridSearchCV
    >>> x = np.random.RandomState(0).normal(size=(30, 4))
    >>> GridSearchCV(PCA(), {"n_components": [1, 3]}, cv=3).fit(x).best_params_
    {'n_components': 3}
    """

    def __init__(self, estimator: Any, param_grid: Any, *, scoring: Any = None, n_jobs: Any = None,
                 refit: bool = True, cv: Any = None, verbose: int = 0, pre_dispatch: Any = "2*n_jobs",
                 error_score: Any = np.nan, return_train_score: bool = False):
        self.estimator = estimator
        self.param_grid = param_grid
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.refit = refit
        self.cv = cv
        self.verbose = verbose
        self.pre_dispatch = pre_dispatch
        self.error_score = error_score
        self.return_train_score = return_train_score

    def fit(self, X: Any, y: Any = None, **fit_params: Any) -> GridSearchCV:
        """Fit every candidate on every fold, rank them, and refit the best on all of ``X``."""
        scorer = get_scorer(self.scoring)
        candidates = list(ParameterGrid(self.param_grid))
        n = num_samples(X)
        labels = fetch(y) if is_mars(y) else y
        cv = check_cv(self.cv, labels, classifier=is_classifier(self.estimator))
        splits = list(cv.split(np.broadcast_to(0.0, (n, 1)), labels))
        folds = [(take_rows(X, tr), take_rows(X, te), _rows(y, tr), _rows(y, te)) for tr, te in splits]
        jobs = [(c, f) for c in candidates for f in folds]
        with ThreadPoolExecutor(_n_threads(self.n_jobs)) as pool:
            outcomes = list(pool.map(lambda job: self._fit_and_score(job[0], *job[1], scorer, fit_params), jobs))
        self.cv_results_ = self._results(candidates, len(folds), outcomes)
        self.best_index_ = int(np.argmin(self.cv_results_["rank_test_score"]))
        self.best_params_ = candidates[self.best_index_]
        self.best_score_ = float(self.cv_results_["mean_test_score"][self.best_index_])
        self.n_splits_ = len(folds)
        self.scorer_ = scorer
        self.multimetric_ = False
        if self.refit:
            start = time.perf_counter()
            self.best_estimator_ = _fit(clone(self.estimator).set_params(**self.best_params_), X, y, fit_params)
            self.refit_time_ = time.perf_counter() - start
            if hasattr(self.best_estimator_, "n_features_in_"):
                self.n_features_in_ = self.best_estimator_.n_features_in_
        return self

    def _fit_and_score(self, params: dict, x_train: Any, x_test: Any, y_train: Any, y_test: Any,
                       scorer: Callable, fit_params: dict) -> tuple[float, float, float, float]:
        est = clone(self.estimator).set_params(**params)
        start = time.perf_counter()
        try:
            _fit(est, x_train, y_train, fit_params)
        except Exception as e:
            if self.error_score == "raise":
                raise
            warnings.warn(f"Fitting failed for parameters {params}: {type(e).__name__}: {e}", FitFailedWarning,
                          stacklevel=2)
            return float(self.error_score), float(self.error_score), time.perf_counter() - start, 0.0
        fit_time = time.perf_counter() - start
        test_score = float(scorer(est, x_test, y_test))
        score_time = time.perf_counter() - start - fit_time
        train_score = float(scorer(est, x_train, y_train)) if self.return_train_score else np.nan
        return test_score, train_score, fit_time, score_time

    def _results(self, candidates: list[dict], n_folds: int, outcomes: list) -> dict:
        table = np.asarray(outcomes, dtype=np.float64).reshape(len(candidates), n_folds, 4)
        results: dict[str, Any] = {}
        for which, name in ((2, "fit_time"), (3, "score_time")):
            results[f"mean_{name}"], results[f"std_{name}"] = table[:, :, which].mean(1), table[:, :, which].std(1)
        for name in sorted({k for c in candidates for k in c}):
            column = np.ma.MaskedArray(np.empty(len(candidates), dtype=object), mask=True)
            for i, c in enumerate(candidates):
                if name in c:
                    column[i] = c[name]
            results[f"param_{name}"] = column
        results["params"] = candidates
        kinds = [(0, "test")] + ([(1, "train")] if self.return_train_score else [])
        for which, kind in kinds:
            scores = table[:, :, which]
            for k in range(n_folds):
                results[f"split{k}_{kind}_score"] = scores[:, k]
            results[f"mean_{kind}_score"], results[f"std_{kind}_score"] = scores.mean(1), scores.std(1)
        means = results["mean_test_score"]
        ranked = np.where(np.isnan(means), -np.inf, means)
        results["rank_test_score"] = rankdata(-ranked, method="min").astype(np.int32)
        return results

    def _best(self) -> Any:
        check_fitted(self, "best_estimator_")
        return self.best_estimator_

    def score(self, X: Any, y: Any = None) -> float:
        """The best estimator's score on ``X`` with the search's scorer."""
        return float(self.scorer_(self._best(), X, y))

    @available_if(lambda self: hasattr(self.estimator, "predict"))
    def predict(self, X: Any) -> Any:
        """The best estimator's predictions."""
        return self._best().predict(X)

    @available_if(lambda self: hasattr(self.estimator, "predict_proba"))
    def predict_proba(self, X: Any) -> Any:
        """The best estimator's class probabilities."""
        return self._best().predict_proba(X)

    @available_if(lambda self: hasattr(self.estimator, "decision_function"))
    def decision_function(self, X: Any) -> Any:
        """The best estimator's decision function."""
        return self._best().decision_function(X)

    @available_if(lambda self: hasattr(self.estimator, "transform"))
    def transform(self, X: Any) -> Any:
        """The best estimator's transform."""
        return self._best().transform(X)

    @property
    def classes_(self) -> Any:
        """The best estimator's classes."""
        return self._best().classes_


def _fit(est: Any, X: Any, y: Any, fit_params: dict) -> Any:
    return est.fit(X, **fit_params) if y is None else est.fit(X, y, **fit_params)


def _rows(y: Any, index: np.ndarray) -> Any:
    return None if y is None else take_rows(y, index)
