"""The CUDA devices of a worker: which exist, and how busy each is (through NVML).

``nvidia-ml-py`` (the ``pynvml`` module) is imported only by a worker given
``--cuda-devices``; indices are NVML's (the physical order ``nvidia-smi``
shows), and each GPU slot process is pinned to its device with
``CUDA_VISIBLE_DEVICES``.

>>> parse_visible("")
[]
"""

from __future__ import annotations

import logging
from typing import Any, Sequence

logger = logging.getLogger(__name__)


class GPUDeviceError(ValueError):
    """``--cuda-devices`` names a device this machine does not have, or none can be listed."""


def parse_visible(text: str) -> list[int]:
    """``CUDA_VISIBLE_DEVICES``-style ``"0,2"`` as indices (empty: none)."""
    return [int(part) for part in text.split(",") if part.strip()]


def _nvml() -> Any:
    try:
        import pynvml
    except ImportError as e:
        raise GPUDeviceError(f"cannot list CUDA devices: nvidia-ml-py is not installed ({e}); "
                             "install pymars[gpu]") from None
    try:
        pynvml.nvmlInit()
    except Exception as e:  # noqa: BLE001 - NVMLError_LibraryNotFound, _DriverNotLoaded, ...
        raise GPUDeviceError(f"cannot list CUDA devices: the NVIDIA driver does not answer ({e})") from None
    return pynvml


def visible_devices() -> list[tuple[int, str]]:
    """``(index, name)`` of every CUDA device on this machine."""
    nvml = _nvml()
    out = []
    for i in range(nvml.nvmlDeviceGetCount()):
        name = nvml.nvmlDeviceGetName(nvml.nvmlDeviceGetHandleByIndex(i))
        out.append((i, name.decode() if isinstance(name, bytes) else str(name)))
    return out


def resolve_devices(spec: Any, visible: Sequence[tuple[int, str]] | None = None) -> list[int]:
    """The devices ``--cuda-devices`` names: ``"auto"`` is every visible one, a list is checked against them.

    >>> resolve_devices([0], visible=[(0, "H100")])
    [0]
    >>> resolve_devices("auto", visible=[(0, "A"), (1, "B")])
    [0, 1]
    """
    if spec in (None, "", [], ()):
        return []
    if visible is None:
        visible = visible_devices()
    indices = [i for i, _ in visible]
    if spec == "auto":
        return indices
    wanted = [int(d) for d in spec]
    missing = [d for d in wanted if d not in indices]
    if missing:
        seen = ", ".join(f"{i} ({name})" for i, name in visible) or "none"
        raise GPUDeviceError(f"--cuda-devices names CUDA device {', '.join(map(str, missing))}, which does not "
                             f"exist here; visible devices: {seen}")
    return wanted


class GPUMonitor:
    """Name, memory used/total and utilisation of each of a worker's devices, sampled at each heartbeat."""

    def __init__(self, devices: Sequence[int]):
        self.devices = list(devices)
        self._nvml: Any = None
        self._failed = False

    def sample(self) -> list[dict]:
        if not self.devices or self._failed:
            return []
        try:
            if self._nvml is None:
                self._nvml = _nvml()
            return [self._one(i) for i in self.devices]
        except Exception as e:  # noqa: BLE001 - a monitor must not stop the heartbeat: log once, report none
            logger.warning("cannot sample the CUDA devices %s: %s", self.devices, e)
            self._failed = True
            return []

    def _one(self, index: int) -> dict:
        nvml = self._nvml
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        memory = nvml.nvmlDeviceGetMemoryInfo(handle)
        name = nvml.nvmlDeviceGetName(handle)
        return {"index": index, "name": name.decode() if isinstance(name, bytes) else str(name),
                "memory_used": int(memory.used), "memory_total": int(memory.total),
                "utilization": int(nvml.nvmlDeviceGetUtilizationRates(handle).gpu)}
