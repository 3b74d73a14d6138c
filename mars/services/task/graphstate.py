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
        ready, free, _ = self.complete_releasing(i)
        return ready, free

    def complete_releasing(self, i: int) -> tuple[list[int], list[str], list[str]]:
        """As :meth:`complete`, plus the keys ``i`` read or made that no pending subtask of this
        graph reads any more (owned or not: what this graph lets go of)."""
        if self.done[i]:
            return [], [], []
        self.done[i] = True
        self.finished += 1
        st = self.subtasks[i]
        ready: list[int] = []
        for k in st.output_keys:
            for c in self.consumers.get(k, ()):
                self.waiting[c] -= 1
                if self.waiting[c] == 0:
                    ready.append(c)
        released: list[str] = []
        refs = self.refs
        for k in set(st.input_keys):
            refs[k] -= 1
            if refs[k] == 0:
                released.append(k)
        released.extend(k for k in st.output_keys if k not in refs)
        owned = self.owned
        return ready, [k for k in released if k in owned], released

    @property
    def is_finished(self) -> bool:
        return self.finished == self.total

    def produced_owned(self) -> list[str]:
        """Owned keys already made (to free when the run stops early)."""
        return [k for i, st in enumerate(self.subtasks) if self.done[i] for k in st.output_keys if k in self.owned]
