"""mars.serialization: pickle protocol 5 with out-of-band buffers, cloudpickle fallback."""

from __future__ import annotations

import asyncio
import pickle
import threading

import numpy as np
import pandas as pd
import pytest

from mars.serialization import (
    SerializationError,
    deserialize,
    deserialize_async,
    looks_heavy,
    serialize,
    serialize_async,
)
from mars.serialization.core import HEAVY_CONTAINER_ITEMS, HEAVY_HEADER_BYTES


def round_trip(obj):
    header, buffers = serialize(obj)
    return deserialize(header, buffers)


# -- numpy ------------------------------------------------------------------------

DTYPES = ["bool", "int8", "uint16", "int32", "int64", "float16", "float32", "float64",
          "complex128", "datetime64[ns]", "timedelta64[ms]", "U7", "S3"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_arrays_round_trip_with_dtype_shape_and_order(dtype, order):
    source = np.arange(60).reshape(3, 4, 5) % 7
    array = np.asarray(source.astype(dtype), order=order)
    result = round_trip(array)
    assert result.dtype == array.dtype and result.shape == array.shape
    np.testing.assert_array_equal(result, array)
    assert result.flags.c_contiguous == array.flags.c_contiguous
    assert result.flags.f_contiguous == array.flags.f_contiguous


@pytest.mark.parametrize(
    "array",
    [
        np.array(7.25),
        np.array("text"),
        np.empty((0,), dtype=np.int64),
        np.empty((3, 0, 2), dtype=np.float32),
        np.arange(100)[::7],
        np.arange(12).reshape(3, 4).T[1:],
        np.array([(1, 2.5, b"ab")], dtype=[("i", "i4"), ("f", "f8"), ("s", "S2")]),
        np.array([{"a": 1}, None, [1, 2]], dtype=object),
        np.ma.masked_array([1, 2, 3], mask=[False, True, False]),
    ],
    ids=["0-d", "0-d-str", "empty", "empty-3d", "strided", "transposed-slice", "structured",
         "object", "masked"],
)
def test_unusual_arrays_round_trip(array):
    result = round_trip(array)
    assert type(result) is type(array)
    assert result.dtype == array.dtype and result.shape == array.shape
    np.testing.assert_array_equal(result, array)
    if isinstance(array, np.ma.MaskedArray):
        np.testing.assert_array_equal(result.mask, array.mask)


@pytest.mark.parametrize("order", ["C", "F"])
def test_array_data_travels_out_of_band_without_a_copy(order):
    array = np.asarray(np.random.default_rng(1).random((512, 256)), order=order)  # 1 MiB
    header, buffers = serialize(array)
    assert len(header) < 1024
    assert sum(b.nbytes for b in buffers) == array.nbytes
    assert any(np.shares_memory(np.frombuffer(b, dtype=np.uint8), array) for b in buffers)
    result = deserialize(header, buffers)
    assert np.shares_memory(result, array)  # rebuilt on top of the same buffers
    np.testing.assert_array_equal(result, array)


def test_many_arrays_in_a_container_each_get_a_buffer():
    arrays = {f"a{i}": np.full(1000, i) for i in range(10)}
    header, buffers = serialize(arrays)
    assert len(buffers) == 10 and len(header) < 2048
    result = deserialize(header, buffers)
    assert all(np.array_equal(result[k], v) for k, v in arrays.items())


def test_deserialize_accepts_buffers_received_as_bytes():
    array = np.arange(10_000, dtype=np.float64)
    header, buffers = serialize({"x": array})
    received = [bytearray(bytes(b)) for b in buffers]  # as a transport would hand them over
    np.testing.assert_array_equal(deserialize(bytes(header), received)["x"], array)


# -- pandas -----------------------------------------------------------------------


def test_dataframe_round_trips_with_dtypes_index_and_column_order():
    n = 1000
    frame = pd.DataFrame(
        {
            "z_int": np.arange(n, dtype=np.int32),
            "a_float": np.linspace(0, 1, n),
            "m_obj": pd.Series([f"s{i % 10}" for i in range(n)], dtype=object),
            "cat": pd.Categorical(["x", "y"] * (n // 2)),
            "when": pd.date_range("2020-01-01", periods=n, freq="h", tz="Europe/Paris"),
            "maybe": pd.array([1, None] * (n // 2), dtype="Int64"),
        },
        index=pd.MultiIndex.from_product([range(n // 4), list("abcd")], names=["k", "l"]),
    )
    pd.testing.assert_frame_equal(round_trip(frame), frame)


def test_series_and_index_round_trip():
    series = pd.Series([1.5, np.nan, 3.0], index=pd.Index(["a", "b", "c"], name="idx"), name="vals")
    pd.testing.assert_series_equal(round_trip(series), series)
    index = pd.date_range("2024-01-01", periods=5, freq="D")
    pd.testing.assert_index_equal(round_trip(index), index)


def test_numeric_dataframe_blocks_travel_out_of_band():
    frame = pd.DataFrame(np.random.default_rng(2).random((100_000, 4)), columns=list("abcd"))
    header, buffers = serialize(frame)
    assert sum(b.nbytes for b in buffers) >= frame.to_numpy().nbytes
    assert len(header) < 8 * 1024
    pd.testing.assert_frame_equal(deserialize(header, buffers), frame)


# -- containers and Python objects ------------------------------------------------


def test_nested_containers_round_trip():
    obj = {
        "list": [1, "two", 3.0, None, True],
        "tuple": (np.arange(3), {"inner": [np.ones((2, 2))]}),
        "set": {1, 2, 3},
        "frozen": frozenset({"a"}),
        "bytes": b"\x00\x01",
        "bytearray": bytearray(b"xyz"),
        "nested": [[[[{"deep": np.float32(1.5)}]]]],
    }
    np.testing.assert_equal(round_trip(obj), obj)


def test_bytes_like_payloads_round_trip():
    data = bytearray(range(256)) * 1000
    assert round_trip(data) == data
    assert round_trip(pickle.PickleBuffer(data)).tobytes() == bytes(data)


def test_lambdas_fall_back_to_cloudpickle():
    factor = 3
    func = lambda x: x * factor  # noqa: E731
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(func)
    assert round_trip(func)(5) == 15


def test_local_classes_and_their_instances_fall_back_to_cloudpickle():
    class Local:
        def __init__(self, value):
            self.value = value

        def doubled(self):
            return self.value * 2

    result = round_trip([Local(21), Local])
    assert result[0].doubled() == 42 and result[1].__name__ == "Local"


def test_cloudpickled_closures_still_send_arrays_out_of_band():
    array = np.arange(200_000, dtype=np.float64)
    func = lambda: array.sum()  # noqa: E731
    header, buffers = serialize(func)
    assert sum(b.nbytes for b in buffers) >= array.nbytes
    assert deserialize(header, buffers)() == array.sum()


# -- failures -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "obj, type_name",
    [(threading.Lock(), "lock"), ((i for i in range(3)), "generator")],
    ids=["lock", "generator"],
)
def test_unpicklable_object_raises_serialization_error_naming_its_type(obj, type_name):
    with pytest.raises(SerializationError, match=type_name) as info:
        serialize(obj)
    assert info.value.__cause__ is not None


def test_unpicklable_object_inside_a_container_is_named():
    with pytest.raises(SerializationError, match="lock"):
        serialize({"ok": 1, "bad": [threading.Lock()]})


class _ReduceRaisesValueError:
    def __reduce__(self):
        raise ValueError("no pickling for me")


def test_any_pickling_failure_raises_serialization_error():
    with pytest.raises(SerializationError, match="no pickling for me"):
        serialize(_ReduceRaisesValueError())


@pytest.mark.parametrize(
    "header, buffers",
    [(b"not a pickle", []), (serialize(np.arange(10))[0], [])],
    ids=["garbage", "missing-buffers"],
)
def test_bad_input_to_deserialize_raises_serialization_error(header, buffers):
    with pytest.raises(SerializationError):
        deserialize(header, buffers)


# -- looks_heavy ----------------------------------------------------------------------


def test_large_containers_look_heavy_small_ones_do_not():
    n = HEAVY_CONTAINER_ITEMS
    for make in (list, tuple, set, frozenset, lambda r: dict.fromkeys(r)):
        assert looks_heavy(make(range(n + 1)))
        assert not looks_heavy(make(range(n)))


def test_heavy_container_found_inside_shallow_nesting_only():
    big = list(range(HEAVY_CONTAINER_ITEMS + 1))
    assert looks_heavy({"key": [(big,)]})
    assert not looks_heavy([[[[big]]]])  # nesting beyond the default depth is not inspected
    assert not looks_heavy({tuple(range(5)): 1})


def test_numeric_arrays_and_frames_never_look_heavy():
    assert not looks_heavy(np.zeros(50_000_000, dtype=np.uint8))
    assert not looks_heavy(pd.DataFrame({"a": np.arange(1_000_000)}))
    assert not looks_heavy(b"x" * 10_000_000)


def test_object_arrays_and_frames_look_heavy_when_large():
    assert looks_heavy(np.empty(HEAVY_CONTAINER_ITEMS + 1, dtype=object))
    assert not looks_heavy(np.empty(10, dtype=object))
    rows = HEAVY_CONTAINER_ITEMS // 10 + 1
    assert looks_heavy(pd.DataFrame({"s": pd.Series(["x"] * rows, dtype=object)}))
    assert not looks_heavy(pd.DataFrame({"s": pd.Series(["x"] * 10, dtype=object)}))
    assert looks_heavy(pd.Series([None] * (HEAVY_CONTAINER_ITEMS + 1), dtype=object))


# -- async variants -------------------------------------------------------------------

_reduced_in: list[str] = []
_rebuilt_in: list[str] = []


def _rebuild_marker() -> ThreadMarker:
    _rebuilt_in.append(threading.current_thread().name)
    return ThreadMarker()


class ThreadMarker:
    """Records which thread pickles and unpickles it."""

    def __reduce__(self):
        _reduced_in.append(threading.current_thread().name)
        return _rebuild_marker, ()


@pytest.fixture
def markers():
    _reduced_in.clear()
    _rebuilt_in.clear()
    return _reduced_in, _rebuilt_in


async def test_light_objects_are_serialized_on_the_loop_thread(markers):
    header, buffers = await serialize_async([ThreadMarker(), np.arange(5)])
    result = await deserialize_async(header, buffers)
    assert isinstance(result[0], ThreadMarker) and result[1].tolist() == [0, 1, 2, 3, 4]
    assert markers == ([threading.current_thread().name], [threading.current_thread().name])


async def test_heavy_objects_are_serialized_in_a_worker_thread(markers):
    payload = [ThreadMarker(), *range(HEAVY_CONTAINER_ITEMS * 20)]
    header, buffers = await serialize_async(payload)
    assert len(header) > HEAVY_HEADER_BYTES
    result = await deserialize_async(header, buffers)
    assert result[1:] == payload[1:] and isinstance(result[0], ThreadMarker)
    loop_thread = threading.current_thread().name
    assert markers[0] and markers[0][0] != loop_thread
    assert markers[1] and markers[1][0] != loop_thread


async def test_async_variants_raise_serialization_errors_too():
    with pytest.raises(SerializationError, match="lock"):
        await serialize_async([threading.Lock()] + list(range(HEAVY_CONTAINER_ITEMS + 1)))
    with pytest.raises(SerializationError):
        await deserialize_async(b"\x80\x05garbage" * 200_000)


async def test_loop_keeps_running_while_a_heavy_payload_is_serialized():
    payload = [str(i) for i in range(HEAVY_CONTAINER_ITEMS * 50)]
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    try:
        header, buffers = await serialize_async(payload)
    finally:
        task.cancel()
    assert ticks > 1
    assert deserialize(header, buffers) == payload
