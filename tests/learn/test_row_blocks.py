"""Chunk functions that work through a chunk a block of rows at a time give scikit-learn's answers when a
chunk spans several blocks, a ragged last block included (the blocks are made small here)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import cluster as skc
from sklearn import linear_model as skl
from sklearn.datasets import make_classification

import mars.tensor as mt
from mars.learn.cluster import KMeans, _passes
from mars.learn.linear_model import LogisticRegression, _logistic
from mars.learn.linear_model._logistic import _encode_classes


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_logistic_regression_over_several_blocks_per_chunk(monkeypatch, n_classes, weighted):
    monkeypatch.setattr(_logistic, "_BLOCK", 37)
    x, y = make_classification(700, 6, n_informative=4, n_classes=n_classes, random_state=5)
    sw = np.random.default_rng(1).random(700) if weighted else None
    ours = LogisticRegression(C=0.5).fit(mt.tensor(x, chunk_size=((300, 1, 399), (6,))), y, sample_weight=sw)
    ref = skl.LogisticRegression(C=0.5).fit(x, y, sample_weight=sw)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-5, atol=1e-6)


def test_binomial_loss_is_stable_for_huge_scores():
    x = np.array([[800.0], [-800.0], [0.0]])
    y = np.array([0.0, 1.0, 1.0])
    grad = np.zeros((1, 2))
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        loss = _logistic._binomial_block(x, y, None, np.array([1.0]), 0.0, grad)
    assert loss == pytest.approx(800.0 + 800.0 + np.log(2.0))
    np.testing.assert_allclose(grad, [[800.0 + 800.0, 1.0 - 1.0 - 0.5]])


def test_kmeans_over_several_blocks_per_chunk(monkeypatch):
    monkeypatch.setattr(_passes, "_BLOCK", 29)
    monkeypatch.setattr(_passes, "_block_rows", lambda k: 29)
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.normal(c, 1.0, size=(150, 3)) for c in (0, 6, 12)])
    init = x[[0, 1, 160, 170, 300]]
    sw = rng.random(len(x))
    ours = KMeans(5, init=init, n_init=1).fit(mt.tensor(x, chunk_size=100), sample_weight=sw)
    ref = skc.KMeans(5, init=init, n_init=1).fit(x, sample_weight=sw)
    np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, rtol=1e-10)
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    assert ours.inertia_ == pytest.approx(ref.inertia_, rel=1e-10)
    np.testing.assert_allclose(ours.transform(x).fetch(), ref.transform(x), rtol=1e-10)


def test_kmeans_duplicate_centres_keep_the_first_as_argmin():
    x = np.random.default_rng(2).normal(size=(90, 2))
    centres = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
    labels, _ = _passes._labels_chunk(0, x, centres)
    assert set(np.unique(labels)) <= {0, 2}
    _, weights, _ = _passes._lloyd_chunk(0, x, centres, False, False)
    assert weights[1] == 0 and weights.sum() == len(x)
    stats, step_labels = _passes._step_chunk(0, x, centres, False)
    np.testing.assert_array_equal(step_labels, labels)
    assert stats[1, -2] == 0 and stats[:, -2].sum() == len(x)


def test_kmeans_pass_from_last_labels_adds_the_moves_only():
    rng = np.random.default_rng(6)
    x = rng.normal(size=(500, 4))
    first, second = x[:3] + 0.0, x[:3] + 0.3
    full_first, labels = _passes._step_chunk(0, x, first, False)
    full_second, labels_second = _passes._step_chunk(0, x, second, False)
    delta, labels_again = _passes._step_chunk(0, x, labels, second, False)
    np.testing.assert_array_equal(labels_again, labels_second)
    assert (labels != labels_second).any()  # some rows did move
    np.testing.assert_allclose(full_first[:, :-1] + delta[:, :-1], full_second[:, :-1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("y", [np.array([7, 3, 7, 5]), np.array([-2, 9, -2], dtype=np.int8),
                               np.array([3, 2**40]), np.array([1.5, 0.5, 1.5]), np.array(["b", "a", "b"]),
                               np.array([0], dtype=np.uint16)], ids=["int", "int8", "wide", "float", "str", "one"])
def test_encode_classes_is_np_unique(y):
    classes, encoded = _encode_classes(y)
    ref_classes, ref_encoded = np.unique(y, return_inverse=True)
    assert classes.dtype == ref_classes.dtype
    np.testing.assert_array_equal(classes, ref_classes)
    np.testing.assert_array_equal(encoded, ref_encoded)
