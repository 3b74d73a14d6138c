"""Suite-wide: the tests leave no sockets open behind them, and small frames take the partitioned join paths."""

from __future__ import annotations

import gc
import importlib
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


@pytest.fixture(autouse=True)
def _partitioned_merges(monkeypatch):
    """Small test frames in several partitions take the partitioned join paths, as big ones do (a side of
    few rows in all is otherwise merged whole: ``merge_strategy.FEW_ROWS``; tests/dataframe/test_merge_few_rows.py
    covers that)."""
    monkeypatch.setattr(importlib.import_module("mars.dataframe.merge_strategy"), "FEW_ROWS", -1)


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


@pytest.fixture
def fused_names(monkeypatch):
    """A fresh embedded session, and the subtasks its runs executed: op names, fused groups as ``A -> B``."""
    import mars
    import mars.session as mars_session
    from mars.core.fusion import FusedOp

    names: list[str] = []
    real = mars_session.fuse

    def recording(subtasks, keep, **kwargs):
        out = real(subtasks, keep, **kwargs)
        names.extend(repr(st.op)[len("FusedOp("):-1] if isinstance(st.op, FusedOp) else type(st.op).__name__
                     for st in out)
        return out

    monkeypatch.setattr(mars_session, "fuse", recording)
    sess = mars.new_session()
    yield names
    sess.close()
