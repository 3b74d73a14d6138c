"""Moving tensors between host memory and a CUDA device: ``t.to_gpu()``, ``t.to_cpu()``.

A tensor runs on the GPU when it is made with ``gpu=True`` or computed from
one that does (``t.op.gpu``); its chunks then live in a GPU slot's device
memory and its chunk functions get CuPy arrays (see ``mars.core.device``).
``fetch()`` returns NumPy either way; ``fetch(gpu=True)`` a CuPy array.

>>> import mars.tensor as mt
>>> t = mt.ones(3, chunk_size=2)
>>> bool(t.to_cpu().op.gpu), t.to_gpu().op.gpu
(False, True)
"""

from __future__ import annotations

from typing import Any

from ..core.device import cupy_module
from .arithmetic.core import TensorElementwise
from .core import Tensor, tensor_data

__all__: list[str] = []


class TensorToDevice(TensorElementwise):
    """The input as it is, on the op's device: the executor moves it (``op.gpu`` says where)."""

    def execute(self, x: Any) -> Any:
        return x


def to_gpu(t: Tensor) -> Tensor:
    """This tensor on the GPU: later operations on it run on GPU slots (CuPy)."""
    if t.op.gpu:
        return t
    return _moved(t, True)


def to_cpu(t: Tensor) -> Tensor:
    """This tensor in host memory: later operations on it run on CPU slots (NumPy)."""
    if not t.op.gpu:
        return t
    return _moved(t, False)


def _moved(t: Tensor, gpu: bool) -> Tensor:
    data = tensor_data(t)
    op = TensorToDevice()
    op.gpu = gpu
    return op.new_tensor([data], data.shape, data.dtype, order=data.order)


def fetch(t: Tensor, session: Any = None, gpu: bool = False) -> Any:
    """The computed value as NumPy, or as a CuPy array on the current device with ``gpu=True``."""
    value = super(Tensor, t).fetch(session=session)
    return cupy_module().asarray(value) if gpu else value


Tensor.to_gpu = to_gpu  # type: ignore[attr-defined]
Tensor.to_cpu = to_cpu  # type: ignore[attr-defined]
Tensor.fetch = fetch  # type: ignore[method-assign]
