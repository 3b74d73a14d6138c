"""numpy protocols: ``np.sin(t)`` and ``np.sum(t)`` on a mars tensor stay lazy.

``__array_ufunc__`` maps a ufunc call to the ``mars.tensor`` function of the
same name (``np.add.reduce`` and friends to the matching reduction);
``__array_function__`` maps ``np.<name>`` / ``np.linalg.<name>`` the same way.
A numpy function mars does not implement raises numpy's usual TypeError.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from .core import Tensor

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
        impl = getattr(target, func.__name__, None)
        if impl is None or not callable(impl):
            return NotImplemented
        return impl(*args, **kwargs)

    Tensor.__array_ufunc__ = __array_ufunc__  # type: ignore[attr-defined]
    Tensor.__array_function__ = __array_function__  # type: ignore[attr-defined]
