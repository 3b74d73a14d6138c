"""``to_datetime``, ``get_dummies``, ``cut``/``qcut``, ``pivot_table``, ``melt``, ``date_range`` against pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, partitionings, lazy

import mars.dataframe as md
import mars.tensor as mt

N = 24
PARTS = partitionings(N) + [(1, 1, 0, 0, 1, 21)]
CLOSE = {"check_exact": False, "rtol": 1e-9}


def ran(result):
    """``result`` run first: outputs shaped by the values get their metadata when they run."""
    return result.execute()


def sales(n: int = N) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    v = rng.normal(100, 30, n)
    v[[3, 17]] = np.nan
    return pd.DataFrame({
        "region": rng.choice(["north", "south", "east", None], n),
        "kind": rng.choice(["a", "b"], n),
        "year": rng.integers(2019, 2022, n),
        "v": v,
        "units": rng.integers(0, 50, n),
        "cat": pd.Categorical(rng.choice(["lo", "hi"], n), categories=["lo", "mid", "hi"]),
    })


# ----------------------------------------------------------------- to_datetime
@pytest.mark.parametrize("cs", PARTS)
def test_to_datetime_strings(cs):
    raw = pd.Series([f"2020-01-0{k % 9 + 1}" if k % 7 else None for k in range(N)], name="d")
    raw[5] = "NaT"
    assert_eq(ran(md.to_datetime(lazy(raw, cs))), pd.to_datetime(raw))
    times = raw.where(raw.isna() | (raw == "NaT"), raw + " 10:03")
    assert_eq(ran(md.to_datetime(lazy(times, cs), format="%Y-%m-%d %H:%M")), pd.to_datetime(times, format="%Y-%m-%d %H:%M"))
    assert_eq(ran(md.to_datetime(lazy(raw, cs), utc=True)), pd.to_datetime(raw, utc=True))
    bad = raw.copy()
    bad[N - 1] = "not a date"
    assert_eq(ran(md.to_datetime(lazy(bad, cs), errors="coerce")), pd.to_datetime(bad, errors="coerce"))


def test_to_datetime_guesses_the_format_from_the_first_value_of_the_whole():
    """pandas reads every value with the format of the first; partitions must not guess their own."""
    raw = pd.Series(["01/02/2020", "03/04/2020", "13/02/2020"])
    with pytest.raises(ValueError) as want:
        pd.to_datetime(raw)
    for cs in [1, (0, 2, 1), 3]:
        with pytest.raises(ValueError) as got:
            md.to_datetime(md.Series(raw, chunk_size=cs)).execute()
        assert str(got.value) == str(want.value)
    fine = pd.Series(["13/02/2020", "01/02/2020"])
    assert_eq(ran(md.to_datetime(md.Series(fine, chunk_size=1), dayfirst=True)), pd.to_datetime(fine, dayfirst=True))


def test_to_datetime_resolution_follows_the_values():
    raw = pd.Series(["2020-01-01 00:00:00.000000000", "2020-01-01 00:00:00.000000001"])
    result = ran(md.to_datetime(md.Series(raw, chunk_size=1)))
    assert_eq(result, pd.to_datetime(raw))
    assert result.meta.dtype == np.dtype("M8[ns]")


def test_to_datetime_other_inputs():
    nums = pd.Series([1, 2, None, 40000], name="n")
    for cs in [4, 1, (0, 3, 1)]:
        assert_eq(ran(md.to_datetime(lazy(nums, cs), unit="s")), pd.to_datetime(nums, unit="s"))
        assert_eq(ran(md.to_datetime(lazy(nums, cs), unit="D", origin="2000-01-01")),
                  pd.to_datetime(nums, unit="D", origin="2000-01-01"))
        parts = pd.DataFrame({"year": [2020, 2021, 2022, 2023], "month": [1, 2, 3, 4], "day": [5, 6, 7, 8]})
        assert_eq(ran(md.to_datetime(lazy(parts, cs))), pd.to_datetime(parts))
        idx = pd.Index(["2020-01-01", "2021-06-30", None, "2022-02-02"], name="i")
        assert_eq(ran(md.to_datetime(md.Index(idx, chunk_size=cs))), pd.to_datetime(idx))
    assert_eq(ran(md.to_datetime(["2020-01-01", "2020-02-01"])), pd.to_datetime(["2020-01-01", "2020-02-01"]))
    assert_eq(ran(md.to_datetime(nums)), pd.to_datetime(nums))
    assert md.to_datetime("2020-03-04") == pd.to_datetime("2020-03-04")
    assert_eq(ran(md.to_datetime(mt.tensor(np.array([1, 2]) * 10**9))), pd.to_datetime(np.array([1, 2]) * 10**9))
    with pytest.raises(TypeError) as want:
        pd.to_datetime(nums, unit="qq")
    with pytest.raises(TypeError) as got:
        md.to_datetime(lazy(nums, 2), unit="qq")
    assert str(got.value) == str(want.value)


# ----------------------------------------------------------------- get_dummies
@pytest.mark.parametrize("cs", PARTS)
def test_get_dummies(cs):
    pdf = sales()
    df = lazy(pdf, cs)
    assert_eq(ran(md.get_dummies(df)), pd.get_dummies(pdf))
    for kw in [{"columns": ["region", "year"]}, {"columns": ["region"], "dummy_na": True, "drop_first": True},
               {"prefix": {"region": "r", "kind": "k"}, "prefix_sep": ":", "columns": ["region", "kind"], "dtype": float},
               {"columns": ["year", "cat"], "dummy_na": True}]:
        assert_eq(ran(md.get_dummies(df, **kw)), pd.get_dummies(pdf, **kw))
    ps = pdf["region"]
    assert_eq(ran(md.get_dummies(lazy(ps, cs), prefix="r", drop_first=True)), pd.get_dummies(ps, prefix="r", drop_first=True))


def test_get_dummies_columns_known_before_running_only_for_categoricals():
    pdf = sales()
    df = md.DataFrame(pdf, chunk_size=5)
    by_category = md.get_dummies(df[["cat", "units"]])
    assert_eq(by_category, pd.get_dummies(pdf[["cat", "units"]]))  # metadata checked before running
    by_value = md.get_dummies(df[["kind", "units"]])
    assert list(by_value.meta.columns) == ["units"]
    assert_eq(ran(by_value), pd.get_dummies(pdf[["kind", "units"]]))
    assert list(by_value.meta.columns) == ["units", "kind_a", "kind_b"]


def test_get_dummies_errors():
    pdf = sales()
    df = md.DataFrame(pdf, chunk_size=5)
    with pytest.raises(KeyError):
        md.get_dummies(df, columns=["nope"])
    with pytest.raises(ValueError) as want:
        pd.get_dummies(pdf, prefix=["x"])
    with pytest.raises(ValueError) as got:
        md.get_dummies(df, prefix=["x"])
    assert str(got.value) == str(want.value)
    with pytest.raises(TypeError, match="list-like"):
        md.get_dummies(df, columns="region")


# ----------------------------------------------------------------- cut / qcut
@pytest.mark.parametrize("cs", PARTS)
def test_cut(cs):
    x = sales()["v"]
    s = lazy(x, cs)
    for kw in [{"bins": 4}, {"bins": 3, "right": False}, {"bins": [0, 80, 100, 200]}, {"bins": 4, "labels": False},
               {"bins": [50, 100, 150], "labels": False}, {"bins": 3, "labels": ["lo", "mid", "hi"]},
               {"bins": [0, 100, 200], "include_lowest": True, "precision": 1}, {"bins": pd.IntervalIndex.from_breaks([0, 90, 300])}]:
        assert_eq(ran(md.cut(s, **kw)), pd.cut(x, **kw))
    result, bins = md.cut(s, 5, retbins=True)
    expected, expected_bins = pd.cut(x, 5, retbins=True)
    assert_eq(ran(result), expected)
    np.testing.assert_array_equal(bins.execute().fetch(), expected_bins)
    result, bins = md.cut(s, [0, 100, 300], retbins=True)
    np.testing.assert_array_equal(bins, pd.cut(x, [0, 100, 300], retbins=True)[1])


def test_cut_categories_known_up_front_with_edges():
    x = sales()["v"]
    s = md.Series(x, chunk_size=7)
    assert_eq(md.cut(s, [0, 100, 200]), pd.cut(x, [0, 100, 200]))


def test_cut_datetimes_and_errors():
    t = pd.Series(pd.date_range("2020-01-01", periods=10, freq="17h"))
    for cs in [10, 3, (0, 1, 9)]:
        assert_eq(ran(md.cut(lazy(t, cs), 3)), pd.cut(t, 3))
    for values in [[np.nan, np.nan], []]:
        with pytest.raises(ValueError) as want:
            pd.cut(pd.Series(values, dtype=float), 3)
        with pytest.raises(ValueError) as got:
            md.cut(md.Series(pd.Series(values, dtype=float), chunk_size=1), 3).execute()
        assert str(got.value) == str(want.value)
    with pytest.raises(ValueError, match="`bins` should be a positive integer"):
        md.cut(md.Series([1.0, 2.0]), 0)
    with pytest.raises(ValueError, match="bins must increase monotonically"):
        md.cut(md.Series([1.0, 2.0]), [3, 1])
    with pytest.raises(ValueError, match="Input array must be 1 dimensional"):
        md.cut(md.DataFrame({"a": [1.0, 2.0]}), 2)
    assert list(md.cut(np.array([1, 5, 9]), 2).codes) == list(pd.cut(np.array([1, 5, 9]), 2).codes)


@pytest.mark.parametrize("cs", PARTS)
def test_qcut(cs):
    x = sales()["v"]
    s = lazy(x, cs)
    for kw in [{"q": 4}, {"q": [0, 0.1, 0.5, 1]}, {"q": 3, "labels": False}, {"q": 2, "labels": ["low", "high"]},
               {"q": 5, "precision": 1}]:
        assert_eq(ran(md.qcut(s, **kw)), pd.qcut(x, **kw))
    _result, bins = md.qcut(s, 3, retbins=True)
    np.testing.assert_allclose(bins.execute().fetch(), pd.qcut(x, 3, retbins=True)[1])
    ties = pd.Series([1, 1, 1, 1, 2, 3] * 3)
    assert_eq(ran(md.qcut(lazy(ties, 4), 4, duplicates="drop")), pd.qcut(ties, 4, duplicates="drop"))
    with pytest.raises(ValueError, match="Bin edges must be unique"):
        md.qcut(lazy(ties, 4), 4).execute()


# ----------------------------------------------------------------- pivot_table
PIVOTS = [
    {"values": "v", "index": "region", "columns": "kind", "aggfunc": "sum"},
    {"values": "v", "index": "region", "columns": "kind"},
    {"values": ["v", "units"], "index": ["region", "year"], "columns": "kind", "aggfunc": "mean"},
    {"values": "units", "index": "region", "columns": ["kind", "year"], "aggfunc": "count", "fill_value": 0},
    {"values": "v", "index": "kind", "columns": "year", "aggfunc": ["min", "max", "std", "var"]},
    {"values": "v", "index": "region", "columns": "year", "aggfunc": ["first", "last", "prod"]},
    {"values": "units", "index": "region", "columns": "kind", "aggfunc": "median"},
    {"values": "units", "index": "region", "columns": "kind", "aggfunc": len, "fill_value": 0},
    {"values": "units", "index": "region", "columns": "kind", "aggfunc": lambda u: u.max() - u.min()},
    {"index": "region", "columns": "kind", "values": ["v", "units"], "aggfunc": {"v": "sum", "units": "max"}},
    {"index": "region", "columns": "kind", "values": ["v", "units"], "aggfunc": {"v": ["sum", "mean"], "units": "max"}},
    {"values": "v", "index": "region", "columns": "kind", "aggfunc": "sum", "margins": True},
    {"values": "v", "index": "region", "columns": "kind", "aggfunc": "sum", "dropna": False},
    {"values": "v", "index": ["kind", "region"], "columns": "year", "aggfunc": "sum", "sort": False},
    {"values": "units", "index": "region", "columns": "kind", "aggfunc": "median", "sort": False},
    {"values": "v", "columns": "kind", "aggfunc": "sum"},
    {"values": "v", "index": "region", "aggfunc": "mean"},
    {"values": ["v"], "index": "region", "columns": ["kind"], "aggfunc": "sum"},
    {"values": "units", "index": "cat", "columns": "kind", "aggfunc": "sum"},
    {"values": "units", "index": "cat", "columns": "kind", "aggfunc": "sum", "observed": False},
    {"values": "v", "index": pd.Grouper(key="year"), "columns": "kind", "aggfunc": "sum"},
]


@pytest.mark.parametrize("cs", PARTS)
def test_pivot_table(cs):
    pdf = sales()
    df = lazy(pdf, cs)
    for kw in PIVOTS:
        assert_eq(ran(md.pivot_table(df, **kw)), pd.pivot_table(pdf, **kw), **CLOSE)
    assert_eq(ran(df.pivot_table(values="v", index="kind", aggfunc="max")),
              pdf.pivot_table(values="v", index="kind", aggfunc="max"))


def test_pivot_table_columns_known_once_run_and_errors():
    pdf = sales()
    df = md.DataFrame(pdf, chunk_size=6)
    table = md.pivot_table(df, values="v", index="region", columns="kind", aggfunc="sum")
    ran(table)
    assert list(table.meta.columns) == ["a", "b"]
    assert table.shape == pd.pivot_table(pdf, values="v", index="region", columns="kind", aggfunc="sum").shape
    with pytest.raises(KeyError):
        md.pivot_table(df, values="nope", index="region")
    with pytest.raises(KeyError):
        md.pivot_table(df, values="v", index="nope")
    with pytest.raises(TypeError) as want:
        pd.pivot_table(pdf, index="region", columns="kind", aggfunc="mean")
    with pytest.raises(TypeError) as got:
        md.pivot_table(df, index="region", columns="kind", aggfunc="mean")
    assert str(got.value) == str(want.value)


# ----------------------------------------------------------------- melt, date_range
@pytest.mark.parametrize("cs", PARTS)
def test_melt(cs):
    pdf = sales()[["region", "kind", "v", "units"]]
    df = lazy(pdf, cs)
    for kw in [{"id_vars": "region"}, {"id_vars": ["region"], "value_vars": ["v", "units"]},
               {"value_vars": "units", "ignore_index": False}, {"id_vars": ["region", "kind"], "var_name": "what", "value_name": "x"},
               {}]:
        assert_eq(md.melt(df, **kw), pd.melt(pdf, **kw))
    assert_eq(df.melt(id_vars="kind", value_vars=["v"]), pdf.melt(id_vars="kind", value_vars=["v"]))
    with pytest.raises(KeyError):
        md.melt(df, id_vars="nope")


def test_date_range():
    expected = pd.date_range("2020-01-01", periods=10, freq="8h", name="when")
    assert_eq(md.date_range("2020-01-01", periods=10, freq="8h", name="when", chunk_size=3), expected)
    assert_eq(md.date_range("2020-01-01", "2020-03-01", freq="MS", tz="UTC"),
              pd.date_range("2020-01-01", "2020-03-01", freq="MS", tz="UTC"))
