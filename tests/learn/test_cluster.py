"""mars.learn.cluster against scikit-learn, across chunkings; KMeans and LogisticRegression on a 2-worker cluster."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import cluster as skc
from sklearn.base import clone
from sklearn.datasets import make_blobs
from sklearn.pipeline import make_pipeline

import mars.tensor as mt
from mars.core.session import get_default_session, set_default_session
from mars.learn.cluster import KMeans
from mars.learn.linear_model import LogisticRegression
from mars.tensor.core import Tensor

CHUNKINGS = [None, 70, ((100, 1, 99), (3,)), ((1,) * 5 + (195,), (3,))]
IDS = ["one", "even", "uneven", "size1"]


@pytest.fixture(scope="module")
def blobs():
    x, _ = make_blobs(200, 3, centers=4, cluster_std=1.5, random_state=3)
    return x


@pytest.mark.parametrize("chunks", CHUNKINGS, ids=IDS)
def test_same_initial_centres_give_sklearns_fit(blobs, chunks):
    init = blobs[:4]
    ours = KMeans(4, init=init, n_init=1).fit(mt.tensor(blobs, chunk_size=chunks))
    ref = skc.KMeans(4, init=init, n_init=1).fit(blobs)
    np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    assert ours.labels_.dtype == ref.labels_.dtype
    assert ours.inertia_ == pytest.approx(ref.inertia_, rel=1e-12)
    assert ours.n_iter_ == ref.n_iter_


def test_sample_weight_and_dataframe_input(blobs):
    import pandas as pd

    import mars.dataframe as md

    sw = np.random.default_rng(0).random(len(blobs))
    frame = pd.DataFrame(blobs, columns=["a", "b", "c"])
    ours = KMeans(4, init=blobs[:4]).fit(md.DataFrame(frame, chunk_size=60), sample_weight=sw)
    ref = skc.KMeans(4, init=blobs[:4]).fit(frame, sample_weight=sw)
    np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, rtol=1e-12)
    assert ours.inertia_ == pytest.approx(ref.inertia_, rel=1e-12)
    assert list(ours.feature_names_in_) == ["a", "b", "c"]


def test_random_init_draws_sklearns_centres(blobs):
    ours = KMeans(4, init="random", n_init=3, random_state=7).fit(mt.tensor(blobs, chunk_size=50))
    ref = skc.KMeans(4, init="random", n_init=3, random_state=7).fit(blobs)
    np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, rtol=1e-12)
    assert ours.inertia_ == pytest.approx(ref.inertia_, rel=1e-12)


@pytest.mark.parametrize("init", ["k-means||", "k-means++"])
def test_scalable_init_inertia_within_one_percent_of_sklearns_best(init):
    x, _ = make_blobs(3000, 5, centers=8, cluster_std=1.0, random_state=0)
    best = skc.KMeans(8, n_init=10, random_state=0).fit(x).inertia_
    for seed in range(3):
        ours = KMeans(8, init=init, random_state=seed).fit(mt.tensor(x, chunk_size=700))
        assert ours.inertia_ <= best * 1.01, (seed, ours.inertia_, best)


def test_empty_cluster_is_relocated_as_sklearn(blobs):
    init = np.vstack([blobs[:3], [[100.0, 100.0, 100.0]]])  # the last centre attracts no point
    ours = KMeans(4, init=init, n_init=1).fit(mt.tensor(blobs, chunk_size=70))
    ref = skc.KMeans(4, init=init, n_init=1).fit(blobs)
    np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, rtol=1e-10)
    assert ours.inertia_ == pytest.approx(ref.inertia_, rel=1e-10)


def test_predict_transform_score_are_sklearns(blobs):
    ours = KMeans(4, init=blobs[:4]).fit(blobs)
    ref = skc.KMeans(4, init=blobs[:4]).fit(blobs)
    q = blobs[::3] + 0.5
    pred = ours.predict(mt.tensor(q, chunk_size=13))
    assert isinstance(pred, Tensor)
    np.testing.assert_array_equal(pred.fetch(), ref.predict(q))
    np.testing.assert_allclose(ours.transform(q).fetch(), ref.transform(q), rtol=1e-9)
    assert ours.score(q) == pytest.approx(ref.score(q), rel=1e-12)
    np.testing.assert_array_equal(KMeans(4, init=blobs[:4]).fit_predict(blobs), ref.labels_)


def test_estimator_protocol(blobs):
    km = KMeans(3, init="random", n_init=2, random_state=0)
    assert clone(km).get_params() == km.get_params()
    assert km.set_params(n_clusters=4).n_clusters == 4
    pipe = make_pipeline(KMeans(4, init=blobs[:4]))
    np.testing.assert_array_equal(pipe.fit(blobs).predict(blobs).fetch(), pipe[0].labels_)
    with pytest.raises(Exception, match="not fitted"):
        KMeans(2).predict(blobs)


def test_bad_parameters_are_named(blobs):
    with pytest.raises(ValueError, match="n_samples=3 should be >= n_clusters=4"):
        KMeans(4).fit(blobs[:3])
    with pytest.raises(ValueError, match="init must be one of"):
        KMeans(4, init="nope").fit(blobs)
    with pytest.raises(ValueError, match=r"shape of the initial centers \(2, 3\)"):
        KMeans(4, init=blobs[:2]).fit(blobs)
    with pytest.raises(ValueError, match="features"):
        KMeans(4, init=blobs[:4]).fit(blobs).predict(blobs[:, :2])


# ------------------------------------------------------------------ on a 2-worker cluster
@pytest.fixture(scope="module")
def cluster_session():
    from mars.deploy.local import new_cluster

    with new_cluster(n_worker=2, n_cpu=1) as c:
        yield c.session


def test_kmeans_and_logistic_regression_on_a_cluster(cluster_session, blobs):
    from sklearn.linear_model import LogisticRegression as SkLogistic

    previous = get_default_session()
    set_default_session(cluster_session)
    try:
        ours = KMeans(4, init=blobs[:4]).fit(mt.tensor(blobs, chunk_size=60))
        ref = skc.KMeans(4, init=blobs[:4]).fit(blobs)
        np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, rtol=1e-12)
        np.testing.assert_array_equal(ours.predict(blobs).fetch(), ref.labels_)
        y = (blobs[:, 0] > np.median(blobs[:, 0])).astype(int)
        clf = LogisticRegression().fit(mt.tensor(blobs, chunk_size=60), y)
        np.testing.assert_allclose(clf.coef_, SkLogistic().fit(blobs, y).coef_, rtol=1e-6, atol=1e-8)
    finally:
        set_default_session(previous)
