"""``pad``: the input joined with pad blocks, one axis after the other.

numpy fills the pad areas axis by axis, each axis seeing the areas the
earlier ones filled; here each axis joins pad blocks made from slices of the
tensor so far (constants, edge slices broadcast, reversed slices, stats
over a slice, ramps from the edge), so no chunk of the input is gathered.
Wide reflections grow in rounds, as numpy's do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...core.entity import has_unknown
from ...core.operator import Tiled
from ..core import Tensor, TensorData, TensorOperator
from ..datasource.core import astensor, full, zeros
from ..reduction.basic import max as max_
from ..reduction.basic import mean
from ..reduction.basic import min as min_
from ..reduction.quantile import median
from .join import concatenate
from .shape import broadcast_to

__all__ = ["pad"]

_MODE_KWARGS = {
    "constant": ("constant_values",), "edge": (), "wrap": (), "empty": (), "linear_ramp": ("end_values",),
    "maximum": ("stat_length",), "minimum": ("stat_length",), "mean": ("stat_length",), "median": ("stat_length",),
    "reflect": ("reflect_type",), "symmetric": ("reflect_type",),
}


def _as_pairs(x: Any, ndim: int, as_index: bool = False) -> list:
    """``x`` as one (before, after) pair per axis, as numpy broadcasts pad arguments."""
    if x is None:
        return [(None, None)] * ndim
    x = np.array(x)
    if as_index:
        x = np.round(x).astype(np.intp, copy=False)
    if as_index and x.size and x.min() < 0:
        raise ValueError("index can't contain negative values")
    if x.ndim < 3 and x.size == 1:
        return [(x.ravel()[0],) * 2] * ndim
    if x.ndim < 3 and x.size == 2 and x.shape != (2, 1):
        return [tuple(x.ravel())] * ndim
    return [tuple(p) for p in np.broadcast_to(x, (ndim, 2))]


def _pad_widths(pad_width: Any, ndim: int) -> list:
    if isinstance(pad_width, dict):
        seq: list = [(0, 0)] * ndim
        for axis, width in pad_width.items():
            seq[axis] = (width, width) if isinstance(width, int) else tuple(width)
        pad_width = seq
    widths = np.asarray(pad_width)
    if widths.dtype.kind != "i":
        raise TypeError("`pad_width` must be of integral type.")
    return [(int(a), int(b)) for a, b in _as_pairs(widths, ndim, as_index=True)]


def _on(axis: int, entry: Any) -> tuple:
    return (slice(None),) * axis + (entry,)


def _block_shape(t: Tensor, axis: int, width: int) -> tuple:
    return t.shape[:axis] + (width,) + t.shape[axis + 1:]


def _joined(t: Tensor, axis: int, left: Tensor | None, right: Tensor | None) -> Tensor:
    parts = [p for p in (left, t, right) if p is not None]
    return concatenate(parts, axis) if len(parts) > 1 else t


def _stored(value: Any, dtype: np.dtype) -> Any:
    """``value`` as numpy stores it into an array of ``dtype`` (its casts and errors)."""
    holder = np.empty((), dtype=dtype)
    holder[()] = value
    return holder[()]


# ----------------------------------------------------------------- modes, one axis each
def _constant(t: Tensor, axis: int, widths: tuple, values: tuple) -> Tensor:
    left, right = (full(_block_shape(t, axis, w), _stored(v, t.dtype), dtype=t.dtype) if w else None
                   for w, v in zip(widths, values))
    return _joined(t, axis, left, right)


def _edge(t: Tensor, axis: int, widths: tuple, n: int) -> Tensor:
    left = broadcast_to(t[_on(axis, slice(0, 1))], _block_shape(t, axis, widths[0])) if widths[0] else None
    right = broadcast_to(t[_on(axis, slice(n - 1, n))], _block_shape(t, axis, widths[1])) if widths[1] else None
    return _joined(t, axis, left, right)


def _wrap(t: Tensor, axis: int, widths: tuple, n: int) -> Tensor:
    """The periodic extension of ``t`` (what numpy's rounds of wrapping amount to)."""
    def runs(lo: int, hi: int) -> list:
        pieces = []
        while lo < hi:
            start = lo % n
            stop = min(n, start + hi - lo)
            pieces.append(t[_on(axis, slice(start, stop))])
            lo += stop - start
        return pieces

    return concatenate(runs(-widths[0], 0) + [t] + runs(n, n + widths[1]), axis)


def _reflect(t: Tensor, axis: int, widths: tuple, n: int, symmetric: bool, odd: bool) -> Tensor:
    """numpy's rounds: each adds at most one (whole) period of reflected values on each side."""
    left, right = widths
    while left or right:
        length = t.shape[axis]
        period = length // n * n if symmetric else (length - 1) // (n - 1) * (n - 1)
        skip = 0 if symmetric else 1
        pieces: list = [None, None]
        for side, want in enumerate((left, right)):
            size = min(period, want)
            if not size:
                continue
            lo = skip if side == 0 else length - skip - size
            piece = t[_on(axis, slice(lo, lo + size))][_on(axis, slice(None, None, -1))]
            if odd:
                edge = t[_on(axis, slice(0, 1) if side == 0 else slice(length - 1, length))]
                piece = (2 * edge - piece).astype(t.dtype, copy=False)
            pieces[side] = piece
        left -= min(period, left)
        right -= min(period, right)
        t = _joined(t, axis, *pieces)
    return t


class TensorLinearRamp(TensorOperator):
    """Values from ``end`` towards each edge value (numpy's ``linspace``, no endpoint), per edge chunk."""

    params = ("end", "num", "axis", "reverse")
    fusible = True

    @classmethod
    def tile(cls, op: TensorLinearRamp) -> Tiled:
        inp, out = op.inputs[0], op.outputs[0]
        chunks = []
        for c in inp.chunks:
            shape = c.shape[:op.axis] + (op.num,) + c.shape[op.axis + 1:]
            chunks.append(op.copy().new_chunk([c], index=c.index, shape=shape, dtype=out.dtype, order="C"))
        nsplits = inp.nsplits[:op.axis] + ((op.num,),) + inp.nsplits[op.axis + 1:]
        return Tiled(chunks, nsplits)

    def execute(self, edge: np.ndarray) -> np.ndarray:
        ramp = np.linspace(self.end, edge.squeeze(self.axis), self.num, endpoint=False, dtype=edge.dtype,
                           axis=self.axis)
        return ramp[_on(self.axis, slice(None, None, -1))] if self.reverse else ramp


def _linear_ramp(t: Tensor, axis: int, widths: tuple, ends: tuple, n: int) -> Tensor:
    pieces: list = [None, None]
    for side, (width, end) in enumerate(zip(widths, ends)):
        if width:
            edge: TensorData = t[_on(axis, slice(0, 1) if side == 0 else slice(n - 1, n))].data
            op = TensorLinearRamp(end=end, num=width, axis=axis, reverse=side == 1)
            pieces[side] = op.new_tensor([edge], _block_shape(t, axis, width), t.dtype)
    return _joined(t, axis, *pieces)


_STATS: dict[str, Callable] = {
    "maximum": lambda x, axis: max_(x, axis=axis, keepdims=True),
    "minimum": lambda x, axis: min_(x, axis=axis, keepdims=True),
    "mean": lambda x, axis: mean(x, axis=axis, keepdims=True),
    "median": lambda x, axis: median(x, axis=axis, keepdims=True),
}


def _stat(t: Tensor, axis: int, widths: tuple, lengths: tuple, mode: str, n: int) -> Tensor:
    lengths = tuple(n if s is None or s > n else int(s) for s in lengths)
    if 0 in lengths and mode in ("maximum", "minimum"):
        raise ValueError("stat_length of 0 yields no value for padding")
    pieces: list = [None, None]
    for side, (width, length) in enumerate(zip(widths, lengths)):
        if width:
            region = t[_on(axis, slice(0, length) if side == 0 else slice(n - length, n))]
            stat = _STATS[mode](region, axis)
            if t.dtype.kind in "iu" and stat.dtype.kind == "f":
                stat = stat.round()  # numpy rounds a float stat before storing it as an integer
            pieces[side] = broadcast_to(stat.astype(t.dtype, copy=False), _block_shape(t, axis, width))
    return _joined(t, axis, *pieces)


def _pad_axis(t: Tensor, axis: int, widths: tuple, mode: str, kwargs: dict, pairs: dict) -> Tensor:
    n = int(t.shape[axis])
    if mode == "constant":
        return _constant(t, axis, widths, pairs["constant_values"][axis])
    if mode == "empty":
        return _constant(t, axis, widths, (0, 0))
    if mode == "edge" or (mode in ("reflect", "symmetric") and n == 1):
        return _edge(t, axis, widths, n)
    if mode == "wrap":
        return _wrap(t, axis, widths, n)
    if mode in ("reflect", "symmetric"):
        odd = kwargs.get("reflect_type", "even") == "odd"
        return _reflect(t, axis, widths, n, mode == "symmetric", odd)
    if mode == "linear_ramp":
        return _linear_ramp(t, axis, widths, pairs["end_values"][axis], n)
    return _stat(t, axis, widths, pairs["stat_length"][axis], mode, n)


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Tensor:
    """``array`` padded by ``pad_width`` on each side of each axis, as ``np.pad``.

    Modes: ``constant`` (``constant_values``), ``edge``, ``linear_ramp`` (``end_values``),
    ``maximum``, ``minimum``, ``mean``, ``median`` (``stat_length``), ``reflect`` and
    ``symmetric`` (``reflect_type``), ``wrap``, and ``empty`` (filled with zeros here).

    >>> import mars.tensor as mt
    >>> mt.pad(mt.tensor([1, 2, 3]), (2, 1), mode="reflect").execute().fetch()
    array([3, 2, 1, 2, 3, 2])
    """
    t = astensor(array)
    widths = _pad_widths(pad_width, t.ndim)
    if callable(mode):
        raise NotImplementedError("pad with a function as mode is not supported; pad with a mode name, "
                                  "or use apply_along_axis on a constant-padded tensor")
    if mode not in _MODE_KWARGS:
        raise ValueError(f"mode '{mode}' is not supported")
    unsupported = set(kwargs) - set(_MODE_KWARGS[mode])
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    if has_unknown(t.shape):
        raise NotImplementedError("pad of a tensor whose shape is known only after running; execute it first")
    pairs = {
        "constant_values": _as_pairs(kwargs.get("constant_values", 0), t.ndim),
        "end_values": _as_pairs(kwargs.get("end_values", 0), t.ndim),
        "stat_length": _as_pairs(kwargs.get("stat_length"), t.ndim, as_index=True),
    }
    if mode not in ("constant", "empty") and t.size == 0:
        for axis, pair in enumerate(widths):
            if t.shape[axis] == 0 and any(pair):
                raise ValueError(f"can't extend empty axis {axis} using modes other than 'constant' or 'empty'")
        return zeros(tuple(s + a + b for s, (a, b) in zip(t.shape, widths)), dtype=t.dtype)
    result = t
    for axis, pair in enumerate(widths):
        if any(pair):
            result = _pad_axis(result, axis, pair, mode, kwargs, pairs)
    return result if result is not array else Tensor(result.data)
