"""Which strategy a merge takes (see :mod:`mars.dataframe.merge`), from the sides' metadata and row counts.

Kept apart from the tiling itself: the choice is plain code over metadata
and sizes, tested on its own (``tests/dataframe/test_merge_strategy.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..core.entity import has_unknown
from ..core.options import options
from .core import PandasData, row_splits
from .merge_names import needs_whole_label_side

if TYPE_CHECKING:
    from .merge import JoinKeys, Merge

#: a side of at most this many rows in all (its partitions' sizes known) is merged in one partition: pandas
#: merges that many rows in a few ms, less than a subtask per partition costs (TPC-H Q17's 13 partitions of
#: lineitem's rows of 204 parts, 6,088 rows, each merged with their parts' mean quantity)
FEW_ROWS = 100_000
#: validate= values and whether they need the left / right keys unique
_UNIQUE_SIDES = {
    "one_to_one": (True, True), "1:1": (True, True), "one_to_many": (True, False), "1:m": (True, False),
    "many_to_one": (False, True), "m:1": (False, True), "many_to_many": (False, False), "m:m": (False, False),
}


def _key_dtype(meta: pd.DataFrame, key: tuple) -> Any:
    """The dtype of a join key: ``("column", label)``, or ``("level", i)`` of the index."""
    kind, label = key
    return meta[label].dtype if kind == "column" else meta.index.get_level_values(label).dtype


def choose_strategy(kwargs: dict, keys: JoinKeys, left: PandasData, right: PandasData,
                    lrows: Sequence[int], rrows: Sequence[int]) -> str:
    """``single``, ``broadcast_right``, ``broadcast_left``, ``broadcast_left_ordered``, ``hash`` or ``range``.

    (See :mod:`mars.dataframe.merge`'s docstring.)
    """
    how, sort = kwargs["how"], kwargs["sort"]
    if how == "cross":
        return "broadcast_right"
    if (len(lrows) == 1 and len(rrows) == 1) or needs_whole_label_side(kwargs, left.meta, right.meta):
        return "single"
    level_join = _level_join(kwargs, left.meta, right.meta)
    if level_join is not None:
        return level_join if _broadcastable(*((right.meta, rrows, lrows) if level_join == "broadcast_right"
                                              else (left.meta, lrows, rrows))) else "single"
    # a partition checks uniqueness only of the keys it holds all of
    left_unique, right_unique = _UNIQUE_SIDES[kwargs["validate"]] if kwargs["validate"] else (False, False)
    if not sort and how in ("inner", "left") and not left_unique and _broadcastable(right.meta, rrows, lrows):
        return "broadcast_right"
    if not sort and how == "right" and not right_unique and _broadcastable(left.meta, lrows, rrows):
        return "broadcast_left"
    if not sort and not right_unique and _left_reorderable(kwargs, keys, left.meta, right.meta) \
            and _broadcastable(left.meta, lrows, rrows):
        return "broadcast_left_ordered"
    small = _nbytes(left.meta, sum(lrows)) + _nbytes(right.meta, sum(rrows)) <= options.chunk_store_limit
    hidden_fits = not any(isinstance(m.columns, pd.MultiIndex) for m in (left.meta, right.meta))
    if small or not hidden_fits:
        return "single"
    if sort or how == "outer":
        return "range" if keys.kinds is not None else "single"
    return "hash" if keys.casts is not None else "single"


def few_rows(rows: Sequence[float]) -> bool:
    """Whether partitions of these (known) row counts are several and hold at most :data:`FEW_ROWS` in all:
    a broadcast side then merges whole, in one pandas call, rather than one subtask per partition.

    >>> few_rows([300, 200]), few_rows([300]), few_rows([300, float("nan")]), few_rows([FEW_ROWS, 1])
    (True, False, False, False)
    """
    return len(rows) > 1 and not has_unknown(rows) and sum(rows) <= FEW_ROWS


def _level_join(kwargs: dict, lmeta: pd.DataFrame, rmeta: pd.DataFrame) -> str | None:
    """The broadcast for a join of one side's MultiIndex with the other's flat index (None: not such a join).

    pandas joins the flat labels with one level and keeps the MultiIndex's rows in their order whatever
    ``how`` is (no row comes from the flat side alone): each MultiIndex partition meets the whole flat side.
    """
    multi = [isinstance(m.index, pd.MultiIndex) for m in (lmeta, rmeta)]
    if not (kwargs["left_index"] and kwargs["right_index"]) or multi[0] == multi[1]:
        return None
    return "broadcast_right" if multi[0] else "broadcast_left"


def _left_reorderable(kwargs: dict, keys: JoinKeys, lmeta: pd.DataFrame, rmeta: pd.DataFrame) -> bool:
    """Whether merges of the whole left with each right partition, put in the left's order, are pandas' merge.

    They are for ``inner`` joins (and ``left`` joins of columns, the left
    rows no partition matched merged apart) when each pair of keys is of one
    dtype, or both numbers or both times: with a categorical or a bool
    meeting another dtype, the key column's dtype depends on which rows meet.
    """
    if kwargs["how"] not in ("inner", "left") or (kwargs["how"] == "left" and not _numbered(kwargs)):
        return False
    if any(isinstance(m.columns, pd.MultiIndex) for m in (lmeta, rmeta)):
        return False  # no room for the hidden position column
    return all(_same_kind(_key_dtype(lmeta, lk), _key_dtype(rmeta, rk)) for lk, rk in zip(keys.left, keys.right))


def _same_kind(left: Any, right: Any) -> bool:
    if any(isinstance(d, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(d) for d in (left, right)):
        return left == right and not isinstance(left, pd.CategoricalDtype)
    if left == right:
        return True
    if all(pd.api.types.is_numeric_dtype(d) and not pd.api.types.is_complex_dtype(d) for d in (left, right)):
        return True
    return all(isinstance(d, np.dtype) for d in (left, right)) and left.kind == right.kind and left.kind in "mM"


def _nbytes(meta: pd.DataFrame, rows: int) -> float:
    """A rough size: 8 bytes a number, 32 a string or object."""
    width = sum(d.itemsize if isinstance(d, np.dtype) and d != object else 32 for d in meta.dtypes)
    return rows * (width + 8)


def _broadcastable(small_meta: pd.DataFrame, small_rows: Sequence[int], big_rows: Sequence[int]) -> bool:
    """Whether every big partition merging with the whole small side beats shuffling both.

    Each merge hashes the whole small side again; a shuffle copies both
    sides three or four times over.
    """
    small, big = sum(small_rows), sum(big_rows)
    return _nbytes(small_meta, small) <= options.chunk_store_limit and small * len(big_rows) <= 4 * (small + big)


def _numbered(kwargs: dict) -> bool:
    """Whether pandas gives the result a default index (keys are columns on both sides)."""
    return not kwargs["left_index"] and not kwargs["right_index"]


def _one_pair_of_columns(op: Merge) -> bool:
    """A join of columns with one partition a side: one pandas merge, numbered 0..n-1 by pandas, whatever
    the sides' sizes (TPC-H's small tables, filtered, meeting one another)."""
    left, right = op.inputs
    return len(left.chunks) == 1 and len(right.chunks) == 1 and _numbered(op.kwargs) \
        and op.kwargs["how"] != "cross"


def _one_partition_broadcast(op: Merge) -> bool:
    """Whether the right side, in one partition of a size not known yet, is merged whole with each left
    partition (as Dask merges a one-partition side): an ``inner`` or ``left`` join of columns, unsorted,
    with nothing to validate and several left partitions.

    Counting its rows first, to weigh a broadcast against a shuffle, took a stage (a round trip to the
    workers on a cluster) for what is nearly always a small side: TPC-H's filtered small tables, and
    the results of other merges of them, meeting a big table.
    """
    left, right = op.inputs
    kwargs = op.kwargs
    return len(right.chunks) == 1 and len(left.chunks) > 1 and has_unknown(row_splits(right)) \
        and _numbered(kwargs) and kwargs["how"] in ("inner", "left") and not kwargs["sort"] \
        and not kwargs["validate"] and not kwargs.get("indicator") \
        and not any(isinstance(d.meta.columns, pd.MultiIndex) for d in (left, right))
