"""Tensors made from data: numpy arrays, and filled tensors (ones, zeros, full, empty)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.entity import chunk_indexes
from ...core.operator import Tiled
from ...core.tokenize import tokenize
from ..chunks import normalize_chunk_sizes, offsets
from ..core import Tensor, TensorOperator, is_tensor


def check_shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        shape = tuple(int(s) for s in shape)
    except TypeError:
        raise TypeError(f"shape must be an integer or a tuple of integers, got {shape!r}") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimensions are not allowed, got shape {shape}")
    return shape


def grid_tile(op: TensorOperator, make_chunk_op: Any) -> Tiled:
    """Tile a source op over ``op.nsplits``: ``make_chunk_op(index, slices, shape)`` gives each chunk's op."""
    out = op.outputs[0]
    nsplits = op.nsplits
    starts = [offsets(s) for s in nsplits]
    chunks = []
    for index in chunk_indexes([len(s) for s in nsplits]):
        shape = tuple(nsplits[d][i] for d, i in enumerate(index))
        slices = tuple(slice(starts[d][i], starts[d][i] + shape[d]) for d, i in enumerate(index))
        chunk_op = make_chunk_op(index, slices, shape)
        chunks.append(chunk_op.new_chunk([], index=index, shape=shape, dtype=out.dtype, order=out.order))
    return Tiled(chunks, nsplits)


class ArrayDataSource(TensorOperator):
    """A numpy array cut into chunks; the data travels with the chunk ops."""

    params = ("data", "token", "nsplits")
    unkeyed = ("data",)
    fusible = True

    @classmethod
    def tile(cls, op: ArrayDataSource) -> Tiled:
        def chunk_op(index: tuple, slices: tuple, shape: tuple) -> ArrayDataSource:
            return ArrayDataSource(data=op.data[slices], token=(op.token, tuple((s.start, s.stop) for s in slices)), nsplits=None)

        return grid_tile(op, chunk_op)

    def execute(self) -> np.ndarray:
        return self.data


class TensorFull(TensorOperator):
    """A tensor of one value (``empty`` is ``full`` with zeros: never undefined memory)."""

    params = ("fill_value", "dtype", "shape", "order", "nsplits")
    fusible = True

    @classmethod
    def tile(cls, op: TensorFull) -> Tiled:
        def chunk_op(index: tuple, slices: tuple, shape: tuple) -> TensorFull:
            return TensorFull(fill_value=op.fill_value, dtype=op.dtype, shape=shape, order=op.order, nsplits=None)

        return grid_tile(op, chunk_op)

    def execute(self) -> np.ndarray:
        return np.full(self.shape, self.fill_value, dtype=self.dtype, order=self.order)


def check_order(order: str) -> str:
    if order not in ("C", "F"):
        raise ValueError(f"order must be 'C' or 'F', got {order!r}")
    return order


def from_numpy(data: np.ndarray, chunk_size: Any = None) -> Tensor:
    nsplits = normalize_chunk_sizes(data.shape, chunk_size, data.dtype.itemsize)
    op = ArrayDataSource(data=data, token=tokenize(data), nsplits=nsplits)
    order = "F" if data.flags.f_contiguous and not data.flags.c_contiguous else "C"
    return op.new_tensor([], data.shape, data.dtype, order=order)


def full(shape: Any, fill_value: Any, dtype: Any = None, chunk_size: Any = None, order: str = "C") -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value`` (dtype as numpy infers it)."""
    shape = check_shape(shape)
    dtype = np.dtype(dtype) if dtype is not None else np.array(fill_value).dtype
    nsplits = normalize_chunk_sizes(shape, chunk_size, dtype.itemsize)
    op = TensorFull(fill_value=fill_value, dtype=dtype, shape=shape, order=check_order(order), nsplits=nsplits)
    return op.new_tensor([], shape, dtype, order=order)


def ones(shape: Any, dtype: Any = float, chunk_size: Any = None, order: str = "C") -> Tensor:
    """A tensor of ones.

    >>> import mars.tensor as mt
    >>> (mt.ones((5, 5), chunk_size=3) * 4).execute().fetch()[0, 0]
    np.float64(4.0)
    """
    return full(shape, 1, dtype=np.dtype(dtype), chunk_size=chunk_size, order=order)


def zeros(shape: Any, dtype: Any = float, chunk_size: Any = None, order: str = "C") -> Tensor:
    return full(shape, 0, dtype=np.dtype(dtype), chunk_size=chunk_size, order=order)


def empty(shape: Any, dtype: Any = float, chunk_size: Any = None, order: str = "C") -> Tensor:
    return full(shape, 0, dtype=np.dtype(dtype), chunk_size=chunk_size, order=order)


def _like(a: Any, dtype: Any, shape: Any) -> tuple[tuple, np.dtype, Any]:
    t = a if is_tensor(a) else np.asarray(a)
    shape = check_shape(shape) if shape is not None else tuple(t.shape)
    chunk_size = a.nsplits if is_tensor(a) and a.nsplits is not None and tuple(t.shape) == shape else None
    return shape, np.dtype(dtype) if dtype is not None else t.dtype, chunk_size


def full_like(a: Any, fill_value: Any, dtype: Any = None, chunk_size: Any = None, shape: Any = None) -> Tensor:
    shape, dtype, like_chunks = _like(a, dtype, shape)
    return full(shape, fill_value, dtype=dtype, chunk_size=chunk_size or like_chunks)


def ones_like(a: Any, dtype: Any = None, chunk_size: Any = None, shape: Any = None) -> Tensor:
    return full_like(a, 1, dtype=dtype, chunk_size=chunk_size, shape=shape)


def zeros_like(a: Any, dtype: Any = None, chunk_size: Any = None, shape: Any = None) -> Tensor:
    return full_like(a, 0, dtype=dtype, chunk_size=chunk_size, shape=shape)


def empty_like(a: Any, dtype: Any = None, chunk_size: Any = None, shape: Any = None) -> Tensor:
    return full_like(a, 0, dtype=dtype, chunk_size=chunk_size, shape=shape)


def astensor(x: Any, chunk_size: Any = None) -> Tensor:
    """``x`` as a Tensor: tensors as they are, array-likes converted (automatic chunks)."""
    if isinstance(x, Tensor):
        return x
    if is_tensor(x):
        return Tensor(x)
    array = np.asarray(x)
    if array.dtype.hasobject:
        raise TypeError(f"cannot make a tensor of Python objects from {type(x).__name__}; pass numeric data")
    return from_numpy(array, chunk_size)
