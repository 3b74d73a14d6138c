"""The transform family: every ``numpy.fft`` transform as one operator over chunks.

A discrete Fourier transform along an axis needs the whole axis, so the
transformed axis is cut into one chunk (a rechunk) and the chunks it had are
cut along another axis instead (row chunks become column chunks), so chunks
stay as many and as small. Each chunk then runs numpy's own transform with
the same ``n``/``axis``/``norm``. An N-D transform is run as numpy runs it:
one 1-D transform per axis, in numpy's order (``fftn`` its last axis first,
``rfftn`` halving its last axis first, ``irfftn`` restoring it last), so the
values are numpy's to the last bit. Only when sizes are unknown until run
does an N-D transform take all its axes whole at once.

numpy's own errors (a bad ``norm``, an axis out of range, a dtype pocketfft
cannot take) come from running the same call on a tiny stand-in array when
the transform is built; the result dtype comes from there too.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any, Generator, Sequence

import numpy as np

from ...core.entity import has_unknown
from ...core.operator import Tiled
from ..base.reshape import known_sizes, rechunked
from ..core import Tensor, TensorOperator, tensor_data
from ..datasource.core import astensor

# step kinds: "c" complex to complex (n out), "r" real forward (n // 2 + 1 out),
# "i" back to real (n out, (m - 1) * 2 by default)
_ONE_D = {"fft": "c", "ifft": "c", "rfft": "r", "ihfft": "r", "irfft": "i", "hfft": "i"}
_N_D = {"fftn": "c", "ifftn": "c", "fft2": "c", "ifft2": "c", "rfftn": "r", "rfft2": "r",
        "irfftn": "i", "irfft2": "i"}


class TensorFFT(TensorOperator):
    """``np.fft.<func>(x, s, axes, norm)`` over chunks whole along ``axes``.

    ``s`` is the user's ``n`` (1-D transforms, as a 1-tuple) or ``s`` (None
    when not given); chunk ops carry it resolved to the sizes used.
    """

    params = ("func", "s", "axes", "norm")

    @classmethod
    def tile(cls, op: TensorFFT) -> Generator[Any, Any, Tiled]:
        inp, out = op.inputs[0], op.outputs[0]
        yield from known_sizes([inp])
        sizes, out_shape = plan(op.func, inp.shape, op.s, op.axes)
        whole = set(op.axes)
        inp = yield from rechunked(inp, _whole_along(inp.shape, inp.nsplits, whole))
        chunk_op = op.copy(s=tuple(sizes))
        chunks = []
        for c in inp.chunks:
            shape = tuple(out_shape[d] if d in whole else c.shape[d] for d in range(inp.ndim))
            chunks.append(chunk_op.copy().new_chunk([c], index=c.index, shape=shape, dtype=out.dtype, order="C"))
        nsplits = tuple((out_shape[d],) if d in whole else inp.nsplits[d] for d in range(inp.ndim))
        return Tiled(chunks, nsplits)

    def execute(self, x: np.ndarray) -> np.ndarray:
        func = getattr(np.fft, self.func)
        if self.func in _ONE_D:
            return func(x, n=self.s[0], axis=self.axes[0], norm=self.norm)
        return func(x, s=self.s, axes=self.axes, norm=self.norm)


def _whole_along(shape: Sequence[int], nsplits: Sequence[tuple], whole: set[int]) -> list[tuple]:
    """Splits with the ``whole`` axes in one chunk each; the chunks those axes had are
    cut along the other axis with the longest chunks instead, so that chunks stay
    as small, and as many, as they were (row chunks become column chunks)."""
    target = [(shape[d],) if d in whole else tuple(nsplits[d]) for d in range(len(shape))]
    lost = math.prod(len(nsplits[d]) for d in whole)
    others = [d for d in range(len(shape)) if d not in whole and shape[d] > 0]
    if lost > 1 and others:
        d = max(others, key=lambda d: shape[d] / len(nsplits[d]))
        pieces = min(shape[d], len(nsplits[d]) * lost)
        target[d] = tuple(len(part) for part in np.array_split(np.empty(shape[d], dtype=np.int8), pieces))
    return target


# ----------------------------------------------------------------- numpy's size rules
def _cooked(func: str, shape: Sequence, s: Sequence | None, axes: Sequence[int]) -> list:
    """The size asked of each step ``ii`` (None: the 1-D transform's default then)."""
    if func in _ONE_D:
        return [s[0] if s is not None else None]
    if s is None:
        sizes: list = [shape[a] for a in axes]
        if _N_D[func] == "i":
            sizes[-1] = (shape[axes[-1]] - 1) * 2
        return sizes
    return [shape[a] if n == -1 else n for n, a in zip(s, axes)]


def _steps(func: str, axes: Sequence[int]) -> list[tuple[int, str]]:
    """(position in ``axes``, step kind) in the order numpy transforms them."""
    kind, last = _ONE_D.get(func) or _N_D[func], len(axes) - 1
    if func in _ONE_D:
        return [(0, kind)]
    if kind == "c":
        return [(ii, "c") for ii in reversed(range(len(axes)))]
    if kind == "r":
        return [(last, "r")] + [(ii, "c") for ii in reversed(range(last))]
    return [(ii, "c") for ii in range(last)] + [(last, "i")]


def plan(func: str, shape: Sequence, s: Sequence | None, axes: Sequence[int]) -> tuple[list, tuple]:
    """The size each step transforms to (numpy's ``s``, resolved) and the output shape.

    Sizes unknown until run stay NaN; a known size below 1 is numpy's ValueError.
    """
    sizes = _cooked(func, shape, s, axes)
    current = list(shape)
    for ii, kind in _steps(func, axes):
        axis, n = axes[ii], sizes[ii]
        if n is None:
            n = current[axis] if kind in "cr" else (current[axis] - 1) * 2
        if not (isinstance(n, float) and math.isnan(n)) and n < 1:
            raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
        sizes[ii] = n
        current[axis] = n // 2 + 1 if kind == "r" else n
    return sizes, tuple(current)


# ----------------------------------------------------------------- building
def _positive_int(n: Any) -> bool:
    return isinstance(n, numbers.Integral) and not isinstance(n, (bool, np.bool_)) and n >= 1


def _probe(func: str, ndim: int, dtype: np.dtype, n: Any, axes: Any, norm: Any) -> np.dtype:
    """Run numpy's transform on a tiny stand-in: numpy's errors, and the result dtype."""
    listed = [axes] if func in _ONE_D else (axes if axes is not None else None)
    if listed is None:
        count = len(n) if n is not None and np.ndim(n) == 1 else ndim
        touched = set(range(max(ndim - count, 0), ndim))
    else:
        touched = {a % ndim for a in np.atleast_1d(listed)
                   if isinstance(a, numbers.Integral) and ndim and -ndim <= a < ndim}
    x = np.zeros(tuple(2 if d in touched else 1 for d in range(ndim)), dtype=dtype)
    if func in _ONE_D:
        small: Any = 2 if _positive_int(n) else n
        kw = {"n": small, "axis": axes}
    else:
        small = [2 if _positive_int(v) else v for v in n] if n is not None and np.ndim(n) == 1 else n
        kw = {"s": small, "axes": axes}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return getattr(np.fft, func)(x, norm=norm, **kw).dtype


def _normalized_axes(func: str, ndim: int, s: Any, axes: Any) -> tuple[int, ...]:
    if func in _ONE_D:
        return (int(axes) % ndim,)
    if axes is None:
        if s is not None:
            warnings.warn("`axes` should not be `None` if `s` is not `None` (deprecated in NumPy 2.0); "
                          "pass the axes that `s` is for", DeprecationWarning, stacklevel=4)
        return tuple(range(ndim - (len(s) if s is not None else ndim), ndim))
    return tuple(int(a) % ndim for a in axes)


def _into(out: Any, result: Tensor, func: str) -> Tensor:
    """numpy 2's ``out=``: the result goes into ``out`` (a mars tensor of the output's shape)."""
    if not isinstance(out, Tensor):
        raise TypeError(f"out must be a mars Tensor, got {type(out).__name__}")
    if tuple(out.shape) != tuple(result.shape):
        raise ValueError("output array has wrong shape.")
    if out.dtype != result.dtype:
        if not np.can_cast(result.dtype, out.dtype, casting="same_kind"):
            raise TypeError(f"Cannot cast ufunc '{func}' output from {result.dtype!r} to {out.dtype!r} "
                            "with casting rule 'same_kind'")
        result = result.astype(out.dtype)
    out.data = result.data
    return out


_ONE_AXIS = {("c", True): "fft", ("c", False): "ifft", ("r", True): "rfft", ("i", False): "irfft"}


def _one_axis_at_a_time(func: str, data: Any, sizes: Sequence[int], axes: Sequence[int], norm: Any) -> Tensor:
    """An N-D transform as numpy computes it: a 1-D transform per axis, in numpy's order
    (the same calls, so the same values), each with its own axis whole and the others cut."""
    forward = not func.startswith("i")
    t = Tensor(data)
    for ii, kind in _steps(func, axes):
        t = transform(_ONE_AXIS[kind, forward], t, sizes[ii], axes[ii], norm, None)
    return t


def transform(func: str, a: Any, s: Any, axes: Any, norm: Any, out: Any) -> Tensor:
    """``np.fft.<func>`` over a tensor; ``s`` is ``n`` and ``axes`` is ``axis`` for 1-D transforms."""
    data = tensor_data(astensor(a))
    dtype = _probe(func, data.ndim, data.dtype, s, axes, norm)
    norm_axes = _normalized_axes(func, data.ndim, s, axes)
    if func in _ONE_D:
        s = (s,)
    elif s is not None:
        s = tuple(s)
    sizes, shape = plan(func, data.shape, s, norm_axes)
    if func in _N_D and not has_unknown(sizes):
        result = _one_axis_at_a_time(func, data, sizes, norm_axes, norm)
    else:
        result = TensorFFT(func=func, s=s, axes=norm_axes, norm=norm).new_tensor([data], shape, dtype)
    return _into(out, result, func) if out is not None else result
