"""QR decomposition of tall-and-skinny matrices by TSQR, in one pass over the row chunks.

The columns are gathered into one chunk. Each row chunk ``A_i`` is factored
locally (LAPACK's geqrt: ``A_i = H_i [R_i; 0]``, with ``H_i`` kept as
Householder reflectors, not formed); the small ``R_i`` are stacked and
factored again in a second stage (``[R_0; R_1; ...] = Q2 R``); each block of
the result is ``Q_i = H_i [Q2_i; 0]``, applying the reflectors to the
matching rows of ``Q2`` (gemqrt): no local Q is ever formed and multiplied.
The second stage's input is at most ``n`` rows per chunk, whatever the
number of rows of ``A``. A row chunk shorter than ``n`` works too (its
``R_i`` has fewer rows), so any row chunking is accepted.

``mode='complete'`` adds the columns that complete each ``H_i``'s basis
(``H_i [0; I]``, one block column per row chunk, zero elsewhere): the
result is a valid complete QR, ``m x m``, up to the choice of that basis.
A matrix in one row chunk runs ``np.linalg.qr`` on it, and so do stacks
of matrices (``(..., M, N)``: the matrix axes gathered, batch axes chunked).

The SVD (``svd.py``) shares the first and last stages.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Generator, Sequence

import numpy as np

from ...core.operator import Tiled
from ..base.reshape import known_sizes, rechunked
from ..core import Tensor, TensorData, TensorOperator, tensor_data
from .whole import (QRResult, TensorWholeMatrix, as_stacked_matrix, probe, scipy_linalg, whole_chunk_outputs,
                    whole_matrix)

__all__ = ["qr"]

#: the block size of the local QR (geqrt): its reflectors are applied 64 at a time, as one block reflector
_NB = 64


# ----------------------------------------------------------------- chunk ops
class TSQRLocal(TensorOperator):
    """Householder QR of one row chunk: outputs the reflectors, their blocks' triangular factors and ``R_i``.

    LAPACK's geqrt, not geqrf: it factors each block of columns recursively,
    mostly by matrix products, where geqrf's column-by-column panels
    stream the whole tall chunk through memory for every column (2-3x
    slower on a chunk of 100 columns). The reflectors are the same.
    """

    params = ("dtype",)
    blas = True

    def execute(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        a = np.array(x, dtype=self.dtype, order="F")  # a copy of our own: geqrt writes over it
        (m, n), k = a.shape, min(a.shape)
        nb = min(k, _NB)
        t = np.empty((nb, k), dtype=self.dtype, order="F")
        _lapack("geqrt", a.dtype, m, n, nb, a, m, t, nb, np.empty(nb * n, dtype=self.dtype))
        return a, t, np.triu(a[:k])


class TSQRApplyQ(TensorOperator):
    """``H_i [W_i; 0]``: the reflectors of one row chunk applied to its block of the second stage's Q."""

    params = ("dtype",)
    blas = True

    def execute(self, factors: np.ndarray, t: np.ndarray, w: np.ndarray) -> np.ndarray:
        ct = np.zeros((w.shape[1], factors.shape[0]), dtype=self.dtype, order="F")
        ct[:, :w.shape[0]] = w.T
        return _apply_reflectors(factors, t, ct)


class TSQRComplement(TensorOperator):
    """``H_i [0; I]``: the columns completing one row chunk's basis (``mode='complete'``)."""

    params = ("dtype",)
    blas = True

    def execute(self, factors: np.ndarray, t: np.ndarray) -> np.ndarray:
        rows, k = factors.shape[0], t.shape[1]
        ct = np.zeros((rows - k, rows), dtype=self.dtype, order="F")
        ct[:, k:] = np.eye(rows - k, dtype=self.dtype)
        return _apply_reflectors(factors, t, ct)


class TSQRStackQR(TensorOperator):
    """The second stage: QR of the stacked ``R_i``; outputs ``R`` then (unless mode 'r') ``Q2``'s row blocks."""

    params = ("mode", "splits")
    blas = True

    def execute(self, *rs: np.ndarray) -> Any:
        stacked = np.concatenate(rs)
        if self.mode == "r":
            return np.linalg.qr(stacked, mode="r")
        q2, r = np.linalg.qr(stacked, mode=self.mode)
        return (r, *row_blocks(q2, self.splits))


class ZerosBlock(TensorOperator):
    """A block of zeros (the parts of a complete Q or R that are known to be zero)."""

    params = ("shape", "dtype")

    def execute(self) -> np.ndarray:
        return np.zeros(self.shape, dtype=self.dtype)


def _apply_reflectors(factors: np.ndarray, t: np.ndarray, ct: np.ndarray) -> np.ndarray:
    """``H C`` in C order, given ``ct``: the transpose of ``C`` (Fortran order), which is overwritten.

    It is computed transposed, ``(H C)^T = C^T H^T`` (gemqrt from the right),
    so that the result's Fortran-order transpose is the C-order ``H C``: a
    Q assembled from C-order blocks is a plain copy, where Fortran-order
    blocks cost a strided one. For complex values, ``conj(C^T) H^H``.
    """
    complex_ = np.iscomplexobj(factors)
    if complex_:
        np.conjugate(ct, out=ct)
    (nb, k), (rows, cols) = t.shape, ct.shape
    _lapack("gemqrt", ct.dtype, b"R", b"C" if complex_ else b"T", rows, cols, k, nb, np.asfortranarray(factors),
            cols, np.asfortranarray(t), nb, ct, rows, np.empty(rows * nb, dtype=ct.dtype))
    if complex_:
        np.conjugate(ct, out=ct)
    return ct.T


#: LAPACK's prefix for each dtype
_PREFIX = {np.dtype(np.float32): "s", np.dtype(np.float64): "d", np.dtype(np.complex64): "c",
           np.dtype(np.complex128): "z"}


def _lapack(routine: str, dtype: np.dtype, *args: Any) -> None:
    """LAPACK's ``routine`` for ``dtype`` on ``args``, each passed by reference (``info`` is added here).

    Called through ctypes, which lets go of the GIL during the call, where
    scipy's own geqrt and gemqrt hold it: chunk threads then factor side by
    side instead of taking turns. Arrays must be Fortran-ordered.
    """
    import ctypes

    info = ctypes.c_int(0)
    refs = [a.ctypes.data if isinstance(a, np.ndarray) else
            ctypes.byref(ctypes.c_char(a) if isinstance(a, bytes) else ctypes.c_int(a)) for a in args]
    _lapack_function(_PREFIX[np.dtype(dtype)] + routine, len(args) + 1)(*refs, ctypes.byref(info))
    _check_info(info.value, routine)


@functools.cache
def _lapack_function(name: str, n_args: int) -> Any:
    """The LAPACK function ``name`` that scipy exports to Cython (scipy.linalg.cython_lapack), for ctypes."""
    import ctypes

    from scipy.linalg import cython_lapack  # scipy loads on first use: import mars.tensor stays quick

    capsule = cython_lapack.__pyx_capi__[name]
    capsule_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(("PyCapsule_GetName", ctypes.pythonapi))
    pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
        ("PyCapsule_GetPointer", ctypes.pythonapi))
    return ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * n_args)(pointer(capsule, capsule_name(capsule)))


def _check_info(info: int, routine: str) -> None:
    if info != 0:  # only a bad argument makes these fail: a bug here, not bad data
        raise np.linalg.LinAlgError(f"LAPACK {routine} failed with info={info}")


def row_blocks(x: np.ndarray, splits: Sequence[int]) -> list[np.ndarray]:
    """``x`` cut into consecutive row blocks of ``splits`` rows."""
    bounds = np.cumsum([0, *splits])
    return [x[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]


# ----------------------------------------------------------------- tiling, shared with the SVD
def tall_chunks(a: TensorData) -> Generator[Any, Any, TensorData]:
    """``a`` with its columns in one chunk and no empty row chunks."""
    # loaded now, before the run limits each BLAS library's threads: one loaded during the run would keep
    # all its threads in every chunk thread (oversubscribed cores made a first run several times slower)
    scipy_linalg()
    yield from known_sizes([a])
    rows = tuple(s for s in a.nsplits[0] if s) or (a.shape[0],)
    if 0 in a.shape:  # nothing to factor: numpy's empty results, from one chunk
        rows = (a.shape[0],)
    return (yield from rechunked(a, (rows, (a.shape[1],))))


def local_stage(a: TensorData, dtype: np.dtype) -> tuple[list[tuple], list[int]]:
    """TSQR's first stage on each row chunk: ``(factors, t, R_i)`` chunks, and the rows of each ``R_i``."""
    n = a.shape[1]
    made, ks = [], []
    for c in a.chunks:
        rows, k = c.shape[0], min(c.shape[0], n)
        kws = [dict(index=c.index, shape=(rows, n), dtype=dtype, order="F"),
               dict(index=c.index, shape=(min(k, _NB), k), dtype=dtype, order="F"),
               dict(index=c.index, shape=(k, n), dtype=dtype, order="C")]
        made.append(tuple(TSQRLocal(dtype=dtype).new_chunks([c], kws)))
        ks.append(k)
    return made, ks


def q_chunks(locals_: Sequence[tuple], ws: Sequence[Any], dtype: np.dtype, complete: bool) -> tuple[list, tuple]:
    """The blocks of Q (or U) from the first stage's reflectors and the second stage's blocks ``ws``."""
    width = ws[0].shape[1]
    extra = [(i, f.shape[0] - t.shape[1]) for i, (f, t, _) in enumerate(locals_) if f.shape[0] > t.shape[1]]
    extra = extra if complete else []
    chunks = []
    for i, ((factors, t, _), w) in enumerate(zip(locals_, ws)):
        rows = factors.shape[0]
        chunks.append(TSQRApplyQ(dtype=dtype).new_chunk([factors, t, w], index=(i, 0), shape=(rows, width),
                                                        dtype=dtype, order="C"))
        for col, (j, n_extra) in enumerate(extra, start=1):
            meta = dict(index=(i, col), shape=(rows, n_extra), dtype=dtype, order="C")
            if i == j:
                chunks.append(TSQRComplement(dtype=dtype).new_chunk([factors, t], **meta))
            else:
                chunks.append(ZerosBlock(shape=(rows, n_extra), dtype=dtype).new_chunk([], **meta))
    nsplits = (tuple(f.shape[0] for f, _, _ in locals_), (width,) + tuple(n for _, n in extra))
    return chunks, nsplits


def padded_rows(block: Any, rows: int, dtype: np.dtype) -> tuple[list, tuple]:
    """``block`` (of a one-column-chunk matrix) with zero rows below it up to ``rows`` in all."""
    n_top, n = block.shape
    chunks = [block]
    if rows > n_top:
        chunks.append(ZerosBlock(shape=(rows - n_top, n), dtype=dtype).new_chunk(
            [], index=(1, 0), shape=(rows - n_top, n), dtype=dtype, order="C"))
    return chunks, ((n_top, rows - n_top) if rows > n_top else (n_top,), (n,))


# ----------------------------------------------------------------- the tileable op
class TensorTSQR(TensorOperator):
    """``np.linalg.qr`` of a 2-D tensor by TSQR; outputs Q and R (R alone for mode 'r')."""

    params = ("mode", "dtypes")

    @classmethod
    def tile(cls, op: TensorTSQR) -> Generator[Any, Any, list[Tiled]]:
        a = yield from tall_chunks(op.inputs[0])
        dtype = op.dtypes[-1]
        if len(a.chunks) == 1:
            return _one_chunk_qr(op, a)
        locals_, ks = local_stage(a, dtype)
        m, n = a.shape
        complete = op.mode == "complete"
        width = sum(ks) if complete else min(sum(ks), n)
        r_rows = sum(ks) if complete else width
        kws = [dict(index=(0, 0), shape=(r_rows, n), dtype=dtype, order="C")]
        if op.mode != "r":
            kws += [dict(index=(i, 0), shape=(k, width), dtype=dtype, order="C") for i, k in enumerate(ks)]
        stage = TSQRStackQR(mode=op.mode, splits=tuple(ks)).new_chunks([r for _, _, r in locals_], kws)
        r_chunks, r_nsplits = padded_rows(stage[0], m, dtype) if complete else ([stage[0]], ((r_rows,), (n,)))
        if op.mode == "r":
            return [Tiled(r_chunks, r_nsplits)]
        q, q_nsplits = q_chunks(locals_, stage[1:], dtype, complete)
        return [Tiled(q, q_nsplits), Tiled(r_chunks, r_nsplits)]


def _one_chunk_qr(op: TensorTSQR, a: TensorData) -> list[Tiled]:
    chunk_op = TensorWholeMatrix(func=np.linalg.qr, kwargs={"mode": op.mode}, core_in=2,
                                 core_out=(2,) * len(op.dtypes), shapes=tuple(_qr_shapes(*a.shape, op.mode)),
                                 dtypes=op.dtypes)
    return whole_chunk_outputs(chunk_op, a.chunks)


def _qr_shapes(m: Any, n: Any, mode: str) -> list[tuple]:
    k = min(m, n) if not (math.isnan(m) or math.isnan(n)) else math.nan
    if mode == "complete":
        return [(m, m), (m, n)]
    if mode == "r":
        return [(k, n)]
    return [(m, k), (k, n)]


_MODES = ("reduced", "complete", "r")


def qr(a: Any, mode: str = "reduced") -> QRResult | Tensor:
    """QR decomposition, as ``np.linalg.qr``: ``(Q, R)`` as a named tuple, or ``R`` alone for ``mode='r'``.

    A 2-D tensor in several row chunks is factored by TSQR (one pass over the
    row chunks, see the module's notes): Q and R equal numpy's up to the signs
    of Q's columns and R's rows. A single row chunk, or a stack of matrices
    (``(..., M, N)``, whole matrices per chunk), runs ``np.linalg.qr`` itself.

    >>> import numpy as np, mars.tensor as mt
    >>> a = mt.tensor(np.arange(12.).reshape(6, 2) ** 2, chunk_size=(3, 1))
    >>> q, r = mt.linalg.qr(a)
    >>> q.shape, r.shape
    ((6, 2), (2, 2))
    >>> bool(np.allclose((q @ r).execute().fetch(), a.execute().fetch()))
    True
    """
    if mode == "raw":
        raise NotImplementedError("qr(mode='raw') is not supported; use mode='reduced' or 'complete'")
    if mode not in _MODES:
        raise ValueError(f"Unrecognized mode '{mode}'; qr takes one of {_MODES}")
    t = as_stacked_matrix(a)
    dtypes = probe(np.linalg.qr, [t.dtype], mode=mode)
    if t.ndim > 2:
        shapes = [tuple(t.shape[:-2]) + s for s in _qr_shapes(*t.shape[-2:], mode)]
        outs = whole_matrix(np.linalg.qr, [t], list(zip(shapes, dtypes)), mode=mode)
    else:
        kws = [dict(shape=s, dtype=dt) for s, dt in zip(_qr_shapes(*t.shape, mode), dtypes)]
        outs = TensorTSQR(mode=mode, dtypes=tuple(dtypes)).new_tensors([tensor_data(t)], kws)
    return outs[0] if mode == "r" else QRResult(*outs)
