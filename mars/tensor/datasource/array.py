"""``tensor``, ``array``, ``asarray``: tensors from array-likes or from other tensors."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import Tensor, is_tensor
from ..rechunk import rechunk
from ..arithmetic.core import astype
from ..sparse.core import from_scipy, is_scipy_sparse, tosparse
from ...core.device import is_device_array, to_host
from .core import from_numpy, placement

__all__ = ["tensor", "array", "asarray"]


def tensor(data: Any = None, dtype: Any = None, chunk_size: Any = None, order: str = "K", copy: bool | None = True,
           *, device: Any = None, gpu: Any = None, sparse: bool = False) -> Tensor:
    """A tensor from array-like data (numpy array, list, scalar, buffer, an object with
    ``__dlpack__``) or from another tensor.

    ``copy`` as numpy 2 and the Array API mean it: True copies the data, None
    copies only if needed, False never copies (ValueError where it must). A
    tensor given with ``copy=False``/None is returned as the same object, as
    numpy returns the same array (so writes into either are seen by both).
    ``gpu=True`` (or ``device="gpu"``) puts it on the GPU; a CuPy array makes a GPU tensor.
    A scipy.sparse matrix (or ``sparse=True`` with 2-D data) makes a sparse tensor: its
    chunks are CSR matrices and ``fetch()`` gives one (see ``mars.tensor.sparse``).

    >>> import mars.tensor as mt
    >>> mt.tensor([[1, 2], [3, 4]], chunk_size=1).sum().execute().fetch()
    np.int64(10)
    """
    gpu = placement(device, gpu)
    if is_scipy_sparse(data) or sparse:
        if gpu:
            raise NotImplementedError("sparse tensors live on the CPU; pass gpu=None (or densify the data)")
        if is_scipy_sparse(data):
            return from_scipy(data, dtype=dtype, chunk_size=chunk_size)
        return tosparse(tensor(data, dtype=dtype, chunk_size=chunk_size, order=order, copy=copy))
    if is_device_array(data):
        data, gpu = to_host(data), True if gpu is None else gpu
    if is_tensor(data):
        t = data if isinstance(data, Tensor) else Tensor(data)
        if gpu is not None and bool(t.op.gpu) != gpu:
            t = t.to_gpu() if gpu else t.to_cpu()
        if dtype is not None and np.dtype(dtype) != t.dtype:
            if copy is False:
                raise ValueError(f"Unable to avoid copy while creating an array as requested: "
                                 f"dtype {t.dtype} differs from {np.dtype(dtype)}")
            t = astype(t, dtype)
        elif copy:
            t = Tensor(t.data)  # a new tensor: writes into it (or into ``data``) are not shared
        return rechunk(t, chunk_size) if chunk_size is not None else t
    if hasattr(data, "__mars_tensor__"):
        t = data.__mars_tensor__(dtype=dtype, chunk_size=chunk_size)
        return t if gpu is None else tensor(t, copy=False, gpu=gpu)
    array = _numpy_value(data, dtype, order, copy)
    if array.dtype.hasobject and not isinstance(data, np.ndarray):
        raise TypeError(f"cannot make a tensor of Python objects from {type(data).__name__}; pass numeric data")
    return from_numpy(array, chunk_size, gpu=gpu)


def _numpy_value(data: Any, dtype: Any, order: str | None, copy: bool | None) -> np.ndarray:
    """``data`` as a numpy array with numpy 2's ``copy`` semantics (DLPack producers included)."""
    if hasattr(data, "__dlpack__") and not isinstance(data, np.ndarray) and not hasattr(data, "__array__"):
        array = np.from_dlpack(data, copy=copy)
        if dtype is None or np.dtype(dtype) == array.dtype:
            return array
        if copy is False:
            raise ValueError(f"Unable to avoid copy while creating an array as requested: "
                             f"dtype {array.dtype} differs from {np.dtype(dtype)}")
        data, copy = array, None
    if copy:
        return np.array(data, dtype=dtype, order=order, copy=True)
    return np.asarray(data, dtype=dtype, order=order, copy=copy)


def array(x: Any, dtype: Any = None, copy: bool | None = True, order: str = "K", ndmin: int | None = None,
          chunk_size: Any = None, *, device: Any = None, gpu: Any = None) -> Tensor:
    """A tensor from ``x``, as ``np.array`` (a copy unless ``copy`` says otherwise).

    >>> import mars.tensor as mt
    >>> mt.array([1, 2], ndmin=2).execute().fetch()
    array([[1, 2]])
    """
    if ndmin is not None and not is_tensor(x):
        x, copy = _numpy_value(np.array(x, copy=copy, ndmin=ndmin), dtype, order, copy), False
    return tensor(x, dtype=dtype, chunk_size=chunk_size, order=order, copy=copy, device=device, gpu=gpu)


def asarray(obj: Any, dtype: Any = None, order: str | None = None, chunk_size: Any = None, *,
            device: Any = None, copy: bool | None = None, gpu: Any = None) -> Tensor:
    """``obj`` as a tensor, copying only where needed (numpy's and the Array API's ``asarray``).

    Takes Python scalars, nested sequences, numpy arrays, buffers, objects
    with ``__dlpack__`` and tensors (returned as they are).

    >>> import mars.tensor as mt
    >>> mt.asarray([1, 2]).execute().fetch(), mt.asarray(0).execute().fetch()
    (array([1, 2]), np.int64(0))
    """
    return tensor(obj, dtype=dtype, chunk_size=chunk_size, order=order or "K", copy=copy, device=device, gpu=gpu)


