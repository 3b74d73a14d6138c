"""Tensor methods and operators, bound to the functions of ``mars.tensor``.

One table says which method calls which function; ``install`` binds them.
Methods whose call shape differs from the function (``t.reshape(2, 3)``,
``t.transpose(1, 0)``) get a small adapter here.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Callable

import numpy as np

from .core import Tensor
from .indexing.setitem import rebind

# method name -> function name in mars.tensor (same name when a plain string list entry)
_SAME = [
    "sum", "prod", "mean", "var", "std", "min", "max", "argmin", "argmax", "any", "all",
    "cumsum", "cumprod", "dot", "ravel", "squeeze", "swapaxes", "astype", "rechunk", "round",
    "clip", "nonzero", "repeat", "flatten", "conj", "conjugate", "trace", "ptp", "argsort",
]

_BINARY = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
    "floordiv": "floor_divide", "mod": "mod", "pow": "power", "matmul": "matmul",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "left_shift", "rshift": "right_shift", "divmod": "divmod",
}
_COMPARE = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal"}
_UNARY = {"neg": "negative", "pos": "positive", "abs": "absolute", "invert": "invert"}


def _binary(func: Callable) -> tuple[Callable, Callable, Callable]:
    def forward(self: Tensor, other: Any) -> Any:
        if _defer(other):
            return NotImplemented
        return func(self, other)

    def reverse(self: Tensor, other: Any) -> Any:
        if _defer(other):
            return NotImplemented
        return func(other, self)

    def inplace(self: Tensor, other: Any) -> Tensor:
        result = func(self, other)
        if tuple(result.shape) != tuple(self.shape):
            raise ValueError(
                f"non-broadcastable output operand with shape {tuple(self.shape)} "
                f"doesn't match the broadcast shape {tuple(result.shape)}"
            )
        if result.dtype != self.dtype:
            if not np.can_cast(result.dtype, self.dtype, casting="same_kind"):
                raise TypeError(
                    f"Cannot cast ufunc '{func.__name__}' output from dtype('{result.dtype}') "
                    f"to dtype('{self.dtype}') with casting rule 'same_kind'"
                )
            result = result.astype(self.dtype)
        rebind(self, result.data)  # through a view, the write reaches its base
        return self

    return forward, reverse, inplace


_OPERATOR_SHORTCUTS = {2: "square", 0.5: "sqrt", -1: "reciprocal", 1: "positive"}


def _operator_power(power: Callable, ns: ModuleType) -> Callable:
    """``t ** e`` as numpy's operator computes it: for some scalar exponents numpy's
    ``**`` calls square/sqrt/reciprocal (dtypes can differ from ``np.power``, and by
    numpy version), so ask the installed numpy which it does."""

    def pow_(base: Any, exponent: Any) -> Any:
        scalar = isinstance(exponent, (int, float, np.integer, np.floating)) and not isinstance(
            exponent, (bool, np.bool_))
        target = _OPERATOR_SHORTCUTS.get(exponent) if scalar else None  # type: ignore[call-overload]
        if target is not None and isinstance(base, Tensor):
            probe = np.ones(1, dtype=base.dtype)
            with np.errstate(all="ignore"):
                if (probe ** exponent).dtype == getattr(np, target)(probe).dtype != np.power(probe, exponent).dtype \
                        or (target == "square" and (probe ** exponent).dtype == np.square(probe).dtype):
                    return getattr(ns, target)(base)
        return power(base, exponent)

    pow_.__name__ = "power"
    return pow_


def _defer(other: Any) -> bool:
    """Leave the operation to objects that handle tensors themselves (e.g. DataFrames)."""
    return getattr(other, "__mars_defer_binary__", False)


def install(namespace: ModuleType) -> None:
    """Bind the methods to ``Tensor`` from the functions present in ``namespace``."""
    get = lambda name: getattr(namespace, name, None)  # noqa: E731
    for name in _SAME:
        if get(name) is not None:
            setattr(Tensor, name, get(name))
    for short, fname in _BINARY.items():
        func = get(fname)
        if func is None:
            continue
        forward, reverse, inplace = _binary(func)
        if short == "pow" and get("square") is not None:
            forward, _, inplace = _binary(_operator_power(func, namespace))
        setattr(Tensor, f"__{short}__", forward)
        setattr(Tensor, f"__r{short}__", reverse)
        if short != "divmod":
            setattr(Tensor, f"__i{short}__", inplace)
    for short, fname in _COMPARE.items():
        func = get(fname)
        if func is not None:
            setattr(Tensor, f"__{short}__", _binary(func)[0])
    for short, fname in _UNARY.items():
        if get(fname) is not None:
            setattr(Tensor, f"__{short}__", get(fname))
    _install_adapters(namespace)


def _install_adapters(ns: ModuleType) -> None:
    if getattr(ns, "reshape", None) is not None:
        def reshape(self: Tensor, *shape: Any, order: str = "C") -> Tensor:
            return ns.reshape(self, shape[0] if len(shape) == 1 else shape, order=order)

        Tensor.reshape = reshape  # type: ignore[attr-defined]
    if getattr(ns, "transpose", None) is not None:
        def transpose(self: Tensor, *axes: Any) -> Tensor:
            return ns.transpose(self, axes if axes else None)

        Tensor.transpose = transpose  # type: ignore[attr-defined]
        Tensor.T = property(lambda self: ns.transpose(self))  # type: ignore[attr-defined]
    if getattr(ns, "sort", None) is not None:
        def sort(self: Tensor, axis: Any = -1, kind: Any = None, order: Any = None) -> None:
            """Sort in place, as ``ndarray.sort``: the tensor now holds the sorted data."""
            rebind(self, ns.sort(self, axis=axis, kind=kind, order=order).data)

        Tensor.sort = sort  # type: ignore[attr-defined]
    if getattr(ns, "isclose", None) is not None:
        Tensor.isclose = ns.isclose  # type: ignore[attr-defined]
    if getattr(ns, "tensordot", None) is not None:
        Tensor.tensordot = ns.tensordot  # type: ignore[attr-defined]
    if getattr(ns, "real", None) is not None:  # keeps a setter installed before (``t.real = v``)
        for part in ("real", "imag"):
            setter = getattr(Tensor.__dict__.get(part), "fset", None)
            setattr(Tensor, part, property(_method(getattr(ns, part)), setter))


def _method(func: Callable) -> Callable:
    return lambda self: func(self)


def required_methods() -> list[str]:
    """Methods every tensor must have once the package is complete (checked by a test)."""
    names = list(_SAME) + ["reshape", "transpose", "T", "__getitem__", "__setitem__", "__array_ufunc__",
                           "__array_function__"]
    names += [f"__{s}__" for s in _BINARY] + [f"__r{s}__" for s in _BINARY]
    names += [f"__{s}__" for s in _COMPARE] + [f"__{s}__" for s in _UNARY]
    return names
