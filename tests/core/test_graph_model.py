"""The graph model without numpy semantics: keys, staged tiling, fusion, the executor."""

from __future__ import annotations

import pickle
import threading
import time

import numpy as np
import pytest

import mars
from mars.core.entity import TileableData, chunk_indexes
from mars.core.executor import ExecutionCancelled, execute_subtasks
from mars.core.fusion import FusedOp, fuse
from mars.core.graph import build_subtasks, describe
from mars.core.operator import Fetch, Operator, Tiled
from mars.core.tiling import Tiler, TilingError, tile_now
from mars.core.tokenize import tokenize


class Source(Operator):
    """A 1-D tileable of ``n`` chunks; chunk i holds ``sizes[i]`` copies of i."""

    params = ("sizes",)
    fusible = True

    @classmethod
    def tile(cls, op):
        chunks = [Source(sizes=(s, i)).new_chunk([], index=(i,), shape=(s,)) for i, s in enumerate(op.sizes)]
        return Tiled(chunks, (tuple(op.sizes),))

    def execute(self):
        size, value = self.sizes
        return np.full(size, value)


class Filter(Operator):
    """Keeps values above ``threshold``: sizes unknown until run (NaN)."""

    params = ("threshold",)
    fusible = True
    blockwise = False

    @classmethod
    def tile(cls, op):
        inp = op.inputs[0]
        chunks = [op.copy().new_chunk([c], index=c.index, shape=(np.nan,)) for c in inp.chunks]
        return Tiled(chunks, ((np.nan,) * len(chunks),))

    def execute(self, x):
        return x[x > self.threshold]


FETCHED: list = []


class Total(Operator):
    """Sums a tileable into one chunk, but first needs its chunks' sizes (a staged tile)."""

    params = ()

    @classmethod
    def tile(cls, op):
        inp = op.inputs[0]
        yield inp.chunks  # sizes after the filter are known only once it ran
        inp.refresh_shape()
        assert not np.isnan(inp.shape[0])
        values = yield Fetch(inp.chunks[:1])  # and a value, as a sort would sample
        FETCHED.append(values[0])
        chunk = op.copy().new_chunk(inp.chunks, index=(0,), shape=())
        return Tiled([chunk], ())

    def execute(self, *parts):
        return int(sum(p.sum() for p in parts))


def source(sizes):
    return Source(sizes=tuple(sizes)).new_tileable([], shape=(sum(sizes),))


def test_keys_are_deterministic_and_depend_on_params_and_inputs():
    assert source([2, 3]).key == source([2, 3]).key
    assert source([2, 3]).key != source([3, 2]).key
    f1 = Filter(threshold=0).new_tileable([source([2, 3])], shape=(np.nan,))
    f2 = Filter(threshold=0).new_tileable([source([2, 3])], shape=(np.nan,))
    f3 = Filter(threshold=1).new_tileable([source([2, 3])], shape=(np.nan,))
    assert f1.key == f2.key != f3.key
    assert tokenize(np.arange(5)) == tokenize(np.arange(5)) != tokenize(np.arange(1, 6))
    def inc(x):
        return x + 1

    assert tokenize(inc) == tokenize(inc) != tokenize(lambda x: x + 2)


def test_tiling_in_stages_computes_what_it_needs_first():
    ran = []
    store = {}

    def run_chunks(chunks, want_values):
        subtasks = build_subtasks(chunks, store.__contains__)
        ran.append(len(subtasks))
        shapes = execute_subtasks(subtasks, store, {c.key for c in chunks})
        for c in chunks:
            c.shape = shapes.get(c.key, c.shape)
        return [store[c.key] for c in chunks] if want_values else None

    filtered = Filter(threshold=1).new_tileable([source([3, 1, 4, 2])], shape=(np.nan,))
    total = Total().new_tileable([filtered], shape=())
    Tiler(run_chunks).tile([total])
    assert filtered.shape == (6.0,)  # 4*2 ... chunk 2 has four 2s, chunk 3 has two 3s
    assert len(FETCHED[-1]) == 0  # chunk 0 kept nothing
    assert ran[0] == 8  # 4 sources and 4 filters ran in the first stage
    subtasks = build_subtasks(total.chunks, store.__contains__)
    assert len(subtasks) == 1  # everything upstream is already computed
    execute_subtasks(subtasks, store, {total.chunks[0].key})
    assert store[total.chunks[0].key] == 4 * 2 + 2 * 3


def test_tile_now_refuses_ops_that_need_data():
    filtered = Filter(threshold=1).new_tileable([source([3, 1])], shape=(np.nan,))
    with pytest.raises(TilingError, match="must be a generator"):
        tile_now(Total().new_tileable([filtered], shape=()))


def _tiled_subtasks(t: TileableData):
    Tiler(lambda *a: pytest.fail("no stage expected")).tile([t])
    return build_subtasks(t.chunks, lambda k: False)


def test_fusion_merges_single_consumer_chains_but_keeps_targets():
    filtered = Filter(threshold=0).new_tileable([source([2, 2, 2])], shape=(np.nan,))
    subtasks = _tiled_subtasks(filtered)
    assert len(subtasks) == 6
    fused = fuse(subtasks, keep={c.key for c in filtered.chunks})
    assert len(fused) == 3 and all(isinstance(st.op, FusedOp) for st in fused)
    # a kept intermediate is not swallowed
    kept = fuse(subtasks, keep={st.output_keys[0] for st in subtasks})
    assert len(kept) == 6
    assert "Subtask" in describe(fused)


def test_subtasks_pickle_without_their_upstream_graph():
    filtered = Filter(threshold=0).new_tileable([source([2] * 50)], shape=(np.nan,))
    subtasks = _tiled_subtasks(filtered)
    one = pickle.dumps(subtasks[-1])
    assert len(one) < 1000
    clone = pickle.loads(one)
    assert clone.input_keys == subtasks[-1].input_keys and clone.op.threshold == 0


class Slow(Operator):
    params = ("value", "delay")

    def execute(self, *inputs):
        time.sleep(self.delay)
        if self.value == "boom":
            raise KeyError("boom in a chunk")
        return self.value


def _chain(n, delay, fail_at=None):
    chunks, prev = [], []
    for i in range(n):
        op = Slow(value="boom" if i == fail_at else i, delay=delay)
        c = op.new_chunk(prev, index=(i,), shape=())
        chunks.append(c)
        prev = [c]
    return chunks


def test_executor_frees_intermediates_as_it_goes():
    chunks = _chain(6, 0)
    seen_sizes = []
    store = {}
    execute_subtasks(build_subtasks(chunks[-1:], store.__contains__), store, {chunks[-1].key},
                     on_done=lambda done, total: seen_sizes.append(len(store)))
    assert max(seen_sizes) == 1  # never more than the newest value held
    assert list(store) == [chunks[-1].key]


def test_executor_raises_the_chunk_error_and_keeps_callers_data():
    chunks = _chain(4, 0, fail_at=2)
    store = {"unrelated": 1}
    with pytest.raises(KeyError, match="boom in a chunk"):
        execute_subtasks(build_subtasks(chunks[-1:], store.__contains__), store, {chunks[-1].key}, n_threads=2)
    assert store == {"unrelated": 1}


def test_executor_runs_independent_subtasks_in_parallel():
    ops = [Slow(value=i, delay=0.2).new_chunk([], index=(i,), shape=()) for i in range(4)]
    store = {}
    start = time.perf_counter()
    execute_subtasks(build_subtasks(ops, store.__contains__), store, {c.key for c in ops}, n_threads=4)
    assert time.perf_counter() - start < 0.6  # 4 x 0.2 s serially
    assert sorted(store.values()) == [0, 1, 2, 3]


def test_cancel_stops_between_subtasks():
    chunks = _chain(50, 0.02)
    store = {}
    cancel = threading.Event()
    threading.Timer(0.1, cancel.set).start()
    with pytest.raises(ExecutionCancelled):
        execute_subtasks(build_subtasks(chunks[-1:], store.__contains__), store, {chunks[-1].key}, cancel=cancel)
    assert store == {}


class SlowTileable(Operator):
    params = ("n", "delay")

    @classmethod
    def tile(cls, op):
        chunks = [Slow(value=i, delay=op.delay).new_chunk([], index=(i,), shape=()) for i in range(op.n)]
        return Tiled(chunks, ((1,) * op.n,))


def test_future_cancel_from_a_session():
    import concurrent.futures

    sess = mars.new_session(default=False)
    with mars.option_context({"n_threads": 1}):
        slow = SlowTileable(n=200, delay=0.01).new_tileable([], shape=(200,))
        future = sess.execute(slow, wait=False)
        time.sleep(0.1)
        assert not future.done()
        assert future.cancel()
        with pytest.raises(concurrent.futures.CancelledError):
            future.result(timeout=10)
        assert future.done() and future.cancelled()
    assert sess._store == {}  # nothing half-made is left behind
    sess.close()


def test_chunk_indexes_are_c_order():
    assert list(chunk_indexes([2, 2])) == [(0, 0), (0, 1), (1, 0), (1, 1)]


class Counted(Operator):
    """Counts how often its chunk function runs."""

    params = ("tag",)
    runs: list = []

    @classmethod
    def tile(cls, op):
        chunks = [Counted(tag=(op.tag, i)).new_chunk([c], index=c.index, shape=c.shape) for i, c in
                  enumerate(op.inputs[0].chunks)] if op.inputs else [
            Counted(tag=(op.tag, 0)).new_chunk([], index=(0,), shape=(1,))]
        return Tiled(chunks, ((1,) * len(chunks),))

    def execute(self, *inputs):
        Counted.runs.append(self.tag)
        return np.ones(1)


def test_executing_several_tileables_runs_shared_work_once():
    Counted.runs = []
    shared = Counted(tag="shared").new_tileable([], shape=(1,))
    a = Counted(tag="a").new_tileable([shared], shape=(1,))
    b = Counted(tag="b").new_tileable([shared], shape=(1,))
    sess = mars.new_session(default=False)
    sess.execute(a, b)
    assert sorted(t[0] for t in Counted.runs) == ["a", "b", "shared"]
    sess.execute(a)  # already computed: nothing runs again
    assert len(Counted.runs) == 3
    sess.close()


def test_interrupt_in_the_calling_thread_stops_the_helpers():
    chunks = [Slow(value=i, delay=0.02).new_chunk([], index=(i,), shape=()) for i in range(40)]
    store = {}
    calls = []

    def interrupt(done, total):
        calls.append(done)
        if len(calls) >= 3 and threading.current_thread() is threading.main_thread():
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        execute_subtasks(build_subtasks(chunks, store.__contains__), store, set(), n_threads=2, on_done=interrupt)
    time.sleep(0.1)
    assert store == {} and len(calls) < 10  # nothing left behind, and the helper stopped early


def test_a_pickled_expression_keeps_its_graph_and_runs_the_same():
    import mars.tensor as mt

    x = np.random.RandomState(1).rand(20, 10)
    t = ((mt.tensor(x, chunk_size=6) * 2)[3:17].sum(axis=0) + mt.ones(10, chunk_size=4))
    clone = pickle.loads(pickle.dumps(t))
    assert clone.key == t.key
    sess = mars.new_session(default=False)
    np.testing.assert_allclose(sess.run(clone), (x * 2)[3:17].sum(axis=0) + 1)
    executed = pickle.loads(pickle.dumps(t.execute(session=sess)))  # tiled graphs pickle too
    np.testing.assert_allclose(sess.run(executed), sess.fetch(t))
    sess.close()
