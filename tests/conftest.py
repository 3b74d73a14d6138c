"""Suite-wide check: the tests leave no sockets open behind them."""

from __future__ import annotations

import gc
import os

import pytest


def _socket_fds() -> set[int]:
    fds = set()
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                fds.add(int(name))
        except OSError:
            continue
    return fds


@pytest.fixture(autouse=True, scope="session")
def no_leaked_sockets():
    """Every pool and connection the suite opens in this process is closed by its end."""
    if not os.path.isdir("/proc/self/fd"):
        yield
        return
    before = _socket_fds()
    yield
    gc.collect()
    leaked = _socket_fds() - before
    assert not leaked, f"{len(leaked)} sockets were left open by the suite"
