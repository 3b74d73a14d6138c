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
        return entry.value.ndim
    return 1


def _classify(item: Any) -> Any:
    if item is None or isinstance(item, slice) or item is Ellipsis:
        return item
    if isinstance(item, (bool, np.bool_)):
        return BoolArray(np.asarray(item))  # numpy: a new axis of length 1 (True) or 0 (False)
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
            axis += e.value.ndim
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
        # numpy lets an empty mask axis through (x[np.zeros(0, bool)] is empty)
        if not _is_nan(size) and not _is_nan(n) and n != size and n != 0:
            raise IndexError(f"boolean index did not match indexed array along axis {axis + d}; "
                             f"size of axis is {size} but size of corresponding boolean axis is {n}")


def _check_ints(size: Any, axis: int, e: IntArray) -> None:
    if isinstance(e.value, np.ndarray) and e.value.size and not _is_nan(size):
        lo, hi = int(e.value.min()), int(e.value.max())
        bad = hi if hi >= size else lo if lo < -size else None
        if bad is not None:
            raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {size}")
        if lo < 0:
            e.value = np.where(e.value < 0, e.value + int(size), e.value)


def is_advanced(e: Any) -> bool:
    return isinstance(e, (IntArray, BoolArray))


def ellipsis_separates(shape: tuple, index: Any) -> bool:
    """Whether an Ellipsis standing for no axis sits between advanced indices.

    numpy counts it as separating them (their dims go in front), but
    :func:`parse_index` expands it to nothing, so callers ask here.
    """
    items = list(index) if isinstance(index, tuple) else [index]
    if not any(i is Ellipsis for i in items):
        return False
    entries = [_classify(i) for i in items]
    if sum(_consumes(e) for e in entries if e is not Ellipsis) != len(shape):
        return False  # it stands for some axes: parse_index keeps them as slices
    if not any(is_advanced(e) for e in entries):
        return False
    at = [k for k, e in enumerate(entries) if is_advanced(e) or isinstance(e, int)]
    return at[0] < entries.index(Ellipsis) < at[-1]


def advanced_in_front(entries: list) -> bool:
    """numpy's rule: advanced indices (ints count, next to arrays) split by a slice or
    new axis put their dimensions first, adjacent ones keep their place."""
    at = [i for i, e in enumerate(entries) if is_advanced(e) or isinstance(e, int)]
    return at != list(range(at[0], at[-1] + 1))


def shape_text(shape: tuple) -> str:
    """A shape as numpy's indexing errors print it: ``(3,2)``, ``(3,)``."""
    return "(" + ",".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def broadcast_unknown(*shapes: tuple) -> tuple:
    """numpy's broadcast of index arrays' shapes (and its IndexError), NaN where a size is unknown."""
    if not any(_is_nan(s) for shape in shapes for s in shape):
        try:
            return tuple(np.broadcast_shapes(*shapes))
        except ValueError:
            text = "".join(shape_text(s) + " " for s in shapes)
            raise IndexError(f"shape mismatch: indexing arrays could not be broadcast together with shapes {text}") from None
    ndim = max(len(s) for s in shapes)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    return tuple(math.nan if any(_is_nan(s) for s in col) else max(col) for col in zip(*padded))


def _advanced_shape(e: Any) -> tuple:
    if isinstance(e, IntArray):
        return tuple(e.value.shape)
    if isinstance(e, BoolArray):
        if isinstance(e.value, np.ndarray):
            return (int(np.count_nonzero(e.value)),)
        return (math.nan,)
    return ()  # an int among arrays


def result_dims(shape: tuple, entries: list, front: bool | None = None) -> list[tuple[Any, str]]:
    """The dims of ``x[entries]`` by numpy's rules, without building anything: (size, kind),
    kind one of "new" (a new axis), "slice", "advanced" (the advanced indices' broadcast).

    ``front`` overrides where the advanced dims go (see :func:`ellipsis_separates`)."""
    has_arrays = any(is_advanced(e) for e in entries)
    advanced = [e for e in entries if is_advanced(e) or (has_arrays and isinstance(e, int))]
    bdims = [(n, "advanced") for n in broadcast_unknown(*(_advanced_shape(e) for e in advanced))] if advanced else []
    front = bool(advanced) and (advanced_in_front(entries) if front is None else front)
    dims = list(bdims) if front else []
    axis, placed = 0, front
    for e in entries:
        if e is None:
            dims.append((1, "new"))
        elif isinstance(e, slice):
            size = shape[axis]
            dims.append((math.nan if _is_nan(size) else len(range(*e.indices(size))), "slice"))
        elif not placed and (is_advanced(e) or (has_arrays and isinstance(e, int))):
            dims.extend(bdims)
            placed = True
        axis += _consumes(e)
    return dims


def result_shape(shape: tuple, entries: list) -> tuple:
    """The shape of ``x[entries]`` by numpy's rules, without building anything."""
    return tuple(size for size, _ in result_dims(shape, entries))
