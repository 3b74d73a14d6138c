"""An inner join with a filtered side in one partition cuts the rows it would drop out of the join before it
(``merge_semi.cut_ahead``): TPC-H Q2's partsupp, joined with its suppliers and then with 800 parts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, partitionings

import mars.dataframe as md
from mars.dataframe.merge_semi import SemiCut

N = 60


def _tables(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    a = pd.DataFrame({"ak": rng.integers(0, 40, N), "bk": rng.integers(0, 8, N), "v": rng.random(N),
                      "s": pd.Series(rng.choice(["p", "q", None], N), dtype="str")},
                     index=pd.Index(rng.permutation(N) + 500, name="aidx"))
    b = pd.DataFrame({"bk": np.arange(8), "w": rng.random(8), "wk": rng.integers(0, 6, 8), "name": list("abcdefgh")})
    c = pd.DataFrame({"ck": np.arange(40), "size": rng.integers(0, 5, 40), "label": [f"c{i}" for i in range(40)]})
    return a, b, c


@pytest.fixture
def cuts(monkeypatch) -> list:
    """The rows each SemiCut was given."""
    seen: list = []
    real = SemiCut.execute
    monkeypatch.setattr(SemiCut, "execute", lambda self, part, keys: seen.append(len(part)) or real(self, part, keys))
    return seen


def _q2_shape(a, b, c, how="inner"):
    c = c[c["size"] == 3]
    return a.merge(b, on="bk").merge(c, left_on="ak", right_on="ck", how=how)


@pytest.mark.parametrize("chunk_size", partitionings(N))
def test_the_filtered_side_cuts_the_rows_of_the_join_before_and_equals_pandas(chunk_size, cuts):
    a, b, c = _tables()
    got = _q2_shape(md.DataFrame(a, chunk_size=chunk_size), md.DataFrame(b), md.DataFrame(c)).execute().fetch()
    assert_eq(got, _q2_shape(a, b, c))
    several = len(md.DataFrame(a, chunk_size=chunk_size).execute().data.chunks) > 1
    assert bool(cuts) is several  # one partition: merged whole, nothing broadcast


@pytest.mark.parametrize("chunk_size", [7, (1, N - 3, 2, 0)])
def test_a_key_from_the_broadcast_side_cuts_that_side(chunk_size, cuts):
    """(Keys named apart: a merge of pandas' own, whose sides are frames; with one shared key name the
    broadcast side is a key table, which is left whole.)"""
    a, b, c = _tables(1)
    b, c = b.rename(columns={"bk": "bk2"}), c.rename(columns={"ck": "wkey"})

    def query(a, b, c):
        return a.merge(b, left_on="bk", right_on="bk2").merge(c[c["size"] < 2], left_on="wk", right_on="wkey")

    got = query(md.DataFrame(a, chunk_size=chunk_size), md.DataFrame(b), md.DataFrame(c)).execute().fetch()
    assert_eq(got, query(a, b, c))
    assert cuts and all(n == len(b) for n in cuts)  # the suppliers' side, once per left partition


@pytest.mark.parametrize("chunk_size", [7, (1, N - 3, 2, 0)])
def test_no_cut_for_an_unfiltered_side_or_a_left_join(chunk_size, cuts):
    a, b, c = _tables(2)
    got = md.DataFrame(a, chunk_size=chunk_size).merge(md.DataFrame(b), on="bk").merge(
        md.DataFrame(c), left_on="ak", right_on="ck").execute().fetch()
    assert_eq(got, a.merge(b, on="bk").merge(c, left_on="ak", right_on="ck"))
    got = _q2_shape(md.DataFrame(a, chunk_size=chunk_size), md.DataFrame(b), md.DataFrame(c), how="left")
    assert_eq(got.execute().fetch(), _q2_shape(a, b, c, how="left"))
    assert cuts == []


def test_string_keys_are_not_cut(cuts):
    a, b, c = _tables(3)
    a, c = a.assign(ak=a.ak.astype(str)), c.assign(ck=c.ck.astype(str))
    got = _q2_shape(md.DataFrame(a, chunk_size=7), md.DataFrame(b), md.DataFrame(c)).execute().fetch()
    assert_eq(got, _q2_shape(a, b, c))
    assert cuts == []
