"""mars.learn.neighbors against scikit-learn's brute force, across chunkings of the data and the queries."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import neighbors as skn
from sklearn.base import clone

import mars.tensor as mt
from mars.learn.neighbors import (
    KNeighborsClassifier,
    KNeighborsRegressor,
    NearestNeighbors,
)
from mars.tensor.core import Tensor

CHUNKINGS = [None, 60, ((100, 1, 99), (4,)), ((1,) * 3 + (197,), (2, 2))]
IDS = ["one", "even", "uneven", "size1"]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(200, 4)), rng.normal(size=(45, 4)), rng.integers(0, 3, 200), rng.normal(size=(200, 2))


@pytest.mark.parametrize("chunks", CHUNKINGS, ids=IDS)
@pytest.mark.parametrize("metric,p", [("minkowski", 2), ("minkowski", 1), ("cosine", 2)])
def test_kneighbors_equal_sklearns(data, chunks, metric, p):
    x, q, _, _ = data
    ours = NearestNeighbors(n_neighbors=4, metric=metric, p=p).fit(mt.tensor(x, chunk_size=chunks))
    ref = skn.NearestNeighbors(n_neighbors=4, metric=metric, p=p, algorithm="brute").fit(x)
    dist, ind = ours.kneighbors(mt.tensor(q, chunk_size=20))
    assert isinstance(ind, Tensor)
    ref_dist, ref_ind = ref.kneighbors(q)
    np.testing.assert_array_equal(ind.fetch(), ref_ind)
    np.testing.assert_allclose(dist.fetch(), ref_dist, rtol=1e-9, atol=1e-12)
    own_dist, own_ind = ours.kneighbors(n_neighbors=3)  # the training rows, each without itself
    ref_dist, ref_ind = ref.kneighbors(n_neighbors=3)
    np.testing.assert_array_equal(own_ind.fetch(), ref_ind)
    np.testing.assert_allclose(own_dist.fetch(), ref_dist, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("chunks", CHUNKINGS, ids=IDS)
@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_classifier_and_regressor_equal_sklearns(data, chunks, weights):
    x, q, y, y2 = data
    xt = mt.tensor(x, chunk_size=chunks)
    clf, ref = KNeighborsClassifier(5, weights=weights).fit(xt, y), skn.KNeighborsClassifier(5, weights=weights).fit(x, y)
    np.testing.assert_array_equal(clf.predict(q).fetch(), ref.predict(q))
    np.testing.assert_allclose(clf.predict_proba(q).fetch(), ref.predict_proba(q), rtol=1e-12)
    assert clf.score(x, y) == pytest.approx(ref.score(x, y))
    for target in (y2[:, 0], y2):
        reg = KNeighborsRegressor(5, weights=weights).fit(xt, target)
        ref_reg = skn.KNeighborsRegressor(5, weights=weights).fit(x, target)
        np.testing.assert_allclose(reg.predict(q).fetch(), ref_reg.predict(q), rtol=1e-12)


def test_string_labels_protocol_and_errors(data):
    x, q, y, _ = data
    labels = np.array(["a", "b", "c"])[y]
    clf = KNeighborsClassifier(3).fit(x, labels)
    np.testing.assert_array_equal(clf.predict(q).fetch(), skn.KNeighborsClassifier(3).fit(x, labels).predict(q))
    assert clone(clf).get_params() == clf.get_params()
    with pytest.raises(ValueError, match="n_neighbors <= n_samples_fit"):
        NearestNeighbors(n_neighbors=300).fit(x).kneighbors(q)
    with pytest.raises(ValueError, match="Expected n_neighbors > 0. Got 0"):
        NearestNeighbors().fit(x).kneighbors(q, n_neighbors=0)
    with pytest.raises(ValueError, match="weights not recognized"):
        KNeighborsClassifier(weights="bad").fit(x, y)
    with pytest.raises(NotImplementedError, match="algorithm='kd_tree'"):
        NearestNeighbors(algorithm="kd_tree").fit(x)
