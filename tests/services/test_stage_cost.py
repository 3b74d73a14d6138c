"""What a tiling stage costs besides its chunk functions: the hops between the tiling, the supervisor's
loop and the workers (see SessionProcessor._tile and GraphRun._is_path)."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest

import mars.dataframe as md
import mars.tensor as mt
from mars.core import tiling
from mars.services.execution.api import SubtaskSpec
from mars.services.execution.memory import estimate
from mars.services.storage.core import ChunkStore
from mars.services.storage.shm import StoredObject
from mars.services.task import processor as processor_module
from mars.services.task.processor import SessionProcessor


def _record_tiling_threads(monkeypatch) -> list[str]:
    """The thread each op's ``tile()`` goes on in after a stage (it yielded, and was sent the stage's values)."""
    resumed: list[str] = []
    tile_op = tiling.tile_op

    def recording(op):
        steps = tile_op(op)
        reply, first = None, True
        while True:
            if not first:
                resumed.append(threading.current_thread().name)
            first = False
            try:
                request = steps.send(reply)
            except StopIteration:
                return
            reply = yield request

    monkeypatch.setattr(tiling, "tile_op", recording)
    return resumed


def _steps_taking(monkeypatch, seconds: float) -> None:
    """Tiling steps take ``seconds`` as far as the task service can tell (a loaded machine must not decide)."""
    step = processor_module._step_without_gc

    def timed(*args):
        return step(*args)[0], seconds

    monkeypatch.setattr(processor_module, "_step_without_gc", timed)


def test_tiling_goes_on_after_a_stage_on_the_loop_and_values_come_with_the_reports(cluster, session, monkeypatch):
    """A sort fetches samples, then cuts: after each stage its tile() goes on on the supervisor's event loop
    (no hop to a thread and back), and the values it asked for came back in the workers' reports (no fetch)."""
    resumed = _record_tiling_threads(monkeypatch)
    _steps_taking(monkeypatch, 0.0)
    fetched: list[list[str]] = []
    fetch_values = processor_module.fetch_values

    async def counting(session_id, keys, *args, **kw):
        fetched.append(list(keys))
        return await fetch_values(session_id, keys, *args, **kw)

    monkeypatch.setattr(processor_module, "fetch_values", counting)
    rng = np.random.default_rng(5)
    pdf = pd.DataFrame({"a": rng.random(300), "b": rng.integers(0, 9, 300)})
    df = md.DataFrame(pdf, chunk_size=70)
    session.execute(df)
    got = session.fetch(session.execute(df.sort_values("a").sort_values("b", kind="stable")))
    pd.testing.assert_frame_equal(got, pdf.sort_values("a").sort_values("b", kind="stable"))
    assert len(resumed) >= 2  # two sorts, each went on after at least one stage
    assert set(resumed) == {cluster.thread.name}, resumed
    assert fetched == []


def test_tiling_goes_on_on_a_thread_after_a_slow_step(cluster, session, monkeypatch):
    """A step that took long (a big graph tiled) would hold up the loop: the next ones run on a thread."""
    resumed = _record_tiling_threads(monkeypatch)
    _steps_taking(monkeypatch, 1.0)
    pdf = pd.DataFrame({"a": np.random.default_rng(6).random(200)})
    df = md.DataFrame(pdf, chunk_size=60)
    got = session.fetch(session.execute(df.sort_values("a")))
    pd.testing.assert_frame_equal(got, pdf.sort_values("a"))
    assert resumed and cluster.thread.name not in resumed


@pytest.fixture
def sent(monkeypatch) -> list[list[tuple[int, int]]]:
    """What the supervisor sends the workers: per message, each spec's (index, chain number; 0 for none)."""
    messages: list[list[tuple[int, int]]] = []
    send_specs = SessionProcessor.send_specs

    async def spy(self, address, specs):
        messages.append([(s.index, s.chained) for s in specs])
        await send_specs(self, address, specs)

    monkeypatch.setattr(SessionProcessor, "send_specs", spy)
    return messages


def test_a_graph_whose_subtasks_read_each_other_in_turn_goes_to_one_slot_in_one_message(cluster, session,
                                                                                      sent):
    """A chain of matrix products and a sum over one 160,000-element block is too big for the small-graph
    rule, but each subtask waits for the one before anyway: one message to one worker, not one per subtask."""
    a = np.random.default_rng(0).random((400, 400))
    x = mt.tensor(a, chunk_size=400)
    got = session.fetch(session.execute((x.dot(x) + 1).T.dot(x).sum()))
    np.testing.assert_allclose(got, ((a @ a + 1).T @ a).sum())
    assert len(sent) == 1 and len(sent[0]) > 2 and all(chained for _, chained in sent[0]), sent


def test_a_graph_with_two_independent_branches_is_not_sent_whole(cluster, session, sent):
    """Two blocks computed side by side (their sum reads both): they may run on both workers at once."""
    a = np.random.default_rng(1).random((800, 400))
    x = mt.tensor(a, chunk_size=(400, 400))
    got = session.fetch(session.execute((x.T.dot(x) + 1).sum()))
    np.testing.assert_allclose(got, (a.T @ a + 1).sum())
    assert [i for specs in sent for i, chained in specs if not chained]  # dispatched level by level, not as one chain


class _Op:
    pass


def test_a_chain_member_reading_an_earlier_members_output_counts_it_as_its_input():
    """Outputs whose size is known only once run (nan) are taken as big as what their subtask reads; for
    the second member of a chain that is what the first made (in the slot's memory, not in the store)."""
    from mars.core.graph import Subtask

    store = ChunkStore()
    store.put("s", [StoredObject("big", 1000, b"h", (1000,), "seg-big"),
                    StoredObject("extra", 500, b"h", (500,), "seg-extra")])
    f64 = np.dtype("float64")
    first = Subtask(_Op(), ["big"], ["made"], [(float("nan"),)], [f64])
    second = Subtask(_Op(), ["made", "extra"], ["out"], [(float("nan"),)], [f64])
    unit = [SubtaskSpec("s", "t", i, st, (0, i), chained=True) for i, st in enumerate((first, second))]
    need = estimate(unit, store)
    assert need.outputs == 1500  # made (as big as "big") and "extra"
    assert need.loaded == 0  # all read in place or from the slot's own memory


def test_independent_runs_of_subtasks_each_go_whole_to_a_slot(cluster, session, sent):
    """Two row blocks, each through products and a partial sum (a run of subtasks each reading the one
    before), then the total: each run goes in one piece, and only the total waits for both."""
    rng = np.random.default_rng(2)
    a, b = rng.random((800, 350)), rng.random((350, 350))  # w: under 1 MiB, cheap to read from the other worker
    w = mt.tensor(b, chunk_size=350)
    session.execute(w)
    sent.clear()
    x = mt.tensor(a, chunk_size=(400, 350))
    got = session.fetch(session.execute(((x.dot(w) + 1).dot(w)).sum()))
    np.testing.assert_allclose(got, ((a @ b + 1) @ b).sum())
    runs = [specs for specs in sent if len(specs) > 1]
    assert len(runs) == 2, sent
    for specs in runs:  # one chain per message: the same number on each spec, in depth-first order
        assert len({chained for _, chained in specs}) == 1 and specs[0][1] != 0
        assert [i for i, _ in specs] == sorted(i for i, _ in specs)
    assert sent[-1] == [(sent[-1][0][0], 0)]  # the total, sent once both partial sums were in


class _Const:
    def __init__(self, value):
        self.value = value

    def execute(self):
        return np.array([self.value])


class _Fails:
    def execute(self):
        raise ValueError("boom")


class _AddOne:
    def execute(self, x):
        return x + 1


def test_a_failed_chain_skips_only_its_own_rest_in_a_slots_batch():
    """A slot's batch holds two chains of one task; the first fails at its head: its second subtask is
    skipped (it would read what failed), the other chain runs whole."""
    from mars.core.graph import Subtask
    from mars.services.execution.slot import _run_batch
    from mars.services.storage.shm import unlink_object

    def spec(index, op, inputs, output, chain):
        return SubtaskSpec("s", "t", index, Subtask(op, inputs, [output]), (0, index), chained=chain)

    specs = [spec(0, _Fails(), [], "a", 1), spec(1, _AddOne(), ["a"], "b", 1),
             spec(2, _Const(4), [], "c", 3), spec(3, _AddOne(), ["c"], "d", 3)]
    outcomes = _run_batch(specs, {}, f"h2t{threading.get_ident()}", set())
    try:
        assert [o.index for o in outcomes] == [0, 2, 3]
        assert isinstance(outcomes[0].error, ValueError)
        assert outcomes[2].error is None and outcomes[2].descs[0].key == "d"
        assert outcomes[2].descs[0].value.tolist() == [5]
    finally:
        for o in outcomes:
            for d in o.descs:
                unlink_object(d)


async def test_a_subtask_making_a_key_again_is_sent_after_its_delete_on_that_worker(monkeypatch):
    """A stage frees a chunk and a later one computes it again on the same worker: the subtask goes only
    once the delete is done there (else the delete, arriving late, would take the new copy)."""
    import asyncio

    from mars.core.graph import Subtask
    from mars.services.meta.core import ChunkMeta
    from mars.services.task.processor import TaskConfig

    events: list[str] = []
    proc = SessionProcessor("s", "127.0.0.1:1", None, TaskConfig())

    async def slow_delete(worker, keys):
        await asyncio.sleep(0.05)
        events.append(f"deleted {keys} on {worker}")

    class _Worker:
        def __init__(self, address, uid):
            self.address = address

        async def submit(self, specs, reply_to):
            events.append(f"submitted {[s.subtask.output_keys for s in specs]} to {self.address}")

    proc._delete_on = slow_delete  # type: ignore[method-assign]
    monkeypatch.setattr(processor_module.mo, "ActorRef", _Worker)
    proc.meta.put(ChunkMeta("k", "w1", (1,), 8))
    proc._free_soon(["k"])  # goes out at the end of this loop turn
    again = SubtaskSpec("s", "t", 0, Subtask(_AddOne(), [], ["k"]), (0, 0))
    other = SubtaskSpec("s", "t", 1, Subtask(_AddOne(), [], ["x"]), (0, 1))
    await proc.send_specs("w2", [again])  # another worker: no wait
    await proc.send_specs("w1", [other])  # another key: no wait
    assert events == ["submitted [['k']] to w2", "submitted [['x']] to w1"]
    await proc.send_specs("w1", [again])
    assert events[2:] == ["deleted ['k'] on w1", "submitted [['k']] to w1"]
    assert not proc._deleting
