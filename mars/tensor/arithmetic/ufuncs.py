"""Every common numpy ufunc as a lazy function: ``mt.sin``, ``mt.add``, ...

Each function builds a :class:`~mars.tensor.arithmetic.core.TensorUfunc`
naming the numpy function, so dtypes, broadcasting and errors are numpy's.
"""

from __future__ import annotations

from typing import Any, Callable

from ..core import Tensor
from .core import apply_ufunc

_UNARY = [
    "negative", "positive", "absolute", "fabs", "sign", "rint", "floor", "ceil", "trunc",
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt", "square", "reciprocal",
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
    "arctanh", "deg2rad", "rad2deg", "degrees", "radians", "isfinite", "isinf", "isnan", "signbit",
    "logical_not", "invert", "conjugate", "spacing", "isnat",
]
_BINARY = [
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "power", "float_power",
    "remainder", "mod", "fmod", "maximum", "minimum", "fmax", "fmin", "arctan2", "hypot",
    "logaddexp", "logaddexp2", "copysign", "nextafter", "ldexp", "heaviside", "gcd", "lcm",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
    "left_shift", "right_shift",
]


def _make(name: str, nin: int) -> Callable[..., Tensor]:
    def ufunc(*args: Any, out: Any = None, where: Any = True, dtype: Any = None, **kwargs: Any) -> Tensor:
        if len(args) != nin:
            raise TypeError(f"{name}() takes {nin} positional argument{'s' if nin > 1 else ''} but {len(args)} were given")
        return apply_ufunc(name, *args, out=out, where=where, dtype=dtype, **kwargs)

    ufunc.__name__ = ufunc.__qualname__ = name
    ufunc.__doc__ = f"Lazy ``numpy.{name}`` over tensors (numpy's broadcasting, dtypes and errors)."
    return ufunc


for _name in _UNARY:
    globals()[_name] = _make(_name, 1)
for _name in _BINARY:
    globals()[_name] = _make(_name, 2)

abs = globals()["absolute"]  # noqa: A001 - numpy's alias
conj = globals()["conjugate"]
bitwise_not = globals()["invert"]
bitwise_invert = globals()["invert"]
pow = globals()["power"]  # noqa: A001 - numpy 2's alias
acos, asin, atan = globals()["arccos"], globals()["arcsin"], globals()["arctan"]
acosh, asinh, atanh = globals()["arccosh"], globals()["arcsinh"], globals()["arctanh"]
atan2 = globals()["arctan2"]


def divmod(x1: Any, x2: Any) -> tuple[Tensor, Tensor]:  # noqa: A001 - numpy's name
    """``(x1 // x2, x1 % x2)``, as ``np.divmod``."""
    return globals()["floor_divide"](x1, x2), globals()["remainder"](x1, x2)


__all__ = _UNARY + _BINARY + [
    "abs", "conj", "bitwise_not", "bitwise_invert", "pow", "acos", "asin", "atan", "acosh", "asinh",
    "atanh", "atan2", "divmod",
]
