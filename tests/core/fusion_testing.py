"""Plain ops and helpers for the fusion tests: graphs of subtasks built by hand, run in order."""

from __future__ import annotations

from typing import Any

import numpy as np

from mars.core.graph import Subtask


class Source:
    """A subtask with no inputs that gives ``value``."""

    def __init__(self, value: Any):
        self.value = value

    def execute(self) -> Any:
        return self.value


def subtask(op: Any, inputs: list[str] | tuple, outputs: list[str] | tuple) -> Subtask:
    """A subtask of ``op`` with outputs of unknown size."""
    return Subtask(op, list(inputs), list(outputs), [(np.nan, 2)] * len(outputs), [None] * len(outputs))


def run_subtasks(subtasks: list[Subtask], env: dict | None = None) -> dict:
    """Every output by key, the subtasks run in order on the values of ``env`` and of those before."""
    env = dict(env or {})
    for st in subtasks:
        result = st.op.execute(*[env[k] for k in st.input_keys])
        env.update(zip(st.output_keys, result) if len(st.output_keys) > 1 else [(st.output_keys[0], result)])
    return env
