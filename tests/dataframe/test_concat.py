"""concat along rows and columns against pandas, across partitionings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from df_testing import _check_meta, assert_eq, lazy, partitionings

import mars.dataframe as md
from mars.dataframe.map import map_partitions

N = 7


def _frames() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Frames sharing some columns: ints, bools, strings, datetimes and categoricals meet missing columns."""
    a = pd.DataFrame({
        "x": np.arange(N), "b": np.arange(N) % 2 == 0, "s": pd.Series(list("abcdefg"), dtype="str"),
        "t": pd.date_range("2020-01-01", periods=N),
    }, index=pd.Index(np.arange(N) * 2, name="i"))
    b = pd.DataFrame({"x": np.arange(5) * 0.5, "y": list("vwxyz"), "c": pd.Categorical(list("pqpqp"))},
                     index=pd.Index(np.arange(5) + 100, name="i"))
    c = pd.DataFrame({"s": pd.Series(["u", None, "w", "z"], dtype="str"), "x": [7, 8, 9, 10],
                      "c": pd.Categorical(list("qqpp"))}, index=list("klmn"))
    return a, b, c


def _chunks(frames: list, k: int) -> list:
    """The ``k``-th partitioning of each frame, shifted so the frames are cut differently."""
    out = []
    for j, f in enumerate(frames):
        options = partitionings(len(f))
        out.append(options[(k + j) % len(options)])
    return out


# ----------------------------------------------------------------- along rows
@pytest.mark.parametrize("k", range(5))
@pytest.mark.parametrize("kw", [{}, {"ignore_index": True}, {"join": "inner"}, {"sort": True},
                                {"keys": ["p", "q", "r"]}, {"keys": ["p", "q", "r"], "names": ["key", "row"]},
                                {"join": "inner", "ignore_index": True}])
def test_concat_rows(k, kw):
    frames = list(_frames())
    lazies = [lazy(f, c) for f, c in zip(frames, _chunks(frames, k))]
    assert_eq(md.concat(lazies, **kw), pd.concat(frames, **kw))


@pytest.mark.parametrize("k", range(5))
def test_concat_rows_same_columns_keeps_partitions(k):
    a = _frames()[0]
    parts = [a.iloc[:3], a.iloc[3:], a.iloc[:0], a]
    lazies = [lazy(p, c) for p, c in zip(parts, _chunks(parts, k))]
    result = md.concat(lazies)
    assert_eq(result, pd.concat(parts))
    assert result.nsplits[0] == tuple(n for lz in lazies for n in lz.nsplits[0])
    assert_eq(md.concat(lazies, ignore_index=True), pd.concat(parts, ignore_index=True))


@pytest.mark.parametrize("k", range(4))
def test_concat_series_and_frames(k):
    a, b, _ = _frames()
    s, unnamed = a["x"], pd.Series([1.5, 2.5], index=[50, 51])
    renamed = b["y"].rename("x")
    cuts = _chunks([s, renamed, unnamed, s], k)
    assert_eq(md.concat([lazy(s, cuts[0]), lazy(renamed, cuts[1])]), pd.concat([s, renamed]))
    assert_eq(md.concat([lazy(s, cuts[0]), lazy(unnamed, cuts[2])], ignore_index=True),
              pd.concat([s, unnamed], ignore_index=True))
    assert_eq(md.concat([lazy(a, cuts[0]), lazy(s, cuts[0]), lazy(unnamed, cuts[2])]), pd.concat([a, s, unnamed]))
    assert_eq(md.concat([lazy(s, cuts[0]), lazy(s, cuts[3])], keys=["one", "two"]),
              pd.concat([s, s], keys=["one", "two"]))


def test_concat_rows_with_pandas_none_and_mapping():
    a, b, c = _frames()
    assert_eq(md.concat([lazy(a, 3), b, None, lazy(c, 2)]), pd.concat([a, b, None, c]))
    assert_eq(md.concat({"p": lazy(a, 3), "q": lazy(b, 2)}), pd.concat({"p": a, "q": b}))
    assert_eq(md.concat({"p": lazy(a, 3), "q": lazy(b, 2)}, keys=["q"]), pd.concat({"p": a, "q": b}, keys=["q"]))
    assert_eq(md.concat([lazy(a, 3), None, lazy(b, 2)], keys=["p", "n", "q"]),
              pd.concat([a, None, b], keys=["p", "n", "q"]))


def test_concat_rows_of_unknown_size():
    a, b, _ = _frames()
    la = map_partitions(lambda df: df[df["x"] % 3 != 0], lazy(a, 3), same_rows=False)
    lb = map_partitions(lambda df: df[df["x"] > 0.5], lazy(b, 2), same_rows=False)
    expected = [a[a["x"] % 3 != 0], b[b["x"] > 0.5]]
    assert_eq(md.concat([la, lb], ignore_index=True), pd.concat(expected, ignore_index=True))
    assert_eq(md.concat([la, lb]), pd.concat(expected))


def test_concat_rows_partitions_share_dtypes():
    a, b, _ = _frames()
    result = md.concat([lazy(a, 3), lazy(b, 2)]).execute()
    per_part = map_partitions(lambda df: df.dtypes.astype(str).to_frame().T, result, same_rows=False).to_pandas()
    expected = pd.concat([a, b]).dtypes.astype(str)
    for column in expected.index:
        assert set(per_part[column]) == {expected[column]}, column


# ----------------------------------------------------------------- along columns
@pytest.mark.parametrize("chunk_size", partitionings(N))
def test_concat_columns_same_partitioning(chunk_size):
    a = _frames()[0]
    frame = lazy(a, chunk_size)
    other = map_partitions(lambda df: df[["x"]] * 2, frame)
    result = md.concat([frame, other], axis=1)
    assert result.partitioning == frame.partitioning  # partition by partition, no alignment
    assert_eq(result, pd.concat([a, a[["x"]] * 2], axis=1))
    assert_eq(md.concat([frame, other], axis=1, keys=["l", "r"]), pd.concat([a, a[["x"]] * 2], axis=1, keys=["l", "r"]))
    assert_eq(md.concat([frame, other], axis=1, ignore_index=True),
              pd.concat([a, a[["x"]] * 2], axis=1, ignore_index=True))


@pytest.mark.parametrize("k", range(5))
@pytest.mark.parametrize("kw", [{}, {"join": "inner"}, {"sort": True}, {"keys": ["p", "q", "r"]},
                                {"ignore_index": True}, {"join": "inner", "sort": True}])
def test_concat_columns_differing_indexes(k, kw):
    a = pd.DataFrame({"x": np.arange(6), "y": list("abcdef")}, index=[5, 3, 9, 1, 0, 7])
    b = pd.Series([1.5, 2.5, 3.5, 4.5], index=[9, 2, 5, 8], name="z")
    c = pd.DataFrame({"w": [True, False, True]}, index=[0, 5, 4])
    frames = [a, b, c]
    lazies = [lazy(f, cs) for f, cs in zip(frames, _chunks(frames, k))]
    expected = pd.concat(frames, axis=1, **kw)
    result = md.concat(lazies, axis=1, **kw)
    assert_eq(result, expected, check_meta=False)
    _check_meta(result.meta, expected)  # missing rows make ints float: known once tiled


@pytest.mark.parametrize("k", range(5))
def test_concat_columns_equal_indexes_cut_differently(k):
    a = _frames()[0]
    b = pd.DataFrame({"z": np.arange(N) * 1.5}, index=a.index)
    cuts = _chunks([a, b], k)
    assert_eq(md.concat([lazy(a, cuts[0]), lazy(b, cuts[1])], axis=1), pd.concat([a, b], axis=1))
    assert_eq(md.concat([lazy(a, cuts[0]), lazy(b, cuts[1])], axis=1, sort=True),
              pd.concat([a, b], axis=1, sort=True))


def test_concat_columns_duplicate_labels_that_differ_fail_like_pandas():
    a = pd.DataFrame({"x": [1, 2, 3]}, index=[0, 0, 1])
    b = pd.DataFrame({"y": [4, 5]}, index=[0, 2])
    with pytest.raises(pd.errors.InvalidIndexError):
        pd.concat([a, b], axis=1)
    with pytest.raises(pd.errors.InvalidIndexError):
        md.concat([lazy(a, 2), lazy(b, 1)], axis=1).execute()


# ----------------------------------------------------------------- errors
def test_concat_errors_at_build_time():
    a = lazy(_frames()[0], 3)
    with pytest.raises(ValueError, match="No objects to concatenate"):
        md.concat([])
    with pytest.raises(ValueError, match="All objects passed were None"):
        md.concat([None, None])
    with pytest.raises(TypeError, match="first argument must be an iterable of pandas objects"):
        md.concat(a)
    with pytest.raises(ValueError, match="Only can inner \\(intersect\\) or outer \\(union\\) join"):
        md.concat([a, a], join="left")
    with pytest.raises(ValueError, match="Indexes have overlapping values"):
        md.concat([a, a], axis=1, verify_integrity=True)
    with pytest.raises(TypeError, match="cannot concatenate object of type"):
        md.concat([a, [1, 2]])
    with pytest.raises(NotImplementedError, match="verify_integrity"):
        md.concat([a, a], verify_integrity=True)
