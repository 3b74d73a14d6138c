"""Joining and splitting: ``concatenate``/``stack`` and friends, ``split`` and friends.

``concatenate`` moves no data: the inputs' chunks are placed side by side in
the output grid along the axis (inputs cast to the common dtype first). Off
the axis, inputs are rechunked to the grid of the one with most chunks.
``split`` slices along the axis: chunks inside one piece are reused, chunks
cut by a split point are sliced.
"""

from __future__ import annotations

import bisect
import math
import operator
from typing import Any, Generator, Sequence

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ...core.entity import has_unknown
from ...core.operator import Tiled
from ..arithmetic.core import astype
from ..chunks import offsets
from ..core import Tensor, TensorData, TensorOperator, tensor_data
from ..datasource.core import astensor
from ..rechunk import reindexed
from .reshape import known_sizes, rechunked
from .shape import atleast_1d, atleast_2d, atleast_3d, expand_dims, ravel

__all__ = [
    "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack",
    "split", "array_split", "hsplit", "vsplit", "dsplit",
]


# ----------------------------------------------------------------- concatenate
class TensorConcatenate(TensorOperator):
    """The inputs side by side along ``axis``: their chunks, re-indexed (no chunk op of its own)."""

    params = ("axis",)

    @classmethod
    def tile(cls, op: TensorConcatenate) -> Generator[Any, Any, Tiled]:
        axis, inputs = op.axis, list(op.inputs)
        others = [d for d in range(inputs[0].ndim) if d != axis]
        if len(inputs) > 1:
            # unknown sizes off the axis may differ between inputs: compute them to align
            yield from known_sizes(inputs, others)
            check_same_shapes([inp.shape for inp in inputs], axis)
        if any(len({inp.nsplits[d] for inp in inputs}) > 1 for d in others):
            inputs = yield from _aligned(inputs, others)
        nsplits = list(inputs[0].nsplits)
        nsplits[axis] = tuple(s for inp in inputs for s in inp.nsplits[axis])
        owners = [(inp, j) for inp in inputs for j in range(inp.chunk_shape[axis])]
        chunks = []
        for index in np.ndindex(*[len(s) for s in nsplits]):
            inp, j = owners[index[axis]]
            chunks.append(reindexed(inp.chunk_at(index[:axis] + (j,) + index[axis + 1:]), index))
        return Tiled(chunks, tuple(nsplits))


def _aligned(inputs: list[TensorData], dims: Sequence[int]) -> Generator[Any, Any, list[TensorData]]:
    """Inputs rechunked to the grid of the one with most chunks on ``dims`` (so it moves no data)."""
    largest = max(inputs, key=lambda inp: math.prod(inp.chunk_shape))
    target = {d: largest.nsplits[d] for d in dims}
    result = []
    for inp in inputs:
        want = tuple(target.get(d, s) for d, s in enumerate(inp.nsplits))
        result.append((yield from rechunked(inp, want)))
    return result


def check_same_shapes(shapes: Sequence[tuple], axis: int) -> None:
    """numpy's concatenate errors for inputs that differ off ``axis`` (unknown sizes pass)."""
    first = shapes[0]
    for i, shape in enumerate(shapes[1:], 1):
        if len(shape) != len(first):
            raise ValueError(
                "all the input arrays must have same number of dimensions, but the array at index 0 has "
                f"{len(first)} dimension(s) and the array at index {i} has {len(shape)} dimension(s)"
            )
        for d, (a, b) in enumerate(zip(first, shape)):
            if d != axis and a != b and not has_unknown((a, b)):
                raise ValueError(
                    "all the input array dimensions except for the concatenation axis must match exactly, "
                    f"but along dimension {d}, the array at index 0 has size {a} "
                    f"and the array at index {i} has size {b}"
                )


def _joined_shape(shapes: Sequence[tuple], axis: int) -> tuple:
    def known(values: list) -> Any:
        return next((v for v in values if not has_unknown((v,))), math.nan)

    shape = [known([s[d] for s in shapes]) for d in range(len(shapes[0]))]
    lengths = [s[axis] for s in shapes]
    shape[axis] = math.nan if has_unknown(lengths) else sum(lengths)
    return tuple(shape)


def _common_dtype(tensors: Sequence[Tensor], dtype: Any, casting: str) -> np.dtype:
    result = np.result_type(*(t.dtype for t in tensors)) if dtype is None else np.dtype(dtype)
    for t in tensors:
        if not np.can_cast(t.dtype, result, casting=casting):
            raise TypeError(
                f"Cannot cast array data from dtype('{t.dtype}') to dtype('{result}') according to the rule '{casting}'"
            )
    return result


def _into(out: Any, result: Tensor) -> Tensor:
    if not isinstance(out, Tensor):
        raise TypeError(f"out must be a mars Tensor, got {type(out).__name__}")
    if tuple(out.shape) != tuple(result.shape):
        raise ValueError(f"Output array is the wrong shape: {out.shape}, the result has {result.shape}")
    out.data = result.data
    return out


def concatenate(arrays: Sequence[Any], axis: int | None = 0, out: Any = None, *, dtype: Any = None,
                casting: str = "same_kind") -> Tensor:
    """The inputs joined along an existing ``axis`` (flattened first when None), as ``np.concatenate``.

    The dtype is numpy's ``result_type`` of the inputs unless ``dtype`` (or ``out``) gives one.

    >>> import mars.tensor as mt
    >>> mt.concatenate([mt.ones((2, 3), chunk_size=2), mt.zeros((1, 3))]).shape
    (3, 3)
    """
    if out is not None and dtype is not None:
        raise TypeError("concatenate() only takes `out` or `dtype` as an argument, but both were provided.")
    tensors = [astensor(a) for a in arrays]
    if not tensors:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        tensors, axis = [ravel(t) for t in tensors], 0
    if tensors[0].ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = normalize_axis_index(operator.index(axis), tensors[0].ndim)
    check_same_shapes([t.shape for t in tensors], axis)
    result_dtype = _common_dtype(tensors, out.dtype if out is not None else dtype, casting)
    tensors = [t if t.dtype == result_dtype else astype(t, result_dtype) for t in tensors]
    if len(tensors) == 1:
        result = Tensor(tensors[0].data)  # a new holder, as numpy returns a copy
    else:
        shape = _joined_shape([t.shape for t in tensors], axis)
        result = TensorConcatenate(axis=axis).new_tensor([t.data for t in tensors], shape, result_dtype)
    return _into(out, result) if out is not None else result


def stack(arrays: Sequence[Any], axis: int = 0, out: Any = None, *, dtype: Any = None,
          casting: str = "same_kind") -> Tensor:
    """The inputs (all of one shape) joined along a new ``axis``, as ``np.stack``.

    >>> import mars.tensor as mt
    >>> mt.stack([mt.ones(3), mt.zeros(3)], axis=1).shape
    (3, 2)
    """
    tensors = [astensor(a) for a in arrays]
    if not tensors:
        raise ValueError("need at least one array to stack")
    first = tensors[0].shape
    for t in tensors[1:]:
        if len(t.shape) != len(first) or any(a != b and not has_unknown((a, b)) for a, b in zip(first, t.shape)):
            raise ValueError("all input arrays must have the same shape")
    axis = normalize_axis_index(operator.index(axis), len(first) + 1)
    return concatenate([expand_dims(t, axis) for t in tensors], axis, out, dtype=dtype, casting=casting)


def hstack(tup: Sequence[Any], *, dtype: Any = None, casting: str = "same_kind") -> Tensor:
    """The inputs joined column-wise (along axis 0 for 1-d inputs, else 1), as ``np.hstack``.

    >>> import mars.tensor as mt
    >>> mt.hstack([mt.ones((2, 1)), mt.zeros((2, 3))]).shape
    (2, 4)
    """
    arrs = [atleast_1d(a) for a in tup]
    axis = 0 if arrs and arrs[0].ndim == 1 else 1
    return concatenate(arrs, axis, dtype=dtype, casting=casting)


def vstack(tup: Sequence[Any], *, dtype: Any = None, casting: str = "same_kind") -> Tensor:
    """The inputs (1-d ones as rows) joined along axis 0, as ``np.vstack``.

    >>> import mars.tensor as mt
    >>> mt.vstack([mt.ones(3), mt.zeros(3)]).shape
    (2, 3)
    """
    return concatenate([atleast_2d(a) for a in tup], 0, dtype=dtype, casting=casting)


def dstack(tup: Sequence[Any]) -> Tensor:
    """The inputs (made at least 3-d) joined along axis 2, as ``np.dstack``.

    >>> import mars.tensor as mt
    >>> mt.dstack([mt.ones((2, 3)), mt.zeros((2, 3))]).shape
    (2, 3, 2)
    """
    return concatenate([atleast_3d(a) for a in tup], 2)


def column_stack(tup: Sequence[Any]) -> Tensor:
    """1-d inputs as columns, 2-d ones as they are, joined along axis 1, as ``np.column_stack``.

    >>> import mars.tensor as mt
    >>> mt.column_stack([mt.ones(3), mt.zeros((3, 2))]).shape
    (3, 3)
    """
    arrs = []
    for a in tup:
        t = astensor(a)
        arrs.append(expand_dims(t, (0, 1) if t.ndim == 0 else 1) if t.ndim < 2 else t)
    return concatenate(arrs, 1)


# ----------------------------------------------------------------- split
class AxisSliceChunk(TensorOperator):
    """The chunk op of a split: ``x[..., start:stop, ...]`` along ``axis``."""

    params = ("axis", "start", "stop")
    fusible = True

    def execute(self, x: np.ndarray) -> np.ndarray:
        return x[(slice(None),) * self.axis + (slice(self.start, self.stop),)]


class TensorSplit(TensorOperator):
    """One output per piece of ``axis``; ``indices_or_sections`` as numpy takes it."""

    params = ("axis", "indices_or_sections", "equal")

    @classmethod
    def tile(cls, op: TensorSplit) -> Generator[Any, Any, list[Tiled]]:
        inp, axis = op.inputs[0], op.axis
        if has_unknown(inp.nsplits[axis]):
            yield inp.chunks
            inp.refresh_shape()
        bounds = split_bounds(int(inp.shape[axis]), op.indices_or_sections, op.equal)
        return [_slice_along(inp, axis, start, stop) for start, stop in bounds]


def _slice_along(inp: TensorData, axis: int, start: int, stop: int) -> Tiled:
    """Chunks of ``inp[..., start:stop, ...]``: whole chunks reused, cut ones sliced."""
    sizes = inp.nsplits[axis]
    starts = offsets(sizes)
    pieces = []
    j = max(0, bisect.bisect_right(starts, start) - 1)
    while j < len(sizes) and starts[j] < stop:
        lo, hi = max(start, starts[j]) - starts[j], min(stop, starts[j] + sizes[j]) - starts[j]
        if hi > lo:
            pieces.append((j, lo, hi))
        j += 1
    if not pieces:
        pieces = [(0, 0, 0)]
    nsplits = list(inp.nsplits)
    nsplits[axis] = tuple(hi - lo for _, lo, hi in pieces)
    chunks = []
    for index in np.ndindex(*[len(s) for s in nsplits]):
        j, lo, hi = pieces[index[axis]]
        src = inp.chunk_at(index[:axis] + (j,) + index[axis + 1:])
        if lo == 0 and hi == sizes[j]:
            chunks.append(reindexed(src, index))
            continue
        shape = src.shape[:axis] + (hi - lo,) + src.shape[axis + 1:]
        chunk_op = AxisSliceChunk(axis=axis, start=lo, stop=hi)
        chunks.append(chunk_op.new_chunk([src], index=index, shape=shape, dtype=src.dtype, order=src.order))
    return Tiled(chunks, tuple(nsplits))


def split_bounds(length: int, indices_or_sections: Any, equal: bool) -> list[tuple[int, int]]:
    """(start, stop) of each piece, with numpy's errors; indices are slice bounds (negative, past the end)."""
    if isinstance(indices_or_sections, tuple):
        points = [0, *indices_or_sections, length]
    else:
        sections = indices_or_sections
        if equal and length % sections:
            raise ValueError("array split does not result in an equal division")
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = divmod(length, sections)
        points = offsets([each + 1] * extra + [each] * (sections - extra)) + [length]
    bounds = []
    for lo, hi in zip(points[:-1], points[1:]):
        start, stop, _ = slice(lo, hi).indices(length)
        bounds.append((start, max(start, stop)))
    return bounds


def _split(a: Any, indices_or_sections: Any, axis: int, equal: bool) -> list[Tensor]:
    data = tensor_data(astensor(a))
    axis = normalize_axis_index(operator.index(axis), data.ndim)
    try:
        spec: Any = tuple(operator.index(i) for i in indices_or_sections)
    except TypeError:
        spec = int(indices_or_sections)
    length = data.shape[axis]
    if has_unknown((length,)):
        # sizes come at tile time; a probe on an empty axis raises numpy's errors for bad sections now
        count = len(split_bounds(0, spec, equal))
        lengths: list[Any] = [math.nan] * count
    else:
        lengths = [stop - start for start, stop in split_bounds(int(length), spec, equal)]
    op = TensorSplit(axis=axis, indices_or_sections=spec, equal=equal)
    kws = [{"shape": data.shape[:axis] + (n,) + data.shape[axis + 1:], "dtype": data.dtype, "order": data.order}
           for n in lengths]
    return op.new_tensors([data], kws)


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Tensor]:
    """``ary`` cut along ``axis`` into equal sections or at indices, as ``np.split``.

    >>> import mars.tensor as mt
    >>> [t.shape for t in mt.split(mt.ones(6, chunk_size=4), [1, 3])]
    [(1,), (2,), (3,)]
    """
    return _split(ary, indices_or_sections, axis, equal=True)


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Tensor]:
    """Like :func:`split`, but sections need not divide the axis (the first ones are one longer).

    >>> import mars.tensor as mt
    >>> [t.shape for t in mt.array_split(mt.ones(5), 2)]
    [(3,), (2,)]
    """
    return _split(ary, indices_or_sections, axis, equal=False)


def _check_ndim(ary: Any, name: str, least: int) -> Tensor:
    t = astensor(ary)
    if t.ndim < least:
        raise ValueError(f"{name} only works on arrays of {least} or more dimensions")
    return t


def hsplit(ary: Any, indices_or_sections: Any) -> list[Tensor]:
    """:func:`split` along axis 1 (axis 0 for 1-d input), as ``np.hsplit``.

    >>> import mars.tensor as mt
    >>> len(mt.hsplit(mt.ones((2, 4)), 2))
    2
    """
    t = _check_ndim(ary, "hsplit", 1)
    return split(t, indices_or_sections, 1 if t.ndim > 1 else 0)


def vsplit(ary: Any, indices_or_sections: Any) -> list[Tensor]:
    """:func:`split` along axis 0 of an input of 2 or more dims, as ``np.vsplit``.

    >>> import mars.tensor as mt
    >>> len(mt.vsplit(mt.ones((4, 2)), [1]))
    2
    """
    return split(_check_ndim(ary, "vsplit", 2), indices_or_sections, 0)


def dsplit(ary: Any, indices_or_sections: Any) -> list[Tensor]:
    """:func:`split` along axis 2 of an input of 3 or more dims, as ``np.dsplit``.

    >>> import mars.tensor as mt
    >>> len(mt.dsplit(mt.ones((2, 2, 4)), 2))
    2
    """
    return split(_check_ndim(ary, "dsplit", 3), indices_or_sections, 2)
