"""The index of a merge that joins one side's columns to the other side's index.

pandas gives such a merge (``left_on`` with ``right_index=True``, or
``left_index=True`` with ``right_on``) the index of the side whose columns
are joined, the *label side*, taken row by row: a row that side lacks gets
missing labels (NaN in every level of a MultiIndex). Two exceptions:

- when the whole label side is empty (and the join keeps the other side's
  rows: not a ``left`` join for a left label side, nor ``right`` for a
  right one), the index is the other side's;
- when the other side's index is a MultiIndex, a row the label side lacks
  takes the label side's *last* label instead of a missing one.

A partition of the label side may be empty when the whole is not; its merge
is then given the labels pandas' whole merge would give its rows
(:func:`labels_for_empty_side`). The last-label rule needs the whole label
side, so such joins run in one partition (:func:`needs_whole_label_side`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .meta import fake

__all__ = ["label_side", "labels_for_empty_side", "needs_whole_label_side", "with_result_index"]

#: per label side, the ``how`` whose rows all come from it (no row lacks its labels)
_KEEPING_HOW = {"left": "left", "right": "right"}


def label_side(kwargs: dict) -> str | None:
    """``"left"`` or ``"right"``: the side whose index labels a column-to-index merge's rows; None otherwise.

    >>> label_side({"left_index": False, "right_index": True, "how": "inner"})
    'left'
    >>> label_side({"left_index": True, "right_index": True, "how": "inner"}) is None
    True
    """
    if kwargs.get("how") == "cross" or kwargs["left_index"] == kwargs["right_index"]:
        return None
    return "left" if kwargs["right_index"] else "right"


def needs_whole_label_side(kwargs: dict, lmeta: pd.DataFrame, rmeta: pd.DataFrame) -> bool:
    """Whether rows the label side lacks take its last label (the other side's index is a MultiIndex).

    >>> multi = pd.DataFrame({"b": [1]}, index=pd.MultiIndex.from_tuples([(1, 2)]))
    >>> flat = pd.DataFrame({"x": [1], "y": [2]})
    >>> kwargs = {"left_index": False, "right_index": True}
    >>> needs_whole_label_side(dict(kwargs, how="outer"), flat, multi)
    True
    >>> needs_whole_label_side(dict(kwargs, how="left"), flat, multi)
    False
    """
    side = label_side(kwargs)
    if side is None or kwargs["how"] in (_KEEPING_HOW[side], "inner"):
        return False
    other = rmeta if side == "left" else lmeta
    return isinstance(other.index, pd.MultiIndex)


def with_result_index(meta: pd.DataFrame, kwargs: dict, lmeta: pd.DataFrame, rmeta: pd.DataFrame,
                      lsize: int = 1, rsize: int = 1) -> pd.DataFrame:
    """``meta`` (a merge's, empty) with the index pandas gives when the sides have ``lsize``/``rsize`` rows.

    Only a column-to-index merge's index is set; its dtype is the label
    side's before any missing label is added.

    >>> left = pd.DataFrame({"x": [1]}, index=pd.MultiIndex.from_tuples([(1, "a")], names=["p", "q"]))
    >>> right = pd.DataFrame({"b": [2]}, index=pd.Index([1], name="k"))
    >>> kwargs = {"left_index": False, "right_index": True, "how": "inner"}
    >>> with_result_index(pd.DataFrame({"x": [], "b": []}), kwargs, left, right).index.names
    FrozenList(['p', 'q'])
    >>> with_result_index(pd.DataFrame({"x": [], "b": []}), kwargs, left, right, lsize=0).index.names
    FrozenList(['k'])
    """
    side = label_side(kwargs)
    if side is None:
        return meta
    own, other, size = (lmeta, rmeta, lsize) if side == "left" else (rmeta, lmeta, rsize)
    source = own if size or kwargs["how"] == _KEEPING_HOW[side] else other
    return meta.set_axis(source.index[:0], axis=0)


def labels_for_empty_side(index: pd.Index, n: int) -> pd.Index:
    """The labels of ``n`` merged rows that an empty partition of the label side (index ``index``) lacks.

    Missing labels in ``index``'s form (NaN in every level of a
    MultiIndex), with the dtype pandas gives labels and missing ones
    together; an empty index of ``index``'s dtype when ``n`` is 0.

    >>> labels_for_empty_side(pd.Index([], dtype="int64", name="k"), 2)
    Index([nan, nan], dtype='float64', name='k')
    >>> labels_for_empty_side(pd.MultiIndex.from_tuples([], names=["p", "q"]), 1).names
    FrozenList(['p', 'q'])
    """
    sample = fake(index, 1)
    if not n:
        return sample[:0]
    missing = np.full(n, -1, dtype=np.intp)
    if isinstance(index, pd.MultiIndex):
        return sample.take(missing, allow_fill=True, fill_value=np.nan)
    na: Any = pd.NaT if index.dtype.kind in "mM" else np.nan
    return sample.append(pd.Index([na], name=index.name)).take(missing)
