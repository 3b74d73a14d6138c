"""The semi-join filter of an inner merge: the larger side cut to the keys the smaller one has.

pandas' merge hashes both sides' keys into one table and takes every column
through it; when one side is much smaller, keeping only the larger side's
rows whose key it has (a table of flags over the key range, one look-up per
row) leaves pandas a much smaller merge with the same answer.

A broadcast join cuts its broadcast side so before gathering it
(:func:`semi_reduced`): each of its partitions keeps, where it lies, the
rows whose key the other side has, and only those are gathered into the
one chunk every partition of the other side merges with. On a cluster the
gathering is a copy, much of it read from another worker; when the other
side is a filtered table that meets few of its rows (TPC-H's lineitem
joined to a quarter's orders), little is left to copy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .core import PandasOperator

__all__ = ["cut_on", "members", "semi_filtered", "semi_reduced"]


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


# ----------------------------------------------------------------- a broadcast side cut before it is gathered
class SemiKeys(PandasOperator):
    """The values of column ``on`` in all the given partitions, end to end (a NumPy array)."""

    params = ("on",)

    def execute(self, *parts: pd.DataFrame) -> np.ndarray:
        values = [p[self.on].to_numpy() for p in parts]
        return values[0] if len(values) == 1 else np.concatenate(values)


class SemiCut(PandasOperator):
    """A partition's rows whose column ``on`` is among the given keys (all of it, uncopied, when all are)."""

    params = ("on",)
    #: the partition's producer (a filter, a projection) runs in the cut's subtask, where the partition lies
    fusible = True

    def execute(self, part: pd.DataFrame, keys: np.ndarray) -> pd.DataFrame:
        mask = members(part[self.on].to_numpy(), keys)
        return part if mask.all() else part[mask]


def cut_on(kwargs: dict, keys: Any, lmeta: pd.DataFrame, rmeta: pd.DataFrame, lrows: Sequence[int],
           rrows: Sequence[int]) -> tuple | None:
    """The (left, right) key columns by which an ``inner`` merge's right side is cut before it is gathered
    (see :func:`semi_reduced`), or None when a cut is not worth a pass: it is for one integer key column of
    one dtype on each side, and a right side in several partitions (gathered into one otherwise whole)
    holding many more rows than the left.

    ``keys`` is the merge's :class:`~mars.dataframe.merge.JoinKeys`, ``lrows``/``rrows`` the sides'
    partitions' row counts.

    >>> from types import SimpleNamespace
    >>> keys = SimpleNamespace(left=(("column", "k"),), right=(("column", "rk"),))
    >>> meta = pd.DataFrame({"k": [1]}), pd.DataFrame({"rk": [1]})
    >>> cut_on({"how": "inner", "validate": None}, keys, *meta, [10, 10], [500, 500])
    ('k', 'rk')
    >>> cut_on({"how": "inner", "validate": None}, keys, *meta, [10, 10], [50, 50]) is None
    True
    """
    if kwargs["how"] != "inner" or kwargs["validate"] or len(rrows) < 2 or sum(rrows) < SEMI_RATIO * sum(lrows) \
            or len(keys.left) != 1 or keys.left[0][0] != "column" or keys.right[0][0] != "column":
        return None
    lkey, rkey = keys.left[0][1], keys.right[0][1]
    ldtype, rdtype = lmeta[lkey].dtype, rmeta[rkey].dtype
    if not (isinstance(ldtype, np.dtype) and ldtype == rdtype and ldtype.kind in "iu"):
        return None
    return lkey, rkey


def semi_reduced(kwargs: dict, keys: Any, left: Any, right: Any, lrows: Sequence[int], rrows: Sequence[int]) -> list:
    """The partitions of ``right`` (the broadcast side of a merge with ``left``), each less the rows whose key
    ``left`` lacks when :func:`cut_on` says so: the cut runs where the partition lies, and only the rows a
    left row meets are gathered. Otherwise the partitions as they are.
    """
    chunks = list(right.chunks)
    on = cut_on(kwargs, keys, left.meta, right.meta, lrows, rrows)
    if on is None:
        return chunks
    values = SemiKeys(on=on[0]).new_chunk(list(left.chunks), index=(0,), shape=(np.nan,), meta=None)
    return [SemiCut(on=on[1]).new_chunk([c, values], index=c.index, shape=(np.nan, *c.shape[1:]), meta=c.meta)
            for c in chunks]


# ----------------------------------------------------------------- a join's filter pushed into the join before it
def cut_ahead(kwargs: dict, keys: Any, left: Any, whole: Any) -> list:
    """The partitions of ``left``, each an inner merge of two tables, remade from only the rows whose key
    ``whole`` (this inner merge's right side, in one chunk) holds: the rows this merge would drop are dropped
    before they are joined and widened by the merge before it (TPC-H Q2: partsupp joined with its suppliers,
    then with 747 parts; cut first, 2,988 rows of partsupp are joined, not 158,960).

    A partition stays as it is where its op is not an inner merge (``how``) whose key column comes from one
    of its sides (``kept_column``), or the keys are not integers. The rows kept keep their order, and so
    does each merge: the result is pandas' own.
    """
    chunks = list(left.chunks)
    if kwargs["how"] != "inner" or kwargs.get("indicator") or len(keys.left) != 1 \
            or keys.left[0][0] != "column" or keys.right[0][0] != "column":
        return chunks
    column, on = keys.left[0][1], keys.right[0][1]
    if not _int_column(whole.meta, on) or not _filtered(whole):
        return chunks
    values = SemiKeys(on=on).new_chunk([whole], index=(0,), shape=(np.nan,), meta=None)
    return [_cut_side(c, column, values) for c in chunks]


#: chunks looked at below a broadcast side for a filter
_FILTER_SEARCH = 32


def _filtered(chunk: Any) -> bool:
    """Whether some op below ``chunk`` (among its nearest ``_FILTER_SEARCH``) drops rows by their values (a
    partition function that keeps not all its rows, ``same_rows`` False): a side likely to hold far fewer keys
    than the table it meets. An unfiltered table (all of TPC-H's suppliers) would cut nothing, and its cut
    would only wait for it."""
    todo, seen = [chunk], 0
    while todo and seen < _FILTER_SEARCH:
        c = todo.pop()
        seen += 1
        if getattr(c.op, "same_rows", True) is False:
            return True
        todo.extend(c.op.inputs)
    return False


def _int_column(meta: Any, column: Any) -> bool:
    try:
        return isinstance(meta, pd.DataFrame) and column in meta.columns and meta.columns.is_unique \
            and isinstance(meta[column].dtype, np.dtype) and meta[column].dtype.kind in "iu"
    except TypeError:  # an unhashable label
        return False


def _cut_side(chunk: Any, column: Any, values: Any) -> Any:
    """``chunk`` (an inner merge) made from the rows of the side ``column`` comes from that are in ``values``."""
    op = chunk.op
    kept = getattr(op, "kept_column", None)
    if kept is None or getattr(op, "kwargs", {}).get("how") != "inner":
        return chunk
    found = kept(column)
    if found is None or not _int_column(getattr(op.inputs[found[0]], "meta", None), found[1]):
        return chunk
    inputs = list(op.inputs)
    side = inputs[found[0]]
    inputs[found[0]] = SemiCut(on=found[1]).new_chunk([side, values], index=side.index,
                                                      shape=(np.nan, *side.shape[1:]), meta=side.meta)
    return op.copy().new_chunk(inputs, index=chunk.index, shape=chunk.shape, meta=chunk.meta)
