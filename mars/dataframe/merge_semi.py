"""The semi-join filter of an inner merge: the larger side cut to the keys the smaller one has.

pandas' merge hashes both sides' keys into one table and takes every column
through it; when one side is much smaller, keeping only the larger side's
rows whose key it has (a table of flags over the key range, one look-up per
row) leaves pandas a much smaller merge with the same answer.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["members", "semi_filtered"]


#: an inner merge first keeps the rows of the larger side whose key the smaller side has, when that side has
#: at least this many times more rows (a table of the few keys and a look-up per row, instead of pandas hashing
#: both sides' keys into one table and taking every column through it)
SEMI_RATIO = 8


def semi_filtered(left: pd.DataFrame, right: pd.DataFrame, kwargs: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The two sides of an inner merge on one integer column each, the larger cut to the keys the smaller has.

    The rows left out match nothing, and the others keep their order, so
    pandas' merge of the cut sides is its merge of the whole ones.

    >>> left = pd.DataFrame({"k": [1, 2, 3, 1] * 4, "v": range(16)})
    >>> right = pd.DataFrame({"k": [1]})
    >>> len(semi_filtered(left, right, {"how": "inner", "on": "k"})[0])
    8
    """
    if kwargs.get("how") != "inner" or kwargs.get("validate") or kwargs.get("indicator") \
            or kwargs.get("left_index") or kwargs.get("right_index"):
        return left, right
    lk, rk = _one_key(kwargs.get("left_on") or kwargs.get("on")), _one_key(kwargs.get("right_on") or kwargs.get("on"))
    if lk is None or rk is None or lk not in left.columns or rk not in right.columns:
        return left, right
    lkey, rkey = left[lk], right[rk]
    if not (isinstance(lkey, pd.Series) and isinstance(rkey, pd.Series)) \
            or lkey.dtype.kind not in "iu" or rkey.dtype.kind not in "iu":
        return left, right
    if len(left) >= SEMI_RATIO * len(right):
        return left[members(lkey.to_numpy(), rkey.to_numpy())], right
    if len(right) >= SEMI_RATIO * len(left):
        return left, right[members(rkey.to_numpy(), lkey.to_numpy())]
    return left, right


#: the widest range of keys looked up in a table of flags (one byte per value in the range)
LOOKUP_RANGE = 1 << 24


def members(values: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Whether each of ``values`` is among ``keys`` (integer arrays): a table of flags over the keys' range
    when it is narrow (one look-up per value, no hashing), else pandas' ``isin``.

    >>> members(np.array([5, 1, 7, -2]), np.array([7, 5])).tolist()
    [True, False, True, False]
    """
    if not len(keys) or not len(values):
        return np.zeros(len(values), dtype=bool)
    low, high = int(keys.min()), int(keys.max())
    if high - low >= LOOKUP_RANGE or low < -(2**62) or high >= 2**62 or int(values.max()) >= 2**63:
        return pd.Series(values, copy=False).isin(keys).to_numpy()
    table = np.zeros(high - low + 1, dtype=bool)
    table[keys.astype(np.int64) - low] = True
    # offsets from the lowest key, as unsigned: values below it wrap to huge numbers, out of range like those above
    offsets = (values.astype(np.int64, copy=False) - np.int64(low)).view(np.uint64)
    inside = offsets <= np.uint64(high - low)
    return table[np.where(inside, offsets, 0)] & inside


def _one_key(key: Any) -> Any:
    """The label of a merge on one column (None for several, or none)."""
    if isinstance(key, list):
        return key[0] if len(key) == 1 else None
    return key
