"""``train_test_split`` and ``KFold``: indices drawn on the client as scikit-learn draws them, rows taken lazily.

Only the number of rows is needed to draw a split (and, for ``stratify``,
the class labels); the rows themselves are picked chunk by chunk by fancy
indexing, so the same seed gives the same split as scikit-learn.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sklearn import model_selection as skms
from sklearn.utils import check_random_state

from ..base import fetch, is_mars
from ..utils import num_samples, take_rows

__all__ = ["KFold", "split_sizes", "train_test_split"]


def _size(value: Any, n: int, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, (float, np.floating)):
        if not 0 < value < 1:
            raise ValueError(f"{name}={value} should be either positive and smaller than the number of samples "
                             f"{n} or a float in the (0, 1) range")
        return float(value)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and 0 < value < n:
        return int(value)
    raise ValueError(f"{name}={value} should be either positive and smaller than the number of samples {n} or a "
                     "float in the (0, 1) range")


def split_sizes(n: int, test_size: Any, train_size: Any, default_test: float = 0.25) -> tuple[int, int]:
    """``(n_train, n_test)`` as scikit-learn works them out (test rounded up, train down).

    >>> split_sizes(10, None, None)
    (7, 3)
    """
    test, train = _size(test_size, n, "test_size"), _size(train_size, n, "train_size")
    if test is None and train is None:
        test = default_test
    if isinstance(test, float) and isinstance(train, float) and test + train > 1:
        raise ValueError(f"The sum of test_size and train_size = {test + train}, should be in the (0, 1) range. "
                         "Reduce test_size and/or train_size.")
    n_test = math.ceil(test * n) if isinstance(test, float) else test
    n_train = math.floor(train * n) if isinstance(train, float) else train
    if n_train is None:
        n_train = n - n_test
    elif n_test is None:
        n_test = n - n_train
    if n_train + n_test > n:
        raise ValueError(f"The sum of train_size and test_size = {n_train + n_test}, should be smaller than the "
                         f"number of samples {n}. Reduce test_size and/or train_size.")
    if n_train == 0:
        raise ValueError(f"With n_samples={n}, test_size={test_size} and train_size={train_size}, the resulting "
                         "train set will be empty. Adjust any of the aforementioned parameters.")
    return int(n_train), int(n_test)


def train_test_split(*arrays: Any, test_size: Any = None, train_size: Any = None, random_state: Any = None,
                     shuffle: bool = True, stratify: Any = None) -> list:
    """Split arrays into random train and test rows, lazily, as ``sklearn.model_selection.train_test_split``.

    Returns ``[a_train, a_test, b_train, b_test, ...]``: mars DataFrames and
    Series stay so, everything else becomes a mars tensor. ``stratify``
    fetches its labels (one value per row) to draw the split.

    >>> import numpy as np
    >>> from mars.learn.model_selection import train_test_split
    >>> a_train, a_test = train_test_split(np.arange(10), random_state=0)
    >>> a_train.execute().fetch(), a_test.fetch()
    (array([9, 1, 6, 7, 3, 0, 5]), array([2, 8, 4]))
    """
    if not arrays:
        raise ValueError("At least one array required as input")
    n = num_samples(arrays[0])
    lengths = {num_samples(a) for a in arrays}
    if len(lengths) > 1:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: {sorted(lengths)}")
    n_train, n_test = split_sizes(n, test_size, train_size)
    if not shuffle:
        if stratify is not None:
            raise ValueError("Stratified train/test split is not implemented for shuffle=False")
        train, test = np.arange(n_train), np.arange(n_train, n_train + n_test)
    elif stratify is not None:
        labels = np.asarray(fetch(stratify) if is_mars(stratify) else stratify)
        splitter = skms.StratifiedShuffleSplit(test_size=n_test, train_size=n_train, random_state=random_state)
        train, test = next(splitter.split(np.broadcast_to(0.0, (n, 1)), labels))
    else:
        order = check_random_state(random_state).permutation(n)
        test, train = order[:n_test], order[n_test:n_test + n_train]
    out = []
    for a in arrays:
        out += [take_rows(a, train), take_rows(a, test)]
    return out


class KFold(skms.KFold):
    """K consecutive folds (shuffled with ``shuffle``), as ``sklearn.model_selection.KFold``.

    ``split`` needs only the number of rows of ``X`` (a mars object is not
    run unless its length is unknown) and yields numpy index arrays, the same
    as scikit-learn's for the same ``random_state``.

    >>> import mars.tensor as mt
    >>> from mars.learn.model_selection import KFold
    >>> [test.tolist() for _, test in KFold(3).split(mt.ones((5, 2), chunk_size=2))]
    [[0, 1], [2, 3], [4]]
    """

    def split(self, X: Any, y: Any = None, groups: Any = None) -> Any:
        """Train and test indices (numpy) of each fold."""
        n = num_samples(X)
        return super().split(np.broadcast_to(0.0, (n, 1)), None, None)

    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        """The number of folds."""
        return self.n_splits
