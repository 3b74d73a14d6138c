"""Where a ready subtask runs: near its inputs, spread when it has none.

Plain logic with no I/O. A subtask with inputs goes to the worker where it
would finish first: the one holding most of its input bytes, unless the wait
for a slot there is longer than moving the inputs elsewhere takes. The wait
is the worker's subtasks in flight per slot times the average subtask time
seen so far; a move is its bytes at :data:`TRANSFER_BYTES_PER_SECOND`. (A
broadcast side held on one worker would otherwise pull every chunk it meets
onto that worker, and leave the others idle.) Sources (no inputs) that become ready
together are cut into contiguous runs of the depth-first order, one run per
slot, so that the chunks a later combine reads mostly sit on one worker.
A GPU subtask goes only to a worker with GPU slots, and is placed by their
load; a job that needs one where none is registered fails at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import NoGPUWorkersError

#: how fast a worker reads inputs held by another (a socket copy and a copy into shared memory), for
#: weighing a move against a wait
TRANSFER_BYTES_PER_SECOND = 1e9
#: a subtask's run time before any was reported (tiny graphs run whole on one slot and report none)
_FIRST_SECONDS = 0.02
#: weight of the newest report in the running average of subtask times
_AVERAGE_WEIGHT = 0.2


@dataclass
class WorkerLoad:
    address: str
    n_slots: int
    transfer_addresses: list[str] = field(default_factory=list)
    #: subtasks sent and not reported yet
    in_flight: int = 0
    #: GPU slots (one per CUDA device the worker was given)
    n_gpu: int = 0
    #: GPU subtasks sent and not reported yet
    gpu_in_flight: int = 0


class Placer:
    def __init__(self, workers: Sequence[WorkerLoad]):
        if not workers:
            raise ValueError("Placer needs at least one worker")
        self.workers = {w.address: w for w in workers}
        #: the running average of subtasks' seconds (see :meth:`done`)
        self.seconds = _FIRST_SECONDS

    def update(self, workers: Sequence[WorkerLoad]) -> None:
        """New membership: keep the in-flight counts of workers still there."""
        old = self.workers
        self.workers = {w.address: w for w in workers}
        for address, w in self.workers.items():
            if address in old:
                w.in_flight = old[address].in_flight
                w.gpu_in_flight = old[address].gpu_in_flight

    def _least_loaded(self) -> WorkerLoad:
        return min(self.workers.values(), key=lambda w: (w.in_flight / w.n_slots, w.address))

    def _gpu_workers(self) -> list[WorkerLoad]:
        workers = [w for w in self.workers.values() if w.n_gpu > 0]
        if not workers:
            raise NoGPUWorkersError("this job needs a GPU worker; none is registered (start one with "
                                    "mars-worker --cuda-devices 0 on a machine with a CUDA device)")
        return workers

    def place_gpu(self, input_bytes: dict[str, int]) -> str:
        """A GPU worker for a GPU subtask: the one holding most of its inputs unless its GPUs are far busier."""
        workers = self._gpu_workers()
        idle = min(workers, key=lambda w: (w.gpu_in_flight / w.n_gpu, w.address))
        held = {a: b for a, b in input_bytes.items() if a in self.workers and self.workers[a].n_gpu > 0}
        chosen = idle
        if held:
            best = self.workers[max(held, key=lambda a: (held[a], -self.workers[a].gpu_in_flight))]
            if best.gpu_in_flight <= idle.gpu_in_flight + 2 * best.n_gpu:
                chosen = best
        chosen.gpu_in_flight += 1
        chosen.in_flight += 1
        return chosen.address

    def place(self, input_bytes: dict[str, int], gpu: bool = False) -> str:
        """A worker for a subtask whose inputs sit on workers as ``{address: bytes}``; GPU workers only for ``gpu``."""
        if gpu:
            return self.place_gpu(input_bytes)
        held = {a: b for a, b in input_bytes.items() if a in self.workers}
        chosen = self._soonest(held) if held else self._least_loaded()
        chosen.in_flight += 1
        return chosen.address

    def _soonest(self, held: dict[str, int]) -> WorkerLoad:
        """The worker where a subtask with inputs ``held`` (bytes by worker) would start first:
        its wait for a slot plus the time to move the inputs it lacks; of equal ones, the one holding more."""
        total = sum(held.values())

        def start(w: WorkerLoad) -> tuple:
            mine = held.get(w.address, 0)
            wait = w.in_flight / w.n_slots * self.seconds
            return wait + (total - mine) / TRANSFER_BYTES_PER_SECOND, -mine, w.address

        return min(self.workers.values(), key=start)

    def place_sources(self, n: int) -> list[str]:
        """Workers for ``n`` sources in depth-first order: contiguous runs, sized by slots and load."""
        workers = sorted(self.workers.values(), key=lambda w: w.address)
        weights = [w.n_slots for w in workers]
        total = sum(weights)
        out: list[str] = []
        bounds, acc = [], 0
        for w in weights:
            acc += w
            bounds.append(acc * n / total)
        j = 0
        for i in range(n):
            while i >= bounds[j]:
                j += 1
            out.append(workers[j].address)
            workers[j].in_flight += 1
        return out

    def add_load(self, address: str, n: int, gpu: bool = False) -> None:
        w = self.workers.get(address)
        if w is not None:
            w.in_flight += n
            if gpu:
                w.gpu_in_flight += n

    def done(self, address: str, n: int = 1, gpu: bool = False, seconds: float | None = None) -> None:
        """``n`` subtasks sent to ``address`` were reported; ``seconds``, one's run time, joins the average."""
        if seconds is not None and seconds >= 0:
            self.seconds += _AVERAGE_WEIGHT * (seconds - self.seconds)
        w = self.workers.get(address)
        if w is not None:
            w.in_flight = max(0, w.in_flight - n)
            if gpu:
                w.gpu_in_flight = max(0, w.gpu_in_flight - n)

    def transfer_addresses(self, address: str) -> list[str]:
        w = self.workers.get(address)
        return list(w.transfer_addresses) if w is not None else []
