"""Tensors made from a formula: ranges, eye, triangles and diagonals.

Each is a source op tiled over its chunk grid; a chunk computes only its own
block from the global formula (``arange``'s value at position ``i`` is
``start + i * delta``, as numpy computes it), so values do not depend on the
chunking and equal numpy's exactly.
"""

from __future__ import annotations

import bisect
import math
import operator
from typing import Any, Generator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ...core.entity import has_unknown
from ...core.operator import Tiled
from ...core.tiling import recursive_tile
from ..chunks import normalize_chunk_sizes, offsets
from ..core import Tensor, TensorOperator, on_device, tensor_data
from ..rechunk import rechunk
from .core import TensorFull, astensor, check_order, grid_tile, placement

__all__ = ["arange", "linspace", "logspace", "geomspace", "eye", "identity", "tri", "diag", "diagflat", "tril", "triu"]


def _zeros_chunk(index: tuple, shape: tuple, dtype: np.dtype, order: str = "C") -> Any:
    op = TensorFull(fill_value=0, dtype=dtype, shape=shape, order=order, nsplits=None)
    return op.new_chunk([], index=index, shape=shape, dtype=dtype, order=order)


def _count(value: Any) -> int:
    n = operator.index(value)
    if n < 0:
        raise ValueError(f"negative dimensions are not allowed, got {n}")
    return n


# ----------------------------------------------------------------- arange
class TensorArange(TensorOperator):
    """``start + i * delta`` for ``i`` in ``[offset, offset + length)``, where numpy's
    ``delta`` is ``dtype(start + step) - dtype(start)``."""

    params = ("start", "step", "dtype", "offset", "length", "nsplits")
    fusible = True

    @classmethod
    def tile(cls, op: TensorArange) -> Tiled:
        def chunk_op(index: tuple, slices: tuple, shape: tuple) -> TensorArange:
            return op.copy(offset=slices[0].start, length=shape[0], nsplits=None)

        return grid_tile(op, chunk_op)

    def execute(self) -> np.ndarray:
        dtype, lo, hi = self.dtype, self.offset, self.offset + self.length
        first = np.array(self.start).astype(dtype)
        second = np.array(self.start + self.step).astype(dtype)
        i = np.arange(lo, hi)
        # numpy's fill converts the position to the element type before multiplying
        out = (first + (i.astype(dtype) if dtype.kind in "fc" else i) * (second - first)).astype(dtype, copy=False)
        # numpy stores its first two elements as given, not from the formula
        if lo == 0 and hi > 0:
            out[0] = first
        if lo <= 1 < hi:
            out[1 - lo] = second
        return out


def _arange_dtype(*values: Any) -> np.dtype:
    # numpy discovers each argument's type and promotes it with the default integer
    dtype = np.dtype(np.intp)
    for v in values:
        dtype = np.promote_types(dtype, np.array(v).dtype)
    return dtype


def _arange_length(start: Any, stop: Any, step: Any, dtype: np.dtype) -> int:
    val = (stop - start) / step  # ZeroDivisionError for a zero step, as numpy
    parts = [val.real, val.imag] if dtype.kind == "c" and np.iscomplexobj(val) else [val]
    lengths = []
    for part in parts:
        part = float(part)
        if math.isnan(part):
            raise ValueError("arange: cannot compute length")
        if math.isinf(part) or abs(part) * dtype.itemsize >= np.iinfo(np.intp).max:
            raise ValueError(f"Maximum allowed size exceeded: arange({start}, {stop}, {step}) is too long")
        lengths.append(math.ceil(part))
    return max(0, min(lengths))


def _time_arange(start: Any, stop: Any, step: Any, dtype: Any) -> tuple[Any, Any, np.dtype, int]:
    """``arange`` over datetime64/timedelta64 as numpy does it: one common unit; an integer
    ``stop`` after a datetime ``start`` counts units from ``start``. Returns start, step, dtype, length."""
    times = [np.asarray(v).dtype for v in (start, stop, step) if np.asarray(v).dtype.kind in "mM"]
    common = times[0]
    for t in times[1:]:
        common = np.promote_types(common, t)
    if dtype is not None:
        common = np.promote_types(common, np.dtype(dtype)) if np.dtype(dtype).kind in "mM" else np.dtype(dtype)
    unit, count = np.datetime_data(common)
    delta = np.dtype(f"m8[{count}{unit}]")
    as_time = lambda v: np.asarray(v).astype(common if np.asarray(v).dtype.kind == "M" else delta)  # noqa: E731
    first, last, step_ = as_time(start), as_time(stop), np.asarray(step).astype(delta)
    if common.kind == "M" and last.dtype.kind == "m":
        last = first + last
    if first.dtype.kind != common.kind or step_ == np.timedelta64(0):
        raise ValueError(f"arange: cannot make {common} values from start={start!r}, stop={stop!r}, step={step!r}")
    if np.isnat(first) or np.isnat(last) or np.isnat(step_):
        raise ValueError("arange: cannot compute length")
    length = max(0, math.ceil((last - first) / step_))
    return first[()], step_[()], common, length


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None, chunk_size: Any = None, *,
           device: Any = None, gpu: Any = None) -> Tensor:
    """Evenly spaced values in ``[start, stop)``, as ``np.arange`` (datetime64 and timedelta64
    included).

    >>> import mars.tensor as mt
    >>> mt.arange(1, 10, 3, chunk_size=2).execute().fetch()
    array([1, 4, 7])
    >>> import numpy as np
    >>> mt.arange(np.datetime64("2024-01-30"), np.datetime64("2024-02-02")).execute().fetch()
    array(['2024-01-30', '2024-01-31', '2024-02-01'], dtype='datetime64[D]')
    """
    gpu = placement(device, gpu)
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    if any(np.asarray(v).dtype.kind in "mM" for v in (start, stop, step)):
        start, step, dtype, length = _time_arange(start, stop, step, dtype)
    else:
        dtype = _arange_dtype(start, stop, step) if dtype is None else np.dtype(dtype)
        length = _arange_length(start, stop, step, dtype)
    if dtype == np.bool_ and length > 2:
        raise TypeError(f"arange() is only supported for booleans when the result has at most length 2, got {length}")
    nsplits = normalize_chunk_sizes((length,), chunk_size, dtype.itemsize)
    op = TensorArange(start=start, step=step, dtype=dtype, offset=0, length=length, nsplits=nsplits)
    return on_device(op, gpu).new_tensor([], (length,), dtype)


# ----------------------------------------------------------------- linspace
class TensorLinspace(TensorOperator):
    """Positions ``[offset, offset + length)`` of ``np.linspace``, by numpy's own steps."""

    params = ("start", "stop", "num", "endpoint", "calc_dtype", "dtype", "offset", "length", "nsplits")
    fusible = True

    @classmethod
    def tile(cls, op: TensorLinspace) -> Tiled:
        def chunk_op(index: tuple, slices: tuple, shape: tuple) -> TensorLinspace:
            return op.copy(offset=slices[0].start, length=shape[0], nsplits=None)

        return grid_tile(op, chunk_op)

    def execute(self) -> np.ndarray:
        start, stop = _as_operands(self.start, self.stop)
        dt, num = self.calc_dtype, self.num
        delta = np.subtract(stop, start, dtype=type(dt))
        y = np.arange(self.offset, self.offset + self.length).astype(dt)
        div = num - 1 if self.endpoint else num
        if div > 0:
            step = delta / div
            if step == 0:  # denormal delta: numpy divides first, then scales
                y /= div
                y *= delta
            else:
                y *= step
        else:
            y = y * delta
        y += start
        if self.endpoint and num > 1 and self.offset + self.length == num:
            y[-1] = stop
        if np.issubdtype(self.dtype, np.integer):
            np.floor(y, out=y)
        return y.astype(self.dtype, copy=False)


def _as_operands(start: Any, stop: Any) -> tuple[Any, Any]:
    """As numpy's linspace sees them: Python scalars stay weakly typed next to numpy values."""
    python = (int, float, complex)
    if all(isinstance(v, python) for v in (start, stop)):
        return np.asarray(start), np.asarray(stop)
    return tuple(v if isinstance(v, python) else np.asarray(v) for v in (start, stop))  # type: ignore[return-value]


def linspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: Any = None,
    axis: int = 0,
    chunk_size: Any = None,
    *,
    device: Any = None,
    gpu: Any = None,
) -> Tensor | tuple[Tensor, Any]:
    """``num`` evenly spaced values from ``start`` to ``stop``, as ``np.linspace`` (scalar ends).

    >>> import mars.tensor as mt
    >>> mt.linspace(0, 1, 5, chunk_size=2).execute().fetch()
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    gpu = placement(device, gpu)
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    if np.ndim(start) or np.ndim(stop):
        raise NotImplementedError("linspace with array start/stop is not supported; pass scalars")
    normalize_axis_index(axis, 1, msg_prefix="destination")  # the values lie along the only axis
    calc_dtype = np.linspace(start, stop, 0).dtype
    dtype = calc_dtype if dtype is None else np.dtype(dtype)
    nsplits = normalize_chunk_sizes((num,), chunk_size, dtype.itemsize)
    op = TensorLinspace(start=start, stop=stop, num=num, endpoint=bool(endpoint), calc_dtype=calc_dtype,
                        dtype=dtype, offset=0, length=num, nsplits=nsplits)
    t = on_device(op, gpu).new_tensor([], (num,), dtype)
    if not retstep:
        return t
    div = num - 1 if endpoint else num
    s, e = _as_operands(start, stop)
    return t, (np.subtract(e, s, dtype=type(calc_dtype)) / div if div > 0 else np.nan)


class TensorLogspace(TensorLinspace):
    """``base ** linspace(...)`` at positions ``[offset, offset + length)``, cast to ``out_dtype``."""

    params = TensorLinspace.params + ("base", "out_dtype")

    def execute(self) -> np.ndarray:
        return np.power(self.base, super().execute()).astype(self.out_dtype, copy=False)


class TensorGeomspace(TensorLogspace):
    """``np.geomspace``'s positions: a log-spaced run between the ends rotated to the positive real
    axis, its ends set exactly, rotated back by ``sign``."""

    params = TensorLogspace.params + ("first", "last", "sign", "final_dtype")

    def execute(self) -> np.ndarray:
        y = super().execute()
        if self.offset == 0 and self.length:
            y[0] = self.first
        if self.endpoint and self.num > 1 and self.offset + self.length == self.num:
            y[-1] = self.last
        y *= self.sign
        return y.astype(self.final_dtype, copy=False)


def _scalar_ends(name: str, *values: Any) -> None:
    if any(np.ndim(v) for v in values):
        raise NotImplementedError(f"{name} with array arguments is not supported; pass scalars "
                                  f"(or build one {name} per element and stack them)")


def logspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    base: Any = 10.0,
    dtype: Any = None,
    axis: int = 0,
    chunk_size: Any = None,
    *,
    gpu: Any = None,
) -> Tensor:
    """``num`` values from ``base ** start`` to ``base ** stop``, evenly spaced in log, as ``np.logspace``
    (scalar ``start``, ``stop`` and ``base``).

    >>> import mars.tensor as mt
    >>> mt.logspace(0, 3, 4, chunk_size=3).execute().fetch()
    array([   1.,   10.,  100., 1000.])
    """
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    _scalar_ends("logspace", start, stop, base)
    normalize_axis_index(axis, 1, msg_prefix="destination")
    out_dtype = np.logspace(start, stop, 0, endpoint=endpoint, base=base, dtype=dtype).dtype
    calc_dtype = np.linspace(start, stop, 0).dtype
    nsplits = normalize_chunk_sizes((num,), chunk_size, out_dtype.itemsize)
    op = TensorLogspace(start=start, stop=stop, num=num, endpoint=bool(endpoint), calc_dtype=calc_dtype,
                        dtype=calc_dtype, offset=0, length=num, nsplits=nsplits, base=base, out_dtype=out_dtype)
    return on_device(op, gpu).new_tensor([], (num,), out_dtype)


def geomspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    dtype: Any = None,
    axis: int = 0,
    chunk_size: Any = None,
    *,
    gpu: Any = None,
) -> Tensor:
    """``num`` values from ``start`` to ``stop`` in geometric progression, as ``np.geomspace``
    (scalar ends; negative and complex ends as numpy handles them).

    >>> import mars.tensor as mt
    >>> mt.geomspace(1, 1000, 4, chunk_size=2).execute().fetch()
    array([   1.,   10.,  100., 1000.])
    """
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    _scalar_ends("geomspace", start, stop)
    normalize_axis_index(axis, 1, msg_prefix="destination")
    first, last = np.asanyarray(start), np.asanyarray(stop)
    if first == 0 or last == 0:
        raise ValueError("Geometric sequence cannot include zero")
    dt = np.result_type(first, last, float(num), np.zeros((), dtype))
    final_dtype = dt if dtype is None else np.dtype(dtype)
    sign = np.sign(first.astype(dt))
    first, last = first.astype(dt) / sign, last.astype(dt) / sign
    log_first, log_last = np.log10(first), np.log10(last)
    calc_dtype = np.linspace(log_first, log_last, 0).dtype
    nsplits = normalize_chunk_sizes((num,), chunk_size, final_dtype.itemsize)
    op = TensorGeomspace(start=log_first, stop=log_last, num=num, endpoint=bool(endpoint), calc_dtype=calc_dtype,
                         dtype=calc_dtype, offset=0, length=num, nsplits=nsplits, base=10.0, out_dtype=dt,
                         first=first, last=last, sign=sign, final_dtype=final_dtype)
    return on_device(op, gpu).new_tensor([], (num,), final_dtype)


# ----------------------------------------------------------------- eye, tri
class _BandSource(TensorOperator):
    """A matrix defined by the diagonal ``j - i == k``; block ``(r0, c0)`` sees it at ``k + r0 - c0``."""

    params = ("k", "dtype", "order", "shape", "nsplits")
    fusible = True

    @classmethod
    def tile(cls, op: _BandSource) -> Tiled:
        def chunk_op(index: tuple, slices: tuple, shape: tuple) -> _BandSource:
            return op.copy(k=op.k + slices[0].start - slices[1].start, shape=shape, nsplits=None)

        return grid_tile(op, chunk_op)


class TensorEye(_BandSource):
    def execute(self) -> np.ndarray:
        return np.eye(*self.shape, k=self.k, dtype=self.dtype, order=self.order)


class TensorTri(_BandSource):
    def execute(self) -> np.ndarray:
        return np.tri(*self.shape, k=self.k, dtype=self.dtype)


def _band(cls: type[_BandSource], N: Any, M: Any, k: Any, dtype: Any, order: str, chunk_size: Any,
          gpu: Any = None) -> Tensor:
    shape = (_count(N), _count(N if M is None else M))
    dtype = np.dtype(dtype)
    nsplits = normalize_chunk_sizes(shape, chunk_size, dtype.itemsize)
    op = cls(k=operator.index(k), dtype=dtype, order=check_order(order), shape=shape, nsplits=nsplits)
    return on_device(op, gpu).new_tensor([], shape, dtype, order=order)


def eye(
    N: int, M: int | None = None, k: int = 0, dtype: Any = float, order: str = "C", chunk_size: Any = None, *,
    device: Any = None, gpu: Any = None,
) -> Tensor:
    """Ones on the ``k``-th diagonal, zeros elsewhere, as ``np.eye``.

    >>> import mars.tensor as mt
    >>> mt.eye(3, k=1, dtype=int, chunk_size=2).execute().fetch()
    array([[0, 1, 0],
           [0, 0, 1],
           [0, 0, 0]])
    """
    return _band(TensorEye, N, M, k, float if dtype is None else dtype, order, chunk_size, placement(device, gpu))


def identity(n: int, dtype: Any = None, chunk_size: Any = None) -> Tensor:
    """The ``n`` by ``n`` identity matrix, as ``np.identity``.

    >>> import mars.tensor as mt
    >>> mt.identity(2, chunk_size=1).execute().fetch()
    array([[1., 0.],
           [0., 1.]])
    """
    return eye(n, dtype=float if dtype is None else dtype, chunk_size=chunk_size)


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = float, chunk_size: Any = None) -> Tensor:
    """Ones at and below the ``k``-th diagonal, as ``np.tri``.

    >>> import mars.tensor as mt
    >>> mt.tri(2, 3, dtype=int, chunk_size=2).execute().fetch()
    array([[1, 0, 0],
           [1, 1, 0]])
    """
    return _band(TensorTri, N, M, k, dtype, "C", chunk_size)


# ----------------------------------------------------------------- tril, triu
class _TensorTriangle(TensorOperator):
    """Keeps one side of the ``k``-th diagonal of the last two axes; whole blocks are
    passed through or replaced by zeros without running anything."""

    params = ("k", "rows")
    fusible = True
    func: Any = None

    @classmethod
    def side(cls, lo: int, hi: int, k: Any) -> str:
        """'all', 'none' or 'some' of a block whose ``j - i`` spans ``[lo, hi]`` is kept."""
        raise NotImplementedError

    @classmethod
    def tile(cls, op: _TensorTriangle) -> Generator[Any, Any, Tiled]:
        inp, out = op.inputs[0], op.outputs[0]
        if any(has_unknown(s) for s in inp.nsplits):
            yield inp.chunks
            inp.refresh_shape()
        nsplits = inp.nsplits if inp.ndim > 1 else inp.nsplits * 2  # a vector is broadcast to a square
        starts = [offsets(s) for s in nsplits[-2:]]
        chunks = []
        for index in np.ndindex(*[len(s) for s in nsplits]):
            shape = tuple(nsplits[d][i] for d, i in enumerate(index))
            r0, c0 = starts[0][index[-2]], starts[1][index[-1]]
            side = cls.side(c0 - (r0 + shape[-2] - 1), c0 + shape[-1] - 1 - r0, op.k)
            src = inp.chunk_at(index if inp.ndim > 1 else index[-1:])
            if side == "none" or 0 in shape:
                chunks.append(_zeros_chunk(index, shape, out.dtype))
            elif side == "all" and inp.ndim > 1:
                chunks.append(src)
            else:
                chunk_op = cls(k=op.k + r0 - c0, rows=shape[-2] if inp.ndim == 1 else None)
                chunks.append(chunk_op.new_chunk([src], index=index, shape=shape, dtype=out.dtype, order=out.order))
        return Tiled(chunks, nsplits)

    def execute(self, x: np.ndarray) -> np.ndarray:
        if x.ndim == 1:
            x = np.broadcast_to(x, (self.rows, len(x)))
        return type(self).func(x, self.k)


class TensorTril(_TensorTriangle):
    func = staticmethod(np.tril)

    @classmethod
    def side(cls, lo: int, hi: int, k: Any) -> str:
        return "all" if hi <= k else "none" if lo > k else "some"


class TensorTriu(_TensorTriangle):
    func = staticmethod(np.triu)

    @classmethod
    def side(cls, lo: int, hi: int, k: Any) -> str:
        return "all" if lo >= k else "none" if hi < k else "some"


def _triangle(cls: type[_TensorTriangle], m: Any, k: Any) -> Tensor:
    data = tensor_data(astensor(m))
    if data.ndim == 0:
        raise TypeError(f"{cls.func.__name__} needs an input of at least 1 dimension, got shape {data.shape}")
    shape = data.shape if data.ndim > 1 else data.shape * 2
    return cls(k=k, rows=None).new_tensor([data], shape, data.dtype)


def tril(m: Any, k: int = 0) -> Tensor:
    """Zeros above the ``k``-th diagonal of the last two axes, as ``np.tril``.

    >>> import mars.tensor as mt
    >>> mt.tril(mt.ones((3, 3), chunk_size=2), -1).execute().fetch()
    array([[0., 0., 0.],
           [1., 0., 0.],
           [1., 1., 0.]])
    """
    return _triangle(TensorTril, m, k)


def triu(m: Any, k: int = 0) -> Tensor:
    """Zeros below the ``k``-th diagonal of the last two axes, as ``np.triu``.

    >>> import mars.tensor as mt
    >>> mt.triu(mt.ones((2, 3), chunk_size=2), 1).execute().fetch()
    array([[0., 1., 1.],
           [0., 0., 1.]])
    """
    return _triangle(TensorTriu, m, k)


# ----------------------------------------------------------------- diag, diagflat
def _diag_span(r0: int, r1: int, c0: int, c1: int, k: int, n: int) -> tuple[int, int]:
    """Positions ``[lo, hi)`` along the ``k``-th diagonal (of length ``n``) inside rows
    ``[r0, r1)`` and columns ``[c0, c1)``; element ``t`` sits at ``(t + max(-k, 0), t + max(k, 0))``."""
    rr, cc = max(-k, 0), max(k, 0)
    return max(r0 - rr, c0 - cc, 0), min(r1 - rr, c1 - cc, n)


class TensorDiagBuild(TensorOperator):
    """A vector laid on the ``k``-th diagonal of a square matrix."""

    params = ("k", "nsplits")

    @classmethod
    def tile(cls, op: TensorDiagBuild) -> Generator[Any, Any, Tiled]:
        v, out = op.inputs[0], op.outputs[0]
        k, n = op.k, int(v.shape[0])
        starts = [offsets(s) for s in op.nsplits]
        # cut the vector where block edges cross the diagonal: each block then reads one piece
        bounds = sorted({0, n} | {min(max(s - max(-k, 0), 0), n) for s in starts[0]}
                        | {min(max(s - max(k, 0), 0), n) for s in starts[1]})
        if n:
            pieces = tuple(b - a for a, b in zip(bounds, bounds[1:]))
            v = yield from recursive_tile(rechunk(v, (pieces,)))
        chunks = []
        for index in np.ndindex(*[len(s) for s in op.nsplits]):
            shape = (op.nsplits[0][index[0]], op.nsplits[1][index[1]])
            r0, c0 = starts[0][index[0]], starts[1][index[1]]
            lo, hi = _diag_span(r0, r0 + shape[0], c0, c0 + shape[1], k, n)
            if lo >= hi:
                chunks.append(_zeros_chunk(index, shape, out.dtype))
                continue
            piece = v.chunks[bisect.bisect_right(bounds, lo) - 1]
            block = DiagBlock(row=lo + max(-k, 0) - r0, col=lo + max(k, 0) - c0, shape=shape, dtype=out.dtype)
            chunks.append(block.new_chunk([piece], index=index, shape=shape, dtype=out.dtype, order="C"))
        return Tiled(chunks, op.nsplits)


class DiagBlock(TensorOperator):
    """One block of a diagonal matrix: zeros, with the piece's values from ``(row, col)`` down-right."""

    params = ("row", "col", "shape", "dtype")
    fusible = True

    def execute(self, piece: np.ndarray) -> np.ndarray:
        out = np.zeros(self.shape, dtype=self.dtype)
        width = self.shape[1]
        out.reshape(-1)[self.row * width + self.col:: width + 1][: len(piece)] = piece
        return out


class TensorDiagTake(TensorOperator):
    """The ``k``-th diagonal of a matrix: one output chunk per block the diagonal crosses."""

    params = ("k",)

    @classmethod
    def tile(cls, op: TensorDiagTake) -> Generator[Any, Any, Tiled]:
        m, out = op.inputs[0], op.outputs[0]
        if has_unknown(m.shape) or any(has_unknown(s) for s in m.nsplits):
            yield m.chunks
            m.refresh_shape()
        k, (rows, cols) = op.k, m.shape
        n = max(0, min(rows - max(-k, 0), cols - max(k, 0)))
        row_starts, col_starts = offsets(m.nsplits[0]), offsets(m.nsplits[1])
        chunks: list = []
        for i, (r0, h) in enumerate(zip(row_starts, m.nsplits[0])):
            # only the column blocks this row block's stretch of the diagonal reaches
            first = max(bisect.bisect_right(col_starts, r0 + k) - 1, 0)
            for j in range(first, len(col_starts)):
                c0, w = col_starts[j], m.nsplits[1][j]
                if c0 - max(k, 0) >= min(r0 + h - max(-k, 0), n):
                    break
                lo, hi = _diag_span(r0, r0 + h, c0, c0 + w, k, n)
                if lo < hi:
                    chunk_op = DiagonalBlock(k=k + r0 - c0)
                    chunks.append(chunk_op.new_chunk([m.chunk_at((i, j))], index=(len(chunks),), shape=(hi - lo,),
                                                     dtype=out.dtype, order="C"))
        if not chunks:
            return Tiled([_zeros_chunk((0,), (0,), out.dtype)], ((0,),))
        return Tiled(chunks, (tuple(c.shape[0] for c in chunks),))


class DiagonalBlock(TensorOperator):
    params = ("k",)
    fusible = True

    def execute(self, x: np.ndarray) -> np.ndarray:
        return np.diagonal(x, self.k).copy()  # numpy's diagonal is a read-only view


class TensorRavelWhole(TensorOperator):
    """A tensor flattened into one chunk (diagflat's input: far smaller than its output)."""

    @classmethod
    def tile(cls, op: TensorRavelWhole) -> Generator[Any, Any, Tiled]:
        inp, out = op.inputs[0], op.outputs[0]
        whole = yield from recursive_tile(rechunk(inp, tuple(-1 for _ in inp.shape)))
        chunk = op.copy().new_chunk(whole.chunks, index=(0,), shape=out.shape, dtype=out.dtype, order="C")
        return Tiled([chunk], ((out.shape[0],),))

    def execute(self, x: np.ndarray) -> np.ndarray:
        return np.ravel(x)


def diag(v: Any, k: int = 0, chunk_size: Any = None) -> Tensor:
    """A vector's diagonal matrix, or a matrix's ``k``-th diagonal, as ``np.diag``.

    >>> import mars.tensor as mt
    >>> mt.diag([1, 2], k=1, chunk_size=2).execute().fetch()
    array([[0, 1, 0],
           [0, 0, 2],
           [0, 0, 0]])
    >>> mt.diag([[1, 2], [3, 4]]).execute().fetch()
    array([1, 4])
    """
    k = operator.index(k)
    data = tensor_data(astensor(v))
    if data.ndim == 1:
        if has_unknown(data.shape):
            raise ValueError("diag of a vector whose length is not known yet; call .execute() on it first")
        size = int(data.shape[0]) + abs(k)
        nsplits = normalize_chunk_sizes((size, size), chunk_size, data.dtype.itemsize)
        return TensorDiagBuild(k=k, nsplits=nsplits).new_tensor([data], (size, size), data.dtype)
    if data.ndim == 2:
        rows, cols = data.shape
        length = max(0, min(rows - max(-k, 0), cols - max(k, 0))) if not has_unknown(data.shape) else math.nan
        t = TensorDiagTake(k=k).new_tensor([data], (length,), data.dtype)
        return rechunk(t, chunk_size) if chunk_size is not None else t
    raise ValueError(f"Input must be 1- or 2-d., got shape {data.shape}")


def diagflat(v: Any, k: int = 0, chunk_size: Any = None) -> Tensor:
    """A diagonal matrix with the flattened input on its ``k``-th diagonal, as ``np.diagflat``.

    >>> import mars.tensor as mt
    >>> mt.diagflat([[1, 2], [3, 4]], chunk_size=3).execute().fetch()[3, 3]
    np.int64(4)
    """
    data = tensor_data(astensor(v))
    if data.ndim != 1:
        if has_unknown(data.shape):
            raise ValueError("diagflat of a tensor whose shape is not known yet; call .execute() on it first")
        size = math.prod(data.shape)
        data = tensor_data(TensorRavelWhole().new_tensor([data], (size,), data.dtype))
    return diag(data, k, chunk_size=chunk_size)
