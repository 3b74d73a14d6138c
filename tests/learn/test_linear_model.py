"""mars.learn.linear_model against scikit-learn on the same data, across chunkings."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import linear_model as skl
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.pipeline import make_pipeline

import mars.tensor as mt
from mars.learn.linear_model import Lasso, LinearRegression, LogisticRegression, Ridge
from mars.tensor.core import Tensor

CHUNKINGS = [None, 90, ((150, 1, 149), (6,)), ((1,) * 3 + (297,), (4, 2))]
IDS = ["one", "even", "uneven", "size1"]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 6)) + 3
    y = x @ np.r_[rng.normal(size=4), 0, 0] + rng.normal(size=300)
    return x, y, np.c_[y, 2 * y - 1], rng.random(300)


@pytest.mark.parametrize("chunks", CHUNKINGS, ids=IDS)
@pytest.mark.parametrize("make", [lambda m: m.LinearRegression(), lambda m: m.Ridge(alpha=3.0),
                                  lambda m: m.LinearRegression(fit_intercept=False)], ids=["ols", "ridge", "ols0"])
def test_least_squares_coefficients_equal_sklearns(data, chunks, make):
    import mars.learn.linear_model as ours_module

    x, y, y2, sw = data
    xt = mt.tensor(x, chunk_size=chunks)
    for target in (y, y2):
        for weight in (None, sw):
            ours = make(ours_module).fit(xt, target, sample_weight=weight)
            ref = make(skl).fit(x, target, sample_weight=weight)
            np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-9, atol=1e-11)
            np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-9, atol=1e-11)
            assert np.shape(ours.coef_) == np.shape(ref.coef_)
            assert np.shape(ours.intercept_) == np.shape(ref.intercept_)


def test_predict_is_lazy_and_score_is_sklearns(data):
    x, _, y2, _ = data
    ours, ref = LinearRegression().fit(x, y2), skl.LinearRegression().fit(x, y2)
    pred = ours.predict(mt.tensor(x, chunk_size=70))
    assert isinstance(pred, Tensor)
    np.testing.assert_allclose(pred.fetch(), ref.predict(x), rtol=1e-10)
    assert ours.score(x, y2) == pytest.approx(ref.score(x, y2), rel=1e-10)
    np.testing.assert_allclose(ours.singular_, ref.singular_, rtol=1e-8)
    assert ours.rank_ == ref.rank_


def test_ridge_with_an_alpha_per_target(data):
    x, _, y2, _ = data
    ours, ref = Ridge(alpha=[0.5, 50.0]).fit(x, y2), skl.Ridge(alpha=[0.5, 50.0]).fit(x, y2)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-9)


@pytest.mark.parametrize("chunks", CHUNKINGS, ids=IDS)
def test_lasso_equals_sklearns(data, chunks):
    x, y, y2, sw = data
    xt = mt.tensor(x, chunk_size=chunks)
    for kw in ({"alpha": 0.05}, {"alpha": 0.5, "positive": True}, {"alpha": 0.2, "fit_intercept": False}):
        for weight in (None, sw):
            ours, ref = Lasso(**kw).fit(xt, y, sample_weight=weight), skl.Lasso(**kw).fit(x, y, sample_weight=weight)
            np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-4)
            assert ours.intercept_ == pytest.approx(ref.intercept_, abs=1e-4)
    ours, ref = Lasso(alpha=0.1).fit(xt, y2), skl.Lasso(alpha=0.1).fit(x, y2)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-4)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("chunks", [None, 250, ((500, 1, 499), (8,))], ids=["one", "even", "uneven"])
def test_logistic_regression_matches_sklearn(n_classes, chunks):
    x, y = make_classification(1000, 8, n_informative=5, n_classes=n_classes, random_state=1)
    for kw in ({}, {"C": 0.05}, {"fit_intercept": False}):
        ours = LogisticRegression(**kw).fit(mt.tensor(x, chunk_size=chunks), y)
        ref = skl.LogisticRegression(**kw).fit(x, y)
        assert ours.coef_.shape == ref.coef_.shape
        np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-5, atol=1e-6)
        assert abs(ours.score(x, y) - ref.score(x, y)) <= 0.005
    np.testing.assert_allclose(ours.predict_proba(x).fetch(), ref.predict_proba(x), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(ours.decision_function(x).fetch(), ref.decision_function(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(ours.predict(x).fetch(), ref.predict(x))


def test_logistic_regression_string_labels_weights_and_no_penalty():
    x, y = make_classification(400, 5, random_state=2)
    labels = np.array(["no", "yes"])[y]
    sw = np.random.default_rng(3).random(400)
    ours = LogisticRegression(penalty=None).fit(x, labels, sample_weight=sw)
    ref = skl.LogisticRegression(C=np.inf).fit(x, labels, sample_weight=sw)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-4)
    np.testing.assert_array_equal(ours.predict(x).fetch(), ref.predict(x))
    np.testing.assert_array_equal(ours.classes_, ref.classes_)


def test_estimator_protocol_and_errors(data):
    x, y, _, _ = data
    for est in (LinearRegression(), Ridge(2.0), Lasso(0.1), LogisticRegression(C=2.0)):
        assert clone(est).get_params() == est.get_params()
    pipe = make_pipeline(Ridge(1.0)).fit(x, y)
    np.testing.assert_allclose(pipe.predict(x).fetch(), skl.Ridge(1.0).fit(x, y).predict(x), rtol=1e-9)
    with pytest.raises(ValueError, match="inconsistent numbers of samples: \\[300, 10\\]"):
        LinearRegression().fit(x, y[:10])
    with pytest.raises(NotImplementedError, match="solver='sag'"):
        Ridge(solver="sag").fit(x, y)
    with pytest.raises(ValueError, match="only one class"):
        LogisticRegression().fit(x, np.zeros(300))
    with pytest.raises(ValueError, match=r"C=-1"):
        LogisticRegression(C=-1).fit(x, y > 0)
