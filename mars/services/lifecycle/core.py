"""Result lifetimes: a chunk stays while some client object holds it.

Each succeeded task adds one reference to each of its targets' chunks; the
client drops one when the object that owns them dies. A chunk whose count
reaches zero is freed, unless a running task still reads it (it is freed
when that task ends). Intermediates are not counted here: the task service
frees them as soon as nothing pending in their task reads them.
"""

from __future__ import annotations

from collections.abc import Iterable


class RefCounts:
    def __init__(self) -> None:
        self._refs: dict[str, int] = {}

    def __contains__(self, key: str) -> bool:
        return key in self._refs

    def __len__(self) -> int:
        return len(self._refs)

    def incref(self, keys: Iterable[str]) -> None:
        refs = self._refs
        for k in keys:
            refs[k] = refs.get(k, 0) + 1

    def decref(self, keys: Iterable[str]) -> list[str]:
        """Drop one reference per key; returns the keys nothing holds any more."""
        freed = []
        refs = self._refs
        for k in keys:
            n = refs.get(k)
            if n is None:
                continue
            if n <= 1:
                del refs[k]
                freed.append(k)
            else:
                refs[k] = n - 1
        return freed

    def count(self, key: str) -> int:
        return self._refs.get(key, 0)


class Pins:
    """Keys that live runs and tasks of a session still need, counted per user.

    Runs of different tasks compute and read the same chunks (keys follow the
    computation, not the task): a key one user is done with and would free
    (``doom``) stays while another still pins it, and goes when the last one
    lets go (``unpin``).
    """

    def __init__(self) -> None:
        self._counts = RefCounts()
        self._doomed: set[str] = set()

    def __contains__(self, key: str) -> bool:
        return key in self._counts

    def __len__(self) -> int:
        return len(self._counts)

    def pin(self, keys: Iterable[str]) -> None:
        self._counts.incref(keys)

    def unpin(self, keys: Iterable[str]) -> list[str]:
        """Drop one pin per key; returns the doomed keys nothing pins any more (to free now)."""
        out = []
        for k in self._counts.decref(keys):
            if k in self._doomed:
                self._doomed.discard(k)
                out.append(k)
        return out

    def doom(self, keys: Iterable[str]) -> list[str]:
        """``keys`` are to be freed: returns those nothing pins (free now); the rest wait for their last unpin."""
        out = []
        for k in keys:
            if k in self._counts:
                self._doomed.add(k)
            else:
                out.append(k)
        return out
