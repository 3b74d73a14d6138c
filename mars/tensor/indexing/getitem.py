"""``t[index]`` and the index functions built on it (take, nonzero, argwhere, ...).

The index is split as numpy defines it: the basic entries (ints, slices,
None) are applied first, as slices of the touched chunks; then the advanced
ones. A lone boolean mask filters chunk by chunk; integer arrays (and masks
among them, as their ``nonzero()``) gather points on consecutive axes, their
axes first moved to the front when numpy's rule puts the result's
broadcast dimensions there.

Importing this module installs ``Tensor.__getitem__``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base.join import stack
from ..base.shape import moveaxis, ravel, reshape
from ..core import Tensor, TensorData, tensor_data
from ..datasource.core import astensor
from .basic import basic_index
from .fancy import fancy_index
from .index import BoolArray, IntArray, advanced_in_front, ellipsis_separates, parse_index, result_dims
from .mask import bool_index
from .nonzero import nonzero

__all__ = ["take", "nonzero", "flatnonzero", "argwhere", "compress"]


def getitem(t: Tensor, index: Any) -> Tensor:
    """``t[index]`` with numpy's semantics (basic, integer-array and boolean indexing).

    >>> import mars.tensor as mt
    >>> t = mt.arange(10, chunk_size=3)
    >>> t[8:1:-3].execute().fetch().tolist(), t[[4, 0, 4]].execute().fetch().tolist()
    ([8, 5, 2], [4, 0, 4])
    """
    data = tensor_data(t)
    entries = parse_index(data.shape, index)
    result = index_entries(t, entries)
    if ellipsis_separates(data.shape, index):  # numpy: their dims go in front after all
        dims = result_dims(data.shape, entries)
        at = [i for i, (_, kind) in enumerate(dims) if kind == "advanced"]
        if at and at[0] != 0:
            result = moveaxis(result, at, list(range(len(at))))
    return result


def index_entries(t: Any, entries: list) -> Tensor:
    """``t`` indexed by entries from :func:`parse_index`."""
    if any(isinstance(e, BoolArray) and e.value.ndim == 0 for e in entries):
        return _with_scalar_masks(t, entries)
    masks = [i for i, e in enumerate(entries) if isinstance(e, BoolArray)]
    if not masks and not any(isinstance(e, IntArray) for e in entries):
        return basic_index(t, entries)
    if masks and lone_mask(entries, tensor_data(t).shape):
        return _mask_index(t, entries, masks[0])
    return _advanced(t, masks_as_ints(entries))


def lone_mask(entries: list, shape: tuple) -> bool:
    """Whether the one advanced entry is a mask that matches its axes (no ints beside it)."""
    advanced = [e for e in entries if isinstance(e, (BoolArray, IntArray, int))]
    if len(advanced) != 1 or not isinstance(advanced[0], BoolArray):
        return False
    mask = advanced[0].value
    if not isinstance(mask, np.ndarray):
        return True
    at = sum(1 if isinstance(e, slice) else e.value.ndim if isinstance(e, BoolArray) else 0
             for e in entries[:entries.index(advanced[0])])
    return tuple(mask.shape) == tuple(shape[at:at + mask.ndim])  # numpy's empty-mask leniency goes as ints


def _mask_index(t: Any, entries: list, at: int) -> Tensor:
    mask = entries[at].value
    k = mask.ndim
    step = basic_index(t, entries[:at] + [slice(None)] * k + entries[at + 1:])
    p = len(entries[:at])  # no ints here: every entry before the mask is one axis of ``step``
    if p == 0:
        return bool_index(step, mask)
    moved = moveaxis(step, list(range(p, p + k)), list(range(k)))
    return moveaxis(bool_index(moved, mask), 0, p)


def masks_as_ints(entries: list) -> list:
    """Masks among other advanced indices are their ``nonzero()`` integer arrays."""
    result: list = []
    for e in entries:
        if isinstance(e, BoolArray) and isinstance(e.value, np.ndarray):
            result.extend(IntArray(a) for a in np.nonzero(e.value))
        elif isinstance(e, BoolArray):
            result.extend(IntArray(a.data) for a in nonzero(Tensor(e.value)))
        else:
            result.append(e)
    return result


def _with_scalar_masks(t: Any, entries: list) -> Tensor:
    """numpy reads a 0-d mask as a new axis indexed by ``[0]`` (true) or ``[]`` (false)."""
    first, second = [], []
    for e in entries:
        if isinstance(e, BoolArray) and e.value.ndim == 0:
            first.append(None)
            second.append(IntArray(_scalar_mask_ints(e.value)))
        elif e is None:
            first.append(None)
            second.append(slice(None))
        else:
            first.extend([slice(None)] * (e.value.ndim if isinstance(e, BoolArray) else 1))
            second.append(e)
    return index_entries(basic_index(t, first), second)


def _scalar_mask_ints(mask: Any) -> Any:
    if isinstance(mask, np.ndarray):
        return np.arange(int(bool(mask)), dtype=np.intp)
    return nonzero(reshape(Tensor(mask), (1,)))[0].data


def _advanced(t: Any, entries: list) -> Tensor:
    """Integer arrays (ints beside them count as 0-d arrays) after the basic entries."""
    step = basic_index(t, [slice(None) if isinstance(e, IntArray) else e for e in entries])
    axes, pos = [], 0  # where the array axes sit in ``step`` (ints gone, new axes in)
    user_axes, axis = [], 0  # and where they sat in the user's tensor, for error messages
    for e in entries:
        if e is not None:
            if isinstance(e, IntArray):
                user_axes.append(axis)
            axis += 1
        if isinstance(e, int):
            continue
        if isinstance(e, IntArray):
            axes.append(pos)
        pos += 1
    arrays = [e.value for e in entries if isinstance(e, IntArray)]
    if advanced_in_front(entries):
        moved = moveaxis(step, axes, list(range(len(axes)))) if axes != list(range(len(axes))) else step
        return fancy_index(moved, 0, arrays, user_axes)
    return fancy_index(step, axes[0], arrays, user_axes)


def take(a: Any, indices: Any, axis: int | None = None) -> Tensor:
    """``np.take``: elements of ``a`` (flattened when ``axis`` is None) at ``indices``.

    >>> import mars.tensor as mt
    >>> mt.take(mt.arange(6).reshape(2, 3), [2, 0], axis=1).execute().fetch().tolist()
    [[2, 0], [5, 3]]
    """
    t = astensor(a)
    if axis is None:
        t, axis = ravel(t), 0
    axis = int(axis)
    if not -t.ndim <= axis < t.ndim:
        raise np.exceptions.AxisError(axis, t.ndim)
    axis %= t.ndim
    return t[(slice(None),) * axis + (_as_index_array(indices),)]


def _as_index_array(indices: Any) -> Any:
    if isinstance(indices, (Tensor, TensorData)):
        return indices
    array = np.asarray(indices)
    if array.dtype.kind not in "iu" and array.size:
        raise TypeError(f"Cannot cast array data from dtype('{array.dtype}') to dtype('int64') "
                        "according to the rule 'safe'")
    return array.astype(np.intp)


def flatnonzero(a: Any) -> Tensor:
    """``np.flatnonzero``: indices of the non-zero elements of ``a`` flattened.

    >>> import mars.tensor as mt
    >>> mt.flatnonzero(mt.tensor([[0, 3], [4, 0]])).execute().fetch().tolist()
    [1, 2]
    """
    return nonzero(ravel(astensor(a)))[0]


def argwhere(a: Any) -> Tensor:
    """``np.argwhere``: one row of coordinates per non-zero element.

    >>> import mars.tensor as mt
    >>> mt.argwhere(mt.tensor([[0, 3], [4, 0]])).execute().fetch().tolist()
    [[0, 1], [1, 0]]
    """
    t = astensor(a)
    if t.ndim == 0:
        return stack(nonzero(reshape(t, (1,))), axis=1)[:, :0]
    return stack(nonzero(t), axis=1)


def compress(condition: Any, a: Any, axis: int | None = None) -> Tensor:
    """``np.compress``: the slices of ``a`` along ``axis`` where ``condition`` is true.

    >>> import mars.tensor as mt
    >>> mt.compress([True, False, True], mt.arange(6).reshape(2, 3), axis=1).execute().fetch().tolist()
    [[0, 2], [3, 5]]
    """
    t = astensor(a)
    if axis is None:
        t, axis = ravel(t), 0
    if isinstance(condition, (Tensor, TensorData)):
        return take(t, nonzero(condition)[0], axis=axis)
    cond = np.asarray(condition)
    if cond.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    return take(t, np.nonzero(cond)[0], axis=axis)


Tensor.__getitem__ = getitem  # type: ignore[method-assign]
