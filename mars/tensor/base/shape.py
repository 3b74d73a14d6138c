"""Shape manipulation: reshape and ravel, squeeze and expand_dims, moving axes,
``atleast_nd``, ``broadcast_to`` and ``repeat``.

Ops that only add or drop size-1 dimensions map each input chunk to one
output chunk; ``reshape`` plans its chunk grids in :mod:`.reshape`; axis
moves are transposes.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Generator, Sequence

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from ...core.entity import has_unknown
from ...core.operator import Tiled
from ..arithmetic.core import broadcast_shapes
from ..chunks import normalize_chunk_sizes, offsets
from ..core import Tensor, TensorData, TensorOperator, tensor_data
from ..datasource.core import astensor
from .reshape import TensorReshape, known_sizes, rechunked, resolve_newshape
from .transpose import transpose

__all__ = [
    "reshape", "ravel", "flatten", "squeeze", "expand_dims", "swapaxes", "moveaxis",
    "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_to", "broadcast_arrays", "repeat",
]


def _whole_dims(inp: TensorData, dims: Sequence[int]) -> Generator[Any, Any, TensorData]:
    """``inp`` with one chunk along ``dims`` (size-1 dims can hold empty chunks after a filter)."""
    if all(len(inp.nsplits[d]) == 1 for d in dims):
        return inp
    nsplits = tuple((inp.shape[d],) if d in dims else s for d, s in enumerate(inp.nsplits))
    return (yield from rechunked(inp, nsplits))


# ----------------------------------------------------------------- reshape
def _as_shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(operator.index(s) for s in shape)


def _reshape_order(order: Any, data: TensorData) -> str:
    if order is None or order == "C":
        return "C"
    if order == "K":
        raise ValueError("order 'K' is not permitted for reshaping")
    if order not in ("F", "A"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    return "F" if order == "F" or data.order == "F" else "C"


def reshape(a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None) -> Tensor:
    """``a`` with a new shape (one dimension may be -1), as ``np.reshape``.

    Chunks are reshaped one by one where they line up with the new shape; the
    input is rechunked first where they do not.

    >>> import mars.tensor as mt
    >>> mt.ones((4, 6), chunk_size=2).reshape(3, -1).shape
    (3, 8)
    """
    if shape is None:
        shape = newshape
    if shape is None:
        raise TypeError("reshape() missing required argument 'shape' (pos 2)")
    t = astensor(a)
    data = tensor_data(t)
    newshape = _as_shape(shape)
    if _reshape_order(order, data) == "F":
        return transpose(reshape(transpose(t), newshape[::-1]))
    out_shape = resolve_newshape(data.shape, newshape)
    if out_shape == tuple(data.shape):
        return Tensor(data)  # a new holder: setting items on the result leaves ``a`` alone
    op = TensorReshape(newshape=newshape if has_unknown(out_shape) else out_shape)
    return op.new_tensor([data], out_shape, data.dtype)


def ravel(a: Any, order: str = "C") -> Tensor:
    """``a`` flattened to one dimension, as ``np.ravel``.

    >>> import mars.tensor as mt
    >>> mt.ones((2, 3), chunk_size=2).ravel().shape
    (6,)
    """
    if order == "K":
        order = "A"
    return reshape(a, -1, order=order)


def flatten(a: Any, order: str = "C") -> Tensor:
    """``a`` flattened to one dimension (``ndarray.flatten``; results never share memory here).

    >>> import mars.tensor as mt
    >>> mt.ones((2, 3)).flatten().shape
    (6,)
    """
    return ravel(a, order=order)


# ----------------------------------------------------------------- size-1 dims
class TensorSqueeze(TensorOperator):
    """Drop size-1 dims ``axis``: chunk (i, 0, j) becomes chunk (i, j)."""

    params = ("axis",)
    fusible = True

    @classmethod
    def tile(cls, op: TensorSqueeze) -> Generator[Any, Any, Tiled]:
        inp, out = op.inputs[0], op.outputs[0]
        yield from known_sizes([inp], op.axis)
        for d in op.axis:
            if inp.shape[d] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
        inp = yield from _whole_dims(inp, op.axis)
        keep = [d for d in range(inp.ndim) if d not in op.axis]
        chunks = []
        for c in inp.chunks:
            index, shape = tuple(c.index[d] for d in keep), tuple(c.shape[d] for d in keep)
            chunks.append(op.copy().new_chunk([c], index=index, shape=shape, dtype=out.dtype, order=out.order))
        return Tiled(chunks, tuple(inp.nsplits[d] for d in keep))

    def execute(self, x: np.ndarray) -> np.ndarray:
        return np.squeeze(x, self.axis)


class TensorExpandDims(TensorOperator):
    """Insert size-1 dims at ``axis`` (positions in the output), each one chunk."""

    params = ("axis",)
    fusible = True

    @classmethod
    def tile(cls, op: TensorExpandDims) -> Tiled:
        inp, out = op.inputs[0], op.outputs[0]
        chunks = []
        for c in inp.chunks:
            index, shape = _insert_ones(c.index, op.axis, 0), _insert_ones(c.shape, op.axis, 1)
            chunks.append(op.copy().new_chunk([c], index=index, shape=shape, dtype=out.dtype, order=out.order))
        return Tiled(chunks, _insert_ones(inp.nsplits, op.axis, (1,)))

    def execute(self, x: np.ndarray) -> np.ndarray:
        return np.expand_dims(x, self.axis)


def _insert_ones(values: Sequence, axes: Sequence[int], fill: Any) -> tuple:
    result, it = [], iter(values)
    for d in range(len(values) + len(axes)):
        result.append(fill if d in axes else next(it))
    return tuple(result)


def squeeze(a: Any, axis: Any = None) -> Tensor:
    """``a`` without its size-1 dimensions (or just ``axis``), as ``np.squeeze``.

    Dimensions whose size is unknown until run are kept unless named in ``axis``.

    >>> import mars.tensor as mt
    >>> mt.ones((1, 3, 1)).squeeze().shape
    (3,)
    """
    t = astensor(a)
    data = tensor_data(t)
    if axis is None:
        axes = tuple(d for d, s in enumerate(data.shape) if s == 1)
    else:
        axes = tuple(sorted(normalize_axis_tuple(axis, data.ndim)))
        if any(data.shape[d] != 1 and not has_unknown((data.shape[d],)) for d in axes):
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    if not axes:
        return Tensor(data)
    shape = tuple(s for d, s in enumerate(data.shape) if d not in axes)
    return TensorSqueeze(axis=axes).new_tensor([data], shape, data.dtype, order=data.order)


def expand_dims(a: Any, axis: Any) -> Tensor:
    """``a`` with new size-1 dimensions at ``axis`` (an int or a tuple), as ``np.expand_dims``.

    >>> import mars.tensor as mt
    >>> mt.expand_dims(mt.ones((2, 3)), (0, -1)).shape
    (1, 2, 3, 1)
    """
    data = tensor_data(astensor(a))
    n_new = len(axis) if isinstance(axis, (tuple, list)) else 1
    axes = tuple(sorted(normalize_axis_tuple(axis, data.ndim + n_new)))
    shape = _insert_ones(data.shape, axes, 1)
    return TensorExpandDims(axis=axes).new_tensor([data], shape, data.dtype, order=data.order)


# ----------------------------------------------------------------- moving axes
def swapaxes(a: Any, axis1: int, axis2: int) -> Tensor:
    """``a`` with two axes swapped, as ``np.swapaxes``.

    >>> import mars.tensor as mt
    >>> mt.ones((2, 3, 4)).swapaxes(0, 2).shape
    (4, 3, 2)
    """
    ndim = tensor_data(astensor(a)).ndim
    axis1 = normalize_axis_index(operator.index(axis1), ndim, "axis1")
    axis2 = normalize_axis_index(operator.index(axis2), ndim, "axis2")
    perm = list(range(ndim))
    perm[axis1], perm[axis2] = axis2, axis1
    return transpose(a, perm)


def moveaxis(a: Any, source: Any, destination: Any) -> Tensor:
    """``a`` with axes ``source`` moved to ``destination``, the others kept in order, as ``np.moveaxis``.

    >>> import mars.tensor as mt
    >>> mt.moveaxis(mt.ones((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    ndim = tensor_data(astensor(a)).ndim
    source = normalize_axis_tuple(source, ndim, "source")
    destination = normalize_axis_tuple(destination, ndim, "destination")
    if len(source) != len(destination):
        raise ValueError("`source` and `destination` arguments must have the same number of elements")
    order = [d for d in range(ndim) if d not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return transpose(a, order)


# ----------------------------------------------------------------- atleast_nd
#: where ``atleast_{n}d`` puts new axes, by the input's ndim
_NEW_AXES = {
    1: {0: (0,)},
    2: {0: (0, 1), 1: (0,)},
    3: {0: (0, 1, 2), 1: (0, 2), 2: (2,)},
}


def _atleast(n: int, arys: Sequence[Any]) -> Any:
    result = []
    for a in arys:
        t = astensor(a)
        axes = _NEW_AXES[n].get(t.ndim)
        result.append(expand_dims(t, axes) if axes else t)
    return result[0] if len(result) == 1 else tuple(result)


def atleast_1d(*arys: Any) -> Any:
    """Each input as a tensor of at least one dimension (a tuple when several), as ``np.atleast_1d``.

    >>> import mars.tensor as mt
    >>> mt.atleast_1d(5).shape
    (1,)
    """
    return _atleast(1, arys)


def atleast_2d(*arys: Any) -> Any:
    """Each input with at least two dimensions (1-d ``(N,)`` becomes ``(1, N)``), as ``np.atleast_2d``.

    >>> import mars.tensor as mt
    >>> mt.atleast_2d(mt.ones(3)).shape
    (1, 3)
    """
    return _atleast(2, arys)


def atleast_3d(*arys: Any) -> Any:
    """Each input with at least three dimensions (``(N,)`` → ``(1, N, 1)``, ``(M, N)`` → ``(M, N, 1)``).

    >>> import mars.tensor as mt
    >>> mt.atleast_3d(mt.ones((2, 3))).shape
    (2, 3, 1)
    """
    return _atleast(3, arys)


# ----------------------------------------------------------------- broadcasting
class TensorBroadcastTo(TensorOperator):
    """Each chunk broadcast (a read-only view, as numpy's) to its part of ``shape``."""

    params = ("shape",)
    fusible = True

    @classmethod
    def tile(cls, op: TensorBroadcastTo) -> Generator[Any, Any, Tiled]:
        inp, out = op.inputs[0], op.outputs[0]
        yield from known_sizes([inp], range(inp.ndim))
        lead = len(op.shape) - inp.ndim
        stretched = [d for d in range(inp.ndim) if inp.shape[d] == 1 and op.shape[lead + d] != 1]
        _check_broadcast(inp.shape, op.shape)
        inp = yield from _whole_dims(inp, stretched)
        nsplits = _broadcast_nsplits(inp, op.shape, [d + lead for d in stretched])
        chunks = []
        for index in np.ndindex(*[len(s) for s in nsplits]):
            src = inp.chunk_at(tuple(0 if d in stretched else index[lead + d] for d in range(inp.ndim)))
            shape = tuple(nsplits[d][i] for d, i in enumerate(index))
            chunk_op = op.copy(shape=shape)
            chunks.append(chunk_op.new_chunk([src], index=index, shape=shape, dtype=out.dtype, order=out.order))
        return Tiled(chunks, nsplits)

    def execute(self, x: np.ndarray) -> np.ndarray:
        return np.broadcast_to(x, self.shape)


def _broadcast_nsplits(inp: TensorData, shape: tuple, stretched: list[int]) -> tuple:
    """Input splits where the input is not stretched; new dims cut so chunks stay near the size limit."""
    lead = len(shape) - inp.ndim
    new_dims = set(range(lead)) | set(stretched)
    # sizing the new dims against the largest existing chunk leaves them the room that chunk does not use
    probe = tuple(shape[d] if d in new_dims else max(inp.nsplits[d - lead]) for d in range(len(shape)))
    auto = normalize_chunk_sizes(probe, None, inp.dtype.itemsize)
    return tuple(auto[d] if d in new_dims else tuple(inp.nsplits[d - lead]) for d in range(len(shape)))


def _check_broadcast(shape: Sequence[Any], target: tuple[int, ...]) -> None:
    """numpy's errors for broadcasting ``shape`` to ``target`` (unknown sizes assumed to fit)."""
    lead = len(target) - len(shape)
    known = tuple(
        (target[lead + d] if lead + d >= 0 else 1) if has_unknown((s,)) else s for d, s in enumerate(shape)
    )
    # a zero-stride stand-in gets numpy's own message without allocating the data
    probe = np.lib.stride_tricks.as_strided(np.zeros(1, dtype=np.int8), shape=known, strides=(0,) * len(known))
    np.broadcast_to(probe, target)


def broadcast_to(array: Any, shape: Any) -> Tensor:
    """``array`` broadcast to ``shape``, as ``np.broadcast_to`` (chunks are read-only views).

    >>> import mars.tensor as mt
    >>> mt.broadcast_to(mt.ones(3), (4, 3)).shape
    (4, 3)
    """
    t = astensor(array)
    data = tensor_data(t)
    shape = _as_shape(shape)
    _check_broadcast(data.shape, shape)
    if shape == tuple(data.shape):
        return Tensor(data)
    return TensorBroadcastTo(shape=shape).new_tensor([data], shape, data.dtype)


def broadcast_arrays(*args: Any) -> tuple[Tensor, ...]:
    """The inputs broadcast against each other, as ``np.broadcast_arrays``.

    >>> import mars.tensor as mt
    >>> [t.shape for t in mt.broadcast_arrays(mt.ones((2, 1)), mt.ones(3))]
    [(2, 3), (2, 3)]
    """
    tensors = [astensor(a) for a in args]
    shape = broadcast_shapes(*(t.shape for t in tensors))
    if has_unknown(shape):
        raise ValueError(f"broadcast_arrays needs known sizes, got shapes {[t.shape for t in tensors]}; execute first")
    return tuple(broadcast_to(t, shape) for t in tensors)


# ----------------------------------------------------------------- repeat
class TensorRepeat(TensorOperator):
    """``np.repeat`` along ``axis``; ``repeats`` is an int or an array (sliced per chunk)."""

    params = ("repeats", "axis")
    fusible = True

    @classmethod
    def tile(cls, op: TensorRepeat) -> Generator[Any, Any, Tiled]:
        inp, out = op.inputs[0], op.outputs[0]
        axis, repeats = op.axis, op.repeats
        per_element = isinstance(repeats, np.ndarray)
        if per_element:
            yield from known_sizes([inp], [axis])
            _check_repeats(inp.shape[axis], repeats)
        sizes, starts = inp.nsplits[axis], offsets(inp.nsplits[axis])
        chunks = []
        for c in inp.chunks:
            i = c.index[axis]
            reps = repeats[starts[i]:starts[i] + sizes[i]] if per_element else repeats
            length = int(reps.sum()) if per_element else c.shape[axis] * repeats
            shape = c.shape[:axis] + (length,) + c.shape[axis + 1:]
            chunk_op = op.copy(repeats=reps)
            chunks.append(chunk_op.new_chunk([c], index=c.index, shape=shape, dtype=out.dtype, order=out.order))
        nsplits = list(inp.nsplits)
        nsplits[axis] = tuple(c.shape[axis] for c in _along(chunks, inp.chunk_shape, axis))
        return Tiled(chunks, tuple(nsplits))

    def execute(self, x: np.ndarray) -> np.ndarray:
        return np.repeat(x, self.repeats, axis=self.axis)


def _along(chunks: list, grid: Sequence[int], axis: int) -> list:
    """The chunks at index 0 on every axis but ``axis`` (C order: a fixed stride apart)."""
    stride = math.prod(grid[axis + 1:])
    return chunks[: stride * grid[axis]: stride]


def _check_repeats(length: Any, repeats: np.ndarray) -> None:
    if not has_unknown((length,)) and repeats.size != length:
        raise ValueError(f"operands could not be broadcast together with shape ({length},) ({repeats.size},)")


def repeat(a: Any, repeats: Any, axis: int | None = None) -> Tensor:
    """Each element repeated ``repeats`` times (an int, or one count per element), as ``np.repeat``.

    A tensor ``repeats`` is computed first: the output size depends on its values.

    >>> import mars.tensor as mt
    >>> mt.repeat(mt.ones((2, 3), chunk_size=2), [1, 0, 2], axis=1).shape
    (2, 3)
    """
    t = astensor(a)
    if axis is None:
        t, axis = ravel(t), 0
    data = tensor_data(t)
    axis = normalize_axis_index(operator.index(axis), data.ndim)
    reps = np.asarray(repeats)
    if reps.ndim > 1:
        raise ValueError(f"repeats must be an int or a 1-d sequence, got {reps.ndim} dimensions")
    reps = reps.astype(np.intp, casting="safe")
    if (reps < 0).any():
        raise ValueError("negative dimensions are not allowed")
    length = data.shape[axis]
    if reps.size == 1:
        reps_param: Any = int(reps.reshape(()))
        new_length = length * reps_param
    else:
        _check_repeats(length, reps)
        reps_param, new_length = reps, int(reps.sum())
    shape = data.shape[:axis] + (new_length,) + data.shape[axis + 1:]
    return TensorRepeat(repeats=reps_param, axis=axis).new_tensor([data], shape, data.dtype)
