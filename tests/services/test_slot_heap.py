"""A slot keeps the memory its subtasks free (:mod:`mars.services.execution.heap`): columns of a few MB, made and
freed by subtask after subtask, are served from its heap rather than faulted in fresh from the kernel each time."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from mars.services.execution import slot
from mars.services.execution.heap import keep_freed_memory

# partition-sized columns, a little bigger each time (as a slot's subtasks ask): glibc's own adaptive
# threshold follows the last freed block, so each new size would be fresh pages again
_SCRIPT = """
import resource, sys
import numpy as np
from mars.services.execution.heap import keep_freed_memory
kept = sys.argv[1] == "kept" and keep_freed_memory()
np.ones(1 << 16)  # numpy's own start-up allocations
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for i in range(40):
    column = np.ones((2 << 20) // 8 + i * 4096)  # 2 MiB and up, every page written
    del column
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", _SCRIPT, mode], capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_columns_freed_by_one_subtask_are_reused_by_the_next():
    if not keep_freed_memory():
        pytest.skip("the C library is not glibc")
    fresh, kept = _faults("fresh"), _faults("kept")
    if fresh < 40 * 256:  # without: each column's 512 pages faulted in again
        pytest.skip(f"{fresh} page faults without: this kernel maps them otherwise (huge pages), nothing to show")
    assert kept * 10 < fresh, (kept, fresh)


def test_a_slot_sets_its_heap_up_when_it_starts(monkeypatch):
    called = []
    monkeypatch.setattr(slot, "keep_freed_memory", lambda: called.append(True))
    monkeypatch.setattr(slot, "keep_mappings", lambda on=True: None)

    async def start_and_stop():
        actor = slot.SlotRunnerActor("mars-test", one_thread=False)
        await actor.__post_create__()
        await actor.__pre_destroy__()

    asyncio.run(start_and_stop())
    assert called == [True]
