"""What every mars.learn estimator shares: inputs as mars tensors, the fitted check, fitted values as numpy.

Estimators keep scikit-learn's conventions: ``fit`` builds its statistics as
lazy tensors, runs them together in one ``mars.execute`` (shared work runs
once) and stores the small results as numpy attributes with trailing
underscores; ``transform``/``predict`` return lazy mars tensors.

>>> import numpy as np
>>> from mars.learn.base import as_tensor, fetch
>>> x = as_tensor(np.arange(6.).reshape(3, 2), chunk_size=2)
>>> fetch(x.sum(axis=0))
array([6., 9.])
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import pandas as pd
from scipy import sparse

from .. import tensor as mt
from ..core.entity import Tileable
from ..core.session import resolve_session
from ..dataframe import core as dfcore
from ..tensor.core import Tensor

__all__ = ["as_float", "as_tensor", "is_mars", "feature_names_of", "validate_data", "check_fitted", "fetch", "fetch_all",
           "known_rows", "to_float"]


def is_mars(x: Any) -> bool:
    """Whether ``x`` is a lazy mars object (tensor, DataFrame, Series or Index)."""
    return isinstance(x, Tileable)


def _numeric_dtype(dtype: np.dtype) -> np.dtype | None:
    """The dtype a numeric estimator works in: numbers and bools stay, anything else becomes float64."""
    return None if dtype.kind in "fciub" else np.dtype(np.float64)


def _check_dims(ndim: int, ensure_2d: bool, allow_nd: bool, name: str) -> None:
    if ensure_2d and ndim == 0:
        raise ValueError(f"Expected 2D array, got scalar array instead for {name}. Reshape your data.")
    if ensure_2d and ndim == 1:
        raise ValueError(f"Expected 2D array, got 1D array instead for {name}. Reshape your data either "
                         "using array.reshape(-1, 1) if it has a single feature or array.reshape(1, -1) "
                         "if it contains a single sample.")
    if not allow_nd and ndim > 2:
        raise ValueError(f"Found array with dim {ndim} for {name}; expected <= 2.")


def _check_finite(value: np.ndarray, name: str, allow_nan: bool) -> None:
    if value.dtype.kind not in "fc" or value.size == 0:
        return
    if allow_nan:
        if np.isinf(value).any():
            raise ValueError(f"Input {name} contains infinity or a value too large for {value.dtype!r}.")
    elif not np.isfinite(value).all():
        what = "NaN" if np.isnan(value).any() else "infinity or a value too large for " + repr(value.dtype)
        raise ValueError(f"Input {name} contains {what}.")


def _local_tensor(x: Any, dtype: Any, allow_nan: bool, chunk_size: Any, name: str) -> Tensor:
    """A local value (numpy, pandas, list) checked for sparsity, strings and non-finite values, as a tensor."""
    if sparse.issparse(x):
        raise TypeError(f"Sparse data was passed for {name}, but dense data is required: mars.learn does not "
                        "support sparse input. Use '.toarray()' to convert to a dense numpy array.")
    if is_mars(x):
        raise TypeError(f"{name} is a mars object of unsupported type {type(x).__name__}")
    value = x.to_numpy() if isinstance(x, (pd.DataFrame, pd.Series, pd.Index)) else np.asarray(x)
    if value.dtype.kind in "OUS" and dtype == "numeric":
        try:
            value = value.astype(np.float64)
        except (TypeError, ValueError) as e:  # numpy's type of error, as scikit-learn raises
            raise type(e)(f"{name} must be numeric, got values of dtype {value.dtype}: {e}") from None
    _check_finite(value, name, allow_nan)
    return mt.tensor(value, chunk_size=chunk_size)


def as_tensor(x: Any, *, dtype: Any = "numeric", ensure_2d: bool = False, allow_nd: bool = False,
              ensure_min_samples: int = 1, allow_nan: bool = False, chunk_size: Any = None,
              name: str = "X") -> Tensor:
    """``x`` (mars tensor/DataFrame/Series, numpy array, pandas object, list) as a mars tensor, checked.

    ``dtype='numeric'`` keeps numeric dtypes and turns others (object,
    strings) into float64; None keeps the dtype; any other dtype casts.
    Local (numpy/pandas) inputs are checked for NaN and infinity at once;
    mars inputs are not, as that would run them.

    >>> import mars.tensor as mt
    >>> as_tensor([[1, 2], [3, 4]]).dtype
    dtype('int64')
    >>> as_tensor([1, 2], ensure_2d=True)
    Traceback (most recent call last):
    ...
    ValueError: Expected 2D array, got 1D array instead for X. Reshape your data either using array.reshape(-1, 1) if it has a single feature or array.reshape(1, -1) if it contains a single sample.
    """
    if isinstance(x, (dfcore.DataFrame, dfcore.Series, dfcore.Index)):
        x = x.to_tensor()  # a Series or Index gives a 1-d tensor
    if isinstance(x, Tensor):
        t = x
        if chunk_size is not None:
            t = t.rechunk(chunk_size)
    else:
        t = _local_tensor(x, dtype, allow_nan, chunk_size, name)
    _check_dims(t.ndim, ensure_2d, allow_nd, name)
    if dtype == "numeric" and t.dtype.kind == "c":
        raise ValueError(f"Complex data not supported for {name}, got dtype {t.dtype}")
    if dtype == "numeric":
        target = _numeric_dtype(t.dtype)
    else:
        target = None if dtype is None or np.dtype(dtype) == t.dtype else np.dtype(dtype)
    if target is not None:
        t = t.astype(target)
    rows = t.shape[0] if t.ndim else 1
    if ensure_min_samples and not math.isnan(rows) and rows < ensure_min_samples:
        raise ValueError(f"Found array with {int(rows)} sample(s) (shape={tuple(t.shape)}) while a minimum of "
                         f"{ensure_min_samples} is required.")
    if t.ndim == 2 and ensure_2d and t.shape[1] < 1:
        raise ValueError(f"Found array with 0 feature(s) (shape={tuple(t.shape)}) while a minimum of 1 is required.")
    return t


def as_float(t: Tensor) -> Tensor:
    """``t`` in a float dtype, as scikit-learn's estimators compute: float16/32/64 kept, others float64.

    >>> as_float(as_tensor([1, 2])).dtype
    dtype('float64')
    """
    return t if t.dtype.kind == "f" else t.astype(np.float64)


def feature_names_of(x: Any) -> np.ndarray | None:
    """The column names of a pandas or mars DataFrame whose columns are all strings (as sklearn), else None."""
    columns = x.columns if isinstance(x, (pd.DataFrame, dfcore.DataFrame)) else None
    if columns is None or not all(isinstance(c, str) for c in columns):
        return None
    return np.asarray(list(columns), dtype=object)


def validate_data(estimator: Any, x: Any, *, reset: bool, **kw: Any) -> Tensor:
    """``x`` as a checked 2-d tensor; ``reset`` (fit) records ``n_features_in_``/``feature_names_in_``,
    otherwise the feature count is checked against them.

    >>> from sklearn.base import BaseEstimator
    >>> est = BaseEstimator()
    >>> _ = validate_data(est, [[1., 2.]], reset=True)
    >>> est.n_features_in_
    2
    >>> validate_data(est, [[1.]], reset=False)
    Traceback (most recent call last):
    ...
    ValueError: X has 1 features, but BaseEstimator is expecting 2 features as input.
    """
    kw.setdefault("ensure_2d", True)
    t = as_tensor(x, **kw)
    names = feature_names_of(x)
    n_features = t.shape[1] if t.ndim == 2 else 1
    if reset:
        estimator.n_features_in_ = int(n_features)
        if names is not None:
            estimator.feature_names_in_ = names
        elif hasattr(estimator, "feature_names_in_"):
            del estimator.feature_names_in_
        return t
    expected = getattr(estimator, "n_features_in_", None)
    if expected is not None and n_features != expected:
        raise ValueError(f"X has {n_features} features, but {type(estimator).__name__} is expecting "
                         f"{expected} features as input.")
    fitted_names = getattr(estimator, "feature_names_in_", None)
    if fitted_names is not None and names is not None and list(names) != list(fitted_names):
        raise ValueError("The feature names should match those that were passed during fit.")
    return t


def check_fitted(estimator: Any, attributes: Sequence[str] | str | None = None) -> None:
    """Raise sklearn's ``NotFittedError`` unless ``estimator`` is fitted (has ``attributes``, or any ``*_``)."""
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator, attributes)


def fetch_all(*values: Any) -> list[Any]:
    """Run every mars object in ``values`` together (shared work once); return all as numpy/pandas values.

    >>> import mars.tensor as mt
    >>> a = mt.arange(4, chunk_size=2)
    >>> fetch_all(a.sum(), a.max(), 7)
    [np.int64(6), np.int64(3), 7]
    """
    lazy = [v for v in values if is_mars(v)]
    if lazy:
        session = resolve_session()
        session.execute(*lazy)
        fetched = session.fetch(*lazy)
        fetched = [fetched] if len(lazy) == 1 else fetched
    it = iter(fetched if lazy else [])
    return [next(it) if is_mars(v) else v for v in values]


def fetch(value: Any) -> Any:
    """One mars object's value (numpy/pandas); other values unchanged."""
    return fetch_all(value)[0]


def known_rows(t: Tensor) -> Tensor:
    """``t`` with a known number of rows: a tensor from a filtered frame is run first to learn it."""
    if t.ndim and math.isnan(t.shape[0]):
        t.execute()
    return t


def to_float(value: Any) -> float:
    """A metric's value as a Python float (running it if lazy)."""
    return float(fetch(value))
