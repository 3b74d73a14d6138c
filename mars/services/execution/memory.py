"""A worker's memory budget (``--phy-mem``): what is counted, estimates, and the limits.

What a worker uses is measured from outside its processes, over its process
tree (main pool, slots, IO pools and anything they started):

    used = chunks in shared memory + sum over the tree of (PSS - PSS of shared memory)

Chunks in shared memory are counted once, whole, by the store's figures,
whether or not some process maps them; the shared-memory part of each
process's proportional set size is left out so that a slot mapping its
inputs does not count them twice. Mapped spill files and libraries stay in
(file-backed PSS). Where ``/proc/<pid>/smaps_rollup`` is missing, resident
sizes are summed instead, which counts mapped chunks twice (on the safe side).

Reading ``smaps_rollup`` walks a process's page tables (about 2 ms for a
process of 400 MB), too slow to do ten times a second for every process:
it is read every two seconds, and the samples between follow the change in
each process's anonymous resident memory (``/proc/<pid>/statm``, a few
microseconds), which is where a chunk function's arrays live.

Above the soft limit (75% of ``--phy-mem``) the worker takes no new
subtasks and spills; above the hard limit (90%) it stops the running subtask
whose slot uses most.
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass, field
from typing import Any

import psutil

from ..cluster.resources import AnonFollowed
from ..storage.core import ChunkStore
from .api import SubtaskSpec

#: shares of --phy-mem
SOFT_LIMIT = 0.75
HARD_LIMIT = 0.90
#: what a subtask holds at its peak, in multiples of its outputs, unless its op says otherwise
#: (``memory_factor`` on the op's class): the result, and about one temporary of its size
DEFAULT_MEMORY_FACTOR = 2.0
#: the process tree is listed again after this many seconds (listing reads every process of the host)
_TREE_REFRESH = 5.0
#: PSS is read this often; samples between follow anonymous resident memory (see the module's notes)
_PRECISE_EVERY = 2.0

OK, SOFT, HARD = 0, 1, 2


@dataclass
class MemorySample:
    """The worker's processes' memory, without the shared memory they map."""

    #: sum over the process tree
    process_bytes: int
    #: by pid
    by_pid: dict[int, int] = field(default_factory=dict)


class TreeMemory:
    """Samples the memory of a process and its descendants (see the module's notes)."""

    def __init__(self, pid: int | None = None) -> None:
        self._root = psutil.Process(pid if pid is not None else os.getpid())
        self._procs: list[psutil.Process] = []
        self._listed = -math.inf
        #: private bytes by pid, read every _PRECISE_EVERY seconds
        self._private = AnonFollowed()

    def sample(self, now: float) -> MemorySample:
        """Memory of every process of the tree (listed again every second), by pid and in all."""
        if now - self._listed >= _TREE_REFRESH:
            try:
                self._procs = [self._root, *self._root.children(recursive=True)]
            except psutil.NoSuchProcess:
                self._procs = []
            self._listed = now
        by_pid = {}
        for proc in self._procs:
            n = self._private.read(proc.pid, proc.pid, functools.partial(private_bytes, proc.pid), now,
                                   _PRECISE_EVERY)
            if n is not None:
                by_pid[proc.pid] = n
        self._private.keep_only(by_pid)
        return MemorySample(sum(by_pid.values()), by_pid)

    @staticmethod
    def subtree(sample: MemorySample, pid: int) -> int:
        """``pid``'s memory with its descendants' (a slot whose chunk function started processes)."""
        try:
            children = psutil.Process(pid).children(recursive=True)
        except psutil.Error:
            children = []
        return sample.by_pid.get(pid, 0) + sum(sample.by_pid.get(c.pid, 0) for c in children)


def private_bytes(pid: int) -> int | None:
    """PSS minus its shared-memory part of process ``pid`` (resident size where that is unknown); None if gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            text = f.read()
    except OSError:  # not Linux, an old kernel, or the process is gone
        text = ""
    fields = {}
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        if name in ("Pss", "Pss_Shmem"):
            fields[name] = int(rest.split()[0]) * 1024
    if "Pss" in fields:
        return fields["Pss"] - fields.get("Pss_Shmem", 0)
    try:
        return int(psutil.Process(pid).memory_info().rss)
    except psutil.Error:
        return None


@dataclass
class Need:
    """What a subtask is expected to add to its worker's memory while it runs."""

    #: bytes its slot reads into its own memory: inputs held by other workers or spilled to disk
    loaded: int
    #: bytes of its outputs (they go to shared memory once it ends)
    outputs: int
    #: the op's peak, in multiples of the outputs
    factor: float
    #: bytes of all its inputs, wherever they are (for messages)
    inputs: int = 0

    @property
    def total(self) -> int:
        return int(self.loaded + self.factor * self.outputs)


def estimate(specs: list[SubtaskSpec], store: ChunkStore) -> Need:
    """The memory a unit of work (one spec, or a chained graph run in one slot) needs.

    Inputs held here in shared memory are read in place and add nothing;
    spilled ones and other workers' are read into the slot. Outputs are
    sized from their known shapes and dtypes, else (a data frame, a shape
    known only once run) as the inputs. Of a chain, the biggest member counts; a member reading what an
    earlier one made counts that as its input (it is held in the slot's memory, not in the store).
    """
    loaded = outputs = all_inputs = 0
    factor = DEFAULT_MEMORY_FACTOR
    made: dict[str, int] = {}
    for spec in specs:
        st = spec.subtask
        inputs = 0
        for key in dict.fromkeys(st.input_keys):
            desc = store.find(spec.session_id, key)
            if key in made:
                inputs += made[key]
            elif desc is not None:
                inputs += desc.nbytes
                loaded += desc.nbytes if desc.spilled else 0
            elif key in spec.remote_inputs:
                n = getattr(spec.remote_inputs[key], "nbytes", 0) or 0
                inputs += n
                loaded += n
        all_inputs += inputs
        size = _outputs_bytes(st)
        size = size if size >= 0 else inputs
        outputs = max(outputs, size, _steps_bytes(st.op))
        if spec.chained:
            made.update((k, size // max(len(st.output_keys), 1)) for k in st.output_keys)
        factor = max(factor, float(getattr(type(st.op), "memory_factor", DEFAULT_MEMORY_FACTOR)))
    return Need(loaded, outputs, factor, all_inputs)


def _outputs_bytes(subtask: Any) -> int:
    """Bytes of a subtask's outputs by their shapes and dtypes; -1 when one is unknown."""
    shapes = subtask.output_shapes
    if not shapes:
        return -1
    dtypes = subtask.output_dtypes or ()
    total = 0
    for i, shape in enumerate(shapes):
        itemsize = getattr(dtypes[i], "itemsize", None) if i < len(dtypes) else None
        if not itemsize or shape is None:
            return -1
        n = 1
        for size in shape:
            if type(size) is not int:
                if not float(size).is_integer():  # NaN: known only once run
                    return -1
                size = int(size)
            n *= size
        total += n * int(itemsize)
    return total


def _steps_bytes(op: Any) -> int:
    """The biggest output among the steps of a fused op (its intermediates); 0 for a plain op."""
    steps = getattr(op, "steps", None)
    if not steps:
        return 0
    return max((_outputs_bytes(s) for s in steps), default=0)


@dataclass
class MemoryBudget:
    """The limits of one worker, and its admission rule.

    Parameters
    ----------
    limit
        ``--phy-mem`` in bytes.
    baseline
        What the worker's processes use while idle (measured at start).

    Examples
    --------
    >>> budget = MemoryBudget(1000, baseline=100)
    >>> budget.soft, budget.hard, budget.level(800), budget.level(950)
    (750, 900, 1, 2)
    >>> budget.admits(need=300, running=300, stored=100, n_running=1)   # 600 > 750 - 100 - 100
    False
    >>> budget.admits(need=5000, running=0, stored=0, n_running=0)      # alone, it runs anyway
    True
    """

    limit: int
    baseline: int = 0

    @property
    def soft(self) -> int:
        return int(self.limit * SOFT_LIMIT)

    @property
    def hard(self) -> int:
        return int(self.limit * HARD_LIMIT)

    def level(self, used: int) -> int:
        """:data:`OK`, :data:`SOFT` (at or above the soft limit) or :data:`HARD`."""
        return HARD if used >= self.hard else SOFT if used >= self.soft else OK

    def room(self, stored: int) -> int:
        """Bytes that running subtasks may use together, beside ``stored`` bytes of chunks."""
        return self.soft - self.baseline - stored

    def admits(self, need: int, running: int, stored: int, n_running: int) -> bool:
        """Whether a subtask needing ``need`` may start beside ``n_running`` ones needing ``running``.

        With nothing running, anything is admitted: a subtask bigger than
        the whole budget runs alone rather than never.
        """
        return n_running == 0 or running + need <= self.room(stored)
