"""mars.learn.metrics against scikit-learn on the same data, across chunkings."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn.metrics as skm
from sklearn.metrics import pairwise as skpw

import mars.dataframe as md
import mars.tensor as mt
from mars.learn import metrics as mm
from mars.learn.metrics import pairwise as mpw

RNG = np.random.RandomState(3)
N = 23
Y3_TRUE = RNG.randint(0, 3, N)
Y3_PRED = np.where(RNG.rand(N) < 0.6, Y3_TRUE, RNG.randint(0, 3, N))
Y2_TRUE = RNG.randint(0, 2, N)
SCORE = np.round(RNG.rand(N) * 0.5 + Y2_TRUE * 0.3, 2)  # ties included
Y2_PRED = (SCORE > 0.5).astype(int)
W = RNG.rand(N)
CHUNKS = [None, 5, ((10, 1, 12),), 1]


def t(x, chunks):
    """``x`` as a tensor chunked along its rows by ``chunks`` (its other axes whole when given per axis)."""
    x = np.asarray(x)
    if isinstance(chunks, tuple) and len(chunks) < x.ndim:
        chunks = chunks + (None,) * (x.ndim - len(chunks))
    return mt.tensor(x, chunk_size=chunks)


@pytest.fixture(params=CHUNKS, ids=["one", "even", "uneven", "rows1"])
def chunks(request):
    return request.param


@pytest.mark.parametrize("weighted", [False, True])
def test_accuracy_and_confusion_matrix(chunks, weighted):
    w = W if weighted else None
    for normalize in (True, False):
        ours = mm.accuracy_score(t(Y3_TRUE, chunks), t(Y3_PRED, chunks), normalize=normalize, sample_weight=w)
        assert isinstance(ours, float)
        assert ours == pytest.approx(skm.accuracy_score(Y3_TRUE, Y3_PRED, normalize=normalize, sample_weight=w))
    for normalize in (None, "true", "pred", "all"):
        np.testing.assert_allclose(
            mm.confusion_matrix(t(Y3_TRUE, chunks), t(Y3_PRED, chunks), sample_weight=w, normalize=normalize),
            skm.confusion_matrix(Y3_TRUE, Y3_PRED, sample_weight=w, normalize=normalize))
    np.testing.assert_array_equal(mm.confusion_matrix(Y3_TRUE, Y3_PRED, labels=[2, 0]),
                                  skm.confusion_matrix(Y3_TRUE, Y3_PRED, labels=[2, 0]))


@pytest.mark.parametrize("average", ["micro", "macro", "weighted", None])
def test_precision_recall_f1_multiclass(chunks, average):
    args = (t(Y3_TRUE, chunks), t(Y3_PRED, chunks))
    for ours, theirs in ((mm.precision_score, skm.precision_score), (mm.recall_score, skm.recall_score),
                         (mm.f1_score, skm.f1_score)):
        np.testing.assert_allclose(ours(*args, average=average), theirs(Y3_TRUE, Y3_PRED, average=average))
    np.testing.assert_allclose(mm.fbeta_score(*args, beta=0.5, average=average, sample_weight=W),
                               skm.fbeta_score(Y3_TRUE, Y3_PRED, beta=0.5, average=average, sample_weight=W))
    np.testing.assert_allclose(mm.f1_score(*args, average=average, labels=[0, 2]),
                               skm.f1_score(Y3_TRUE, Y3_PRED, average=average, labels=[0, 2]))


def test_binary_scores_strings_and_zero_division():
    yt, yp = np.array(["no", "yes", "yes", "no", "yes"]), np.array(["no", "yes", "no", "no", "no"])
    for fn, ref in ((mm.precision_score, skm.precision_score), (mm.recall_score, skm.recall_score),
                    (mm.f1_score, skm.f1_score)):
        assert fn(t(Y2_TRUE, 4), t(Y2_PRED, 3)) == pytest.approx(ref(Y2_TRUE, Y2_PRED))
        assert fn(yt, yp, pos_label="yes") == pytest.approx(ref(yt, yp, pos_label="yes"))
        assert fn([0, 0], [0, 0], zero_division=1.0) == ref([0, 0], [0, 0], zero_division=1.0)
    with pytest.raises(ValueError, match="Target is multiclass but average='binary'"):
        mm.f1_score(Y3_TRUE, Y3_PRED)
    with pytest.raises(ValueError, match="pos_label=1 is not a valid label"):
        mm.f1_score(yt, yp)
    with pytest.warns(skm._classification.UndefinedMetricWarning if hasattr(skm, "_classification") else Warning):
        assert mm.precision_score([1, 0], [0, 0]) == 0.0


def test_log_loss(chunks):
    proba = RNG.dirichlet([1, 1, 1], size=N)
    assert mm.log_loss(t(Y3_TRUE, chunks), t(proba, chunks)) == pytest.approx(skm.log_loss(Y3_TRUE, proba))
    assert mm.log_loss(Y3_TRUE, proba, sample_weight=W, normalize=False) == pytest.approx(
        skm.log_loss(Y3_TRUE, proba, sample_weight=W, normalize=False))
    p1 = np.clip(SCORE, 0, 1)
    assert mm.log_loss(t(Y2_TRUE, chunks), t(p1, chunks)) == pytest.approx(skm.log_loss(Y2_TRUE, p1))
    with pytest.raises(ValueError, match="greater than 1"):
        mm.log_loss([0, 1], [0.5, 1.5])
    with pytest.raises(ValueError, match="different number of classes"):
        mm.log_loss(Y3_TRUE, proba[:, :2])


@pytest.mark.parametrize("multioutput", ["raw_values", "uniform_average", "variance_weighted"])
def test_regression_metrics(chunks, multioutput):
    y = RNG.normal(size=(N, 2))
    p = y + RNG.normal(scale=0.5, size=(N, 2))
    for ours, theirs in ((mm.mean_squared_error, skm.mean_squared_error),
                         (mm.mean_absolute_error, skm.mean_absolute_error),
                         (mm.root_mean_squared_error, skm.root_mean_squared_error), (mm.r2_score, skm.r2_score)):
        if multioutput == "variance_weighted" and ours is not mm.r2_score:
            continue
        got = ours(t(y, chunks), t(p, chunks), multioutput=multioutput, sample_weight=W)
        np.testing.assert_allclose(got, theirs(y, p, multioutput=multioutput, sample_weight=W), rtol=1e-12)
    assert mm.r2_score(t(y[:, 0], chunks), t(p[:, 0], chunks)) == pytest.approx(skm.r2_score(y[:, 0], p[:, 0]))
    assert mm.r2_score([1.0, 1.0], [1.0, 1.0]) == skm.r2_score([1.0, 1.0], [1.0, 1.0]) == 1.0
    assert mm.mean_squared_error(md.Series(y[:, 0], chunk_size=4), p[:, 0]) == pytest.approx(
        skm.mean_squared_error(y[:, 0], p[:, 0]))


@pytest.mark.parametrize("drop", [True, False])
def test_roc_curve_and_auc(chunks, drop):
    for w in (None, W):
        ours = mm.roc_curve(t(Y2_TRUE, chunks), t(SCORE, chunks), sample_weight=w, drop_intermediate=drop)
        theirs = skm.roc_curve(Y2_TRUE, SCORE, sample_weight=w, drop_intermediate=drop)
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b)
        assert mm.roc_auc_score(t(Y2_TRUE, chunks), t(SCORE, chunks), sample_weight=w) == pytest.approx(
            skm.roc_auc_score(Y2_TRUE, SCORE, sample_weight=w))
    assert mm.roc_auc_score(Y2_TRUE, SCORE, max_fpr=0.3) == pytest.approx(
        skm.roc_auc_score(Y2_TRUE, SCORE, max_fpr=0.3))
    labels = np.where(Y2_TRUE == 1, "b", "a")
    assert mm.roc_auc_score(labels, SCORE) == pytest.approx(skm.roc_auc_score(labels, SCORE))
    assert mm.auc([1.0, 0.5, 0.0], [1.0, 0.6, 0.0]) == pytest.approx(skm.auc([1.0, 0.5, 0.0], [1.0, 0.6, 0.0]))
    with pytest.raises(NotImplementedError, match="binary targets only"):
        mm.roc_auc_score(Y3_TRUE, RNG.dirichlet([1, 1, 1], size=N))
    with pytest.raises(ValueError, match="pos_label is not specified"):
        mm.roc_curve(labels, SCORE)


@pytest.mark.parametrize("metric", ["euclidean", "cosine", "manhattan", "chebyshev", "minkowski"])
def test_pairwise_distances(metric):
    x, y = RNG.normal(size=(11, 3)), RNG.normal(size=(7, 3))
    for cx, cy in ((None, None), (4, 3), (((5, 1, 5), (2, 1)), 1)):
        got = mm.pairwise_distances(t(x, cx), t(y, cy), metric=metric)
        np.testing.assert_allclose(got.execute().fetch(), skm.pairwise_distances(x, y, metric=metric), atol=1e-10)
        same = mm.pairwise_distances(t(x, cx), metric=metric).fetch()
        np.testing.assert_allclose(same, skm.pairwise_distances(x, metric=metric), atol=1e-10)
    with pytest.raises(ValueError, match="Unknown or unsupported metric"):
        mm.pairwise_distances(x, metric="nope")


def test_euclidean_and_cosine():
    x, y = RNG.normal(size=(9, 4)), RNG.normal(size=(5, 4))
    x[2] = 0.0
    np.testing.assert_allclose(mm.euclidean_distances(t(x, 4), y, squared=True).fetch(),
                               skpw.euclidean_distances(x, y, squared=True), atol=1e-10)
    np.testing.assert_allclose(mm.cosine_similarity(t(x, 2), t(y, 3)).fetch(), skpw.cosine_similarity(x, y),
                               atol=1e-12)
    np.testing.assert_allclose(mpw.cosine_distances(t(x, 2)).fetch(), skpw.cosine_distances(x), atol=1e-12)
    with pytest.raises(ValueError, match="Incompatible dimension"):
        mm.euclidean_distances(x, y[:, :3])


def test_scalar_metrics_work_as_sklearn_scorers():
    from sklearn.metrics import make_scorer
    from sklearn.model_selection import cross_val_score
    from sklearn.tree import DecisionTreeClassifier

    x = RNG.normal(size=(60, 3))
    y = (x[:, 0] > 0).astype(int)
    ours = cross_val_score(DecisionTreeClassifier(random_state=0), x, y, cv=3, scoring=make_scorer(mm.f1_score))
    theirs = cross_val_score(DecisionTreeClassifier(random_state=0), x, y, cv=3, scoring="f1")
    np.testing.assert_allclose(ours, theirs)
