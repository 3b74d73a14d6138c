"""Hash shuffles of row partitions: rows with equal keys end in the same partition.

``hash_shuffle(data, by, n)`` wires :func:`mars.core.shuffle.shuffle_chunks`
for pandas objects: each mapper hashes its rows' keys (``pd.util.hash_pandas_object``,
stable across processes) and splits its rows into ``n`` pieces; reducer
``r`` concatenates the pieces for partition ``r``. ``by`` is a list of column
names, ``"index"`` (all index levels) or ``"values"`` (a Series' or Index's
own values). Keys are cast to ``cast`` dtypes first when given, so both sides of a
join with int and float keys hash equal values the same way.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..core.shuffle import ShuffleMap, ShuffleReduce, shuffle_chunks
from .core import PandasOperator, chunk_index_of, chunk_shape_of, concat_values


def hash_keys(value: Any, by: Any, cast: Any = None) -> np.ndarray:
    """uint64 hashes of each row's key."""
    if isinstance(by, str) and by == "values":
        keys: Any = _index_keys(value) if isinstance(value, pd.Index) else value.reset_index(drop=True)
    elif isinstance(by, str) and by == "index":
        keys = _index_keys(value.index)
    else:
        keys = value[list(by)].reset_index(drop=True) if isinstance(value, pd.DataFrame) else value
    if cast is not None:
        keys = keys.astype(cast)
    if isinstance(keys, pd.DataFrame) and keys.shape[1] == 1:
        keys = keys.iloc[:, 0]
    return pd.util.hash_pandas_object(keys, index=False).to_numpy()


def _index_keys(index: pd.Index) -> Any:
    # Index.to_series(index=False) is an error: pandas wants an Index there
    return index.to_frame(index=False) if isinstance(index, pd.MultiIndex) else pd.Series(index, copy=False)


def narrow_codes(codes: np.ndarray, n: int) -> np.ndarray:
    """Codes ``0 <= c <= n`` in the narrowest integer type: numpy's stable argsort of 8 or 16 bits is a radix
    sort, some 25 times faster than its merge sort of int64.

    >>> narrow_codes(np.array([0, 3, 1]), 4).dtype
    dtype('uint8')
    """
    if n < 255:
        return codes.astype(np.uint8, copy=False)
    return codes.astype(np.int16 if n < 2**15 else np.int64, copy=False)


def split_by_codes(value: Any, codes: np.ndarray, n: int) -> list:
    """``value``'s rows split into ``n`` pieces by partition code, keeping row order within each piece."""
    if n == 1:
        return [value]
    codes = narrow_codes(codes, n)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(n + 1))
    taken = value.take(order) if not isinstance(value, pd.Index) else value[order]
    if isinstance(taken, pd.Index):
        return [taken[bounds[r]:bounds[r + 1]] for r in range(n)]
    return [taken.iloc[bounds[r]:bounds[r + 1]] for r in range(n)]


class HashSplit(ShuffleMap, PandasOperator):
    params = ("by", "cast")

    def split(self, value: Any) -> list:
        n = len(self.output_keys)
        codes = (hash_keys(value, self.by, self.cast) % np.uint64(n)).astype(np.int64) if len(value) else \
            np.zeros(0, dtype=np.int64)
        return split_by_codes(value, codes, n)


class ConcatPieces(ShuffleReduce, PandasOperator):
    """A shuffle's reducer: the pieces for one partition, end to end."""

    params = ("meta",)

    def combine(self, pieces: list) -> Any:
        return concat_values(pieces, self.meta)


def hash_shuffle(data: Any, by: Any, n_partitions: int, cast: Any = None,
                 chunks: Sequence[Any] | None = None) -> list:
    """Reducer chunks (one per partition) holding ``data``'s rows grouped by the hash of ``by``."""
    meta = data.meta
    chunks = list(chunks if chunks is not None else data.chunks)
    return shuffle_chunks(
        chunks, n_partitions,
        lambda i: HashSplit(by=by, cast=cast),
        lambda r: ConcatPieces(meta=meta),
        [{"index": chunk_index_of(meta, r), "shape": chunk_shape_of(meta, np.nan), "meta": meta}
         for r in range(n_partitions)],
        lambda i, r: {"index": (i, r), "shape": (np.nan,), "meta": meta},
    )
