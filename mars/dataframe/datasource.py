"""DataFrames, Series and Indexes from pandas objects, dicts, arrays and mars tensors.

A pandas object is cut into row partitions at build time (each chunk op
carries its slice); a tensor becomes a DataFrame chunk by chunk, rechunked
first so that each row block holds all columns.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from collections.abc import Generator
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ..core.entity import Tileable, has_unknown
from ..core.operator import Tiled
from ..core.options import options
from ..core.pools import thread_pool
from ..core.tokenize import normalize, tokenize
from ..tensor.core import is_tensor
from .core import (
    PandasData,
    PandasOperator,
    as_pandas_data,
    chunk_index_of,
    chunk_shape_of,
    kind_of,
    nsplits_of,
)
from .meta import empty_meta


def tokenize_pandas(obj: Any) -> str:
    """A key for a pandas object's value: its arrays hashed in place, never pickled or boxed.

    Numpy columns and the buffers of Arrow-backed ones (strings, nullable
    integers, categoricals) are checksummed as they are: of an Arrow chunk,
    only the bytes of its own rows (the chunks of a column read from Parquet
    share one data buffer per row group). A big frame's buffers are cut into
    blocks checksummed side by side on threads (the checksum releases the
    GIL), so that a frame of few big columns is hashed in parallel too; only
    object columns of mixed types are walked element by element.

    Examples
    --------
    >>> df = pd.DataFrame({"a": [1, 2], "s": ["x", "y"]})
    >>> tokenize_pandas(df) == tokenize_pandas(df.copy())
    True
    >>> tokenize_pandas(df) == tokenize_pandas(df.assign(s=["x", "z"]))
    False
    """
    if isinstance(obj, pd.DataFrame):
        tokens = _column_tokens([obj.iloc[:, i] for i in range(obj.shape[1])])
        parts = [normalize(list(obj.columns)), tokenize_pandas(obj.index), *tokens]
    elif isinstance(obj, pd.Series):
        parts = [normalize(obj.name), tokenize_pandas(obj.index), *_column_tokens([obj])]
    elif isinstance(obj, pd.RangeIndex):
        parts = ["range", normalize((obj.start, obj.stop, obj.step, obj.name))]
    elif isinstance(obj, pd.MultiIndex):
        parts = ["multi", normalize(list(obj.names)),
                 *_column_tokens([obj.get_level_values(i) for i in range(obj.nlevels)])]
    else:
        parts = ["index", normalize(obj.name), *_column_tokens([obj])]
    return tokenize(type(obj).__name__, *parts)


#: frames with at least this many bytes have their buffers checksummed on several threads
_THREADED_TOKEN_BYTES = 32 << 20
#: buffers are checksummed in blocks of at most this many bytes (the units of work of the threads)
_TOKEN_BLOCK_BYTES = 4 << 20


def _column_tokens(columns: list[Any]) -> list[str]:
    """One token per column: their byte buffers gathered first, then checksummed block by block at once."""
    described = [_column_parts(c) for c in columns]
    raw = [p for parts in described for p in parts if isinstance(p, np.ndarray)]
    blocks = [b[i:i + _TOKEN_BLOCK_BYTES] for b in raw for i in range(0, len(b), _TOKEN_BLOCK_BYTES)]
    if sum(len(b) for b in raw) >= _THREADED_TOKEN_BYTES:
        sums = iter(list(thread_pool("token", min(4, os.cpu_count() or 1)).map(_block_digest, blocks)))
    else:
        sums = iter([_block_digest(b) for b in blocks])
    return ["|".join(_buffer_token(p, sums) if isinstance(p, np.ndarray) else p for p in parts)
            for parts in described]


def _block_digest(block: np.ndarray) -> bytes:
    """Two independent checksums of one block: CRC-32, and a 64-bit sum of its 8-byte words, each times a fixed
    odd weight of its place (both pass over the block at memory speed, without the GIL).

    A change that CRC-32 misses (about once in 2**32, never one within 32 bits in a row) must also leave the
    weighted sum as it was: about once in 2**64 for most changes, in 2**8 at worst (changes to only the top
    byte of several words). Adler-32 in the sum's place took twice the time of both.
    """
    words = block[:len(block) - len(block) % 8].view(np.uint64)
    weighted = int(np.dot(words, _word_weights(len(words))))
    return zlib.crc32(block).to_bytes(4, "little") + weighted.to_bytes(8, "little")  # type: ignore[arg-type]


_weights = np.zeros(0, dtype=np.uint64)


def _word_weights(n: int) -> np.ndarray:
    """The odd 64-bit weights of a block's first ``n`` words: SplitMix64 of the word's place, the same in every
    process and for every block size."""
    global _weights
    if len(_weights) < n:
        z = (np.arange(1, max(n, _TOKEN_BLOCK_BYTES // 8) + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15))
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        _weights = (z ^ (z >> np.uint64(31))) | np.uint64(1)
    return _weights[:n]


def _buffer_token(raw: np.ndarray, sums: Any) -> str:
    """A buffer's length and the digest of its blocks' digests (taken from ``sums`` in order)."""
    n_blocks = -(-len(raw) // _TOKEN_BLOCK_BYTES)
    joined = b"".join(next(sums) for _ in range(n_blocks))
    return f"{len(raw)}:" + hashlib.blake2b(joined, digest_size=16).hexdigest()


def _bytes_of(a: Any) -> np.ndarray:
    """The bytes of an array or Arrow buffer, as a 1-d uint8 array (a view where it is contiguous)."""
    if isinstance(a, np.ndarray):
        return np.ascontiguousarray(a).reshape(-1).view(np.uint8)
    return np.frombuffer(a, dtype=np.uint8) if a.size else np.empty(0, np.uint8)


def _column_parts(values: Any) -> list[Any]:
    """What identifies a column's value: strings, and uint8 arrays of bytes to checksum."""
    dtype = values.dtype
    if isinstance(dtype, np.dtype) and dtype != object:
        arr = np.asarray(values)
        return [f"{dtype.str}:{arr.shape}", _bytes_of(arr)]
    if not isinstance(dtype, np.dtype):
        arrow = _arrow_parts(values)
        if arrow is not None:
            return [str(dtype), *arrow]
    objects = np.asarray(values.astype(object), dtype=object)
    if pd.api.types.infer_dtype(objects, skipna=False) == "string":  # every element a str: hashed in C
        return [str(dtype) + "str:", _bytes_of(pd.util.hash_array(objects, categorize=False))]
    return [str(dtype) + normalize(objects)]


def _arrow_parts(values: Any) -> list[Any] | None:
    """The parts of an extension array's Arrow form (zero-copy for Arrow-backed ones), or None."""
    try:
        arr = pa.array(values.array if isinstance(values, (pd.Series, pd.Index)) else values)
    except (TypeError, ValueError, NotImplementedError, pa.ArrowException):
        return None
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    return ["arrow"] + [p for c in chunks for p in _arrow_chunk_parts(c)]


def _arrow_chunk_parts(arr: Any) -> list[Any]:
    # an Arrow slice shares its parent's buffers: its offset and length say which part is its value
    head = f"{arr.type}:{arr.offset}:{len(arr)}"
    if isinstance(arr, pa.DictionaryArray):
        return [head, *_arrow_chunk_parts(arr.indices), "/", *_arrow_chunk_parts(arr.dictionary)]
    return [head, *("-" if b is None else _bytes_of(b) for b in _own_bytes(arr))]


def _own_bytes(arr: Any) -> list[Any]:
    """``arr``'s buffers cut to the bytes of its own rows where its layout is flat; all of them otherwise."""
    buffers, t, start, n = arr.buffers(), arr.type, arr.offset, len(arr)
    bits = slice(start // 8, -(-(start + n) // 8))
    if len(buffers) == 2 and pa.types.is_boolean(t):
        return [None if b is None else b[bits] for b in buffers]
    if len(buffers) == 2 and (pa.types.is_primitive(t) or pa.types.is_decimal(t) or pa.types.is_fixed_size_binary(t)):
        width = t.bit_width // 8
        return [None if buffers[0] is None else buffers[0][bits],
                None if buffers[1] is None else buffers[1][start * width:(start + n) * width]]
    flat = pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) or pa.types.is_large_binary(t)
    if len(buffers) == 3 and flat and buffers[1] is not None and buffers[2] is not None:
        large = pa.types.is_large_string(t) or pa.types.is_large_binary(t)
        offsets = np.frombuffer(buffers[1], dtype=np.int64 if large else np.int32)[start:start + n + 1]
        data = buffers[2][int(offsets[0]):int(offsets[-1])] if len(offsets) else buffers[2][0:0]
        return [None if buffers[0] is None else buffers[0][bits], offsets, data]
    return buffers


def auto_rows(meta: Any, n_rows: int, chunk_size: Any) -> tuple[int, ...]:
    """Row counts of the partitions: ``chunk_size`` rows each, or sized by ``options.chunk_store_limit``."""
    if chunk_size is None:
        chunk_size = options.chunk_size
    if isinstance(chunk_size, (tuple, list)):
        if all(isinstance(c, (tuple, list)) for c in chunk_size):
            chunk_size = chunk_size[0]  # ((rows...), (cols...)): columns are not partitioned
        if all(isinstance(c, (int, np.integer)) for c in chunk_size) and sum(chunk_size) == n_rows:
            return tuple(int(c) for c in chunk_size)
        if len(chunk_size) in (1, 2):
            chunk_size = chunk_size[0]
    if chunk_size is None:
        n_cols = meta.shape[1] if isinstance(meta, pd.DataFrame) else 1
        row_bytes = max(1, 8 * max(n_cols, 1))
        chunk_size = max(1, options.chunk_store_limit // row_bytes)
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive number of rows, got {chunk_size!r}")
    chunk_size = int(chunk_size)
    if n_rows == 0:
        return (0,)
    sizes = [chunk_size] * (n_rows // chunk_size)
    if n_rows % chunk_size:
        sizes.append(n_rows % chunk_size)
    return tuple(sizes)


class FromPandas(PandasOperator):
    """A pandas object cut into row partitions; each chunk op carries its own rows.

    A partition's columns are views of the object's, one block each, so that
    pickling one (to a worker, or into shared memory) copies no bytes
    beforehand: a row slice of a 2-d pandas block is not contiguous, and
    numpy would copy it to pickle it out of band. A cluster session puts the
    partitions of a large executed frame straight into workers' storage
    (``literal_nbytes``, see :mod:`mars.remote`).
    """

    params = ("data", "token", "rows")
    unkeyed = ("data",)

    def literal_nbytes(self) -> int:
        """Bytes of the client's data this op carries (the index included, object columns shallowly)."""
        data = self.data
        return sum(map(_nbytes, data.parts)) if isinstance(data, Uploaded) else _nbytes(data)

    def int_ranges(self) -> dict | None:
        """Of a partition's op: each integer column's smallest and largest value (see
        :class:`~mars.core.operator.HeldData`), or None for a Series or an Index."""
        data = self.data
        return column_ranges(data) if isinstance(data, pd.DataFrame) else None

    def uploaded(self, parts: list) -> Any:
        """The partitions as a cluster on this host holds them, mapped from its shared memory: kept in place of
        the client's data, which is then one copy fewer in memory (see :class:`Uploaded`). Returns the data
        let go of (None when ``parts`` do not match the partitions, and nothing changed)."""
        if len(parts) != len(self.rows):
            return None
        data, self.data = self.data, Uploaded(tuple(parts))
        return data

    @classmethod
    def tile(cls, op: FromPandas) -> Tiled:
        out = op.outputs[0]
        chunks, start = [], 0
        for i, n in enumerate(op.rows):
            if isinstance(op.data, Uploaded):
                part = op.data.parts[i]
            else:
                part = op.data[start:start + n] if isinstance(op.data, pd.Index) else op.data.iloc[start:start + n]
            if isinstance(part, pd.DataFrame) and part.shape[1] > 1:
                part = _column_blocks(part)
            chunk_op = FromPandas(data=part, token=(op.token, start, n), rows=None)
            chunks.append(chunk_op.new_chunk([], index=chunk_index_of(out.meta, i),
                                             shape=chunk_shape_of(out.meta, n), meta=out.meta))
            start += n
        return Tiled(chunks, nsplits_of(out.meta, op.rows))

    def execute(self) -> Any:
        return self.data


def int_range(column: Any) -> tuple[int, int] | None:
    """A column's smallest and largest value, if it holds numpy integers (all below 2**63) and has rows."""
    if not isinstance(column, pd.Series) or not len(column) or not isinstance(column.dtype, np.dtype) \
            or column.dtype.kind not in "iu":
        return None
    values = column.to_numpy()
    lo, hi = int(values.min()), int(values.max())
    return (lo, hi) if hi < 2**63 else None


def column_ranges(part: pd.DataFrame) -> dict:
    """:func:`int_range` of each integer column whose label is unique, None for each when there are no rows;
    no entry for a column whose range is not known (a uint64 at or above 2**63)."""
    labels = part.columns
    unique = labels[~labels.duplicated(keep=False)]
    out: dict = {}
    for label in unique:
        column = part[label]
        if isinstance(column.dtype, np.dtype) and column.dtype.kind in "iu":
            found = int_range(column)
            if found is not None or not len(column):
                out[label] = found
    return out


class Uploaded:
    """A frame's partitions once uploaded to workers on this host: read-only views of their shared memory.

    The views keep the segments' pages alive after the workers free them (a
    worker lost, say), so the partitions can still be computed again from
    here; while both hold them, the data is in memory once.
    """

    def __init__(self, parts: tuple) -> None:
        self.parts = parts

    def __repr__(self) -> str:
        return f"<{len(self.parts)} partitions mapped from the workers' shared memory>"


def _nbytes(data: Any) -> int:
    usage = data.memory_usage(deep=False) if isinstance(data, pd.Index) else data.memory_usage(index=True)
    return int(usage.sum() if isinstance(usage, pd.Series) else usage)


def _column_blocks(part: pd.DataFrame) -> pd.DataFrame:
    """``part`` with one block per column, each a view of the original's (a contiguous run of its block)."""
    # Series rather than arrays: an object column given as an array would be read as strings
    out = pd.DataFrame({i: part.iloc[:, i] for i in range(part.shape[1])}, copy=False)
    out.columns = part.columns
    return out


def from_pandas(obj: Any, chunk_size: Any = None) -> Any:
    """A lazy DataFrame/Series/Index holding ``obj``, in partitions of ``chunk_size`` rows."""
    kind_of(obj)
    meta = empty_meta(obj)
    rows = auto_rows(meta, len(obj), chunk_size)
    op = FromPandas(data=obj, token=tokenize_pandas(obj), rows=rows)
    return op.new_pandas([], meta, obj.shape)


class FromTensor(PandasOperator):
    """A 1-d or 2-d tensor as a DataFrame or Series (a default RangeIndex, or ``index``)."""

    params = ("columns", "name", "index", "kind")

    @classmethod
    def tile(cls, op: FromTensor) -> Generator[Any, Any, Tiled]:
        from ..core.tiling import recursive_tile
        from ..tensor.rechunk import rechunk

        t = op.inputs[0]
        if has_unknown(t.shape) or any(has_unknown(s) for s in t.nsplits):
            yield t.chunks
            t.refresh_shape()
        if t.ndim == 2 and len(t.nsplits[1]) > 1:
            t = (yield from recursive_tile(rechunk(t, (t.nsplits[0], (t.shape[1],))))).data
        out = op.outputs[0]
        chunks, start = [], 0
        for i, n in enumerate(t.nsplits[0]):
            src = t.chunk_at((i, 0) if t.ndim == 2 else (i,))
            chunk_op = op.copy()
            chunk_op.index = (start, start + n) if op.index is None else op.index[start:start + n]
            chunks.append(chunk_op.new_chunk([src], index=chunk_index_of(out.meta, i),
                                             shape=chunk_shape_of(out.meta, n), meta=out.meta))
            start += n
        return Tiled(chunks, nsplits_of(out.meta, t.nsplits[0]))

    def execute(self, block: np.ndarray) -> Any:
        index = self.index
        if isinstance(index, tuple):
            index = pd.RangeIndex(index[0], index[1])
        if self.kind == "series":
            return pd.Series(block, index=index, name=self.name)
        return pd.DataFrame(block, index=index, columns=self.columns)


def from_tensor(t: Any, index: Any = None, columns: Any = None, name: Any = None, kind: str = "dataframe") -> Any:
    from ..tensor.core import tensor_data

    data = tensor_data(t)
    if data.ndim not in (1, 2) or (kind == "series" and data.ndim != 1):
        raise ValueError(f"a {kind} can be made from a 1-d{' or 2-d' if kind == 'dataframe' else ''} tensor, "
                         f"got {data.ndim}-d with shape {data.shape}")
    if index is not None:
        index = pd.Index(index)
        if not has_unknown(data.shape) and len(index) != data.shape[0]:
            raise ValueError(f"index has {len(index)} entries for {data.shape[0]} rows")
    sample = np.empty((0,) + tuple(data.shape[1:]), dtype=data.dtype)
    if kind == "series":
        meta = pd.Series(sample, name=name, index=index[:0] if index is not None else None)
        shape = (data.shape[0],)
    else:
        cols = columns if columns is not None else (pd.RangeIndex(data.shape[1]) if data.ndim == 2 else [0])
        if data.ndim == 1:
            sample = sample.reshape(0, 1)
        meta = pd.DataFrame(sample, columns=cols, index=index[:0] if index is not None else None)
        columns = meta.columns
        shape = (data.shape[0], meta.shape[1])
    op = FromTensor(columns=columns, name=name, index=index, kind=kind)
    if data.ndim == 1 and kind == "dataframe":
        from ..tensor import reshape

        data = reshape(t, (-1, 1)).data
    return op.new_pandas([data], meta, shape)


def dataframe_from(data: Any, index: Any, columns: Any, dtype: Any, chunk_size: Any) -> Any:
    """What ``md.DataFrame(...)`` builds from its arguments."""
    if is_tensor(data):
        df = from_tensor(data, index=index, columns=columns)
        return df.astype(dtype) if dtype is not None else _rechunked(df, chunk_size)
    if isinstance(data, (Tileable, PandasData)):
        d = as_pandas_data(data)
        if d.kind == "series":
            df = d_to_frame(data)
        elif d.kind == "dataframe":
            from .core import wrap

            df = wrap(d)
        else:
            raise TypeError("a DataFrame cannot be made from a lazy Index; use index.to_frame()")
        if columns is not None:
            df = df[list(columns)]
        if dtype is not None:
            df = df.astype(dtype)
        return _rechunked(df, chunk_size)
    pdf = data if isinstance(data, pd.DataFrame) and index is None and columns is None and dtype is None \
        else pd.DataFrame(data, index=index, columns=columns, dtype=dtype)
    return from_pandas(pdf, chunk_size)


def d_to_frame(series: Any) -> Any:
    from .core import wrap

    return wrap(as_pandas_data(series)).to_frame()


def _rechunked(obj: Any, chunk_size: Any) -> Any:
    if chunk_size is None:
        return obj
    from .rows import rechunk_rows

    return rechunk_rows(obj, chunk_size)


def series_from(data: Any, index: Any, dtype: Any, name: Any, chunk_size: Any) -> Any:
    if is_tensor(data):
        s = from_tensor(data, index=index, name=name, kind="series")
        return s.astype(dtype) if dtype is not None else _rechunked(s, chunk_size)
    if isinstance(data, (Tileable, PandasData)):
        from .core import wrap

        s = wrap(as_pandas_data(data))
        if s.ndim != 1:
            raise TypeError(f"a Series cannot be made from a lazy {type(s).__name__}")
        if name is not None:
            s = s.rename(name)
        if dtype is not None:
            s = s.astype(dtype)
        return _rechunked(s, chunk_size)
    ps = data if isinstance(data, pd.Series) and index is None and dtype is None and name is None \
        else pd.Series(data, index=index, dtype=dtype, name=name)
    return from_pandas(ps, chunk_size)


def index_from(data: Any, dtype: Any, name: Any, chunk_size: Any) -> Any:
    if is_tensor(data):
        from .map import map_partitions

        s = from_tensor(data, name=name, kind="series")
        return map_partitions(_values_as_index, s, dtype, name)
    pidx = data if isinstance(data, pd.Index) and dtype is None and name is None \
        else pd.Index(data, dtype=dtype, name=name)
    return from_pandas(pidx, chunk_size)


def _values_as_index(s: pd.Series, dtype: Any, name: Any) -> pd.Index:
    return pd.Index(s.to_numpy(), dtype=dtype, name=name)
