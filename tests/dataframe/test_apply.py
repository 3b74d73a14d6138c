"""``apply``, ``map``, ``transform`` and ``map_partitions`` against pandas across partitionings."""

from __future__ import annotations

import pickle

import cloudpickle
import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, partitionings

import mars.dataframe as md
from mars.dataframe.apply import common_meta, conform

N = 12
PARTS = partitionings(N)


def frame(n: int = N) -> pd.DataFrame:
    f = np.arange(n) / 4
    f[[1, 6]] = np.nan
    return pd.DataFrame({"i": np.arange(n) * 2 - 7, "f": f, "s": [f"w{k % 4}" for k in range(n)]},
                        index=[f"r{k:02d}" for k in range(n)])


def ran(result):
    """``result`` run first: the metadata of a user function's output is fixed when it runs."""
    return result.execute()


# ----------------------------------------------------------------- DataFrame.apply
@pytest.mark.parametrize("cs", PARTS)
def test_apply_rows(cs):
    pdf = frame()
    df = md.DataFrame(pdf, chunk_size=cs)
    cases = [
        (lambda r: r["i"] + r["f"], {}),
        (lambda r: f"{r['s']}:{r['i']}", {}),
        (lambda r: pd.Series({"twice": r["i"] * 2, "tag": r["s"].upper()}), {}),
        (lambda r: [r["i"], r["i"] + 1], {"result_type": "expand"}),
        (lambda r: r["i"] > 0, {}),
        (lambda r, k: r["i"] * k, {"args": (3,)}),
        (lambda r, k=1: r["i"] - k, {"k": 10}),
        (lambda r: r * 2, {"result_type": "broadcast"}),
        (lambda v: v.sum(), {"raw": True}),
    ]
    for func, kw in cases:
        sub = pdf[["i", "f"]] if kw.get("raw") or kw.get("result_type") == "broadcast" else pdf
        lazy = df[["i", "f"]] if sub is not pdf else df
        assert_eq(ran(lazy.apply(func, axis=1, **kw)), sub.apply(func, axis=1, **kw))
    assert_eq(ran(df.apply(lambda r: r["i"] + r["f"], axis="columns")), pdf.apply(lambda r: r["i"] + r["f"], axis="columns"))


@pytest.mark.parametrize("cs", PARTS)
def test_apply_columns(cs):
    """Column-wise functions see whole columns, not partitions."""
    pdf = frame()[["i", "f"]]
    df = md.DataFrame(pdf, chunk_size=cs)
    for func, kw in [(lambda c: c - c.mean(), {}), (np.sum, {}), (lambda c: c.max() - c.min(), {}),
                     (lambda c: c.cumsum(), {}), (lambda c: c.nlargest(2).to_numpy(), {"result_type": "expand"}),
                     ("sum", {}), (lambda c: c.quantile([0.25, 0.75]), {})]:
        assert_eq(ran(df.apply(func, **kw)), pdf.apply(func, **kw))


def test_apply_meta_up_front_when_the_sample_tells():
    pdf = frame()
    df = md.DataFrame(pdf, chunk_size=5)
    result = df.apply(lambda r: r["s"] + "!", axis=1)
    assert result.meta.dtype == pdf.apply(lambda r: r["s"] + "!", axis=1).dtype
    assert_eq(result, pdf.apply(lambda r: r["s"] + "!", axis=1))


def test_apply_declared_output():
    pdf = frame()
    df = md.DataFrame(pdf, chunk_size=5)
    func = lambda r: r["i"] * 1.5
    result = df.apply(func, axis=1, dtypes=np.dtype(np.float64), output_type="series")
    assert_eq(result, pdf.apply(func, axis=1))
    wide = df.apply(lambda r: pd.Series({"a": r["i"], "b": r["s"]}), axis=1, dtypes={"a": np.int64, "b": "str"})
    assert list(wide.meta.columns) == ["a", "b"]
    assert_eq(wide, pdf.apply(lambda r: pd.Series({"a": r["i"], "b": r["s"]}), axis=1))
    meta = pd.Series([], dtype=np.int64, index=pdf.index[:0])
    assert_eq(df.apply(lambda r: r["i"], axis=1, meta=meta), pdf.apply(lambda r: r["i"], axis=1))


def test_failing_sample_asks_for_dtypes():
    pdf = frame()
    df = md.DataFrame(pdf, chunk_size=5)

    def picky(row):
        if row["s"] not in ("w0", "w1", "w2", "w3"):
            raise LookupError(f"unexpected {row['s']}")
        return row["i"]

    with pytest.raises(ValueError, match="Pass dtypes=.*output_type=") as info:
        df.apply(picky, axis=1)
    assert isinstance(info.value.__cause__, LookupError)
    assert_eq(df.apply(picky, axis=1, dtypes=np.dtype(np.int64)), pdf.apply(picky, axis=1))
    with pytest.raises(ValueError, match="output_type must be one of"):
        df.apply(picky, axis=1, dtypes=np.dtype(np.int64), output_type="tensor")


def test_apply_errors():
    pdf = frame()
    df = md.DataFrame(pdf, chunk_size=5)
    with pytest.raises(ValueError, match="invalid value for result_type"):
        df.apply(lambda r: r, axis=1, result_type="wide")
    with pytest.raises(ValueError, match="No axis named 2"):
        df.apply(lambda r: r, axis=2)
    with pytest.raises(NotImplementedError):
        df.apply(lambda r: r, engine="numba")


# ----------------------------------------------------------------- Series.apply / map
@pytest.mark.parametrize("cs", PARTS)
def test_series_apply(cs):
    ps = frame()["f"]
    s = md.Series(ps, chunk_size=cs)
    assert_eq(ran(s.apply(lambda x: x * 2)), ps.apply(lambda x: x * 2))
    assert_eq(ran(s.apply(lambda x: "neg" if x < 1 else "pos")), ps.apply(lambda x: "neg" if x < 1 else "pos"))
    assert_eq(ran(s.apply(lambda x, k: x + k, args=(5,))), ps.apply(lambda x, k: x + k, args=(5,)))
    assert_eq(ran(s.apply(lambda x: pd.Series({"x": x, "y": -x}))), ps.apply(lambda x: pd.Series({"x": x, "y": -x})))
    assert_eq(ran(s.apply(np.sqrt)), ps.apply(np.sqrt))
    assert_eq(ran(s.apply(lambda whole: whole - whole.mean(), by_row=False)), ps.apply(lambda w: w - w.mean(), by_row=False))
    ints = frame()["i"]
    assert_eq(ran(md.Series(ints, chunk_size=cs).apply(lambda x: x if x > 0 else None)),
              ints.apply(lambda x: x if x > 0 else None))


@pytest.mark.parametrize("cs", PARTS)
def test_series_map(cs):
    pdf = frame()
    ps = pdf["s"]
    s = md.Series(ps, chunk_size=cs)
    mapping = {"w0": 10, "w1": 11, "w3": 13}
    assert_eq(ran(s.map(mapping)), ps.map(mapping))
    assert_eq(ran(s.map({"w0": 1, "w1": 2, "w2": 3, "w3": 4})), ps.map({"w0": 1, "w1": 2, "w2": 3, "w3": 4}))
    lookup = pd.Series(["zero", "one", "two"], index=["w0", "w1", "w2"])
    assert_eq(ran(s.map(lookup)), ps.map(lookup))
    assert_eq(ran(s.map(md.Series(lookup, chunk_size=2))), ps.map(lookup))
    assert_eq(ran(s.map(str.upper)), ps.map(str.upper))
    pf = pdf["f"]
    assert_eq(ran(md.Series(pf, chunk_size=cs).map(lambda x: x * 10, na_action="ignore")),
              pf.map(lambda x: x * 10, na_action="ignore"))
    assert_eq(ran(md.Series(pf, chunk_size=cs).map(lambda x, y: x + y, y=1)), pf.map(lambda x, y: x + y, y=1))


def test_series_map_errors():
    s = md.Series(frame()["s"], chunk_size=5)
    with pytest.raises(ValueError) as want:
        frame()["s"].map({}, na_action="all")
    with pytest.raises(ValueError) as got:
        s.map({}, na_action="all")
    assert str(got.value) == str(want.value)


# ----------------------------------------------------------------- DataFrame.map, transform
@pytest.mark.parametrize("cs", PARTS)
def test_dataframe_map(cs):
    pdf = frame()
    df = md.DataFrame(pdf, chunk_size=cs)
    assert_eq(ran(df.map(lambda v: str(v)[:3])), pdf.map(lambda v: str(v)[:3]))
    assert_eq(ran(df[["i", "f"]].map(lambda v: v * 2, na_action="ignore")), pdf[["i", "f"]].map(lambda v: v * 2, na_action="ignore"))
    assert_eq(ran(df[["i"]].applymap(lambda v, k: v + k, k=2)), pdf[["i"]].map(lambda v, k: v + k, k=2))
    with pytest.raises(ValueError, match="na_action must be 'ignore' or None"):
        df.map(str, na_action="x")


@pytest.mark.parametrize("cs", PARTS)
def test_transform(cs):
    pdf = frame()[["i", "f"]]
    df = md.DataFrame(pdf, chunk_size=cs)
    for func in [np.sqrt, "abs", "sqrt", lambda c: c - c.mean(), "cumsum", ["abs", "exp"], {"f": "abs", "i": np.negative},
                 {"i": ["abs", lambda c: c.rank()]}]:
        assert_eq(ran(df.transform(func)), pdf.transform(func))
    assert_eq(ran(df.transform(lambda r: r / r.sum(), axis=1)), pdf.transform(lambda r: r / r.sum(), axis=1))
    ps = pdf["f"]
    s = md.Series(ps, chunk_size=cs)
    for func in ["abs", np.exp, lambda x: x + 1, "cumsum", ["sqrt", "abs"], lambda x: x.fillna(x.mean())]:
        assert_eq(ran(s.transform(func)), ps.transform(func))


def test_transform_errors():
    pdf = frame()[["i", "f"]]
    df = md.DataFrame(pdf, chunk_size=5)
    with pytest.raises(ValueError, match="Function did not transform"):
        df.transform(lambda c: c.iloc[:2]).execute()
    with pytest.raises(KeyError):
        df.transform({"nope": "abs"})


# ----------------------------------------------------------------- map_partitions
@pytest.mark.parametrize("cs", PARTS)
def test_map_partitions(cs):
    pdf = frame()
    df = md.DataFrame(pdf, chunk_size=cs)
    result = ran(df.map_partitions(lambda p: p[p["i"] > 0]))
    assert_eq(result, pdf[pdf["i"] > 0])
    assert result.shape == pdf[pdf["i"] > 0].shape  # row counts known once it ran
    assert_eq(ran(df.map_chunk(lambda p, k: p.assign(j=p["i"] * k), 3)), pdf.assign(j=pdf["i"] * 3))
    assert_eq(ran(df["f"].map_partitions(lambda p: p.fillna(-1).astype(int))), pdf["f"].fillna(-1).astype(int))
    other = md.DataFrame(pdf, chunk_size=cs)
    assert_eq(ran(df.map_partitions(lambda a, b: a["i"] + b["i"], other)), pdf["i"] * 2)


def test_map_partitions_declared_output():
    pdf = frame()
    df = md.DataFrame(pdf, chunk_size=5)
    func = lambda p: p["s"].str.len()
    result = df.map_partitions(func, dtypes=np.dtype(np.int64), output_type="series")
    assert result.meta.dtype == np.int64
    assert_eq(result, func(pdf), check_meta=False)
    idx = df.map_partitions(lambda p: p.index, dtypes=np.dtype(object), output_type="index")
    assert isinstance(idx, md.Index)
    assert idx.execute().fetch().tolist() == pdf.index.tolist()
    with pytest.raises(TypeError, match="needs a callable"):
        df.map_partitions("nope")
    with pytest.raises(TypeError, match="does not return a pandas object"):
        df.map_partitions(lambda p: len(p))


@pytest.mark.parametrize("cs", PARTS)
def test_declared_output_is_held_to_what_the_function_returns(cs):
    pdf = frame()
    df = md.DataFrame(pdf, chunk_size=cs)
    meta = pdf[["i", "f"]].iloc[:0]
    with pytest.raises(ValueError, match=r"map_partitions\(<lambda>\): the function returned columns \['i', 'c'\] "
                                         r"with dtypes \{'i': 'int64', 'c': 'float64'\}; meta declares columns "
                                         r"\['i', 'f'\] with dtypes \{'i': 'int64', 'f': 'float64'\}"):
        df.map_partitions(lambda p: p[["i", "f"]].rename(columns={"f": "c"}), meta=meta).execute()
    with pytest.raises(ValueError, match=r"columns \['f', 'i'\].*meta declares columns \['i', 'f'\]"):
        df.map_partitions(lambda p: p[["f", "i"]], meta=meta).execute()  # the order counts too
    with pytest.raises(TypeError, match=r"the function returned a DataFrame with columns \['i'\].*; dtypes "
                                         r"declares a Series"):
        df.map_partitions(lambda p: p[["i"]], dtypes=np.dtype(np.int64), output_type="series").execute()
    with pytest.raises(ValueError, match=r"map_partitions\(<lambda>\): the function returned a Series of dtype "
                                         r"str; dtypes declares dtype float64"):
        df.map_partitions(lambda p: p["s"], dtypes=np.dtype(np.float64), output_type="series").execute()
    with pytest.raises(ValueError, match=r"apply\(<lambda>\): the function returned a Series of dtype float64; "
                                         r"dtypes declares dtype int64"):
        df.apply(lambda r: r["f"], axis=1, dtypes=np.dtype(np.int64)).execute()  # NaNs do not fit in ints
    with pytest.raises(ValueError, match=r"map\(<lambda>\): .*'i' is str, not int64"):
        df[["i"]].map(lambda v: f"v{v}", dtypes={"i": np.int64}).execute()


@pytest.mark.parametrize("cs", PARTS)
def test_declared_output_takes_values_that_convert_without_loss(cs):
    pdf = frame()
    df = md.DataFrame(pdf, chunk_size=cs)
    as_float = pdf[["i"]].astype(np.float64)
    assert_eq(df.map_partitions(lambda p: p[["i"]], meta=as_float.iloc[:0]), as_float)
    assert_eq(df["i"].transform("abs", dtypes=np.dtype(np.float64)), pdf["i"].abs().astype(np.float64))
    # a whole-column transform runs once, on the gathered frame: checked there
    centred = pdf[["i", "f"]].transform(lambda c: c - c.mean())
    assert_eq(df[["i", "f"]].transform(lambda c: c - c.mean(), meta=centred.iloc[:0]), centred)
    with pytest.raises(ValueError, match=r"transform\(<lambda>\): the function returned columns \['i', 'f'\].*"
                                         r"meta declares columns \['i', 'g'\]"):
        df[["i", "f"]].transform(lambda c: c - c.mean(), meta=centred.iloc[:0].set_axis(["i", "g"], axis=1)).execute()


def test_chunk_ops_pickle():
    """Chunk ops carry what they run in their parameters: they reach workers pickled, without their outputs."""
    pdf = frame()
    func = lambda r: r["i"] if r["i"] > 0 else None
    result = ran(md.DataFrame(pdf, chunk_size=5).apply(func, axis=1))
    for chunk in result.chunks:
        mapped = chunk.op.inputs[0] if type(chunk.op).__name__ == "Conform" else chunk
        part = mapped.op.inputs[0].op.execute()  # the partition a FromPandas chunk holds
        loaded = cloudpickle.loads(cloudpickle.dumps(mapped.op.bare()))
        assert loaded.outputs == []
        pd.testing.assert_series_equal(loaded.execute(part), part.apply(func, axis=1))
    conformed = [c.op for c in result.chunks if type(c.op).__name__ == "Conform"]
    assert conformed, "partitions typed int64 and float64 must be made alike"
    assert pickle.loads(pickle.dumps(conformed[0].bare())).meta.dtype == np.float64


# ----------------------------------------------------------------- unifying data-dependent dtypes
def test_common_meta_votes_without_all_missing_partitions():
    ints = pd.Series([1, 2]).iloc[:1]
    missing_object = pd.Series([None], dtype=object)
    meta = common_meta([ints, missing_object], [False, True], ints.iloc[:0])
    assert meta.dtype == np.float64  # int with a hole is float, as pandas types the whole
    bools = pd.Series([True])
    assert common_meta([bools, missing_object], [False, True], bools.iloc[:0]).dtype == object
    strs = pd.Series(["a"], dtype="str")
    assert common_meta([strs, pd.Series([np.nan])], [False, True], strs.iloc[:0]).dtype == strs.dtype
    assert common_meta([ints.iloc[:0], ints.iloc[:0]], [True, True], ints.iloc[:0]).dtype == np.int64


def test_conform():
    meta = pd.DataFrame({"a": pd.Series([], dtype=float), "b": pd.Series([], dtype=object)})
    value = pd.DataFrame({"a": [1, 2]})
    out = conform(value, meta, pad_none=True)
    assert out.dtypes.tolist() == [np.float64, object]
    assert out["b"].tolist() == [None, None]
    assert conform(pd.Series([], dtype=object), pd.Series([], dtype=float)).dtype == np.float64
