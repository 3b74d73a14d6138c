"""Fusion: an elementwise chain and the reduction that follows it run as one unit.

``fuse(subtasks, keep)`` merges a subtask into its only consumer when both ops
are ``fusible`` and nothing else (no other consumer, no caller) needs the
intermediate. The merged group runs as one :class:`FusedOp`.

A consumer that is not ``fusible`` itself (it is not merged into *its*
consumer) may still take in its ``fusible`` producers when its class says
``fuses_inputs = True``: a merge of a projected partition then reads the
partition and projects it in the same subtask, instead of writing the
projection out to be read back. Such a consumer is a plain chunk function
with one output (the group returns one value), run by ``run_op``; shuffle
stages, held data and fetches never set the flag.

A fused group whose ops are *blockwise* (rows ``i:j`` of the output depend
only on rows ``i:j`` of the inputs, as for elementwise ops) is evaluated one
cache-sized block of rows at a time, so ``((x*2+1)**2).mean()`` never makes a
full-size temporary: each block of ``x`` goes through the whole chain and is
reduced while it is still in cache. A trailing op with ``merge_blocks`` (a
reduction's chunk stage) reduces each block and merges the partials.

A tree over a table (the distinct keys of its partitions, combined) is not
merged into a reader that also waits for another input this graph computes:
merged, it would start only once that input is there; apart, it runs beside
what makes it, on another slot.

A subtask that is not fusible (a grouped call, a merge of two partitions)
still takes in a fusible step whose only input is its output, when nothing
else reads that output: the step (a ``reset_index``, a filter) runs after it
in its subtask, so the output is not written out to be read back once.

A *tap* (an op whose class says ``tap = True``: a row count, a partition's
key range, its dtypes) reads one chunk and returns something small. When the
chunk it reads is written out anyway (another subtask reads it too, or it is
a target), the tap runs in the subtask that makes the chunk, as one more
output: on a cluster, a subtask fewer, and the chunk is not read back.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import gpufuse
from .device import run_op
from .graph import Subtask

#: elements per block (1 MiB of float64; with buffers reused along the chain, about one core's L2)
BLOCK_ELEMENTS = 131072


class FusedOp:
    """Several chunk ops run as one subtask; intermediates never leave it."""

    fusible = True
    #: each step runs on its own op's device (see mars.core.device.run_op)
    runs_steps = True

    def __init__(self, steps: list[Subtask], input_keys: list[str], output_key: str, taps: Sequence[Subtask] = ()):
        #: every step, the taps last (they read the chain's output; see the module's notes)
        self.steps = [*steps, *taps]
        self.input_keys = input_keys
        self.output_key = output_key
        self.inputs: list = []
        self.outputs: list = []
        self._main, self._taps = list(steps), list(taps)
        #: a GPU subtask when any step is a GPU op (it is scheduled to a GPU slot)
        self.gpu = any(getattr(s.op, "gpu", None) for s in steps)
        # row blocks keep a CPU's caches warm; a GPU wants the whole chunk in one kernel
        self._plan = None if self.gpu else _block_plan(steps)
        self._chain = gpufuse.plan(steps, input_keys, output_key) if self.gpu else None

    def __repr__(self) -> str:
        return "FusedOp(" + " -> ".join(type(s.op).__name__ for s in self.steps) + ")"

    def execute(self, *values: Any) -> Any:
        env = dict(zip(self.input_keys, values))
        plan = self._plan
        if plan is not None:
            env[self.output_key] = _run_blocked(self._main, env, *plan)
        else:
            self._run_chain(self._main, env)
        if not self._taps:
            return env[self.output_key]
        for step in self._taps:
            _run_step(step, env)
        return (env[self.output_key], *(env[step.output_keys[0]] for step in self._taps))

    def _run_chain(self, steps: list[Subtask], env: dict[str, Any]) -> None:
        chain = self._chain
        if chain is not None:
            start, n = chain[0], chain[1]
            for step in steps[:start]:
                _run_step(step, env)
            if gpufuse.run_chain(chain, steps, env):
                steps = steps[start + n:]
            else:
                steps = steps[start:]
        for step in steps:
            _run_step(step, env)


def _run_step(step: Subtask, env: dict[str, Any]) -> None:
    result = run_op(step.op, [env[k] for k in step.input_keys])
    if len(step.output_keys) == 1:
        env[step.output_keys[0]] = result
    else:
        env.update(zip(step.output_keys, result))


def fuse(subtasks: Sequence[Subtask], keep: set[str], in_process: bool = True) -> list[Subtask]:
    """Merge fusible chains; ``keep`` holds keys that must stay visible (targets).

    A ``repeatable`` producer (a column selection: views, no arithmetic) read
    by several consumers that each take it in runs in each of them, rather
    than once with its output written out and read back by each.

    ``in_process`` says where the subtasks run: in this process (an embedded
    session: outputs stay in memory), or on a cluster (``False``: each output
    is written to shared memory, and a worker reads what another holds).

    - On a cluster, a *gather* (an op whose class says ``gather = True``:
      partitions concatenated) is merged into its one reader like a fusible
      step, when that reader takes in its producers: the whole is never
      written out and read back. It takes in none of its own: the partitions
      it gathers are still made side by side. In a process, a gather apart
      runs on a free thread as soon as its partitions are there.
    - In a process, a step whose class says ``fuses_near = True`` (the rows a
      partition gives to its neighbour, cut where that partition lies so
      that only they travel between workers) is merged into its one reader
      too: the reader no longer waits for a subtask of its own. A cluster
      keeps it apart, even on one host: there the reader would fetch the
      whole neighbouring partition from the worker holding it (TPC-H Q18,
      after the 17 queries before it, took 2.2 s instead of 0.25).
    """
    consumers: dict[str, list[int]] = {}
    for i, st in enumerate(subtasks):
        for k in set(st.input_keys):
            consumers.setdefault(k, []).append(i)
    taps = _taps(subtasks, consumers, keep)
    # group[i] = index of the subtask that i is merged into (its root consumer; a tap's, its producer)
    merged_into: dict[int, int] = {t: i for i, ts in taps.items() for t in ts}
    #: repeatable producers (reading only what this graph does not make) and their consumers
    repeated: dict[int, list[int]] = {}
    producer = {k: i for i, st in enumerate(subtasks) for k in st.output_keys}
    made = set(producer)
    waited = _computed(subtasks, made)
    for i, st in enumerate(subtasks):
        if len(st.output_keys) != 1 or not _merges_into_reader(st, in_process) or i in taps or i in merged_into:
            continue
        key = st.output_keys[0]
        users = consumers.get(key, [])
        if key in keep or not users or not all(_takes_in(subtasks[u]) for u in users):
            continue
        if len(users) == 1:
            if not _waits_apart(i, subtasks, users[0], waited, producer, merged_into):
                merged_into[i] = users[0]
        elif _made_again(st, made):
            repeated[i] = users
    merged_into.update(_trailing_steps(subtasks, consumers, keep, taps, merged_into, made))
    if not merged_into and not repeated:
        return list(subtasks)
    return _build_groups(subtasks, merged_into, repeated, taps)


def _merges_into_reader(st: Subtask, in_process: bool) -> bool:
    """Whether ``st`` may run in its one reader's subtask: a fusible step; on a cluster a gather; in a process a
    step kept apart only so that less moves between workers (see :func:`fuse`)."""
    op = st.op
    if getattr(op, "fusible", False):
        return True
    return bool(getattr(op, "fuses_near", False) if in_process else getattr(op, "gather", False))


def _made_again(st: Subtask, made: set[str]) -> bool:
    """Whether ``st`` is a repeatable producer (a selection of columns) reading only what this graph does not
    make (held data): each of its readers may make it again, and it is ready as soon as they start."""
    return bool(getattr(st.op, "repeatable", False)) and made.isdisjoint(st.input_keys)


def _computed(subtasks: Sequence[Subtask], made: set[str]) -> set[str]:
    """The keys of ``made`` that some subtask computes, not selections of what is held (ready at once)."""
    return made - {st.output_keys[0] for st in subtasks if len(st.output_keys) == 1 and _made_again(st, made)}


def _waits_apart(i: int, subtasks: Sequence[Subtask], user: int, waited: set[str], producer: dict[str, int],
                 merged_into: dict[int, int]) -> bool:
    """Whether subtask ``i``, a step combining several partitions computed by the steps merged into it (a
    tree over a table: its distinct keys), would wait for another input of its reader ``user`` that this
    graph computes, if merged into it (``waited``: keys computed here, not selections of held data).

    Apart, the tree runs as soon as what it reads is there, on another slot,
    beside what makes the reader's other input (a filter and a mean of
    another table), instead of after it.
    """
    inputs = {k for k in subtasks[i].input_keys if k in waited}
    if len(inputs) < 2 or any(merged_into.get(producer[k]) != i for k in inputs):
        return False
    key = subtasks[i].output_keys[0]
    return any(k != key and k in waited for k in subtasks[user].input_keys)


def _trailing_steps(subtasks: Sequence[Subtask], consumers: dict[str, list[int]], keep: set[str],
                    taps: dict[int, list[int]], merged_into: dict[int, int], made: set[str]) -> dict[int, int]:
    """Subtasks that are not fusible, merged into their one reader when it is a fusible step reading nothing
    else (see the module's notes), nor do the steps it is merged into in turn: the group then waits for
    nothing more than the subtask did (a filter after it, not a renumbering waiting on other partitions)."""
    found: dict[int, int] = {}
    for i, st in enumerate(subtasks):
        if len(st.output_keys) != 1 or getattr(st.op, "fusible", False) or i in taps or i in merged_into:
            continue
        key = st.output_keys[0]
        users = consumers.get(key, [])
        if key in keep or len(users) != 1 or not _a_pipe(subtasks, users[0], key, merged_into, made):
            continue
        found[i] = users[0]
    return found


def _a_pipe(subtasks: Sequence[Subtask], j: int, key: str, merged_into: dict[int, int], made: set[str]) -> bool:
    """Whether subtask ``j`` and those it is merged into, in turn, are fusible one-output steps each reading,
    of what this graph makes, only the output of the one before (``key`` first)."""
    while True:
        st = subtasks[j]
        if not getattr(st.op, "fusible", False) or getattr(st.op, "tap", False) or len(st.output_keys) != 1:
            return False
        if any(k != key and k in made for k in st.input_keys):
            return False
        if j not in merged_into:
            return True
        key, j = st.output_keys[0], merged_into[j]


def _taps(subtasks: Sequence[Subtask], consumers: dict[str, list[int]], keep: set[str]) -> dict[int, list[int]]:
    """The taps (see the module's notes) each subtask runs: by producer, those reading its one output, when
    that output is written out anyway (a target, or read by a subtask other than a tap). A repeatable
    producer is made again by each reader instead (see :func:`fuse`); a GPU one keeps its output on the device."""
    found: dict[int, list[int]] = {}
    producer = {st.output_keys[0]: i for i, st in enumerate(subtasks) if len(st.output_keys) == 1}
    for i, st in enumerate(subtasks):
        keys = set(st.input_keys)
        if not getattr(st.op, "tap", False) or len(keys) != 1 or len(st.output_keys) != 1:
            continue
        p = producer.get(next(iter(keys)))
        if p is not None and not getattr(subtasks[p].op, "repeatable", False) \
                and not getattr(subtasks[p].op, "gpu", False):
            found.setdefault(p, []).append(i)
    for p, ts in list(found.items()):
        key = subtasks[p].output_keys[0]
        if key not in keep and set(consumers.get(key, ())) <= set(ts):
            del found[p]  # read by its taps alone: it is merged into one of them, or they read it in turn
    return found


def _takes_in(consumer: Subtask) -> bool:
    """Whether ``consumer`` may absorb a fusible producer whose only reader it is."""
    op = consumer.op
    if getattr(op, "fusible", False):
        return True
    # the group's value is its root's one output (FusedOp returns one value)
    return bool(getattr(type(op), "fuses_inputs", False)) and len(consumer.output_keys) == 1


def _root(i: int, merged_into: dict[int, int]) -> int:
    while i in merged_into:
        i = merged_into[i]
    return i


def _build_groups(subtasks: Sequence[Subtask], merged_into: dict[int, int],
                  repeated: dict[int, list[int]], taps: dict[int, list[int]]) -> list[Subtask]:
    tapping = {t for ts in taps.values() for t in ts}
    members: dict[int, list[int]] = {}
    for i in range(len(subtasks)):
        if i not in repeated and i not in tapping:
            members.setdefault(_root(i, merged_into), []).append(i)
    for i, users in repeated.items():
        for root in {_root(u, merged_into) for u in users}:
            members[root] = sorted([i, *members[root]])  # a producer comes before its consumers
    result = []
    for i, st in enumerate(subtasks):
        if i in merged_into or i in repeated:
            continue
        group, tapped = members[i], [subtasks[t] for t in taps.get(i, ())]
        if len(group) == 1 and not tapped:
            result.append(st)
            continue
        steps = [subtasks[j] for j in group]  # already in topological order
        produced = {k for s in steps for k in s.output_keys}
        inputs: list[str] = []
        for s in steps:
            for k in s.input_keys:
                if k not in produced and k not in inputs:
                    inputs.append(k)
        op = FusedOp(steps, inputs, st.output_keys[0], tapped)
        result.append(Subtask(op, inputs, [*st.output_keys, *(t.output_keys[0] for t in tapped)],
                              [*st.output_shapes, *(t.output_shapes[0] for t in tapped)],
                              [*st.output_dtypes, *(t.output_dtypes[0] for t in tapped)]))
    return result


# ----------------------------------------------------------------- blocked evaluation
def _block_plan(steps: list[Subtask]) -> tuple[int, int, int] | None:
    """(first blockwise step, rows, rows per block), or None when blocking does not apply.

    Blocking applies to a tail of blockwise steps (optionally ending in a
    step with ``merge_blocks``) whose outputs all have the same known number
    of rows, large enough to be worth splitting.
    """
    last = steps[-1]
    tail_end = len(steps) - 1 if hasattr(last.op, "merge_blocks") else len(steps)
    start = tail_end
    while start > 0 and getattr(steps[start - 1].op, "blockwise", False):
        start -= 1
    if start == tail_end:
        return None
    shapes = [s.output_shapes[0] for s in steps[start:tail_end]]
    first = shapes[0]
    if not first or any(len(s) != len(first) or s[0] != first[0] for s in shapes):
        return None
    if any(isinstance(d, float) and math.isnan(d) for s in shapes for d in s):
        return None
    row_elements = math.prod(first[1:]) or 1
    rows = max(1, BLOCK_ELEMENTS // row_elements)
    if first[0] <= 2 * rows:
        return None
    return start, int(first[0]), rows


def _slice_rows(value: Any, nrows: int, ndim: int, lo: int, hi: int) -> Any:
    shape = getattr(value, "shape", None)
    if shape is not None and len(shape) == ndim and shape[0] == nrows:
        return value[lo:hi]
    return value


def _run_blocked(steps: list[Subtask], env: dict[str, Any], start: int, nrows: int, rows: int) -> Any:
    for step in steps[:start]:
        _run_step(step, env)
    block_steps = steps[start:]
    reducer = block_steps[-1] if hasattr(block_steps[-1].op, "merge_blocks") else None
    if reducer is not None:
        block_steps = block_steps[:-1]
    ndim = len(block_steps[0].output_shapes[0])
    slots = _buffer_plan(block_steps, reducer, rows)
    buffers = {slot: np.empty(shape, dtype) for slot, (dtype, shape) in enumerate(_slot_specs(block_steps, slots, rows))}
    needed = {k for st in block_steps for k in st.input_keys} | set(reducer.input_keys if reducer else ())
    outer = {k: v for k, v in env.items() if k in needed}
    out = None
    partials = []
    for lo in range(0, nrows, rows):
        hi = min(lo + rows, nrows)
        local = {k: _slice_rows(v, nrows, ndim, lo, hi) for k, v in outer.items()}
        for step, slot in zip(block_steps, slots):
            if slot is None:
                _run_step(step, local)
            else:
                args = [local[k] for k in step.input_keys]
                local[step.output_keys[0]] = step.op.execute_into(buffers[slot][: hi - lo], *args)
        block = local[block_steps[-1].output_keys[0]]
        if reducer is not None:
            partials.append(reducer.op.execute(*(local[k] for k in reducer.input_keys)))
            continue
        if out is None:
            out = np.empty((nrows,) + tuple(block.shape[1:]), dtype=block.dtype)
        out[lo:hi] = block
    if reducer is not None:
        return reducer.op.merge_blocks(partials)
    return out


def _writes_into(step: Subtask) -> bool:
    return bool(getattr(step.op, "can_execute_into", False)) and step.output_dtypes[0] is not None


def _buffer_plan(block_steps: list[Subtask], reducer: Subtask | None, rows: int) -> list[int | None]:
    """Which reusable block buffer each step writes into (None: the step allocates its own).

    A step may overwrite a buffer whose value it is the last to read
    (elementwise ops read and write the same position), but never one read by
    a step that writes no buffer of its own, since that step's result might
    be a view of it.
    """
    last_use: dict[str, int] = {}
    aliased: set[str] = set()
    for i, st in enumerate(block_steps):
        for k in st.input_keys:
            last_use[k] = i
            if not _writes_into(st):
                aliased.add(k)
    end = len(block_steps)
    for k in (reducer.input_keys if reducer is not None else block_steps[-1].output_keys):
        last_use[k] = end
    holder: dict[int, str] = {}
    specs: list[tuple] = []
    plan: list[int | None] = []
    for i, st in enumerate(block_steps):
        if not _writes_into(st):
            plan.append(None)
            continue
        spec = (st.output_dtypes[0], tuple(st.output_shapes[0][1:]))
        free = [s for s, k in holder.items() if specs[s] == spec and last_use.get(k, -1) <= i and k not in aliased]
        slot = free[0] if free else len(specs)
        if not free:
            specs.append(spec)
        holder[slot] = st.output_keys[0]
        plan.append(slot)
    return plan


def _slot_specs(block_steps: list[Subtask], plan: list[int | None], rows: int) -> list[tuple]:
    specs: dict[int, tuple] = {}
    for st, slot in zip(block_steps, plan):
        if slot is not None and slot not in specs:
            specs[slot] = (st.output_dtypes[0], (rows,) + tuple(int(d) for d in st.output_shapes[0][1:]))
    return [specs[i] for i in range(len(specs))]
