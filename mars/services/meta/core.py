"""Chunk meta on the supervisor: where each computed chunk lives, its shape and size.

The task service records a chunk's meta when a worker reports it, reads it to
place subtasks near their inputs and to fetch results, and drops it when the
lifecycle frees the chunk. Small target values are kept here too, so that a
client fetching a tiny result needs no trip to a worker.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ChunkMeta:
    key: str
    worker: str
    shape: tuple | None
    nbytes: int
    value: Any = None
    has_value: bool = False
    #: other workers holding a copy (fetched there as an input)
    copies: set[str] = field(default_factory=set)

    @property
    def holders(self) -> set[str]:
        return {self.worker} | self.copies


class MetaStore:
    """Meta of one session's chunks, by key."""

    def __init__(self) -> None:
        self._meta: dict[str, ChunkMeta] = {}

    def __contains__(self, key: str) -> bool:
        return key in self._meta

    def __len__(self) -> int:
        return len(self._meta)

    def get(self, key: str) -> ChunkMeta | None:
        return self._meta.get(key)

    def put(self, meta: ChunkMeta) -> None:
        """A worker made ``meta.key``: a key already held elsewhere (made there too, by another run of
        the same computation) keeps those holders as copies, so that freeing it frees every one."""
        old = self._meta.get(meta.key)
        if old is not None:
            meta.copies |= old.holders - {meta.worker}
        self._meta[meta.key] = meta

    def pop_many(self, keys: Iterable[str]) -> list[ChunkMeta]:
        """Remove ``keys`` (missing ones ignored); returns what was removed."""
        out = []
        for k in keys:
            m = self._meta.pop(k, None)
            if m is not None:
                out.append(m)
        return out

    def pop_all(self) -> list[ChunkMeta]:
        out, self._meta = list(self._meta.values()), {}
        return out

    def add_copy(self, key: str, worker: str) -> None:
        m = self._meta.get(key)
        if m is not None and worker != m.worker:
            m.copies.add(worker)

    def forget_worker(self, worker: str) -> list[str]:
        """A lost worker: drop it as a holder; returns the keys it alone held (now gone)."""
        gone = []
        for k, m in self._meta.items():
            m.copies.discard(worker)
            if m.worker == worker:
                if m.copies:
                    m.worker = m.copies.pop()
                else:
                    gone.append(k)
        for k in gone:
            del self._meta[k]
        return gone

    def workers(self) -> set[str]:
        """Every worker holding some chunk of the session."""
        return {w for m in self._meta.values() for w in m.holders}

    def on_worker(self, worker: str) -> list[str]:
        return [k for k, m in self._meta.items() if m.worker == worker]

    def total_bytes(self) -> int:
        return sum(m.nbytes for m in self._meta.values())
