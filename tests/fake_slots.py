"""Stand-in slot and report actors for tests of the execution actor (no CUDA, no pytest plugins)."""

from __future__ import annotations

import asyncio
import os

import mars.oscar as mo
from mars.services.execution.api import SlotOutcome, SubtaskSpec


class GatedSlot(mo.Actor):
    """A slot whose batches end when the test says so."""

    def __init__(self) -> None:
        self.started: list[int] = []
        self.gate = asyncio.Event()

    async def run(self, specs: list[SubtaskSpec]) -> list[SlotOutcome]:
        self.started.extend(s.index for s in specs)
        await self.gate.wait()
        self.gate.clear()
        return [SlotOutcome(s.index, s.task_id) for s in specs]

    @mo.no_lock
    def open(self) -> None:
        self.gate.set()

    @mo.no_lock
    def seen(self) -> list[int]:
        return self.started

    @mo.no_lock
    def ping(self) -> int:
        return os.getpid()


class Reports(mo.Actor):
    def __init__(self) -> None:
        self.indexes: list[int] = []

    def subtasks_done(self, reports: list) -> None:
        self.indexes.extend(r.index for r in reports)

    def get(self) -> list[int]:
        return sorted(self.indexes)
