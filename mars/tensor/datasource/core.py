"""Tensors made from data: numpy arrays, and filled tensors (ones, zeros, full, empty)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.device import array_module
from ...core.entity import chunk_indexes
from ...core.operator import Tiled
from ...core.tiling import tile_now
from ...core.tokenize import tokenize
from ..chunks import normalize_chunk_sizes, offsets
from ..core import Tensor, TensorOperator, is_tensor, on_device, tensor_data
from ..rechunk import rechunk


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
        chunk_op.gpu = op.gpu
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
    """A tensor of one value (``empty`` is ``full`` with zeros: never undefined memory).

    ``fill_value`` may be a numpy array that broadcasts to the shape (each chunk
    gets its part), or None when it is the input tensor (already cut like the output).
    """

    params = ("fill_value", "dtype", "shape", "order", "nsplits")
    fusible = True

    @classmethod
    def tile(cls, op: TensorFull) -> Tiled:
        fill = op.fill_value
        if op.inputs:
            return _tile_tensor_fill(op)

        def chunk_op(index: tuple, slices: tuple, shape: tuple) -> TensorFull:
            part = _fill_part(fill, slices, len(shape))
            return TensorFull(fill_value=part, dtype=op.dtype, shape=shape, order=op.order, nsplits=None)

        return grid_tile(op, chunk_op)

    def execute(self, *fill: Any) -> np.ndarray:
        xp = array_module(self.gpu)
        return xp.full(self.shape, fill[0] if fill else self.fill_value, dtype=self.dtype, order=self.order)


def _fill_part(fill: Any, slices: tuple, ndim: int) -> Any:
    """The part of an array ``fill`` (broadcast to the whole shape) that one chunk covers."""
    if not isinstance(fill, np.ndarray) or not fill.ndim:
        return fill
    own = slices[ndim - fill.ndim:]
    return fill[tuple(slice(None) if n == 1 else s for n, s in zip(fill.shape, own))]


def _tile_tensor_fill(op: TensorFull) -> Tiled:
    """A tensor fill value, rechunked to the output's splits where it is not broadcast."""
    fill = op.inputs[0]
    lead = len(op.nsplits) - fill.ndim
    want = tuple((n,) if n == 1 else op.nsplits[lead + d] for d, n in enumerate(fill.shape))
    if tuple(fill.nsplits) != want:
        fill = tile_now(rechunk(Tensor(fill), want)).data
    out = op.outputs[0]
    chunks = []
    for index in chunk_indexes([len(s) for s in op.nsplits]):
        shape = tuple(op.nsplits[d][i] for d, i in enumerate(index))
        at = tuple(0 if n == 1 else index[lead + d] for d, n in enumerate(fill.shape))
        chunk_op = TensorFull(fill_value=None, dtype=op.dtype, shape=shape, order=op.order, nsplits=None)
        chunks.append(chunk_op.new_chunk([fill.chunk_at(at)], index=index, shape=shape, dtype=out.dtype,
                                         order=out.order))
    return Tiled(chunks, op.nsplits)


def check_order(order: str) -> str:
    if order not in ("C", "F"):
        raise ValueError(f"order must be 'C' or 'F', got {order!r}")
    return order


def from_numpy(data: np.ndarray, chunk_size: Any = None, gpu: Any = None) -> Tensor:
    nsplits = normalize_chunk_sizes(data.shape, chunk_size, data.dtype.itemsize)
    op = on_device(ArrayDataSource(data=data, token=tokenize(data), nsplits=nsplits), gpu)
    order = "F" if data.flags.f_contiguous and not data.flags.c_contiguous else "C"
    return op.new_tensor([], data.shape, data.dtype, order=order)


def check_device(device: Any) -> None:
    """Accept the Array API's ``device=`` where a function makes host tensors only: None or ``"cpu"``."""
    if device is not None and str(device) != "cpu":
        raise ValueError(f"unsupported device {device!r}: this makes tensors on 'cpu' (pass device=None or 'cpu')")


def placement(device: Any, gpu: Any) -> bool | None:
    """Where a new tensor lives from ``device=`` (the Array API's: ``"cpu"``, ``"gpu"``/``"cuda"``) and
    ``gpu=`` (Mars's); None: where its inputs are (host memory for a source).

    >>> placement("gpu", None), placement(None, False), placement(None, None)
    (True, False, None)
    """
    if device is None:
        return None if gpu is None else bool(gpu)
    name = str(device).lower()
    wanted = True if name in ("gpu", "cuda") or name.startswith("cuda:") else False if name == "cpu" else None
    if wanted is None:
        raise ValueError(f"unsupported device {device!r}: mars tensors live on 'cpu' or 'gpu'")
    if gpu is not None and bool(gpu) != wanted:
        raise ValueError(f"device={device!r} contradicts gpu={gpu!r}")
    return wanted


def full(shape: Any, fill_value: Any, dtype: Any = None, chunk_size: Any = None, order: str = "C", *,
         device: Any = None, gpu: Any = None) -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value``: a scalar, or an array or tensor that
    broadcasts to ``shape`` (dtype as numpy infers it).

    >>> import mars.tensor as mt
    >>> mt.full((2, 3), [1, 2, 3], chunk_size=2).execute().fetch()
    array([[1, 2, 3],
           [1, 2, 3]])
    """
    gpu = placement(device, gpu)
    shape = check_shape(shape)
    inputs = []
    if is_tensor(fill_value):
        inputs, fill_value = [tensor_data(fill_value)], None
        dtype = np.dtype(dtype) if dtype is not None else inputs[0].dtype
        _check_fill_shape(inputs[0].shape, shape)
    else:
        fill_value = fill_value if np.ndim(fill_value) == 0 else np.array(fill_value)  # a copy: numpy's full copies
        dtype = np.dtype(dtype) if dtype is not None else np.array(fill_value).dtype
        _check_fill_shape(np.shape(fill_value), shape)
    nsplits = normalize_chunk_sizes(shape, chunk_size, dtype.itemsize)
    op = TensorFull(fill_value=fill_value, dtype=dtype, shape=shape, order=check_order(order), nsplits=nsplits)
    return on_device(op, gpu).new_tensor(inputs, shape, dtype, order=order)


def _check_fill_shape(fill: tuple, shape: tuple) -> None:
    ok = len(fill) <= len(shape) and all(
        f == 1 or f == s for f, s in zip(fill[::-1], shape[::-1]))  # a NaN size never matches: execute first
    if not ok:
        raise ValueError(f"could not broadcast input array from shape {tuple(fill)} into shape {shape}")


def ones(shape: Any, dtype: Any = float, chunk_size: Any = None, order: str = "C", *, device: Any = None,
         gpu: Any = None) -> Tensor:
    """A tensor of ones (on the GPU with ``gpu=True`` or ``device="gpu"``).

    >>> import mars.tensor as mt
    >>> (mt.ones((5, 5), chunk_size=3) * 4).execute().fetch()[0, 0]
    np.float64(4.0)
    """
    return full(shape, 1, dtype=np.dtype(float if dtype is None else dtype), chunk_size=chunk_size, order=order,
                device=device, gpu=gpu)


def zeros(shape: Any, dtype: Any = float, chunk_size: Any = None, order: str = "C", *, device: Any = None,
          gpu: Any = None) -> Tensor:
    return full(shape, 0, dtype=np.dtype(float if dtype is None else dtype), chunk_size=chunk_size, order=order,
                device=device, gpu=gpu)


def empty(shape: Any, dtype: Any = float, chunk_size: Any = None, order: str = "C", *, device: Any = None,
          gpu: Any = None) -> Tensor:
    return full(shape, 0, dtype=np.dtype(float if dtype is None else dtype), chunk_size=chunk_size, order=order,
                device=device, gpu=gpu)


def _like(a: Any, dtype: Any, shape: Any) -> tuple[tuple, np.dtype, Any]:
    t = a if is_tensor(a) else np.asarray(a)
    shape = check_shape(shape) if shape is not None else tuple(t.shape)
    chunk_size = a.nsplits if is_tensor(a) and a.nsplits is not None and tuple(t.shape) == shape else None
    return shape, np.dtype(dtype) if dtype is not None else t.dtype, chunk_size


def _like_order(a: Any, order: str, shape: tuple) -> str:
    """numpy's ``order='K'``/``'A'`` of the ``*_like`` functions: F when ``a`` is F-ordered."""
    if order in ("C", "F"):
        return order
    if order not in ("K", "A"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    like = tensor_data(a) if is_tensor(a) else np.asarray(a)
    f_ordered = like.order == "F" if is_tensor(a) else like.flags.f_contiguous
    same_ndim = len(shape) == like.ndim
    return "F" if f_ordered and same_ndim and len(shape) > 1 else "C"


def full_like(a: Any, fill_value: Any, dtype: Any = None, chunk_size: Any = None, shape: Any = None, *,
              order: str = "K", device: Any = None, gpu: Any = None) -> Tensor:
    """A tensor like ``a`` (shape, dtype, chunks, order, device) filled with ``fill_value``.

    >>> import mars.tensor as mt
    >>> mt.full_like(mt.arange(3), 7).execute().fetch()
    array([7, 7, 7])
    """
    shape, dtype, like_chunks = _like(a, dtype, shape)
    gpu = placement(device, gpu)
    if gpu is None and is_tensor(a):
        gpu = a.op.gpu
    return full(shape, fill_value, dtype=dtype, chunk_size=chunk_size or like_chunks,
                order=_like_order(a, order, shape), gpu=gpu)


def ones_like(a: Any, dtype: Any = None, chunk_size: Any = None, shape: Any = None, *, order: str = "K",
              device: Any = None, gpu: Any = None) -> Tensor:
    return full_like(a, 1, dtype=dtype, chunk_size=chunk_size, shape=shape, order=order, device=device, gpu=gpu)


def zeros_like(a: Any, dtype: Any = None, chunk_size: Any = None, shape: Any = None, *, order: str = "K",
               device: Any = None, gpu: Any = None) -> Tensor:
    return full_like(a, 0, dtype=dtype, chunk_size=chunk_size, shape=shape, order=order, device=device, gpu=gpu)


def empty_like(a: Any, dtype: Any = None, chunk_size: Any = None, shape: Any = None, *, order: str = "K",
               device: Any = None, gpu: Any = None) -> Tensor:
    return full_like(a, 0, dtype=dtype, chunk_size=chunk_size, shape=shape, order=order, device=device, gpu=gpu)


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
