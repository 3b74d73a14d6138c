"""Helpers for tensor operator tests: compare with numpy across chunkings."""

from __future__ import annotations

from typing import Any

import numpy as np
from mars.tensor import Tensor


def chunkings(shape: tuple[int, ...]) -> list[Any]:
    """chunk_size values to try for ``shape``: one chunk, ragged chunks, chunks of size 1 (when small)."""
    one = tuple(max(s, 1) for s in shape)
    ragged = tuple(max(1, (s + 1) // 3 + (1 if s > 3 else 0)) for s in shape)
    result: list[Any] = [one, ragged]
    if int(np.prod(shape)) <= 64:
        result.append(1)
    # per-dimension uneven tuples on the first axis
    if shape and shape[0] >= 3:
        first = (1, shape[0] - 2, 1)
        result.append((first,) + tuple(ragged[1:]))
    return result


def assert_eq(result: Any, expected: Any, rtol: float = 1e-7, atol: float = 0.0, check_dtype: bool = True) -> None:
    """``result`` (a Tensor, executed here) equals numpy's ``expected``: dtype, shape and values."""
    if isinstance(result, Tensor):
        meta_shape, meta_dtype = result.shape, result.dtype
        value = result.execute().fetch()
        expected_arr = np.asarray(expected)
        if not any(isinstance(s, float) for s in meta_shape):
            assert tuple(meta_shape) == expected_arr.shape, f"metadata shape {meta_shape} != {expected_arr.shape}"
        if check_dtype:
            assert meta_dtype == expected_arr.dtype, f"metadata dtype {meta_dtype} != {expected_arr.dtype}"
    else:
        value = result
    value_arr, expected_arr = np.asarray(value), np.asarray(expected)
    assert value_arr.shape == expected_arr.shape, f"shape {value_arr.shape} != {expected_arr.shape}"
    if check_dtype:
        assert value_arr.dtype == expected_arr.dtype, f"dtype {value_arr.dtype} != {expected_arr.dtype}"
    if expected_arr.dtype.kind in "fc" and (rtol or atol):
        np.testing.assert_allclose(value_arr, expected_arr, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(value_arr, expected_arr)
    if np.ndim(expected) == 0 and not isinstance(expected, np.ndarray):
        assert np.ndim(value) == 0 and not isinstance(value, np.ndarray), f"expected a scalar, got {type(value)}"
