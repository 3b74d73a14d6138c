"""``mt.spatial.distance``: ``cdist``, ``pdist`` and ``squareform`` over chunked tensors, scipy per block.

- ``cdist``: features in one chunk; one scipy ``cdist`` per (XA row chunk, XB
  row chunk) block.
- ``pdist``: rows in chunks ``R_0 .. R_k``; only upper-triangle blocks are
  computed (``pdist`` within ``R_p``, ``cdist`` of ``R_p`` against each later
  ``R_q``), and output chunk ``p`` (the condensed entries of the rows of
  ``R_p``, which are contiguous) is cut from them row by row.
- ``squareform``: a matrix's row band gives its rows' condensed entries; a
  vector is cut at row-band boundaries, and matrix tile ``(p, q)`` is built
  from the segment of band ``min(p, q)`` (transposed below the diagonal).

Metrics are scipy's names or a callable; a bad name or argument raises
scipy's error at once (a probe on a tiny block). ``seuclidean``'s ``V`` and
``mahalanobis``' ``VI`` default to the data's, as in scipy, computed lazily.

>>> import mars.tensor as mt
>>> mt.spatial.distance.pdist(mt.tensor([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]], chunk_size=1)).fetch()
array([ 5., 10.,  5.])
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Generator
from typing import Any

import numpy as np

from ...core.operator import Tiled
from ..base.join import vstack
from ..base.reshape import known_sizes, rechunked
from ..core import INPUT, Tensor, TensorData, TensorOperator, tensor_data
from ..datasource.core import astensor
from ..reduction.basic import mean
from ..reduction.stats import var
from ..special.core import scipy_func

__all__ = ["cdist", "pdist", "squareform"]


def _whole(t: TensorData) -> Generator[Any, Any, TensorData]:
    return (yield from rechunked(t, tuple((int(s),) for s in t.shape)))


def _rows(t: TensorData) -> Generator[Any, Any, TensorData]:
    """``t`` with its features (axis 1) in one chunk."""
    yield from known_sizes([t])
    return (yield from rechunked(t, (t.nsplits[0], (int(t.shape[1]),))))


class _DistanceOp(TensorOperator):
    """Base of the block ops: ``metric`` and ``kwargs`` (``INPUT`` where an extra whole tensor goes)."""

    params = ("metric", "kwargs", "derive_vi")

    def _kwargs(self, extra: tuple) -> dict:
        it = iter(extra)
        kwargs = {k: (next(it) if v is INPUT else v) for k, v in self.kwargs}
        if self.derive_vi:  # scipy's default VI: the inverse of the data's covariance
            kwargs["VI"] = np.linalg.inv(kwargs["VI"]).T.copy()
        return kwargs

    def _extra_chunks(self, op_inputs: list, start: int) -> Generator[Any, Any, list]:
        chunks = []
        for t in op_inputs[start:]:
            whole = yield from _whole(t)
            chunks.append(whole.chunks[0])
        return chunks


class TensorCdist(_DistanceOp):
    @classmethod
    def tile(cls, op: TensorCdist) -> Generator[Any, Any, Tiled]:
        xa = yield from _rows(op.inputs[0])
        xb = yield from _rows(op.inputs[1])
        extra = yield from op._extra_chunks(op.inputs, 2)
        chunks = []
        for a in xa.chunks:
            for b in xb.chunks:
                chunks.append(op.copy().new_chunk([a, b, *extra], index=(a.index[0], b.index[0]),
                                                  shape=(a.shape[0], b.shape[0]), dtype=np.float64, order="C"))
        return Tiled(chunks, (xa.nsplits[0], xb.nsplits[0]))

    def execute(self, xa: np.ndarray, xb: np.ndarray, *extra: Any) -> np.ndarray:
        return scipy_func("spatial.distance.cdist")(xa, xb, self.metric, **self._kwargs(extra))


class TensorPdistBlock(_DistanceOp):
    """The condensed distances within one row chunk."""

    def execute(self, x: np.ndarray, *extra: Any) -> np.ndarray:
        return scipy_func("spatial.distance.pdist")(x, self.metric, **self._kwargs(extra))


class TensorCondensedRows(TensorOperator):
    """Output chunk of ``pdist``: for each row of a row chunk, its tail within the chunk
    (from the chunk's own ``pdist``) followed by its rows of the later blocks."""

    params = ("rows",)

    def execute(self, within: np.ndarray, *blocks: np.ndarray) -> np.ndarray:
        parts, start = [], 0
        for r in range(self.rows):
            n = self.rows - 1 - r
            parts.append(within[start:start + n])
            start += n
            parts.extend(b[r] for b in blocks)
        return np.concatenate(parts) if parts else np.empty(0)


def _condensed_sizes(splits: tuple, m: int) -> list[int]:
    sizes, start = [], 0
    for s in splits:
        sizes.append(sum(m - 1 - i for i in range(start, start + s)))
        start += s
    return sizes


class TensorPdist(_DistanceOp):
    @classmethod
    def tile(cls, op: TensorPdist) -> Generator[Any, Any, Tiled]:
        x = yield from _rows(op.inputs[0])
        extra = yield from op._extra_chunks(op.inputs, 1)
        m = int(x.shape[0])
        params = dict(metric=op.metric, kwargs=op.kwargs, derive_vi=op.derive_vi)
        sizes = _condensed_sizes(x.nsplits[0], m)
        chunks, splits = [], []
        for p, (rows, size) in enumerate(zip(x.chunks, sizes)):
            if size == 0 and (chunks or p < len(sizes) - 1):
                continue  # a last chunk of one row has no pairs of its own
            within = TensorPdistBlock(**params).new_chunk(
                [rows, *extra], index=(p,), shape=(rows.shape[0] * (rows.shape[0] - 1) // 2,), dtype=np.float64,
                order="C")
            blocks = [TensorCdist(**params).new_chunk([rows, later, *extra], index=(p, q),
                                                       shape=(rows.shape[0], later.shape[0]), dtype=np.float64,
                                                       order="C")
                      for q, later in enumerate(x.chunks[p + 1:], p + 1)]
            chunks.append(TensorCondensedRows(rows=int(rows.shape[0])).new_chunk([within, *blocks], index=(len(chunks),), shape=(size,),
                                                          dtype=np.float64, order="C"))
            splits.append(size)
        return Tiled(chunks, (tuple(splits),))


def _probe_metric(name: str, metric: Any, n: int, dtypes: tuple, kwargs: dict) -> None:
    """Raise scipy's error now for a bad metric name or argument (callables are not probed)."""
    if callable(metric):
        return
    samples = [np.zeros((2, n), dtype=d) for d in dtypes]
    probe_kwargs = {k: (np.ones(v.shape, dtype=v.dtype) if isinstance(v, TensorData) else v) for k, v in kwargs.items()}
    if "VI" in probe_kwargs and isinstance(kwargs["VI"], TensorData):
        probe_kwargs["VI"] = np.eye(n)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        scipy_func(f"spatial.distance.{name}")(*samples, metric, **probe_kwargs)


def _metric_kwargs(metric: Any, data: Tensor, kwargs: dict) -> tuple[dict, bool]:
    """``kwargs`` with scipy's data-dependent defaults (``V``, ``VI``) added as lazy tensors."""
    kwargs = {k: (tensor_data(astensor(v)) if isinstance(v, (Tensor, np.ndarray, list)) else v)
              for k, v in kwargs.items()}
    derive_vi = False
    if metric == "seuclidean" and kwargs.get("V") is None:
        kwargs["V"] = tensor_data(var(data, axis=0, ddof=1))
    if metric == "mahalanobis" and kwargs.get("VI") is None:
        centered = data - mean(data, axis=0)
        kwargs["VI"] = tensor_data((centered.T @ centered) / (data.shape[0] - 1))
        derive_vi = True
    return kwargs, derive_vi


def _matrix(x: Any, message: str) -> TensorData:
    t = tensor_data(astensor(x))
    if t.ndim != 2:
        raise ValueError(message)
    return t


def _check_out(out: Any) -> None:
    if out is not None:
        raise NotImplementedError("out= is not supported by mars' distance functions; assign the result instead")


def cdist(XA: Any, XB: Any, metric: Any = "euclidean", *, out: Any = None, **kwargs: Any) -> Tensor:
    """Distances between each pair of rows of ``XA`` and ``XB``, as ``scipy.spatial.distance.cdist``.

    >>> import mars.tensor as mt
    >>> mt.spatial.distance.cdist(mt.tensor([[0.0, 0.0]]), mt.tensor([[3.0, 4.0], [1.0, 0.0]]), "cityblock").fetch()
    array([[7., 1.]])
    """
    _check_out(out)
    xa = _matrix(XA, "XA must be a 2-dimensional array.")
    xb = _matrix(XB, "XB must be a 2-dimensional array.")
    if xa.shape[1] != xb.shape[1]:
        raise ValueError("XA and XB must have the same number of columns (i.e. feature dimension.)")
    both = vstack([Tensor(xa), Tensor(xb)]) if metric in ("seuclidean", "mahalanobis") else None
    kwargs, derive_vi = _metric_kwargs(metric, both, kwargs)
    _probe_metric("cdist", metric, int(xa.shape[1]), (xa.dtype, xb.dtype), kwargs)
    extra = [v for v in kwargs.values() if isinstance(v, TensorData)]
    op = TensorCdist(metric=metric, derive_vi=derive_vi,
                     kwargs=tuple((k, INPUT if isinstance(v, TensorData) else v) for k, v in kwargs.items()))
    return op.new_tensor([xa, xb, *extra], (xa.shape[0], xb.shape[0]), np.float64)


def pdist(X: Any, metric: Any = "euclidean", *, out: Any = None, **kwargs: Any) -> Tensor:
    """Condensed pairwise distances between the rows of ``X``, as ``scipy.spatial.distance.pdist``.

    >>> import mars.tensor as mt
    >>> mt.spatial.distance.pdist(mt.tensor([[0.0], [1.0], [3.0]]), "sqeuclidean").fetch()
    array([1., 9., 4.])
    """
    _check_out(out)
    x = _matrix(X, "A 2-dimensional array must be passed.")
    kwargs, derive_vi = _metric_kwargs(metric, Tensor(x), kwargs)
    _probe_metric("pdist", metric, int(x.shape[1]), (x.dtype,), kwargs)
    extra = [v for v in kwargs.values() if isinstance(v, TensorData)]
    op = TensorPdist(metric=metric, derive_vi=derive_vi,
                     kwargs=tuple((k, INPUT if isinstance(v, TensorData) else v) for k, v in kwargs.items()))
    m = x.shape[0]
    length = m * (m - 1) // 2 if not math.isnan(m) else math.nan
    return op.new_tensor([x, *extra], (length,), np.float64)


def _row_start(i: Any, d: int) -> Any:
    """Where row ``i``'s entries ``(i, i+1..d-1)`` start in a condensed vector of a ``d x d`` matrix."""
    return i * (2 * d - i - 1) // 2


def _bands(splits: tuple, d: int) -> list[tuple[int, int]]:
    """Row bands ``[lo, hi)`` from ``splits``; a last band of the last row alone joins the one before
    (it has no condensed entries of its own)."""
    bounds, lo = [], 0
    for s in splits:
        bounds.append((lo, lo + s))
        lo += s
    if len(bounds) > 1 and bounds[-1][0] == d - 1:
        last = bounds.pop()
        bounds[-1] = (bounds[-1][0], last[1])
    return bounds


class TensorToVector(TensorOperator):
    """Condensed entries of a band of full rows ``[lo, hi)``; with ``checks``, the band's
    columns (second input) must mirror it, and its diagonal must be zero (scipy's errors)."""

    params = ("lo", "checks")

    def execute(self, band: np.ndarray, columns: np.ndarray | None = None) -> np.ndarray:
        if self.checks:
            if not (band == columns.T).all():
                raise ValueError("Distance matrix 'X' must be symmetric.")
            if (np.diagonal(band, offset=self.lo) != 0).any():
                raise ValueError("Distance matrix 'X' diagonal must be zero.")
        parts = [band[r, self.lo + r + 1:] for r in range(band.shape[0])]
        return np.concatenate(parts) if parts else band[:0, 0]


class TensorToMatrix(TensorOperator):
    """Tile ``[rows) x [cols)`` of the square matrix of ``d x d``, from the condensed
    segment of the rows of band ``seg_lo`` (the upper one of the two bands)."""

    params = ("d", "rows", "cols", "seg_lo")

    def execute(self, segment: np.ndarray) -> np.ndarray:
        (r0, r1), (c0, c1) = self.rows, self.cols
        i = np.arange(r0, r1)[:, None]
        j = np.arange(c0, c1)[None, :]
        lo, hi = np.minimum(i, j), np.maximum(i, j)
        where = _row_start(lo, self.d) - _row_start(self.seg_lo, self.d) + (hi - lo - 1)
        off = lo == hi
        out = segment[np.where(off, 0, where)] if segment.size else np.zeros(where.shape, segment.dtype)
        out[off] = 0
        return out


class TensorSquareformVector(TensorOperator):
    """Condensed vector of a square matrix: one output chunk per row band."""

    params = ("checks",)

    @classmethod
    def tile(cls, op: TensorSquareformVector) -> Generator[Any, Any, Tiled]:
        x, out = op.inputs[0], op.outputs[0]
        yield from known_sizes([x])
        d = int(x.shape[0])
        bands = _bands(x.nsplits[0], d)
        splits = tuple(hi - lo for lo, hi in bands)
        rows = yield from rechunked(x, (splits, (d,)))
        cols = (yield from rechunked(x, ((d,), splits))) if op.checks else None
        chunks = []
        for p, (lo, hi) in enumerate(bands):
            size = int(_row_start(hi, d) - _row_start(lo, d)) if d else 0
            ins = [rows.chunks[p]] + ([cols.chunks[p]] if cols is not None else [])
            chunks.append(TensorToVector(lo=lo, checks=op.checks).new_chunk(
                ins, index=(p,), shape=(size,), dtype=out.dtype, order="C"))
        return Tiled(chunks, (tuple(c.shape[0] for c in chunks),))


class TensorSquareformMatrix(TensorOperator):
    """Square matrix of a condensed vector: tiles over row bands x row bands."""

    params = ("d",)

    @classmethod
    def tile(cls, op: TensorSquareformMatrix) -> Generator[Any, Any, Tiled]:
        v, out = op.inputs[0], op.outputs[0]
        yield from known_sizes([v])
        d = op.d
        per_band = max(1, math.ceil(max(v.nsplits[0]) / max(d, 1)))
        bands = _bands(tuple(min(per_band, d - lo) for lo in range(0, d, per_band)), d)
        segments = tuple(int(_row_start(hi, d) - _row_start(lo, d)) for lo, hi in bands)
        v = yield from rechunked(v, (segments,))
        chunks = []
        for p, rows in enumerate(bands):
            for q, cols in enumerate(bands):
                top = min(p, q)
                chunk_op = TensorToMatrix(d=d, rows=rows, cols=cols, seg_lo=bands[top][0])
                chunks.append(chunk_op.new_chunk([v.chunks[top]], index=(p, q), shape=(rows[1] - rows[0], cols[1] - cols[0]),
                                                 dtype=out.dtype, order="C"))
        splits = tuple(hi - lo for lo, hi in bands)
        return Tiled(chunks, (splits, splits))


def squareform(X: Any, force: str = "no", checks: bool = True) -> Tensor:
    """A condensed distance vector as a square matrix, or back, as ``scipy.spatial.distance.squareform``.

    With ``checks``, a matrix must be symmetric with a zero diagonal; that is
    checked as it runs (scipy's ``ValueError``).

    >>> import mars.tensor as mt
    >>> mt.spatial.distance.squareform(mt.tensor([1.0, 2.0, 3.0])).fetch()
    array([[0., 1., 2.],
           [1., 0., 3.],
           [2., 3., 0.]])
    """
    x = tensor_data(astensor(X))
    if force.lower() == "tomatrix" and x.ndim != 1:
        raise ValueError("Forcing 'tomatrix' but input X is not a distance vector.")
    if force.lower() == "tovector" and x.ndim != 2:
        raise ValueError("Forcing 'tovector' but input X is not a distance matrix.")
    if x.ndim == 1:
        length = int(x.shape[0])
        d = int(np.ceil(np.sqrt(length * 2))) if length else 1
        if length and d * (d - 1) != length * 2:
            raise ValueError("Incompatible vector size. It must be a binomial coefficient n choose 2 "
                             "for some integer n >= 2.")
        return TensorSquareformMatrix(d=d).new_tensor([x], (d, d), x.dtype)
    if x.ndim == 2:
        if x.shape[0] != x.shape[1]:
            raise ValueError("The matrix argument must be square.")
        d = int(x.shape[0])
        return TensorSquareformVector(checks=bool(checks)).new_tensor([x], (max(d * (d - 1) // 2, 0),), x.dtype)
    raise ValueError(f"The first argument must be one or two dimensional array. A {x.ndim}-dimensional array is "
                     "not permitted")
