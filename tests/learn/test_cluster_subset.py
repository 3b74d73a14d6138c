"""A representative subset of mars.learn on a 2-worker cluster: the chunk functions travel to worker processes."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import cluster as skc
from sklearn import decomposition as skd
from sklearn import metrics as skm
from sklearn import model_selection as sk_ms
from sklearn import preprocessing as skp

import mars.tensor as mt
from mars.core.session import get_default_session, set_default_session
from mars.learn.cluster import MiniBatchKMeans
from mars.learn.decomposition import PCA
from mars.learn.metrics import accuracy_score, r2_score
from mars.learn.model_selection import train_test_split
from mars.learn.preprocessing import StandardScaler


@pytest.fixture(scope="module")
def cluster_session():
    from mars.deploy.local import new_cluster

    with new_cluster(n_worker=2, n_cpu=1) as c:
        yield c.session


@pytest.fixture(autouse=True)
def _on_the_cluster(cluster_session, _fresh_session):
    """Each test runs on the cluster's session (conftest's local one is set aside)."""
    previous = get_default_session()
    set_default_session(cluster_session)
    yield
    set_default_session(previous)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((240, 5)) * [1, 2, 3, 4, 5] + [0, 1, 2, 3, 4]
    x[:, 1] += x[:, 0]
    return x


def test_standard_scaler(data):
    xt = mt.tensor(data, chunk_size=((100, 1, 139), (5,)))
    ours, ref = StandardScaler().fit(xt), skp.StandardScaler().fit(data)
    np.testing.assert_allclose(ours.mean_, ref.mean_, rtol=1e-12)
    np.testing.assert_allclose(ours.scale_, ref.scale_, rtol=1e-12)
    np.testing.assert_allclose(ours.transform(xt).fetch(), ref.transform(data), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("solver", ["full", "covariance_eigh", "randomized"])
def test_pca(data, solver):
    xt = mt.tensor(data, chunk_size=60)
    ours = PCA(n_components=3, svd_solver=solver, random_state=0).fit(xt)
    ref = skd.PCA(n_components=3, svd_solver="full").fit(data)
    np.testing.assert_allclose(ours.explained_variance_, ref.explained_variance_, rtol=1e-7)
    np.testing.assert_allclose(np.abs(ours.components_), np.abs(ref.components_), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.abs(ours.transform(xt).fetch()), np.abs(ref.transform(data)), rtol=1e-6, atol=1e-8)


def test_metrics(data):
    y_true = (data[:, 0] > 0).astype(int)
    y_pred = (data[:, 1] > 1).astype(int)
    chunks = 50
    assert accuracy_score(mt.tensor(y_true, chunk_size=chunks), mt.tensor(y_pred, chunk_size=chunks)) == \
        pytest.approx(skm.accuracy_score(y_true, y_pred), rel=1e-12)
    assert r2_score(mt.tensor(data[:, 1], chunk_size=chunks), mt.tensor(data[:, 0], chunk_size=chunks)) == \
        pytest.approx(skm.r2_score(data[:, 1], data[:, 0]), rel=1e-12)


def test_train_test_split(data):
    y = np.arange(len(data))
    parts = train_test_split(mt.tensor(data, chunk_size=70), mt.tensor(y, chunk_size=70), test_size=0.25,
                             random_state=3)
    refs = sk_ms.train_test_split(data, y, test_size=0.25, random_state=3)
    for ours, ref in zip(parts, refs):
        np.testing.assert_array_equal(ours.fetch(), ref)


def test_minibatch_kmeans(data):
    kw = {"batch_size": 40, "random_state": 0, "max_no_improvement": 4}
    ours = MiniBatchKMeans(3, **kw).fit(mt.tensor(data, chunk_size=70))
    ref = skc.MiniBatchKMeans(3, **kw).fit(data)
    np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, rtol=1e-10)
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    ours.partial_fit(mt.tensor(data[:90], chunk_size=40))
    ref.partial_fit(data[:90])
    np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, rtol=1e-10)
