"""``groupby``: aggregations, transforms and apply against pandas, across partitionings and both strategies.

Every aggregation that splits into partials runs twice: as a tree reduction
and as a shuffle (the strategy is forced through the thresholds the tile-time
choice reads), so both paths are compared with pandas.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, partitionings, same_error

import mars.dataframe as md
import mars.dataframe.groupby.agg as agg_module
import mars.dataframe.groupby.shuffle as shuffle_module
from mars.dataframe.groupby.agg import GroupByAgg
from mars.dataframe.groupby.plan import Out, tree_plan
from mars.dataframe.map import map_partitions

N = 23
PARTS = partitionings(N)


def frame(n: int = N) -> pd.DataFrame:
    """Int, string and float-with-NaN keys; float (with NaN), int, bool and string values."""
    rng = np.random.default_rng(7)
    return pd.DataFrame({
        "ki": rng.integers(0, 5, n),
        "ks": rng.choice(["a", "b", "c", "d"], n),
        "kf": np.where(np.arange(n) % 7 == 3, np.nan, rng.integers(0, 3, n) * 1.5),
        "x": np.where(np.arange(n) % 5 == 2, np.nan, rng.random(n)),
        "y": rng.integers(-10, 10, n),
        "b": rng.random(n) > 0.5,
        "s": rng.choice(["p", "q", "r"], n),
    })


PDF = frame()


def _force(name: str, monkeypatch) -> str:
    """Force the tile-time choice: a tree reduction (partitions grouped whole or in blocks), or a shuffle."""
    monkeypatch.setattr(agg_module, "SINGLE_ROWS", -1)  # small test frames would be grouped in one chunk
    if name in ("tree", "blocks"):
        monkeypatch.setattr(agg_module, "TREE_RATIO", float("inf"))
        monkeypatch.setattr(agg_module, "TREE_ROWS", float("inf"))
        if name == "blocks":
            monkeypatch.setattr(agg_module, "BLOCK_ROWS", 2)
            monkeypatch.setattr(agg_module, "BLOCK_GROUPS", float("inf"))
            monkeypatch.setattr(shuffle_module, "BLOCK_ROWS", 2)
    else:
        monkeypatch.setattr(agg_module, "TREE_RATIO", -1.0)
        monkeypatch.setattr(agg_module, "TREE_ROWS", -1.0)
    return name


@pytest.fixture(params=["tree", "shuffle"])
def strategy(request, monkeypatch):
    """A tree (few groups: partials, scans, lookups) or a shuffle (many groups), forced."""
    return _force(request.param, monkeypatch)


@pytest.fixture(params=["tree", "blocks", "shuffle"])
def agg_strategy(request, monkeypatch):
    """As ``strategy``, and a tree whose partitions are grouped a few rows at a time."""
    return _force(request.param, monkeypatch)


def lazy(pdf: pd.DataFrame, chunk_size) -> md.DataFrame:
    return md.DataFrame(pdf, chunk_size=chunk_size)


def mod(s, k):
    """``s % k`` for a pandas or a lazy Series (built without the arithmetic module)."""
    return map_partitions(lambda v: v % k, s) if isinstance(s, md.Series) else s % k


def check_all(build, pdf: pd.DataFrame = PDF, unordered: bool = False, **kw) -> None:
    """``build(df)`` equals ``build(pdf)`` for every partitioning (``unordered``: up to row order)."""
    expected = build(pdf)
    for chunk_size in partitionings(len(pdf)):
        result = build(lazy(pdf, chunk_size))
        if unordered:
            value = result.execute().fetch()
            assert_eq(value.sort_index(), expected.sort_index(), **kw)
            assert_eq(result, result.execute().fetch(), **kw)  # metadata matches the value
        else:
            assert_eq(result, expected, **kw)


# ----------------------------------------------------------------- aggregations by name
AGG_NAMES = ["sum", "mean", "count", "min", "max", "std", "var", "prod", "first", "last", "median", "nunique", "sem"]


@pytest.mark.parametrize("func", AGG_NAMES)
@pytest.mark.parametrize("key", ["ki", "ks", "kf", ["ki", "ks"]])
def test_method_numeric(agg_strategy, func, key):
    cols = ["x", "y", "b"] if func not in ("median", "std", "var", "sem") else ["x", "y"]
    keys = key if isinstance(key, list) else [key]
    check_all(lambda d: getattr(d[keys + cols].groupby(key), func)())


@pytest.mark.parametrize("func", ["sum", "min", "max", "first", "last", "count", "nunique"])
def test_method_strings(agg_strategy, func):
    check_all(lambda d: getattr(d[["ki", "s", "x"]].groupby("ki"), func)())


def test_size(agg_strategy):
    check_all(lambda d: d.groupby("ks").size())
    check_all(lambda d: d.groupby(["ki", "kf"], dropna=False).size())
    check_all(lambda d: d.groupby("ki", as_index=False).size())
    check_all(lambda d: d.groupby("ki")["x"].size())


@pytest.mark.parametrize("kwargs", [{"ddof": 0}, {"ddof": 2}])
def test_var_std_ddof(agg_strategy, kwargs):
    check_all(lambda d: d.groupby("ki")[["x", "y"]].var(**kwargs))
    check_all(lambda d: d.groupby("ks").x.std(**kwargs))


def test_min_count_and_numeric_only(agg_strategy):
    # pandas' dtype depends on the data here (ints become floats when a group falls short): values only
    check_all(lambda d: d.groupby("ks")[["x", "y"]].sum(min_count=5), check_meta=False)
    check_all(lambda d: d.groupby("ki").mean(numeric_only=True))
    check_all(lambda d: d.groupby("ki").prod(numeric_only=True, min_count=2))


def test_variance_is_numerically_sound(agg_strategy):
    # a large offset makes a sum-of-squares variance cancel to garbage; merged deviations do not
    rng = np.random.default_rng(3)
    pdf = pd.DataFrame({"k": rng.integers(0, 3, 40), "v": 1e9 + rng.random(40)})
    check_all(lambda d: d.groupby("k").v.var(), pdf, rtol=1e-6)


def test_mean_and_sum_large_values(strategy):
    pdf = pd.DataFrame({"k": [1, 2, 1, 2, 1, 2], "v": [2**53, 1, 2**53, 3, -2**53, 5]})
    check_all(lambda d: d.groupby("k").agg(["sum", "mean", "min", "max"]), pdf)


# ----------------------------------------------------------------- agg forms
AGG_SPECS = [
    "sum",
    ["sum", "mean"],
    {"x": "sum", "y": "mean"},
    {"x": ["min", "max"], "y": "count"},
    {"x": ["median", "sum"]},
    {"y": "nunique", "x": "std"},
]


@pytest.mark.parametrize("spec", AGG_SPECS, ids=str)
def test_agg_specs(agg_strategy, spec):
    check_all(lambda d: d[["ki", "x", "y"]].groupby("ki").agg(spec))
    check_all(lambda d: d[["ks", "kf", "x", "y"]].groupby(["ks", "kf"]).agg(spec))


def test_named_aggregation(agg_strategy):
    check_all(lambda d: d.groupby("ks").agg(total=("x", "sum"), n=("y", "count"), spread=("y", "std")))
    check_all(lambda d: d.groupby("ks").agg(total=pd.NamedAgg("x", "sum"), mid=pd.NamedAgg("y", "median")))
    check_all(lambda d: d.groupby("ks").y.agg(lo="min", hi="max"))


def test_agg_callables(strategy):
    check_all(lambda d: d.groupby("ki").x.agg(lambda s: s.max() - s.min()))
    check_all(lambda d: d.groupby("ki").agg({"x": ["sum", lambda s: s.count() * 2], "y": "mean"}))
    check_all(lambda d: d.groupby("ki")[["x", "y"]].agg(np.ptp))


def test_series_groupby_agg(strategy):
    check_all(lambda d: d.groupby("ks")["x"].agg(["sum", "mean", "count"]))
    check_all(lambda d: d.groupby("ks").y.mean())
    check_all(lambda d: d.groupby(["ks", "ki"])["y"].sum())


def test_column_selection(strategy):
    check_all(lambda d: d.groupby("ki")[["x", "y"]].sum())
    check_all(lambda d: d.groupby("ki")[["ki", "y"]].max())


# ----------------------------------------------------------------- layout options
def test_as_index_false(agg_strategy):
    check_all(lambda d: d[["ki", "ks", "x", "y"]].groupby("ki", as_index=False).sum())
    check_all(lambda d: d.groupby(["ks", "ki"], as_index=False).agg({"x": "mean", "y": ["min", "max"]}))
    check_all(lambda d: d.groupby("ks", as_index=False).x.mean())
    check_all(lambda d: d.groupby("ks", as_index=False).agg(t=("y", "sum")))
    check_all(lambda d: d.groupby("ks", as_index=False)[["x"]].median())


def test_sort_false_tree_keeps_first_appearance(agg_strategy):
    build = lambda d: d.groupby("ks", sort=False).agg({"x": "sum", "y": "mean"})
    if agg_strategy != "shuffle":
        check_all(build)
        check_all(lambda d: d.groupby(["ki", "ks"], sort=False).y.max())
    else:
        # a hash shuffle gives groups in partition order; pandas' is first appearance
        check_all(build, unordered=True)


def test_sort_false_shuffled_calls(strategy):
    check_all(lambda d: d.groupby("ki", sort=False).x.median(), unordered=True)
    check_all(lambda d: d.groupby("ks", sort=False, as_index=False).y.nunique().set_index("ks"), unordered=True)


def test_dropna_false(agg_strategy):
    check_all(lambda d: d.groupby("kf", dropna=False)[["x", "y"]].sum())
    check_all(lambda d: d.groupby(["kf", "ks"], dropna=False).y.agg(["min", "median"]))
    check_all(lambda d: d.groupby("kf", dropna=False, sort=False).y.sum(), unordered=True)


def test_all_keys_nan_and_empty_groups(strategy):
    pdf = pd.DataFrame({"k": [np.nan] * 6, "v": np.arange(6.0)})
    check_all(lambda d: d.groupby("k").v.sum(), pdf, check_index_type=False)
    check_all(lambda d: d.groupby("k", dropna=False).v.sum(), pdf)


def test_signed_zero_and_nan_keys_are_one_group(agg_strategy):
    pdf = pd.DataFrame({"k": [0.0, -0.0, 1.0, -0.0, 0.0, 1.0, np.nan, 2.0], "v": np.arange(8)})
    check_all(lambda d: d.groupby("k").v.sum(), pdf)
    check_all(lambda d: d.groupby("k", dropna=False).v.median(), pdf)


def test_many_groups_several_partitions(strategy):
    rng = np.random.default_rng(5)
    pdf = pd.DataFrame({"k": rng.integers(0, 300, 1000), "j": rng.integers(0, 3, 1000), "v": rng.random(1000)})
    for chunk_size in (97, (400, 0, 600)):
        df = lazy(pdf, chunk_size)
        assert_eq(df.groupby("k").agg({"v": ["sum", "mean", "var"]}), pdf.groupby("k").agg({"v": ["sum", "mean", "var"]}))
        assert_eq(df.groupby(["j", "k"]).v.median(), pdf.groupby(["j", "k"]).v.median())
        assert_eq(df.groupby("k", as_index=False).v.max(), pdf.groupby("k", as_index=False).v.max())


# ----------------------------------------------------------------- kinds of keys
def test_by_lazy_series_same_partitions(strategy):
    check_all(lambda d: d.groupby(mod(d["ki"], 2)).y.sum())
    check_all(lambda d: d.groupby([d["ks"], mod(d["ki"], 3)])[["x", "y"]].mean())


def test_by_own_column_series_is_that_column(strategy):
    check_all(lambda d: d[["ki", "x", "y"]].groupby(d["ki"]).sum())
    check_all(lambda d: d[["ki", "x", "y"]].groupby(d["ki"], as_index=False).sum())


def test_by_series_aligned_on_index(strategy):
    key = pd.Series(np.arange(N) % 3, index=np.arange(N)[::-1], name="g")
    check_all(lambda d: d.groupby(key).y.sum())
    for chunk_size in PARTS:
        df = lazy(PDF, chunk_size)
        lazy_key = md.Series(key, chunk_size=5)
        assert_eq(df.groupby(lazy_key)[["x", "y"]].max(), PDF.groupby(key)[["x", "y"]].max())


def test_by_array_and_list(strategy):
    arr = np.arange(N) % 4
    check_all(lambda d: d.groupby(arr).y.sum())
    check_all(lambda d: d.groupby(["ks", arr]).x.mean())
    check_all(lambda d: d.groupby(list(arr % 2)).y.median())


def test_by_level_and_index_names(agg_strategy):
    pdf = PDF.set_index(["ks", "ki"])
    check_all(lambda d: d.groupby(level=0).y.sum(), pdf)
    check_all(lambda d: d.groupby(level="ki")[["x", "y"]].mean(), pdf)
    check_all(lambda d: d.groupby(level=[1, 0]).y.agg(["max", "median"]), pdf)
    check_all(lambda d: d.groupby(["ks", "kf"]).y.sum(), pdf)


def test_by_function_and_mapping(strategy):
    pdf = PDF.set_index(pd.Index(np.arange(N) * 3, name="i"))
    check_all(lambda d: d.groupby(lambda i: i % 4).y.sum(), pdf)
    mapping = {i * 3: i % 3 for i in range(N)}
    check_all(lambda d: d.groupby(mapping)[["x"]].max(), pdf)


def test_series_groupby(strategy):
    s = PDF.set_index("ks")["y"]
    check_all(lambda d: d.groupby(level=0).sum(), s.to_frame())
    for chunk_size in PARTS:
        ls = md.Series(s, chunk_size=chunk_size)
        assert_eq(ls.groupby(level=0).agg(["sum", "median"]), s.groupby(level=0).agg(["sum", "median"]))
        assert_eq(ls.groupby(mod(ls, 3)).count(), s.groupby(s % 3).count())
        assert_eq(ls.groupby(np.arange(N) % 2).mean(), s.groupby(np.arange(N) % 2).mean())


def test_categorical_keys(strategy):
    pdf = PDF.assign(c=pd.Categorical(PDF.ks, categories=["d", "c", "b", "a", "z"]))
    check_all(lambda d: d.groupby("c").y.sum(), pdf)
    check_all(lambda d: d.groupby("c").y.median(), pdf)


def test_datetime_values_and_keys(strategy):
    pdf = pd.DataFrame({"t": pd.date_range("2020-01-01", periods=N, freq="D"), "k": np.arange(N) % 3,
                        "v": np.arange(N)})
    check_all(lambda d: d.groupby("k").t.agg(["min", "max", "first", "count"]), pdf)
    check_all(lambda d: d.groupby("t").v.sum(), pdf.assign(t=pdf.t.dt.month))


# ----------------------------------------------------------------- transform and row-wise methods
@pytest.mark.parametrize("func", ["sum", "mean", "count", "max", "std", "size"])
def test_transform_names(strategy, func):
    check_all(lambda d: d.groupby("ks")[["x", "y"]].transform(func))
    check_all(lambda d: d.groupby("ki").x.transform(func))
    check_all(lambda d: d.groupby(["ki", "ks"]).y.transform(func))


def test_transform_keeps_partitions(strategy):
    for chunk_size in PARTS:
        df = lazy(PDF, chunk_size)
        for t in (df.groupby("ks").y.transform("sum"), df.groupby("ks").y.transform(lambda s: s - s.mean()),
                  df.groupby("ki").cumcount()):
            assert t.partitioning == df.partitioning
            assert_eq(map_partitions(lambda a, b: a + b, df.y, t), PDF.y + t.execute().fetch())


def test_transform_callables(strategy):
    check_all(lambda d: d.groupby("ks")[["x", "y"]].transform(lambda s: s - s.mean()))
    check_all(lambda d: d.groupby("ki").y.transform(lambda s: s.rank()))
    check_all(lambda d: d.groupby("ks")[["x", "y", "ki"]].transform("cumsum"))
    check_all(lambda d: d.groupby("ks").y.transform("median"))


def test_transform_nan_keys(strategy):
    check_all(lambda d: d.groupby("kf").x.transform("sum"))
    check_all(lambda d: d.groupby("kf").x.transform(lambda s: s * 2))
    check_all(lambda d: d.groupby("kf", dropna=False).y.transform("max"))


@pytest.mark.parametrize("func", ["cumsum", "cummax", "cummin", "cumprod"])
def test_cumulative(strategy, func):
    # few groups: a scan across partitions; many (forced here by "shuffle"): a round trip
    check_all(lambda d: getattr(d.groupby("ks")[["x", "y"]], func)())
    check_all(lambda d: getattr(d.groupby(["ki", "ks"]).y, func)())
    check_all(lambda d: getattr(d.groupby("kf")[["y", "x"]], func)(), check_meta=False)  # NaN keys: ints -> floats
    check_all(lambda d: getattr(d[["ki", "x", "y"]].groupby("ki"), func)())


def test_cumulative_large_ints_stay_exact(strategy):
    pdf = pd.DataFrame({"k": [1, 2, 1, 2, 1, 2, 1], "v": [2**60, 3, 2**60 + 1, 5, -(2**61), 7, 1]})
    check_all(lambda d: d.groupby("k").v.cumsum(), pdf)
    check_all(lambda d: d.groupby("k")[["v"]].cummax(), pdf)


def test_cumcount_head_tail_nth(strategy):
    check_all(lambda d: d.groupby("ks").cumcount())
    check_all(lambda d: d.groupby("ks").cumcount(ascending=False))
    check_all(lambda d: d.groupby("kf").cumcount(), check_meta=False)  # NaN keys make pandas' counts floats
    check_all(lambda d: d.groupby(["ki", "ks"]).head(2))
    check_all(lambda d: d.groupby("ks").tail(1))
    check_all(lambda d: d.groupby("ks").x.head(3))
    check_all(lambda d: d.groupby("kf").nth(1))


def test_row_wise_with_index_keys():
    pdf = PDF.set_index(pd.Index(np.arange(N)[::-1] * 2, name="i"))
    check_all(lambda d: d.groupby(level="i").cumcount(), pdf)
    check_all(lambda d: d.groupby(lambda i: i % 3).y.cumsum(), pdf)
    check_all(lambda d: d.groupby([lambda i: i % 3, "ks"]).y.shift(1), pdf)
    check_all(lambda d: d.groupby(mod(d.ki, 2)).y.diff(), pdf)


def test_filter():
    check_all(lambda d: d.groupby("ks").filter(lambda g: g.y.sum() > 0))


# ----------------------------------------------------------------- apply
def test_apply_scalar_series_frame():
    check_all(lambda d: d.groupby("ks").apply(lambda g: g.y.sum() - g.x.sum()))
    check_all(lambda d: d.groupby("ki").apply(lambda g: pd.Series({"lo": g.y.min(), "hi": g.y.max()})))
    check_all(lambda d: d.groupby("ks").apply(lambda g: g.nlargest(2, "y")))
    check_all(lambda d: d.groupby("ks").y.apply(lambda s: s.cumsum()))
    check_all(lambda d: d.groupby(["ks", "ki"]).x.apply(lambda s: s.max()))


def test_apply_group_keys_false_transform_like():
    check_all(lambda d: d.groupby("ks", group_keys=False)[["x", "y"]].apply(lambda g: g * 2))


def test_apply_sort_false_and_as_index_false():
    check_all(lambda d: d.groupby("ks", sort=False).apply(lambda g: g.y.sum()), unordered=True)
    check_all(lambda d: d.groupby("ks", as_index=False).apply(lambda g: g.y.sum()))


# ----------------------------------------------------------------- errors at build time
def test_errors():
    df = lazy(PDF, 5)
    same_error(lambda: df.groupby("zz"), lambda: PDF.groupby("zz"))
    same_error(lambda: df.groupby("ki")["zz"], lambda: PDF.groupby("ki")["zz"])
    same_error(lambda: df.groupby("ki")[["x", "zz"]], lambda: PDF.groupby("ki")[["x", "zz"]])
    same_error(lambda: df.groupby(), lambda: PDF.groupby())
    same_error(lambda: df.x.groupby(df.ki, as_index=False), lambda: PDF.x.groupby(PDF.ki, as_index=False))
    same_error(lambda: df.groupby("ki").s.mean(), lambda: PDF.groupby("ki").s.mean())
    same_error(lambda: df.groupby(np.arange(3)), lambda: PDF.groupby(np.arange(3)))
    same_error(lambda: df.groupby("ki").agg({"zz": "sum"}), lambda: PDF.groupby("ki").agg({"zz": "sum"}))
    with pytest.raises(AttributeError):
        _ = df.groupby("ki").nope


# ----------------------------------------------------------------- plans and strategy
def test_tree_plan():
    values = PDF[["x", "y", "s"]].iloc[:0]
    result = values[["x", "y"]]
    assert tree_plan("agg", ({"x": "sum", "y": "mean"},), {}, values, result) == (Out("x", "sum"), Out("y", "mean"))
    assert tree_plan("var", (), {"ddof": 0}, values[["x"]], values[["x"]]) == (Out("x", "var", ddof=0),)
    assert tree_plan("median", (), {}, values, result) is None
    assert tree_plan("agg", ({"x": lambda s: s.sum()},), {}, values, result[["x"]]) is None
    assert tree_plan("mean", (), {}, values[["s"]], values[["s"]]) is None  # a mean of strings is pandas' error
    assert tree_plan("sum", (), {"skipna": False}, values[["x"]], values[["x"]]) is None


def _chunk_ops(t) -> set:
    t.execute()
    seen, stack, names = set(), list(t.data.chunks), set()
    while stack:
        c = stack.pop()
        if id(c) in seen:
            continue
        seen.add(id(c))
        names.add(type(c.op).__name__)
        stack.extend(c.op.inputs)
    return names


def test_strategy_follows_number_of_groups(monkeypatch):
    monkeypatch.setattr(agg_module, "SINGLE_ROWS", -1)
    rng = np.random.default_rng(1)
    few = pd.DataFrame({"k": rng.integers(0, 10, 40_000), "v": rng.random(40_000)})
    many = pd.DataFrame({"k": rng.permutation(40_000), "v": rng.random(40_000)})  # not in key order
    few_ops = _chunk_ops(md.DataFrame(few, chunk_size=10_000).groupby("k").v.sum())
    assert "GroupPartial" in few_ops and "KeySplit" not in few_ops
    many_agg = md.DataFrame(many, chunk_size=10_000).groupby("k").v.sum()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(agg_module, "TREE_ROWS", 1000)
        many_ops = _chunk_ops(many_agg)
        assert_eq(many_agg, many.groupby("k").v.sum())
    assert "KeySplit" in many_ops and "GroupPartial" not in many_ops
    assert isinstance(many_agg.op, GroupByAgg)
    few_df = md.DataFrame(few, chunk_size=10_000)
    assert "ScanApply" in _chunk_ops(few_df.groupby("k").v.cumsum())
    assert "LookUpGroups" in _chunk_ops(few_df.groupby("k").v.transform("sum"))
    assert "CallAndReturn" in _chunk_ops(few_df.groupby("k").v.transform(lambda s: s - s.max()))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(agg_module, "TREE_ROWS", 1000)
        many_df = md.DataFrame(many, chunk_size=10_000)
        assert "CallAndReturn" in _chunk_ops(many_df.groupby("k").v.cumsum())
        assert "CallAndReturn" in _chunk_ops(many_df.groupby("k").v.transform("sum"))


def test_range_shuffle_partitions_hold_sorted_ranges(strategy):
    rng = np.random.default_rng(2)
    pdf = pd.DataFrame({"k": rng.integers(0, 500, 3000), "v": rng.random(3000)})
    res = md.DataFrame(pdf, chunk_size=500).groupby("k").v.median().execute()
    assert len(res.nsplits[0]) > 1
    assert_eq(res, pdf.groupby("k").v.median())


def test_empty_frame(agg_strategy):
    pdf = PDF.iloc[:0]
    for chunk_size in (5, (0, 0, 0)):
        df = lazy(pdf, chunk_size)
        assert_eq(df.groupby("ki").x.sum(), pdf.groupby("ki").x.sum(), check_index_type=False)
        assert_eq(df.groupby("ks").agg({"x": "mean", "y": "max"}), pdf.groupby("ks").agg({"x": "mean", "y": "max"}),
                  check_index_type=False)
        assert_eq(df.groupby("ki").y.cumsum(), pdf.groupby("ki").y.cumsum(), check_index_type=False)


def test_pipe_and_repr():
    df = lazy(PDF, 5)
    g = df.groupby("ks")
    assert_eq(g.pipe(lambda gb: gb.y.sum()), PDF.groupby("ks").y.sum())
    assert "DataFrameGroupBy" in repr(g)


def test_categorical_unobserved(strategy):
    pdf = PDF.assign(c=pd.Categorical(PDF.ks, categories=["d", "c", "b", "a", "z"]))
    check_all(lambda d: d.groupby("c", observed=False).y.sum(), pdf)
    check_all(lambda d: d.groupby(["c", "ki"], observed=False).x.median(), pdf)
    check_all(lambda d: d.groupby("c", observed=False).y.transform("max"), pdf)


def test_multiindex_columns(strategy):
    pdf = PDF[["ki", "x", "y"]].copy()
    pdf.columns = pd.MultiIndex.from_tuples([("k", "i"), ("v", "x"), ("v", "y")])
    check_all(lambda d: d.groupby(("k", "i")).sum(), pdf)
    check_all(lambda d: d.groupby(("k", "i")).agg({("v", "x"): "mean", ("v", "y"): "median"}), pdf)


def test_input_of_unknown_partition_sizes(strategy):
    def kept(d):
        if isinstance(d, pd.DataFrame):
            return d[d.x > 0.4]
        return map_partitions(lambda p: p[p.x > 0.4], d, same_rows=False)

    check_all(lambda d: kept(d).groupby("ks").agg({"x": "sum", "y": "median"}))
    check_all(lambda d: kept(d).groupby(np.arange(len(PDF[PDF.x > 0.4])) % 3).y.sum())
    check_all(lambda d: kept(d).groupby("ki").y.transform("mean"))
    check_all(lambda d: kept(d).groupby("ki").y.cumsum())


def test_other_shuffled_aggregations(strategy):
    check_all(lambda d: d.groupby("ks").y.value_counts())
    check_all(lambda d: d.groupby("ks")[["x", "y"]].quantile(0.25))
    check_all(lambda d: d.groupby("ki").y.idxmax())
    check_all(lambda d: d.groupby("ki").b.any())
    check_all(lambda d: d.groupby("ks").x.describe())
    check_all(lambda d: d.groupby("ks").agg({"x": "nunique", "s": ["min", "nunique"]}))


def test_by_lazy_index_and_tensor(strategy):
    import mars.tensor as mt

    labels = pd.Index(np.arange(N) % 3, name="g")
    for chunk_size in PARTS:
        df = lazy(PDF, chunk_size)
        assert_eq(df.groupby(md.Index(labels, chunk_size=7)).y.sum(), PDF.groupby(labels).y.sum())
        assert_eq(df.groupby(mt.tensor(np.arange(N) % 4, chunk_size=5)).x.max(), PDF.groupby(np.arange(N) % 4).x.max())


@pytest.mark.parametrize("block", [3, 1000])
def test_numpy_partials_equal_pandas_partials(block):
    from mars.dataframe.groupby.keys import GroupSpec
    from mars.dataframe.groupby.tree import chunk_partials, numpy_partials

    rng = np.random.default_rng(4)
    part = pd.DataFrame({"k": rng.integers(-3, 4, 50), "t": rng.random(50) > 0.5,
                         "x": np.where(rng.random(50) < 0.2, np.nan, rng.random(50)), "y": rng.integers(0, 9, 50)})
    partials = (("sum", "x"), ("count", "x"), ("size", None), ("count", "y"))
    for spec in (GroupSpec(by="k"), GroupSpec(by=["t"])):
        fast = numpy_partials(part, (), spec, partials, block)
        slow = chunk_partials(spec.groupby(part, (), sort=False), partials)
        pd.testing.assert_frame_equal(fast, slow)
    assert numpy_partials(part, (), GroupSpec(by="k"), (("sum", "y"),), block) is None  # int sums stay exact in pandas
    assert numpy_partials(part, (), GroupSpec(by="x"), partials, block) is None  # a float key may be NaN
