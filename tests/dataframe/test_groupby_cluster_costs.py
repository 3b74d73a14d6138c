"""Grouped aggregations that write no whole partition out where they need not (costs a cluster pays in copies
to shared memory and transfers between workers), with results equal to pandas."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

import mars.dataframe as md
import mars.dataframe.groupby.agg as agg_module
from tests.dataframe.df_testing import assert_eq

N = 60
RNG = np.random.default_rng(11)
FRAME = pd.DataFrame({"j": RNG.choice(["a", "b", "c"], N), "many": [f"k{i}" for i in RNG.permutation(N)],
                      "x": RNG.random(N), "y": RNG.integers(-5, 5, N)})
SORTED = pd.DataFrame({"k": np.sort(RNG.integers(0, 12, N)), "x": RNG.random(N), "y": RNG.integers(0, 9, N)})
CHUNKINGS = [N, 17, (5, 0, 30, 25), (0, 1, 59), 1]


@pytest.fixture
def recorded(fused_names, monkeypatch):
    """A fresh session, and the subtasks its runs executed (op names; fused groups as ``A -> B``)."""
    monkeypatch.setattr(agg_module, "SINGLE_ROWS", -1)
    return fused_names


def _chunks(t) -> list:
    seen, stack, out = set(), list(t.data.chunks), []
    while stack:
        c = stack.pop()
        if id(c) not in seen:
            seen.add(id(c))
            out.append(c)
            stack.extend(c.op.inputs)
    return out


# ----------------------------------------------------------------- a frame stored in key order
SORTED_CALLS = {
    "named": lambda df: df.groupby("k").agg(s=("x", "sum"), m=("y", "mean")),
    "as_index=False": lambda df: df.groupby("k", as_index=False).agg(s=("x", "sum")),
    "first": lambda df: df.groupby("k").agg(f=("x", "first"), n=("y", "size")),
}


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
@pytest.mark.parametrize("name", sorted(SORTED_CALLS))
def test_a_frame_in_key_order_equals_pandas(recorded, name, chunk_size):
    assert_eq(SORTED_CALLS[name](md.DataFrame(SORTED, chunk_size=chunk_size)), SORTED_CALLS[name](SORTED))


@pytest.mark.parametrize("chunk_size", [(3, 2, 2), (2, 3, 2), 1, 3])
def test_uint64_keys_past_int64_are_not_taken_for_an_empty_partition(recorded, chunk_size):
    """A partition holding a key from 2**63 has no int64 range; were it counted as empty, the others' ranges
    would look ordered and key 3, in two partitions, would come out twice."""
    pdf = pd.DataFrame({"k": np.array([1, 2, 3, 3, 2**63 + 5, 4, 5], dtype=np.uint64), "x": np.arange(7.0)})
    assert_eq(md.DataFrame(pdf, chunk_size=chunk_size).groupby("k").x.sum(), pdf.groupby("k").x.sum())
    assert_eq(md.DataFrame(pdf, chunk_size=chunk_size).groupby("k").agg(n=("x", "count")),
              pdf.groupby("k").agg(n=("x", "count")))


@pytest.mark.parametrize("near", [False, True])
def test_a_boundary_key_moves_only_its_rows_and_the_recut_partition_is_never_written(recorded, monkeypatch, near):
    """On a cluster (``in_process=False``), the next partition's rows of the shared key are cut where it lies (KeyRows
    in a subtask of its own): it never travels whole. In an embedded session (one process) they are cut in the
    grouping's own subtask, which then waits for no other."""
    session_module = sys.modules["mars.session"]
    real = session_module.fuse
    monkeypatch.setattr(session_module, "fuse", lambda subtasks, keep: real(subtasks, keep, in_process=near))
    got = SORTED_CALLS["named"](md.DataFrame(SORTED, chunk_size=17)).execute()
    assert_eq(got, SORTED_CALLS["named"](SORTED))
    shares = [c for c in _chunks(got) if type(c.op).__name__ == "ShareBoundary" and c.op.take is not None]
    assert shares
    assert all(type(c.op.inputs[1].op).__name__ == "KeyRows" for c in shares)
    assert "ShareBoundary" not in recorded
    assert ("KeyRows" in recorded) is not near, recorded
    tail = "KeyRows -> ShareBoundary -> GroupCall" if near else "ShareBoundary -> GroupCall"
    assert any(tail in name for name in recorded), recorded


# ----------------------------------------------------------------- the probe of the groups (a tree or a shuffle)
@pytest.fixture
def first_probe(monkeypatch):
    """The chunks the probe of the groups asks for first (the counts and the partitions it keeps)."""
    asked: list[list] = []
    real = agg_module.probe_groups

    def spying(spec, parts):
        gen = real(spec, parts)
        request = next(gen)
        asked.append(list(request))
        reply = yield request
        while True:
            try:
                request = gen.send(reply)
            except StopIteration as stop:
                return stop.value
            reply = yield request

    monkeypatch.setattr(agg_module, "probe_groups", spying)
    return asked


CALLS = {
    "tree": lambda df: df.groupby("j").agg(s=("x", "sum"), n=("y", "count"), m=("x", "mean")),
    "shuffle": lambda df: df.groupby("many").agg(s=("x", "sum"), n=("y", "max")),
    "as_index=False": lambda df: df.groupby("j", as_index=False).agg(s=("y", "sum")),
}


@pytest.mark.parametrize("chunk_size", CHUNKINGS)
@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_filter_of_held_data_equals_pandas(recorded, first_probe, name, chunk_size):
    held = md.DataFrame(FRAME, chunk_size=chunk_size).execute()
    assert_eq(CALLS[name](held[held.y > -3]), CALLS[name](FRAME[FRAME.y > -3]))


def test_partitions_made_from_held_data_are_made_in_the_partials_subtasks(recorded, first_probe):
    held = md.DataFrame(FRAME, chunk_size=10).execute()
    lazy = held[held.y > -3]
    assert_eq(CALLS["tree"](lazy), CALLS["tree"](FRAME[FRAME.y > -3]))
    (asked,) = first_probe
    counts = [c for c in asked if type(c.op).__name__ == "KeyCount"]
    # the two probed partitions only; the four others are made where their partials are
    assert len(counts) == 2 and len(asked) == 4
    assert sum(name.endswith("-> GroupPartial") for name in recorded) == 4, recorded


def test_partitions_of_a_shuffle_are_all_kept_by_the_probe(recorded, first_probe):
    lazy = md.DataFrame(FRAME, chunk_size=10).sort_values("x")  # each partition reads every partition's pieces
    assert_eq(CALLS["tree"](lazy), CALLS["tree"](FRAME.sort_values("x")))
    (asked,) = first_probe
    assert len(asked) == 2 + 6
