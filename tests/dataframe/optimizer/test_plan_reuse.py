"""Work a plan does once for a held table, not once per query: the metas of its column selections."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mars.dataframe as md
from mars.dataframe.indexing import SelectColumns
from mars.dataframe.optimizer import projection
from mars.dataframe.optimizer.graph import topo_order
from mars.dataframe.optimizer.projection import project_columns
from tests.dataframe.df_testing import assert_eq, partitionings

N = 24


def _orders(n: int = N) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    return pd.DataFrame({"ok": np.arange(n), "ck": rng.integers(0, 4, n), "price": rng.uniform(0, 50, n),
                         "note": rng.choice(["a", "b"], n), "day": rng.integers(0, 6, n)})


def _selections(expr) -> dict:
    [out] = project_columns([expr.data])
    return {tuple(n.op.columns): n for n in topo_order([out])
            if isinstance(n.op, SelectColumns) and isinstance(n.op.columns, list)}


def test_a_held_table_selection_meta_is_taken_once_across_queries():
    orders = _orders()
    o = md.DataFrame(orders, chunk_size=7).execute()
    first = _selections(o[o.day > 2].groupby("ck").agg(total=("price", "sum")))
    again = _selections(o[o.day > 2].groupby("ck").agg(total=("price", "sum")))
    other = _selections(o[o.day > 1].groupby("ck").agg(n=("ok", "count")))
    key = ("ck", "price")
    assert first[key] is not again[key]  # a new node per plan...
    assert first[key].meta is again[key].meta  # ...with the meta worked out once
    assert list(first[key].meta.columns) == list(key)
    assert first[key].meta.dtypes.tolist() == orders[list(key)].dtypes.tolist()
    assert list(other) == [("ok", "ck")]
    assert list(other[("ok", "ck")].meta.columns) == ["ok", "ck"]


def test_a_new_meta_object_for_the_same_table_is_selected_afresh():
    orders = _orders()
    a = md.DataFrame(orders, chunk_size=7).execute()
    b = md.DataFrame(orders.rename(columns={"price": "cost"}), chunk_size=7).execute()
    sa = _selections(a[a.day > 2][["price"]])
    sb = _selections(b[b.day > 2][["cost"]])
    assert list(sa[("price",)].meta.columns) == ["price"]
    assert list(sb[("cost",)].meta.columns) == ["cost"]


def test_the_cache_of_selection_metas_is_bounded(monkeypatch):
    monkeypatch.setattr(projection, "_SELECTED", {})
    monkeypatch.setattr(projection, "_SELECTED_SIZE", 2)
    meta = _orders().iloc[:0]
    for kept in (["ok"], ["ck"], ["price"], ["ok", "ck"]):
        assert list(projection._selected_meta(meta, kept).columns) == kept
    assert len(projection._SELECTED) == 2


@pytest.mark.parametrize("cs", partitionings(N))
def test_repeated_queries_on_held_tables_equal_pandas(cs):
    orders = _orders()
    o = md.DataFrame(orders, chunk_size=cs).execute()
    for _ in range(2):
        got = o[o.note == "a"].groupby("ck").agg(total=("price", "sum")).reset_index()
        assert_eq(got, orders[orders.note == "a"].groupby("ck").agg(total=("price", "sum")).reset_index())
        got = o[o.day > 1][["ok", "price"]]
        assert_eq(got, orders[orders.day > 1][["ok", "price"]])
