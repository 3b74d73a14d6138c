"""Bits: ``bitwise_count`` (elementwise) and ``packbits`` / ``unpackbits``.

Packing turns each run of 8 elements along the axis into one byte, so the
input is rechunked along that axis at multiples of 8 (each chunk but the last
holds whole bytes) and every chunk packs on its own; unpacking turns each byte
into 8 elements, chunk by chunk, and ``count`` then trims or zero-pads the
end.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Generator
from typing import Any

import numpy as np

from ...core.operator import Tiled
from ..arithmetic.core import apply_ufunc
from ..core import Tensor, TensorData, TensorOperator, tensor_data
from ..datasource.core import astensor, zeros
from .join import concatenate
from .reshape import known_sizes, rechunked
from .shape import ravel

__all__ = ["bitwise_count", "packbits", "unpackbits"]


def bitwise_count(x: Any, /, out: Any = None, *, where: Any = True, dtype: Any = None, **kwargs: Any) -> Tensor:
    """The number of 1-bits in the absolute value of each element, as ``np.bitwise_count``.

    >>> import mars.tensor as mt
    >>> mt.bitwise_count(mt.tensor([0, 7, -8, 1023], chunk_size=3)).execute().fetch()
    array([ 0,  3,  1, 10], dtype=uint8)
    """
    return apply_ufunc("bitwise_count", x, out=out, where=where, dtype=dtype, **kwargs)


def _byte_splits(splits: tuple[int, ...]) -> tuple[int, ...]:
    """``splits`` with each boundary moved up to a multiple of 8 (the end stays where it is)."""
    total, bounds, at = sum(splits), [], 0
    for s in splits:
        at += s
        b = min(-(-at // 8) * 8, total)
        if b > (bounds[-1] if bounds else 0):
            bounds.append(b)
    if not bounds:
        return splits
    return tuple(int(b - a) for a, b in zip([0] + bounds[:-1], bounds))


class TensorPackBits(TensorOperator):
    """``np.packbits`` (``unpack`` False) or ``np.unpackbits`` along ``axis``, chunk by chunk."""

    params = ("axis", "bitorder", "unpack")

    @classmethod
    def tile(cls, op: TensorPackBits) -> Generator[Any, Any, Tiled]:
        x, out, axis = op.inputs[0], op.outputs[0], op.axis
        yield from known_sizes([x], [axis])
        if not op.unpack:
            x = yield from rechunked(x, x.nsplits[:axis] + (_byte_splits(x.nsplits[axis]),) + x.nsplits[axis + 1:])
        scale: Any = (lambda n: n * 8) if op.unpack else (lambda n: -(-n // 8))
        nsplits = x.nsplits[:axis] + (tuple(scale(n) for n in x.nsplits[axis]),) + x.nsplits[axis + 1:]
        chunks = []
        for c in x.chunks:
            shape = c.shape[:axis] + (scale(c.shape[axis]),) + c.shape[axis + 1:]
            chunks.append(op.copy().new_chunk([c], index=c.index, shape=shape, dtype=out.dtype, order=out.order))
        return Tiled(chunks, nsplits)

    def execute(self, x: np.ndarray) -> np.ndarray:
        func = np.unpackbits if self.unpack else np.packbits
        return func(x, axis=self.axis, bitorder=self.bitorder)


def _bits_input(a: Any, axis: Any, func: Any, **kwargs: Any) -> tuple[TensorData, int]:
    """The input (flattened when ``axis`` is None) and the axis, after numpy checks a 1-element stand-in."""
    t = astensor(a)
    if axis is None:
        t, axis = ravel(t), 0
    else:
        axis = operator.index(axis)
    func(np.ones((1,) * t.ndim, dtype=t.dtype), axis=axis, **kwargs)  # numpy's errors, raised now
    return tensor_data(t), axis % t.ndim


def packbits(a: Any, /, axis: int | None = None, bitorder: str = "big") -> Tensor:
    """Each run of 8 elements along ``axis`` (of ``a`` flattened when None) packed into a uint8,
    the first bit most significant (``bitorder="big"``) or least, as ``np.packbits``; the last
    byte is padded with zero bits.

    >>> import mars.tensor as mt
    >>> mt.packbits(mt.tensor([1, 0, 1, 1, 0, 0, 0, 0, 1], chunk_size=4)).execute().fetch()
    array([176, 128], dtype=uint8)
    """
    x, axis = _bits_input(a, axis, np.packbits, bitorder=bitorder)
    shape = x.shape[:axis] + (-(-x.shape[axis] // 8),) + x.shape[axis + 1:]
    op = TensorPackBits(axis=axis, bitorder=bitorder, unpack=False)
    return op.new_tensor([x], shape, np.uint8)


def unpackbits(a: Any, /, axis: int | None = None, count: int | None = None, bitorder: str = "big") -> Tensor:
    """Each uint8 of ``a`` along ``axis`` (flattened when None) unpacked into 8 elements of 0 or 1,
    as ``np.unpackbits``; ``count`` keeps the first ``count`` bits (zero-padded past the end;
    negative: all but the last ``-count``).

    >>> import mars.tensor as mt
    >>> mt.unpackbits(mt.tensor([176, 3], dtype="uint8", chunk_size=1), count=10).execute().fetch()
    array([1, 0, 1, 1, 0, 0, 0, 0, 0, 0], dtype=uint8)
    """
    x, axis = _bits_input(a, axis, np.unpackbits, bitorder=bitorder, count=count)
    n = x.shape[axis] * 8
    op = TensorPackBits(axis=axis, bitorder=bitorder, unpack=True)
    bits = op.new_tensor([x], x.shape[:axis] + (n,) + x.shape[axis + 1:], np.uint8)
    if count is None:
        return bits
    count = operator.index(count)
    if math.isnan(n):
        raise ValueError(f"unpackbits(count={count}) needs the length of axis {axis}, unknown until run; "
                         "call .execute() on the input first")
    keep = count if count >= 0 else max(n + count, 0)
    lead = (slice(None),) * axis
    if keep <= n:
        return bits[lead + (slice(0, keep),)]
    pad = zeros(x.shape[:axis] + (keep - n,) + x.shape[axis + 1:], dtype=np.uint8)
    return concatenate([bits, pad], axis=axis)
