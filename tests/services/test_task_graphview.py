"""The dashboard's view of a task's graphs, without a cluster: states, cuts, and what an old task keeps."""

from __future__ import annotations

import mars.tensor as mt
from mars.core.graph import Subtask
from mars.services.task import graphview
from mars.services.task.graphview import TaskGraph, op_label


class Add:
    pass


class Fused:
    def __init__(self, *ops):
        self.steps = [Subtask(op, [], []) for op in ops]


def chain(n: int) -> list[Subtask]:
    """n subtasks, each reading the one before."""
    return [Subtask(Add(), [f"k{i - 1}"] if i else [], [f"k{i}"]) for i in range(n)]


def test_a_fused_subtask_is_named_after_its_steps():
    assert op_label(Add()) == "Add"
    assert op_label(Fused(Add(), Add(), object())) == "Add+object"
    many = Fused(*[type(f"Op{i}", (), {})() for i in range(5)])
    assert op_label(many) == "Op0+Op1+Op2+..."


def test_subtask_states_follow_scheduling_and_the_end_of_a_run():
    a = mt.ones(4, chunk_size=2) + 1
    graph = TaskGraph([a.data])
    run = graph.add_run(0, chain(3))
    run.scheduled(0, "w1:1")
    graph.subtask_done(run, 0)
    run.scheduled(1, "w2:1")
    states = lambda: [n["state"] for n in graph.to_json("subtask", "running", lambda k: False)["nodes"]]  # noqa: E731
    assert states() == ["succeeded", "scheduled", "waiting"]
    run.finished(1, False)
    graph.freeze("failed", lambda k: False)
    assert states() == ["succeeded", "failed", "cancelled"]
    body = graph.to_json("subtask", "failed", lambda k: False)
    assert body["edges"] == [["0", "1"], ["1", "2"]] and body["nodes"][1]["worker"] == "w2:1"


def test_tileable_level_lists_inputs_first_and_freezes_on_the_end():
    a = mt.ones(4, chunk_size=2)
    b = (a + 1).sum()
    graph = TaskGraph([b.data])
    running = graph.to_json("tileable", "running", lambda k: False)
    assert [n["label"] for n in running["nodes"]][0] == "TensorFull" and running["nodes"][-1]["id"] == b.key
    assert {n["state"] for n in running["nodes"]} == {"pending"} and len(running["edges"]) == 2
    graph.freeze("cancelled", lambda k: False)
    assert {n["state"] for n in graph.to_json("tileable", "cancelled", lambda k: False)["nodes"]} == {"cancelled"}


def test_a_tileable_shows_the_share_of_its_chunks_that_finished_subtasks_made():
    a = mt.ones(4, chunk_size=1) + 1  # four chunks, made by four (fused) subtasks
    graph = TaskGraph([a.data])
    a.data.chunks = [type("Chunk", (), {"key": f"c{i}"})() for i in range(4)]
    steps = [Subtask(Add(), [], [f"c{i}"]) for i in range(4)]
    fused = [Subtask(type("F", (), {"steps": [st]})(), [], [f"out{i}"]) for i, st in enumerate(steps)]
    run = graph.add_run(0, fused)
    progress = lambda: graph.to_json("tileable", "running", lambda k: False)["nodes"][-1]["progress"]  # noqa: E731
    assert progress() == 0.0
    graph.subtask_done(run, 0)
    graph.subtask_done(run, 2)
    assert progress() == 0.5  # read from the fused steps' outputs
    graph.subtask_done(run, 1)
    graph.subtask_failed(run, 3)
    graph.freeze("failed", lambda k: False)
    last = graph.to_json("tileable", "failed", lambda k: False)["nodes"][-1]
    assert last["progress"] == 0.75 and last["state"] == "failed"


def test_big_graphs_are_cut_and_old_tasks_keep_only_counts(monkeypatch):
    monkeypatch.setattr(graphview, "MAX_NODES", 5)
    graph = TaskGraph([mt.ones(2).data])
    graph.add_run(0, chain(3))
    graph.add_run(3, chain(4))
    body = graph.to_json("subtask", "running", lambda k: False)
    assert [n["id"] for n in body["nodes"]] == ["0", "1", "2", "3", "4"] and body["n_nodes"] == 7
    assert body["truncated"] and all(int(b) < 5 for _, b in body["edges"])
    graph.trim()
    body = graph.to_json("subtask", "running", lambda k: False)
    assert body["nodes"] == [] and body["n_nodes"] == 7 and body["truncated"]
