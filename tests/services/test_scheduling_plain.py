"""The task service's plain logic: graph bookkeeping and placement, with no cluster."""

from __future__ import annotations

import pytest

from mars.core.graph import Subtask
from mars.services.scheduling.placement import Placer, WorkerLoad
from mars.services.task.graphstate import GraphState


def _st(inputs, outputs):
    return Subtask(op=None, input_keys=list(inputs), output_keys=list(outputs))


def _tree():
    # a, b, c, d are sources; ab = f(a, b); cd = f(c, d); root = f(ab, cd)
    return [_st([], ["a"]), _st([], ["b"]), _st(["a", "b"], ["ab"]), _st([], ["c"]), _st([], ["d"]),
            _st(["c", "d"], ["cd"]), _st(["ab", "cd"], ["root"])]


def test_sources_are_ready_first_and_combines_follow_their_inputs():
    g = GraphState(_tree(), lambda k: False, keep={"root"})
    assert g.initial_ready() == [0, 1, 3, 4]
    assert g.complete(0) == ([], [])
    ready, free = g.complete(1)
    assert ready == [2] and free == []
    ready, free = g.complete(2)
    assert ready == [] and sorted(free) == ["a", "b"]  # read by their only consumer: freed at once


def test_kept_and_available_keys_are_never_freed():
    subtasks = [_st(["x"], ["y"]), _st(["y"], ["z"])]
    g = GraphState(subtasks, lambda k: k == "x", keep={"y", "z"})
    assert g.initial_ready() == [0]
    assert g.complete(0) == ([1], [])
    assert g.complete(1) == ([], [])  # x was there before; y and z were asked for
    assert g.is_finished


def test_an_input_neither_available_nor_produced_is_an_error():
    with pytest.raises(KeyError, match="missing"):
        GraphState([_st(["missing"], ["y"])], lambda k: False, keep=set())


def test_a_report_twice_counts_once():
    g = GraphState(_tree(), lambda k: False, keep={"root"})
    g.complete(0)
    assert g.complete(0) == ([], [])
    assert g.finished == 1


def test_produced_owned_lists_made_intermediates():
    g = GraphState(_tree(), lambda k: False, keep={"root"})
    g.complete(0)
    g.complete(3)
    assert sorted(g.produced_owned()) == ["a", "c"]


def test_sources_are_cut_in_contiguous_runs_by_slots():
    p = Placer([WorkerLoad("w1", 1), WorkerLoad("w2", 3)])
    assert p.place_sources(8) == ["w1"] * 2 + ["w2"] * 6
    assert p.workers["w2"].in_flight == 6


def test_a_subtask_goes_where_most_of_its_input_bytes_are():
    p = Placer([WorkerLoad("w1", 2), WorkerLoad("w2", 2)])
    assert p.place({"w1": 10, "w2": 1000}) == "w2"
    assert p.place({"w1": 5000, "w2": 1000}) == "w1"


def test_an_overloaded_worker_hands_small_inputs_to_an_idle_one():
    p = Placer([WorkerLoad("w1", 1), WorkerLoad("w2", 1)])
    p.workers["w1"].in_flight = 10
    assert p.place({"w1": 100}) == "w2"
    # big inputs stay put while moving them takes longer than the wait (10 subtasks of 1 ms)
    p.seconds = 0.001
    assert p.place({"w1": 100 << 20}) == "w1"


def test_no_inputs_goes_to_the_least_loaded_and_done_frees_capacity():
    p = Placer([WorkerLoad("w1", 1), WorkerLoad("w2", 1)])
    first = p.place({})
    second = p.place({})
    assert {first, second} == {"w1", "w2"}
    p.done(first)
    assert p.place({}) == first


def test_update_keeps_loads_of_workers_still_there():
    p = Placer([WorkerLoad("w1", 1), WorkerLoad("w2", 1)])
    p.place({"w1": 1})
    p.update([WorkerLoad("w1", 1), WorkerLoad("w3", 1)])
    assert p.workers["w1"].in_flight == 1 and "w2" not in p.workers


async def test_a_long_session_keeps_only_its_last_finished_tasks():
    from mars.oscar import ActorRef
    from mars.services.task.processor import SessionProcessor, TaskConfig, TaskRecord

    proc = SessionProcessor("s", "127.0.0.1:1", ActorRef("127.0.0.1:1", "x"), TaskConfig())
    for i in range(12):
        task = proc.tasks[f"t{i}"] = TaskRecord(f"t{i}", [])
        if i != 3:  # one still running: never forgotten
            task.done.set()
    proc._forget_old_tasks(keep=5)
    assert list(proc.tasks) == ["t3", "t7", "t8", "t9", "t10", "t11"]


def test_a_doomed_key_waits_for_the_last_run_that_pins_it():
    from mars.services.lifecycle.core import Pins

    pins = Pins()
    pins.pin(["k", "j"])  # run A makes k and j
    pins.pin(["k"])  # run B reads k
    assert pins.unpin(["k", "j"]) == []  # A is done with both and would free them
    assert sorted(pins.doom(["k", "j"])) == ["j"]  # j goes now; B still reads k
    assert "k" in pins and "j" not in pins
    assert pins.unpin(["k"]) == ["k"]  # B's last read: k goes
    assert len(pins) == 0


def test_unpinning_a_key_nobody_doomed_frees_nothing():
    from mars.services.lifecycle.core import Pins

    pins = Pins()
    pins.pin(["k", "k"])
    assert pins.unpin(["k"]) == [] and pins.unpin(["k"]) == []
    assert pins.unpin(["k"]) == []  # more unpins than pins are ignored
    assert pins.doom(["k"]) == ["k"]


def test_a_graph_lets_go_of_what_no_pending_subtask_reads():
    g = GraphState([_st(["x"], ["a"]), *_tree()[1:]], lambda k: k == "x", keep={"root"})
    assert g.complete_releasing(0) == ([], [], ["x"])  # x was there before: let go of, not freed; a is read by ab
    g.complete(1)
    ready, free, released = g.complete_releasing(2)
    assert ready == [] and sorted(free) == sorted(released) == ["a", "b"]
    for i in (3, 4, 5):
        g.complete(i)
    ready, free, released = g.complete_releasing(6)
    assert sorted(free) == ["ab", "cd"] and sorted(released) == ["ab", "cd", "root"]  # root is kept
    assert g.complete_releasing(6) == ([], [], [])


async def test_what_a_cancelled_call_started_on_the_session_runs_to_its_end():
    """A worker that dies while its reports are handled cancels its call: the handling must still finish."""
    import asyncio

    from mars.services.task.processor import SessionProcessor, TaskConfig

    proc = SessionProcessor("s", "127.0.0.1:1", None, TaskConfig())
    steps = []

    async def handle():
        steps.append("started")
        await asyncio.sleep(0.1)
        steps.append("ended")

    call = asyncio.ensure_future(proc.run_whole(handle()))
    await asyncio.sleep(0.02)
    call.cancel()
    await asyncio.sleep(0.2)
    assert call.cancelled() and steps == ["started", "ended"]
