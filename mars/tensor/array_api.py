"""The Array API standard (2024.12) on ``mars.tensor``, and numpy's ndarray methods on tensors.

``mars.tensor`` is an Array API namespace: ``x.__array_namespace__()`` returns
it, and it holds every function of the standard's main namespace with the
standard's keywords (``copy=``, ``device=``, ``correction=``, ``descending=``,
...). Most names are numpy's functions, defined by their families; this module
adds the names numpy 2 gives the standard (``concat``, ``permute_dims``,
``unstack``, ``cumulative_sum``, ...), ``__array_namespace_info__``, and the
standard's tensor attributes (``device``, ``to_device``, ``mT``, DLPack).

Where the standard and numpy differ, mars follows numpy (results equal
numpy's): a size not known until execution is ``math.nan`` in ``.shape``, not
the standard's ``None`` (numpy users do arithmetic on shapes; NaN keeps that
arithmetic working and visibly unknown).

The second half gives tensors the ndarray methods numpy users reach for:
``tolist``, ``item``, ``view``, ``flat``, ``flags``, ``map_chunk``,
``conjugate`` and the ``real``/``imag`` setters.

>>> import mars.tensor as mt
>>> x = mt.asarray([[1, 2], [3, 4]])
>>> xp = x.__array_namespace__()
>>> xp.concat([x, x.mT], axis=0).execute().fetch().tolist()
[[1, 2], [3, 4], [1, 3], [2, 4]]
"""

from __future__ import annotations

import builtins
import importlib
import math
from types import ModuleType
from collections.abc import Callable, Generator, Iterator
from typing import Any

import numpy as np

from ..core.entity import has_unknown
from ..core.operator import Tiled
from .arithmetic.core import TensorElementwise
from .arithmetic.core import broadcast_shapes as _nan_broadcast_shapes
from .arithmetic.ufuncs import left_shift, right_shift
from .base.join import concatenate
from .base.reshape import known_sizes, rechunked
from .base.shape import reshape, swapaxes
from .base.transpose import transpose
from .core import Tensor, TensorOperator, tensor_data
from .datasource.array import asarray
from .datasource.core import astensor, check_device, full, placement
from .indexing.setitem import is_view, rebind
from .reduction.cumulative import cumprod, cumsum

__all__ = [
    "__array_api_version__", "__array_namespace_info__", "concat", "permute_dims", "unstack", "matrix_transpose",
    "cumulative_sum", "cumulative_prod", "bitwise_left_shift", "bitwise_right_shift", "from_dlpack",
    "broadcast_shapes",
]

__array_api_version__ = "2024.12"
_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")
_CPU = "cpu"

bitwise_left_shift = left_shift
bitwise_right_shift = right_shift

_KINDS = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
}
_KINDS["integral"] = _KINDS["signed integer"] + _KINDS["unsigned integer"]
_KINDS["numeric"] = _KINDS["integral"] + _KINDS["real floating"] + _KINDS["complex floating"]
_KINDS[None] = _KINDS["bool"] + _KINDS["numeric"]  # type: ignore[index]


class __array_namespace_info__:  # the standard's name
    """What this namespace supports (the Array API's inspection object).

    >>> import mars.tensor as mt
    >>> info = mt.__array_namespace_info__()
    >>> info.default_device(), info.default_dtypes()["indexing"]
    ('cpu', dtype('int64'))
    """

    def capabilities(self) -> dict[str, Any]:
        # boolean masks and nonzero/unique give sizes known only after execution: supported
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self) -> str:
        return _CPU

    def devices(self) -> list[str]:
        return [_CPU]

    def default_dtypes(self, *, device: Any = None) -> dict[str, np.dtype]:
        check_device(device)
        return {"real floating": np.dtype(np.float64), "complex floating": np.dtype(np.complex128),
                "integral": np.dtype(np.int64), "indexing": np.dtype(np.intp)}

    def dtypes(self, *, device: Any = None, kind: str | tuple | None = None) -> dict[str, np.dtype]:
        check_device(device)
        kinds = kind if isinstance(kind, tuple) else (kind,)
        names: list[str] = []
        for k in kinds:
            if k not in _KINDS:
                raise ValueError(f"unsupported kind: {k!r}; expected None, a tuple or one of "
                                 f"{sorted(str(n) for n in _KINDS if n is not None)}")
            names += [n for n in _KINDS[k] if n not in names]
        return {n: np.dtype(n) for n in names}


# ----------------------------------------------------------------- functions numpy 2 names for the standard
def concat(arrays: Any, /, *, axis: int | None = 0) -> Tensor:
    """Join tensors along an existing axis (flattened first when ``axis`` is None).

    >>> import mars.tensor as mt
    >>> mt.concat([mt.arange(2), mt.arange(3)]).execute().fetch()
    array([0, 1, 0, 1, 2])
    """
    return concatenate(arrays, axis=axis)


def permute_dims(x: Any, /, axes: Any) -> Tensor:
    """``x`` with its axes reordered (``transpose`` with the axes required).

    >>> import mars.tensor as mt
    >>> mt.permute_dims(mt.ones((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    return transpose(x, axes)


def matrix_transpose(x: Any, /) -> Tensor:
    """The last two axes swapped (a stack of transposed matrices).

    >>> import mars.tensor as mt
    >>> mt.matrix_transpose(mt.ones((5, 2, 3))).shape
    (5, 3, 2)
    """
    t = astensor(x)
    if t.ndim < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, but it is {t.ndim}")
    return swapaxes(t, -1, -2)


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Tensor, ...]:
    """The tensors along ``axis``, as a tuple (the inverse of ``stack``).

    >>> import mars.tensor as mt
    >>> [u.execute().fetch().tolist() for u in mt.unstack(mt.tensor([[1, 2], [3, 4]]), axis=1)]
    [[1, 3], [2, 4]]
    """
    t = astensor(x)
    if t.ndim == 0:
        raise ValueError("Input array must be at least 1-d.")
    axis = np.lib.array_utils.normalize_axis_index(axis, t.ndim)
    if has_unknown(t.shape[axis:axis + 1]):
        raise ValueError(f"unstack along axis {axis} needs its length, unknown until executed; call .execute() first")
    lead = (slice(None),) * axis
    return tuple(t[lead + (i,)] for i in range(int(t.shape[axis])))


def _cumulative(scan: Callable, identity: int, x: Any, axis: int | None, dtype: Any, include_initial: bool) -> Tensor:
    t = astensor(x)
    if axis is None:
        if t.ndim > 1:
            raise ValueError("For arrays which have more than one dimension ``axis`` argument is required.")
        axis = 0
    t = reshape(t, (1,)) if t.ndim == 0 else t
    result = scan(t, axis=axis, dtype=dtype)
    if not include_initial:
        return result
    axis = np.lib.array_utils.normalize_axis_index(axis, t.ndim)
    shape = tuple(1 if d == axis else n for d, n in enumerate(result.shape))
    if has_unknown(shape):
        raise ValueError("include_initial needs the other axes' lengths, unknown until executed; call .execute() first")
    return concatenate([full(shape, identity, dtype=result.dtype), result], axis=axis)


def cumulative_sum(x: Any, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False) -> Tensor:
    """Running sums along ``axis`` (required beyond 1-d), with a leading 0 if ``include_initial``.

    >>> import mars.tensor as mt
    >>> mt.cumulative_sum(mt.tensor([1, 2, 3]), include_initial=True).execute().fetch()
    array([0, 1, 3, 6])
    """
    return _cumulative(cumsum, 0, x, axis, dtype, include_initial)


def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False) -> Tensor:
    """Running products along ``axis`` (required beyond 1-d), with a leading 1 if ``include_initial``.

    >>> import mars.tensor as mt
    >>> mt.cumulative_prod(mt.tensor([1, 2, 3]), include_initial=True).execute().fetch()
    array([1, 1, 2, 6])
    """
    return _cumulative(cumprod, 1, x, axis, dtype, include_initial)


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Tensor:
    """A tensor from an object that exports DLPack (``__dlpack__``), such as a numpy array.

    >>> import numpy as np, mars.tensor as mt
    >>> mt.from_dlpack(np.arange(3)).execute().fetch()
    array([0, 1, 2])
    """
    if isinstance(x, Tensor):
        check_device(device)
        return Tensor(x.data) if copy else x
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack needs an object with __dlpack__, got {type(x).__name__}")
    check_device(device)
    return asarray(np.from_dlpack(x, copy=copy), copy=False)


def broadcast_shapes(*shapes: Any) -> tuple:
    """The shape the given shapes broadcast to (a NaN, a size unknown until run, matches any).

    >>> import mars.tensor as mt
    >>> mt.broadcast_shapes((3, 1), (4,))
    (3, 4)
    """
    shapes = tuple((s,) if isinstance(s, (int, np.integer)) else tuple(s) for s in shapes)
    if not any(has_unknown(s) for s in shapes):
        return tuple(int(n) for n in np.broadcast_shapes(*shapes))
    return _nan_broadcast_shapes(*shapes)


# ----------------------------------------------------------------- the standard's tensor attributes
def _array_namespace(self: Tensor, /, *, api_version: str | None = None) -> ModuleType:
    if api_version is not None and api_version not in _VERSIONS:
        raise ValueError(f"Unrecognized array API version: {api_version!r}; supported: {', '.join(_VERSIONS)}")
    return importlib.import_module(__package__)


def _device(self: Tensor) -> str:
    return "gpu" if self.op.gpu else _CPU


def _to_device(self: Tensor, device: Any, /, *, stream: Any = None) -> Tensor:
    if stream is not None:
        raise ValueError(f"stream is not supported for device {device!r}, got stream={stream!r}")
    gpu = placement(device, None)
    return self.to_gpu() if gpu else self.to_cpu()


def _dlpack(self: Tensor, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
            copy: bool | None = None) -> Any:
    kw = {"max_version": max_version, "dl_device": dl_device, "copy": copy}
    return np.asarray(self.fetch()).__dlpack__(stream=stream, **{k: v for k, v in kw.items() if v is not None})


def _dlpack_device(self: Tensor) -> tuple:
    return np.asarray(self.fetch()).__dlpack_device__()


def _mt(self: Tensor) -> Tensor:
    return matrix_transpose(self)


# ----------------------------------------------------------------- numpy's ndarray methods
_FLAG_ALIASES = {"C": "C_CONTIGUOUS", "CONTIGUOUS": "C_CONTIGUOUS", "F": "F_CONTIGUOUS", "FORTRAN": "F_CONTIGUOUS",
                 "O": "OWNDATA", "W": "WRITEABLE", "A": "ALIGNED"}


class TensorFlags:
    """A tensor's memory-layout flags, as ``ndarray.flags`` reports them for its result.

    >>> import mars.tensor as mt
    >>> f = mt.ones((2, 3), order="F").flags
    >>> f["F_CONTIGUOUS"], f.c_contiguous, f.writeable
    (True, False, True)
    """

    def __init__(self, t: Tensor):
        one_axis = sum(1 for n in t.shape if n != 1) <= 1  # numpy: such an array is both C and F contiguous
        self.c_contiguous = one_axis or t.order == "C"
        self.f_contiguous = one_axis or t.order == "F"
        self.owndata = not is_view(t)
        self.writeable = self.aligned = True
        self.writebackifcopy = False

    def __getitem__(self, name: str) -> bool:
        key = _FLAG_ALIASES.get(name, name)
        if key not in ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED", "WRITEBACKIFCOPY"):
            raise KeyError(f"Unknown flag {name!r}")
        return bool(getattr(self, key.lower()))

    def __repr__(self) -> str:
        names = ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED", "WRITEBACKIFCOPY")
        return "\n".join(f"  {n} : {self[n]}" for n in names)


class TensorFlat:
    """``t.flat``: ``t`` seen as 1-d, in C order; indexable, assignable and iterable.

    >>> import mars.tensor as mt
    >>> t = mt.zeros((2, 3), dtype=int, chunk_size=2)
    >>> t.flat[[1, 4]] = 7
    >>> t.flat[:5].execute().fetch()
    array([0, 7, 0, 0, 7])
    """

    def __init__(self, base: Tensor):
        self.base = base

    def __getitem__(self, index: Any) -> Tensor:
        return self.base.ravel()[index]

    def __setitem__(self, index: Any, value: Any) -> None:
        flat = self.base.ravel()
        flat[index] = value
        rebind(self.base, reshape(flat, self.base.shape).data)

    def __iter__(self) -> Iterator[Tensor]:
        return iter(self.base.ravel())

    def __len__(self) -> int:
        return len(self.base.ravel())

    def copy(self) -> Tensor:
        return self.base.ravel().copy()


def _tolist(self: Tensor) -> Any:
    return np.asarray(self.fetch()).tolist()


def _item(self: Tensor, *args: Any) -> Any:
    """``ndarray.item``: one element as a Python scalar (only that element is computed)."""
    if not args:
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return np.asarray(self.fetch()).item()
    index = args[0] if len(args) == 1 else args
    if isinstance(index, tuple):
        if len(index) != self.ndim:
            raise ValueError("incorrect number of indices for array")
        return np.asarray(self[index].fetch()).item()
    return np.asarray(self.ravel()[index].fetch()).item()


class TensorSetPart(TensorElementwise):
    """A complex tensor with its real (or imaginary) part replaced: ``t.real = v``."""

    params = ("part",)

    def execute(self, x: np.ndarray, value: Any) -> np.ndarray:
        out = np.array(x, copy=True)
        setattr(out, self.part, value)
        return out


def _part_setter(part: str) -> Callable[[Tensor, Any], None]:
    def setter(self: Tensor, value: Any) -> None:
        if self.dtype.kind != "c":
            if part == "imag":
                raise TypeError("array does not have imaginary part to set")
            self[...] = value
            return
        v = tensor_data(astensor(value))
        shape = _nan_broadcast_shapes(self.shape, v.shape)
        if shape != tuple(self.shape):
            raise ValueError(f"could not broadcast input array from shape {v.shape} into shape {self.shape}")
        data = TensorSetPart(part=part).new_tensor([tensor_data(self), v], self.shape, self.dtype, order=self.order)
        rebind(self, data.data)

    return setter


class TensorView(TensorOperator):
    """``ndarray.view(dtype)`` chunk by chunk: the same bytes read as another dtype."""

    params = ("dtype",)

    @classmethod
    def tile(cls, op: TensorView) -> Generator[Any, Any, Tiled]:
        x, out = op.inputs[0], op.outputs[0]
        ratio = out.dtype.itemsize / x.dtype.itemsize
        if ratio > 1 and x.ndim:  # each chunk's last axis must hold whole new elements
            yield from known_sizes([x])
            splits = _multiples(x.nsplits[-1], int(ratio))
            x = yield from rechunked(x, x.nsplits[:-1] + (splits,))
        nsplits = x.nsplits[:-1] + (tuple(int(n / ratio) for n in x.nsplits[-1]),) if x.ndim else ()
        chunks = []
        for c in x.chunks:
            shape = c.shape[:-1] + (int(c.shape[-1] / ratio),) if c.ndim else ()
            chunks.append(TensorView(dtype=out.dtype).new_chunk([c], index=c.index, shape=shape, dtype=out.dtype,
                                                                order="C"))
        return Tiled(chunks, nsplits)

    def execute(self, x: Any) -> np.ndarray:
        return np.ascontiguousarray(x).view(self.dtype)


def _multiples(splits: tuple, ratio: int) -> tuple:
    """Chunk sizes along an axis moved to multiples of ``ratio`` (same total)."""
    bounds = np.cumsum(splits)
    cuts = sorted({int(b) - int(b) % ratio for b in bounds} - {0})
    return tuple(np.diff([0] + cuts).tolist())


def _view(self: Tensor, dtype: Any = None, type: Any = None) -> Tensor:  # numpy's names
    """``ndarray.view(dtype)``; a view of the same dtype is the same data (as the user's object)."""
    if type is not None or (isinstance(dtype, builtins.type) and issubclass(dtype, np.ndarray)):
        raise NotImplementedError("view(type=...) makes an ndarray subclass; fetch the result and call .view on it")
    if dtype is None:
        return Tensor(self.data)
    dtype = np.dtype(dtype)
    old = self.dtype.itemsize
    if dtype.itemsize != old:
        _check_view_sizes(self, dtype)
    last = self.shape[-1] * old / dtype.itemsize if self.ndim else None
    shape = self.shape[:-1] + ((int(last) if not math.isnan(last) else last),) if self.ndim else ()
    return TensorView(dtype=dtype).new_tensor([tensor_data(self)], shape, dtype)


def _check_view_sizes(t: Tensor, dtype: np.dtype) -> None:
    if t.ndim == 0:
        raise ValueError("Changing the dtype of a 0d array is only supported if the itemsize is unchanged")
    if t.order == "F" and sum(1 for n in t.shape if n != 1) > 1:
        raise ValueError("To change to a dtype of a different size, the last axis must be contiguous")
    nbytes = t.shape[-1] * t.dtype.itemsize
    if not math.isnan(nbytes) and nbytes % dtype.itemsize:
        raise ValueError("When changing to a larger dtype, its size must be a divisor of the total size in bytes "
                         "of the last axis of the array.")


class TensorMapChunk(TensorOperator):
    """``t.map_chunk(func)``: ``func`` applied to each chunk's numpy array."""

    params = ("func", "args", "kwargs", "shape")

    @classmethod
    def tile(cls, op: TensorMapChunk) -> Tiled:
        x, out = op.inputs[0], op.outputs[0]
        same = [a == b for a, b in zip(out.shape, x.shape)]
        nsplits = tuple(s if keep else (math.nan,) * len(s) for s, keep in zip(x.nsplits, same))
        chunks = []
        for c in x.chunks:
            shape = tuple(n if keep else math.nan for n, keep in zip(c.shape, same))
            chunk_op = TensorMapChunk(func=op.func, args=op.args, kwargs=op.kwargs, shape=shape)
            chunks.append(chunk_op.new_chunk([c], index=c.index, shape=shape, dtype=out.dtype, order=out.order))
        return Tiled(chunks, nsplits)

    def execute(self, x: Any) -> Any:
        result = np.asarray(self.func(x, *self.args, **self.kwargs))
        expected = self.shape
        if result.ndim != len(expected) or any(not math.isnan(e) and e != n for e, n in zip(expected, result.shape)):
            raise ValueError(f"map_chunk: func returned shape {result.shape} for a chunk of shape {np.shape(x)}, "
                             f"expected {tuple(expected)}; pass shape= with NaN on the axes it changes")
        return result


def _map_chunk(self: Tensor, func: Callable, args: tuple = (), kwargs: dict | None = None, dtype: Any = None,
               shape: Any = None) -> Tensor:
    """``func(chunk, *args, **kwargs)`` on each chunk's numpy array; ``shape`` (the result's, NaN
    where unknown) is the tensor's own unless given, ``dtype`` found by a 1-element probe unless given.

    >>> import mars.tensor as mt
    >>> mt.arange(6, chunk_size=4).map_chunk(lambda c: c * 10).execute().fetch()
    array([ 0, 10, 20, 30, 40, 50])
    """
    kwargs = dict(kwargs or {})
    shape = tuple(self.shape) if shape is None else tuple(shape)
    if len(shape) != self.ndim:
        raise ValueError(f"map_chunk keeps the number of dimensions ({self.ndim}); got shape {shape}")
    if dtype is None:
        try:
            dtype = np.asarray(func(np.ones((1,) * self.ndim, dtype=self.dtype), *args, **kwargs)).dtype
        except Exception as e:
            raise TypeError(f"cannot infer map_chunk's dtype by calling func on a sample ({e}); pass dtype=") from e
    op = TensorMapChunk(func=func, args=tuple(args), kwargs=kwargs, shape=None)
    return op.new_tensor([tensor_data(self)], shape, np.dtype(dtype), order=self.order)


def _install() -> None:
    Tensor.__array_namespace__ = _array_namespace  # type: ignore[attr-defined]
    Tensor.device = property(_device)  # type: ignore[attr-defined]
    Tensor.to_device = _to_device  # type: ignore[attr-defined]
    Tensor.mT = property(_mt)  # type: ignore[attr-defined]
    Tensor.__complex__ = lambda self: complex(self.fetch())  # type: ignore[attr-defined]
    Tensor.__dlpack__ = _dlpack  # type: ignore[attr-defined]
    Tensor.__dlpack_device__ = _dlpack_device  # type: ignore[attr-defined]
    Tensor.flags = property(TensorFlags)  # type: ignore[attr-defined]
    Tensor.flat = property(TensorFlat)  # type: ignore[attr-defined]
    Tensor.tolist = _tolist  # type: ignore[attr-defined]
    Tensor.item = _item  # type: ignore[attr-defined]
    Tensor.view = _view  # type: ignore[attr-defined]
    Tensor.map_chunk = _map_chunk  # type: ignore[attr-defined]
    # getters are bound with the other methods (mars.tensor.methods), which keeps these setters
    Tensor.real = property(None, _part_setter("real"))  # type: ignore[attr-defined]
    Tensor.imag = property(None, _part_setter("imag"))  # type: ignore[attr-defined]


_install()
