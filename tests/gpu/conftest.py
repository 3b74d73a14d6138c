"""GPU tests: those marked ``gpu`` need CuPy and a CUDA device, and skip with the reason without them."""

from __future__ import annotations

import pytest


def _gpu_missing() -> str | None:
    try:
        import cupy
    except Exception as e:  # noqa: BLE001 - ImportError, or a CUDA library that fails to load
        return f"CuPy cannot be imported ({type(e).__name__}: {e})"
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - no driver
        return f"CuPy sees no CUDA driver ({e})"
    return None if n else "CuPy sees no CUDA device"


def pytest_collection_modifyitems(config, items):
    gpu_items = [item for item in items if item.get_closest_marker("gpu")]
    if not gpu_items:
        return
    reason = _gpu_missing()
    if reason:
        for item in gpu_items:
            item.add_marker(pytest.mark.skip(reason=f"needs a GPU: {reason}"))
