"""The generic map-reduce shuffle: wiring, execution by the executor, and a shuffle in a session."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import mars
import mars.tensor as mt
from mars.core.executor import execute_subtasks
from mars.core.graph import build_subtasks
from mars.core.operator import Operator
from mars.core.shuffle import ShuffleMap, ShuffleReduce, shuffle_chunks
from mars.tensor.random.permutation import PermuteMap, PermuteReduce


class Words(Operator):
    """A source chunk: a list of words."""

    params = ("words",)

    def execute(self) -> list:
        return list(self.words)


class ByLength(ShuffleMap):
    """Sends each word to partition ``len(word) % n``: no numpy, no tensors."""

    params = ("n",)

    def split(self, words: list) -> list:
        pieces: list[list] = [[] for _ in range(self.n)]
        for w in words:
            pieces[len(w) % self.n].append(w)
        return pieces


class SortedUnion(ShuffleReduce):
    params = ("partition",)

    def combine(self, pieces: list) -> list:
        return sorted(w for piece in pieces for w in piece)


def _wire(blocks: list[list[str]], n: int) -> list:
    sources = [Words(words=tuple(b)).new_chunk([], index=(i,), shape=(len(b),)) for i, b in enumerate(blocks)]
    return shuffle_chunks(
        sources, n,
        lambda i: ByLength(n=n),
        lambda r: SortedUnion(partition=r),
        [{"index": (r,), "shape": (math.nan,)} for r in range(n)],
    )


BLOCKS = [["a", "bb", "ccc"], ["dddd", "e", "ff", "ggg"], [], ["hhhhh", "ii"]]


def test_wiring_reducer_r_reads_piece_r_of_every_mapper():
    reducers = _wire(BLOCKS, 3)
    assert [r.index for r in reducers] == [(0,), (1,), (2,)]
    mappers = [c.op for c in reducers[0].inputs]
    assert len(mappers) == len(BLOCKS) and len({id(m) for m in mappers}) == len(BLOCKS)
    for r, reducer in enumerate(reducers):
        assert [c.op for c in reducer.inputs] == mappers  # the same map ops feed every reducer
        assert [c.output_index for c in reducer.inputs] == [r] * len(BLOCKS)
        assert [c.index for c in reducer.inputs] == [(i, r) for i in range(len(BLOCKS))]
    piece_keys = [k for m in mappers for k in m.output_keys]
    assert len(set(piece_keys)) == len(BLOCKS) * 3
    # built again, the same shuffle has the same keys
    assert [r.key for r in _wire(BLOCKS, 3)] == [r.key for r in reducers]
    assert [r.key for r in _wire(BLOCKS, 2)] != [r.key for r in reducers][:2]


def test_wiring_checks_its_arguments():
    sources = [Words(words=("a",)).new_chunk([], index=(0,), shape=(1,))]
    with pytest.raises(ValueError, match="n_partitions=0"):
        shuffle_chunks(sources, 0, lambda i: ByLength(n=0), lambda r: SortedUnion(partition=r), [])
    with pytest.raises(ValueError, match="1 entries for 2"):
        shuffle_chunks(sources, 2, lambda i: ByLength(n=2), lambda r: SortedUnion(partition=r), [{}])


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_executor_runs_a_shuffle_and_frees_the_pieces(n):
    reducers = _wire(BLOCKS, n)
    store: dict[str, Any] = {}
    keep = {r.key for r in reducers}
    execute_subtasks(build_subtasks(reducers, store.__contains__), store, keep, n_threads=2)
    words = [w for b in BLOCKS for w in b]
    for r, reducer in enumerate(reducers):
        assert store[reducer.key] == sorted(w for w in words if len(w) % n == r)
    assert set(store) == keep  # every piece was dropped once its reducer ran


def test_a_map_op_must_make_one_piece_per_partition():
    class Short(ByLength):
        def split(self, words: list) -> list:
            return [words]

    source = Words(words=("a", "b")).new_chunk([], index=(0,), shape=(2,))
    reducers = shuffle_chunks([source], 2, lambda i: Short(n=2), lambda r: SortedUnion(partition=r),
                              [{"index": (r,), "shape": (math.nan,)} for r in range(2)])
    with pytest.raises(ValueError, match="1 pieces for 2 partitions"):
        execute_subtasks(build_subtasks(reducers, lambda k: False), {}, set())


@pytest.fixture
def session():
    sess = mars.new_session()
    yield sess
    sess.close()


def test_permutation_in_a_session_is_a_shuffle(session):
    x = np.arange(40).reshape(20, 2)
    t = mt.random.permutation(mt.tensor(x, chunk_size=(6, 1)))
    value = session.run(t)
    assert sorted(value[:, 0].tolist()) == list(range(0, 40, 2))
    np.testing.assert_array_equal(value[:, 1], value[:, 0] + 1)
    reducers = t.chunks
    assert all(isinstance(c.op, PermuteReduce) for c in reducers)
    maps = {id(c.op): c.op for r in reducers for c in r.inputs}
    assert all(isinstance(m, PermuteMap) and len(m.output_keys) == 4 for m in maps.values())
    assert len(maps) == 8  # 4 row blocks in each of 2 column blocks
    with mars.new_session() as other:  # computed again from scratch: a built shuffle is deterministic
        np.testing.assert_array_equal(other.run(t), value)
