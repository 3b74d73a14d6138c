"""numpy's dtype and shape queries, answering for mars tensors from their metadata.

A tensor is read by its dtype, shape or ndim (nothing runs); anything else
goes to numpy as it is. Sizes known only after running are NaN.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from .core import is_tensor, tensor_data

__all__ = [
    "isscalar", "ndim", "shape", "size", "result_type", "can_cast", "finfo", "iinfo", "isdtype",
    "promote_types", "min_scalar_type", "issubdtype", "common_type", "iscomplexobj", "isrealobj",
]


def _dtype_of(x: Any) -> Any:
    """A tensor's dtype, anything else as it is."""
    return tensor_data(x).dtype if is_tensor(x) else x


def isscalar(element: Any) -> bool:
    """Whether ``element`` is a scalar, as ``np.isscalar`` (a tensor never is, 0-d included).

    >>> import mars.tensor as mt
    >>> mt.isscalar(3.0), mt.isscalar(mt.tensor(3.0))
    (True, False)
    """
    return False if is_tensor(element) else bool(np.isscalar(element))


def iscomplexobj(x: Any) -> bool:
    """Whether ``x`` has a complex dtype (whatever its values), as ``np.iscomplexobj``.

    >>> import mars.tensor as mt
    >>> mt.iscomplexobj(mt.ones(2, dtype=complex)), mt.iscomplexobj(mt.ones(2))
    (True, False)
    """
    return bool(np.iscomplexobj(np.empty(0, tensor_data(x).dtype))) if is_tensor(x) else bool(np.iscomplexobj(x))


def isrealobj(x: Any) -> bool:
    """Whether ``x`` has a dtype that is not complex, as ``np.isrealobj``.

    >>> import mars.tensor as mt
    >>> mt.isrealobj(mt.ones(2))
    True
    """
    return not iscomplexobj(x)


def ndim(a: Any) -> int:
    """The number of dimensions, as ``np.ndim``.

    >>> import mars.tensor as mt
    >>> mt.ndim(mt.ones((2, 3)))
    2
    """
    return tensor_data(a).ndim if is_tensor(a) else np.ndim(a)


def shape(a: Any) -> tuple:
    """The shape (NaN where a size is known only after running), as ``np.shape``.

    >>> import mars.tensor as mt
    >>> mt.shape(mt.ones((2, 3)))
    (2, 3)
    """
    return tuple(tensor_data(a).shape) if is_tensor(a) else np.shape(a)


def size(a: Any, axis: Any = None) -> Any:
    """The number of elements (along ``axis``), as ``np.size``; NaN when not known before running.

    >>> import mars.tensor as mt
    >>> mt.size(mt.ones((2, 3))), mt.size(mt.ones((2, 3)), 1)
    (6, 3)
    """
    if not is_tensor(a):
        return np.size(a, axis) if axis is not None else np.size(a)
    dims = tensor_data(a).shape
    picked = dims if axis is None else [dims[d] for d in normalize_axis_tuple(axis, len(dims))]
    return math.prod(picked)


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """numpy's promotion of the arguments (a tensor counts as its dtype), as ``np.result_type``.

    >>> import mars.tensor as mt
    >>> mt.result_type(mt.ones(2, dtype="int8"), 1.0)
    dtype('float64')
    """
    return np.result_type(*(_dtype_of(x) for x in arrays_and_dtypes))


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    """Whether ``from_`` (a tensor: its dtype) casts to ``to`` under ``casting``, as ``np.can_cast``.

    >>> import mars.tensor as mt
    >>> mt.can_cast(mt.ones(2, dtype="int32"), "int64")
    True
    """
    return bool(np.can_cast(_dtype_of(from_), to, casting=casting))


def finfo(dtype: Any) -> np.finfo:
    """Machine limits of a float type (a tensor: its dtype), as ``np.finfo``.

    >>> import mars.tensor as mt
    >>> mt.finfo(mt.ones(2, dtype="float32")).bits
    32
    """
    return np.finfo(_dtype_of(dtype))


def iinfo(int_type: Any) -> np.iinfo:
    """Machine limits of an integer type (a tensor: its dtype), as ``np.iinfo``.

    >>> import mars.tensor as mt
    >>> int(mt.iinfo(mt.ones(2, dtype="int8")).max)
    127
    """
    return np.iinfo(_dtype_of(int_type))


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether ``dtype`` is of ``kind`` (a name such as ``'integral'``, a dtype, or a tuple), as
    ``np.isdtype``; like numpy it takes dtypes, not arrays or tensors.

    >>> import mars.tensor as mt
    >>> mt.isdtype(mt.float32, "real floating")
    True
    """
    if is_tensor(dtype):
        raise TypeError(f"dtype argument must be a NumPy dtype, but it is a {type(dtype)}.")
    return bool(np.isdtype(dtype, kind))


def promote_types(type1: Any, type2: Any) -> np.dtype:
    """The smallest dtype both cast to safely (tensors: their dtypes), as ``np.promote_types``.

    >>> import mars.tensor as mt
    >>> mt.promote_types("int8", "uint8")
    dtype('int16')
    """
    return np.promote_types(_dtype_of(type1), _dtype_of(type2))


def min_scalar_type(a: Any) -> np.dtype:
    """The smallest dtype that holds ``a``, as ``np.min_scalar_type``: a tensor of one or more
    dimensions gives its dtype; a 0-d tensor's value is needed, so it is executed.

    >>> import mars.tensor as mt
    >>> mt.min_scalar_type(10), mt.min_scalar_type(mt.ones(3, dtype="int64"))
    (dtype('uint8'), dtype('int64'))
    """
    if is_tensor(a):
        data = tensor_data(a)
        return data.dtype if data.ndim else np.min_scalar_type(np.asarray(a))
    return np.min_scalar_type(a)


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """Whether ``arg1`` (a tensor: its dtype) is lower than or equal to ``arg2`` in the type
    hierarchy, as ``np.issubdtype``.

    >>> import numpy as np, mars.tensor as mt
    >>> mt.issubdtype(mt.ones(2, dtype="float32"), np.floating)
    True
    """
    return bool(np.issubdtype(_dtype_of(arg1), _dtype_of(arg2)))


def common_type(*arrays: Any) -> type:
    """A float or complex scalar type common to the inputs (integers count as float64), as
    ``np.common_type``.

    >>> import mars.tensor as mt
    >>> mt.common_type(mt.ones(2, dtype="float32"), mt.ones(2, dtype="int8"))
    <class 'numpy.float64'>
    """
    probes = [np.empty(0, dtype=tensor_data(a).dtype) if is_tensor(a) else a for a in arrays]
    return np.common_type(*probes)
