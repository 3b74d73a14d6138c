"""``t[index] = value``: a new tensor in which the indexed chunks are rewritten.

The tensor the user holds is pointed at the new data; expressions built from
the old data are unaffected. Chunks the index does not touch are reused as
they are (same keys, no copy). The value (a scalar, array-like or tensor) is
cast to the tensor's dtype and must broadcast to ``t[index]``'s shape, as in
numpy; both are checked when the assignment is made, where sizes are known.

- basic indexes rewrite the touched chunks' slices (``TensorSetItem``);
- a lone boolean mask over leading axes writes chunk by chunk (:mod:`.mask`);
- integer arrays (and masks among them) write points (:mod:`.fancy_set`); with
  basic entries beside them, the basic part is read, the points written into
  it, and the result assigned back as a basic index.

Importing this module installs ``Tensor.__setitem__``.
"""

from __future__ import annotations

import itertools
import math
import weakref
from typing import Any, Callable, Generator

import numpy as np

from ...core.device import copy_array
from ...core.operator import Tiled
from ...core.tiling import recursive_tile
from ..base.reshape import known_sizes, rechunked
from ..base.shape import broadcast_to, moveaxis, reshape
from ..core import Tensor, TensorData, TensorOperator, is_tensor, tensor_data
from .basic import _plans, basic_index
from .fancy_set import fancy_set
from .getitem import lone_mask, masks_as_ints
from .index import (
    BoolArray, IntArray, advanced_in_front, ellipsis_separates, is_advanced, parse_index, result_dims, result_shape,
    shape_text,
)
from .mask import mask_set

__all__: list[str] = []


class TensorSetChunk(TensorOperator):
    """One touched chunk: a copy with ``x[index] = value`` (value a parameter or the 2nd input)."""

    params = ("index", "value")

    def execute(self, x: np.ndarray, *value: np.ndarray) -> np.ndarray:
        out = copy_array(x)  # a copy (and a 0-d array where a chunk holds a numpy scalar)
        out[self.index] = value[0] if value else self.value
        return out


class TensorSetItem(TensorOperator):
    """Basic-index assignment; ``value`` is a numpy value, or None when it is the 2nd input."""

    params = ("index", "value")

    @classmethod
    def tile(cls, op: TensorSetItem) -> Generator[Any, Any, Tiled]:
        x = op.inputs[0]
        yield from known_sizes([x])
        plans = _plans(op.index, x)
        value = op.value
        if len(op.inputs) > 1:
            value = yield from _value_like_region(op.inputs[1], plans)
        touched = {}
        for picks_index in itertools.product(*(range(len(p)) for p in plans)):
            picks = [plan[i] for plan, i in zip(plans, picks_index)]
            if any(p[2] == 0 for p in picks):
                continue
            src = tuple(p[0] for p in picks)
            local = tuple(p[1] for p in picks)
            touched[src] = (local, picks_index)
        chunks = [_set_chunk(c, touched.get(c.index), value, plans) for c in x.chunks]
        return Tiled(chunks, x.nsplits)


def _value_like_region(value: TensorData, plans: list) -> Generator[Any, Any, TensorData]:
    """A tensor value broadcast to the indexed region and cut like its pieces."""
    kept = [plan for plan in plans if plan[0][2] is not None]  # ints drop their axis
    splits = tuple(tuple(p[2] for p in plan) for plan in kept)
    yield from known_sizes([value])
    region = tuple(sum(s) for s in splits)
    if tuple(value.shape) != region:
        value = broadcast_to(Tensor(value), region).data
        yield from recursive_tile(value)
    return (yield from rechunked(value, splits))


def _set_chunk(chunk: Any, hit: Any, value: Any, plans: list) -> Any:
    if hit is None:
        return chunk
    local, picks_index = hit
    meta = dict(index=chunk.index, shape=chunk.shape, dtype=chunk.dtype, order=chunk.order)
    if isinstance(value, TensorData):
        at = tuple(i for plan, i in zip(plans, picks_index) if plan[0][2] is not None)
        return TensorSetChunk(index=local, value=None).new_chunk([chunk, value.chunk_at(at)], **meta)
    if isinstance(value, np.ndarray) and value.ndim:
        sizes = [[1 if p[2] is None else p[2] for p in plan] for plan in plans]  # an int keeps a 1-dim here
        region = tuple(slice(sum(s[:i]), sum(s[:i + 1])) for s, i in zip(sizes, picks_index))
        part = value[region].reshape(tuple(p[2] for p, i in zip(plans, picks_index) for p in [p[i]] if p[2] is not None))
        return TensorSetChunk(index=local, value=part).new_chunk([chunk], **meta)
    return TensorSetChunk(index=local, value=value).new_chunk([chunk], **meta)


def _as_value(value: Any, dtype: np.dtype) -> Any:
    """The value as numpy would store it: a TensorData cast to ``dtype``, or a numpy copy
    made with numpy's own conversion (and its errors, e.g. complex into float)."""
    if is_tensor(value):
        data = tensor_data(value)
        return data if data.dtype == dtype else Tensor(data).astype(dtype).data
    out = np.empty(np.shape(value), dtype=dtype)
    out[...] = value
    return out if out.ndim else out[()]


def _fit_value(value: Any, dims: list, entries: list, data: TensorData) -> Any:
    """``value`` checked to broadcast to ``x[entries]`` (numpy's messages), then shaped with
    one dim per result dim that is not a new axis (size-1 where it broadcasts)."""
    target = tuple(size for size, _ in dims)
    if not np.ndim(value):
        return value
    shape = tuple(value.shape)
    while len(shape) > len(target) and shape[0] == 1:  # numpy drops leading ones
        shape = shape[1:]
    if not _broadcasts(shape, target):
        if not any(is_advanced(e) for e in entries):
            raise ValueError(f"could not broadcast input array from shape {shape_text(value.shape)} "
                             f"into shape {shape_text(target)}")
        masks = [e for e in entries if isinstance(e, BoolArray)]
        if len(masks) == len(entries) == 1 and masks[0].value.ndim == data.ndim and len(shape) <= 1:
            raise ValueError(f"NumPy boolean array indexing assignment cannot assign {shape[0] if shape else 1} "
                             f"input values to the {target[0]} output values where the mask is true")
        raise ValueError(f"shape mismatch: value array of shape {shape_text(value.shape)} could not be "
                         f"broadcast to indexing result of shape {shape_text(target)}")
    shape = (1,) * (len(target) - len(shape)) + shape
    kept = tuple(n for n, (_, kind) in zip(shape, dims) if kind != "new")
    if len(kept) == value.ndim and all(a is b or a == b for a, b in zip(kept, value.shape)):
        return value
    if isinstance(value, np.ndarray):
        return value.reshape(kept)
    if sum(map(_nan, kept)) > 1:
        raise NotImplementedError(f"assigning a tensor of shape {value.shape} here needs its sizes; execute it first")
    return reshape(Tensor(value), tuple(-1 if _nan(n) else n for n in kept)).data


def _broadcasts(shape: tuple, target: tuple) -> bool:
    if len(shape) > len(target):
        return False
    return all(_nan(s) or _nan(t) or s in (1, t) for s, t in zip(shape[::-1], target[::-1]))


def _nan(s: Any) -> bool:
    return isinstance(s, float) and math.isnan(s)


def setitem(t: Tensor, index: Any, value: Any) -> None:
    """``t[index] = value``: rebinds ``t`` to a new tensor with the assignment applied.

    >>> import mars.tensor as mt
    >>> t = mt.zeros(5, dtype=int, chunk_size=2)
    >>> t[::2] = 7
    >>> t.execute().fetch().tolist()
    [7, 0, 7, 0, 7]
    """
    data = tensor_data(t)
    entries = _scalar_mask_as_new_axis(parse_index(data.shape, index))
    # decided before new axes are dropped: one between advanced indices puts their dims in front
    # (an Ellipsis standing for no axis too, though parse_index drops it)
    in_front = any(is_advanced(e) for e in entries) and (
        advanced_in_front(entries) or ellipsis_separates(data.shape, index))
    value = _fit_value(_as_value(value, data.dtype), result_dims(data.shape, entries, in_front), entries, data)
    if any(isinstance(e, BoolArray) and not e.value.ndim for e in entries):  # a false 0-d mask: nothing to write
        return
    rebind(t, assign(data, [e for e in entries if e is not None], value, in_front))  # new axes: nothing to write into


def _scalar_mask_as_new_axis(entries: list) -> list:
    """A true 0-d mask among basic entries writes as a new axis does; a false one writes nothing."""
    scalars = [e for e in entries if isinstance(e, BoolArray) and e.value.ndim == 0]
    if not scalars:
        return entries
    others = [e for e in entries if is_advanced(e) or isinstance(e, int)]
    if len(scalars) > 1 or len(others) > 1 or not isinstance(scalars[0].value, np.ndarray):
        raise NotImplementedError("assignment through a 0-d boolean index works only with slices beside it "
                                  "and a numpy boolean")
    return [None if e is scalars[0] and e.value else e for e in entries]


def assign(data: TensorData, entries: list, value: Any, in_front: bool | None = None) -> TensorData:
    """``data`` with ``data[entries] = value`` (entries without new axes; value fitted).

    ``in_front``: whether numpy puts the advanced dims first (computed from
    ``entries`` when not given).
    """
    masks = [i for i, e in enumerate(entries) if isinstance(e, BoolArray)]
    if not masks and not any(isinstance(e, IntArray) for e in entries):
        return _basic_set(data, entries, value)
    if masks == [0] and lone_mask(entries, data.shape) and all(e == slice(None) for e in entries[1:]):
        return mask_set(data, entries[0].value, value)
    return _fancy_assign(data, masks_as_ints(entries), value, in_front)


def _fancy_assign(data: TensorData, entries: list, value: Any, in_front: bool | None) -> TensorData:
    """Integer arrays: write the points into the basic part, then assign that back."""
    basic = [slice(None) if isinstance(e, IntArray) else e for e in entries]
    whole = all(e == slice(None) for e in basic)
    part = data if whole else basic_index(Tensor(data), basic).data
    axes = [i for i, e in enumerate(e for e in entries if not isinstance(e, int))  # ints drop their axis
            if isinstance(e, IntArray)]
    arrays = [e.value for e in entries if isinstance(e, IntArray)]
    front = list(range(len(axes)))
    if in_front is None:
        in_front = advanced_in_front(entries)
    user_axes = [i for i, e in enumerate(entries) if isinstance(e, IntArray)]  # one entry per axis here
    if in_front and axes != front:
        moved = moveaxis(Tensor(part), axes, front).data
        written = moveaxis(Tensor(fancy_set(moved, 0, arrays, value, user_axes)), front, axes).data
    else:
        written = fancy_set(part, axes[0], arrays, value, user_axes)
    return written if whole else _basic_set(data, basic, written)


def _basic_set(data: TensorData, entries: list, value: Any) -> TensorData:
    """Basic entries (ints and slices, one per axis); ``value`` fitted to ``data[entries]``."""
    inputs = [data]
    if isinstance(value, TensorData):  # broadcast when tiled, where sizes are known
        inputs.append(value)
        value = None
    elif np.ndim(value):
        value = _with_picked_dims(np.broadcast_to(value, result_shape(data.shape, entries)), entries)
    op = TensorSetItem(index=tuple(entries), value=value)
    return op.new_tileable(inputs, shape=data.shape, dtype=data.dtype, order=data.order)


def _with_picked_dims(value: np.ndarray, entries: list) -> np.ndarray:
    """A value over the target shape, with size-1 dims put back where ints index (to slice per chunk)."""
    shape, it = [], iter(value.shape)
    for e in entries:
        shape.append(1 if isinstance(e, int) else next(it))
    return np.ascontiguousarray(value).reshape(shape)


# ----------------------------------------------------------------- views
# ``b = a[:5, 5:10]`` is a view of ``a``, as in numpy: writes into ``b`` (``b[...] = v``,
# ``b += 1``) reach ``a``. A view remembers its base and index here (id of the view ->
# (weak reference to it, base, index)); a write into a view sets the region in the base and
# reads the view back from it. Unlike numpy, a write into the base is not seen by views taken
# before it: tensors built earlier keep the data they were built from (see test_setitem).
_VIEWS: dict[int, tuple[Any, Tensor, Any]] = {}


def _view_entry(t: Any) -> tuple[Any, Tensor, Any] | None:
    entry = _VIEWS.get(id(t))
    return entry if entry is not None and entry[0]() is t else None


def is_view(t: Any) -> bool:
    """Whether ``t`` was taken from another tensor by basic indexing (writes into it reach that one)."""
    return _view_entry(t) is not None


def rebind(t: Tensor, data: TensorData) -> None:
    """Point ``t`` at ``data`` (its new value); if ``t`` is a view, write that value into its base."""
    entry = _view_entry(t)
    if entry is None:
        t.data = data
        return
    _, base, index = entry
    setitem(base, index, Tensor(data))  # the base may itself be a view: the write goes on up
    t.data = _plain_getitem(base, index).data


def _is_basic(index: Any, ndim: int) -> bool:
    """A basic index that numpy answers with a view (not a scalar: some slice, ``...`` or new axis)."""
    entries = index if isinstance(index, tuple) else (index,)
    ints = 0
    for e in entries:
        if isinstance(e, (bool, np.bool_)) or not (e is None or e is Ellipsis or isinstance(e, (slice, int, np.integer))):
            return False
        ints += isinstance(e, (int, np.integer))
    return ints < ndim or any(e is None or e is Ellipsis for e in entries)


_plain_getitem: Callable[[Any, Any], Tensor] = lambda t, index: t[index]


def install_views() -> None:
    """Make ``Tensor.__getitem__`` remember the views it returns (wraps the installed one once)."""
    global _plain_getitem
    getitem = Tensor.__getitem__
    if getattr(getitem, "records_views", False):
        return
    _plain_getitem = getitem

    def __getitem__(t: Tensor, index: Any) -> Tensor:
        result = getitem(t, index)
        if isinstance(result, Tensor) and isinstance(t, Tensor) and _is_basic(index, t.ndim):
            key = id(result)
            _VIEWS[key] = (weakref.ref(result), t, index)
            weakref.finalize(result, _VIEWS.pop, key, None)
        return result

    __getitem__.records_views = True  # type: ignore[attr-defined]
    Tensor.__getitem__ = __getitem__  # type: ignore[method-assign]


class TensorUfuncAtChunk(TensorOperator):
    """One touched chunk: a copy with ``ufunc.at(x, coords, values)`` applied (repeats accumulate)."""

    params = ("func", "coords", "values")

    def execute(self, x: np.ndarray) -> np.ndarray:
        out = np.array(x)
        args = () if self.values is None else (self.values,)
        getattr(np, self.func).at(out, self.coords, *args)
        return out


class TensorUfuncAt(TensorOperator):
    """``ufunc.at(x, index, values)``: the points (flat coordinates per axis, in numpy's order)
    routed to the chunks that hold them."""

    params = ("func", "coords", "values")

    @classmethod
    def tile(cls, op: TensorUfuncAt) -> Generator[Any, Any, Tiled]:
        x = op.inputs[0]
        yield from known_sizes([x])
        bounds = [np.cumsum((0,) + tuple(s)) for s in x.nsplits]
        at = [np.searchsorted(b, c, side="right") - 1 for b, c in zip(bounds, op.coords)]
        chunks = []
        for c in x.chunks:
            hit = np.ones(len(op.coords[0]), bool)
            for d, i in enumerate(c.index):
                hit &= at[d] == i
            if not hit.any():
                chunks.append(c)
                continue
            local = tuple(coord[hit] - b[i] for coord, b, i in zip(op.coords, bounds, c.index))
            values = None if op.values is None else op.values[hit]
            chunk_op = TensorUfuncAtChunk(func=op.func, coords=local, values=values)
            chunks.append(chunk_op.new_chunk([c], index=c.index, shape=c.shape, dtype=c.dtype, order=c.order))
        return Tiled(chunks, x.nsplits)


def ufunc_at(t: Any, ufunc: np.ufunc, index: Any, values: Any = None) -> None:
    """``ufunc.at(t, index, values)`` (``np.add.at(t, [0, 0], 1)`` adds 2): ``t`` is rebound to
    the result, as an assignment rebinds it. A tensor ``values`` is computed first.

    >>> import numpy as np, mars.tensor as mt
    >>> t = mt.zeros(4, dtype=int, chunk_size=3)
    >>> np.add.at(t, [0, 0, 3], 1)
    >>> t.execute().fetch().tolist()
    [2, 0, 0, 1]
    """
    if not isinstance(t, Tensor):
        raise TypeError(f"{ufunc.__name__}.at needs a mars Tensor to write into, got {type(t).__name__}")
    data = tensor_data(t)
    if any(_nan(s) for s in data.shape):
        raise ValueError(f"{ufunc.__name__}.at needs the tensor's shape, unknown until executed; call .execute() first")
    if ufunc.nin == 2 and values is None:
        raise ValueError(f"second operand needed for ufunc {ufunc.__name__}")
    if not data.shape:
        raise NotImplementedError(f"{ufunc.__name__}.at on a 0-d tensor: assign t[...] = {ufunc.__name__}(t, values)")
    index = index.fetch() if is_tensor(index) else index
    shape = tuple(int(s) for s in data.shape)
    # each point's coordinate along each axis: the index applied to (zero-copy) coordinate grids
    grids = [np.broadcast_to(np.arange(n).reshape((-1,) + (1,) * (len(shape) - d - 1)), shape)
             for d, n in enumerate(shape)]
    picked = [np.asarray(g[index]) for g in grids]
    coords = tuple(p.ravel() for p in picked)
    if values is not None:
        values = np.asarray(values.fetch() if is_tensor(values) else values)
        values = np.ascontiguousarray(np.broadcast_to(values, picked[0].shape)).ravel()
    probe = np.zeros(1, dtype=data.dtype)  # numpy's dtype errors, raised now
    getattr(np, ufunc.__name__).at(probe, [0], *(() if values is None else (np.zeros(1, values.dtype),)))
    op = TensorUfuncAt(func=ufunc.__name__, coords=coords, values=values)
    rebind(t, op.new_tileable([data], shape=data.shape, dtype=data.dtype, order=data.order))


Tensor.__setitem__ = setitem  # type: ignore[method-assign]
