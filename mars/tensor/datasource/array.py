"""``tensor``, ``array``, ``asarray``: tensors from array-likes or from other tensors."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import Tensor, is_tensor
from ..rechunk import rechunk
from ..arithmetic.core import astype
from .core import from_numpy

__all__ = ["tensor", "array", "asarray"]


def tensor(data: Any = None, dtype: Any = None, chunk_size: Any = None, order: str = "K", copy: bool = True) -> Tensor:
    """A tensor from array-like data (numpy array, list, scalar) or from another tensor.

    >>> import mars.tensor as mt
    >>> mt.tensor([[1, 2], [3, 4]], chunk_size=1).sum().execute().fetch()
    np.int64(10)
    """
    if is_tensor(data):
        t = data if isinstance(data, Tensor) else Tensor(data)
        if dtype is not None and np.dtype(dtype) != t.dtype:
            t = astype(t, dtype)
        return rechunk(t, chunk_size) if chunk_size is not None else t
    if hasattr(data, "__mars_tensor__"):
        return data.__mars_tensor__(dtype=dtype, chunk_size=chunk_size)
    array = np.array(data, dtype=dtype, order=order, copy=copy)
    if array.dtype.hasobject and not isinstance(data, np.ndarray):
        raise TypeError(f"cannot make a tensor of Python objects from {type(data).__name__}; pass numeric data")
    return from_numpy(array, chunk_size)


def array(x: Any, dtype: Any = None, copy: bool = True, order: str = "K", ndmin: int | None = None, chunk_size: Any = None) -> Tensor:
    if ndmin is not None and not is_tensor(x):
        x = np.array(x, dtype=dtype, copy=copy, order=order, ndmin=ndmin)
    return tensor(x, dtype=dtype, chunk_size=chunk_size, order=order, copy=copy)


def asarray(x: Any, dtype: Any = None, order: str | None = None, chunk_size: Any = None) -> Tensor:
    return tensor(x, dtype=dtype, chunk_size=chunk_size, order=order or "K", copy=False)


