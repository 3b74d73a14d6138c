"""numpy's index functions: choose, select, extract, the in-place writers (place, put, putmask,
put_along_axis, fill_diagonal, copyto), take_along_axis, unravel_index and ravel_multi_index.

Elementwise ones (choose, unravel_index, ravel_multi_index) share the
elementwise tiling. ``take_along_axis`` / ``put_along_axis`` need the whole
axis in a chunk, and nothing more. The in-place writers do what ``t[...] = v``
does: the tensor passed in is rebound to new data and they return None.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..arithmetic.core import TensorElementwise, apply_ufunc, broadcast_shapes, where_
from ..base.manip import resize
from ..base.shape import broadcast_to, ravel
from ..core import Tensor, is_tensor, tensor_data
from ..datasource.core import astensor
from ..reduction.cumulative import cumsum
from .along import put_along_axis, take_along_axis, writable
from .getitem import take
from .nonzero import nonzero
from .setitem import rebind

__all__ = [
    "choose", "select", "extract", "place", "put", "putmask", "take_along_axis", "put_along_axis",
    "fill_diagonal", "copyto", "unravel_index", "ravel_multi_index",
]




def _probe(t: Tensor) -> np.ndarray:
    return np.empty((0,) * min(t.ndim, 1), dtype=t.dtype) if t.ndim else np.zeros((), dtype=t.dtype)


# ----------------------------------------------------------------- choose, select, extract
class TensorChoose(TensorElementwise):
    """``np.choose(a, choices)`` on aligned chunks (``a`` first, then the choices)."""

    params = ("mode",)

    def execute(self, a: np.ndarray, *choices: np.ndarray) -> np.ndarray:
        return np.choose(a, choices, mode=self.mode)


def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise") -> Tensor:
    """Elements picked from ``choices`` by the index array ``a`` (all broadcast together), as ``np.choose``.

    >>> import mars.tensor as mt
    >>> mt.choose(mt.tensor([0, 2, 1]), [[1, 2, 3], [10, 20, 30], [100, 200, 300]]).execute().fetch()
    array([  1, 200,  30])
    """
    idx = astensor(a)
    if is_tensor(choices):
        picks = astensor(choices)
        choices = [picks[i] for i in range(len(picks))]
    tensors = [astensor(c) for c in choices]
    with np.errstate(all="ignore"):
        dtype = np.choose(_probe(idx).astype(np.intp), [_probe(t) for t in tensors], mode=mode).dtype
    if idx.dtype.kind not in "biu":
        raise TypeError(f"Cannot cast array data from dtype('{idx.dtype}') to dtype('int64') according to the rule 'safe'")
    inputs = [idx] + [t.astype(dtype, copy=False) for t in tensors]
    shape = broadcast_shapes(*(t.shape for t in inputs))
    result = TensorChoose(mode=mode).new_tensor([tensor_data(t) for t in inputs], shape, dtype)
    if out is not None:
        rebind(writable(out, "choose(out=)"), broadcast_to(result.astype(out.dtype), out.shape).data)
        return out
    return result


def select(condlist: Any, choicelist: Any, default: Any = 0) -> Tensor:
    """Elements from the first choice whose condition holds, else ``default``, as ``np.select``.

    >>> import mars.tensor as mt
    >>> x = mt.arange(6)
    >>> mt.select([x < 2, x > 3], [x, x ** 2], 42).execute().fetch()
    array([ 0,  1, 42, 42, 16, 25])
    """
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if not condlist:
        raise ValueError("select with an empty condition list is not possible")
    weak = (int, float, complex)  # Python scalars take part weakly, as in numpy
    choices = [astensor(c) for c in choicelist]
    try:
        dtype = np.result_type(*(c if type(c) in weak else choices[i].dtype for i, c in enumerate(choicelist)),
                               default if type(default) in weak else np.asarray(default))
    except TypeError as e:
        raise TypeError(f"Choicelist and default value do not have a common dtype: {e}") from None
    conds = [astensor(c) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype != np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    result = astensor(np.asarray(default, dtype=dtype))
    for cond, choice in zip(reversed(conds), reversed(choices)):
        result = where_(cond, choice.astype(dtype, copy=False), result)
    shape = broadcast_shapes(*(t.shape for t in conds + choices + [result]))
    return result if tuple(result.shape) == tuple(shape) else broadcast_to(result, shape)


def extract(condition: Any, arr: Any) -> Tensor:
    """The elements of ``arr`` (flattened) where ``condition`` (flattened) is non-zero, as ``np.extract``.

    >>> import mars.tensor as mt
    >>> mt.extract(mt.arange(6) % 3 == 0, mt.arange(6) * 10).execute().fetch()
    array([ 0, 30])
    """
    return take(ravel(astensor(arr)), nonzero(ravel(astensor(condition)))[0])


# ----------------------------------------------------------------- writers by mask or flat index
def place(arr: Any, mask: Any, vals: Any) -> None:
    """Write ``vals`` (repeated as needed) into the places where ``mask`` is true, in order, as
    ``np.place``; ``arr`` is rebound to the result.

    >>> import mars.tensor as mt
    >>> t = mt.arange(5)
    >>> mt.place(t, t % 2 == 1, [10, 20])
    >>> t.execute().fetch()
    array([ 0, 10,  2, 20,  4])
    """
    t = writable(arr, "place")
    cond = broadcast_to(astensor(mask).astype(bool, copy=False), t.shape)
    values = ravel(astensor(vals)).astype(t.dtype, copy=False)
    n = values.shape[0]
    if n == 0:
        if isinstance(mask, np.ndarray) and not mask.any() or not is_tensor(mask) and not np.any(mask):
            return
        raise ValueError("Cannot insert from an empty array!")
    # the k-th true place takes vals[k % n]: its rank comes from a running count
    rank = cumsum(ravel(cond)) - 1
    picked = take(values, apply_ufunc("remainder", apply_ufunc("maximum", rank, 0), n)).reshape(t.shape)
    rebind(t, where_(cond, picked, t).data)


def putmask(a: Any, mask: Any, values: Any) -> None:
    """``a.flat[i] = values[i % len(values)]`` where ``mask`` is true, as ``np.putmask``; ``a`` is rebound.

    >>> import mars.tensor as mt
    >>> t = mt.arange(5)
    >>> mt.putmask(t, t > 2, [-1, -2])
    >>> t.execute().fetch()
    array([ 0,  1,  2, -2, -1])
    """
    t = writable(a, "putmask")
    cond = astensor(mask)
    if tuple(cond.shape) != tuple(t.shape):
        raise ValueError("putmask: mask and data must be the same size")
    values = astensor(values)
    if values.size == 0:
        return
    _check_cast(values, t.dtype, "putmask")
    filled = values if tuple(values.shape) == tuple(t.shape) else resize(values, t.shape)
    rebind(t, where_(cond.astype(bool, copy=False), filled.astype(t.dtype, copy=False), t).data)


def _check_cast(values: Tensor, dtype: np.dtype, name: str) -> None:
    if not np.can_cast(values.dtype, dtype, casting="same_kind"):
        raise TypeError(f"Cannot cast array data from dtype('{values.dtype}') to dtype('{dtype}') "
                        "according to the rule 'safe'")


def _flat_positions(ind: np.ndarray, size: int, mode: str) -> np.ndarray:
    if mode == "raise":
        bad = ind[(ind < -size) | (ind >= size)]
        if bad.size:
            raise IndexError(f"index {int(bad.flat[0])} is out of bounds for axis 0 with size {size}")
        return np.where(ind < 0, ind + size, ind)
    if mode == "wrap":
        return ind % size if size else ind
    if mode == "clip":
        return np.clip(ind, 0, max(size - 1, 0))
    raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")


def put(a: Any, ind: Any, v: Any, mode: str = "raise") -> None:
    """``a.flat[ind] = v`` (``v`` repeated as needed; the last write to a place wins), as ``np.put``;
    ``a`` is rebound to the result.

    >>> import mars.tensor as mt
    >>> t = mt.zeros((2, 3), dtype=int)
    >>> mt.put(t, [0, 4], [7, 8])
    >>> t.execute().fetch()
    array([[7, 0, 0],
           [0, 8, 0]])
    """
    t = writable(a, "put")
    if is_tensor(ind):
        raise NotImplementedError("put with mars tensor indices is not supported; use t[mt.unravel_index(ind, "
                                  "t.shape)] = v")
    positions = np.asarray(ind).ravel()
    if positions.size == 0:
        return
    if positions.dtype.kind not in "iu":
        raise TypeError(f"Cannot cast array data from dtype('{positions.dtype}') to dtype('int64') according "
                        "to the rule 'safe'")
    size = t.size
    if size == 0:
        raise IndexError("cannot replace elements of an empty array")
    positions = _flat_positions(positions.astype(np.intp), int(size), mode)
    values = ravel(astensor(v))
    if values.size == 0:
        return
    values = resize(values, positions.size) if values.size != positions.size else values
    # the last write to a place wins, as numpy's loop does
    _, last = np.unique(positions[::-1], return_index=True)
    keep = np.sort(positions.size - 1 - last)
    coords = np.unravel_index(positions[keep], t.shape)
    t[coords] = take(values, keep) if keep.size != positions.size else values


def fill_diagonal(a: Any, val: Any, wrap: bool = False) -> None:
    """Write ``val`` (repeated as needed) on the main diagonal, as ``np.fill_diagonal``; a tall 2-d
    array restarts the diagonal every ``ncols + 1`` rows when ``wrap``. ``a`` is rebound.

    >>> import mars.tensor as mt
    >>> t = mt.zeros((3, 3), dtype=int)
    >>> mt.fill_diagonal(t, 5)
    >>> t.execute().fetch()
    array([[5, 0, 0],
           [0, 5, 0],
           [0, 0, 5]])
    """
    t = writable(a, "fill_diagonal")
    if t.ndim < 2:
        raise ValueError("array must be at least 2-d")
    shape = tuple(int(s) for s in t.shape)
    if t.ndim == 2:
        step = shape[1] + 1
        end = None if wrap else shape[1] * shape[1]
    else:
        if len(set(shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + int(np.cumprod(shape[:-1]).sum())
        end = None
    positions = np.arange(t.size)[:end:step]
    put(t, positions, val)


def copyto(dst: Any, src: Any, casting: str = "same_kind", where: Any = True) -> None:
    """``src`` (broadcast, cast under ``casting``) written into ``dst`` where ``where`` holds, as
    ``np.copyto``; ``dst`` is rebound to the result.

    >>> import mars.tensor as mt
    >>> t = mt.zeros(4)
    >>> mt.copyto(t, [1, 2, 3, 4], where=[True, False, True, False])
    >>> t.execute().fetch()
    array([1., 0., 3., 0.])
    """
    t = writable(dst, "copyto")
    if is_tensor(src):
        source = astensor(src)
        if not np.can_cast(source.dtype, t.dtype, casting=casting):
            raise TypeError(f"Cannot cast array data from dtype('{source.dtype}') to dtype('{t.dtype}') "
                            f"according to the rule '{casting}'")
    else:
        value = src if isinstance(src, (int, float, complex, bool)) else np.asarray(src)
        np.copyto(np.empty(np.shape(value), dtype=t.dtype), value, casting=casting)  # numpy's cast errors
        source = astensor(np.asarray(value).astype(t.dtype, casting="unsafe"))
    shape = broadcast_shapes(t.shape, source.shape)
    if tuple(shape) != tuple(t.shape):
        raise ValueError(f"could not broadcast input array from shape {tuple(source.shape)} into shape "
                         f"{tuple(t.shape)}")
    rebind(t, where_(where, source.astype(t.dtype, copy=False), t).data)


# ----------------------------------------------------------------- flat and multi indices
class TensorUnravelIndex(TensorElementwise):
    """Coordinate ``dim`` of ``np.unravel_index`` of each flat index."""

    params = ("shape", "order", "dim")

    def execute(self, x: np.ndarray) -> np.ndarray:
        return np.unravel_index(x, self.shape, order=self.order)[self.dim]


class TensorRavelMultiIndex(TensorElementwise):
    """``np.ravel_multi_index`` of aligned coordinate chunks."""

    params = ("dims", "mode", "order")

    def execute(self, *coords: np.ndarray) -> np.ndarray:
        return np.ravel_multi_index(coords, self.dims, mode=self.mode, order=self.order)


def unravel_index(indices: Any, shape: Any, order: str = "C") -> tuple[Tensor, ...]:
    """The coordinates in an array of ``shape`` of flat ``indices``, as ``np.unravel_index``.

    >>> import mars.tensor as mt
    >>> [c.execute().fetch().tolist() for c in mt.unravel_index(mt.tensor([5, 1]), (2, 3))]
    [[1, 0], [2, 1]]
    """
    t = astensor(indices)
    dims = (operator.index(shape),) if np.ndim(shape) == 0 else tuple(operator.index(s) for s in shape)
    np.unravel_index(np.zeros(0, dtype=t.dtype), dims, order=order)  # numpy's errors for dtype, shape, order
    return tuple(TensorUnravelIndex(shape=dims, order=order, dim=d).new_tensor([t.data], t.shape, np.intp)
                 for d in range(len(dims)))


def ravel_multi_index(multi_index: Any, dims: Any, mode: Any = "raise", order: str = "C") -> Tensor:
    """Flat indices of coordinate arrays in an array of shape ``dims``, as ``np.ravel_multi_index``.

    >>> import mars.tensor as mt
    >>> mt.ravel_multi_index((mt.tensor([1, 0]), [2, 1]), (2, 3)).execute().fetch()
    array([5, 1])
    """
    dims = (operator.index(dims),) if np.ndim(dims) == 0 else tuple(operator.index(s) for s in dims)
    coords = [astensor(c) for c in multi_index]
    if len(coords) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    np.ravel_multi_index(tuple(np.zeros(0, dtype=c.dtype) for c in coords), dims, mode=mode, order=order)
    shape = broadcast_shapes(*(c.shape for c in coords))
    op = TensorRavelMultiIndex(dims=dims, mode=mode, order=order)
    return op.new_tensor([c.data for c in coords], shape, np.intp)
