"""Pyarrow arrays out of band, each cut to the bytes its rows use, without copying their data.

pyarrow pickles an array with the whole buffers it views: a slice of a
column (a partition) carries the column's buffers, and each chunk that
Parquet reading cuts from one decoded page group carries that group's whole
string data again. Here flat arrays (fixed-width, boolean, string, binary)
send slices of their buffers covering their rows, and the chunks of one
chunked array that share a string data buffer send it once: the same
``pyarrow.Buffer`` object, which pickle's memo writes once. A string
chunk's offsets are rewritten (rebased) only when the rows sent start far
into the shared data buffer. Other types are cut by Arrow's concatenation
(a copy of the rows) when they waste much, else pickled by pyarrow.

This module is imported only once pyarrow is (see :mod:`.buffers`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

#: an array is cut when its buffers hold this many bytes more than its rows use (and a quarter more)
WASTE_BYTES = 4096

_types = pa.types


def reduce_chunked(ca: pa.ChunkedArray) -> tuple:
    """Pickle reduction of a chunked array: its chunks cut to their rows, shared string data sent once."""
    return pa.chunked_array, (_cut_all(ca.chunks), ca.type)


def reduce_array(arr: pa.Array) -> tuple:
    """Pickle reduction of one array, cut to its rows."""
    (cut,) = _cut_all([arr])
    return cut.__reduce__()


def rebuild_array(type_: pa.DataType, length: int, buffers: list, null_count: int, offset: int) -> pa.Array:
    """A flat array over ``buffers`` (as :func:`reduce_array` sent them), without copying them.

    >>> import pyarrow as pa
    >>> rebuild_array(pa.int8(), 2, [None, pa.py_buffer(bytes([1, 2, 3]))], 0, 1).to_pylist()
    [2, 3]
    """
    return pa.Array.from_buffers(type_, length, buffers, null_count=null_count, offset=offset)


class _Cut:
    """A flat array reduced to slices of its buffers; pickles as :func:`rebuild_array` over them."""

    __slots__ = ("args",)

    def __init__(self, *args: Any) -> None:
        self.args = args

    def __reduce__(self) -> tuple:
        return rebuild_array, self.args


def _cut_all(chunks: list[pa.Array]) -> list[Any]:
    """Each chunk as it is to be pickled: itself, a :class:`_Cut`, or an Arrow-made compact copy."""
    out: list[Any] = []
    shared: dict[tuple[int, int], list[int]] = {}  # string data buffer -> the chunks that view it
    for arr in chunks:
        used = arr.nbytes  # what pyarrow would send: every buffer, whole (one buffer can be two, zeros say)
        if sum(b.size for b in arr.buffers() if b is not None) <= used + used // 4 + WASTE_BYTES:
            out.append(arr)
        elif _is_fixed(arr.type) or _types.is_boolean(arr.type):
            out.append(_cut_fixed(arr))
        elif _is_text(arr.type) and arr.buffers()[2] is not None:
            data = arr.buffers()[2]
            shared.setdefault((data.address, data.size), []).append(len(out))
            out.append(arr)
        else:
            out.append(pa.concat_arrays([arr]))
    for members in shared.values():
        _cut_text([out[i] for i in members], out, members)
    return out


def _is_fixed(t: pa.DataType) -> bool:
    return bool(_types.is_integer(t) or _types.is_floating(t) or _types.is_temporal(t) or _types.is_decimal(t)
                or _types.is_fixed_size_binary(t))


def _is_text(t: pa.DataType) -> bool:
    return bool(_types.is_string(t) or _types.is_binary(t) or _types.is_large_string(t) or _types.is_large_binary(t))


def _rows(arr: pa.Array) -> tuple[int, int]:
    """First and end row of the buffers' slice: the first rounded down to a byte of bits."""
    return arr.offset - arr.offset % 8, arr.offset + len(arr)


def _bits(buffer: pa.Buffer | None, start: int, stop: int) -> pa.Buffer | None:
    return None if buffer is None else buffer.slice(start // 8, -(-stop // 8) - start // 8)


def _cut_fixed(arr: pa.Array) -> _Cut:
    start, stop = _rows(arr)
    validity, data = arr.buffers()[:2]
    if _types.is_boolean(arr.type):
        values = _bits(data, start, stop)
    else:
        width = arr.type.bit_width // 8
        values = data.slice(start * width, (stop - start) * width)
    return _Cut(arr.type, len(arr), [_bits(validity, start, stop), values], arr.null_count, arr.offset - start)


def _cut_text(arrs: list[pa.Array], out: list[Any], where: list[int]) -> None:
    """String chunks viewing one data buffer: the part of it they use goes once, shared by all."""
    large = _types.is_large_string(arrs[0].type) or _types.is_large_binary(arrs[0].type)
    spans = []
    for arr in arrs:
        start, stop = _rows(arr)
        ends = np.frombuffer(arr.buffers()[1], dtype=np.int64 if large else np.int32)[start : stop + 1]
        spans.append((start, stop, ends))
    lo = min(int(ends[0]) for _, _, ends in spans)
    hi = max(int(ends[-1]) for _, _, ends in spans)
    base = 0 if lo * 4 <= hi - lo else lo  # rebasing the offsets costs a pass over them: only to save much
    data = arrs[0].buffers()[2].slice(base, hi - base)
    for i, arr, (start, stop, ends) in zip(where, arrs, spans):
        width = ends.itemsize
        offsets = (pa.py_buffer(ends - ends.dtype.type(base)) if base
                   else arr.buffers()[1].slice(start * width, (stop - start + 1) * width))
        validity = _bits(arr.buffers()[0], start, stop)
        out[i] = _Cut(arr.type, len(arr), [validity, offsets, data], arr.null_count, arr.offset - start)
