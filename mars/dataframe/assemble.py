"""Large DataFrames and Series joined end to end, one allocation per column.

What ``pd.concat`` of row partitions gives, for the common case of a fetch:
partitions with the same columns and dtypes. Each numeric column of the
whole is allocated once and each partition copied into it once.

The memory is taken with ordinary pages (Arrow's system pool, that is the C
library's allocator) rather than from numpy's allocator, which asks the
kernel for transparent huge pages on big arrays: on a host whose memory is
fragmented, the first touch of those pages stalls in compaction (a fetch of
560 MB spent from 0.03 to 1.2 s in the kernel; with ordinary pages, a steady
0.2 s). The arrays are ordinary, writable numpy arrays.

Of a result of :data:`THREADED_BYTES` or more, the partitions' pieces are
copied on a few threads (numpy copies without the GIL): a fetched, sorted
5M-row frame of three columns (120 MB in 8 partitions) was joined in a
median 39 ms rather than 60 on two cores.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ..core.pools import thread_pool

__all__ = ["join_rows"]

#: below this many bytes of fixed-width data, ``pd.concat`` is as good (numpy's small arrays are not huge-paged)
MIN_BYTES = 8 << 20
_FIXED_KINDS = "biufcmM"
#: the C library's allocator, as is: it maps big blocks with ordinary pages (numpy's allocator and Arrow's
#: default pool both ask for huge ones)
_POOL = pa.system_memory_pool()
#: results of at least this many bytes of fixed-width data are copied on several threads
THREADED_BYTES = 32 << 20


def join_rows(values: Sequence[Any], min_bytes: int | None = None) -> Any:
    """``pd.concat(values)`` for non-empty partitions of the same columns and dtypes; ``None`` otherwise.

    ``None`` means the fast path does not apply (differing dtypes or columns,
    ``attrs``/``flags`` set, subclasses, Indexes, fewer than ``min_bytes``
    (default :data:`MIN_BYTES`) of fixed-width data): the caller
    concatenates with pandas.

    Examples
    --------
    >>> import pandas as pd
    >>> from mars.dataframe.assemble import join_rows
    >>> parts = [pd.DataFrame({"a": range(3)}), pd.DataFrame({"a": range(3, 5)}, index=[3, 4])]
    >>> join_rows(parts) is None  # a few bytes: pandas' own concat is as fast
    True
    >>> join_rows(parts, min_bytes=0)["a"].tolist()
    [0, 1, 2, 3, 4]
    """
    if len(values) < 2 or type(values[0]) not in (pd.DataFrame, pd.Series):
        return None
    first = values[0]
    dtypes = list(first.dtypes) if isinstance(first, pd.DataFrame) else [first.dtype]
    rows = sum(len(v) for v in values)
    fixed = sum(d.itemsize for d in dtypes if _fixed(d)) * rows
    if fixed < (MIN_BYTES if min_bytes is None else min_bytes) or not _same_layout(values):
        return None
    index = first.index.append([v.index for v in values[1:]])
    copies: list = []  # (whole column, start, piece) for the fixed-width columns, made below
    if isinstance(first, pd.Series):
        column = _column([v.array for v in values], first.dtype, rows, copies)
        _copy_all(copies, fixed)
        return pd.Series(column, index=index, dtype=first.dtype, name=_consensus_name(values), copy=False)
    arrays = {j: _column([v.iloc[:, j].array for v in values], d, rows, copies) for j, d in enumerate(dtypes)}
    _copy_all(copies, fixed)
    # each column a Series of its dtype (nothing inferred: object stays object), none consolidated or copied
    columns = {j: pd.Series(a, index=index, dtype=dtypes[j], copy=False) for j, a in arrays.items()}
    out = pd.DataFrame(columns, copy=False)
    out.columns = first.columns
    return out


def _same_layout(values: Sequence[Any]) -> bool:
    """All plain DataFrames (or all plain Series) of one dtype per column, the same columns, no attrs or flags."""
    first = values[0]
    kind = type(first)
    if kind is pd.DataFrame:
        if first.shape[1] == 0 or not _plain(first):
            return False
        dtypes, columns = list(first.dtypes), first.columns
        return all(type(v) is kind and _plain(v) and v.columns.equals(columns) and v.columns.dtype == columns.dtype
                   and v.columns.names == columns.names and list(v.dtypes) == dtypes for v in values[1:])
    if kind is pd.Series:
        return _plain(first) and all(type(v) is kind and _plain(v) and v.dtype == first.dtype for v in values[1:])
    return False


def _plain(v: Any) -> bool:
    return not v.attrs and v.flags.allows_duplicate_labels


def _fixed(dtype: Any) -> bool:
    return isinstance(dtype, np.dtype) and dtype.kind in _FIXED_KINDS


def _column(arrays: list, dtype: Any, rows: int, copies: list) -> Any:
    """The arrays end to end, as pandas joins them: numpy's for numpy dtypes, the extension type's for others.

    A fixed-width column is only allocated here: its pieces' copies are added to ``copies``
    (:func:`_copy_all` makes them).
    """
    if not isinstance(dtype, np.dtype):
        return pd.concat([pd.Series(a, copy=False) for a in arrays], ignore_index=True).array
    if not _fixed(dtype):  # object: pointers, which numpy must own
        return np.concatenate([np.asarray(a) for a in arrays])
    out = np.frombuffer(pa.allocate_buffer(rows * dtype.itemsize, memory_pool=_POOL), dtype=dtype)
    start = 0
    for a in arrays:
        piece = np.asarray(a)
        copies.append((out, start, piece))
        start += len(piece)
    return out


def _copy_all(copies: list, nbytes: int) -> None:
    """Each piece into its place in its column: on a few threads when there are :data:`THREADED_BYTES`."""
    if nbytes < THREADED_BYTES or (os.cpu_count() or 1) < 2 or len(copies) < 2:
        for out, start, piece in copies:
            out[start:start + len(piece)] = piece
        return
    pool = thread_pool("join", min(4, os.cpu_count() or 1))
    list(pool.map(lambda c: c[0].__setitem__(slice(c[1], c[1] + len(c[2])), c[2]), copies))


def _consensus_name(values: Sequence[Any]) -> Any:
    """The name all the Series share, else ``None`` (as ``pd.concat`` names its result)."""
    name = values[0].name
    for v in values[1:]:
        try:
            if v.name != name:
                return None
        except ValueError:  # names that do not compare to a bool (arrays)
            return None
    return name
