"""The tree-reduction family: chunk → combine → aggregate.

A reduction declares three pure functions on numpy data:

- ``chunk_fn(x)``: one chunk → a *partial* (arrays with the reduced axes kept
  as size 1, or a tuple of such arrays, e.g. ``(sum, count)`` for a mean);
- ``combine_fn(p)``: partials concatenated along a reduced axis → one partial;
- ``agg_fn(p)``: the final partial → the result (reduced axes still kept).

``TensorReduction.tile`` builds the tree: one ``ReduceChunk`` per input chunk,
``ReduceCombine`` over groups of ``options.combine_size`` partials, and one
``ReduceAgg`` per output chunk. ``ReduceChunk`` can merge partials of row
blocks, so fusion can stream an elementwise chain into it block by block.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Generator, Sequence

import numpy as np

from ...core.device import asarray
from ...core.entity import has_unknown
from ...core.operator import Tiled
from ...core.options import options
from ..chunks import offsets
from ..core import Tensor, TensorOperator, tensor_data
from ..datasource.core import astensor


def normalize_axis(axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, int or tuple) → sorted tuple of non-negative axes; numpy's AxisError if out of range."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if not isinstance(axis, (tuple, list)) else tuple(axis)
    result = []
    for a in axes:
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise TypeError(f"axis must be an integer or a tuple of integers, got {axis!r}")
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(int(a), ndim)
        a = int(a) % ndim if ndim else 0
        if a in result:
            raise ValueError(f"duplicate value in 'axis': {axis!r}")
        result.append(a)
    return tuple(sorted(result))


def concat_partials(partials: Sequence[Any], axis: int) -> Any:
    first = partials[0]
    if isinstance(first, tuple):
        return tuple(np.concatenate([p[i] for p in partials], axis=axis) for i in range(len(first)))
    return np.concatenate(partials, axis=axis)


class TensorReduction(TensorOperator):
    """Base of tree reductions; subclasses give ``chunk_fn``, ``combine_fn``, ``agg_fn``.

    ``axis`` is a sorted tuple of axes; ``dtype`` is the output dtype.
    """

    params = ("axis", "keepdims", "dtype")

    def chunk_fn(self, x: np.ndarray) -> Any:
        raise NotImplementedError

    def combine_fn(self, partial: Any) -> Any:
        raise NotImplementedError

    def agg_fn(self, partial: Any) -> np.ndarray:
        return self.combine_fn(partial)

    #: the chunk stage needs the chunk's place in the whole (``chunk_op`` gets it), so
    #: it cannot be evaluated in row blocks, and unknown sizes are computed first
    needs_place: ClassVar[bool] = False

    def chunk_op(self, chunk: Any, place: tuple[int, ...] | None, shape: tuple | None) -> TensorReduction:
        """The op for the chunk stage of ``chunk`` (at ``place`` of a whole of ``shape``
        when ``needs_place``); most reductions use themselves."""
        return self

    @classmethod
    def tile(cls, op: TensorReduction) -> Generator[Any, Any, Tiled]:
        inp, out = op.inputs[0], op.outputs[0]
        place_of = yield from _places(op)
        axes = op.axis
        kept = [d for d in range(inp.ndim) if d not in axes]
        red = op.copy()  # chunk ops carry the parameters, not the tileable graph
        stage = PlacedReduceChunk if op.needs_place else ReduceChunk
        chunks = []
        for out_index in np.ndindex(*[inp.chunk_shape[d] for d in kept]):
            partials = [
                stage(reduction=red.chunk_op(c, *place_of(c))).new_chunk([c], **_partial_meta(c, axes))
                for c in _chunks_reduced_into(inp, out_index, kept, axes)
            ]
            while len(partials) > options.combine_size:
                partials = _combine_level(red, partials, axes)
            shape = _out_shape(partials[0].shape, axes, op.keepdims, inp.ndim)
            index = _out_index(out_index, kept, axes, op.keepdims, inp.ndim)
            agg = ReduceAgg(reduction=red)
            chunks.append(agg.new_chunk(partials, index=index, shape=shape, dtype=out.dtype, order="C"))
        return Tiled(chunks, _out_nsplits(inp.nsplits, axes, op.keepdims))


def _places(op: TensorReduction) -> Generator[Any, Any, Callable[[Any], tuple]]:
    """A function giving each chunk's (start offsets, whole shape) when the op needs them."""
    inp = op.inputs[0]
    if not op.needs_place:
        return lambda chunk: (None, None)
    if has_unknown(inp.shape) or any(has_unknown(s) for s in inp.nsplits):
        yield inp.chunks  # the chunks' places in the whole are needed
        inp.refresh_shape()
    starts = [offsets(s) for s in inp.nsplits]
    whole = tuple(int(s) for s in inp.shape)
    return lambda chunk: (tuple(starts[d][i] for d, i in enumerate(chunk.index)), whole)


def _chunks_reduced_into(inp: Any, out_index: tuple, kept: list[int], axes: tuple[int, ...]) -> list:
    grid = inp.chunk_shape
    group = []
    for red_index in np.ndindex(*[grid[d] for d in axes]):
        index = [0] * inp.ndim
        for d, i in zip(kept, out_index):
            index[d] = i
        for d, i in zip(axes, red_index):
            index[d] = i
        group.append(inp.chunk_at(tuple(index)))
    return group


def _partial_meta(chunk: Any, axes: tuple[int, ...]) -> dict:
    shape = tuple(1 if d in axes else s for d, s in enumerate(chunk.shape))
    return {"index": chunk.index, "shape": shape, "dtype": chunk.dtype, "order": "C"}


def _combine_level(op: TensorReduction, partials: list, axes: tuple[int, ...]) -> list:
    size = options.combine_size
    result = []
    for i in range(0, len(partials), size):
        group = partials[i : i + size]
        meta = dict(index=(i // size,), shape=group[0].shape, dtype=group[0].dtype, order="C")
        result.append(ReduceCombine(reduction=op).new_chunk(group, **meta))
    return result


def _out_shape(partial_shape: tuple, axes: tuple[int, ...], keepdims: bool, ndim: int) -> tuple:
    if keepdims:
        return tuple(partial_shape)
    return tuple(s for d, s in enumerate(partial_shape) if d not in axes)


def _out_index(out_index: tuple, kept: list[int], axes: tuple[int, ...], keepdims: bool, ndim: int) -> tuple:
    if not keepdims:
        return tuple(out_index)
    index = [0] * ndim
    for d, i in zip(kept, out_index):
        index[d] = i
    return tuple(index)


def _out_nsplits(nsplits: tuple, axes: tuple[int, ...], keepdims: bool) -> tuple:
    if keepdims:
        return tuple((1,) if d in axes else s for d, s in enumerate(nsplits))
    return tuple(s for d, s in enumerate(nsplits) if d not in axes)


class PlacedReduceChunk(TensorOperator):
    """Chunk stage: one chunk → its partial. Fusible, but run on the whole chunk."""

    params = ("reduction",)
    fusible = True

    def execute(self, x: np.ndarray) -> Any:
        return self.reduction.chunk_fn(x)


class ReduceChunk(PlacedReduceChunk):
    """Chunk stage whose partials of row blocks merge: fusion streams row blocks into it."""

    def merge_blocks(self, partials: list) -> Any:
        """Partials of consecutive row blocks of one chunk → the chunk's partial."""
        if 0 in self.reduction.axis:
            return self.reduction.combine_fn(concat_partials(partials, 0))
        return concat_partials(partials, 0)


class ReduceCombine(TensorOperator):
    """Combine stage: several partials → one."""

    params = ("reduction",)

    def execute(self, *partials: Any) -> Any:
        red = self.reduction
        return red.combine_fn(concat_partials(partials, red.axis[0])) if len(partials) > 1 else partials[0]


class ReduceAgg(TensorOperator):
    """Aggregate stage: the last partials → the output chunk (axes dropped unless keepdims)."""

    params = ("reduction",)

    def execute(self, *partials: Any) -> np.ndarray:
        red = self.reduction
        partial = concat_partials(partials, red.axis[0]) if len(partials) > 1 else partials[0]
        result = asarray(red.agg_fn(partial))  # on the GPU, a CuPy array stays one
        if not red.keepdims:
            result = result.reshape(tuple(s for d, s in enumerate(result.shape) if d not in red.axis))
        if result.dtype != red.dtype:
            result = result.astype(red.dtype)
        return result[()] if result.ndim == 0 else result


def reduction_dtype(func: Any, dtype: Any, input_dtype: np.dtype, **kw: Any) -> np.dtype:
    """The dtype numpy gives ``func`` on an input of ``input_dtype``."""
    with np.errstate(all="ignore"):
        return np.asarray(func(np.ones((1,), dtype=input_dtype), dtype=dtype, **kw)).dtype


def reduce_tensor(op_cls: type[TensorReduction], a: Any, axis: Any, keepdims: bool, dtype: np.dtype, **params: Any) -> Tensor:
    """Build the reduction ``op_cls`` of ``a`` over ``axis`` (numpy's errors for bad axes)."""
    data = tensor_data(astensor(a))
    axes = normalize_axis(axis, data.ndim)
    if data.ndim == 0:
        axes = ()
    op = op_cls(axis=axes, keepdims=bool(keepdims), dtype=np.dtype(dtype), **params)
    if keepdims:
        shape = tuple(1 if d in axes else s for d, s in enumerate(data.shape))
    else:
        shape = tuple(s for d, s in enumerate(data.shape) if d not in axes)
    return op.new_tensor([data], shape, dtype)
