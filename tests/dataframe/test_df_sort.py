"""sort_values, sort_index, nlargest and nsmallest against pandas across partitionings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, lazy, partitionings

import mars.dataframe as md
from mars.dataframe.map import map_partitions

N = 13


def _frame(n: int = N, seed: int = 0) -> pd.DataFrame:
    """Keys with ties, NaN, infinities, strings with NaN, NaT, categoricals and nullable ints."""
    rng = np.random.default_rng(seed)
    f = rng.choice([1.5, -2.0, np.nan, np.inf, -np.inf, 0.0, 7.25], n)
    return pd.DataFrame({
        "f": f,
        "i": rng.integers(0, 4, n),
        "s": pd.Series(rng.choice(["b", "a", "c", None, "ab"], n), dtype="str"),
        "t": pd.to_datetime(rng.choice(["2020-01-02", "2019-05-01", None, "2021-03-04"], n)),
        "c": pd.Categorical(rng.choice(["lo", "mid", "hi"], n), categories=["lo", "mid", "hi"]),
        "n": pd.array(rng.choice([1, 2, None], n), dtype="Int64"),
        "b": rng.random(n) > 0.5,
        "v": np.arange(n) * 1.5,
    }, index=pd.Index(rng.permutation(n) * 10, name="idx"))


# ----------------------------------------------------------------- sort_values
@pytest.mark.parametrize("chunk_size", partitionings(N))
@pytest.mark.parametrize("by", ["f", "i", "s", "t", "c", "n", "b",
                                ["i", "f"], ["s", "f"], ["c", "t", "n"], ["b", "i", "s"]])
@pytest.mark.parametrize("ascending", [True, False])
@pytest.mark.parametrize("na_position", ["last", "first"])
def test_df_sort_values(chunk_size, by, ascending, na_position):
    pdf = _frame()
    result = lazy(pdf, chunk_size).sort_values(by, ascending=ascending, na_position=na_position)
    # ties keep their original order: pandas' stable sort (its default quicksort scrambles ties)
    assert_eq(result, pdf.sort_values(by, ascending=ascending, na_position=na_position, kind="stable"))


@pytest.mark.parametrize("chunk_size", partitionings(N))
@pytest.mark.parametrize("ascending", [[True, False], [False, True], [False, False]])
@pytest.mark.parametrize("na_position", ["last", "first"])
def test_df_sort_values_mixed_ascending(chunk_size, ascending, na_position):
    pdf = _frame(seed=1)
    for by in (["f", "s"], ["s", "t"], ["n", "f"]):
        result = lazy(pdf, chunk_size).sort_values(by, ascending=ascending, na_position=na_position)
        assert_eq(result, pdf.sort_values(by, ascending=ascending, na_position=na_position, kind="stable"))


@pytest.mark.parametrize("chunk_size", partitionings(N))
def test_df_sort_values_without_ties_equals_default_kind(chunk_size):
    pdf = pd.DataFrame({"a": np.random.default_rng(2).permutation(N) * 1.5, "b": list("abcdefghijklm")})
    assert_eq(lazy(pdf, chunk_size).sort_values("a"), pdf.sort_values("a"))
    assert_eq(lazy(pdf, chunk_size).sort_values("b", ascending=False), pdf.sort_values("b", ascending=False))


@pytest.mark.parametrize("chunk_size", partitionings(3000))
@pytest.mark.parametrize("ascending", [True, False])
@pytest.mark.parametrize("na_position", ["last", "first"])
def test_unique_numeric_keys_with_missing(chunk_size, ascending, na_position):
    # distinct keys take numpy's quicksort; missing values keep their order
    rng = np.random.default_rng(15)
    f = rng.permutation(3000) / 7.0
    f[rng.choice(3000, 40, replace=False)] = np.nan
    pdf = pd.DataFrame({"f": f, "t": pd.to_datetime(rng.permutation(3000) * 10**9).where(~np.isnan(f)),
                        "u": rng.permutation(3000).astype(np.uint16)})
    mdf = lazy(pdf, chunk_size)
    kw = {"ascending": ascending, "na_position": na_position}
    for by in ("f", "t", "u"):
        assert_eq(mdf.sort_values(by, **kw), pdf.sort_values(by, **kw, kind="stable"))
    assert_eq(lazy(pdf.set_index("f"), chunk_size).sort_index(**kw), pdf.set_index("f").sort_index(**kw))
    assert_eq(lazy(pdf["t"], chunk_size).sort_values(**kw), pdf["t"].sort_values(**kw))


@pytest.mark.parametrize("chunk_size", [20_000, 7_000])
def test_rare_ties_among_many_keys(chunk_size):
    # a few tied pairs that a sample would miss still come out in their original order
    rng = np.random.default_rng(16)
    f = rng.permutation(20_000) * 1.0
    f[rng.choice(20_000, 30, replace=False)] = f[rng.choice(20_000, 30, replace=False)]
    pdf = pd.DataFrame({"f": f, "pos": np.arange(20_000)})
    for ascending in (True, False):
        assert_eq(lazy(pdf, chunk_size).sort_values("f", ascending=ascending),
                  pdf.sort_values("f", ascending=ascending, kind="stable"))


@pytest.mark.parametrize("chunk_size", partitionings(N))
@pytest.mark.parametrize("kind", ["quicksort", "mergesort", "heapsort", "stable"])
def test_every_kind_is_stable(chunk_size, kind):
    pdf = pd.DataFrame({"k": [2, 1, 2, 1, 2, 1, 1, 2, 2, 1, 0, 0, 2], "pos": range(N)})
    expected = pdf.sort_values("k", kind="stable")
    assert_eq(lazy(pdf, chunk_size).sort_values("k", kind=kind), expected)
    assert_eq(lazy(pdf, chunk_size).sort_values("k", kind=kind, ascending=False),
              pdf.sort_values("k", kind="stable", ascending=False))


@pytest.mark.parametrize("chunk_size", partitionings(N))
def test_df_sort_values_ignore_index_and_sizes(chunk_size):
    pdf = _frame(seed=3)
    result = lazy(pdf, chunk_size).sort_values(["i", "f"], ignore_index=True).execute()
    assert sum(result.nsplits[0]) == N
    assert_eq(result, pdf.sort_values(["i", "f"], ignore_index=True))
    assert isinstance(result.fetch().index, pd.RangeIndex)


@pytest.mark.parametrize("chunk_size", partitionings(N))
@pytest.mark.parametrize("by", [["i", "f"], "s", ["c", "t"]])
def test_a_sort_keeping_its_labels_finds_its_cuts_in_its_mappers(stages, chunk_size, by):
    """Sorted partitions are cut where the pivots fall by the mappers themselves: no stage learns the cuts
    first (TPC-H Q16's last sort). With ignore_index the outputs' sizes number the rows, and that stage stays."""
    pdf = _frame(seed=4)
    assert_eq(lazy(pdf, chunk_size).sort_values(by, kind="stable"), pdf.sort_values(by, kind="stable"))
    assert not any("SortCuts" in s for s in stages), stages
    stages.clear()
    numbered = lazy(pdf, chunk_size).sort_values(by, kind="stable", ignore_index=True)
    assert_eq(numbered, pdf.sort_values(by, kind="stable", ignore_index=True))
    several = chunk_size != N  # one partition sorts alone
    assert any("SortCuts" in s for s in stages) == several, stages


@pytest.mark.parametrize("chunk_size", partitionings(N))
def test_df_sort_values_key_and_index_level(chunk_size):
    pdf = _frame(seed=4)
    mdf = lazy(pdf, chunk_size)
    assert_eq(mdf.sort_values("s", key=lambda s: s.str.upper()), pdf.sort_values("s", key=lambda s: s.str.upper(),
                                                                                   kind="stable"))
    assert_eq(mdf.sort_values(["i", "f"], key=lambda s: -s if s.name == "i" else s, ascending=[True, False]),
              pdf.sort_values(["i", "f"], key=lambda s: -s if s.name == "i" else s, ascending=[True, False]))
    assert_eq(mdf.sort_values(["i", "idx"], ascending=[False, True]),
              pdf.sort_values(["i", "idx"], ascending=[False, True]))


@pytest.mark.parametrize("chunk_size", partitionings(N))
def test_df_sort_values_tz_and_multiindex_columns(chunk_size):
    rng = np.random.default_rng(5)
    times = pd.to_datetime(rng.choice(["2020-01-01", None, "2021-01-01"], N)).tz_localize("UTC")
    pdf = pd.DataFrame({("x", "t"): times,
                        ("x", "u"): rng.integers(0, 3, N).astype(np.uint8)})
    mdf = lazy(pdf, chunk_size)
    for by in [("x", "t"), [("x", "u"), ("x", "t")]]:
        for ascending in (True, False):
            assert_eq(mdf.sort_values(by, ascending=ascending, na_position="first"),
                      pdf.sort_values(by, ascending=ascending, na_position="first", kind="stable"))


def test_df_sort_values_empty_by_and_inplace():
    pdf = _frame()
    mdf = md.DataFrame(pdf, chunk_size=4)
    assert_eq(mdf.sort_values([]), pdf.sort_values([]))
    with pytest.warns(Warning, match="inplace"):
        assert mdf.sort_values("f", inplace=True) is None
    assert_eq(mdf, pdf.sort_values("f", kind="stable"))


@pytest.mark.parametrize("chunk_size", partitionings(40))
def test_sort_after_filter_of_unknown_size(chunk_size):
    pdf = _frame(40, seed=6)
    mdf = map_partitions(lambda p: p[p["i"] > 0], lazy(pdf, chunk_size), same_rows=False)
    assert_eq(mdf.sort_values(["s", "v"], ascending=[False, True]),
              pdf[pdf["i"] > 0].sort_values(["s", "v"], ascending=[False, True]))


def _more_dtypes(n: int = 24) -> pd.DataFrame:
    rng = np.random.default_rng(14)
    return pd.DataFrame({
        "td": pd.to_timedelta(rng.choice([1, 2, None, 5], n), unit="s"),
        "per": pd.PeriodIndex(rng.choice(["2020-01", "2019-03", None], n), freq="M"),
        "bn": pd.array(rng.choice([True, False, None], n), dtype="boolean"),
        "fl": pd.array(rng.choice([1.5, -1.0, None], n), dtype="Float64"),
        "u": rng.choice([0, 2**63, 5], n).astype(np.uint64),
        "o": pd.Series(rng.choice(["x", "y", None, "xa"], n), dtype=object),
        "pa": pd.Series(rng.choice(["x", "y", None, "xa"], n), dtype="string[pyarrow]"),
        "pai": pd.Series(rng.choice([1, 2, None], n), dtype="int64[pyarrow]"),
        "cx": rng.choice([1 + 1j, 1 - 1j, 0j, np.nan], n),
        "co": pd.Categorical(rng.choice(["b", "a", None], n), categories=["b", "a"], ordered=True),
        "i8": rng.integers(-3, 3, n).astype(np.int8),
    })


@pytest.mark.parametrize("chunk_size", partitionings(24))
@pytest.mark.parametrize("column", ["td", "per", "bn", "fl", "u", "o", "pa", "pai", "cx", "co"])
def test_more_dtypes(chunk_size, column):
    pdf = _more_dtypes()
    mdf = lazy(pdf, chunk_size)
    for by in ([column], [column, "i8"], ["i8", column]):
        for ascending in (True, False):
            for na_position in ("first", "last"):
                kw = {"ascending": ascending, "na_position": na_position}
                assert_eq(mdf.sort_values(by, **kw), pdf.sort_values(by, **kw, kind="stable"))
    if column == "o":
        return  # pd.concat turns an object index of strings into ``str``: partitions cannot be put together as is
    indexed = pdf.set_index(column)
    for kw in ({}, {"ascending": False, "na_position": "first"}):
        assert_eq(lazy(indexed, chunk_size).sort_index(**kw), indexed.sort_index(**kw, kind="stable"))


@pytest.mark.parametrize("chunk_size", partitionings(24))
def test_categorical_index_with_nan_first_in_a_partition(chunk_size):
    # pandas skips sorting a categorical index that looks monotonic by its codes (NaN = -1 first):
    # a partition like [NaN, "a"] must still be sorted, or the whole comes out wrong
    idx = pd.CategoricalIndex([None, "a"] + ["b", "a", None] * 7 + ["a"], categories=["b", "a"], ordered=True)
    pdf = pd.DataFrame({"v": range(24)}, index=idx)
    assert_eq(lazy(pdf, chunk_size).sort_index(), pdf.sort_index(kind="stable"))
    # samples [NaN, NaN, b, b, a, a, a] look monotonic too; pivots must still be in order
    idx = pd.CategoricalIndex([None, None, "a", "b", "b", "a", "a"], categories=["b", "a"])
    pdf = pd.DataFrame({"v": range(7)}, index=idx)
    assert_eq(md.DataFrame(pdf, chunk_size=(2, 3, 2)).sort_index(), pdf.sort_index(kind="stable"))


@pytest.mark.parametrize("chunk_size", partitionings(N))
def test_object_series_sort_values_keeps_object(chunk_size):
    # pandas rebuilds the sorted Series and infers ``str`` for object strings unless they were
    # already sorted; the result here is always object, as the meta says
    ps = pd.Series(["b", None, "a", "c", "a", "b", None, "d", "e", "a", "c", "b", "f"], dtype=object)
    expected = ps.loc[ps.sort_values(kind="stable").index]
    assert expected.dtype == object and ps.sort_values().dtype == "str"
    assert_eq(lazy(ps, chunk_size).sort_values(), expected)


# ----------------------------------------------------------------- random keys, many partitions
@pytest.mark.parametrize("seed", range(6))
def test_random_frames_match_pandas(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 300))
    pdf = _frame(n, seed=seed + 100)
    cols = list(rng.choice(["f", "i", "s", "t", "c", "n", "b"], int(rng.integers(1, 4)), replace=False))
    ascending = [bool(a) for a in rng.integers(0, 2, len(cols))]
    na_position = str(rng.choice(["first", "last"]))
    expected = pdf.sort_values(cols, ascending=ascending, na_position=na_position, kind="stable")
    for chunk_size in [int(rng.integers(1, 10)), int(rng.integers(10, 60)), tuple(_ragged(rng, n))]:
        mdf = md.DataFrame(pdf, chunk_size=chunk_size)
        result = mdf.sort_values(cols, ascending=ascending, na_position=na_position)
        assert_eq(result, expected)


def _ragged(rng: np.random.Generator, n: int) -> list[int]:
    cuts = np.sort(rng.integers(0, n + 1, 5))
    return np.diff(np.concatenate([[0], cuts, [n]])).tolist()


# ----------------------------------------------------------------- balance
@pytest.mark.parametrize("keys", ["constant", "skewed", "sorted", "reversed"])
def test_output_partitions_are_balanced(keys):
    n, parts = 40_000, 8
    rng = np.random.default_rng(7)
    values = {
        "constant": np.zeros(n),
        "skewed": np.where(rng.random(n) < 0.9, 3.0, rng.random(n)),
        "sorted": np.arange(n, dtype=float),
        "reversed": np.arange(n, 0, -1, dtype=float),
    }[keys]
    pdf = pd.DataFrame({"k": values, "pos": np.arange(n)})
    result = md.DataFrame(pdf, chunk_size=n // parts).sort_values("k").execute()
    sizes = result.nsplits[0]
    assert len(sizes) == parts and sum(sizes) == n
    assert max(sizes) <= 1.25 * n / parts, sizes
    assert_eq(result, pdf.sort_values("k", kind="stable"))


@pytest.mark.parametrize("sizes", ["known", "unknown"])
def test_many_small_partitions_go_to_fewer_outputs(sizes):
    pdf = pd.DataFrame({"k": np.random.default_rng(17).integers(0, 100, 2000), "pos": np.arange(2000)})
    mdf = md.DataFrame(pdf, chunk_size=20)
    if sizes == "unknown":  # known sizes are first cut into fewer partitions; unknown ones are not
        mdf = map_partitions(lambda p: p[p["pos"] % 7 != 3], mdf, same_rows=False)
        pdf = pdf[pdf["pos"] % 7 != 3]
    result = mdf.sort_values("k").execute()
    assert len(result.nsplits[0]) == 32  # not 100 outputs fed by 100 x 100 shuffle pieces
    assert max(result.nsplits[0]) <= 1.5 * len(pdf) / 32
    assert_eq(result, pdf.sort_values("k", kind="stable"))


# ----------------------------------------------------------------- Series.sort_values
@pytest.mark.parametrize("chunk_size", partitionings(N))
@pytest.mark.parametrize("column", ["f", "s", "t", "c", "n"])
@pytest.mark.parametrize("ascending", [True, False, [False]])
@pytest.mark.parametrize("na_position", ["last", "first"])
def test_series_sort_values(chunk_size, column, ascending, na_position):
    ps = _frame(seed=8)[column]
    result = lazy(ps, chunk_size).sort_values(ascending=ascending, na_position=na_position)
    assert_eq(result, ps.sort_values(ascending=ascending, na_position=na_position, kind="stable"))


@pytest.mark.parametrize("chunk_size", partitionings(N))
def test_series_sort_values_key_ignore_index(chunk_size):
    ps = pd.Series(np.random.default_rng(9).integers(-5, 5, N), name="x")
    assert_eq(lazy(ps, chunk_size).sort_values(key=abs, ignore_index=True),
              ps.sort_values(key=abs, ignore_index=True, kind="stable"))


# ----------------------------------------------------------------- sort_index
@pytest.mark.parametrize("chunk_size", partitionings(N))
@pytest.mark.parametrize("ascending", [True, False])
@pytest.mark.parametrize("na_position", ["last", "first"])
def test_sort_index(chunk_size, ascending, na_position):
    pdf = _frame(seed=10)
    pdf.index = pd.Index([3.0, np.nan, 1.0, 3.0, 2.0, np.nan, 0.5, 1.0, 9.0, 3.0, -1.0, 2.0, 4.0], name="k")
    kw = {"ascending": ascending, "na_position": na_position}
    assert_eq(lazy(pdf, chunk_size).sort_index(**kw), pdf.sort_index(**kw, kind="stable"))
    assert_eq(lazy(pdf["s"], chunk_size).sort_index(**kw, ignore_index=True),
              pdf["s"].sort_index(**kw, ignore_index=True, kind="stable"))
    strs = pdf.set_axis(pdf["s"].rename("sk"), axis=0)
    assert_eq(lazy(strs, chunk_size).sort_index(**kw, key=lambda i: i.str.upper()),
              strs.sort_index(**kw, key=lambda i: i.str.upper(), kind="stable"))


@pytest.mark.parametrize("chunk_size", partitionings(N))
@pytest.mark.parametrize("ascending", [True, False, [True, False], [False, True]])
@pytest.mark.parametrize("na_position", ["last", "first"])
def test_sort_index_multiindex(chunk_size, ascending, na_position):
    pdf = _frame(seed=11)
    indexed = pdf.set_index(["f", "s"])
    kw = {"ascending": ascending, "na_position": na_position}
    assert_eq(lazy(indexed, chunk_size).sort_index(**kw), indexed.sort_index(**kw))


@pytest.mark.parametrize("chunk_size", partitionings(N))
def test_sort_index_level_axis1_and_key(chunk_size):
    pdf = _frame(seed=12).set_index(["i", "s"])
    mdf = lazy(pdf, chunk_size)
    assert_eq(mdf.sort_index(level="s"), pdf.sort_index(level="s"))
    assert_eq(mdf.sort_index(level=0, ascending=False, sort_remaining=False),
              pdf.sort_index(level=0, ascending=False, sort_remaining=False))
    assert_eq(mdf.sort_index(key=lambda lev: lev.astype(str)), pdf.sort_index(key=lambda lev: lev.astype(str)))
    assert_eq(mdf.sort_index(axis=1, ascending=False), pdf.sort_index(axis=1, ascending=False))


# ----------------------------------------------------------------- nlargest / nsmallest
@pytest.mark.parametrize("chunk_size", partitionings(N))
@pytest.mark.parametrize("keep", ["first", "last", "all"])
@pytest.mark.parametrize("method", ["nlargest", "nsmallest"])
def test_df_nlargest_nsmallest(chunk_size, keep, method):
    pdf = pd.DataFrame({"a": [3, 1, 3, 2, 5, 1, 3, 2, 5, 0, 3, 1, 2], "b": [1.0, 2, 2, 1, 9, 9, 1, 0, 9, 1, 2, 3, 0],
                        "s": list("abcdefghijklm")})
    mdf = lazy(pdf, chunk_size)
    for n, columns in [(3, "a"), (4, ["a", "b"]), (2, ["b", "a"]), (20, "b"), (0, "a")]:
        assert_eq(getattr(mdf, method)(n, columns, keep=keep), getattr(pdf, method)(n, columns, keep=keep))


@pytest.mark.parametrize("chunk_size", partitionings(N))
@pytest.mark.parametrize("keep", ["first", "last", "all"])
def test_series_nlargest_nsmallest(chunk_size, keep):
    ps = pd.Series([3.0, 1, np.nan, 2, 5, 1, 3, 2, 5, 0, 3, 1, 2], index=list("abcdefghijklm"), name="x")
    ms = lazy(ps, chunk_size)
    for n in (1, 3, 5, 20):
        assert_eq(ms.nlargest(n, keep=keep), ps.nlargest(n, keep=keep))
        assert_eq(ms.nsmallest(n, keep=keep), ps.nsmallest(n, keep=keep))
    assert_eq(ms.nlargest(), ps.nlargest())


def test_nlargest_many_partitions_tree():
    ps = pd.Series(np.random.default_rng(13).integers(0, 50, 500))
    assert_eq(md.Series(ps, chunk_size=7).nlargest(10, keep="all"), ps.nlargest(10, keep="all"))
    assert_eq(md.Series(ps, chunk_size=7).nsmallest(10, keep="last"), ps.nsmallest(10, keep="last"))


# ----------------------------------------------------------------- errors at build time
def test_errors_are_pandas_errors():
    pdf = _frame()
    mdf = md.DataFrame(pdf, chunk_size=4)
    with pytest.raises(KeyError, match="zz"):
        mdf.sort_values("zz")
    with pytest.raises(ValueError, match=r"Length of ascending \(2\) != length of by \(1\)"):
        mdf.sort_values(["f"], ascending=[True, False])
    with pytest.raises(ValueError, match="invalid na_position: middle"):
        mdf.sort_values("f", na_position="middle")
    with pytest.raises(ValueError, match="sort kind must be one of"):
        mdf.sort_values("f", kind="bogo")
    with pytest.raises(ValueError, match='For argument "ascending" expected type bool'):
        mdf["f"].sort_values(ascending="yes")
    with pytest.raises(ValueError, match='keep must be either "first", "last" or "all"'):
        mdf.nlargest(2, "f", keep="middle")
    with pytest.raises(TypeError, match="Column 's' has dtype str, cannot use method 'nsmallest'"):
        mdf.nsmallest(2, "s")
    with pytest.raises(TypeError, match="Cannot use method 'nlargest' with dtype str"):
        mdf["s"].nlargest(2)
    with pytest.raises(KeyError, match="missing"):
        mdf.nlargest(2, "missing")
    with pytest.raises(NotImplementedError, match="axis=1"):
        mdf[["f", "v"]].sort_values(0, axis=1)
