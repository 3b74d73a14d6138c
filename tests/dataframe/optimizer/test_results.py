"""Optimized expressions give pandas' results, on several partitionings, with the optimizer on and off."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mars
import mars.dataframe as md
from tests.dataframe.df_testing import assert_eq, partitionings

N = 40


def lineitem(n: int = N) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    return pd.DataFrame({
        "q": rng.integers(1, 51, n).astype("float64"),
        "price": rng.uniform(900, 1000, n),
        "disc": rng.integers(0, 11, n) / 100,
        "ship": pd.Timestamp("1994-01-01") + pd.to_timedelta(rng.integers(-400, 800, n), unit="D"),
        "flag": rng.choice(["A", "N", "R"], n),
        "k": rng.integers(0, 6, n),
    }, index=pd.RangeIndex(100, 100 + n))


def q6(df):
    m = ((df.ship >= pd.Timestamp("1994-01-01")) & (df.ship < pd.Timestamp("1995-01-01"))
         & (df.disc >= 0.05) & (df.disc <= 0.07) & (df.q < 24))
    f = df[m]
    return (f.price * f.disc).sum()


@pytest.fixture(params=[True, False], ids=["optimized", "plain"])
def optimize(request):
    with mars.option_context({"optimize": request.param}):
        yield request.param


@pytest.mark.parametrize("cs", partitionings(N))
def test_q6(cs, optimize):
    pdf = lineitem()
    assert_eq(q6(md.DataFrame(pdf, chunk_size=cs)), q6(pdf), rtol=1e-12)


@pytest.mark.parametrize("cs", partitionings(N))
def test_filtered_frame_and_mixed_steps(cs, optimize):
    pdf = lineitem()
    df = md.DataFrame(pdf, chunk_size=cs)

    def query(d):
        f = d[(d.q > 10) | (d.flag == "N")]
        return (f.price - 1 / (f.disc + 0.5)).where(f.k > 1, -1.0)

    assert_eq(query(df), query(pdf))
    assert_eq(df[df.q > 25][["price", "k"]], pdf[pdf.q > 25][["price", "k"]])
    assert_eq(df[df.k > 9], pdf[pdf.k > 9])  # every partition empty
    assert_eq((df.q * 2 > df.k).sum(), (pdf.q * 2 > pdf.k).sum())


def test_a_held_frame_and_its_intermediates(optimize):
    pdf = lineitem()
    df = md.DataFrame(pdf, chunk_size=7).execute()
    num = df[["q", "price"]]
    expr = num.price * 2
    assert_eq(expr, pdf.price * 2)
    assert_eq(q6(df), q6(pdf), rtol=1e-12)
    assert_eq(num, pdf[["q", "price"]])


@pytest.mark.parametrize("cs", partitionings(N))
def test_projection_through_merge(cs, optimize):
    left = lineitem()
    right = pd.DataFrame({"k": np.arange(6), "price": np.arange(6) * 1.5, "name": list("abcdef")})
    lhs, rhs = md.DataFrame(left, chunk_size=cs), md.DataFrame(right, chunk_size=2)

    def query(a, b):
        m = a.merge(b, on="k")
        return m[m.q > 20][["price_x", "name"]]

    assert_eq(query(lhs, rhs), query(left, right))


@pytest.mark.parametrize("cs", partitionings(N))
@pytest.mark.parametrize("ignore_index", [False, True])
def test_sort_head_is_a_stable_top_n(cs, ignore_index, optimize):
    pdf = lineitem()
    pdf.loc[pdf.index[::5], "q"] = np.nan
    df = md.DataFrame(pdf, chunk_size=cs)
    for n in (0, 3, 12, 100):
        want = pdf.sort_values(["k", "q"], ascending=[False, True], kind="stable", ignore_index=ignore_index).head(n)
        got = df.sort_values(["k", "q"], ascending=[False, True], ignore_index=ignore_index).head(n)
        assert_eq(got, want)
    assert_eq(df.k.sort_values().head(4), pdf.k.sort_values(kind="stable").head(4))


@pytest.mark.parametrize("rows_per_group", [7, 40])
def test_parquet_pushdown_keeps_the_index(tmp_path, rows_per_group, optimize):
    pdf = lineitem().sort_values("ship").reset_index(drop=True)
    path = tmp_path / "l.parquet"
    pdf.to_parquet(path, row_group_size=rows_per_group)
    full = pd.read_parquet(path)
    df = md.read_parquet(path, chunk_bytes=1)
    assert_eq(q6(df), q6(full), rtol=1e-12)
    got = df[(df.ship >= pd.Timestamp("1994-06-01")) & (df.q > 5)][["price", "ship"]]
    assert_eq(got, full[(full.ship >= pd.Timestamp("1994-06-01")) & (full.q > 5)][["price", "ship"]])
    assert_eq(df[df.q > 1000], full[full.q > 1000])  # no row group kept


def test_nullable_and_string_columns_fall_back_to_pandas(optimize):
    pdf = pd.DataFrame({"a": pd.array([1, None, 3, 4, None, 6], dtype="Int64"), "s": ["x", None, "z", "x", "y", "x"]})
    df = md.DataFrame(pdf, chunk_size=4)
    assert_eq(df[(df.a > 2).fillna(False)].s.str.upper(), pdf[(pdf.a > 2).fillna(False)].s.str.upper())
    assert_eq((df.a * 2 + 1)[df.s == "x"], (pdf.a * 2 + 1)[pdf.s == "x"])
