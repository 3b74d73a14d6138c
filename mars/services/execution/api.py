"""What travels between the supervisor's task service and a worker's execution service.

The supervisor sends :class:`SubtaskSpec` batches to a worker's
:class:`~mars.services.execution.worker.ExecutionActor`; the worker answers
with :class:`SubtaskReport` batches as subtasks finish. Only keys, shapes and
small values travel this way: chunk data stays in the workers' storage.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...core.graph import Subtask
from ..errors import ServiceError

EXECUTION_UID = "execution"
SLOT_RUNNER_UID = "slot_runner"


@dataclass
class RemoteInput:
    """Where an input held by another worker lives."""

    worker: str
    transfer_addresses: list[str]
    #: the chunk's size, when the supervisor knows it (the worker's memory estimates read it)
    nbytes: int = 0


@dataclass
class FetchAhead:
    """Inputs of subtasks queued behind a batch, read from other workers together with the batch's own.

    A slot that reads its batch's inputs from worker W then reads, in one
    more call to W made while the batch runs, the pieces that queued
    subtasks (the other reducers of a shuffle, say) need from W, rather than
    each of them making a call of its own. It keeps them in its memory until
    a subtask of its own reads them; after the call it holds exactly ``keep``,
    so the execution actor knows what each slot holds.
    """

    session_id: str
    task_id: str
    #: what to read now, beside the batch's own inputs
    fetch: dict[str, RemoteInput] = field(default_factory=dict)
    #: keys of the session to hold after the call (read now or earlier); all others are dropped
    keep: list[str] = field(default_factory=list)


@dataclass
class SubtaskSpec:
    session_id: str
    task_id: str
    #: the subtask's number within its task (reports name it)
    index: int
    subtask: Subtask
    #: lower runs first: (task order, depth-first order)
    priority: tuple
    #: inputs held by other workers, by key
    remote_inputs: dict[str, RemoteInput] = field(default_factory=dict)
    #: send small output values back with the report (the task's targets)
    report_values: bool = False
    #: 0, or the number of a chain: the specs of one message with the same number go to one slot and run
    #: in order, passing values in memory (a small graph sent whole, or a run of subtasks each reading
    #: what the one before made)
    chained: int = 0
    #: set by the worker before a slot runs it: descriptors of inputs held here
    local_inputs: dict[str, Any] = field(default_factory=dict)
    #: tiny inputs held by other workers, by value (a row count, a key range): the supervisor has them from
    #: the reports, and a read from their worker would cost a round trip
    given: dict[str, Any] = field(default_factory=dict)

    def __reduce__(self) -> tuple:
        # by position: a batch carries thousands of specs
        return SubtaskSpec, (self.session_id, self.task_id, self.index, self.subtask, self.priority,
                             self.remote_inputs, self.report_values, self.chained, self.local_inputs, self.given)


@dataclass
class OutputMeta:
    key: str
    shape: tuple | None
    nbytes: int
    #: the value itself when small and asked for
    value: Any = None
    has_value: bool = False

    def __reduce__(self) -> tuple:
        return OutputMeta, (self.key, self.shape, self.nbytes, self.value, self.has_value)


@dataclass
class SubtaskReport:
    session_id: str
    task_id: str
    index: int
    worker: str
    outputs: list[OutputMeta] = field(default_factory=list)
    error: BaseException | None = None
    traceback: str = ""
    duration: float = 0.0
    #: inputs fetched from other workers and now held here too
    copies: list[str] = field(default_factory=list)
    #: the worker an input could not be read from (the supervisor checks it with the others involved)
    unreachable: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None

    def __reduce__(self) -> tuple:
        return SubtaskReport, (self.session_id, self.task_id, self.index, self.worker, self.outputs, self.error,
                               self.traceback, self.duration, self.copies, self.unreachable)


@dataclass
class SlotOutcome:
    """A slot's answer for one spec: stored outputs (descriptors) or the error."""

    index: int
    task_id: str
    descs: list[Any] = field(default_factory=list)
    shapes: list[tuple | None] = field(default_factory=list)
    error: BaseException | None = None
    traceback: str = ""
    duration: float = 0.0
    #: descriptors of inputs fetched from other workers, stored here for later subtasks
    copies: list[Any] = field(default_factory=list)
    #: unix time the slot began the subtask (the task stream's bar starts there); 0.0: unknown
    started: float = 0.0
    #: ``(session, device descriptor, host copy)`` of chunks a GPU slot moved out of device memory meanwhile
    moved: list[Any] = field(default_factory=list)
    #: the worker an input could not be read from, when that is why the subtask failed
    unreachable: str = ""


class SlotDied(ServiceError):
    """A slot process ended while it ran a subtask: a crash in native code (SIGSEGV), ``os._exit``, a
    signal from outside. The message names the slot, its worker, how it ended and the operator it ran;
    the job fails (running it again would likely end the same way) and the slot is started again."""


class ChunkFunctionExit(ServiceError):
    """A chunk function raised what is not an ``Exception`` (``SystemExit`` from ``sys.exit``,
    ``KeyboardInterrupt``): its subtask fails with this error, and the slot goes on serving."""


def op_name(op: Any) -> str:
    """How messages name an operator: its class, or the chain of a fused group's classes."""
    steps = getattr(op, "steps", None)
    if steps:
        return " -> ".join(type(s.op).__name__ for s in steps)
    return type(op).__name__
