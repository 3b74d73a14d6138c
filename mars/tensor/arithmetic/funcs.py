"""Elementwise numpy functions that are not ufuncs: ``where``, ``clip``, ``isclose``, ``around``, ...

Each one is a :class:`~mars.tensor.arithmetic.core.TensorUfunc` naming the
numpy function, so numpy infers dtypes (on empty probes) and raises its errors
when the expression is built. ``allclose`` and ``array_equal`` reduce such a
tensor to a 0-d boolean tensor.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.entity import has_unknown
from ..core import Tensor, tensor_data
from ..datasource.core import astensor, full
from ..reduction.basic import all as all_
from .core import apply_ufunc, where_

__all__ = [
    "where", "clip", "isclose", "allclose", "array_equal", "around", "round", "round_", "nan_to_num",
    "real", "imag", "angle", "fix", "isreal", "iscomplex", "isposinf", "isneginf", "sinc",
]


def where(condition: Any, x: Any = None, y: Any = None) -> Tensor:
    """Elements of ``x`` where ``condition`` holds, else of ``y`` (numpy's broadcasting and dtypes).

    >>> import mars.tensor as mt
    >>> mt.where(mt.tensor([0, 1, 2, 3]) > 1, 10, 0).execute().fetch()
    array([ 0,  0, 10, 10])
    """
    if x is None and y is None:
        raise NotImplementedError(
            "where(condition) with one argument is nonzero(condition); call mt.nonzero(condition) instead"
        )
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    return where_(condition, x, y)


def clip(a: Any, a_min: Any = None, a_max: Any = None, out: Any = None, *,
         min: Any = None, max: Any = None, **kwargs: Any) -> Tensor:  # noqa: A002 - numpy's names
    """``a`` limited to ``[a_min, a_max]``; either bound may be None or a tensor.

    >>> import mars.tensor as mt
    >>> mt.clip(mt.tensor([-2, 0, 5]), 0, 3).execute().fetch()
    array([0, 0, 3])
    """
    if min is not None:
        if a_min is not None:
            raise ValueError("Passed more than one argument for the minimum: give a_min or min, not both")
        a_min = min
    if max is not None:
        if a_max is not None:
            raise ValueError("Passed more than one argument for the maximum: give a_max or max, not both")
        a_max = max
    return apply_ufunc("clip", a, a_min, a_max, out=out, **kwargs)


def isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Tensor:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (and finite), as ``np.isclose``.

    >>> import mars.tensor as mt
    >>> mt.isclose(mt.tensor([1.0, 2.0]), [1.0 + 1e-9, 2.1]).execute().fetch()
    array([ True, False])
    """
    return apply_ufunc("isclose", a, b, rtol, atol, equal_nan)


def allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Tensor:
    """Whether every element is close (``isclose``), as a 0-d boolean tensor.

    >>> import mars.tensor as mt
    >>> mt.allclose(mt.ones(3), [1.0, 1.0, 1.0 + 1e-9]).execute().fetch()
    np.True_
    """
    return all_(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def _cannot_hold_nan(dtype: np.dtype) -> bool:
    return dtype.kind in "biu"


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Tensor:
    """Whether ``a1`` and ``a2`` have the same shape and elements, as a 0-d boolean tensor.

    Shapes that differ give False at once. For sizes unknown until run, the
    known sizes are compared and the rest is assumed to match.

    >>> import mars.tensor as mt
    >>> mt.array_equal(mt.tensor([0, 1, 2]), [0, 1, 2]).execute().fetch()
    np.True_
    """
    t1, t2 = astensor(a1), astensor(a2)
    if not _same_shape(tensor_data(t1).shape, tensor_data(t2).shape):
        return full((), False, dtype=bool)
    equal = t1 == t2
    if equal_nan and not (_cannot_hold_nan(t1.dtype) and _cannot_hold_nan(t2.dtype)):
        both_nan = apply_ufunc("logical_and", apply_ufunc("isnan", t1), apply_ufunc("isnan", t2))
        equal = apply_ufunc("logical_or", equal, both_nan)
    return all_(equal)


def _same_shape(s1: tuple, s2: tuple) -> bool:
    if len(s1) != len(s2):
        return False
    if not (has_unknown(s1) or has_unknown(s2)):
        return tuple(s1) == tuple(s2)
    return all(x == y for x, y in zip(s1, s2) if not (has_unknown((x,)) or has_unknown((y,))))


def around(a: Any, decimals: int = 0, out: Any = None) -> Tensor:
    """``a`` rounded to ``decimals`` places (half to even), as ``np.round``.

    >>> import mars.tensor as mt
    >>> mt.around(mt.tensor([0.5, 1.5, 2.5, 1.234]), 1).execute().fetch()
    array([0.5, 1.5, 2.5, 1.2])
    """
    return apply_ufunc("round", a, decimals, out=out)


round = around  # noqa: A001 - numpy's name
round_ = around


def nan_to_num(x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None, neginf: Any = None) -> Tensor:
    """NaN → ``nan``, +inf → ``posinf``, -inf → ``neginf`` (dtype's max / min by default).

    ``copy=False`` on a tensor rebinds that tensor to the result, as numpy
    changes the array in place.

    >>> import mars.tensor as mt
    >>> mt.nan_to_num(mt.tensor([mt.nan, 1.0]), nan=-1).execute().fetch()
    array([-1.,  1.])
    """
    # chunk values may be shared with other consumers: never fill them in place
    result = apply_ufunc("nan_to_num", x, copy=True, nan=nan, posinf=posinf, neginf=neginf)
    if not copy and isinstance(x, Tensor):
        x.data = result.data
        return x
    return result


def real(val: Any) -> Tensor:
    """The real part (the tensor itself for real dtypes).

    >>> import mars.tensor as mt
    >>> mt.real(mt.tensor([1 + 2j, 3 - 1j])).execute().fetch()
    array([1., 3.])
    """
    t = astensor(val)
    if t.dtype.kind != "c":
        return Tensor(tensor_data(t))
    return apply_ufunc("real", t)


def imag(val: Any) -> Tensor:
    """The imaginary part (zeros of the same dtype for real dtypes).

    >>> import mars.tensor as mt
    >>> mt.imag(mt.tensor([1 + 2j, 3 - 1j])).execute().fetch()
    array([ 2., -1.])
    """
    return apply_ufunc("imag", val)


def angle(z: Any, deg: bool = False) -> Tensor:
    """The angle of complex numbers, in radians (degrees if ``deg``).

    >>> import mars.tensor as mt
    >>> mt.angle(mt.tensor([1j, -1]), deg=True).execute().fetch()
    array([ 90., 180.])
    """
    return apply_ufunc("angle", z, deg)


def fix(x: Any, out: Any = None) -> Tensor:
    """Round towards zero, as ``np.fix``.

    >>> import mars.tensor as mt
    >>> mt.fix(mt.tensor([-1.5, 1.5])).execute().fetch()
    array([-1.,  1.])
    """
    return apply_ufunc("trunc", x, out=out)  # np.fix is np.trunc (and deprecated in numpy 2.5)


def isreal(x: Any) -> Tensor:
    """Elementwise: is the imaginary part zero.

    >>> import mars.tensor as mt
    >>> mt.isreal(mt.tensor([1 + 1j, 2 + 0j])).execute().fetch()
    array([False,  True])
    """
    return apply_ufunc("isreal", x)


def iscomplex(x: Any) -> Tensor:
    """Elementwise: is the imaginary part non-zero.

    >>> import mars.tensor as mt
    >>> mt.iscomplex(mt.tensor([1 + 1j, 2 + 0j])).execute().fetch()
    array([ True, False])
    """
    return apply_ufunc("iscomplex", x)


def isposinf(x: Any, out: Any = None) -> Tensor:
    """Elementwise: is the element +inf.

    >>> import mars.tensor as mt
    >>> mt.isposinf(mt.tensor([mt.inf, -mt.inf, 1.0])).execute().fetch()
    array([ True, False, False])
    """
    return apply_ufunc("isposinf", x, out=out)


def isneginf(x: Any, out: Any = None) -> Tensor:
    """Elementwise: is the element -inf.

    >>> import mars.tensor as mt
    >>> mt.isneginf(mt.tensor([mt.inf, -mt.inf, 1.0])).execute().fetch()
    array([False,  True, False])
    """
    return apply_ufunc("isneginf", x, out=out)


def sinc(x: Any) -> Tensor:
    """The normalized sinc, ``sin(pi x) / (pi x)`` with ``sinc(0) == 1``.

    >>> import mars.tensor as mt
    >>> mt.sinc(mt.tensor([0.0, 0.5])).execute().fetch()
    array([1.        , 0.63661977])
    """
    return apply_ufunc("sinc", x)
