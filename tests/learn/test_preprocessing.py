"""mars.learn.preprocessing against scikit-learn on the same data, across chunkings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn import preprocessing as skp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline

import mars.dataframe as md
import mars.tensor as mt
from mars.learn import preprocessing as mp
from mars.learn.base import fetch

RNG = np.random.RandomState(0)
X = RNG.normal(3.0, 2.0, size=(13, 4))
X[:, 2] = 5.0  # a constant feature
X[3, 1] = 40.0  # an outlier


def _fit_both(mars_cls, sk_cls, x, chunks, **params):
    ours = mars_cls(**params).fit(mt.tensor(x, chunk_size=chunks))
    theirs = sk_cls(**params).fit(x)
    return ours, theirs


@pytest.mark.parametrize("params", [{}, {"with_mean": False}, {"with_std": False},
                                    {"with_mean": False, "with_std": False}])
def test_standard_scaler_matches(row_chunks, params):
    ours, theirs = _fit_both(mp.StandardScaler, skp.StandardScaler, X, row_chunks, **params)
    for name in ("mean_", "var_", "scale_", "n_samples_seen_"):
        a, b = getattr(ours, name), getattr(theirs, name)
        if b is None:
            assert a is None, name
        else:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, err_msg=name)
    out = ours.transform(mt.tensor(X, chunk_size=row_chunks))
    np.testing.assert_allclose(out.execute().fetch(), theirs.transform(X), atol=1e-12)
    back = ours.inverse_transform(out).execute().fetch()
    np.testing.assert_allclose(back, X, atol=1e-12)


def test_standard_scaler_nan_weights_float32_and_partial_fit():
    x = X.copy()
    x[[1, 5], 0] = np.nan
    w = RNG.rand(13)
    ours = mp.StandardScaler().fit(mt.tensor(x, chunk_size=4), sample_weight=w)
    theirs = skp.StandardScaler().fit(x, sample_weight=w)
    np.testing.assert_allclose(ours.mean_, theirs.mean_)
    np.testing.assert_allclose(ours.var_, theirs.var_, atol=1e-12)
    np.testing.assert_allclose(ours.n_samples_seen_, theirs.n_samples_seen_)
    np.testing.assert_allclose(ours.transform(x).fetch(), theirs.transform(x), equal_nan=True, atol=1e-12)
    x32 = X.astype(np.float32)
    assert mp.StandardScaler().fit_transform(x32).dtype == np.float32
    ours, theirs = mp.StandardScaler(), skp.StandardScaler()
    for part in (x[:4], x[4:5], x[5:]):
        ours.partial_fit(mt.tensor(part, chunk_size=2))
        theirs.partial_fit(part)
    np.testing.assert_allclose(ours.mean_, theirs.mean_)
    np.testing.assert_allclose(ours.var_, theirs.var_, atol=1e-12)
    np.testing.assert_array_equal(ours.n_samples_seen_, theirs.n_samples_seen_)


@pytest.mark.parametrize("mars_cls,sk_cls,params,attrs", [
    (mp.MinMaxScaler, skp.MinMaxScaler, {}, ("data_min_", "data_max_", "data_range_", "scale_", "min_")),
    (mp.MinMaxScaler, skp.MinMaxScaler, {"feature_range": (-2, 3), "clip": True}, ("scale_", "min_")),
    (mp.MaxAbsScaler, skp.MaxAbsScaler, {}, ("max_abs_", "scale_")),
    (mp.RobustScaler, skp.RobustScaler, {}, ("center_", "scale_")),
    (mp.RobustScaler, skp.RobustScaler, {"quantile_range": (10, 80), "unit_variance": True}, ("center_", "scale_")),
    (mp.RobustScaler, skp.RobustScaler, {"with_centering": False}, ("scale_",)),
])
def test_other_scalers_match(row_chunks, mars_cls, sk_cls, params, attrs):
    ours, theirs = _fit_both(mars_cls, sk_cls, X, row_chunks, **params)
    for name in attrs:
        np.testing.assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=1e-12, err_msg=name)
    probe = X * 1.5 - 1  # values outside the fitted range, for clip
    out = ours.transform(mt.tensor(probe, chunk_size=row_chunks))
    np.testing.assert_allclose(out.execute().fetch(), theirs.transform(probe), atol=1e-12)
    np.testing.assert_allclose(ours.inverse_transform(out).fetch(), theirs.inverse_transform(theirs.transform(probe)),
                               atol=1e-10)


def test_min_max_and_max_abs_partial_fit():
    for mars_cls, sk_cls in ((mp.MinMaxScaler, skp.MinMaxScaler), (mp.MaxAbsScaler, skp.MaxAbsScaler)):
        ours, theirs = mars_cls(), sk_cls()
        for part in (X[:6], X[6:]):
            ours.partial_fit(part)
            theirs.partial_fit(part)
        np.testing.assert_allclose(ours.scale_, theirs.scale_)
        assert ours.n_samples_seen_ == theirs.n_samples_seen_


def test_scaler_errors():
    with pytest.raises(ValueError, match="Minimum of desired feature range"):
        mp.MinMaxScaler(feature_range=(1, 0)).fit(X)
    with pytest.raises(ValueError, match="Invalid quantile range"):
        mp.RobustScaler(quantile_range=(80, 20)).fit(X)
    with pytest.raises(NotFittedError):
        mp.StandardScaler().transform(X)
    with pytest.raises(ValueError, match="X has 3 features, but StandardScaler is expecting 4"):
        mp.StandardScaler().fit(X).transform(X[:, :3])
    with pytest.raises(ValueError, match="Expected 2D array"):
        mp.StandardScaler().fit(X[:, 0])


@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
@pytest.mark.parametrize("axis", [0, 1])
def test_normalize_matches(row_chunks, norm, axis):
    x = X - 3
    x[4] = 0.0  # a zero row
    out, norms = mp.normalize(mt.tensor(x, chunk_size=row_chunks), norm=norm, axis=axis, return_norm=True)
    expected, expected_norms = skp.normalize(x, norm=norm, axis=axis, return_norm=True)
    np.testing.assert_allclose(out.execute().fetch(), expected, atol=1e-12)
    np.testing.assert_allclose(norms.fetch(), expected_norms, atol=1e-12)
    np.testing.assert_allclose(mp.Normalizer(norm=norm).fit_transform(x).fetch(),
                               skp.Normalizer(norm=norm).fit_transform(x), atol=1e-12)
    with pytest.raises(ValueError, match="'l3' is not a supported norm"):
        mp.normalize(x, norm="l3")


def test_label_encoder_matches(row_chunks):
    labels = np.array(["b", "a", "c", "a", "b", "b", "d", "a", "c", "c", "a", "b", "a"])
    chunks = (row_chunks[0],) if isinstance(row_chunks, tuple) else row_chunks
    y = mt.tensor(labels, chunk_size=chunks)
    ours, theirs = mp.LabelEncoder().fit(y), skp.LabelEncoder().fit(labels)
    np.testing.assert_array_equal(ours.classes_, theirs.classes_)
    codes = ours.transform(y)
    np.testing.assert_array_equal(codes.execute().fetch(), theirs.transform(labels))
    np.testing.assert_array_equal(ours.inverse_transform(codes).fetch(), labels)
    np.testing.assert_array_equal(mp.LabelEncoder().fit_transform(md.Series(labels, chunk_size=4)).fetch(),
                                  theirs.transform(labels))
    with pytest.raises(ValueError, match=r"previously unseen labels: \['z'\]"):
        ours.transform(mt.tensor(np.array(["a", "z"]), chunk_size=1)).execute()
    ints = np.array([10, 3, 3, 7])
    np.testing.assert_array_equal(mp.LabelEncoder().fit_transform(ints).fetch(), skp.LabelEncoder().fit_transform(ints))


def test_one_hot_encoder_matches(row_chunks):
    frame = pd.DataFrame({"city": list("abcabcaabbcca"), "n": [3, 1, 2, 3, 3, 1, 2, 2, 1, 3, 1, 2, 2],
                          "f": np.arange(13) % 2 * 1.5})
    chunks = row_chunks[0] if isinstance(row_chunks, tuple) else row_chunks
    for drop in (None, "first", "if_binary"):
        ours = mp.OneHotEncoder(drop=drop).fit(md.DataFrame(frame, chunk_size=chunks or 13))
        theirs = skp.OneHotEncoder(drop=drop, sparse_output=False).fit(frame)
        for a, b in zip(ours.categories_, theirs.categories_):
            np.testing.assert_array_equal(a, b)
        out = ours.transform(md.DataFrame(frame, chunk_size=chunks or 13))
        np.testing.assert_array_equal(out.execute().fetch(), theirs.transform(frame))
        np.testing.assert_array_equal(ours.get_feature_names_out(), theirs.get_feature_names_out())
        back = ours.inverse_transform(out).fetch()
        np.testing.assert_array_equal(back.astype(str), theirs.inverse_transform(theirs.transform(frame)).astype(str))


def test_one_hot_encoder_unknown_and_errors():
    x = np.array([[1, 10], [2, 20], [1, 30]])
    probe = np.array([[3, 10], [2, 40]])
    ours = mp.OneHotEncoder(handle_unknown="ignore").fit(mt.tensor(x, chunk_size=2))
    theirs = skp.OneHotEncoder(handle_unknown="ignore", sparse_output=False).fit(x)
    np.testing.assert_array_equal(ours.transform(probe).fetch(), theirs.transform(probe))
    strict = mp.OneHotEncoder().fit(x)
    # the two unknown values sit in different chunks: whichever chunk runs first names its own
    with pytest.raises(ValueError, match=r"Found unknown categories (\[3\] in column 0|\[40\] in column 1)"):
        strict.transform(probe).execute()
    with pytest.raises(NotImplementedError, match="sparse_output=False"):
        mp.OneHotEncoder(sparse_output=True).fit(x)
    given = mp.OneHotEncoder(categories=[[1, 2, 3], [10, 20, 30, 40]]).fit(x)
    np.testing.assert_array_equal(given.transform(probe).fetch(),
                                  skp.OneHotEncoder(categories=[[1, 2, 3], [10, 20, 30, 40]],
                                                    sparse_output=False).fit(x).transform(probe))
    with pytest.raises(ValueError, match=r"Found unknown categories \[30\] in column 1 during fit"):
        mp.OneHotEncoder(categories=[[1, 2], [10, 20]]).fit(x)


@pytest.mark.parametrize("params", [{}, {"degree": 3}, {"degree": (2, 3), "include_bias": False},
                                    {"degree": 2, "interaction_only": True}, {"degree": 0}])
def test_polynomial_features_match(row_chunks, params):
    ours, theirs = _fit_both(mp.PolynomialFeatures, skp.PolynomialFeatures, X, row_chunks, **params)
    np.testing.assert_array_equal(ours.powers_, theirs.powers_)
    assert ours.n_output_features_ == theirs.n_output_features_
    out = ours.transform(mt.tensor(X, chunk_size=row_chunks))
    np.testing.assert_allclose(out.execute().fetch(), theirs.transform(X), rtol=1e-12)
    np.testing.assert_array_equal(ours.get_feature_names_out(), theirs.get_feature_names_out())
    with pytest.raises(ValueError, match="empty output array"):
        mp.PolynomialFeatures(0, include_bias=False).fit(X)


def test_inputs_pandas_and_mars_frames_and_feature_names():
    frame = pd.DataFrame(X, columns=list("abcd"))
    from_pandas = mp.StandardScaler().fit(frame)
    from_mars = mp.StandardScaler().fit(md.DataFrame(frame, chunk_size=4))
    theirs = skp.StandardScaler().fit(frame)
    np.testing.assert_array_equal(from_pandas.feature_names_in_, theirs.feature_names_in_)
    np.testing.assert_array_equal(from_mars.feature_names_in_, theirs.feature_names_in_)
    np.testing.assert_allclose(from_mars.mean_, theirs.mean_)
    np.testing.assert_array_equal(from_mars.get_feature_names_out(), theirs.get_feature_names_out())
    filtered = md.DataFrame(frame, chunk_size=4)
    filtered = filtered[filtered["a"] > 2]  # unknown chunk sizes until it runs, and an empty chunk
    np.testing.assert_allclose(mp.StandardScaler().fit(filtered).var_,
                               skp.StandardScaler().fit(frame[frame["a"] > 2]).var_)


def test_min_max_scaler_on_a_filtered_frame():
    frame = pd.DataFrame(X, columns=list("abcd"))
    filtered = md.DataFrame(frame, chunk_size=4)
    filtered = filtered[filtered["a"] > 2]
    np.testing.assert_allclose(mp.MinMaxScaler().fit(filtered).data_min_,
                               skp.MinMaxScaler().fit(frame[frame["a"] > 2]).data_min_)
    np.testing.assert_allclose(mp.MaxAbsScaler().fit(filtered).max_abs_,
                               skp.MaxAbsScaler().fit(frame[frame["a"] > 2]).max_abs_)


def test_clone_get_params_and_pipeline():
    scaler = mp.StandardScaler(with_mean=False)
    assert scaler.get_params() == {"copy": True, "with_mean": False, "with_std": True}
    copy = clone(scaler.fit(X))
    assert copy.get_params() == scaler.get_params() and not hasattr(copy, "mean_")
    pipe = make_pipeline(mp.PolynomialFeatures(2), mp.StandardScaler(), mp.Normalizer())
    ref = make_pipeline(skp.PolynomialFeatures(2), skp.StandardScaler(), skp.Normalizer())
    out = fetch(pipe.fit(mt.tensor(X, chunk_size=5)).transform(X))
    np.testing.assert_allclose(out, ref.fit(X).transform(X), atol=1e-12)
    pipe.set_params(standardscaler__with_std=False)
    assert pipe.named_steps["standardscaler"].with_std is False


@pytest.mark.parametrize("estimator", [mp.StandardScaler(), mp.MinMaxScaler(), mp.MaxAbsScaler(),
                                       mp.RobustScaler(), mp.Normalizer(), mp.PolynomialFeatures()],
                         ids=lambda e: type(e).__name__)
def test_sklearn_check_estimator(estimator):
    """scikit-learn's whole check_estimator passes (outputs are lazy tensors, which its checks read as arrays)."""
    from sklearn.utils.estimator_checks import check_estimator

    results = check_estimator(estimator, on_fail=None, on_skip=None)
    failed = {r["check_name"]: str(r["exception"])[:300] for r in results if r["status"] == "failed"}
    assert not failed, failed
    assert len(results) > 40
