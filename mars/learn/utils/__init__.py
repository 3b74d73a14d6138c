"""mars.learn.utils: ``shuffle``, ``resample``-style row picks, and ``check_array``, on mars objects.

>>> import numpy as np
>>> from mars.learn.utils import shuffle
>>> shuffle(np.arange(5), random_state=0).execute().fetch()
array([2, 0, 1, 3, 4])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state

from ...dataframe import core as dfcore
from ...tensor.core import Tensor
from ..base import as_tensor, is_mars, known_rows

__all__ = ["check_array", "num_samples", "shuffle", "take_rows"]


def num_samples(x: Any) -> int:
    """The number of rows of ``x`` (a mars object of unknown length is run to learn it).

    >>> num_samples([[1, 2], [3, 4], [5, 6]])
    3
    """
    if isinstance(x, Tensor):
        return int(known_rows(x).shape[0])
    if is_mars(x):
        if math.isnan(x.shape[0]):
            x.execute()
        return int(x.shape[0])
    return len(x) if not hasattr(x, "shape") else int(x.shape[0])


def take_rows(x: Any, index: np.ndarray) -> Any:
    """Rows ``index`` of ``x``, lazily: a mars DataFrame/Series stays one (``iloc``), anything else a tensor.

    >>> take_rows(np.array([5, 6, 7]), np.array([2, 0])).execute().fetch()
    array([7, 5])
    """
    if isinstance(x, (dfcore.DataFrame, dfcore.Series)):
        return x.iloc[index]
    if isinstance(x, (pd.DataFrame, pd.Series)):
        return dfcore.DataFrame(x.iloc[index]) if isinstance(x, pd.DataFrame) else dfcore.Series(x.iloc[index])
    return as_tensor(x, dtype=None, ensure_min_samples=0, allow_nd=True, allow_nan=True)[index]


def shuffle(*arrays: Any, random_state: Any = None, n_samples: int | None = None) -> Any:
    """The rows of each array in one common random order, lazily, as ``sklearn.utils.shuffle``.

    The permutation is drawn on the client from ``random_state`` exactly as
    scikit-learn draws it, so the same seed gives the same order; the rows
    are then gathered chunk by chunk (fancy indexing). Sparse input is not
    offered.

    >>> x, y = shuffle(np.array([[1], [2], [3]]), np.array([1, 2, 3]), random_state=1)
    >>> x.fetch().ravel().tolist(), y.fetch().tolist()
    ([1, 3, 2], [1, 3, 2])
    """
    if not arrays:
        return None
    n = num_samples(arrays[0])
    lengths = {num_samples(a) for a in arrays}
    if len(lengths) > 1:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: {sorted(lengths)}")
    if n_samples is not None and not 0 < n_samples <= n:
        raise ValueError(f"Cannot sample {n_samples} out of arrays with dim {n} when replace is False")
    index = np.arange(n)
    check_random_state(random_state).shuffle(index)
    index = index[: n if n_samples is None else n_samples]
    out = [take_rows(a, index) for a in arrays]
    return out[0] if len(out) == 1 else out


def check_array(array: Any, accept_sparse: Any = False, *, dtype: Any = "numeric", ensure_all_finite: Any = True,
                ensure_2d: bool = True, allow_nd: bool = False, ensure_min_samples: int = 1,
                ensure_min_features: int = 1, force_all_finite: Any = None, **_: Any) -> Tensor:
    """``array`` checked and converted to a mars tensor, as ``sklearn.utils.check_array``.

    Finiteness is checked at once for local (numpy/pandas) input only:
    checking a lazy tensor would run it. Sparse input is refused.

    >>> check_array([[1, 2]]).dtype
    dtype('int64')
    >>> check_array([[1., float("nan")]])
    Traceback (most recent call last):
    ...
    ValueError: Input X contains NaN.
    """
    finite = ensure_all_finite if force_all_finite is None else force_all_finite
    allow_nan = finite == "allow-nan" or finite is False
    if isinstance(dtype, (list, tuple)):
        t = as_tensor(array, dtype=None, ensure_2d=ensure_2d, allow_nd=allow_nd, allow_nan=allow_nan,
                      ensure_min_samples=ensure_min_samples)
        dtype = None if t.dtype in [np.dtype(d) for d in dtype] else dtype[0]
        if dtype is not None:
            t = t.astype(dtype)
    else:
        t = as_tensor(array, dtype=dtype, ensure_2d=ensure_2d, allow_nd=allow_nd, allow_nan=allow_nan,
                      ensure_min_samples=ensure_min_samples)
    if ensure_min_features and t.ndim == 2 and t.shape[1] < ensure_min_features:
        raise ValueError(f"Found array with {t.shape[1]} feature(s) (shape={tuple(t.shape)}) while a minimum of "
                         f"{ensure_min_features} is required.")
    return t
