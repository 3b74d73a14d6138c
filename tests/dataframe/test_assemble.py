"""Joining row partitions a column at a time (mars.dataframe.assemble): equal to ``pd.concat``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mars
import mars.dataframe as md
from mars.dataframe import assemble
from mars.dataframe.assemble import join_rows
from mars.dataframe.core import concat_values

SIZES = [(7,), (3, 4), (2, 1, 4), (1, 1, 1, 1, 1, 1, 1)]


def _frame(n: int, start: int) -> pd.DataFrame:
    rng = np.random.default_rng(start)
    return pd.DataFrame({
        "i": np.arange(start, start + n), "f": rng.random(n), "f32": rng.random(n).astype("float32"),
        "b": rng.random(n) > 0.5, "u8": np.arange(n, dtype="uint8"), "z": np.ones(n, dtype=complex),
        "t": pd.date_range("2020", periods=n, freq="s", unit="us"),
        "td": pd.to_timedelta(np.arange(n), unit="s"),
        "o": pd.array([f"o{k}" for k in range(n)], dtype=object),
        "s": pd.array([f"s{k}" if k % 3 else None for k in range(n)], dtype="str"),
        "c": pd.Categorical(["p"] * n, categories=["p", "q"]),
        "tz": pd.date_range("2020", periods=n, freq="h", tz="UTC"),
        "I": pd.array([k if k % 2 else None for k in range(n)], dtype="Int64"),
    }, index=pd.RangeIndex(start, start + n, name="r")).astype({"o": object})


def _parts(sizes: tuple) -> list[pd.DataFrame]:
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return [_frame(n, int(s)) for n, s in zip(sizes, starts)]


@pytest.mark.parametrize("threaded", [False, True])
@pytest.mark.parametrize("sizes", SIZES[1:])
def test_frames_equal_pd_concat(monkeypatch, sizes, threaded):
    monkeypatch.setattr(assemble, "THREADED_BYTES", 0 if threaded else 1 << 62)  # the pieces copied on threads
    parts = _parts(sizes)
    out = join_rows(parts, min_bytes=0)
    expected = pd.concat(parts)
    pd.testing.assert_frame_equal(out, expected)
    assert isinstance(out.index, pd.RangeIndex) and out.index.name == "r"
    assert out["o"].dtype == object  # object strings stay object (nothing re-inferred)


def test_result_is_writable_and_independent():
    parts = _parts((3, 4))
    out = join_rows(parts, min_bytes=0)
    out.iloc[0, 0] = 100
    out.loc[out.index[1], "f"] = -1.0
    assert parts[0]["i"].iloc[0] == 0 and parts[0]["f"].iloc[1] != -1.0
    assert all(b.values.flags.writeable for b in out._mgr.blocks if isinstance(b.values, np.ndarray))


@pytest.mark.parametrize("index", [
    lambda p: p.set_index("o"),                                  # object labels
    lambda p: p.set_index(["i", "o"]),                           # MultiIndex rows
    lambda p: p.set_axis(p.index.rename(f"n{len(p)}"), axis=0),  # names differ: no name
    lambda p: p.set_index("t"),                                  # datetimes
])
def test_indexes_as_pandas_appends_them(index):
    parts = [index(p) for p in _parts((2, 3, 4))]
    pd.testing.assert_frame_equal(join_rows(parts, min_bytes=0), pd.concat(parts))


def test_column_labels_kept():
    multi = pd.MultiIndex.from_tuples([("a", 1), ("a", 2)], names=["x", "y"])
    for columns in (multi, pd.Index(["d", "d"]), pd.Index([1.5, 2.5]), pd.Index(["u", "v"], name="cols")):
        parts = [p[["i", "f"]].set_axis(columns, axis=1) for p in _parts((2, 3))]
        out = join_rows(parts, min_bytes=0)
        pd.testing.assert_frame_equal(out, pd.concat(parts))
        pd.testing.assert_index_equal(out.columns, columns, exact=True)


@pytest.mark.parametrize("names", [("a", "a"), ("a", "b"), (None, "a"), (np.nan, np.nan)])
def test_series_named_as_pandas_names_them(names):
    parts = [p["f"].rename(n) for p, n in zip(_parts((3, 4)), names)]
    out = join_rows(parts, min_bytes=0)
    pd.testing.assert_series_equal(out, pd.concat(parts))
    for col in ("o", "s", "c", "t"):
        series = [p[col] for p in _parts((2, 5))]
        pd.testing.assert_series_equal(join_rows(series, min_bytes=0), pd.concat(series))


def test_declines_what_it_does_not_join():
    a, b = _parts((3, 4))
    assert join_rows([a, b.astype({"i": "float64"})], min_bytes=0) is None  # dtypes differ
    assert join_rows([a, b[list(b.columns[::-1])]], min_bytes=0) is None  # column order differs
    assert join_rows([a, b.rename(columns={"i": "j"})], min_bytes=0) is None
    c = b.copy()
    c.attrs["x"] = 1
    assert join_rows([a, c], min_bytes=0) is None
    other = b.assign(c=pd.Categorical(["q"] * len(b), categories=["p", "q", "r"]))
    assert join_rows([a, other], min_bytes=0) is None  # categories differ: pandas gives object
    assert join_rows([a], min_bytes=0) is None
    assert join_rows([a.index, b.index], min_bytes=0) is None
    assert join_rows([a, b]) is None  # below MIN_BYTES: pandas' concat is as good
    assert join_rows([a["i"], b["f"]], min_bytes=0) is None


def test_categories_in_another_order_as_pandas_joins_them():
    a, b = _parts((3, 4))
    b = b.assign(c=pd.Categorical(["q", "p", "q", "q"], categories=["q", "p"]))  # an equal dtype
    pd.testing.assert_frame_equal(join_rows([a, b], min_bytes=0), pd.concat([a, b]))
    series = [a["c"], b["c"]]
    pd.testing.assert_series_equal(join_rows(series, min_bytes=0), pd.concat(series))


def test_concat_values_takes_it_for_big_partitions(monkeypatch):
    """concat_values keeps its rules (empty chunks, object index) on the column-at-a-time path."""
    calls = []
    real = assemble.join_rows

    def spy(values, min_bytes=None):
        out = real(values, min_bytes)
        calls.append(out is not None)
        return out

    monkeypatch.setattr("mars.dataframe.core.join_rows", spy)
    monkeypatch.setattr(assemble, "MIN_BYTES", 0)
    parts = [p.set_index("o") for p in _parts((3, 4))]
    parts.insert(1, parts[0].iloc[:0])
    out = concat_values(parts, parts[0].iloc[:0])
    expected = pd.concat([parts[0], parts[2]])
    expected.index = expected.index.astype(object)
    pd.testing.assert_frame_equal(out, expected)
    assert calls == [True]


@pytest.mark.parametrize("chunk_size", [1, 3, 7, 100])
def test_fetch_through_it_equals_pandas(monkeypatch, chunk_size):
    monkeypatch.setattr(assemble, "MIN_BYTES", 0)
    pdf = _frame(20, 0)
    with mars.new_session() as sess:
        df = md.DataFrame(pdf, chunk_size=chunk_size)
        pd.testing.assert_frame_equal(df.execute(session=sess).fetch(session=sess), pdf)
        pd.testing.assert_series_equal(df["f"].execute(session=sess).fetch(session=sess), pdf["f"])


def test_big_parquet_round_trip(tmp_path):
    """Above MIN_BYTES (the real threshold): a directory read back whole equals pandas."""
    n = 1_100_000 // 8 * 8
    pdf = pd.DataFrame({"a": np.arange(n), "b": np.linspace(0, 1, n), "s": ["x", "y"] * (n // 2)})
    assert n * 16 >= assemble.MIN_BYTES
    md.DataFrame(pdf, chunk_size=n // 4).to_parquet(str(tmp_path) + "/").execute()
    out = md.read_parquet(str(tmp_path)).execute().fetch()
    pd.testing.assert_frame_equal(out, pd.read_parquet(tmp_path))
