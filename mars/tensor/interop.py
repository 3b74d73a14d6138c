"""numpy protocols: ``np.sin(t)`` and ``np.sum(t)`` on a mars tensor stay lazy.

``__array_ufunc__`` maps a ufunc call to the ``mars.tensor`` function of the
same name (``np.add.reduce`` and friends to the matching reduction);
``__array_function__`` maps ``np.<name>`` / ``np.linalg.<name>`` the same way.
A numpy function mars does not implement raises numpy's usual TypeError.
``np.add.at(t, index, values)`` rewrites ``t`` as an assignment does; ``outer``
and ``reduceat`` are built from the ufunc and the reductions.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from .core import Tensor
from .datasource.core import astensor
from .indexing.setitem import ufunc_at

_REDUCERS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
             "logical_and": "all", "logical_or": "any"}
_ACCUMULATORS = {"add": "cumsum", "multiply": "cumprod"}


def install(ns: ModuleType) -> None:
    def __array_ufunc__(self: Tensor, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if method == "__call__":
            func = getattr(ns, ufunc.__name__, None)
        elif method == "reduce":
            func = getattr(ns, _REDUCERS.get(ufunc.__name__, ""), None)
            kwargs.setdefault("axis", 0)
        elif method == "accumulate":
            func = getattr(ns, _ACCUMULATORS.get(ufunc.__name__, ""), None)
            kwargs.setdefault("axis", 0)
        elif method == "at":
            return ufunc_at(inputs[0], ufunc, *inputs[1:])
        elif method == "outer":
            return _outer(ns, ufunc, *inputs, **kwargs)
        elif method == "reduceat" and ufunc.__name__ in _REDUCERS:
            return _reduceat(ns, ufunc, *inputs, **kwargs)
        else:
            func = None
        if func is None:
            return NotImplemented
        return func(*inputs, **kwargs)

    def __array_function__(self: Tensor, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        module = getattr(func, "__module__", "") or ""
        target: Any = ns
        if module.startswith("numpy.linalg"):
            target = ns.linalg
        elif module.startswith("numpy.random"):
            target = ns.random
        elif module.startswith("numpy.fft"):
            target = ns.fft
        impl = getattr(target, func.__name__, None)
        if impl is None or not callable(impl):
            return NotImplemented
        return impl(*args, **kwargs)

    Tensor.__array_ufunc__ = __array_ufunc__  # type: ignore[attr-defined]
    Tensor.__array_function__ = __array_function__  # type: ignore[attr-defined]


def _outer(ns: ModuleType, ufunc: Any, a: Any, b: Any, **kwargs: Any) -> Tensor:
    """``ufunc.outer(a, b)``: ``ufunc(a[..., None, ...], b)`` with one new axis per axis of ``b``."""
    a, b = astensor(a), astensor(b)
    if b.ndim:
        a = ns.expand_dims(a, tuple(range(a.ndim, a.ndim + b.ndim)))
    return getattr(ns, ufunc.__name__)(a, b, **kwargs)


def _reduceat(ns: ModuleType, ufunc: Any, a: Any, indices: Any, axis: int = 0, dtype: Any = None,
              out: Any = None) -> Tensor:
    """``ufunc.reduceat``: the reduction of each ``a[indices[i]:indices[i + 1]]`` along ``axis``
    (``a[indices[i]]`` where the next index is not larger)."""
    if out is not None:
        raise NotImplementedError(f"{ufunc.__name__}.reduceat(out=...) on tensors: assign the result instead")
    a = astensor(a)
    axis = np.lib.array_utils.normalize_axis_index(axis, a.ndim)
    n = a.shape[axis]
    if isinstance(n, float):
        raise ValueError(f"{ufunc.__name__}.reduceat needs the length of axis {axis}; call .execute() first")
    starts = [int(i) for i in np.asarray(indices).ravel()]
    for i in starts:
        if not 0 <= i < n:
            raise IndexError(f"index {i} out-of-bounds in {ufunc.__name__}.reduceat [0, {n})")
    reduce = getattr(ns, _REDUCERS[ufunc.__name__])
    lead = (slice(None),) * axis
    pieces = []
    for start, end in zip(starts, starts[1:] + [n]):
        if start < end:
            pieces.append(reduce(a[lead + (slice(start, end),)], axis=axis, keepdims=True))
        else:
            pieces.append(a[lead + (slice(start, start + 1),)])
    want = ufunc.reduceat(np.zeros(1, dtype=a.dtype), [0], dtype=dtype).dtype
    return ns.concatenate(pieces, axis=axis).astype(want, copy=False)
