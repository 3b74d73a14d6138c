"""mars.learn.model_selection against scikit-learn: same splits for the same seed, same grid search."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import sklearn.model_selection as skms
from sklearn import decomposition as skd
from sklearn.linear_model import Ridge
from sklearn.tree import DecisionTreeClassifier

import mars.dataframe as md
import mars.tensor as mt
from mars.learn.decomposition import PCA
from mars.learn.model_selection import GridSearchCV, KFold, train_test_split

RNG = np.random.RandomState(5)
X = RNG.normal(size=(31, 4))
Y = (X[:, 0] + 0.3 * RNG.normal(size=31) > 0).astype(int)


@pytest.mark.parametrize("chunks", [None, 6, ((15, 1, 15), (3, 1)), 1], ids=["one", "even", "uneven", "rows1"])
@pytest.mark.parametrize("sizes", [{}, {"test_size": 0.3}, {"train_size": 10}, {"test_size": 5, "train_size": 0.5}])
def test_train_test_split_matches(chunks, sizes):
    rows = chunks[0] if isinstance(chunks, tuple) else chunks
    parts = train_test_split(mt.tensor(X, chunk_size=chunks), mt.tensor(Y, chunk_size=(rows,) if rows else None),
                             random_state=3, **sizes)
    expected = skms.train_test_split(X, Y, random_state=3, **sizes)
    for got, want in zip(parts, expected):
        np.testing.assert_array_equal(got.execute().fetch(), want)


def test_train_test_split_options():
    for kw in ({"shuffle": False, "test_size": 0.2}, {"stratify": Y, "random_state": 1}):
        got = train_test_split(X, Y, **kw)
        for a, b in zip(got, skms.train_test_split(X, Y, **kw)):
            np.testing.assert_array_equal(a.fetch(), b)
    strat = train_test_split(X, stratify=mt.tensor(Y, chunk_size=4), random_state=1)
    np.testing.assert_array_equal(strat[1].fetch(), skms.train_test_split(X, stratify=Y, random_state=1)[1])
    frame = pd.DataFrame(X, columns=list("abcd"))
    train, test = train_test_split(md.DataFrame(frame, chunk_size=7), random_state=0)
    pd.testing.assert_frame_equal(test.fetch(), skms.train_test_split(frame, random_state=0)[1])
    with pytest.raises(ValueError, match="test_size=1.5 should be"):
        train_test_split(X, test_size=1.5)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        train_test_split(X, Y[:3])
    with pytest.raises(ValueError, match="At least one array"):
        train_test_split()


@pytest.mark.parametrize("shuffle", [False, True])
def test_kfold_matches(shuffle):
    ours = KFold(4, shuffle=shuffle, random_state=0 if shuffle else None)
    theirs = skms.KFold(4, shuffle=shuffle, random_state=0 if shuffle else None)
    for (a, b), (c, d) in zip(ours.split(mt.tensor(X, chunk_size=5)), theirs.split(X), strict=True):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)
    assert ours.get_n_splits() == 4
    filtered = md.DataFrame(pd.DataFrame(X), chunk_size=8)
    filtered = filtered[filtered[0] > 0]  # length unknown until it runs
    assert len(list(KFold(3).split(filtered))) == 3


def test_grid_search_matches_sklearn_with_a_mars_estimator():
    grid = {"n_components": [1, 2, 3], "whiten": [False, True]}
    ours = GridSearchCV(PCA(), grid, cv=KFold(3), n_jobs=2, return_train_score=True).fit(mt.tensor(X, chunk_size=8))
    theirs = skms.GridSearchCV(skd.PCA(), grid, cv=skms.KFold(3), return_train_score=True).fit(X)
    assert ours.best_params_ == theirs.best_params_
    assert ours.best_index_ == theirs.best_index_
    assert ours.best_score_ == pytest.approx(theirs.best_score_, rel=1e-8)
    for key in ("mean_test_score", "std_test_score", "split2_test_score", "mean_train_score", "rank_test_score"):
        np.testing.assert_allclose(ours.cv_results_[key], theirs.cv_results_[key], rtol=1e-8, err_msg=key)
    assert list(ours.cv_results_["param_n_components"]) == list(theirs.cv_results_["param_n_components"])
    assert ours.cv_results_["params"] == theirs.cv_results_["params"]
    np.testing.assert_allclose(ours.transform(X).fetch(), theirs.transform(X), atol=1e-8)
    assert ours.n_splits_ == 3 and ours.refit_time_ >= 0


def test_grid_search_with_sklearn_estimators_and_scoring():
    grid = {"max_depth": [1, 3], "min_samples_leaf": [1, 5]}
    ours = GridSearchCV(DecisionTreeClassifier(random_state=0), grid, scoring="f1", cv=3).fit(X, Y)
    theirs = skms.GridSearchCV(DecisionTreeClassifier(random_state=0), grid, scoring="f1", cv=3).fit(X, Y)
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"], theirs.cv_results_["mean_test_score"])
    assert ours.best_params_ == theirs.best_params_
    np.testing.assert_array_equal(np.asarray(ours.predict(X)), theirs.predict(X))
    reg = GridSearchCV(Ridge(), {"alpha": [0.1, 10.0]}, scoring="neg_mean_squared_error", cv=4).fit(X, X[:, 1])
    ref = skms.GridSearchCV(Ridge(), {"alpha": [0.1, 10.0]}, scoring="neg_mean_squared_error", cv=4).fit(X, X[:, 1])
    np.testing.assert_allclose(reg.cv_results_["mean_test_score"], ref.cv_results_["mean_test_score"])
    with pytest.raises(NotImplementedError, match="multi-metric"):
        GridSearchCV(Ridge(), {"alpha": [1.0]}, scoring=["r2", "neg_mean_squared_error"]).fit(X, X[:, 1])


def test_grid_search_error_score_and_clone():
    from sklearn.base import clone
    from sklearn.exceptions import FitFailedWarning

    search = GridSearchCV(PCA(), {"n_components": [2, 9]}, cv=3)
    with pytest.warns(FitFailedWarning):
        search.fit(X)
    assert np.isnan(search.cv_results_["mean_test_score"][1]) and search.best_params_ == {"n_components": 2}
    with pytest.raises(ValueError, match="n_components=9"):
        GridSearchCV(PCA(), {"n_components": [9]}, cv=3, error_score="raise").fit(X)
    assert clone(search).get_params()["estimator__n_components"] is None
