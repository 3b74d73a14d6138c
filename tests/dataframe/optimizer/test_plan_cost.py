"""What one run of the optimizer asks and walks: the fixed costs it adds to every query."""

from __future__ import annotations

import numpy as np
import pandas as pd

import mars.dataframe as md
from mars.dataframe.optimizer import graph, plan
from mars.dataframe.optimizer.projection import merge_needs


def _tables():
    rng = np.random.default_rng(1)
    left = pd.DataFrame({"k": rng.integers(0, 8, 30), "a": rng.random(30), "s": list("abc" * 10), "u": 1})
    right = pd.DataFrame({"k": np.arange(8), "b": rng.random(8), "s": list("pqrstuvw")})
    return left, right


def test_the_session_is_asked_once_per_held_table(_fresh_session):
    pl, pr = _tables()
    left = md.DataFrame(pl, chunk_size=7).execute()
    right = md.DataFrame(pr, chunk_size=3).execute()
    query = left[left.a > 0.2].merge(right, on="k")
    query = query.assign(x=query.a * query.b).groupby("s_x").agg(total=("x", "sum"))
    asked: list[int] = []

    def holds(node):
        asked.append(id(node))
        return _fresh_session.is_executed(node)

    plan([query.data], holds)
    assert len(asked) == len(set(asked)) == 2  # each rule walks the graph; the answers do not change within a run
    expected = pl[pl.a > 0.2].merge(pr, on="k")
    expected = expected.assign(x=expected.a * expected.b).groupby("s_x").agg(total=("x", "sum"))
    pd.testing.assert_frame_equal(query.execute().fetch(), expected)


def test_rules_that_change_nothing_share_one_walk(monkeypatch):
    pl, _ = _tables()
    df = md.DataFrame(pl, chunk_size=7)
    target = df.max()  # every column read, nothing to fuse: no rule rewrites it
    walks = []
    real = graph._walk
    monkeypatch.setattr(graph, "_walk", lambda targets: walks.append(1) or real(targets))
    [out], _ = plan([target.data])
    assert out is target.data
    assert len(walks) == 1


def test_merge_needs_reads_the_narrow_dtypes_off_the_whole_merge():
    pl, pr = _tables()
    merged = md.DataFrame(pl, chunk_size=7).merge(md.DataFrame(pr, chunk_size=3), on="k")
    need = {"k", "a", "s_y"}
    lkeep, rkeep = merge_needs(merged.data.op, need)
    assert lkeep == {"k", "a", "s"} and rkeep == {"k", "s"}  # "s" stays on both sides: it names "s_y"
    narrow = pl[sorted(lkeep, key=list(pl.columns).index)].merge(pr[["k", "s"]], on="k")
    assert set(need) <= set(narrow.columns)


def test_an_op_rebuilt_on_new_inputs_keys_its_parameters_once(monkeypatch):
    """A rule's copy of an op (graph.fresh_op) keeps the parameters' part of its key: only what changed, the
    inputs, is keyed again; a copy with a parameter changed is keyed anew. The keys equal a fresh op's."""
    import mars.core.operator as operator_module

    pl, _ = _tables()
    df = md.DataFrame(pl, chunk_size=7)
    node = df[df.a > 0.2].assign(y=df.a * 2).data
    op = node.op
    calls = []
    real = operator_module.normalize
    monkeypatch.setattr(operator_module, "normalize", lambda v: calls.append(1) or real(v))
    same = graph.fresh_op(op)._apply(list(op.inputs), [node.params()], type(node))[0]
    assert calls == [] and same.key == node.key
    fresh = op.copy()._apply(list(op.inputs), [node.params()], type(node))[0]
    assert calls and fresh.key == node.key
    changed = graph.fresh_op(op, how="outer")._apply(list(op.inputs), [node.params()], type(node))[0]
    assert changed.key != node.key
