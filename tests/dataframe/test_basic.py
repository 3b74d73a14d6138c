"""astype, rename, drop, set/reset_index, missing values, where/mask, sample, conversions: against pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, partitionings, lazy, same_error_when_run as same_error

import mars
import mars.dataframe as md
import mars.tensor as mt
from mars.dataframe.map import map_partitions

N = 12
PARTS = partitionings(N)


def frame(index: str = "range", n: int = N) -> pd.DataFrame:
    """ints, floats/strings/datetimes with holes, on a default, string or unsorted int index."""
    holes = np.arange(n) % 4 == 1
    idx = {"range": None, "str": [f"r{k:02d}" for k in range(n)],
           "unsorted": np.random.default_rng(1).permutation(n) * 10}[index]
    f = np.arange(n) / 2
    f[np.arange(n) % 3 == 2] = np.nan
    f[:2] = np.nan
    return pd.DataFrame({
        "i": np.arange(n) * 3 - 5,
        "f": f,
        "s": pd.array([None if h else f"s{k % 5}" for k, h in enumerate(holes)], dtype="str"),
        "t": pd.Series(pd.date_range("2020-01-01", periods=n, freq="D")).where(~holes).to_numpy(),
    }, index=idx)


INDEXES = ["range", "str", "unsorted"]




# ----------------------------------------------------------------- astype
@pytest.mark.parametrize("cs", PARTS)
def test_astype(cs):
    pdf = frame("str")
    df = lazy(pdf, cs)
    assert_eq(df.astype({"i": "float32", "t": "str"}), pdf.astype({"i": "float32", "t": "str"}))
    assert_eq(df[["i", "f"]].astype("float64"), pdf[["i", "f"]].astype("float64"))
    assert_eq(df["i"].astype("int8"), pdf["i"].astype("int8"))
    assert_eq(df["s"].astype("object"), pdf["s"].astype("object"))


@pytest.mark.parametrize("cs", PARTS)
def test_astype_category_takes_categories_from_all_partitions(cs):
    pdf = frame("unsorted")
    df = lazy(pdf, cs)
    result = df.astype({"s": "category", "i": "category"})
    assert result.dtypes["s"] == pdf.astype({"s": "category"}).dtypes["s"]  # known before running
    assert_eq(result, pdf.astype({"s": "category", "i": "category"}))
    assert_eq(df["s"].astype("category"), pdf["s"].astype("category"))
    ordered = pd.CategoricalDtype(ordered=True)
    assert_eq(df["i"].astype(ordered), pdf["i"].astype(ordered))


def test_astype_errors():
    pdf = frame()
    df = lazy(pdf, 5)
    same_error(lambda: df.astype({"nope": "int64"}), lambda: pdf.astype({"nope": "int64"}))
    same_error(lambda: df["s"].astype("int64"), lambda: pdf["s"].astype("int64"))


# ----------------------------------------------------------------- labels
@pytest.mark.parametrize("index", INDEXES)
@pytest.mark.parametrize("cs", PARTS)
def test_rename(index, cs):
    pdf = frame(index)
    df = lazy(pdf, cs)
    assert_eq(df.rename(columns={"i": "I", "zz": "y"}), pdf.rename(columns={"i": "I", "zz": "y"}))
    assert_eq(df.rename(columns=str.upper), pdf.rename(columns=str.upper))
    assert_eq(df.rename(lambda x: str(x) + "!"), pdf.rename(lambda x: str(x) + "!"))
    mapping = {pdf.index[3]: "three", pdf.index[0]: "zero"}
    assert_eq(df.rename(index=mapping), pdf.rename(index=mapping))
    assert_eq(df.rename(mapping, axis=0), pdf.rename(mapping, axis=0))
    assert_eq(df["f"].rename("g"), pdf["f"].rename("g"))
    assert_eq(df["f"].rename(mapping), pdf["f"].rename(mapping))


def test_rename_errors_and_inplace():
    pdf = frame("str")
    df = lazy(pdf, 5)
    same_error(lambda: df.rename(columns={"zz": "a"}, errors="raise"),
               lambda: pdf.rename(columns={"zz": "a"}, errors="raise"))
    same_error(lambda: df.rename(index={"zz": "a", "r01": "b"}, errors="raise"),
               lambda: pdf.rename(index={"zz": "a", "r01": "b"}, errors="raise"))
    assert_eq(df.rename(index={"r11": "last"}, errors="raise"), pdf.rename(index={"r11": "last"}, errors="raise"))
    s = df["i"]
    assert s.rename("j", inplace=True) is None
    assert_eq(s, pdf["i"].rename("j"))


@pytest.mark.parametrize("cs", PARTS)
def test_drop(cs):
    pdf = frame("str")
    df = lazy(pdf, cs)
    assert_eq(df.drop(columns=["f", "t"]), pdf.drop(columns=["f", "t"]))
    assert_eq(df.drop("s", axis=1), pdf.drop("s", axis=1))
    assert_eq(df.drop(["r01", "r07", "r11"]), pdf.drop(["r01", "r07", "r11"]))
    assert_eq(df.drop(index="r05", columns="i"), pdf.drop(index="r05", columns="i"))
    assert_eq(df.drop(index=["zz", "r00"], errors="ignore"), pdf.drop(index=["zz", "r00"], errors="ignore"))
    assert_eq(df["f"].drop(["r02", "r03"]), pdf["f"].drop(["r02", "r03"]))


def test_drop_errors():
    pdf = frame("str")
    df = lazy(pdf, 5)
    same_error(lambda: df.drop(columns=["zz"]), lambda: pdf.drop(columns=["zz"]))
    same_error(lambda: df.drop(index=["zz", "r01"]), lambda: pdf.drop(index=["zz", "r01"]))
    same_error(lambda: df.drop(labels="r01", index="r02"), lambda: pdf.drop(labels="r01", index="r02"))
    same_error(lambda: df.drop(), lambda: pdf.drop())
    with pytest.raises(KeyError, match=r"\['zz'\] not found in axis"):  # two checks in one graph stay apart
        mars.execute(df.drop(index=["r01"]), df.drop(index=["zz"]))


@pytest.mark.parametrize("cs", PARTS)
def test_set_index(cs):
    pdf = frame("unsorted")
    df = lazy(pdf, cs)
    assert_eq(df.set_index("s"), pdf.set_index("s"))
    assert_eq(df.set_index(["s", "i"], drop=False), pdf.set_index(["s", "i"], drop=False))
    assert_eq(df.set_index("t", append=True), pdf.set_index("t", append=True))
    same_error(lambda: df.set_index("zz"), lambda: pdf.set_index("zz"))
    with pytest.raises(ValueError, match="Index has duplicate keys"):
        df.set_index("s", verify_integrity=True).execute()
    assert_eq(df.set_index("i", verify_integrity=True), pdf.set_index("i"))
    out = df.copy()
    assert out.set_index("i", inplace=True) is None
    assert_eq(out, pdf.set_index("i"))


@pytest.mark.parametrize("index", INDEXES)
@pytest.mark.parametrize("cs", PARTS)
def test_reset_index_numbers_rows_across_partitions(index, cs):
    pdf = frame(index)
    df = lazy(pdf, cs)
    assert_eq(df.reset_index(), pdf.reset_index())
    assert_eq(df.reset_index(drop=True), pdf.reset_index(drop=True))
    assert_eq(df["f"].reset_index(), pdf["f"].reset_index())
    assert_eq(df["f"].reset_index(drop=True), pdf["f"].reset_index(drop=True))
    assert_eq(df["f"].reset_index(name="v"), pdf["f"].reset_index(name="v"))
    filtered = df[map_partitions(lambda d: d["i"] % 2 == 0, df)]  # sizes known only when run
    assert_eq(filtered.reset_index(drop=True), pdf[pdf["i"] % 2 == 0].reset_index(drop=True))


def test_reset_index_of_one_level_keeps_the_others():
    pdf = frame("str").set_index("s", append=True)
    df = lazy(pdf, 5)
    assert_eq(df.reset_index(level=1), pdf.reset_index(level=1))
    assert_eq(df.reset_index(), pdf.reset_index())
    with pytest.raises(TypeError, match="Cannot reset_index inplace on a Series"):
        df["i"].reset_index(inplace=True)


def test_relabelled_results_align_by_label_not_by_position():
    pdf = frame("unsorted")
    df = lazy(pdf, 5)
    for lazy_other, other in [(df.reset_index(drop=True), pdf.reset_index(drop=True)),
                              (df.set_index("i", drop=False), pdf.set_index("i", drop=False)),
                              (df.rename(index=lambda x: x // 20), pdf.rename(index=lambda x: x // 20))]:
        if not other.index.is_unique:
            continue
        total = map_partitions("add", df["f"], lazy_other["f"])
        assert_eq(total, pdf["f"] + other["f"], check_meta=False)


# ----------------------------------------------------------------- missing values
@pytest.mark.parametrize("cs", PARTS)
def test_isna_notna(cs):
    pdf = frame("str")
    df = lazy(pdf, cs)
    for name in ("isna", "isnull", "notna", "notnull"):
        assert_eq(getattr(df, name)(), getattr(pdf, name)())
        assert_eq(getattr(df["t"], name)(), getattr(pdf["t"], name)())


@pytest.mark.parametrize("cs", PARTS)
def test_fillna_values(cs):
    pdf = frame("unsorted")
    df = lazy(pdf, cs)
    assert_eq(df[["i", "f"]].fillna(0), pdf[["i", "f"]].fillna(0))
    fills = {"f": -1.0, "s": "?", "t": pd.Timestamp("1999-01-01")}
    assert_eq(df.fillna(fills), pdf.fillna(fills))
    assert_eq(df.fillna(pd.Series(fills)), pdf.fillna(pd.Series(fills)))
    means = pdf[["i", "f"]].mean()
    assert_eq(df[["i", "f"]].fillna(md.Series(means, chunk_size=1)), pdf[["i", "f"]].fillna(means))
    other = pd.Series(np.arange(N) * 100.0, index=pdf.index[::-1])
    assert_eq(df["f"].fillna(other), pdf["f"].fillna(other))
    assert_eq(df["f"].fillna(md.Series(other, chunk_size=5)), pdf["f"].fillna(other))
    assert_eq(df["s"].fillna("none"), pdf["s"].fillna("none"))


@pytest.mark.parametrize("index", ["range", "unsorted"])
@pytest.mark.parametrize("cs", PARTS)
def test_ffill_bfill_carry_across_partitions(index, cs):
    pdf = frame(index)
    long_gap = pdf.copy()
    long_gap.loc[long_gap.index[3:9], ["f", "s"]] = np.nan
    for p in (pdf, long_gap):
        df = lazy(p, cs)
        for limit in (None, 1, 2, 4):
            assert_eq(df.ffill(limit=limit), p.ffill(limit=limit))
            assert_eq(df.bfill(limit=limit), p.bfill(limit=limit))
            assert_eq(df["f"].ffill(limit=limit), p["f"].ffill(limit=limit))
            assert_eq(df["t"].bfill(limit=limit), p["t"].bfill(limit=limit))
        assert_eq(df.fillna(method="ffill"), p.ffill())
        assert_eq(df["s"].fillna(method="bfill"), p["s"].bfill())
        assert_eq(df[["i", "f"]].ffill(axis=1), p[["i", "f"]].ffill(axis=1))


def test_fill_errors():
    df = lazy(frame(), 5)
    with pytest.raises(ValueError, match="Must specify a fill 'value'"):
        df.fillna()
    with pytest.raises(ValueError, match="Limit must be greater than 0"):
        df.ffill(limit=0)
    with pytest.raises(ValueError, match="Invalid fill method"):
        df.fillna(method="middle")


@pytest.mark.parametrize("cs", PARTS)
def test_dropna(cs):
    pdf = frame("str")
    df = lazy(pdf, cs)
    assert_eq(df.dropna(), pdf.dropna())
    assert_eq(df.dropna(how="all", subset=["f", "s"]), pdf.dropna(how="all", subset=["f", "s"]))
    assert_eq(df.dropna(thresh=3), pdf.dropna(thresh=3))
    assert_eq(df.dropna(subset=["t"], ignore_index=True), pdf.dropna(subset=["t"], ignore_index=True))
    assert_eq(df.dropna(axis=1), pdf.dropna(axis=1))
    assert_eq(df.dropna(axis=1, thresh=10), pdf.dropna(axis=1, thresh=10))
    assert_eq(df[["i", "f"]].iloc[:1].dropna(axis=1, how="all"), pdf[["i", "f"]].iloc[:1].dropna(axis=1, how="all"))
    assert_eq(df["f"].dropna(), pdf["f"].dropna())


def test_dropna_errors():
    pdf = frame()
    df = lazy(pdf, 5)
    same_error(lambda: df.dropna(how="any", thresh=1), lambda: pdf.dropna(how="any", thresh=1))
    same_error(lambda: df.dropna(subset=["zz"]), lambda: pdf.dropna(subset=["zz"]))


@pytest.mark.parametrize("cs", PARTS)
def test_replace(cs):
    pdf = frame("str")
    df = lazy(pdf, cs)
    assert_eq(df.replace({"s": {"s1": "one"}}), pdf.replace({"s": {"s1": "one"}}))
    assert_eq(df["i"].replace([1, 4], [100, 400]), pdf["i"].replace([1, 4], [100, 400]))
    assert_eq(df["s"].replace(r"^s(\d)$", r"x\1", regex=True), pdf["s"].replace(r"^s(\d)$", r"x\1", regex=True))


# ----------------------------------------------------------------- where / mask
@pytest.mark.parametrize("cs", PARTS)
def test_where_mask(cs):
    pdf = frame("unsorted")[["i", "f"]]
    df = lazy(pdf, cs)
    cond = map_partitions(lambda d: d > 3, df)
    assert_eq(df.where(cond), pdf.where(pdf > 3))
    assert_eq(df.where(cond, -1), pdf.where(pdf > 3, -1))
    assert_eq(df.mask(cond, 0), pdf.mask(pdf > 3, 0))
    assert_eq(df.where(lambda d: map_partitions(lambda x: x > 3, d), 7), pdf.where(pdf > 3, 7))
    assert_eq(df["f"].mask(map_partitions(lambda s: s.isna(), df["f"]), 1.5), pdf["f"].mask(pdf["f"].isna(), 1.5))
    arr = (np.arange(N) % 2 == 0)
    assert_eq(df["i"].where(arr, 0), pdf["i"].where(arr, 0))
    other_cond = pd.Series(np.arange(N) % 3 == 0, index=pdf.index[::-1])
    assert_eq(df["i"].where(other_cond, 1), pdf["i"].where(other_cond, 1))


# ----------------------------------------------------------------- sample
@pytest.mark.parametrize("cs", PARTS)
def test_sample(cs):
    pdf = frame("str")
    df = lazy(pdf, cs)
    for kw in [dict(n=5), dict(frac=0.5), dict(n=N), dict(n=0), dict(n=20, replace=True), dict(frac=1.5, replace=True)]:
        result = df.sample(random_state=7, **kw)
        got = result.execute().fetch()
        expected = pdf.sample(random_state=7, **kw)
        assert len(got) == len(expected)
        assert got.dtypes.equals(pdf.dtypes)
        assert set(got.index) <= set(pdf.index)
        if not kw.get("replace"):
            assert got.index.is_unique
        pd.testing.assert_frame_equal(got, pdf.loc[got.index])
        pd.testing.assert_frame_equal(df.sample(random_state=7, **kw).execute().fetch(), got)  # reproducible
    pd.testing.assert_frame_equal(df.sample(frac=1, random_state=3).execute().fetch().loc[pdf.index], pdf)
    got = df.sample(n=4, ignore_index=True, random_state=1).execute().fetch()
    pd.testing.assert_index_equal(got.index, pd.RangeIndex(4))


def test_sample_spreads_rows_over_partitions_as_a_uniform_sample():
    df = md.DataFrame(pd.DataFrame({"v": np.arange(1000)}), chunk_size=(100, 600, 300))
    picks = np.concatenate([df.sample(n=100, random_state=seed).execute().fetch()["v"].to_numpy() for seed in range(40)])
    share = np.histogram(picks, bins=[0, 100, 700, 1000])[0] / len(picks)
    np.testing.assert_allclose(share, [0.1, 0.6, 0.3], atol=0.03)


def test_sample_without_a_seed_differs_between_calls():
    df = md.DataFrame(pd.DataFrame({"v": np.arange(1000)}), chunk_size=100)
    draws = {tuple(df.sample(10).execute().fetch()["v"]) for _ in range(3)}
    assert len(draws) == 3


def test_sample_errors():
    pdf = frame()
    df = lazy(pdf, 5)
    for kw in [dict(n=1, frac=0.5), dict(n=-1), dict(frac=1.5), dict(n=N + 1)]:
        same_error(lambda kw=kw: df.sample(**kw), lambda kw=kw: pdf.sample(**kw))
    filtered = df[map_partitions(lambda d: d["i"] > 20, df)]
    with pytest.raises(ValueError, match="Cannot take a larger sample than population"):
        filtered.sample(5).execute()


# ----------------------------------------------------------------- conversions and small methods
@pytest.mark.parametrize("cs", PARTS)
def test_small_methods(cs):
    pdf = frame("str")
    df = lazy(pdf, cs)
    assert_eq(df.copy(), pdf.copy())
    assert_eq(df["f"].to_frame(), pdf["f"].to_frame())
    assert_eq(df["f"].to_frame("g"), pdf["f"].to_frame("g"))
    assert_eq(df.rename_axis("key"), pdf.rename_axis("key"))
    assert_eq(df.rename_axis(columns="cols"), pdf.rename_axis(columns="cols"))
    assert_eq(df.add_prefix("p_"), pdf.add_prefix("p_"))
    assert_eq(df.add_suffix("_s"), pdf.add_suffix("_s"))
    assert_eq(df["i"].add_prefix("k"), pdf["i"].add_prefix("k"))
    assert_eq(df.index, pdf.index)
    assert_eq(df["i"].index, pdf["i"].index)
    assert [(label, s.name) for label, s in df.items()] == [(c, c) for c in pdf.columns]
    assert_eq(df.items().__next__()[1], pdf["i"])
    assert list(df.keys()) == list(pdf.columns) and list(df) == list(pdf.columns) and "f" in df


@pytest.mark.parametrize("cs", PARTS)
def test_index_and_columns_setters(cs):
    pdf = frame("str")
    df = lazy(pdf, cs)
    df.columns = ["a", "b", "c", "d"]
    df.index = np.arange(N) * 2
    expected = pdf.copy()
    expected.columns = ["a", "b", "c", "d"]
    expected.index = np.arange(N) * 2
    assert_eq(df, expected)

    def bad_columns():
        pdf.copy().columns = ["a"]

    same_error(lambda: setattr(df, "columns", ["a"]), bad_columns)
    with pytest.raises(ValueError, match=r"Length of values \(3\) does not match length of index \(12\)"):
        df.index = [1, 2, 3]


@pytest.mark.parametrize("cs", PARTS)
def test_values_to_tensor_to_numpy(cs):
    pdf = frame("str")
    df = lazy(pdf, cs)
    num = df[["i", "f"]]
    t = num.values
    assert isinstance(t, mt.Tensor) and t.dtype == np.float64 and t.shape == (N, 2)
    np.testing.assert_array_equal(t.fetch(), pdf[["i", "f"]].to_numpy())
    assert t.nsplits[0] == num.nsplits[0]  # chunked like the rows
    np.testing.assert_array_equal((num.to_tensor() * 2).fetch(), pdf[["i", "f"]].to_numpy() * 2)
    np.testing.assert_array_equal(df["i"].values.fetch(), pdf["i"].to_numpy())
    assert df["s"].values.dtype == object
    np.testing.assert_array_equal(df.index.values.fetch(), pdf.index.to_numpy())
    got = df.to_numpy()
    assert got.dtype == pdf.to_numpy().dtype
    pd.testing.assert_frame_equal(pd.DataFrame(got), pd.DataFrame(pdf.to_numpy()))
    np.testing.assert_array_equal(df["f"].to_numpy(na_value=0.0), pdf["f"].to_numpy(na_value=0.0))
