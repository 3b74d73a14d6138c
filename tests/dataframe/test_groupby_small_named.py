"""Small inputs grouped by one pandas call; named aggregations run in their dict form."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mars.dataframe as md
import mars.dataframe.groupby.agg as agg_module
from mars.dataframe.groupby.named import call_on, dict_form
from tests.dataframe.df_testing import assert_eq, partitionings

N = 50
RNG = np.random.default_rng(3)
PDF = pd.DataFrame({"k": RNG.integers(0, 7, N), "j": RNG.choice(["a", "b", "c"], N), "x": RNG.random(N),
                    "y": RNG.integers(-5, 5, N), "s": RNG.choice(["p", "q"], N)})
PDF.loc[3, "x"] = np.nan

CALLS = {
    "named": lambda df: df.groupby("k").agg(total=("x", "sum"), n=("y", "count"), top=("s", "max")),
    "named two keys": lambda df: df.groupby(["k", "j"]).agg(m=("x", "mean"), sd=("y", "std")),
    "named as_index=False": lambda df: df.groupby("j", as_index=False).agg(total=("y", "sum")),
    "named unsorted": lambda df: df.groupby("j", sort=False).agg(first=("x", "first"), size=("y", "size")),
    "a key aggregated": lambda df: df.groupby("k").agg(n=("k", "count"), total=("x", "sum")),
    "a column twice": lambda df: df.groupby("k").agg(lo=("x", "min"), hi=("x", "max")),
    "dict": lambda df: df.groupby("k").agg({"x": "sum", "y": "max"}),
    "median": lambda df: df.groupby("j").x.median(),
}


def _chunk_ops(t) -> set:
    t = t.execute()
    seen, stack, names = set(), list(t.data.chunks), set()
    while stack:
        c = stack.pop()
        if id(c) not in seen:
            seen.add(id(c))
            names.add(type(c.op).__name__)
            stack.extend(c.op.inputs)
    return names


@pytest.mark.parametrize("chunk_size", partitionings(N))
@pytest.mark.parametrize("name", sorted(CALLS))
def test_equals_pandas(name, chunk_size):
    df = md.DataFrame(PDF, chunk_size=chunk_size)
    assert_eq(CALLS[name](df), CALLS[name](PDF))
    filtered = df[df.y > -3]  # sizes unknown until the partitions run (learnt by the probe or sampling)
    assert_eq(CALLS[name](filtered), CALLS[name](PDF[PDF.y > -3]))


@pytest.mark.parametrize("name", ["named", "median", "named unsorted"])
def test_larger_inputs_still_split_the_work(name, monkeypatch):
    monkeypatch.setattr(agg_module, "SINGLE_ROWS", 10)
    df = md.DataFrame(PDF, chunk_size=12)
    assert_eq(CALLS[name](df), CALLS[name](PDF))
    assert "ConcatChunks" not in _chunk_ops(CALLS[name](df))


def test_small_inputs_are_grouped_in_one_call():
    df = md.DataFrame(PDF, chunk_size=12)
    ops = _chunk_ops(CALLS["named"](df))
    assert {"ConcatChunks", "GroupCall"} <= ops and not ops & {"KeySplit", "GroupPartial", "KeyCount"}
    ops = _chunk_ops(CALLS["named"](df[df.y > 0]))
    assert "GroupCall" in ops and not ops & {"KeySplit", "GroupPartial"}


def test_dict_form_covers_only_what_it_reproduces():
    assert dict_form("agg", (), {"t": ("x", "sum")}) == ({"x": "sum"}, ["t"])
    assert dict_form("agg", (), {"t": ("x", np.sum)}) is None
    assert dict_form("agg", (), {"t": ("k", "sum")}, ["k"]) is None
    assert dict_form("agg", ("sum",), {}) is None
    assert dict_form("sum", (), {}) is None


NAMED = [
    ("k", {}, {"total": ("x", "sum"), "n": ("y", "count"), "top": ("s", "max")}),
    (["k", "j"], {}, {"m": ("x", "mean"), "sd": ("y", "std")}),
    ("j", {"sort": False}, {"first": ("x", "first"), "size": ("y", "size")}),
    ("j", {"as_index": False}, {"total": ("y", "sum"), "m": ("x", "mean")}),
    (["k", "j"], {"as_index": False, "dropna": False}, {"hi": ("s", "max")}),
    ("k", {}, {"n": ("k", "count"), "total": ("x", "sum")}),  # a key aggregated: pandas' own path
    ("k", {}, {"lo": ("x", "min"), "hi": ("x", "max")}),  # a column twice: pandas' own path
]


@pytest.mark.parametrize("by,kw,named", NAMED)
def test_call_on_equals_pandas_on_empty_and_small_frames(by, kw, named):
    for frame in (PDF, PDF.iloc[:0], PDF.iloc[:1]):
        expected = frame.groupby(by, **kw).agg(**named)
        got = call_on(frame.groupby(by, **kw), "agg", (), named)
        pd.testing.assert_frame_equal(got, expected, check_column_type=True, check_index_type=True)


# ----------------------------------------------------------------- a frame stored in key order
SORTED = pd.DataFrame({"k": np.sort(RNG.integers(0, 40, 300)), "x": RNG.random(300), "y": RNG.integers(0, 9, 300)})
SORTED_CALLS = {
    "named": lambda df: df.groupby("k").agg(s=("x", "sum"), m=("y", "mean")),
    "as_index=False": lambda df: df.groupby("k", as_index=False).agg(s=("x", "sum")),
    "unsorted max": lambda df: df.groupby("k", sort=False).y.max(),
    "median": lambda df: df.groupby("k").x.median(),
    "first": lambda df: df.groupby("k").agg(f=("x", "first"), n=("y", "size")),
}


@pytest.mark.parametrize("chunk_size", [300, 45, (100, 0, 120, 80), (10, 290), 1])
@pytest.mark.parametrize("name", sorted(SORTED_CALLS))
def test_frames_in_key_order_group_each_partition(name, chunk_size, monkeypatch):
    monkeypatch.setattr(agg_module, "SINGLE_ROWS", -1)
    df = md.DataFrame(SORTED, chunk_size=chunk_size)
    assert_eq(SORTED_CALLS[name](df), SORTED_CALLS[name](SORTED))
    shuffled = SORTED.sample(frac=1, random_state=1)  # no order: the usual plans
    assert_eq(SORTED_CALLS[name](md.DataFrame(shuffled, chunk_size=chunk_size)), SORTED_CALLS[name](shuffled))


def test_key_order_is_used_and_boundary_keys_join_one_partition(monkeypatch):
    monkeypatch.setattr(agg_module, "SINGLE_ROWS", -1)
    ops = _chunk_ops(SORTED_CALLS["named"](md.DataFrame(SORTED, chunk_size=45)))
    assert {"GroupCall", "ShareBoundary"} <= ops and not ops & {"KeySplit", "GroupPartial"}
    ranges = [(0, 5), None, (5, 9), (10, 12)]
    assert agg_module.ordered_ranges(ranges)
    assert not agg_module.ordered_ranges([(0, 5), (4, 9)])
    assert not agg_module.ordered_ranges([(0, 5), (5, 5), (5, 9)])  # one key over three partitions
