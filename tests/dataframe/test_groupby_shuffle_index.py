"""Shuffled groupby pieces and the input's index labels.

An aggregation by columns (``sum``, ``agg({...})``, named, ``nunique``...)
sends its pieces without the index; everything whose result reads the labels
(``idxmax``, ``apply``, a callable ``agg``, keys from the index, aligned
keys, ``transform``, ``filter``, ``head``, ``cumsum``) must still see them.
Frames have a non-default, shuffled, partly repeated index, and the shuffle
is forced (the small-input and tree thresholds are turned off).
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, partitionings

import mars.dataframe as md
import mars.dataframe.groupby.agg as agg_module
from mars.dataframe.groupby.keys import GroupSpec
from mars.dataframe.groupby.shuffle import GroupReduce, KeySplit, index_free

N = 12
PARTS = partitionings(N)  # one partition, several, ragged with empty ones, size 1


def frame(unique: bool = True) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    labels = rng.permutation(np.arange(100, 100 + N)) * 3
    if not unique:
        labels[::3] = labels[1]
    return pd.DataFrame({
        "k": rng.integers(0, 4, N),
        "kf": np.where(np.arange(N) % 5 == 1, np.nan, rng.integers(0, 3, N) * 1.5),
        "c": pd.Categorical(rng.choice(["a", "b"], N), categories=["a", "b", "z"]),
        "x": rng.random(N),
        "y": rng.integers(-5, 5, N),
    }, index=pd.Index(labels, name="lab"))


PDF = frame()


@pytest.fixture(autouse=True)
def shuffle_only(monkeypatch):
    monkeypatch.setattr(agg_module, "SINGLE_ROWS", -1)
    monkeypatch.setattr(agg_module, "TREE_RATIO", -1.0)
    monkeypatch.setattr(agg_module, "TREE_ROWS", -1.0)


def check(result, expected) -> None:
    """``result`` equals pandas' ``expected``; with ``sort=False`` up to the order of the groups (a hash
    shuffle gives them in partition order, pandas in order of first appearance)."""
    if not _unsorted(result):
        assert_eq(result, expected)
    else:
        assert_eq(result.execute().fetch().sort_index(), expected.sort_index())


def _unsorted(result) -> bool:
    return not result.op.spec.sort


def _split_ops(t) -> list:
    """The groupby mappers of ``t``'s executed chunk graph."""
    t.execute()
    seen, stack, ops = set(), list(t.data.chunks), []
    while stack:
        c = stack.pop()
        if id(c) not in seen:
            seen.add(id(c))
            if isinstance(c.op, KeySplit) and c.op not in ops:
                ops.append(c.op)
            stack.extend(c.op.inputs)
    return ops


AGGREGATIONS = [
    lambda d: d.groupby("k")[["x", "y"]].sum(),
    lambda d: d.groupby("k", sort=False).agg({"x": ["sum", "mean"], "y": "max"}),
    lambda d: d.groupby("k", as_index=False).agg(total=("x", "sum"), n=("y", "count")),
    lambda d: d.groupby("kf", dropna=False).x.median(),
    lambda d: d.groupby("kf").y.nunique(),
    lambda d: d.groupby(["k", "kf"], sort=False).size(),
    lambda d: d.groupby("c", observed=False).x.agg(["first", "last", "std"]),
    lambda d: d.groupby("c", observed=True, sort=False).y.value_counts(),
]


@pytest.mark.parametrize("chunk_size", PARTS)
@pytest.mark.parametrize("case", range(len(AGGREGATIONS)))
def test_aggregations_without_the_index_equal_pandas(chunk_size, case):
    call = AGGREGATIONS[case]
    result = call(md.DataFrame(PDF, chunk_size=chunk_size))
    check(result, call(PDF))
    assert all(op.drop_index for op in _split_ops(result))


LABEL_READERS = [
    lambda d: d.groupby("k").x.idxmax(),
    lambda d: d.groupby("k").apply(lambda g: g.index.max() - g.x.sum()),
    lambda d: d.groupby("k", sort=False).x.agg(lambda s: s.index.min()),
    lambda d: d.groupby(level="lab").x.sum(),
    lambda d: d.groupby(lambda i: i % 7).y.sum(),
    lambda d: d.groupby(d.index.to_series() % 4).x.sum(),
]


@pytest.mark.parametrize("chunk_size", PARTS)
@pytest.mark.parametrize("case", range(len(LABEL_READERS)))
def test_calls_reading_the_labels_keep_them(chunk_size, case):
    call = LABEL_READERS[case]
    result = call(md.DataFrame(PDF, chunk_size=chunk_size))
    check(result, call(PDF))
    assert not any(op.drop_index for op in _split_ops(result))


def test_aligned_key_keeps_the_labels():
    pdf = PDF
    key = pd.Series(np.arange(N) % 3, index=pdf.index[::-1])  # aligned by label, not by place
    df = md.DataFrame(pdf, chunk_size=5)
    result = df.groupby(md.Series(key, chunk_size=4)).x.sum()
    assert_eq(result, pdf.groupby(key).x.sum())
    assert not any(op.drop_index for op in _split_ops(result))


ROUND_TRIPS = [
    lambda d: d.groupby("k").x.transform(lambda s: s.index.to_series().min() + s),
    lambda d: d.groupby("kf").filter(lambda g: g.index.min() > 305),
    lambda d: d.groupby("kf").x.transform(lambda s: s.index.to_series().max() - s),  # NaN keys: NaN rows
    lambda d: d.groupby("k", group_keys=False)[["x"]].apply(lambda g: g.assign(z=g.index.to_series() - g.x)),
    lambda d: d.groupby("k").head(2),
    lambda d: d.groupby("kf").x.cumsum(),
    lambda d: d.groupby("k").x.shift(1),
]


@pytest.mark.parametrize("chunk_size", PARTS)
@pytest.mark.parametrize("case", range(len(ROUND_TRIPS)))
def test_round_trips_keep_the_labels(chunk_size, case):
    call = ROUND_TRIPS[case]
    assert_eq(call(md.DataFrame(PDF, chunk_size=chunk_size)), call(PDF))


@pytest.mark.parametrize("chunk_size", [5, (1, 7, 0, 4)])
def test_round_trips_with_repeated_labels(chunk_size):
    pdf = frame(unique=False)
    df = md.DataFrame(pdf, chunk_size=chunk_size)
    assert_eq(df.groupby("k").x.transform(lambda s: s - s.mean()), pdf.groupby("k").x.transform(lambda s: s - s.mean()))
    assert_eq(df.groupby("kf").x.cumsum(), pdf.groupby("kf").x.cumsum())
    assert_eq(df.groupby("k").tail(1), pdf.groupby("k").tail(1))
    assert_eq(df.groupby("k").filter(lambda g: len(g) > 2), pdf.groupby("k").filter(lambda g: len(g) > 2))
    assert_eq(df.groupby("k")[["x", "y"]].sum(), pdf.groupby("k")[["x", "y"]].sum())


def _nbytes(piece: tuple) -> int:
    buffers: list = []
    head = pickle.dumps(piece, protocol=5, buffer_callback=buffers.append)
    return len(head) + sum(b.raw().nbytes for b in buffers)


def test_pieces_leave_the_index_behind():
    rng = np.random.default_rng(0)
    n = 4000
    part = pd.DataFrame({"k": rng.integers(0, 50, n), "x": rng.random(n)}, index=rng.permutation(n) + 10)
    spec = GroupSpec(by="k", sort=False)
    sizes = {}
    for drop in (False, True):
        op = KeySplit(spec=spec, bounds=None, columns=None, chunk=None, travel=(), drop_index=drop)
        op.output_keys = ["a", "b", "c"]
        pieces = op.split(part)
        sizes[drop] = sum(_nbytes(p) for p in pieces)
        if drop:
            assert all(isinstance(p[0].index, pd.RangeIndex) and p[0].index.start == 0 for p in pieces)
            reduced = GroupReduce(spec=spec, call=("sum", (), {}), meta=None, distinct=None, drop_index=True)
            got = pd.concat([reduced.combine([p]) for p in pieces])
            pd.testing.assert_frame_equal(got.sort_index(), part.groupby("k").sum())
    # two 8-byte columns and an 8-byte index before; the index was a third of the bytes
    assert sizes[True] < 0.7 * sizes[False]


def test_index_free_reads_keys_and_functions():
    meta = PDF.iloc[:0]
    assert index_free(GroupSpec(by=["k", "kf"]), ("agg", (), {"t": ("x", "sum"), "m": ("y", "median")}), meta)
    assert index_free(GroupSpec(by="k"), ("agg", ([("s", "sum"), "nunique"],), {}), meta)
    assert not index_free(GroupSpec(by="lab"), ("sum", (), {}), meta)  # an index level
    assert not index_free(GroupSpec(by=None, level=0), ("sum", (), {}), meta)
    assert not index_free(GroupSpec(by="k"), ("agg", ({"x": "idxmin"},), {}), meta)
    assert not index_free(GroupSpec(by="k"), ("agg", ("cumsum",), {}), meta)
    assert not index_free(GroupSpec(by="k"), ("apply", (len,), {}), meta)
