"""Rearranging elements: flip, roll, rot90, tile, insert, delete, append, block, resize.

Each is built from slices and concatenation of the input's chunks (no
gather): a flip reverses the chunk order and each chunk, a roll re-joins two
slices, a tile repeats the chunks. ``pad`` lives in :mod:`.pad`.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from ...core.entity import has_unknown
from ..core import Tensor, is_tensor
from ..datasource.core import astensor, zeros
from .join import concatenate
from .pad import pad
from .shape import broadcast_to, expand_dims, moveaxis, ravel, reshape
from .transpose import transpose

__all__ = [
    "flip", "fliplr", "flipud", "roll", "rollaxis", "rot90", "tile", "pad", "insert", "delete", "append",
    "block", "resize", "trim_zeros",
]


def along(axis: int, entry: Any) -> tuple:
    """An index taking ``entry`` on ``axis`` and everything on the axes before it."""
    return (slice(None),) * axis + (entry,)


def _known_length(t: Tensor, axis: int, name: str) -> int:
    n = t.shape[axis]
    if has_unknown((n,)):
        raise NotImplementedError(f"{name} along an axis whose length is known only after running; execute first")
    return int(n)


# ----------------------------------------------------------------- flips and rolls
def flip(m: Any, axis: Any = None) -> Tensor:
    """``m`` with the order of elements reversed along ``axis`` (all axes when None), as ``np.flip``.

    >>> import mars.tensor as mt
    >>> mt.flip(mt.arange(5, chunk_size=2)).execute().fetch()
    array([4, 3, 2, 1, 0])
    """
    t = astensor(m)
    axes = range(t.ndim) if axis is None else normalize_axis_tuple(axis, t.ndim)
    index = tuple(slice(None, None, -1) if d in axes else slice(None) for d in range(t.ndim))
    return t[index]


def fliplr(m: Any) -> Tensor:
    """``m`` with its columns (axis 1) reversed, as ``np.fliplr``.

    >>> import mars.tensor as mt
    >>> mt.fliplr(mt.tensor([[1, 2], [3, 4]])).execute().fetch()
    array([[2, 1],
           [4, 3]])
    """
    t = astensor(m)
    if t.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(t, 1)


def flipud(m: Any) -> Tensor:
    """``m`` with its rows (axis 0) reversed, as ``np.flipud``.

    >>> import mars.tensor as mt
    >>> mt.flipud(mt.tensor([1, 2, 3])).execute().fetch()
    array([3, 2, 1])
    """
    t = astensor(m)
    if t.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(t, 0)


def roll(a: Any, shift: Any, axis: Any = None) -> Tensor:
    """Elements shifted by ``shift`` along ``axis`` (flattened when None), wrapping around, as ``np.roll``.

    >>> import mars.tensor as mt
    >>> mt.roll(mt.arange(5, chunk_size=2), 2).execute().fetch()
    array([3, 4, 0, 1, 2])
    """
    t = astensor(a)
    if axis is None:
        return reshape(roll(ravel(t), shift, 0), t.shape) if not has_unknown(t.shape) else roll(ravel(t), shift, 0)
    axes = normalize_axis_tuple(axis, t.ndim, allow_duplicate=True)
    shifts: dict[int, int] = {}
    for s, ax in np.broadcast(np.asarray(shift), np.asarray(axes)):
        shifts[int(ax)] = shifts.get(int(ax), 0) + operator.index(s)
    for ax, s in shifts.items():
        n = _known_length(t, ax, "roll")
        s = s % n if n else 0
        if s:
            t = concatenate([t[along(ax, slice(n - s, None))], t[along(ax, slice(0, n - s))]], ax)
    return t if t is not a else Tensor(t.data)


def rollaxis(a: Any, axis: int, start: int = 0) -> Tensor:
    """``axis`` moved to before position ``start``, as ``np.rollaxis``.

    >>> import mars.tensor as mt
    >>> mt.rollaxis(mt.ones((3, 4, 5)), 2).shape
    (5, 3, 4)
    """
    t = astensor(a)
    n = t.ndim
    axis = normalize_axis_index(operator.index(axis), n)
    start = operator.index(start)
    if not -n <= start <= n:
        raise np.exceptions.AxisError(f"'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in")
    start = start + n if start < 0 else start
    if axis < start:
        start -= 1
    if axis == start:
        return Tensor(t.data)
    order = [d for d in range(n) if d != axis]
    order.insert(start, axis)
    return transpose(t, order)


def rot90(m: Any, k: int = 1, axes: Sequence[int] = (0, 1)) -> Tensor:
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes`` (from the first towards the
    second), as ``np.rot90``.

    >>> import mars.tensor as mt
    >>> mt.rot90(mt.tensor([[1, 2], [3, 4]])).execute().fetch()
    array([[2, 4],
           [1, 3]])
    """
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    t = astensor(m)
    first, second = axes
    if first == second or abs(first - second) == t.ndim:
        raise ValueError("Axes must be different.")
    if not (-t.ndim <= first < t.ndim and -t.ndim <= second < t.ndim):
        raise ValueError(f"Axes={axes} out of range for array of ndim={t.ndim}.")
    k = operator.index(k) % 4
    if k == 0:
        return Tensor(t.data)
    if k == 2:
        return flip(flip(t, first), second)
    order = list(range(t.ndim))
    order[first], order[second] = order[second], order[first]
    if k == 1:
        return transpose(flip(t, second), order)
    return flip(transpose(t, order), second)


# ----------------------------------------------------------------- tile, resize
def _repeated(t: Tensor, axis: int, times: int) -> Tensor:
    if times == 1:
        return t
    if times == 0:
        return t[along(axis, slice(0, 0))]
    return concatenate([t] * times, axis)


def tile(A: Any, reps: Any) -> Tensor:
    """``A`` repeated ``reps`` times along each axis, as ``np.tile`` (its chunks reused, not copied).

    >>> import mars.tensor as mt
    >>> mt.tile(mt.tensor([0, 1]), (2, 2)).execute().fetch()
    array([[0, 1, 0, 1],
           [0, 1, 0, 1]])
    """
    t = astensor(A)
    reps = tuple(operator.index(r) for r in (reps if np.ndim(reps) else (reps,)))
    if any(r < 0 for r in reps):
        raise ValueError(f"negative dimensions are not allowed, got reps {reps}")
    if len(reps) > t.ndim:
        t = expand_dims(t, tuple(range(len(reps) - t.ndim)))
    reps = (1,) * (t.ndim - len(reps)) + reps
    result = t
    for axis, r in enumerate(reps):
        result = _repeated(result, axis, r)
    return result if result is not A else Tensor(result.data)


def resize(a: Any, new_shape: Any) -> Tensor:
    """``a`` flattened, repeated as often as needed and cut to ``new_shape``, as ``np.resize``.

    >>> import mars.tensor as mt
    >>> mt.resize(mt.tensor([1, 2, 3]), (2, 4)).execute().fetch()
    array([[1, 2, 3, 1],
           [2, 3, 1, 2]])
    """
    shape = (operator.index(new_shape),) if np.ndim(new_shape) == 0 else tuple(operator.index(s) for s in new_shape)
    if any(s < 0 for s in shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    t = ravel(astensor(a))
    size = _known_length(t, 0, "resize")
    new_size = math.prod(shape)
    if size == 0 or new_size == 0:
        return zeros(shape, dtype=t.dtype)
    repeats = -(-new_size // size)
    return reshape(_repeated(t, 0, repeats)[:new_size], shape)


# ----------------------------------------------------------------- delete, insert, append
def _axis_of(t: Tensor, axis: Any) -> tuple[Tensor, int]:
    if axis is None:
        return ravel(t), 0
    return t, normalize_axis_index(operator.index(axis), t.ndim)


def _runs(keep: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) of the runs of True in ``keep``."""
    edges = np.flatnonzero(np.diff(np.concatenate([[False], keep, [False]]).astype(np.int8)))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist()))


def _join_runs(t: Tensor, axis: int, runs: list[tuple[int, int]]) -> Tensor:
    if not runs:
        return t[along(axis, slice(0, 0))]
    pieces = [t[along(axis, slice(lo, hi))] for lo, hi in runs]
    return pieces[0] if len(pieces) == 1 else concatenate(pieces, axis)


def _delete_mask(obj: Any, n: int, axis: int) -> np.ndarray:
    keep = np.ones(n, dtype=bool)
    if isinstance(obj, slice):
        keep[obj] = False
        return keep
    idx = np.asarray(obj)
    single = idx.size == 1 and idx.dtype.kind in "iu"
    if single and not -n <= int(idx.item()) < n:
        raise IndexError(f"index {idx.item()} is out of bounds for axis {axis} with size {n}")
    if idx.dtype == bool:
        if idx.shape != (n,):
            raise ValueError(f"boolean array argument obj to delete must be one dimensional and match the axis "
                             f"length of {n}")
        return ~idx
    if idx.size == 0:
        return keep
    if idx.dtype.kind not in "iu":
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    bad = idx[(idx < -n) | (idx >= n)]
    if bad.size:
        raise IndexError(f"index {int(bad.flat[0])} is out of bounds for axis {axis} with size {n}")
    keep[idx] = False
    return keep


def delete(arr: Any, obj: Any, axis: Any = None) -> Tensor:
    """``arr`` without the entries ``obj`` (int, slice, indices or a mask) along ``axis``, as ``np.delete``.

    The kept runs are sliced and joined: no chunk is gathered.

    >>> import mars.tensor as mt
    >>> mt.delete(mt.arange(6, chunk_size=4), [1, 4]).execute().fetch()
    array([0, 2, 3, 5])
    """
    if is_tensor(obj):
        raise NotImplementedError("delete with a mars tensor as obj is not supported; pass a numpy array or a list")
    t, axis = _axis_of(astensor(arr), axis)
    n = _known_length(t, axis, "delete")
    return _join_runs(t, axis, _runs(_delete_mask(obj, n, axis)))


def _insert_positions(obj: Any, n: int, axis: int) -> tuple[np.ndarray, str]:
    """Insert positions and how numpy reads ``obj``: 'scalar', 'one' (a 1-element array: the values
    go in as one block) or 'many' (one value slice per position)."""
    if isinstance(obj, slice):
        idx = np.arange(*obj.indices(n), dtype=np.intp)
    else:
        idx = np.array(obj)
        if idx.dtype == bool:
            if idx.ndim != 1:
                raise ValueError("boolean array argument obj to insert must be one dimensional")
            idx = np.flatnonzero(idx)
        elif idx.ndim > 1:
            raise ValueError("index array argument obj to insert must be one dimensional or scalar")
    if idx.size == 0 and not isinstance(obj, np.ndarray):
        idx = idx.astype(np.intp)
    if idx.size and idx.dtype.kind not in "iu":
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    if idx.size == 1:
        index = int(idx.item())
        if not -n <= index <= n:
            raise IndexError(f"index {obj} is out of bounds for axis {axis} with size {n}")
        return np.array([index % n if index < 0 else index]), "scalar" if idx.ndim == 0 else "one"
    bad = idx[(idx < -n) | (idx > n)]
    if bad.size:
        raise IndexError(f"index {int(bad.flat[0])} is out of bounds for axis {axis} with size {n + idx.size}")
    return np.where(idx < 0, idx + n, idx).astype(np.intp), "many"


def _insert_values(values: Any, dtype: np.dtype) -> Tensor:
    if is_tensor(values):
        return astensor(values).astype(dtype, copy=False)
    return astensor(np.asarray(values, dtype=dtype))


def insert(arr: Any, obj: Any, values: Any, axis: Any = None) -> Tensor:
    """``arr`` with ``values`` inserted before the indices ``obj`` along ``axis``, as ``np.insert``.

    The input is sliced at the positions and joined with the values: no chunk is gathered.

    >>> import mars.tensor as mt
    >>> mt.insert(mt.arange(4, chunk_size=3), [1, 3], [10, 20]).execute().fetch()
    array([ 0, 10,  1,  2, 20,  3])
    """
    if is_tensor(obj):
        raise NotImplementedError("insert with a mars tensor as obj is not supported; pass a numpy array or a list")
    t, axis = _axis_of(astensor(arr), axis)
    n = _known_length(t, axis, "insert")
    positions, kind = _insert_positions(obj, n, axis)
    vals = _insert_values(values, t.dtype)
    if kind == "many":
        shape = t.shape[:axis] + (len(positions),) + t.shape[axis + 1:]
        vals = broadcast_to(vals, shape)
        order = np.argsort(positions, kind="stable")
        blocks = [vals[along(axis, slice(j, j + 1))] for j in order.tolist()]
        positions = positions[order]
    else:
        # numpy makes the values t.ndim-d (leading new axes); a scalar index puts their first axis on ``axis``
        if vals.ndim < t.ndim:
            vals = expand_dims(vals, tuple(range(t.ndim - vals.ndim)))
        if kind == "scalar":
            vals = moveaxis(vals, 0, axis)
        blocks = [broadcast_to(vals, t.shape[:axis] + (vals.shape[axis],) + t.shape[axis + 1:])]
    pieces, prev = [], 0
    for pos, piece in zip(positions.tolist(), blocks):
        pieces += [t[along(axis, slice(prev, pos))], piece]
        prev = pos
    pieces.append(t[along(axis, slice(prev, n))])
    return concatenate(pieces, axis)


def append(arr: Any, values: Any, axis: Any = None) -> Tensor:
    """``values`` joined after ``arr`` along ``axis`` (both flattened when None), as ``np.append``.

    >>> import mars.tensor as mt
    >>> mt.append(mt.tensor([1, 2]), [[3], [4]]).execute().fetch()
    array([1, 2, 3, 4])
    """
    t, v = astensor(arr), astensor(values)
    if axis is None:
        t, v, axis = ravel(t), ravel(v), 0
    return concatenate([t, v], axis)


# ----------------------------------------------------------------- block
def _block_depths(arrays: Any, index: tuple = ()) -> tuple[int, int]:
    """(list depth, largest ndim of the leaves), with numpy's errors for bad nesting."""
    if isinstance(arrays, tuple):
        raise TypeError(f"arrays{''.join(f'[{i}]' for i in index)} is a tuple. Only lists can be used to arrange "
                        "blocks, and np.block does not allow implicit conversion from tuple to ndarray.")
    if not isinstance(arrays, list):
        return 0, np.ndim(arrays) if not is_tensor(arrays) else arrays.ndim
    if not arrays:
        raise ValueError(f"List at arrays{''.join(f'[{i}]' for i in index)} cannot be empty")
    found = [_block_depths(a, index + (i,)) for i, a in enumerate(arrays)]
    depths = {d for d, _ in found}
    if len(depths) > 1:
        first = found[0][0]
        other = next(d for d, _ in found if d != first)
        raise ValueError(f"List depths are mismatched. First element was at depth {first + len(index) + 1}, "
                         f"but there is an element at depth {other + len(index) + 1}")
    return found[0][0] + 1, max(n for _, n in found)


def _assemble(arrays: Any, depth: int, ndim: int) -> Tensor:
    if depth == 0:
        t = astensor(arrays)
        return expand_dims(t, tuple(range(ndim - t.ndim))) if t.ndim < ndim else t
    parts = [_assemble(a, depth - 1, ndim) for a in arrays]
    return concatenate(parts, axis=ndim - depth) if len(parts) > 1 else parts[0]


def block(arrays: Any) -> Tensor:
    """A tensor assembled from nested lists of blocks, as ``np.block`` (innermost lists join along
    the last axis).

    >>> import mars.tensor as mt
    >>> mt.block([[mt.ones((2, 2), dtype=int), mt.zeros((2, 1), dtype=int)]]).execute().fetch()
    array([[1, 1, 0],
           [1, 1, 0]])
    """
    depth, leaf_ndim = _block_depths(arrays)
    result = _assemble(arrays, depth, max(depth, leaf_ndim))
    return result if result is not arrays else Tensor(result.data)


# ----------------------------------------------------------------- trim_zeros
def trim_zeros(filt: Any, trim: str = "fb", axis: Any = None) -> Tensor:
    """Not supported: the result's length depends on the values."""
    raise NotImplementedError("trim_zeros is not supported (its size depends on the data); "
                              "use t[mt.flatnonzero(t).min():...] after executing, or np.trim_zeros on the fetched array")
