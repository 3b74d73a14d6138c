"""The one-pass fits (issue 20): scaler moments merged across blocks, PCA's covariance pass, k-means assignment
by comparison. Each against scikit-learn or a brute-force answer, on several row chunkings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn import cluster as skc
from sklearn import decomposition as skd
from sklearn import preprocessing as skp

import mars.tensor as mt
from mars.learn.cluster import KMeans, _passes
from mars.learn.decomposition import PCA
from mars.learn.preprocessing import StandardScaler

CHUNKS = [None, {0: 1000}, {0: (5000, 3, 5004)}, {0: 1}]  # row chunks; features whole
IDS = ["one", "even", "uneven", "rows1"]
RNG = np.random.default_rng(7)


@pytest.mark.parametrize("chunks", CHUNKS, ids=IDS)
def test_scaler_far_from_zero(chunks):
    """Blocks' means near 1e8 are merged without losing the variance (the exact answer, not just sklearn's)."""
    x = 1e8 + RNG.standard_normal((10007, 2))
    ours = StandardScaler().fit(mt.tensor(x, chunk_size=chunks))
    theirs = skp.StandardScaler().fit(x)
    np.testing.assert_allclose(ours.var_, np.var(x - 1e8, axis=0), rtol=1e-12)
    np.testing.assert_allclose(ours.mean_, theirs.mean_, rtol=1e-14)


@pytest.mark.parametrize("chunks", CHUNKS[:3], ids=IDS[:3])
@pytest.mark.parametrize("weighted", [False, True])
def test_scaler_nans_and_weights(chunks, weighted):
    x = 1e3 + RNG.standard_normal((10007, 4))
    x[5, 1] = np.nan
    x[:, 2] = np.nan  # no value at all: mean and variance NaN
    x[:4000, 0] = np.nan  # whole blocks without values
    x[::3, 3] = np.nan
    w = RNG.random(len(x)) if weighted else None
    ours = StandardScaler().fit(mt.tensor(x, chunk_size=chunks), sample_weight=w)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        theirs = skp.StandardScaler().fit(x, sample_weight=w)
    for name in ("mean_", "var_", "scale_", "n_samples_seen_"):
        np.testing.assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=1e-11, err_msg=name)


@pytest.mark.parametrize("chunks", [None, {0: 700}, {0: (1500, 1, 499)}, {0: 1}], ids=IDS)
def test_pca_covariance_pass(chunks):
    x = RNG.standard_normal((2000, 5)) * np.array([5.0, 3.0, 2.0, 1.0, 0.5]) + 10.0
    ours = PCA(3, svd_solver="covariance_eigh").fit(mt.tensor(x, chunk_size=chunks))
    theirs = skd.PCA(3, svd_solver="covariance_eigh").fit(x)
    np.testing.assert_allclose(ours.components_, theirs.components_, atol=1e-10)
    for name in ("mean_", "explained_variance_", "singular_values_", "noise_variance_"):
        np.testing.assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=1e-10, err_msg=name)


def test_pca_covariance_pass_float32():
    x = (RNG.standard_normal((3000, 4)) * np.array([4.0, 2.0, 1.0, 0.5])).astype(np.float32)
    ours = PCA(2, svd_solver="covariance_eigh").fit(mt.tensor(x, chunk_size={0: 1000}))
    theirs = skd.PCA(2, svd_solver="covariance_eigh").fit(x)
    assert ours.mean_.dtype == theirs.mean_.dtype == np.float32
    np.testing.assert_allclose(ours.explained_variance_, theirs.explained_variance_, rtol=1e-4)


def test_kmeans_ties_take_the_first_centre():
    """Duplicate centres tie for every row near them: the first wins, as argmin (and scikit-learn) decides."""
    x = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [5.0, 5.0], [6.0, 5.0], [2.5, 2.5]] * 3)
    centers = np.array([[0.0, 0.0], [0.0, 0.0], [5.0, 5.0], [5.0, 5.0]])
    d2 = ((x[:, None] - centers[None]) ** 2).sum(-1)
    labels, dist = _passes._labels_chunk(0, x, centers)
    np.testing.assert_array_equal(labels, d2.argmin(axis=1))
    np.testing.assert_allclose(dist, d2.min(axis=1))
    sums, weights, inertia = _passes._lloyd_chunk(0, x, np.full(len(x), 2.0), centers, True, True)
    np.testing.assert_array_equal(weights, 2.0 * np.bincount(d2.argmin(axis=1), minlength=4))
    np.testing.assert_allclose(inertia.sum(), 2.0 * d2.min(axis=1).sum())


@pytest.mark.parametrize("chunks", [None, {0: 333}, {0: (500, 1, 499)}, {0: 1}], ids=IDS)
def test_kmeans_lloyd_matches(chunks):
    x = np.vstack([RNG.normal(c, 1.0, size=(250, 3)) for c in (0.0, 4.0, 8.0, 12.0)])
    init = x[[0, 1, 2, 3]]
    ours = KMeans(4, init=init, n_init=1, max_iter=5, tol=0.0).fit(mt.tensor(x, chunk_size=chunks))
    theirs = skc.KMeans(4, init=init, n_init=1, max_iter=5, tol=0.0).fit(x)
    np.testing.assert_allclose(ours.cluster_centers_, theirs.cluster_centers_, rtol=1e-12)
    np.testing.assert_array_equal(ours.labels_, theirs.labels_)
    assert ours.inertia_ == pytest.approx(theirs.inertia_, rel=1e-10)
    assert ours.n_iter_ == theirs.n_iter_
