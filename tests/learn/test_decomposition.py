"""mars.learn.decomposition against scikit-learn: components equal up to sign, variances and transforms equal."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import decomposition as skd
from sklearn.base import clone
from sklearn.pipeline import make_pipeline

import mars.tensor as mt
from mars.learn.decomposition import PCA, TruncatedSVD
from mars.learn.preprocessing import StandardScaler

RNG = np.random.RandomState(1)
# 40 x 6 with a decaying spectrum, so that a randomized SVD is accurate
X = (RNG.normal(size=(40, 6)) * np.array([10.0, 5.0, 3.0, 1.0, 0.3, 0.1])) @ np.linalg.qr(RNG.normal(size=(6, 6)))[0]
X += 4.0
CHUNKS = [None, 7, ((20, 1, 19), (4, 2)), (1, 6)]


def _same_up_to_sign(a, b, atol=1e-8):
    signs = np.sign((a * b).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(a * signs, b, atol=atol)


@pytest.mark.parametrize("chunks", CHUNKS, ids=["one", "even", "uneven", "rows1"])
@pytest.mark.parametrize("solver", ["full", "covariance_eigh"])
@pytest.mark.parametrize("n_components", [None, 3, 0.95, "mle"])
def test_pca_matches(chunks, solver, n_components):
    ours = PCA(n_components, svd_solver=solver).fit(mt.tensor(X, chunk_size=chunks))
    theirs = skd.PCA(n_components, svd_solver=solver).fit(X)
    assert ours.n_components_ == theirs.n_components_
    np.testing.assert_allclose(ours.components_, theirs.components_, atol=1e-8)  # same sign convention
    for name in ("mean_", "explained_variance_", "explained_variance_ratio_", "singular_values_"):
        np.testing.assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=1e-8, err_msg=name)
    np.testing.assert_allclose(ours.noise_variance_, theirs.noise_variance_, rtol=1e-6, atol=1e-12)
    out = ours.transform(mt.tensor(X, chunk_size=chunks))
    np.testing.assert_allclose(out.execute().fetch(), theirs.transform(X), atol=1e-8)
    np.testing.assert_allclose(ours.inverse_transform(out).fetch(), theirs.inverse_transform(theirs.transform(X)),
                               atol=1e-8)


def test_pca_whiten_score_and_auto():
    ours = PCA(3, whiten=True).fit(mt.tensor(X, chunk_size=9))
    theirs = skd.PCA(3, whiten=True).fit(X)
    assert ours._fit_svd_solver == theirs._fit_svd_solver == "full"
    np.testing.assert_allclose(ours.transform(X).fetch(), theirs.transform(X), atol=1e-8)
    np.testing.assert_allclose(ours.get_covariance(), theirs.get_covariance(), atol=1e-8)
    np.testing.assert_allclose(ours.score_samples(X).fetch(), theirs.score_samples(X), rtol=1e-8)
    assert ours.score(X) == pytest.approx(theirs.score(X), rel=1e-10)
    tall = np.tile(X, (3, 1))  # 120 x 6: tall and skinny, so 'auto' takes the covariance route
    assert PCA(2).fit(tall)._fit_svd_solver == skd.PCA(2).fit(tall)._fit_svd_solver == "covariance_eigh"
    np.testing.assert_array_equal(ours.get_feature_names_out(), theirs.get_feature_names_out())


@pytest.mark.parametrize("chunks", CHUNKS[:3], ids=["one", "even", "uneven"])
def test_pca_randomized_close_to_exact(chunks):
    ours = PCA(3, svd_solver="randomized", random_state=0).fit(mt.tensor(X, chunk_size=chunks))
    exact = skd.PCA(3, svd_solver="full").fit(X)
    _same_up_to_sign(ours.components_, exact.components_, atol=1e-6)
    np.testing.assert_allclose(ours.explained_variance_, exact.explained_variance_, rtol=1e-8)
    np.testing.assert_allclose(ours.explained_variance_ratio_, exact.explained_variance_ratio_, rtol=1e-8)
    np.testing.assert_allclose(ours.noise_variance_, exact.noise_variance_, rtol=1e-6)
    theirs = skd.PCA(3, svd_solver="randomized", random_state=0).fit(X)
    np.testing.assert_allclose(ours.components_, theirs.components_, atol=1e-6)  # svd_flip's signs


def test_pca_errors():
    with pytest.raises(NotImplementedError, match="'randomized'"):
        PCA(2, svd_solver="arpack").fit(X)
    with pytest.raises(ValueError, match="n_components=7 must be between 0 and"):
        PCA(7).fit(X)
    with pytest.raises(ValueError, match="svd_solver must be one of"):
        PCA(svd_solver="nope").fit(X)


@pytest.mark.parametrize("chunks", CHUNKS[:3], ids=["one", "even", "uneven"])
def test_truncated_svd_close_to_sklearn(chunks):
    ours = TruncatedSVD(3, random_state=0, n_iter=7).fit(mt.tensor(X, chunk_size=chunks))
    theirs = skd.TruncatedSVD(3, random_state=0, n_iter=7).fit(X)
    np.testing.assert_allclose(ours.components_, theirs.components_, atol=1e-6)
    for name in ("singular_values_", "explained_variance_", "explained_variance_ratio_"):
        np.testing.assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=1e-6, err_msg=name)
    out = ours.fit_transform(mt.tensor(X, chunk_size=chunks))
    np.testing.assert_allclose(out.execute().fetch(), theirs.transform(X), atol=1e-5)
    np.testing.assert_allclose(ours.inverse_transform(out).fetch(), theirs.inverse_transform(theirs.transform(X)),
                               atol=1e-5)
    with pytest.raises(NotImplementedError, match="use 'randomized'"):
        TruncatedSVD(algorithm="arpack").fit(X)


def test_clone_and_pipeline():
    pipe = make_pipeline(StandardScaler(), PCA(2))
    out = pipe.fit(mt.tensor(X, chunk_size=10)).transform(X).fetch()
    ref = make_pipeline(__import__("sklearn.preprocessing").preprocessing.StandardScaler(), skd.PCA(2)).fit(X)
    np.testing.assert_allclose(out, ref.transform(X), atol=1e-8)
    assert clone(PCA(3, whiten=True)).get_params()["whiten"] is True


@pytest.mark.parametrize("estimator", [PCA(), PCA(2, svd_solver="randomized", random_state=0),
                                       TruncatedSVD(1, random_state=0)], ids=["pca", "pca-rand", "tsvd"])
def test_sklearn_check_estimator(estimator):
    from sklearn.utils.estimator_checks import check_estimator

    results = check_estimator(estimator, on_fail=None, on_skip=None)
    failed = {r["check_name"]: str(r["exception"])[:300] for r in results if r["status"] == "failed"}
    assert not failed, failed
