"""Linear algebra on whole matrices: the last axes of a stack in one chunk, numpy on each.

``TensorWholeMatrix`` applies a numpy (or scipy) function to chunks that
hold the matrix axes whole; the leading (batch) axes of a single input keep
their chunks, so a stack of matrices runs chunk by chunk in parallel. With
several inputs (``solve(a, b)`` on stacks) every input is gathered into one
chunk. This is the fallback of every decomposition for a matrix that fits
one chunk, and the whole algorithm of the functions that do not scale past
one (``eig``, ``det``, ...).

Also here: numpy 2's named result tuples (``res.Q``, ``res.eigenvalues``),
built from several mars tensors, and the input checks numpy makes.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Generator, NamedTuple, Sequence

import numpy as np

from ...core.entity import has_unknown
from ...core.operator import Tiled
from ..arithmetic import ufuncs as uf
from ..base.reshape import known_sizes, rechunked
from ..base.transpose import transpose
from ..core import Tensor, TensorOperator, tensor_data
from ..datasource.core import astensor

LinAlgError = np.linalg.LinAlgError


class QRResult(NamedTuple):
    Q: Tensor
    R: Tensor


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


class EigResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


class TensorWholeMatrix(TensorOperator):
    """``func(*inputs, **kwargs)`` on chunks holding the last ``core_in`` axes whole.

    Output ``k`` has shape ``shapes[k]`` (its last ``core_out[k]`` axes made by
    ``func``, the others the batch axes) and dtype ``dtypes[k]``: carried as
    parameters, since a caller may keep some outputs and drop the others.
    """

    params = ("func", "kwargs", "core_in", "core_out", "shapes", "dtypes")
    blas = True

    @classmethod
    def tile(cls, op: TensorWholeMatrix) -> Generator[Any, Any, list[Tiled]]:
        yield from known_sizes(op.inputs)
        if len(op.inputs) > 1:
            inputs = []
            for x in op.inputs:
                inputs.append((yield from rechunked(x, tuple((s,) for s in x.shape))))
            return whole_chunk_outputs(op, [x.chunks[0] for x in inputs])
        x = op.inputs[0]
        nb = x.ndim - op.core_in
        x = yield from rechunked(x, tuple(x.nsplits[:nb]) + tuple((s,) for s in x.shape[nb:]))
        cores = [tuple(shape[len(shape) - n:]) for shape, n in zip(op.shapes, op.core_out)]
        pieces: list[list] = [[] for _ in cores]
        for c in x.chunks:
            kws = [dict(index=c.index[:nb] + (0,) * len(core), shape=tuple(c.shape[:nb]) + core, dtype=dt,
                        order="C") for core, dt in zip(cores, op.dtypes)]
            for k, piece in enumerate(op.copy().new_chunks([c], kws)):
                pieces[k].append(piece)
        return [Tiled(p, tuple(x.nsplits[:nb]) + tuple((s,) for s in core)) for p, core in zip(pieces, cores)]

    def execute(self, *inputs: np.ndarray) -> Any:
        result = self.func(*inputs, **self.kwargs)
        if len(self.dtypes) == 1:
            return np.asarray(result, dtype=self.dtypes[0])
        return tuple(np.asarray(r, dtype=dt) for r, dt in zip(result, self.dtypes))


def whole_chunk_outputs(op: TensorWholeMatrix, chunks: Sequence[Any]) -> list[Tiled]:
    """``op`` applied to ``chunks`` as one chunk op, each output one chunk of ``op.shapes[k]``."""
    kws = [dict(index=(0,) * len(shape), shape=shape, dtype=dt, order="C") for shape, dt in zip(op.shapes, op.dtypes)]
    made = op.copy().new_chunks(chunks, kws)
    return [Tiled([c], tuple((s,) for s in shape)) for c, shape in zip(made, op.shapes)]


def whole_matrix(func: Callable, inputs: Sequence[Any], outs: Sequence[tuple[tuple, Any]], core_in: int = 2,
                 core_out: Sequence[int] | None = None, **kwargs: Any) -> list[Tensor]:
    """Tensors for ``func`` on whole matrices; ``outs`` is ``(shape, dtype)`` per output.

    ``core_out`` defaults to every output axis past the input's batch axes.
    """
    data = [tensor_data(astensor(x)) for x in inputs]
    nb = data[0].ndim - core_in
    if core_out is None:
        core_out = [len(shape) - nb for shape, _ in outs]
    dtypes = tuple(np.dtype(dt) for _, dt in outs)
    shapes = tuple(tuple(shape) for shape, _ in outs)
    op = TensorWholeMatrix(func=func, kwargs=kwargs, core_in=core_in, core_out=tuple(core_out), shapes=shapes,
                           dtypes=dtypes)
    return op.new_tensors(data, [dict(shape=shape, dtype=dt) for shape, dt in zip(shapes, dtypes)])


# ----------------------------------------------------------------- checks numpy makes
def as_stacked_matrix(a: Any, square: bool = False) -> Tensor:
    """``a`` as a tensor of at least two dimensions (and square matrices), or numpy's LinAlgError."""
    t = astensor(a)
    if t.ndim < 2:
        raise LinAlgError(f"{t.ndim}-dimensional array given. Array must be at least two-dimensional")
    if square and _differ(t.shape[-1], t.shape[-2]):
        raise LinAlgError(f"Last 2 dimensions of the array must be square, got shape {tuple(t.shape)}")
    return t


def as_matrix(a: Any, square: bool = False) -> Tensor:
    """``a`` as a 2-D tensor (and a square one), or numpy's LinAlgError."""
    t = astensor(a)
    if t.ndim != 2:
        raise LinAlgError(f"{t.ndim}-dimensional array given. Array must be two-dimensional")
    return as_stacked_matrix(t, square)


def _differ(n: Any, m: Any) -> bool:
    return n != m and not (math.isnan(n) or math.isnan(m))


def probe(func: Callable, dtypes: Sequence[Any], **kwargs: Any) -> list[np.dtype]:
    """The dtypes of ``func``'s outputs for inputs of ``dtypes`` (numpy's TypeError for unsupported ones)."""
    args = [np.eye(2, dtype=dt) for dt in dtypes]
    result = func(*args, **kwargs)
    if isinstance(result, tuple):
        return [np.asarray(r).dtype for r in result]
    return [np.asarray(result).dtype]


def inexact_dtype(dtype: Any) -> np.dtype:
    """The dtype numpy's linalg computes in for input ``dtype`` (float64 for integers)."""
    return probe(np.linalg.inv, [dtype])[0]


def known_shape(t: Tensor, what: str) -> tuple[int, ...]:
    """``t``'s shape, or a clear error when it is not known before running."""
    if has_unknown(t.shape):
        raise ValueError(f"{what} needs the shape of its input, {tuple(t.shape)} is not known yet; "
                         "call .execute() on the input first")
    return tuple(int(s) for s in t.shape)


def conj_transpose(x: Tensor) -> Tensor:
    """The conjugate transpose of each matrix (the last two axes) of ``x``."""
    t = transpose(x, tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2))
    return uf.conjugate(t) if t.dtype.kind == "c" else t


def scipy_linalg() -> Any:
    """scipy.linalg, loaded on first use: ``import mars.tensor`` stays quick."""
    import scipy.linalg

    return scipy.linalg
