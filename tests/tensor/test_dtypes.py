"""dtype and shape queries: tensors answer from their metadata, everything else as numpy does."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mars.tensor as mt


def test_shape_queries():
    t = mt.ones((2, 3), dtype=np.float32, chunk_size=1)
    assert mt.ndim(t) == 2 and mt.shape(t) == (2, 3) and mt.size(t) == 6 and mt.size(t, 1) == 3
    assert mt.size(t, (0, 1)) == np.size(np.ones((2, 3)), (0, 1)) == 6
    assert mt.ndim([[1], [2]]) == 2 and mt.shape([1, 2]) == (2,) and mt.size([[1, 2]], 0) == 1
    assert not mt.isscalar(mt.tensor(3.0)) and mt.isscalar(3.0) and not mt.isscalar([3])
    filtered = t[t > 0]
    assert math.isnan(mt.shape(filtered)[0]) and math.isnan(mt.size(filtered))
    with pytest.raises(np.exceptions.AxisError):
        mt.size(t, 2)


def test_dtype_queries():
    i8, f32 = mt.ones(2, dtype=np.int8), mt.ones(2, dtype=np.float32)
    assert mt.result_type(i8, 1.0) == np.result_type(np.ones(2, np.int8), 1.0) == np.float64
    assert mt.result_type(i8, f32, "int32") == np.result_type(np.int8, np.float32, np.int32)
    assert mt.can_cast(i8, np.int16) and not mt.can_cast(f32, np.int64)
    assert mt.can_cast(f32, np.int64, casting="unsafe")
    with pytest.raises(TypeError):
        mt.can_cast(1, np.int8)  # numpy 2 refuses Python scalars
    assert mt.finfo(f32).bits == 32 and mt.finfo(np.float64).eps == np.finfo(np.float64).eps
    assert mt.iinfo(i8).max == 127 and mt.iinfo(int).bits == 64
    with pytest.raises(ValueError):
        mt.iinfo(f32)
    assert mt.promote_types(i8, "uint8") == np.int16
    assert mt.issubdtype(f32, np.floating) and not mt.issubdtype(i8, np.floating)
    assert mt.common_type(f32, i8) is np.float64 and mt.common_type(f32) is np.float32
    assert mt.isdtype(np.float32, "real floating") and not mt.isdtype(np.int8, ("bool", "real floating"))
    with pytest.raises(TypeError):
        mt.isdtype(f32, "real floating")
    assert mt.min_scalar_type(i8) == np.int8 and mt.min_scalar_type(300) == np.uint16
    assert mt.min_scalar_type(mt.tensor(-5)) == np.min_scalar_type(np.array(-5))
