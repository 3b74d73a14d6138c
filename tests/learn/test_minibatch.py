"""mars.learn.cluster.MiniBatchKMeans against scikit-learn's: the same draws give the same fit, across chunkings."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import cluster as skc
from sklearn.base import clone
from sklearn.datasets import make_blobs
from sklearn.pipeline import make_pipeline

import mars.tensor as mt
from mars.learn.cluster import MiniBatchKMeans, _minibatch
from mars.tensor.core import Tensor

CHUNKINGS = [None, 70, ((150, 1, 149), (3,)), ((1,) * 5 + (295,), (3,))]
IDS = ["one", "even", "uneven", "size1"]


@pytest.fixture(scope="module")
def blobs():
    x, _ = make_blobs(300, 3, centers=4, cluster_std=1.2, random_state=3)
    return x


def _same_fit(ours, ref, rtol=1e-10):
    np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, rtol=rtol, atol=1e-10)
    assert ours.n_steps_ == ref.n_steps_
    assert getattr(ours, "n_iter_", None) == getattr(ref, "n_iter_", None)
    assert ours.inertia_ == pytest.approx(ref.inertia_, rel=rtol)
    if hasattr(ref, "labels_"):
        np.testing.assert_array_equal(ours.labels_, ref.labels_)
        assert ours.labels_.dtype == ref.labels_.dtype
    np.testing.assert_allclose(ours._counts, ref._counts, rtol=rtol)


@pytest.mark.parametrize("chunks", CHUNKINGS, ids=IDS)
@pytest.mark.parametrize("init", ["k-means++", "random", "array"])
def test_same_random_state_gives_sklearns_fit(blobs, chunks, init):
    init = blobs[:4].copy() if init == "array" else init
    kw = {"init": init, "batch_size": 32, "random_state": 0, "max_no_improvement": 5}
    ours = MiniBatchKMeans(4, **kw).fit(mt.tensor(blobs, chunk_size=chunks))
    _same_fit(ours, skc.MiniBatchKMeans(4, **kw).fit(blobs))


def test_sample_weight_tol_and_reassignment_as_sklearn(blobs):
    sw = np.random.default_rng(1).random(len(blobs)) * 3
    kw = {"batch_size": 20, "random_state": 4, "tol": 1e-3, "max_no_improvement": None, "reassignment_ratio": 0.4,
              "n_init": 2, "init_size": 40}
    ours = MiniBatchKMeans(4, **kw).fit(mt.tensor(blobs, chunk_size=70), sample_weight=sw)
    ref = skc.MiniBatchKMeans(4, **kw).fit(blobs, sample_weight=sw)
    assert ref.n_steps_ < (ref.max_iter * len(blobs)) // 20  # stopped by tol
    _same_fit(ours, ref)


def test_callable_init_and_no_labels(blobs):
    def first_rows(x, k, random_state):
        return x[:k]

    kw = {"init": first_rows, "batch_size": 50, "random_state": 2, "compute_labels": False, "max_iter": 3,
              "max_no_improvement": None}
    ours = MiniBatchKMeans(4, **kw).fit(mt.tensor(blobs, chunk_size=70))
    ref = skc.MiniBatchKMeans(4, **kw).fit(blobs)
    assert not hasattr(ours, "labels_")
    _same_fit(ours, ref)


@pytest.mark.parametrize("chunks", [None, ((7, 1, 32), (3,))], ids=["one", "uneven"])
def test_partial_fit_follows_sklearn(blobs, chunks):
    kw = {"batch_size": 16, "random_state": 0, "reassignment_ratio": 0.2}
    ours, ref = MiniBatchKMeans(4, **kw), skc.MiniBatchKMeans(4, **kw)
    sw = np.linspace(0.5, 2, 40)
    for start in range(0, 200, 40):
        part = blobs[start:start + 40]
        ours.partial_fit(mt.tensor(part, chunk_size=chunks), sample_weight=sw)
        ref.partial_fit(part, sample_weight=sw)
        _same_fit(ours, ref)
    assert ours.n_steps_ == 5


def test_inertia_within_sklearns_spread_on_clustered_data():
    x, _ = make_blobs(20_000, 6, centers=10, cluster_std=1.5, random_state=0)
    ref = np.mean([skc.MiniBatchKMeans(10, batch_size=512, random_state=s, n_init=3).fit(x).inertia_
                   for s in range(3)])
    xt = mt.tensor(x, chunk_size=3_000)
    for seed in (10, 11, 12):
        ours = MiniBatchKMeans(10, batch_size=512, random_state=seed, n_init=3).fit(xt)
        assert ours.inertia_ <= ref * 1.03, (seed, ours.inertia_, ref)


def test_batches_are_gathered_many_steps_per_pass(blobs, monkeypatch):
    calls = []
    real = _minibatch.take_rows
    monkeypatch.setattr(_minibatch, "take_rows", lambda x, *idx: calls.append(len(idx)) or real(x, *idx))
    kw = {"init": blobs[:4].copy(), "batch_size": 10, "random_state": 0, "max_no_improvement": None, "max_iter": 2,
              "reassignment_ratio": 0.0}
    ours = MiniBatchKMeans(4, **kw).fit(mt.tensor(blobs, chunk_size=70))
    assert ours.n_steps_ == 60 and sum(calls) == 60 and len(calls) <= 4, calls
    _same_fit(ours, skc.MiniBatchKMeans(4, **kw).fit(blobs))


@pytest.mark.parametrize("chunks", CHUNKINGS, ids=IDS)
def test_take_rows_gathers_with_repeats(blobs, chunks):
    a, b = np.array([299, 0, 150, 150, 3]), np.array([], dtype=np.int64)
    got = _minibatch.take_rows(mt.tensor(blobs, chunk_size=chunks), a, b, np.array([149]))
    np.testing.assert_array_equal(got[0], blobs[a])
    assert got[1].shape == (0, 3)
    np.testing.assert_array_equal(got[2], blobs[[149]])


def test_predict_transform_and_estimator_protocol(blobs):
    kw = {"batch_size": 32, "random_state": 0}
    ours, ref = MiniBatchKMeans(4, **kw).fit(blobs), skc.MiniBatchKMeans(4, **kw).fit(blobs)
    q = blobs[::3] + 0.25
    pred = ours.predict(mt.tensor(q, chunk_size=17))
    assert isinstance(pred, Tensor)
    np.testing.assert_array_equal(pred.fetch(), ref.predict(q))
    np.testing.assert_allclose(ours.transform(q).fetch(), ref.transform(q), rtol=1e-9)
    assert ours.score(q) == pytest.approx(ref.score(q), rel=1e-9)
    assert clone(ours).get_params() == ref.get_params() | {}
    pipe = make_pipeline(MiniBatchKMeans(4, **kw)).fit(blobs)
    np.testing.assert_array_equal(pipe.predict(blobs).fetch(), ref.labels_)
    with pytest.raises(Exception, match="not fitted"):
        MiniBatchKMeans(2).predict(blobs)


def test_bad_parameters_are_named(blobs):
    with pytest.raises(ValueError, match="'batch_size' parameter of MiniBatchKMeans .* Got 0"):
        MiniBatchKMeans(4, batch_size=0).fit(blobs)
    with pytest.raises(ValueError, match="reassignment_ratio should be >= 0, got -1"):
        MiniBatchKMeans(4, reassignment_ratio=-1).fit(blobs)
    with pytest.raises(ValueError, match="n_samples=3 should be >= n_clusters=4"):
        MiniBatchKMeans(4).fit(blobs[:3])
    with pytest.raises(ValueError, match="init must be one of"):
        MiniBatchKMeans(4, init="k-means||").fit(blobs)
    with pytest.raises(ValueError, match=r"shape of the initial centers \(2, 3\)"):
        MiniBatchKMeans(4, init=blobs[:2]).fit(blobs)
    with pytest.warns(RuntimeWarning, match="init_size=2 should be larger than n_clusters=4"):
        MiniBatchKMeans(4, init_size=2, random_state=0).fit(blobs)
    with pytest.warns(RuntimeWarning, match="performing only one init"):
        MiniBatchKMeans(4, init=blobs[:4], n_init=3).fit(blobs)


def test_stranded_centre_is_reassigned_as_sklearn(blobs, monkeypatch):
    init = np.vstack([blobs[:3], [[100.0, 100.0, 100.0]]])  # the last centre attracts no point
    moves = []
    real = _minibatch._reassign
    monkeypatch.setattr(_minibatch, "_reassign", lambda c, counts, *a: moves.append(counts.min() == 0) or
                        real(c, counts, *a))
    kw = {"init": init, "batch_size": 25, "random_state": 1, "max_no_improvement": None, "max_iter": 3}
    ours = MiniBatchKMeans(4, **kw).fit(mt.tensor(blobs, chunk_size=70))
    ref = skc.MiniBatchKMeans(4, **kw).fit(blobs)
    assert any(moves) and np.abs(ours.cluster_centers_).max() < 50
    _same_fit(ours, ref)
    ours, ref = MiniBatchKMeans(4, **kw), skc.MiniBatchKMeans(4, **kw)
    for start in range(0, 120, 40):
        ours.partial_fit(mt.tensor(blobs[start:start + 40], chunk_size=15))
        ref.partial_fit(blobs[start:start + 40])
        _same_fit(ours, ref)
