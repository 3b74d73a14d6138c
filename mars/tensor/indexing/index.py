"""Index normalization: what numpy accepts in ``t[...]``, sorted into kinds.

``parse_index(shape, index)`` returns a list of entries, one per index
element after Ellipsis expansion: ``int`` (already non-negative and checked),
``slice`` (as ``range``-like start/stop/step resolved against the axis),
``None`` (a new axis), or an advanced index (``IntArray``: numpy ints or a
mars int tensor; ``BoolArray``: numpy bools or a mars bool tensor).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core import is_tensor, tensor_data


@dataclass
class IntArray:
    value: Any  # np.ndarray of intp, or TensorData


@dataclass
class BoolArray:
    value: Any  # np.ndarray of bool, or TensorData


def _is_nan(d: Any) -> bool:
    return isinstance(d, float) and math.isnan(d)


def _consumes(entry: Any) -> int:
    """How many input axes an index element uses."""
    if entry is None:
        return 0
    if isinstance(entry, BoolArray):
        return max(entry.value.ndim, 1) if entry.value.ndim else 0
    return 1


def _classify(item: Any) -> Any:
    if item is None or isinstance(item, slice) or item is Ellipsis:
        return item
    if isinstance(item, (bool, np.bool_)):
        raise IndexError("boolean scalars as indices are not supported")
    if isinstance(item, (int, np.integer)):
        return int(item)
    if is_tensor(item):
        data = tensor_data(item)
        if data.dtype == bool:
            return BoolArray(data)
        if data.dtype.kind not in "iu":
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
        return IntArray(data)
    array = np.asarray(item)
    if array.dtype == bool:
        return BoolArray(array)
    if array.size == 0 and array.dtype.kind == "f":
        array = array.astype(np.intp)
    if array.dtype.kind not in "iu":
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                         "integer or boolean arrays are valid indices")
    return IntArray(array.astype(np.intp, copy=False))


def parse_index(shape: tuple, index: Any) -> list:
    """One normalized entry per element of ``index`` (Ellipsis expanded); numpy's IndexErrors."""
    items = list(index) if isinstance(index, tuple) else [index]
    entries = [_classify(i) for i in items]
    if sum(1 for e in entries if e is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(_consumes(e) for e in entries if e is not Ellipsis)
    if used > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, but {used} were indexed")
    if Ellipsis in entries:
        at = entries.index(Ellipsis)
        entries[at:at + 1] = [slice(None)] * (len(shape) - used)
    else:
        entries += [slice(None)] * (len(shape) - used)
    return _resolve(shape, entries)


def _resolve(shape: tuple, entries: list) -> list:
    axis, result = 0, []
    for e in entries:
        if e is None:
            result.append(None)
            continue
        if isinstance(e, BoolArray):
            _check_mask(shape, axis, e)
            result.append(e)
            axis += max(e.value.ndim, 1) if e.value.ndim else 0
            continue
        size = shape[axis]
        if isinstance(e, int):
            if not _is_nan(size) and not -size <= e < size:
                raise IndexError(f"index {e} is out of bounds for axis {axis} with size {size}")
            result.append(e % size if not _is_nan(size) else e)
        elif isinstance(e, slice):
            if e.step == 0:
                raise ValueError("slice step cannot be zero")
            result.append(e)  # kept as given: a resolved negative-step slice would not re-apply
        else:
            _check_ints(size, axis, e)
            result.append(e)
        axis += 1
    return result


def _check_mask(shape: tuple, axis: int, e: BoolArray) -> None:
    mshape = e.value.shape
    for d, n in enumerate(mshape):
        size = shape[axis + d]
        if not _is_nan(size) and not _is_nan(n) and n != size:
            raise IndexError(f"boolean index did not match indexed array along axis {axis + d}; "
                             f"size of axis is {size} but size of corresponding boolean axis is {n}")


def _check_ints(size: Any, axis: int, e: IntArray) -> None:
    if isinstance(e.value, np.ndarray) and e.value.size and not _is_nan(size):
        lo, hi = int(e.value.min()), int(e.value.max())
        bad = hi if hi >= size else lo if lo < -size else None
        if bad is not None:
            raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {size}")
        e.value = np.where(e.value < 0, e.value + int(size), e.value)
