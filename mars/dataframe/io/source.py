"""What the file and database sources share.

A source op reads one partition per chunk. Its tileable-level op offers two
pruning hooks that the indexing methods call: ``with_columns(columns)`` and
``with_head(n)`` return a new source that reads only those columns, or only
the first ``n`` rows, or ``None`` when the source cannot narrow itself.

A source whose rows get pandas' default index (``0..n-1`` across all chunks
and files) has each chunk parsed with its own ``0..k-1`` index first; the
row counts are learnt (a tiling stage where they are cheap to know, as for
Parquet footers; a chain of counts for CSV, see
:func:`mars.dataframe.rows.renumber_rows`) and :class:`RenumberRows` shifts
each chunk's index by the rows before it (a new ``RangeIndex`` on a shallow copy).

Chunks are parsed independently, so one may come out with another dtype than
the metadata inferred from a sample (a column all missing in this chunk, ints
where the sample had floats). :func:`conform` makes a chunk agree with the
metadata where that is lossless, and raises an error naming the column where
it is not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..core import PandasOperator
from .fs import expand_paths, file_token  # noqa: F401 - the readers' helpers, re-exported

_UNITS = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def parse_bytes(value: Any, name: str = "chunk_bytes") -> int:
    """A byte count from an int or a string such as ``"64M"``, ``"1.5GB"``, ``"512KiB"`` (binary units).

    >>> parse_bytes("64M")
    67108864
    """
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        n = int(value)
    elif isinstance(value, str):
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kmgtKMGT]?)(?:i?[bB])?\s*", value)
        if m is None:
            raise ValueError(f"{name} must be a number of bytes such as 67108864 or '64M', got {value!r}")
        n = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    else:
        raise TypeError(f"{name} must be an int or a string such as '64M', got {type(value).__name__}")
    if n < 1:
        raise ValueError(f"{name} must be positive, got {value!r}")
    return n


class SourceOp(PandasOperator):
    """Base of the tileable-level read ops: the pruning hooks default to "cannot"."""

    def with_columns(self, columns: list) -> Any:
        """A source reading only ``columns`` (in that order), or ``None``."""
        return None

    def with_head(self, n: int) -> Any:
        """A source reading only the first ``n`` rows, or ``None``."""
        return None


def checked_columns(meta: pd.DataFrame, columns: Sequence) -> list | None:
    """``columns`` as a list when all are distinct columns of ``meta``, else ``None``."""
    columns = list(columns)
    if len(set(columns)) != len(columns) or not meta.columns.is_unique:
        return None
    if any(c not in meta.columns for c in columns):
        return None
    return columns




def count_rows(chunks: list) -> Generator[Any, Any, list[int]]:
    """For generator ``tile()``s: the row counts of ``chunks``, running them first (a tiling stage)."""
    yield chunks
    return [int(c.shape[0]) for c in chunks]


# ----------------------------------------------------------------- chunks agreeing with the metadata
def _all_missing(values: Any) -> bool:
    return bool(values.isna().all())


def _lossless_cast(values: Any, want: Any) -> bool:
    """Whether ``values`` (of another dtype) can be cast to ``want`` with no change of value."""
    have = values.dtype
    if want == object:
        return True
    if _all_missing(values) and getattr(want, "kind", "O") not in "iub":
        return True  # a chunk with no values: pandas would have given them the column's dtype
    if getattr(want, "kind", None) == "f" and getattr(have, "kind", None) in "iu":
        return True  # the column has missing values or decimals in other chunks
    # another datetime resolution
    return getattr(want, "kind", None) == "M" and getattr(have, "kind", None) == "M"


def conform(df: Any, meta: pd.DataFrame, where: str, reparse: Callable[[dict], Any] | None = None) -> Any:
    """``df`` with the columns, dtypes and index dtype of ``meta``, or a ``ValueError`` naming the column.

    ``reparse(dtypes)`` reads the chunk again with ``dtype=`` for the given
    columns, for casts that must see the text (a column of numbers where the
    metadata says strings).
    """
    if len(df) == 0:
        return meta.copy()
    if list(df.columns) != list(meta.columns):
        raise ValueError(f"{where} has columns {list(df.columns)}, but the first file has {list(meta.columns)}")
    if df.dtypes.equals(meta.dtypes) and df.index.dtype == meta.index.dtype and \
            not isinstance(meta.index, pd.MultiIndex):
        return df
    casts, texts = {}, {}
    for i, (have, want) in enumerate(zip(df.dtypes, meta.dtypes)):
        if have == want or (isinstance(have, pd.CategoricalDtype) and isinstance(want, pd.CategoricalDtype)):
            continue  # categories are the data's: they may differ by chunk (concatenated, they become object)
        name = meta.columns[i]
        col = df.iloc[:, i]
        if _lossless_cast(col, want):
            casts[name] = want
        else:
            texts[name] = want
    if texts and reparse is not None:
        try:
            reparsed = reparse(texts)
        except (ValueError, TypeError) as e:
            raise _dtype_error(*next(iter(texts.items())), df, where) from e
        return conform(reparsed, meta, where)  # once: a second mismatch is an error below
    if texts:
        raise _dtype_error(*next(iter(texts.items())), df, where)
    if casts:
        df = df.astype(casts)
    return _conform_index(df, meta, where)


def _dtype_error(name: Any, want: Any, df: Any, where: str) -> ValueError:
    return ValueError(
        f"column {name!r} holds {df[name].dtype} values in {where}, but the metadata (inferred from the start of "
        f"the data) says {want}; pass dtype={{{name!r}: ...}} (e.g. 'float64' or 'str') to say which"
    )


def _conform_index(df: Any, meta: pd.DataFrame, where: str) -> Any:
    index, want = df.index, meta.index
    if isinstance(want, pd.MultiIndex) and isinstance(index, pd.MultiIndex):
        if index.dtypes.equals(want.dtypes):
            return df
        levels = [index.get_level_values(i) for i in range(index.nlevels)]
    elif index.dtype == want.dtype or isinstance(want, pd.MultiIndex) or isinstance(index, pd.MultiIndex):
        return df
    else:
        levels = [index]
    wanted = list(want.dtypes) if isinstance(want, pd.MultiIndex) else [want.dtype]
    fixed = []
    for level, dtype in zip(levels, wanted):
        if level.dtype != dtype and not _lossless_cast(level, dtype):
            raise ValueError(f"the index holds {level.dtype} values in {where}, but the metadata says {dtype}; "
                             "pass dtype= for the index column")
        fixed.append(level if level.dtype == dtype else level.astype(dtype))
    new = fixed[0] if len(fixed) == 1 else pd.MultiIndex.from_arrays(fixed, names=index.names)
    return df.set_axis(new, axis=0)
