"""Keys of pandas objects (``tokenize_pandas``): every byte of the value counts, and only the value's own bytes
are read; the same in every process."""

from __future__ import annotations

import subprocess
import sys
import zlib

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from mars.dataframe import datasource
from mars.dataframe.datasource import tokenize_pandas


def _mixed_frame() -> pd.DataFrame:
    n = 50
    return pd.DataFrame({
        "f": np.linspace(0, 1, n), "i": pd.array(np.arange(n), dtype="Int64"),
        "s": pd.Series([f"v{i}" for i in range(n)], dtype="string[pyarrow]"),
        "b": pd.Series([True, None] * (n // 2), dtype="bool[pyarrow]"),
        "c": pd.Categorical(["x", "y"] * (n // 2)), "t": pd.date_range("2021", periods=n, tz="UTC"),
        "d": pd.date_range("2021", periods=n), "o": pd.Series([1, "a"] * (n // 2), dtype=object),
    }, index=pd.Index(np.arange(n) * 2, name="k"))


def _row_groups(values: list[str], size: int) -> pd.Series:
    """A string column laid out as Parquet reads it: chunks of ``size`` rows sharing one data buffer."""
    whole = pa.array(values, type=pa.large_string())
    chunks = [whole.slice(i, size) for i in range(0, len(values), size)]
    return pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array(chunks)))


def test_the_key_is_the_same_in_another_process():
    code = ("import sys; sys.path.insert(0, 'tests/dataframe'); from test_tokenize_pandas import _mixed_frame; "
            "from mars.dataframe.datasource import tokenize_pandas; print(tokenize_pandas(_mixed_frame()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == tokenize_pandas(_mixed_frame())


def test_each_column_kind_tells_one_changed_value_apart():
    base = _mixed_frame()
    key = tokenize_pandas(base)
    changes = {"f": 0.5, "i": None, "s": "zz", "b": False, "c": "y", "t": pd.Timestamp("2000", tz="UTC"),
               "d": pd.Timestamp("2000"), "o": 2}
    keys = set()
    for column, value in changes.items():
        changed = base.copy(deep=True)
        changed.loc[changed.index[-2], column] = value
        keys.add(tokenize_pandas(changed))
    assert key not in keys and len(keys) == len(changes)
    assert tokenize_pandas(base.copy(deep=True)) == key


def test_chunks_sharing_a_buffer_are_keyed_by_their_own_rows_only():
    values = [f"row {i}" * (i % 7 + 1) for i in range(1_000)]
    s = _row_groups(values, 128)
    own = [datasource._own_bytes(c) for c in pa.array(s.array).chunks]
    assert sum(len(buf) for parts in own for buf in parts[2:]) < 2 * sum(len(v) + 8 for v in values)
    changed = list(values)
    changed[999] = "other"
    assert tokenize_pandas(s) == tokenize_pandas(_row_groups(values, 128))
    assert tokenize_pandas(s) != tokenize_pandas(_row_groups(changed, 128))
    # a slice of such a column: each piece keyed by its rows
    assert tokenize_pandas(s.iloc[100:300]) != tokenize_pandas(s.iloc[300:500])


@pytest.mark.parametrize("dtype", ["int32[pyarrow]", "bool[pyarrow]", "double[pyarrow]"])
def test_slices_of_fixed_width_arrow_columns_differ_by_rows(dtype):
    values = [True, False, None] * 40 if dtype.startswith("bool") else [float(i) for i in range(120)]
    if dtype.startswith("int"):
        values = list(range(120))
    s = pd.Series(values, dtype=dtype)
    assert tokenize_pandas(s.iloc[3:40]) == tokenize_pandas(s.iloc[3:40])
    assert tokenize_pandas(s.iloc[3:40]) != tokenize_pandas(s.iloc[43:80])


def test_big_columns_are_hashed_block_by_block_and_every_byte_counts(monkeypatch):
    monkeypatch.setattr(datasource, "_TOKEN_BLOCK_BYTES", 1 << 12)
    monkeypatch.setattr(datasource, "_THREADED_TOKEN_BYTES", 1 << 14)  # on the threads
    df = pd.DataFrame({"x": np.arange(20_000, dtype=np.float64), "y": np.zeros(20_000, dtype=np.int8)})
    key = tokenize_pandas(df)
    for row, column in ((0, "x"), (19_999, "x"), (10_000, "y"), (19_999, "y")):
        changed = df.copy()
        changed.loc[row, column] = 3
        assert tokenize_pandas(changed) != key, (row, column)
    assert tokenize_pandas(df.copy()) == key


def _crc_blind_change(size: int) -> np.ndarray:
    """A nonzero XOR mask of ``size`` bytes that leaves any block's CRC-32 as it was.

    CRC-32 is affine over GF(2): ``crc(x ^ d) == crc(x) ^ crc(d) ^ crc(zeros)``. Of 33 one-bit masks, some
    nonempty set has CRC parts (32 bits each) that XOR to zero: that set, found by elimination, is the mask.
    """
    zeros = zlib.crc32(bytes(size))
    basis: dict[int, tuple[int, int]] = {}  # top bit -> (CRC part, the masks it combines)
    for j in range(33):
        one = np.zeros(size, dtype=np.uint8)
        one[8 * j + 3] = 1
        part, combined = zlib.crc32(one.tobytes()) ^ zeros, 1 << j
        while part and part.bit_length() in basis:
            other, others = basis[part.bit_length()]
            part, combined = part ^ other, combined ^ others
        if not part:
            mask = np.zeros(size, dtype=np.uint8)
            mask[[8 * i + 3 for i in range(33) if combined >> i & 1]] = 1
            return mask
        basis[part.bit_length()] = (part, combined)
    raise AssertionError("33 vectors in 32 dimensions are dependent")


def test_a_change_crc32_cannot_see_still_changes_the_key():
    block = np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8)
    changed = block ^ _crc_blind_change(len(block))
    assert (changed != block).any() and zlib.crc32(changed.tobytes()) == zlib.crc32(block.tobytes())
    assert datasource._block_digest(changed) != datasource._block_digest(block)
    column = pd.Series(block.view(np.float64))
    assert tokenize_pandas(pd.Series(changed.view(np.float64))) != tokenize_pandas(column)


def test_empty_objects_have_keys_apart_from_filled_ones():
    empty = pd.DataFrame({"s": pd.Series([], dtype="string[pyarrow]"), "x": np.array([], dtype=np.float64)})
    assert tokenize_pandas(empty) == tokenize_pandas(empty.copy())
    assert tokenize_pandas(empty) != tokenize_pandas(pd.DataFrame({"s": pd.Series(["a"], dtype="string[pyarrow]"),
                                                                   "x": [1.0]}))
    assert tokenize_pandas(pd.Series([], dtype="bool[pyarrow]")) != tokenize_pandas(pd.Series([], dtype="Int64"))
