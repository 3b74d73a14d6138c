"""Column data out of band and rebuilt without a copy: datetimes, Arrow-backed columns, sliced Arrow arrays."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import uuid

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mars.serialization import deserialize, serialize
from mars.services.storage.shm import get_object, put_object, unlink_prefix

N = 20_000


def received(obj):
    """``obj`` serialized, its buffers copied into one bytearray (a message or a segment), and rebuilt over it."""
    header, buffers = serialize(obj)
    store = bytearray(sum(b.nbytes for b in buffers))
    views, at = [], 0
    for b in buffers:
        store[at : at + b.nbytes] = b.cast("B") if b.format != "B" else b
        views.append(memoryview(store)[at : at + b.nbytes])
        at += b.nbytes
    return deserialize(header, views), header, buffers, store


def address_range(store: bytearray) -> tuple[int, int]:
    start = np.frombuffer(store, dtype="u1").ctypes.data
    return start, start + len(store)


def arrow_buffers(ea) -> list[pa.Buffer]:
    return [b for chunk in ea._pa_array.chunks for b in chunk.buffers() if b is not None and b.size]


def frames() -> dict[str, object]:
    rng = np.random.default_rng(0)
    words = np.array([f"word{i}" for i in range(50)], dtype=object)
    strings = rng.choice(words, N)
    strings[::7] = None
    when = pd.date_range("2020-01-01", periods=N, freq="min")
    mixed = np.empty(N, dtype=object)
    mixed[:] = [(1, "a"), 2.5, "x", None, {"k": [1]}] * (N // 5)
    return {
        "arrow string": pd.DataFrame({"s": pd.array(strings, dtype="string[pyarrow]"), "x": np.arange(N)}),
        "default str": pd.DataFrame({"s": pd.Series(strings, dtype="str")}),
        "arrow dtypes": pd.DataFrame({
            "i": pd.array(rng.integers(0, 9, N), dtype=pd.ArrowDtype(pa.int64())),
            "b": pd.array(rng.random(N) > 0.5, dtype=pd.ArrowDtype(pa.bool_())),
            "lst": pd.array([[i, i + 1] for i in range(N)], dtype=pd.ArrowDtype(pa.list_(pa.int64()))),
            "dic": pd.array(pa.array(strings).dictionary_encode(),
                            dtype=pd.ArrowDtype(pa.dictionary(pa.int32(), pa.string()))),
            "ts": pd.array(pa.array(when.values), dtype=pd.ArrowDtype(pa.timestamp("ns")))}),
        "datetimes": pd.DataFrame({"t": when, "t2": when + pd.Timedelta("1D"), "tz": when.tz_localize("UTC"),
                                   "d": when - when[0], "x": np.arange(N, dtype="f8")}),
        "categorical": pd.DataFrame({"c": pd.Categorical(strings), "x": np.arange(N)}),
        "period": pd.DataFrame({"p": pd.period_range("2000-01", periods=N, freq="M")}),
        "nullable": pd.DataFrame({"i": pd.array([1, None] * (N // 2), dtype="Int64"),
                                  "b": pd.array([True, None] * (N // 2), dtype="boolean")}),
        "object mixed": pd.DataFrame({"o": mixed, "x": np.arange(N)}),
        "multiindex columns": pd.DataFrame(np.arange(N * 4).reshape(N, 4),
                                           columns=pd.MultiIndex.from_product([["a", "b"], ["x", "y"]])),
        "datetime index": pd.DataFrame({"x": np.arange(N)}, index=when.tz_localize("Europe/Paris")),
        "empty": pd.DataFrame({"s": pd.Series([], dtype="str"), "t": pd.Series([], dtype="M8[ns]")}),
        "empty no columns": pd.DataFrame(),
        "series str": pd.Series(strings, dtype="string[pyarrow]", name="s"),
        "series datetime": pd.Series(when, name="t"),
        "index str": pd.Index(strings.astype(str), dtype="str"),
        "index timedelta": pd.TimedeltaIndex(when - when[0]),
    }


FRAMES = frames()


def assert_same(result, expected):
    if isinstance(expected, pd.DataFrame):
        pd.testing.assert_frame_equal(result, expected)
    elif isinstance(expected, pd.Series):
        pd.testing.assert_series_equal(result, expected)
    else:
        pd.testing.assert_index_equal(result, expected, exact=True)


@pytest.mark.parametrize("name", list(FRAMES))
@pytest.mark.parametrize("rows", [None, slice(3, 11_111), slice(N - 9, None)])
def test_round_trip_keeps_values_and_dtypes(name, rows):
    obj = FRAMES[name] if rows is None or len(FRAMES[name]) == 0 else FRAMES[name][rows]
    result, _, _, _ = received(obj)
    assert_same(result, obj)
    if hasattr(obj, "dtypes") and not isinstance(obj, pd.Series):
        assert list(result.dtypes) == list(obj.dtypes)
    if isinstance(obj, pd.DataFrame) and "s" in obj:
        assert type(result["s"].array) is type(obj["s"].array)  # an Arrow string column stays Arrow-backed


@pytest.mark.parametrize("name", ["arrow string", "default str", "datetimes", "datetime index", "series datetime"])
def test_column_data_goes_out_of_band(name):
    obj = FRAMES[name]
    _, header, buffers, _ = received(obj)
    assert len(header) < 5_000  # before: the datetimes' 8 bytes a row were in the stream
    assert sum(b.nbytes for b in buffers) >= N * 8


def test_arrow_chunks_travel_as_they_are_and_are_views_of_what_was_received():
    parts = [pa.array([f"s{i}" for i in range(k, k + 5000)]) for k in range(0, 20_000, 5000)]
    series = pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array(parts)))
    result, _, _, store = received(series)
    assert result.array._pa_array.num_chunks == 4  # not combined into one new array
    lo, hi = address_range(store)
    assert all(lo <= b.address < hi for b in arrow_buffers(result.array))
    pd.testing.assert_series_equal(result, series)


def test_datetime_blocks_are_views_of_what_was_received():
    result, _, _, store = received(FRAMES["datetimes"])
    lo, hi = address_range(store)
    for column in ["t", "t2", "tz", "d"]:
        data = np.asarray(result[column].array._ndarray)
        assert lo <= data.__array_interface__["data"][0] < hi, column


def test_a_row_slice_of_an_arrow_column_carries_its_rows_only():
    strings = pa.array([None if i % 11 == 0 else "x" * (i % 40) for i in range(100_000)])
    for start, stop in [(0, 10), (1, 9_999), (33_333, 33_400), (99_990, 100_000)]:
        for arr in [strings, pa.array(np.arange(100_000.0)), pa.array(np.arange(100_000) % 3 == 0),
                    pa.array([None, True, False] * 33_334), pa.array([None] * 100_000, pa.large_string()),
                    pa.array([""] * 100_000, pa.binary()), pa.nulls(100_000, pa.int32())]:
            part = arr.slice(start, stop - start)
            header, buffers = serialize(part)
            sent = len(header) + sum(b.nbytes for b in buffers)
            assert sent < part.nbytes + 600, (arr.type, start, stop)  # before: the whole column went
            back = deserialize(header, buffers)
            assert back.equals(part) and back.type == part.type
            back.validate(full=True)


def test_chunks_that_share_parquet_pages_send_the_shared_bytes_once(tmp_path):
    table = pa.table({"s": pa.array([f"value-{i % 977}-{'y' * (i % 13)}" for i in range(300_000)])})
    pq.write_table(table, tmp_path / "t.parquet", row_group_size=300_000)
    frame = pd.read_parquet(tmp_path / "t.parquet")
    _, _, buffers, _ = received(frame)
    used = frame.memory_usage(deep=True).sum()
    assert sum(b.nbytes for b in buffers) <= used * 1.05  # pyarrow alone sends each chunk the shared buffer
    part = frame.iloc[123_457:200_001]
    result, _, buffers, _ = received(part)
    assert sum(b.nbytes for b in buffers) <= part.memory_usage(deep=True).sum() * 1.05
    pd.testing.assert_frame_equal(result, part)


def test_arrow_tables_and_nested_slices_round_trip():
    table = pa.table({"s": ["a", None, "ccc"] * 1000, "l": [[1], [], None] * 1000,
                      "st": [{"x": 1}, None, {"x": 3}] * 1000})
    for t in [table, table.slice(7, 1500)]:
        back = deserialize(*serialize(t))
        assert back.equals(t)


def test_strided_blocks_and_arrays_go_out_of_band():
    when = pd.date_range("2000-01-01", periods=N, freq="h")
    whole = pd.DataFrame({f"t{i}": when + pd.Timedelta(days=i) for i in range(4)})
    assert whole._mgr.nblocks == 1
    frame = whole.iloc[100:5000]  # a partition: a row slice of one C-ordered 2-D block, strided
    result, header, _, _ = received(frame)
    assert len(header) < 2_000  # before: numpy copied the strided datetimes into the stream
    pd.testing.assert_frame_equal(result, frame)
    for array in [np.arange(N * 4.0).reshape(4, N)[:, 7:N - 3], np.arange(N * 4).reshape(N, 4)[::3, 1:3]]:
        back, header, _, _ = received(array)
        assert len(header) < 500 and back.dtype == array.dtype
        np.testing.assert_array_equal(back, array)


def test_shared_memory_round_trip_is_zero_copy():
    prefix = f"mars-test-{uuid.uuid4().hex[:12]}"
    frame = FRAMES["arrow string"].assign(t=pd.date_range("2001-01-01", periods=N, freq="s"))
    try:
        desc = put_object("k", frame, prefix)
        assert not desc.inline and len(desc.header) < 5_000
        result = get_object(desc)
        pd.testing.assert_frame_equal(result, frame)
        assert not np.asarray(result["t"].array._ndarray).flags.writeable  # a view of the read-only mapping
        assert all(not b.is_mutable for b in arrow_buffers(result["s"].array))
    finally:
        unlink_prefix(prefix)


def test_plain_pickle_of_the_rebuilt_objects_still_works():
    result, _, _, _ = received(FRAMES["arrow string"])
    pd.testing.assert_frame_equal(pickle.loads(pickle.dumps(result)), FRAMES["arrow string"])


def test_serialization_imports_no_column_library():
    code = "import sys, mars.serialization; print(sorted(m for m in ('numpy', 'pandas', 'pyarrow') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert out.stdout.strip() == "[]"


def test_cloudpickle_fallback_keeps_columns_out_of_band():
    frame = FRAMES["datetimes"]
    header, buffers = serialize({"f": lambda x: x + 1, "frame": frame})  # a lambda: pickled by cloudpickle
    assert len(header) < 5_000
    back = deserialize(header, buffers)
    assert back["f"](1) == 2
    pd.testing.assert_frame_equal(back["frame"], frame)
