"""numpy's semantics on tensors: views that write through, order flags, ufunc methods,
and the ndarray methods (tolist, item, view, flat, map_chunk, real/imag setters)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from tensor_testing import assert_eq, chunkings

import mars.tensor as mt


# ----------------------------------------------------------------- views
@pytest.mark.parametrize("chunk_size", chunkings((10, 12)))
def test_writes_through_a_view_reach_the_base(chunk_size):
    a = mt.tensor(np.zeros((10, 12)), chunk_size=chunk_size)
    n = np.zeros((10, 12))
    b, nb = a[:5, 5:10], n[:5, 5:10]
    b[:3, :3] = 3
    nb[:3, :3] = 3
    b += 1
    nb += 1
    c, nc = b[1:, 1], nb[1:, 1]  # a view of a view
    c[...] = -1
    nc[...] = -1
    assert_eq(b, nb)
    assert_eq(c, nc)
    b_before = nb.copy()
    d, nd = a[::3, ..., None], n[::3, ..., None]
    d[1] = 7
    nd[1] = 7
    assert_eq(a, n)
    assert_eq(d, nd)
    assert not b.flags.owndata and a.flags.owndata
    # unlike numpy, views taken before a write into the base keep their data (as any expression does)
    assert_eq(b, b_before)


def test_not_views():
    a = mt.zeros((3, 4), chunk_size=2)
    e = a[1, 2]  # numpy gives a scalar, not a view
    e += 5
    f = a[[0, 1]]  # fancy indexing copies
    f[...] = 1
    g = a.copy()
    g[0] = 2
    h = mt.asarray(a, copy=True)
    h[1] = 3
    assert_eq(a, np.zeros((3, 4)))
    assert e.flags.owndata and f.flags.owndata


@pytest.mark.parametrize("chunk_size", chunkings((6, 4)))
def test_flat(chunk_size):
    n = np.arange(24).reshape(6, 4)
    t = mt.tensor(n, chunk_size=chunk_size)
    assert_eq(t.flat[5], n.flat[5])
    assert_eq(t.flat[3:17:2], n.flat[3:17:2])
    assert [int(v) for v in mt.arange(3).flat] == [0, 1, 2]
    assert len(t.flat) == 24
    t.flat[[1, 22]] = -1
    n = n.copy()
    n.flat[[1, 22]] = -1
    assert_eq(t, n)


# ----------------------------------------------------------------- order flags
@pytest.mark.parametrize("chunk_size", chunkings((4, 6)))
def test_f_order_kept_by_elementwise_ops(chunk_size):
    f_value = np.asfortranarray(np.arange(24.0).reshape(4, 6))
    F = mt.tensor(f_value, chunk_size=chunk_size)
    C = mt.tensor(np.ones((4, 6)), chunk_size=chunk_size)
    cases = [(F + 1, f_value + 1), (mt.sin(F), np.sin(f_value)), (F * F, f_value * f_value),
             (F + mt.ones(6), f_value + np.ones(6)), (F.astype(np.float32), f_value.astype(np.float32)),
             (F + C, f_value + np.ones((4, 6))), (mt.zeros_like(F), np.zeros_like(f_value)),
             (F.T + 1, f_value.T + 1)]
    for result, expected in cases:
        got = result.execute().fetch()
        np.testing.assert_array_equal(got, expected)
        assert (got.flags.c_contiguous, got.flags.f_contiguous) == (
            expected.flags.c_contiguous, expected.flags.f_contiguous)
        assert result.flags["F_CONTIGUOUS"] == expected.flags["F_CONTIGUOUS"]
        assert result.flags.c_contiguous == expected.flags.c_contiguous


def test_flags():
    flags = mt.ones((2, 3)).flags
    assert flags["C"] and not flags["F"] and flags.writeable and flags["OWNDATA"]
    assert mt.ones(5).flags.f_contiguous and mt.ones((1, 5), order="C").flags.f_contiguous
    with pytest.raises(KeyError, match="Unknown flag"):
        flags["NOPE"]
    assert "C_CONTIGUOUS : True" in repr(flags)


# ----------------------------------------------------------------- ufunc methods and out=
@pytest.mark.parametrize("chunk_size", chunkings((3, 4)))
def test_ufunc_at(chunk_size):
    n = np.arange(12.0).reshape(3, 4)
    t = mt.tensor(n, chunk_size=chunk_size)
    n = n.copy()
    calls = [(np.add, ([0, 0, 2, 1], [1, 1, 3, 0]), [1, 2, 3, 4]), (np.negative, (slice(None), 2), None),
             (np.multiply, [0, 0], 3), (np.maximum, (np.array([[1], [2]]), [0, 3]), 100.0)]
    for ufunc, index, values in calls:
        args = () if values is None else (values,)
        assert ufunc.at(t, index, *args) is None
        ufunc.at(n, index, *args)
    assert_eq(t, n)


def test_ufunc_at_errors_and_views():
    with pytest.raises(ValueError, match="second operand"):
        np.add.at(mt.ones(3), [0])
    with pytest.raises(IndexError):
        np.add.at(mt.ones(3), [5], 1)
    a = mt.zeros((4, 4), dtype=int, chunk_size=3)
    np.add.at(a[1:3, 1:], [0, 0, 1], 1)  # a view: the base changes
    n = np.zeros((4, 4), dtype=int)
    np.add.at(n[1:3, 1:], [0, 0, 1], 1)
    assert_eq(a, n)


@pytest.mark.parametrize("chunk_size", chunkings((8,)))
def test_ufunc_reduceat_outer_reduce(chunk_size):
    n = np.arange(8, dtype=np.int8)
    t = mt.tensor(n, chunk_size=chunk_size)
    assert_eq(np.add.reduceat(t, [0, 4, 1, 5]), np.add.reduceat(n, [0, 4, 1, 5]))
    assert_eq(np.maximum.reduceat(t, [0, 2, 2, 7]), np.maximum.reduceat(n, [0, 2, 2, 7]))
    assert_eq(np.multiply.outer(t, mt.ones((2, 2), chunk_size=1)), np.multiply.outer(n, np.ones((2, 2))))
    assert_eq(np.add.outer(t, 3), np.add.outer(n, 3))
    assert_eq(np.add.reduce(t), np.add.reduce(n))
    assert_eq(np.multiply.accumulate(t), np.multiply.accumulate(n))
    m = np.arange(12).reshape(3, 4)
    assert_eq(np.add.reduceat(mt.tensor(m, chunk_size=2), [0, 2], axis=1), np.add.reduceat(m, [0, 2], axis=1))
    with pytest.raises(IndexError, match="out-of-bounds in add.reduceat"):
        np.add.reduceat(t, [0, 9])


def test_out_with_casting():
    out = mt.zeros((3, 4), dtype=int, chunk_size=2)
    result = mt.add(mt.ones((3, 4), chunk_size=3) * 1.5, 1, out=out, casting="unsafe")
    n = np.zeros((3, 4), dtype=int)
    np.add(np.ones((3, 4)) * 1.5, 1, out=n, casting="unsafe")
    assert result is out
    assert_eq(out, n)
    with pytest.raises(TypeError, match="same_kind"):
        mt.add(mt.ones(2), 1, out=mt.zeros(2, dtype=int))


# ----------------------------------------------------------------- creation
@pytest.mark.parametrize("chunk_size", chunkings((3, 4)))
def test_full_with_array_fill(chunk_size):
    row = np.arange(4)
    assert_eq(mt.full((3, 4), row, chunk_size=chunk_size), np.full((3, 4), row))
    column = np.arange(3.0).reshape(3, 1)
    chunks_3d = chunk_size if isinstance(chunk_size, int) else (1,) + tuple(chunk_size)
    assert_eq(mt.full((2, 3, 4), column, chunk_size=chunks_3d), np.full((2, 3, 4), column))
    assert_eq(mt.full((3, 4), mt.arange(4, chunk_size=3), chunk_size=chunk_size), np.full((3, 4), row))
    assert_eq(mt.full((3, 4), mt.tensor(column, chunk_size=2), dtype=np.int8, chunk_size=chunk_size),
              np.full((3, 4), column, dtype=np.int8))
    with pytest.raises(ValueError, match="could not broadcast"):
        mt.full((3, 4), np.arange(3))


@pytest.mark.parametrize("args", [
    (np.datetime64("2020-01-01"), np.datetime64("2020-01-10")),
    (np.datetime64("2020-01-01"), 3),
    (np.datetime64("2020-01-01"), np.datetime64("2020-01-02T05", "h"), np.timedelta64(7, "h")),
    (np.datetime64("2020-01-10"), np.datetime64("2020-01-01"), -3),
    (np.timedelta64(0, "D"), np.timedelta64(5, "D"), 2),
    (0, np.timedelta64(5, "h")),
])
def test_arange_over_datetimes(args):
    for chunk_size in (100, 2, 1):
        assert_eq(mt.arange(*args, chunk_size=chunk_size), np.arange(*args))


# ----------------------------------------------------------------- ndarray methods
def test_tolist_item():
    n = np.arange(6.0).reshape(2, 3)
    t = mt.tensor(n, chunk_size=2)
    assert t.tolist() == n.tolist()
    assert t.item(4) == n.item(4) and t.item((1, 2)) == n.item((1, 2)) and t.item(1, 0) == n.item(1, 0)
    assert type(t.item(4)) is float
    assert mt.tensor(7).item() == 7 and mt.ones((1, 1)).item() == 1.0
    with pytest.raises(ValueError, match="size 1"):
        t.item()


@pytest.mark.parametrize("chunk_size", chunkings((3, 4)))
def test_view_dtype(chunk_size):
    n = np.arange(12, dtype=np.int32).reshape(3, 4)
    t = mt.tensor(n, chunk_size=chunk_size)
    for dtype in (np.float32, np.int16, np.uint8, np.int64, np.complex128):
        assert_eq(t.view(dtype), n.view(dtype))
    with pytest.raises(ValueError, match="divisor"):
        mt.tensor(np.arange(6, dtype=np.int32).reshape(2, 3)).view(np.int64)
    with pytest.raises(ValueError, match="0d array"):
        mt.tensor(np.float64(1)).view(np.int32)
    same = t.view()
    assert same is not t and same.key == t.key


def test_copy_conj_real_imag():
    n = np.array([[1 + 2j, 3 - 1j], [0.5j, 2.0]])
    t = mt.tensor(n, chunk_size=1)
    assert_eq(t.conj(), n.conj())
    assert_eq(t.conjugate(), n.conjugate())
    t.real = [10, 20]
    n = n.copy()
    n.real = [10, 20]
    assert_eq(t, n)
    t.imag = mt.tensor(-1.0)
    n.imag = -1.0
    assert_eq(t, n)
    r = mt.arange(3.0)
    r.real = 5
    assert_eq(r, np.full(3, 5.0))
    with pytest.raises(TypeError, match="imaginary part"):
        r.imag = 1
    base = mt.zeros((3, 2), dtype=complex, chunk_size=2)
    view = base[1:]
    view.imag = 4  # through a view, as in numpy
    expected = np.zeros((3, 2), dtype=complex)
    expected[1:].imag = 4
    assert_eq(base, expected)


@pytest.mark.parametrize("chunk_size", chunkings((5, 4)))
def test_map_chunk(chunk_size):
    n = np.arange(20).reshape(5, 4)
    t = mt.tensor(n, chunk_size=chunk_size)
    assert_eq(t.map_chunk(lambda c, k: c * k, args=(2,)), n * 2)
    assert_eq(t.map_chunk(np.sqrt), np.sqrt(n))
    assert_eq(t.map_chunk(lambda c, k=0: c + k, kwargs={"k": 1}, dtype=np.float32), (n + 1).astype(np.float32))
    kept = t.map_chunk(lambda c: c[::2], shape=(math.nan, 4))  # every other row of each chunk
    assert math.isnan(kept.shape[0])
    rows = t.execute().nsplits[0]
    starts = np.cumsum((0,) + rows[:-1])
    assert_eq(kept, np.concatenate([n[s:s + k][::2] for s, k in zip(starts, rows)]))
    with pytest.raises(ValueError, match="map_chunk: func returned shape"):
        t.map_chunk(lambda c: c[:0]).execute()
    with pytest.raises(TypeError, match="pass dtype="):
        t.map_chunk(lambda c: c.nope)
