"""The rest of numpy's array functions: copies in a memory order (``copy``, ``ascontiguousarray``,
``asfortranarray``, ``require``, ``isfortran``), ``asarray_chkfinite``, ``iterable``,
``fromfunction``, ``array_equiv``, ``sort_complex``, ``unwrap``, and the gufuncs ``matvec`` /
``vecmat``.

A memory order is chunk metadata: each chunk is laid out in it and the
fetched result is allocated in it, so ``copy(t, order="F")`` is one
elementwise op. ``asarray_chkfinite`` checks each chunk as it is computed (the
error comes from ``execute()``); ``unwrap`` is numpy's formula built from
``diff`` and ``cumsum``, so it runs chunked along the unwrapped axis too.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..arithmetic.core import TensorElementwise, apply_ufunc, broadcast_shapes, where_
from ..core import Tensor, is_tensor, tensor_data
from ..datasource.array import tensor
from ..datasource.core import astensor
from ..datasource.creation import arange
from ..indexing.setitem import is_view
from ..linalg.products import matmul
from ..rechunk import rechunk
from ..reduction.basic import all as all_
from ..reduction.cumulative import cumsum
from .join import concatenate
from .numeric import diff
from .shape import broadcast_to, expand_dims, reshape
from .sort import sort

__all__ = [
    "array_equiv",
    "asarray_chkfinite",
    "ascontiguousarray",
    "asfortranarray",
    "copy",
    "fromfunction",
    "isfortran",
    "iterable",
    "matvec",
    "require",
    "sort_complex",
    "unwrap",
    "vecmat",
]


# ----------------------------------------------------------------- memory order
class TensorLayout(TensorElementwise):
    """Each chunk laid out in ``order`` (``"C"`` or ``"F"``)."""

    params = ("order",)

    def execute(self, x: Any) -> Any:
        x = x if hasattr(x, "flags") else np.asarray(x)
        laid_out = x.flags.f_contiguous if self.order == "F" else x.flags.c_contiguous
        return x if laid_out else x.copy(order=self.order)  # ``copy``, not np.asarray: CuPy chunks stay on the GPU


def _strictly(t: Tensor, order: str) -> bool:
    """Whether ``t`` is in ``order`` and not in the other (numpy: a line is both)."""
    return t.order == order and sum(1 for n in t.shape if n != 1) > 1


def _laid_out(t: Tensor, order: str) -> Tensor:
    """``t`` in ``order``: C, F, A (F if ``t`` is F and not C, else C) or K (as it is)."""
    if order in ("K", "A"):
        order = "F" if _strictly(t, "F") else "C"
    if order not in ("C", "F"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    if t.order == order:
        return t
    return TensorLayout(order=order).new_tensor([tensor_data(t)], t.shape, t.dtype, order=order)


def _as_tensor(a: Any, dtype: Any = None, order: str | None = None, copy: bool | None = None) -> Tensor:
    """``a`` as a tensor in ``dtype`` and memory ``order`` (numpy's letters, None for K)."""
    if not is_tensor(a):
        return tensor(np.array(a, dtype=dtype, order=order or "K", copy=copy), copy=False)
    t = tensor(a, dtype=dtype, copy=copy)
    return _laid_out(t, order or "K")


def copy(a: Any, order: str = "K", subok: bool = False) -> Tensor:
    """A copy of ``a`` in memory ``order`` (``"K"`` keeps ``a``'s), as ``np.copy``: never a view,
    so writes into it do not reach ``a``'s base.

    >>> import mars.tensor as mt
    >>> b = mt.copy(mt.ones((2, 3), chunk_size=2), order="F")
    >>> b.flags["F_CONTIGUOUS"], b.execute().fetch().flags["F_CONTIGUOUS"]
    (True, True)
    """
    return _as_tensor(a, order=order, copy=True)


def ascontiguousarray(a: Any, dtype: Any = None, *, like: Any = None) -> Tensor:
    """``a`` laid out in C order (at least 1-d), as ``np.ascontiguousarray``.

    >>> import mars.tensor as mt
    >>> mt.ascontiguousarray(mt.ones((2, 3), order="F")).flags["C_CONTIGUOUS"]
    True
    """
    t = _as_tensor(a, dtype=dtype, order="C")
    return reshape(t, (1,)) if t.ndim == 0 else t


def asfortranarray(a: Any, dtype: Any = None, *, like: Any = None) -> Tensor:
    """``a`` laid out in Fortran order (at least 1-d), as ``np.asfortranarray``.

    >>> import mars.tensor as mt
    >>> mt.asfortranarray(mt.ones((2, 3), chunk_size=2)).execute().fetch().flags["F_CONTIGUOUS"]
    True
    """
    t = _as_tensor(a, dtype=dtype, order="F")
    return reshape(t, (1,)) if t.ndim == 0 else t


class TensorCheckFinite(TensorElementwise):
    """A chunk passed on as it is, or ValueError if it holds an inf or a NaN."""

    def execute(self, x: np.ndarray) -> np.ndarray:
        if not np.isfinite(x).all():
            raise ValueError("array must not contain infs or NaNs")
        return x


def asarray_chkfinite(a: Any, dtype: Any = None, order: str | None = None) -> Tensor:
    """``a`` as a tensor, as ``np.asarray_chkfinite``: computing it raises ValueError if it holds
    an inf or a NaN (each chunk is checked as it is computed).

    >>> import mars.tensor as mt
    >>> try:
    ...     mt.asarray_chkfinite([1.0, float("nan")]).execute()
    ... except ValueError as e:
    ...     print(e)
    array must not contain infs or NaNs
    """
    t = _as_tensor(a, dtype=dtype, order=order)
    if t.dtype.kind not in "fc":
        return t
    return TensorCheckFinite().new_tensor([tensor_data(t)], t.shape, t.dtype, order=t.order)


_REQUIREMENTS = {"C": "C", "C_CONTIGUOUS": "C", "CONTIGUOUS": "C", "F": "F", "F_CONTIGUOUS": "F",
                 "FORTRAN": "F", "A": "A", "ALIGNED": "A", "W": "W", "WRITEABLE": "W", "O": "O",
                 "OWNDATA": "O", "E": "E", "ENSUREARRAY": "E"}


def require(a: Any, dtype: Any = None, requirements: Any = None, *, like: Any = None) -> Tensor:
    """``a`` as a tensor of ``dtype`` meeting ``requirements`` (``"C"``, ``"F"``, ``"O"`` owns its
    data: not a view; ``"A"``, ``"W"``, ``"E"`` always hold), as ``np.require``.

    >>> import mars.tensor as mt
    >>> mt.require(mt.ones((2, 3)), requirements=["F", "O"]).flags["F_CONTIGUOUS"]
    True
    """
    if not requirements:
        return _as_tensor(a, dtype=dtype)
    try:
        wanted = {_REQUIREMENTS[str(r).upper()] for r in requirements}
    except KeyError as e:
        raise KeyError(f"unknown requirement {e.args[0]!r}; expected one of {sorted(_REQUIREMENTS)}") from None
    if {"C", "F"} <= wanted:
        raise ValueError("Cannot specify both 'C' and 'F' order")
    order = "C" if "C" in wanted else "F" if "F" in wanted else None
    t = _as_tensor(a, dtype=dtype, order=order)
    if "O" in wanted and is_view(t):
        t = Tensor(t.data)  # the same values, no longer a view of its base
    return t


def isfortran(a: Any) -> bool:
    """Whether ``a`` is laid out in Fortran order and not in C order (a tensor's metadata), as
    ``np.isfortran``.

    >>> import mars.tensor as mt
    >>> mt.isfortran(mt.ones((2, 3), order="F")), mt.isfortran(mt.ones(3, order="F"))
    (True, False)
    """
    if not is_tensor(a):
        return bool(np.isfortran(a))
    t = a if isinstance(a, Tensor) else Tensor(a)
    return t.flags.f_contiguous and not t.flags.c_contiguous


def iterable(y: Any) -> bool:
    """Whether ``y`` can be iterated over (a tensor: when it has a dimension), as ``np.iterable``.

    >>> import mars.tensor as mt
    >>> mt.iterable(mt.ones(3)), mt.iterable(mt.tensor(1)), mt.iterable(2)
    (True, False, False)
    """
    if is_tensor(y):
        return len(y.shape) > 0
    return bool(np.iterable(y))


# ----------------------------------------------------------------- built from indices
def fromfunction(function: Callable, shape: Any, *, dtype: Any = float, like: Any = None,
                 chunk_size: Any = None, **kwargs: Any) -> Any:
    """``function(*index_grids, **kwargs)``, called once with one tensor of coordinates per axis
    (each of ``shape``, in ``dtype``), as ``np.fromfunction``; ``function`` works on tensors
    (mt functions, arithmetic) and what it returns is the result.

    >>> import mars.tensor as mt
    >>> mt.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=int, chunk_size=2).execute().fetch()
    array([[ 0,  1,  2],
           [10, 11, 12]])
    """
    dims = tuple(operator.index(n) for n in shape)
    grids = []
    for axis, n in enumerate(dims):
        line = arange(n, dtype=dtype, chunk_size=chunk_size)
        grid = broadcast_to(reshape(line, tuple(n if d == axis else 1 for d in range(len(dims)))), dims)
        grids.append(rechunk(grid, chunk_size) if chunk_size is not None else grid)
    return function(*grids, **kwargs)


# ----------------------------------------------------------------- comparisons and sorting
def array_equiv(a1: Any, a2: Any) -> Tensor:
    """Whether ``a1`` and ``a2`` broadcast together and are equal everywhere, as a 0-d boolean
    tensor (False at once when their shapes do not broadcast), as ``np.array_equiv``.

    >>> import mars.tensor as mt
    >>> bool(mt.array_equiv(mt.tensor([1, 2]), [[1, 2], [1, 2]]))
    True
    """
    t1, t2 = astensor(a1), astensor(a2)
    try:
        broadcast_shapes(t1.shape, t2.shape)
    except ValueError:
        return tensor(np.False_)
    return all_(apply_ufunc("equal", t1, t2))


def _complex_of(dtype: np.dtype) -> np.dtype:
    """The complex dtype numpy's ``sort_complex`` gives for ``dtype``."""
    if dtype.kind == "c":
        return dtype
    if dtype.char in "bBhH":
        return np.dtype(np.complex64)
    if dtype.char == "g":
        return np.dtype(np.clongdouble)
    return np.dtype(np.complex128)


def sort_complex(a: Any) -> Tensor:
    """``a`` sorted along its last axis by real part, then imaginary part, as complex numbers,
    as ``np.sort_complex``.

    >>> import mars.tensor as mt
    >>> mt.sort_complex(mt.tensor([5, 3, 6, 2, 1], chunk_size=2)).execute().fetch()
    array([1.+0.j, 2.+0.j, 3.+0.j, 5.+0.j, 6.+0.j])
    """
    t = astensor(a)
    return sort(t, axis=-1).astype(_complex_of(t.dtype), copy=False)


# ----------------------------------------------------------------- unwrap
def _along(axis: int, entry: Any) -> tuple:
    return (slice(None),) * axis + (entry,)


def unwrap(p: Any, discont: Any = None, axis: int = -1, *, period: float = 2 * math.pi) -> Tensor:
    """``p`` with jumps between neighbours along ``axis`` larger than ``max(discont, period/2)``
    taken back by multiples of ``period``, as ``np.unwrap`` (chunked along ``axis``: the
    corrections are a cumulative sum).

    >>> import mars.tensor as mt
    >>> mt.unwrap(mt.tensor([0, 1, 2, -1, 0], chunk_size=2), period=4).execute().fetch()
    array([0, 1, 2, 3, 4])
    """
    t = astensor(p)
    if t.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = normalize_axis_index(operator.index(axis), t.ndim)
    dd = diff(t, axis=axis)
    if discont is None:
        discont = period / 2
    dtype = np.result_type(dd.dtype, period)
    if np.issubdtype(dtype, np.integer):
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high, ambiguous = period / 2, True
    low = -high
    ddmod = apply_ufunc("mod", dd - low, period) + low
    if ambiguous:
        at_low = apply_ufunc("logical_and", apply_ufunc("equal", ddmod, low), apply_ufunc("greater", dd, 0))
        ddmod = where_(at_low, high, ddmod).astype(ddmod.dtype, copy=False)
    correction = ddmod - dd
    correction = where_(apply_ufunc("less", apply_ufunc("absolute", dd), discont), 0, correction)
    correction = correction.astype(ddmod.dtype, copy=False)
    rest = t[_along(axis, slice(1, None))] + cumsum(correction, axis=axis)
    first = t[_along(axis, slice(None, 1))]
    return concatenate([first.astype(dtype, copy=False), rest.astype(dtype, copy=False)], axis=axis)


# ----------------------------------------------------------------- matrix-vector gufuncs
def _probe(t: Tensor, core: int) -> np.ndarray:
    """A zero-memory stand-in for ``t``: its dtype and ndim, every axis 1 but the contracted one
    (axis ``core``), so numpy checks the call (and names any problem) at no cost."""
    shape = [1] * t.ndim
    if t.ndim and -t.ndim <= core < t.ndim:
        n = t.shape[core]
        shape[core] = 1 if isinstance(n, float) else int(n)
    return np.broadcast_to(np.zeros((), dtype=t.dtype), tuple(shape))


def matvec(x1: Any, x2: Any, /) -> Tensor:
    """The matrix-vector product over the last axes, broadcasting the others, as ``np.matvec``:
    ``(…, m, n), (…, n) -> (…, m)``.

    >>> import mars.tensor as mt
    >>> mt.matvec(mt.tensor([[1, 2], [3, 4]]), mt.tensor([1, 1])).execute().fetch()
    array([3, 7])
    """
    a, v = astensor(x1), astensor(x2)
    dtype = np.matvec(_probe(a, -1), _probe(v, -1)).dtype
    broadcast_shapes(a.shape[:-2], v.shape[:-1])
    return matmul(a, expand_dims(v, -1))[..., 0].astype(dtype, copy=False)


def vecmat(x1: Any, x2: Any, /) -> Tensor:
    """The vector-matrix product over the last axes (the vector conjugated), broadcasting the
    others, as ``np.vecmat``: ``(…, n), (…, n, m) -> (…, m)``.

    >>> import mars.tensor as mt
    >>> mt.vecmat(mt.tensor([1j, 1]), mt.tensor([[1, 2], [3, 4]])).execute().fetch()
    array([3.-1.j, 4.-2.j])
    """
    v, a = astensor(x1), astensor(x2)
    dtype = np.vecmat(_probe(v, -1), _probe(a, -2)).dtype
    broadcast_shapes(v.shape[:-1], a.shape[:-2])
    if v.dtype.kind == "c":
        v = apply_ufunc("conjugate", v)
    return matmul(expand_dims(v, -2), a)[..., 0, :].astype(dtype, copy=False)
