"""Where a chunk's value lives: host memory (NumPy) or a CUDA device (CuPy).

An operator with ``op.gpu`` set runs on the device: the executors (the
local one, a worker's slot, a fused subtask's steps) hand it its inputs as
CuPy arrays, and its chunk function works on them through numpy's dispatch
protocols (``np.sort(cupy_array)`` runs ``cupy.sort``); a source op that
makes its values with numpy has them copied over. Every other op gets host
values. CuPy is imported only when a GPU op runs: CPU work never needs it,
and a value that is not a CuPy array is recognised without importing it.

>>> import numpy as np
>>> is_device_array(np.ones(2)), to_host(np.ones(2)).sum()
(False, np.float64(2.0))
"""

from __future__ import annotations

import sys
from typing import Any

#: staging copies above this size go through page-locked (pinned) host memory: faster transfers
_PINNED_ABOVE = 1 << 20


class GPUUnavailableError(RuntimeError):
    """A GPU op was asked to run where CuPy or a CUDA device is missing."""


def cupy_module() -> Any:
    """CuPy, imported on first use; a clear error where it is not installed or sees no device."""
    loaded = sys.modules.get("cupy")
    if loaded is not None:
        return loaded
    try:
        import cupy as cp
    except ImportError as e:
        raise GPUUnavailableError(
            f"this operation runs on a GPU (gpu=True) and needs CuPy, which cannot be imported here ({e}); "
            "install pymars[gpu] where a CUDA device is visible"
        ) from None
    return cp


def array_module(gpu: Any) -> Any:
    """``cupy`` for a GPU op, else ``numpy``."""
    if gpu:
        return cupy_module()
    import numpy

    return numpy


def is_device_array(value: Any) -> bool:
    """Whether ``value`` is a CuPy array (checked without importing CuPy)."""
    return type(value).__module__.startswith("cupy") and hasattr(value, "__cuda_array_interface__")


def xp_of(value: Any) -> Any:
    """The array module of ``value``: ``cupy`` for a CuPy array, else ``numpy``."""
    if is_device_array(value):
        return cupy_module()
    import numpy

    return numpy


def asarray(value: Any, dtype: Any = None) -> Any:
    """``np.asarray`` that leaves a CuPy array (or scalar) on its device."""
    if is_device_array(value):
        return value if dtype is None else value.astype(dtype, copy=False)
    import numpy

    return numpy.asarray(value, dtype=dtype)


def copy_array(value: Any) -> Any:
    """``np.array(value)`` (a copy; a 0-d array for a scalar) on the value's own device."""
    if is_device_array(value):
        return value.copy()
    import numpy

    return numpy.array(value)


def to_host(value: Any) -> Any:
    """A CuPy array (or a tuple/list of them) copied to a NumPy array; anything else as it is."""
    if isinstance(value, (tuple, list)) and any(is_device_array(v) for v in value):
        return type(value)(to_host(v) for v in value)
    if not is_device_array(value):
        return value
    if value.nbytes > _PINNED_ABOVE:
        import cupyx

        out = cupyx.empty_like_pinned(value)
        value.get(out=out)
        return out
    return value.get()


def synchronize() -> None:
    """Wait for the kernels this thread launched on its current CUDA stream (nothing without CuPy loaded)."""
    cp = sys.modules.get("cupy")
    if cp is not None:
        cp.cuda.get_current_stream().synchronize()


def to_device(value: Any) -> Any:
    """A NumPy array or scalar copied to the current CUDA device; other values as they are."""
    if is_device_array(value):
        return value
    if isinstance(value, (tuple, list)) and value and all(_numeric_array(v) for v in value):
        return type(value)(to_device(v) for v in value)
    if not _numeric_array(value):
        return value
    return cupy_module().asarray(value)


def _numeric_array(value: Any) -> bool:
    import numpy

    return isinstance(value, (numpy.ndarray, numpy.generic)) and value.dtype.kind in "biufcmM"


def run_op(op: Any, inputs: list[Any] | tuple[Any, ...]) -> Any:
    """Run ``op``'s chunk function on ``inputs``, on the device the op asks for.

    A GPU op gets device inputs and returns device values (a source op's
    host values are moved over); any other op gets host inputs. An op that
    runs steps of its own (a fused subtask) does this per step itself.
    """
    if getattr(op, "runs_steps", False):
        return op.execute(*inputs)
    if getattr(op, "gpu", None):
        result = _with_device_params(op).execute(*[to_device(v) for v in inputs])
        return to_device(result) if not isinstance(result, tuple) else tuple(to_device(v) for v in result)
    if "cupy" in sys.modules and any(is_device_array(v) for v in inputs):
        inputs = [to_host(v) for v in inputs]
    return op.execute(*inputs)


def _with_device_params(op: Any) -> Any:
    """``op``, or a shallow copy of it whose array parameters (pivots, indices, a source's data) are
    on the device: CuPy functions refuse to mix NumPy arrays with their own."""
    changed = {}
    for name in getattr(type(op), "params", ()):
        value = getattr(op, name, None)
        moved = _param_to_device(value)
        if moved is not value:
            changed[name] = moved
    if not changed:
        return op
    clone = object.__new__(type(op))
    clone.__dict__.update(op.__dict__)
    clone.__dict__.update(changed)
    return clone


def _param_to_device(value: Any) -> Any:
    import numpy

    if isinstance(value, numpy.ndarray) and value.ndim and value.dtype.kind in "biufc":
        return cupy_module().asarray(value)
    if isinstance(value, (tuple, list)) and any(isinstance(v, numpy.ndarray) and v.ndim for v in value):
        return type(value)(_param_to_device(v) for v in value)
    return value
