"""Which subtasks of a graph are ready, and which chunks can go, as subtasks finish.

Plain bookkeeping with no I/O, so that it is tested without a cluster: the
task service feeds it finished subtasks and gets back the subtasks that became
ready and the chunks that nothing pending reads any more.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...core.graph import Subtask, index_graph


class GraphState:
    """``subtasks`` in depth-first order; ``available(key)`` says whether an input is already computed."""

    def __init__(self, subtasks: Sequence[Subtask], available: Callable[[str], bool], keep: set[str]):
        self.subtasks = list(subtasks)
        self.total = len(self.subtasks)
        self.finished = 0
        index = index_graph(self.subtasks, available)
        self.refs, self.consumers, self.waiting = index.refs, index.consumers, index.waiting
        #: made by this graph and not asked for: freed once read
        self.owned = index.producer - keep
        self.done = [False] * self.total

    def initial_ready(self) -> list[int]:
        return [i for i, n in enumerate(self.waiting) if n == 0]

    def complete(self, i: int) -> tuple[list[int], list[str]]:
        """Subtask ``i`` finished: returns (subtasks now ready, keys now free)."""
        if self.done[i]:
            return [], []
        self.done[i] = True
        self.finished += 1
        st = self.subtasks[i]
        ready: list[int] = []
        for k in st.output_keys:
            for c in self.consumers.get(k, ()):
                self.waiting[c] -= 1
                if self.waiting[c] == 0:
                    ready.append(c)
        free: list[str] = []
        for k in set(st.input_keys):
            self.refs[k] -= 1
            if self.refs[k] == 0 and k in self.owned:
                free.append(k)
        free.extend(k for k in st.output_keys if k not in self.refs and k in self.owned)
        return ready, free

    def unneeded(self, i: int) -> list[str]:
        """Keys subtask ``i`` read or made that no pending subtask of this graph reads (call after ``complete``)."""
        st = self.subtasks[i]
        return [k for k in {*st.input_keys, *st.output_keys} if self.refs.get(k, 0) == 0]

    @property
    def is_finished(self) -> bool:
        return self.finished == self.total

    def produced_owned(self) -> list[str]:
        """Owned keys already made (to free when the run stops early)."""
        return [k for i, st in enumerate(self.subtasks) if self.done[i] for k in st.output_keys if k in self.owned]
