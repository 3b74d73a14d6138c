"""Numerical routines: differences and gradients, trapezoid, kron, vander, cov and corrcoef,
the two-output ufuncs ``frexp`` / ``modf``, ``i0``, and ``apply_along_axis`` / ``apply_over_axes``.

Differences and gradients are shifted slices combined elementwise (numpy's
formulas, term by term, so values match); ``vander`` and ``apply_along_axis``
map chunks; ``cov`` is a centred product. ``convolve``, ``correlate`` and
``interp`` live in :mod:`.convolve`.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Generator
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from ...core.operator import Tiled
from ..arithmetic.core import apply_ufunc
from ..core import Tensor, TensorOperator, is_tensor
from ..datasource.core import astensor
from ..datasource.creation import diag
from ..linalg.products import dot
from ..reduction.basic import sum as sum_
from ..reduction.stats import average
from .convolve import convolve, correlate, interp
from .join import concatenate
from .reshape import known_sizes, rechunked
from .shape import broadcast_to, expand_dims, ravel, reshape
from .transpose import transpose

__all__ = [
    "diff", "ediff1d", "gradient", "trapezoid", "convolve", "correlate", "interp", "kron", "vander", "cov",
    "corrcoef", "frexp", "modf", "i0", "apply_along_axis", "apply_over_axes",
]

_NO_VALUE = object()


def _on(axis: int, entry: Any) -> tuple:
    return (slice(None),) * axis + (entry,)


# ----------------------------------------------------------------- differences
def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = _NO_VALUE, append: Any = _NO_VALUE) -> Tensor:
    """The ``n``-th discrete difference along ``axis`` (after joining ``prepend`` / ``append``),
    as ``np.diff``; booleans give ``not_equal``.

    >>> import mars.tensor as mt
    >>> mt.diff(mt.tensor([1, 4, 9, 16], chunk_size=3), 2).execute().fetch()
    array([2, 2])
    """
    n = operator.index(n)
    t = astensor(a)
    if n == 0:
        return Tensor(t.data)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    if t.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = normalize_axis_index(operator.index(axis), t.ndim)
    pieces = []
    for extra in (prepend, t, append):
        if extra is t:
            pieces.append(t)
        elif extra is not _NO_VALUE:
            e = astensor(extra)
            pieces.append(broadcast_to(e, t.shape[:axis] + (1,) + t.shape[axis + 1:]) if e.ndim == 0 else e)
    if len(pieces) > 1:
        t = concatenate(pieces, axis)
    func = "not_equal" if t.dtype == np.bool_ else "subtract"
    for _ in range(n):
        t = apply_ufunc(func, t[_on(axis, slice(1, None))], t[_on(axis, slice(None, -1))])
    return t


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Tensor:
    """Differences of consecutive elements of ``ary`` flattened, with ``to_begin`` / ``to_end``
    joined on, as ``np.ediff1d`` (in ``ary``'s dtype).

    >>> import mars.tensor as mt
    >>> mt.ediff1d(mt.tensor([1, 2, 4, 7]), to_begin=-99).execute().fetch()
    array([-99,   1,   2,   3])
    """
    t = ravel(astensor(ary))
    diffs = t[1:] - t[:-1]
    if to_begin is None and to_end is None:
        return diffs
    pieces = []
    for name, extra in (("to_begin", to_begin), (None, None), ("to_end", to_end)):
        if name is None:
            pieces.append(diffs.astype(t.dtype, copy=False))
        elif extra is not None:
            e = astensor(extra)
            if not np.can_cast(e.dtype if is_tensor(extra) else np.asarray(extra), t.dtype, casting="same_kind"):
                raise TypeError(f"dtype of `{name}` must be compatible with input `ary` under the `same_kind` rule.")
            pieces.append(ravel(e).astype(t.dtype, copy=False))
    return concatenate(pieces)


def _spacings(f: Tensor, varargs: tuple, axes: tuple) -> list:
    if not varargs:
        return [1.0] * len(axes)
    if len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        return [varargs[0]] * len(axes)
    if len(varargs) != len(axes):
        raise TypeError("invalid number of arguments")
    result = []
    for distances, axis in zip(varargs, axes):
        if np.ndim(distances) == 0:
            result.append(distances)
            continue
        coords = np.asarray(distances)
        if coords.ndim != 1:
            raise ValueError("distances must be either scalars or 1d")
        if len(coords) != f.shape[axis]:
            raise ValueError("when 1d, distances must match the length of the corresponding dimension")
        if coords.dtype.kind in "iub":
            coords = coords.astype(np.float64)
        steps = np.diff(coords)
        result.append(steps[0] if (steps == steps[0]).all() else steps)
    return result


def _edges(f: Tensor, axis: int, dx: Any, edge_order: int) -> tuple[Tensor, Tensor]:
    """The one-sided differences at both ends of ``axis`` (numpy's formulas)."""
    def at(i: int) -> Tensor:
        return f[_on(axis, slice(i, i + 1 if i != -1 else None))]

    uniform = np.ndim(dx) == 0
    if edge_order == 1:
        return (at(1) - at(0)) / (dx if uniform else dx[0]), (at(-1) - at(-2)) / (dx if uniform else dx[-1])
    if uniform:
        a, b, c = -1.5 / dx, 2.0 / dx, -0.5 / dx
        a2, b2, c2 = 0.5 / dx, -2.0 / dx, 1.5 / dx
    else:
        d1, d2 = dx[0], dx[1]
        a, b, c = -(2.0 * d1 + d2) / (d1 * (d1 + d2)), (d1 + d2) / (d1 * d2), -d1 / (d2 * (d1 + d2))
        d1, d2 = dx[-2], dx[-1]
        a2, b2, c2 = d2 / (d1 * (d1 + d2)), -(d2 + d1) / (d1 * d2), (2.0 * d2 + d1) / (d2 * (d1 + d2))
    return a * at(0) + b * at(1) + c * at(2), a2 * at(-3) + b2 * at(-2) + c2 * at(-1)


def _interior(f: Tensor, axis: int, dx: Any) -> Tensor:
    lo, mid, hi = (f[_on(axis, s)] for s in (slice(None, -2), slice(1, -1), slice(2, None)))
    if np.ndim(dx) == 0:
        return (hi - lo) / (2.0 * dx)
    d1, d2 = dx[:-1], dx[1:]
    shape = [1] * f.ndim
    shape[axis] = -1
    a = (-d2 / (d1 * (d1 + d2))).reshape(shape)
    b = ((d2 - d1) / (d1 * d2)).reshape(shape)
    c = (d1 / (d2 * (d1 + d2))).reshape(shape)
    return a * lo + b * mid + c * hi


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """The gradient by central differences inside and one-sided ones (first or second order) at
    the ends, as ``np.gradient``; spacings are scalars or 1-d coordinates (numpy data).

    >>> import mars.tensor as mt
    >>> mt.gradient(mt.tensor([1, 2, 4, 7, 11], chunk_size=2)).execute().fetch()
    array([1. , 1.5, 2.5, 3.5, 4. ])
    """
    t = astensor(f)
    axes = tuple(range(t.ndim)) if axis is None else normalize_axis_tuple(axis, t.ndim)
    spacings = _spacings(t, varargs, axes)
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    if t.dtype.kind in "mM":
        raise NotImplementedError("gradient of datetime or timedelta tensors is not supported")
    otype = t.dtype if t.dtype.kind in "fc" else np.dtype(np.float64)
    if t.dtype.kind in "iu":
        t = t.astype(np.float64)
    results = []
    for ax, dx in zip(axes, spacings):
        if t.shape[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least (edge_order + 1) elements are required.")
        left, right = _edges(t, ax, dx, edge_order)
        parts = [left.astype(otype, copy=False), _interior(t, ax, dx).astype(otype, copy=False),
                 right.astype(otype, copy=False)]
        results.append(concatenate(parts, ax))
    return results[0] if len(axes) == 1 else tuple(results)


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Tensor:
    """The integral of ``y`` along ``axis`` by the trapezoidal rule (sample points ``x`` or spacing
    ``dx``), as ``np.trapezoid``.

    >>> import mars.tensor as mt
    >>> float(mt.trapezoid(mt.tensor([1, 2, 3]), x=[4, 6, 8]))
    8.0
    """
    t = astensor(y)
    axis = normalize_axis_index(operator.index(axis), t.ndim)
    if x is None:
        d: Any = dx
    else:
        xs = astensor(x)
        if xs.ndim == 1:
            shape = [1] * t.ndim
            shape[axis] = -1
            d = reshape(diff(xs), shape)
        else:
            d = diff(xs, axis=axis)
    return sum_(d * (t[_on(axis, slice(1, None))] + t[_on(axis, slice(None, -1))]) / 2.0, axis=axis)


# ----------------------------------------------------------------- products
def kron(a: Any, b: Any) -> Tensor:
    """The Kronecker product: blocks of ``b`` scaled by each element of ``a``, as ``np.kron``.

    ``b`` is read whole into each chunk (it is the small factor in most uses).

    >>> import mars.tensor as mt
    >>> mt.kron(mt.tensor([1, 10]), mt.tensor([1, 2, 3])).execute().fetch()
    array([ 1,  2,  3, 10, 20, 30])
    """
    tb = astensor(b)
    ta = astensor(a)
    if ta.ndim == 0 or tb.ndim == 0:
        return ta * tb
    nd = max(ta.ndim, tb.ndim)
    if ta.ndim < nd:
        ta = expand_dims(ta, tuple(range(nd - ta.ndim)))
    if tb.ndim < nd:
        tb = expand_dims(tb, tuple(range(nd - tb.ndim)))
    tb = tb.rechunk(tuple(max(int(s), 1) for s in tb.shape)) if not any(s == 0 for s in tb.shape) else tb
    product = expand_dims(ta, tuple(range(1, 2 * nd, 2))) * expand_dims(tb, tuple(range(0, 2 * nd, 2)))
    return reshape(product, tuple(sa * sb for sa, sb in zip(ta.shape, tb.shape)))


class TensorVander(TensorOperator):
    """The Vandermonde rows of each chunk of ``x`` (numpy's repeated products, so values match)."""

    params = ("n", "increasing", "dtype")
    fusible = True

    @classmethod
    def tile(cls, op: TensorVander) -> Tiled:
        x, out = op.inputs[0], op.outputs[0]
        chunks = [op.copy().new_chunk([c], index=(c.index[0], 0), shape=(c.shape[0], op.n), dtype=out.dtype,
                                      order="C") for c in x.chunks]
        return Tiled(chunks, (x.nsplits[0], (op.n,)))

    def execute(self, x: np.ndarray) -> np.ndarray:
        return np.vander(x, self.n, increasing=self.increasing).astype(self.dtype, copy=False)


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of 1-d ``x``: columns are powers of ``x``, as ``np.vander``.

    >>> import mars.tensor as mt
    >>> mt.vander(mt.tensor([1, 2, 3]), 3).execute().fetch()
    array([[1, 1, 1],
           [4, 2, 1],
           [9, 3, 1]])
    """
    t = astensor(x)
    if t.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = t.shape[0] if N is None else operator.index(N)
    if n < 0:
        raise ValueError(f"negative dimensions are not allowed, got N={n}")
    dtype = np.promote_types(t.dtype, int)
    return TensorVander(n=n, increasing=bool(increasing), dtype=dtype).new_tensor([t.data], (t.shape[0], n), dtype)


# ----------------------------------------------------------------- covariance
def _weights(fweights: Any, aweights: Any, n: Any) -> tuple[Any, Any]:
    w = None
    if fweights is not None:
        fweights = np.asarray(fweights, dtype=float)
        if not np.all(fweights == np.around(fweights)):
            raise TypeError("fweights must be integer")
        if fweights.ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if fweights.shape[0] != n:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if np.any(fweights < 0):
            raise ValueError("fweights cannot be negative")
        w = fweights
    if aweights is not None:
        aweights = np.asarray(aweights, dtype=float)
        if aweights.ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if aweights.shape[0] != n:
            raise RuntimeError("incompatible numbers of samples and aweights")
        if np.any(aweights < 0):
            raise ValueError("aweights cannot be negative")
        w = aweights if w is None else w * aweights
    return w, aweights


def _as_rows(m: Any, rowvar: bool, dtype: np.dtype, name: str) -> Tensor:
    t = astensor(m)
    if t.ndim > 2:
        raise ValueError(f"{name} has more than 2 dimensions")
    rows = t.astype(dtype, copy=False)
    rows = expand_dims(rows, tuple(range(2 - rows.ndim))) if rows.ndim < 2 else rows
    return transpose(rows) if not rowvar and rows.shape[0] != 1 else rows


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None, fweights: Any = None,
        aweights: Any = None, *, dtype: Any = None) -> Tensor:
    """The covariance matrix of the variables in the rows of ``m`` (columns if not ``rowvar``), as
    ``np.cov``; weights are numpy data.

    >>> import mars.tensor as mt
    >>> mt.cov(mt.tensor([[0, 1, 2], [2, 1, 0]])).execute().fetch()
    array([[ 1., -1.],
           [-1.,  1.]])
    """
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    tm = astensor(m)
    ty = None if y is None else astensor(y)
    if tm.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is None:
        dtype = np.result_type(tm.dtype, np.float64) if ty is None else np.result_type(tm.dtype, ty.dtype, np.float64)
    X = _as_rows(tm, rowvar or tm.ndim == 1, dtype, "m")
    if X.shape[0] == 0:
        return astensor(np.array([]).reshape(0, 0))
    if ty is not None:
        X = concatenate([X, _as_rows(ty, rowvar, dtype, "y")], axis=0)
    if ddof is None:
        ddof = 1 if not bias else 0
    n = X.shape[1]
    w, aweights = _weights(fweights, aweights, n)
    avg = average(X, axis=1, weights=w)
    if w is None:
        fact = n - ddof
    else:
        w_sum = w.sum()
        fact = w_sum if ddof == 0 else w_sum - ddof if aweights is None else w_sum - ddof * (w * aweights).sum() / w_sum
    fact = fact if fact > 0 else 0.0
    X = X - avg[:, None]
    x_t = transpose(X if w is None else X * w)
    c = dot(X, x_t.conj() if x_t.dtype.kind == "c" else x_t)
    c = (c * np.true_divide(1, fact)).astype(c.dtype, copy=False)  # numpy scales in place, keeping the dtype
    return c.squeeze()


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Tensor:
    """Pearson correlation coefficients (the covariance scaled by the deviations, clipped to
    [-1, 1]), as ``np.corrcoef``.

    >>> import mars.tensor as mt
    >>> mt.corrcoef(mt.tensor([[0, 1, 2], [2, 1, 0]])).execute().fetch()
    array([[ 1., -1.],
           [-1.,  1.]])
    """
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    stddev = apply_ufunc("sqrt", diag(c).real if c.dtype.kind == "c" else diag(c))
    c = c / stddev[:, None]
    c = c / stddev[None, :]
    if c.dtype.kind == "c":
        return apply_ufunc("clip", c.real, -1, 1) + 1j * apply_ufunc("clip", c.imag, -1, 1)
    return apply_ufunc("clip", c, -1, 1)


# ----------------------------------------------------------------- ufuncs with two outputs, i0
class TensorTwoOutputs(TensorOperator):
    """A one-input numpy ufunc with two outputs (``frexp``, ``modf``), chunk by chunk."""

    params = ("func",)
    fusible = False

    @classmethod
    def tile(cls, op: TensorTwoOutputs) -> list[Tiled]:
        x = op.inputs[0]
        outs: list[list] = [[], []]
        for c in x.chunks:
            kws = [{"index": c.index, "shape": c.shape, "dtype": o.dtype, "order": "C"} for o in op.outputs]
            for i, piece in enumerate(op.copy().new_chunks([c], kws)):
                outs[i].append(piece)
        return [Tiled(chunks, x.nsplits) for chunks in outs]

    def execute(self, x: np.ndarray) -> tuple:
        return getattr(np, self.func)(x)


def _two_outputs(func: str, x: Any, out: Any) -> tuple[Tensor, Tensor]:
    if out is not None and out != (None, None):
        raise NotImplementedError(f"{func}(out=...) is not supported; assign the results instead")
    t = astensor(x)
    probe = np.zeros((0,) * min(t.ndim, 1), dtype=t.dtype) if t.ndim else np.zeros((), dtype=t.dtype)
    dtypes = [np.asarray(r).dtype for r in getattr(np, func)(probe)]
    kws = [{"shape": t.shape, "dtype": d} for d in dtypes]
    first, second = TensorTwoOutputs(func=func).new_tensors([t.data], kws)
    return first, second


def frexp(x: Any, out: Any = None) -> tuple[Tensor, Tensor]:
    """Mantissas and exponents (``x == m * 2**e``), as ``np.frexp``.

    >>> import mars.tensor as mt
    >>> [r.execute().fetch().tolist() for r in mt.frexp(mt.tensor([8.0, 0.5]))]
    [[0.5, 0.5], [4, 0]]
    """
    return _two_outputs("frexp", x, out)


def modf(x: Any, out: Any = None) -> tuple[Tensor, Tensor]:
    """Fractional and integral parts (both with the sign of ``x``), as ``np.modf``.

    >>> import mars.tensor as mt
    >>> [r.execute().fetch().tolist() for r in mt.modf(mt.tensor([1.5, -2.25]))]
    [[0.5, -0.25], [1.0, -2.0]]
    """
    return _two_outputs("modf", x, out)


def i0(x: Any) -> Tensor:
    """The modified Bessel function of the first kind, order 0, as ``np.i0``.

    >>> import mars.tensor as mt
    >>> mt.i0(mt.tensor([0.0])).execute().fetch()
    array([1.])
    """
    return apply_ufunc("i0", x)


# ----------------------------------------------------------------- apply
class TensorApplyAlongAxis(TensorOperator):
    """``np.apply_along_axis`` on each chunk, the chunk whole along ``axis``."""

    params = ("func", "axis", "args", "kwargs", "result_shape")

    @classmethod
    def tile(cls, op: TensorApplyAlongAxis) -> Generator[Any, Any, Tiled]:
        inp, out = op.inputs[0], op.outputs[0]
        yield from known_sizes([inp], [op.axis])
        inp = yield from rechunked(inp, tuple((inp.shape[d],) if d == op.axis else s
                                              for d, s in enumerate(inp.nsplits)))
        ax, res = op.axis, op.result_shape
        chunks = []
        for c in inp.chunks:
            shape = c.shape[:ax] + res + c.shape[ax + 1:]
            index = c.index[:ax] + (0,) * len(res) + c.index[ax + 1:]
            chunks.append(op.copy().new_chunk([c], index=index, shape=shape, dtype=out.dtype, order="C"))
        nsplits = inp.nsplits[:ax] + tuple((s,) for s in res) + inp.nsplits[ax + 1:]
        return Tiled(chunks, nsplits)

    def execute(self, x: np.ndarray) -> np.ndarray:
        return np.apply_along_axis(self.func, self.axis, x, *self.args, **self.kwargs)


def apply_along_axis(func1d: Callable, axis: int, arr: Any, *args: Any, **kwargs: Any) -> Tensor:
    """``func1d`` applied to each 1-d slice of ``arr`` along ``axis``, as ``np.apply_along_axis``.

    The result's shape and dtype come from calling ``func1d`` on ones of the slice's length and
    dtype; chunks are made whole along ``axis``.

    >>> import mars.tensor as mt
    >>> mt.apply_along_axis(lambda r: r[0] + r[-1], 1, mt.tensor([[1, 2, 3], [4, 5, 6]])).execute().fetch()
    array([ 4, 10])
    """
    t = astensor(arr)
    axis = normalize_axis_index(operator.index(axis), t.ndim)
    if any(s == 0 for d, s in enumerate(t.shape) if d != axis):
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    length = t.shape[axis]
    probe = np.asarray(func1d(np.ones(1 if math.isnan(length) else int(length), dtype=t.dtype), *args, **kwargs))
    op = TensorApplyAlongAxis(func=func1d, axis=axis, args=args, kwargs=kwargs, result_shape=probe.shape)
    shape = t.shape[:axis] + probe.shape + t.shape[axis + 1:]
    return op.new_tensor([t.data], shape, probe.dtype)


def apply_over_axes(func: Callable, a: Any, axes: Any) -> Tensor:
    """``func(a, axis)`` applied over each of ``axes`` in turn, keeping dimensions, as
    ``np.apply_over_axes`` (``func`` is a mars function such as ``mt.sum``).

    >>> import mars.tensor as mt
    >>> mt.apply_over_axes(mt.sum, mt.ones((2, 3, 4)), [0, 2]).execute().fetch()
    array([[[8.],
            [8.],
            [8.]]])
    """
    val = astensor(a)
    n = val.ndim
    for axis in np.atleast_1d(axes).tolist():
        axis = axis + n if axis < 0 else axis
        res = astensor(func(val, axis))
        if res.ndim != val.ndim:
            res = expand_dims(res, axis)
            if res.ndim != val.ndim:
                raise ValueError("function is not returning an array of the correct shape")
        val = res
    return val
