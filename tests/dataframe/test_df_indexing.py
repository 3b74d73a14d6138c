"""``[]``, ``loc``, ``iloc``, ``at``, ``iat``, ``head``, ``tail`` and assignment, against pandas across partitionings.

(Named ``test_df_indexing`` because ``tests/tensor/test_indexing.py`` takes the
plain name: pytest cannot collect two test modules of one basename here.)
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, partitionings, same_error_when_run as same_error

import mars.dataframe as md
import mars.tensor as mt
from mars.core.operator import Tiled
from mars.dataframe.core import PandasOperator, chunk_index_of, chunk_shape_of, nsplits_of
from mars.dataframe.map import map_partitions
from mars.dataframe.selection import positions_plan, slice_plan

N = 12


def frame(index: str = "range", n: int = N) -> pd.DataFrame:
    """ints, floats with NaN, strings and datetimes, on a default, string or unsorted int index."""
    idx = {"range": None, "str": [f"r{k:02d}" for k in range(n)],
           "unsorted": np.random.default_rng(1).permutation(n) * 10}[index]
    return pd.DataFrame({
        "i": np.arange(n) * 3 - 5,
        "f": np.where(np.arange(n) % 3 == 1, np.nan, np.arange(n) / 2),
        "s": [f"s{k % 5}" for k in range(n)],
        "t": pd.date_range("2020-01-01", periods=n, freq="D"),
    }, index=idx)


INDEXES = ["range", "str", "unsorted"]
PARTS = partitionings(N)


def lazy(pdf: pd.DataFrame, chunk_size) -> md.DataFrame:
    return md.DataFrame(pdf, chunk_size=chunk_size)



def gt(obj, col, threshold):
    """A lazy boolean Series (``obj[col] > threshold``) built without the arithmetic module."""
    return map_partitions(lambda d: d[col] > threshold, obj)


# ----------------------------------------------------------------- plans (no execution)
def test_slice_plan_covers_numpy_semantics():
    rows = [3, 0, 4, 1, 2]
    values = np.arange(sum(rows))
    for key in [slice(None), slice(2, 9), slice(None, None, -1), slice(8, 1, -3), slice(-3, None), slice(1, 9, 4),
                slice(5, 5), slice(None, None, 7)]:
        starts = np.cumsum([0] + rows)
        got = np.concatenate([values[starts[i]:starts[i] + rows[i]][sl] for i, sl, _ in slice_plan(rows, key)] or [[]])
        assert got.tolist() == values[key].tolist(), key


def test_positions_plan_keeps_order_and_repeats():
    rows = [3, 0, 4, 1, 2]
    values = np.arange(sum(rows))
    starts = np.cumsum([0] + rows)
    for pos in [np.array([0, 1, 2, 7, 9]), np.array([9, 0, 3, 3, 8, 1]), np.array([], dtype=np.int64)]:
        out = []
        for inputs, takes, order, size in positions_plan(rows, pos):
            pieces = np.concatenate([values[starts[i]:starts[i] + rows[i]][t] for i, t in zip(inputs, takes)])
            out.extend(pieces if order is None else pieces[order])
            assert len(pieces) == size
        assert out == pos.tolist()


# ----------------------------------------------------------------- columns
@pytest.mark.parametrize("cs", PARTS)
def test_column_and_columns(cs):
    pdf = frame("str")
    df = lazy(pdf, cs)
    assert_eq(df["f"], pdf["f"])
    assert_eq(df[["t", "i"]], pdf[["t", "i"]])
    assert_eq(df[pd.Index(["s"])], pdf[pd.Index(["s"])])
    assert_eq(df.iloc[:, [2, 0]], pdf.iloc[:, [2, 0]])
    assert_eq(df.iloc[:, 1], pdf.iloc[:, 1])
    assert_eq(df.loc[:, "i":"s"], pdf.loc[:, "i":"s"])
    assert_eq(df.loc[:, [True, False, False, True]], pdf.loc[:, [True, False, False, True]])


def test_missing_columns_raise_pandas_key_error_at_build_time():
    pdf = frame()
    df = lazy(pdf, 5)
    same_error(lambda: df["nope"], lambda: pdf["nope"])
    same_error(lambda: df[["i", "nope"]], lambda: pdf[["i", "nope"]])
    same_error(lambda: df[["x", "y"]], lambda: pdf[["x", "y"]])
    same_error(lambda: df.loc[:, ["x"]], lambda: pdf.loc[:, ["x"]])
    same_error(lambda: df.iloc[:, 9], lambda: pdf.iloc[:, 9])


def test_duplicate_column_labels():
    pdf = pd.DataFrame(np.arange(12).reshape(4, 3), columns=["a", "b", "a"])
    df = lazy(pdf, 3)
    assert_eq(df["a"], pdf["a"])
    assert_eq(df.iloc[:, [2, 1]], pdf.iloc[:, [2, 1]])
    assert [label for label, _ in df.items()] == ["a", "b", "a"]


# ----------------------------------------------------------------- boolean masks
@pytest.mark.parametrize("index", INDEXES)
@pytest.mark.parametrize("cs", PARTS)
def test_lazy_boolean_mask(index, cs):
    pdf = frame(index)
    df = lazy(pdf, cs)
    assert_eq(df[gt(df, "i", 6)], pdf[pdf["i"] > 6])
    assert_eq(df.loc[gt(df, "f", 1)], pdf.loc[pdf["f"] > 1])
    assert_eq(df["s"][gt(df, "i", 0)], pdf["s"][pdf["i"] > 0])
    assert_eq(df[gt(df, "i", 100)], pdf[pdf["i"] > 100])
    assert_eq(df.loc[lambda d: gt(d, "i", 3), ["s"]], pdf.loc[lambda d: d["i"] > 3, ["s"]])
    assert_eq(df[lambda d: ["t", "f"]], pdf[lambda d: ["t", "f"]])


@pytest.mark.parametrize("cs", PARTS)
def test_mask_from_other_partitioning_is_aligned_on_the_index(cs):
    pdf = frame("unsorted")
    df = lazy(pdf, cs)
    reordered = pdf.sort_index()
    mask = map_partitions(lambda d: d["i"] % 2 == 0, md.DataFrame(reordered, chunk_size=5))
    assert_eq(df[mask], pdf[pdf["i"] % 2 == 0])


def test_unalignable_mask_raises_pandas_error():
    pdf = frame()
    short = pdf.iloc[:6]
    mask = map_partitions(lambda d: d["i"] > 0, md.DataFrame(short, chunk_size=4))
    same_error(lambda: lazy(pdf, 5)[mask], lambda: pdf[short["i"] > 0])


@pytest.mark.parametrize("cs", PARTS)
def test_boolean_array_and_tensor_masks(cs):
    pdf = frame("str")
    df = lazy(pdf, cs)
    bools = (np.arange(N) % 3 == 0)
    assert_eq(df[bools], pdf[bools])
    assert_eq(df[list(bools)], pdf[list(bools)])
    assert_eq(df.iloc[bools], pdf.iloc[bools])
    assert_eq(df["i"][bools], pdf["i"][bools])
    assert_eq(df[mt.tensor(bools, chunk_size=5)], pdf[bools])
    assert_eq(df[pd.Series(bools, index=pdf.index[::-1])], pdf[pd.Series(bools, index=pdf.index[::-1])])


def test_boolean_array_of_wrong_length():
    pdf = frame()
    df = lazy(pdf, 5)
    same_error(lambda: df[[True, False]], lambda: pdf[[True, False]])
    same_error(lambda: df.iloc[np.array([True, False])], lambda: pdf.iloc[np.array([True, False])])
    filtered = df[gt(df, "i", 0)]  # unknown length: checked when run
    with pytest.raises(IndexError, match="Boolean index has wrong length: 2 instead of"):
        filtered.iloc[np.array([True, False])].execute()


# ----------------------------------------------------------------- iloc
@pytest.mark.parametrize("index", INDEXES)
@pytest.mark.parametrize("cs", PARTS)
def test_iloc_slices(index, cs):
    pdf = frame(index)
    df = lazy(pdf, cs)
    for key in [slice(2, 9), slice(None, None, 2), slice(None, None, -1), slice(-4, None), slice(10, 1, -3),
                slice(5, 5), slice(3, 100), slice(None, -7), slice(-100, 2)]:
        assert_eq(df.iloc[key], pdf.iloc[key])
        assert_eq(df["f"].iloc[key], pdf["f"].iloc[key])


@pytest.mark.parametrize("cs", PARTS)
def test_iloc_lists_and_rows_cols(cs):
    pdf = frame("unsorted")
    df = lazy(pdf, cs)
    for key in [[0, 3, 4], [11, 0, 5, 5, -1], [], np.array([7, 2])]:
        assert_eq(df.iloc[key], pdf.iloc[key])
        assert_eq(df["t"].iloc[key], pdf["t"].iloc[key])
    assert_eq(df.iloc[[5, 1], [3, 0]], pdf.iloc[[5, 1], [3, 0]])
    assert_eq(df.iloc[2:8:2, 1:3], pdf.iloc[2:8:2, 1:3])
    assert_eq(df.iloc[1:4, 2], pdf.iloc[1:4, 2])


@pytest.mark.parametrize("cs", PARTS)
def test_iloc_single_row_and_scalars(cs):
    pdf = frame("str")
    df = lazy(pdf, cs)
    for i in [0, 7, -1, -N]:
        row = df.iloc[i]
        assert row.shape == (4,) and row.dtype == pdf.iloc[i].dtype
        assert_eq(row, pdf.iloc[i], check_meta=False)  # the row's name (its label) is known only when run
        assert_eq(df["i"].iloc[i], pdf["i"].iloc[i])
        assert_eq(df.iloc[i, 1], pdf.iloc[i, 1])
        assert_eq(df.iat[i, 2], pdf.iat[i, 2])
        assert_eq(df["f"].iat[i], pdf["f"].iat[i])


def test_iloc_out_of_bounds():
    pdf = frame()
    df = lazy(pdf, 5)
    same_error(lambda: df.iloc[N], lambda: pdf.iloc[N])
    same_error(lambda: df.iloc[[0, N]], lambda: pdf.iloc[[0, N]])
    same_error(lambda: df["i"].iloc[-N - 1], lambda: pdf["i"].iloc[-N - 1])
    same_error(lambda: df.iloc["a"], lambda: pdf.iloc["a"])
    same_error(lambda: df.iloc[1, 2, 3], lambda: pdf.iloc[1, 2, 3])
    filtered = df[gt(df, "i", 20)]  # two rows, known only when run
    with pytest.raises(IndexError, match="single positional indexer is out-of-bounds"):
        filtered.iloc[5].execute()


# ----------------------------------------------------------------- slices through []
@pytest.mark.parametrize("cs", PARTS)
def test_getitem_slices_follow_pandas_positional_rule(cs):
    pdf = frame("str")
    df = lazy(pdf, cs)
    assert_eq(df[2:7], pdf[2:7])
    assert_eq(df["r03":"r08"], pdf["r03":"r08"])
    assert_eq(df["s"]["r01":"r04"], pdf["s"]["r01":"r04"])
    floats = pd.Series(np.arange(N), index=np.arange(N) * 0.5)
    assert_eq(md.Series(floats, chunk_size=cs)[1:3], floats[1:3])  # positions, even on a float index
    assert_eq(md.Series(floats, chunk_size=cs)[1.0:3.0], floats[1.0:3.0])  # labels
    ints = pd.Series(np.arange(N), index=np.arange(N) + 100)
    assert_eq(md.Series(ints, chunk_size=cs)[1:3], ints[1:3])  # positions on an int index


# ----------------------------------------------------------------- loc
@pytest.mark.parametrize("cs", PARTS)
def test_loc_label_slices_on_a_sorted_index(cs):
    pdf = frame("str")
    df = lazy(pdf, cs)
    for key in [slice("r02", "r07"), slice("r05", None), slice(None, "r03"), slice("a", "r01"), slice("r10", "zz"),
                slice("r035", "r095"), slice("r02", "r10", 3), slice("zz", None)]:
        assert_eq(df.loc[key], pdf.loc[key])
        assert_eq(df["t"].loc[key], pdf["t"].loc[key])
    desc = pdf.iloc[::-1]
    assert_eq(lazy(desc, cs).loc["r09":"r03"], desc.loc["r09":"r03"])
    assert_eq(lazy(desc, cs).loc["r095":"r035"], desc.loc["r095":"r035"])


def test_loc_slice_reads_only_overlapping_partitions():
    pdf = frame("str", n=40)
    df = lazy(pdf, 5)
    result = df.loc["r12":"r17"]
    result.execute()
    assert len(result.chunks) == 2
    assert_eq(result, pdf.loc["r12":"r17"])


@pytest.mark.parametrize("cs", PARTS)
def test_loc_label_slices_on_an_unsorted_index(cs):
    pdf = frame("unsorted")
    df = lazy(pdf, cs)
    labels = list(pdf.index)
    for a, b in [(labels[2], labels[8]), (labels[5], None), (None, labels[4]), (labels[7], labels[3])]:
        assert_eq(df.loc[a:b], pdf.loc[a:b])


@pytest.mark.parametrize("cs", partitionings(6))
def test_loc_label_slice_with_repeated_labels(cs):
    dup = pd.DataFrame({"v": range(6)}, index=[3, 1, 1, 2, 5, 3])
    assert_eq(lazy(dup, cs).loc[1:5], dup.loc[1:5])
    same = pd.DataFrame({"v": range(6)}, index=[5, 5, 4, 4, 4, 1])
    assert_eq(lazy(same, cs).loc[4:2], same.loc[4:2])


def test_loc_slice_errors_on_an_unsorted_index():
    pdf = frame("unsorted")
    df = lazy(pdf, 5)
    same_error(lambda: df.loc[1:50], lambda: pdf.loc[1:50])
    same_error(lambda: df.loc[pdf.index[2]:1], lambda: pdf.loc[pdf.index[2]:1])
    dup = pd.DataFrame({"v": range(4)}, index=[3, 1, 2, 1])
    same_error(lambda: lazy(dup, 2).loc[1:2], lambda: dup.loc[1:2])
    same_error(lambda: lazy(frame("str"), 5).loc[1:3], lambda: frame("str").loc[1:3])


@pytest.mark.parametrize("index", ["str", "unsorted"])
@pytest.mark.parametrize("cs", PARTS)
def test_loc_labels(index, cs):
    pdf = frame(index)
    df = lazy(pdf, cs)
    labels = list(pdf.index)
    pick = [labels[9], labels[0], labels[4], labels[9]]
    assert_eq(df.loc[pick], pdf.loc[pick])
    assert_eq(df["s"].loc[pick], pdf["s"].loc[pick])
    assert_eq(df["s"][pick], pdf["s"][pick])
    assert_eq(df.loc[pick, ["t", "f"]], pdf.loc[pick, ["t", "f"]])
    assert_eq(df.loc[labels[3]], pdf.loc[labels[3]], check_meta=False)  # a row's name is its label
    assert_eq(df.loc[labels[3], "f"], pdf.loc[labels[3], "f"])
    assert_eq(df["i"].loc[labels[6]], pdf["i"].loc[labels[6]])
    assert_eq(df["i"][labels[6]], pdf["i"][labels[6]])
    assert_eq(df.at[labels[2], "s"], pdf.at[labels[2], "s"])
    assert_eq(df["t"].at[labels[1]], pdf["t"].at[labels[1]])


def test_loc_with_duplicate_labels_and_missing_labels():
    pdf = pd.DataFrame({"v": range(6), "w": list("abcdef")}, index=[4, 2, 4, 9, 2, 4])
    df = lazy(pdf, 4)
    assert_eq(df.loc[[2, 9]], pdf.loc[[2, 9]])
    same_error(lambda: df.loc[[2, 7]], lambda: pdf.loc[[2, 7]])
    unique = pdf.iloc[[0, 1, 3]]
    same_error(lambda: lazy(unique, 2).loc[[7, 8]], lambda: unique.loc[[7, 8]])
    same_error(lambda: df["v"].loc[7], lambda: pdf["v"].loc[7])


def test_loc_on_a_multiindex_first_level():
    pdf = pd.DataFrame({"v": range(6)}, index=pd.MultiIndex.from_arrays([list("aabbcc"), [1, 2, 1, 2, 1, 2]]))
    df = lazy(pdf, 4)
    assert_eq(df.loc["b"], pdf.loc["b"])
    assert_eq(df.loc[[("a", 2), ("c", 1)]], pdf.loc[[("a", 2), ("c", 1)]])
    assert_eq(df["v"].loc[("b", 2)], pdf["v"].loc[("b", 2)])
    assert_eq(df["v"].loc["c"], pdf["v"].loc["c"])


def test_scalar_access_rejects_lists():
    df = lazy(frame(), 5)
    with pytest.raises(ValueError, match="Invalid call for scalar access"):
        df.at[[1, 2], "i"]
    with pytest.raises(ValueError, match="iAt based indexing can only have integer indexers"):
        df.iat[1, "i"]


# ----------------------------------------------------------------- head / tail
@pytest.mark.parametrize("cs", PARTS)
def test_head_tail(cs):
    pdf = frame("unsorted")
    df = lazy(pdf, cs)
    for n in [0, 1, 5, N, N + 3, -2, -N - 1]:
        assert_eq(df.head(n), pdf.head(n))
        assert_eq(df.tail(n), pdf.tail(n))
        assert_eq(df["s"].head(n), pdf["s"].head(n))
        assert_eq(df["s"].tail(n), pdf["s"].tail(n))
    filtered = df[gt(df, "i", 3)]
    assert_eq(filtered.head(3), pdf[pdf["i"] > 3].head(3))
    assert_eq(filtered.tail(4), pdf[pdf["i"] > 3].tail(4))


SEEN: list = []


def keep_even(part):
    SEEN.append(int(part["v"].iloc[0]))
    return part[part["v"] % 2 == 0]


def test_head_after_a_filter_computes_only_the_partitions_it_needs():
    pdf = pd.DataFrame({"v": np.arange(100)})
    df = md.DataFrame(pdf, chunk_size=10)
    filtered = map_partitions(keep_even, df, same_rows=False)
    SEEN.clear()
    assert_eq(filtered.head(7), pdf[pdf["v"] % 2 == 0].head(7))
    assert sorted(SEEN) == [0, 10]  # 5 rows from each of the first two partitions


def test_head_on_known_sizes_uses_leading_partitions_only():
    df = md.DataFrame(pd.DataFrame({"v": np.arange(100)}), chunk_size=10)
    head = df.head(15)
    head.execute()
    assert head.nsplits == ((10, 5), (1,))
    assert head.chunks[0] is df.chunks[0]  # a whole partition is reused, not copied


# ----------------------------------------------------------------- assignment
@pytest.mark.parametrize("index", INDEXES)
@pytest.mark.parametrize("cs", PARTS)
def test_setitem_values(index, cs):
    pdf = frame(index)
    df = lazy(pdf, cs)
    expected = pdf.copy()
    before = df[["i", "f"]]
    df["c0"] = 7
    expected["c0"] = 7
    df["f"] = "x"
    expected["f"] = "x"
    df["c1"] = list(range(N))
    expected["c1"] = list(range(N))
    df["c2"] = np.arange(N) * 0.5
    expected["c2"] = np.arange(N) * 0.5
    df["c3"] = pd.Series(np.arange(N), index=pdf.index[::-1])  # reindexed, as pandas does
    expected["c3"] = pd.Series(np.arange(N), index=pdf.index[::-1])
    df["c4"] = mt.arange(N, chunk_size=5) * 2
    expected["c4"] = np.arange(N) * 2
    df["c5"] = df["i"]
    expected["c5"] = expected["i"]
    df[["c6", "c7"]] = 0
    expected[["c6", "c7"]] = 0
    assert_eq(df, expected)
    assert_eq(before, pdf[["i", "f"]])  # built before: unchanged


@pytest.mark.parametrize("cs", PARTS)
def test_setitem_lazy_series_from_another_partitioning_is_aligned_left(cs):
    pdf = frame("unsorted")
    df = lazy(pdf, cs)
    other = pdf["i"].iloc[2:].sort_index() * 10
    df["o"] = md.Series(other, chunk_size=4)
    expected = pdf.copy()
    expected["o"] = other
    assert_eq(df, expected, check_meta=False)  # missing rows make the ints float, found when aligning


def test_setitem_wrong_length():
    pdf = frame()
    df = lazy(pdf, 5)

    def pandas_set():
        pdf.copy()["x"] = [1, 2]

    same_error(lambda: df.__setitem__("x", [1, 2]), pandas_set)
    with pytest.raises(ValueError, match=r"Length of values \(3\) does not match length of index \(12\)"):
        df["x"] = mt.arange(3)


@pytest.mark.parametrize("cs", PARTS)
def test_setitem_with_masks(cs):
    pdf = frame("str")[["i", "f"]]
    df = lazy(pdf, cs)
    df[gt(df, "i", 10)] = 0  # rows where a boolean Series is true
    expected = pdf.copy()
    expected[expected["i"] > 10] = 0
    assert_eq(df, expected)
    df[map_partitions(lambda d: d > 2, df)] = -1.0  # values where a boolean DataFrame is true
    expected[expected > 2] = -1.0
    assert_eq(df, expected)


@pytest.mark.parametrize("cs", PARTS)
def test_assign_and_insert(cs):
    pdf = frame("unsorted")
    df = lazy(pdf, cs)
    assert_eq(df.assign(a=1, b=lambda d: d["i"], c=np.arange(N)),
              pdf.assign(a=1, b=lambda d: d["i"], c=np.arange(N)))
    expected = pdf.copy()
    expected.insert(1, "new", np.arange(N) * 2)
    df.insert(1, "new", np.arange(N) * 2)
    assert_eq(df, expected)
    same_error(lambda: df.insert(0, "i", 1), lambda: expected.copy().insert(0, "i", 1))
    same_error(lambda: df.insert(9, "z", 1), lambda: expected.copy().insert(9, "z", 1))


# ----------------------------------------------------------------- Index
def test_index_positions():
    pidx = pd.Index([f"k{i}" for i in range(N)], name="key")
    idx = md.Index(pidx, chunk_size=5)
    assert_eq(idx[2:9:3], pidx[2:9:3])
    assert_eq(idx[[4, 0]], pidx[[4, 0]])
    assert_eq(idx[-1], pidx[-1])
    same_error(lambda: idx[N], lambda: pidx[N])


# ----------------------------------------------------------------- pruning and head pushdown
READS: list = []


class FakeSource(PandasOperator):
    """A source reading row groups of a pandas frame; it can read fewer columns or row groups."""

    params = ("frame", "groups", "columns")
    unkeyed = ("frame",)

    @classmethod
    def tile(cls, op):
        out = op.outputs[0]
        chunks = [op.copy(groups=(g,)).new_chunk([], index=chunk_index_of(out.meta, i),
                                                  shape=chunk_shape_of(out.meta, 4), meta=out.meta)
                  for i, g in enumerate(op.groups)]
        return Tiled(chunks, nsplits_of(out.meta, [4] * len(chunks)))

    def execute(self):
        READS.append((self.groups, tuple(self.columns)))
        g = self.groups[0]
        return self.frame.iloc[4 * g:4 * g + 4][list(self.columns)]

    def with_columns(self, columns):
        return fake_source(self.frame, self.groups, columns)

    def with_head(self, n):
        return fake_source(self.frame, self.groups[:max(1, -(-n // 4))], self.columns)


def fake_source(pdf, groups=None, columns=None):
    groups = tuple(range(len(pdf) // 4)) if groups is None else tuple(groups)
    columns = list(pdf.columns) if columns is None else list(columns)
    meta = pdf.iloc[:0][columns]
    op = FakeSource(frame=pdf, groups=groups, columns=columns)
    return op.new_pandas([], meta, (4 * len(groups), len(columns)))


def test_column_pruning_and_head_pushdown_reach_the_source():
    pdf = frame("str")
    src = fake_source(pdf)
    READS.clear()
    assert_eq(src[["s", "i"]], pdf[["s", "i"]])
    assert {cols for _, cols in READS} == {("s", "i")}
    READS.clear()
    assert_eq(src["f"], pdf["f"])
    assert {cols for _, cols in READS} == {("f",)}
    READS.clear()
    assert_eq(src.loc[:, ["t"]], pdf.loc[:, ["t"]])
    assert {cols for _, cols in READS} == {("t",)}
    READS.clear()
    assert_eq(src[["i"]].head(3), pdf[["i"]].head(3))
    assert READS == [((0,), ("i",))]
    READS.clear()
    assert_eq(src["f"].head(6), pdf["f"].head(6))
    assert sorted(READS) == [((0,), ("f",)), ((1,), ("f",))]
    READS.clear()
    assert_eq(src.head(2), pdf.head(2))
    assert READS == [((0,), ("i", "f", "s", "t"))]


def test_head_pushdown_goes_through_row_local_methods():
    pdf = frame("str")
    src = fake_source(pdf)
    READS.clear()
    assert_eq(src.iloc[:, [1, 0]].rename(columns={"f": "F"}).head(2), pdf.iloc[:, [1, 0]].rename(columns={"f": "F"}).head(2))
    assert READS == [((0,), ("f", "i"))]
