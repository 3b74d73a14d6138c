"""Reading ahead: the inputs queued subtasks need from a worker come with the call a batch makes anyway.

A shuffle's reducers on one worker each need a piece from every mapper, so
from each other worker every reducer would make a call of its own. When the
execution actor hands a slot a batch that reads from worker W, it adds the
pieces that the next queued subtasks of the same task need from W (up to a
byte budget): once the batch's own inputs are in, one more call to W brings
them all while the batch runs, the slot keeps them in its memory, and the
reducers that run there later find them at hand. Two calls per worker pair
and stage, whatever the number of reducers; the first reducer waits only for
its own pieces.

:class:`ReadAhead` is the execution actor's book of what each slot holds
that way: plain data, no I/O. The bytes held are reserved in the worker's
chunk cache (the actor does that with the figures :meth:`ReadAhead.plan`
returns), so memory limits and spilling count them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .api import FetchAhead, RemoteInput, SubtaskSpec

#: at most this many bytes are held read ahead by a worker's slots together
AHEAD_BYTES = 256 << 20
#: how many queued subtasks a batch may read ahead for
AHEAD_UNITS = 64

_Key = tuple[str, str]  # (session id, chunk key)
SlotId = tuple[str, str]  # (slot address, uid)


@dataclass
class Plan:
    """What the actor does around one batch: what the slot reads ahead, what other slots forget, and the
    bytes to release from (``freed``) and reserve in (``taken``) the cache."""

    ahead: FetchAhead | None
    drops: dict[SlotId, list[_Key]] = field(default_factory=dict)
    freed: int = 0
    taken: int = 0


class ReadAhead:
    """Which inputs each slot holds read ahead (see the module's notes).

    Examples
    --------
    >>> from mars.core.graph import Subtask
    >>> from mars.services.execution.api import RemoteInput
    >>> def spec(i, key):
    ...     return SubtaskSpec("s", "t", i, Subtask(None, [key], [f"out{i}"]), (0, i),
    ...                        {key: RemoteInput("w2", [], 100)})
    >>> book = ReadAhead()
    >>> plan = book.plan(("slot", "0"), [spec(0, "a")], [[spec(1, "b")], [spec(2, "c")]], budget=150)
    >>> sorted(plan.ahead.fetch), plan.ahead.keep, plan.taken
    (['b'], ['b'], 100)
    >>> book.plan(("slot", "0"), [spec(1, "b")], [], budget=150).freed   # b is read now
    100
    """

    def __init__(self) -> None:
        self.held: dict[SlotId, dict[_Key, int]] = {}

    @property
    def empty(self) -> bool:
        """Whether no slot holds anything read ahead."""
        return not any(self.held.values())

    @property
    def nbytes(self) -> int:
        """Bytes held read ahead by all slots."""
        return sum(sum(h.values()) for h in self.held.values())

    def plan(self, slot: SlotId, batch: list[SubtaskSpec], queued: Iterable[list[SubtaskSpec]],
             budget: int) -> Plan:
        """The read-ahead of ``slot`` about to run ``batch``, with ``queued`` (units in priority order) behind it.

        What the batch reads is no longer held ahead (by this slot or any
        other: those forget it). The slot reads ahead, from the workers the
        batch reads from anyway, the inputs of single-subtask units of the
        batch's task, while ``budget`` bytes last (less what is held already).
        """
        out = Plan(None)
        read = {(s.session_id, k) for s in batch for k in s.remote_inputs}
        for other, held in self.held.items():
            gone = [k for k in held if k in read]
            for k in gone:
                out.freed += held.pop(k)
            if gone and other != slot:
                out.drops[other] = gone
        mine = self.held.setdefault(slot, {})
        if not batch or not read:
            return self._keep(slot, mine, batch[0] if batch else None, {}, out)
        first = batch[0]
        peers = {w.worker for s in batch for w in s.remote_inputs.values()}
        anywhere = {k for h in self.held.values() for k in h}
        room = budget - self.nbytes
        fetch: dict[str, RemoteInput] = {}
        for unit in queued:
            if len(unit) != 1 or (unit[0].session_id, unit[0].task_id) != (first.session_id, first.task_id):
                continue
            for key, where in unit[0].remote_inputs.items():
                k = (first.session_id, key)
                if where.worker not in peers or k in anywhere or k in read or where.nbytes <= 0:
                    continue
                if where.nbytes > room:
                    return self._keep(slot, mine, first, fetch, out)
                fetch[key] = where
                anywhere.add(k)
                room -= where.nbytes
        return self._keep(slot, mine, first, fetch, out)

    def _keep(self, slot: SlotId, mine: dict[_Key, int], first: SubtaskSpec | None,
              fetch: dict[str, RemoteInput], out: Plan) -> Plan:
        """The slot keeps what it holds of the batch's session, and ``fetch``; anything else it drops."""
        session = first.session_id if first is not None else ""
        for k in [k for k in mine if first is None or k[0] != session]:
            out.freed += mine.pop(k)
        for key, where in fetch.items():
            mine[(session, key)] = where.nbytes
            out.taken += where.nbytes
        if mine and first is not None:
            out.ahead = FetchAhead(first.session_id, first.task_id, fetch, [k for _, k in mine])
        return out

    def prune(self, needed: set[_Key]) -> Plan:
        """Forget what no queued subtask reads any more (cancelled, dropped); ``drops`` says which slots forget what."""
        out = Plan(None)
        for slot, held in self.held.items():
            gone = [k for k in held if k not in needed]
            for k in gone:
                out.freed += held.pop(k)
            if gone:
                out.drops[slot] = gone
        return out

    def forget_slot(self, slot: SlotId) -> int:
        """The slot's process ended (what it held is gone with it); returns the bytes to release."""
        return sum(self.held.pop(slot, {}).values())

    def held_by(self, slot: SlotId, batch: list[SubtaskSpec]) -> int:
        """How many of ``batch``'s inputs ``slot`` holds read ahead."""
        held = self.held.get(slot, {})
        return sum((s.session_id, k) in held for s in batch for k in s.remote_inputs)
