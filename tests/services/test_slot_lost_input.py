"""An input whose shared-memory segment is gone when a slot reads it (its worker lost, its copy freed) is reported as
lost, with no traceback: the supervisor then checks the workers involved and computes it again from its lineage,
instead of failing the job with the chunk function's error. A chunk function's own errors keep their traceback."""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np

from mars.core.graph import Subtask
from mars.core.operator import Operator
from mars.services.errors import DataNotFound
from mars.services.execution import slot
from mars.services.execution.api import SubtaskSpec
from mars.services.storage import shm


class Total(Operator):
    def execute(self, x: Any) -> Any:
        return float(np.sum(x))


class Raises(Operator):
    def execute(self, x: Any) -> Any:
        raise DataNotFound("the function's own error")


def _spec(op: Operator, desc: Any) -> SubtaskSpec:
    return SubtaskSpec("s", "t", 0, Subtask(op, ["in"], ["out"]), (0, 0), local_inputs={"in": desc})


def _stored() -> Any:
    return shm.put_object("in", np.arange(100_000, dtype=np.float64), f"mars-test-{uuid.uuid4().hex[:8]}")


def test_a_local_input_whose_segment_is_gone_is_lost_not_the_functions_error():
    desc = _stored()
    shm.unlink_object(desc)
    outcome = slot._run_one(_spec(Total(), desc), {}, "mars-test-out", {})
    assert isinstance(outcome.error, DataNotFound) and not outcome.traceback


def test_an_input_that_is_there_runs_and_a_functions_own_error_keeps_its_traceback():
    desc = _stored()
    prefix = f"mars-test-{uuid.uuid4().hex[:8]}"
    try:
        done = slot._run_one(_spec(Total(), desc), {}, prefix, {})
        assert done.error is None and done.descs[0].value == float(np.arange(100_000).sum())
        failed = slot._run_one(_spec(Raises(), desc), {}, prefix, {})
        assert isinstance(failed.error, DataNotFound) and "the function's own error" in failed.traceback
    finally:
        shm.unlink_object(desc)
        shm.unlink_prefix(prefix)
