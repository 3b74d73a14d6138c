"""The last numpy names of issue 17 (copies and layout, asarray_chkfinite, fromfunction,
array_equiv, sort_complex, unwrap, matvec/vecmat, polyval/polyfit, bits, dates, windows)
against numpy across chunkings."""

from __future__ import annotations

import numpy as np
import pytest
from tensor_testing import assert_eq, chunkings

import mars.tensor as mt

rng = np.random.default_rng(7)
A = rng.normal(size=(5, 7))
P = np.cumsum(rng.uniform(-4, 4, size=(5, 7)), axis=1)
CHUNKS = chunkings(A.shape)


# ----------------------------------------------------------------- copies and layout
@pytest.mark.parametrize("chunk", CHUNKS)
def test_copy_and_orders(chunk):
    t = mt.tensor(A, chunk_size=chunk)
    for order in ("K", "C", "F", "A"):
        c = mt.copy(t, order=order)
        value = c.execute().fetch()
        assert_eq(c, np.copy(A, order=order))
        assert value.flags.f_contiguous == (order == "F") == c.flags["F_CONTIGUOUS"]
    f = mt.asfortranarray(t)
    assert mt.isfortran(f) and not mt.isfortran(t)
    assert f.execute().fetch().flags.f_contiguous
    assert_eq(f, np.asfortranarray(A))
    for order in ("K", "A"):  # an F tensor's copy keeps its order
        assert mt.copy(f, order=order).execute().fetch().flags.f_contiguous
    back = mt.ascontiguousarray(f, dtype=np.float32)
    assert back.flags["C_CONTIGUOUS"] and back.execute().fetch().flags.c_contiguous
    assert_eq(back, np.ascontiguousarray(np.asfortranarray(A), dtype=np.float32))
    assert_eq(mt.ascontiguousarray(mt.tensor(3.5)), np.ascontiguousarray(3.5))
    assert_eq(mt.asfortranarray(5), np.asfortranarray(5))
    assert_eq((f + 1) * 2, (np.asfortranarray(A) + 1) * 2)
    with pytest.raises(ValueError, match="order must be one of"):
        mt.copy(t, order="X")


def test_copy_is_not_a_view_and_require():
    base = mt.zeros((4, 4), chunk_size=2)
    view = base[:2, :2]
    c = mt.copy(view)
    c[0, 0] = 5
    assert_eq(base, np.zeros((4, 4)))
    owned = mt.require(view, requirements="O")
    assert owned.flags["OWNDATA"] and not view.flags["OWNDATA"]
    owned[1, 1] = 7
    assert_eq(base, np.zeros((4, 4)))
    r = mt.require(mt.tensor(A, chunk_size=3), np.float32, requirements=["F", "A", "W", "E"])
    assert r.flags["F_CONTIGUOUS"] and r.execute().fetch().flags.f_contiguous
    assert_eq(r, np.require(A, np.float32, ["F", "A", "W", "E"]))
    assert_eq(mt.require([1, 2], requirements=None), np.require([1, 2]))
    with pytest.raises(ValueError, match="both 'C' and 'F'"):
        mt.require(A, requirements="CF")
    with pytest.raises(KeyError, match="unknown requirement 'Q'"):
        mt.require(A, requirements="Q")
    assert mt.isfortran(np.asfortranarray(A)) and not mt.isfortran(mt.ones((1, 4), order="F"))
    assert mt.iterable(mt.ones(2)) and not mt.iterable(mt.tensor(1)) and mt.iterable([1]) and not mt.iterable(1)


@pytest.mark.parametrize("chunk", CHUNKS)
def test_asarray_chkfinite(chunk):
    assert_eq(mt.asarray_chkfinite(mt.tensor(A, chunk_size=chunk)), np.asarray_chkfinite(A))
    assert_eq(mt.asarray_chkfinite(mt.tensor([1, 2])), np.asarray_chkfinite([1, 2]))
    bad = A.copy()
    bad[4, 6] = np.inf
    t = mt.asarray_chkfinite(mt.tensor(bad, chunk_size=chunk), dtype=np.float32)
    assert t.dtype == np.float32
    with pytest.raises(ValueError, match="array must not contain infs or NaNs"):
        t.execute()


@pytest.mark.parametrize("chunk", [None, 2, 1])
def test_fromfunction_and_array_equiv(chunk):
    def f(i, j):
        return i * 10 + j ** 2

    assert_eq(mt.fromfunction(f, (4, 3), chunk_size=chunk), np.fromfunction(f, (4, 3)))
    assert_eq(mt.fromfunction(f, (4, 3), dtype=int, chunk_size=chunk), np.fromfunction(f, (4, 3), dtype=int))
    assert_eq(mt.fromfunction(lambda i: i + 1, (5,), chunk_size=chunk), np.fromfunction(lambda i: i + 1, (5,)))
    row = mt.tensor([1, 2], chunk_size=chunk)
    for other in ([[1, 2], [1, 2]], [[1, 2], [1, 3]], [1, 2, 3], [1], [[1], [1]]):
        assert_eq(mt.array_equiv(row, other), np.array_equiv([1, 2], other))


# ----------------------------------------------------------------- numerical
@pytest.mark.parametrize("chunk", CHUNKS)
def test_sort_complex_and_unwrap(chunk):
    z = A + 1j * np.round(A[::-1], 0)
    for a in (z, np.round(A).astype(np.int16), A.astype(np.float32), A > 0):
        assert_eq(mt.sort_complex(mt.tensor(a, chunk_size=chunk)), np.sort_complex(a))
    ints = np.round(P * 3).astype(np.int64)
    for a, kw in [(P, {}), (P, {"axis": 0}), (P, {"discont": 4.0}), (P.astype(np.float32), {}),
                  (ints, {"period": 10}), (ints, {"period": 9, "axis": 0}), (P, {"period": 3.0, "discont": 1.0})]:
        assert_eq(mt.unwrap(mt.tensor(a, chunk_size=chunk), **kw), np.unwrap(a, **kw), rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("chunk", CHUNKS)
def test_matvec_vecmat(chunk):
    m = rng.normal(size=(3, 5, 7)) + 1j * rng.normal(size=(3, 5, 7))
    v5, v7 = rng.normal(size=(5,)) - 2j, rng.normal(size=(2, 1, 7))
    tm = mt.tensor(m, chunk_size=(2,) + ((chunk, chunk) if isinstance(chunk, int) else tuple(chunk[:2])))
    assert_eq(mt.matvec(tm, mt.tensor(v7, chunk_size=3)), np.matvec(m, v7))
    assert_eq(mt.vecmat(mt.tensor(v5, chunk_size=2), tm), np.vecmat(v5, m))
    assert_eq(mt.matvec(mt.tensor(A, chunk_size=chunk), np.arange(7)), np.matvec(A, np.arange(7)))
    ints = np.arange(35).reshape(5, 7)
    assert_eq(mt.vecmat(np.arange(5), mt.tensor(ints, chunk_size=chunk)), np.vecmat(np.arange(5), ints))
    assert_eq(np.matvec(mt.tensor(A, chunk_size=chunk), np.ones(7)), np.matvec(A, np.ones(7)))
    with pytest.raises(ValueError, match="mismatch in its core dimension"):
        mt.matvec(A, np.ones(5))
    with pytest.raises(ValueError, match="does not have enough dimensions"):
        mt.vecmat(np.ones(5), np.ones(5))


@pytest.mark.parametrize("chunk, rows", list(zip(CHUNKS, chunkings((35,)))))
def test_polyval_polyfit(chunk, rows):
    x = np.linspace(-2, 3, 35)
    tx = mt.tensor(x.reshape(5, 7), chunk_size=chunk)
    for p in ([3, 0, -1, 2], np.array([1.5, 2], dtype=np.float32), [], [4]):
        assert_eq(mt.polyval(p, tx), np.polyval(p, x.reshape(5, 7)))
    assert_eq(mt.polyval(mt.tensor([2, 1]), np.arange(3)), np.polyval([2, 1], np.arange(3)))
    y = 0.5 * x ** 3 - x + 2 + rng.normal(scale=0.1, size=x.shape)
    ys = np.stack([y, x ** 2], axis=1)
    w = rng.uniform(0.5, 2, size=x.shape)
    rows = rows if isinstance(rows, int) else rows[0]
    txf, tyf = mt.tensor(x, chunk_size=(rows,)), mt.tensor(ys, chunk_size=(rows, 1))
    assert_eq(mt.polyfit(txf, tyf[:, 0], 3), np.polyfit(x, y, 3), rtol=1e-6, atol=1e-12)
    assert_eq(mt.polyfit(txf, tyf, 2, w=w), np.polyfit(x, ys, 2, w=w), rtol=1e-6, atol=1e-12)
    c, resid, rank, s, rcond = mt.polyfit(txf, tyf[:, 0], 3, full=True)
    ec, eresid, erank, es, ercond = np.polyfit(x, y, 3, full=True)
    assert_eq(c, ec, rtol=1e-6, atol=1e-12)
    assert_eq(resid, eresid, rtol=1e-6, atol=1e-12)
    assert int(rank.execute().fetch()) == erank and rcond == ercond
    assert_eq(s, es, rtol=1e-6, atol=1e-12)
    for cov in (True, "unscaled"):
        for target in (tyf[:, 0], tyf):
            (_, v), (_, ev) = mt.polyfit(txf, target, 2, cov=cov), np.polyfit(x, target.fetch(), 2, cov=cov)
            assert_eq(v, ev, rtol=1e-6, atol=1e-12)
    with pytest.raises(TypeError, match="expected x and y to have same length"):
        mt.polyfit(txf, tyf[:5, 0], 1)
    with pytest.raises(ValueError, match="expected deg >= 0"):
        mt.polyfit(txf, tyf[:, 0], -1)


# ----------------------------------------------------------------- bits
@pytest.mark.parametrize("chunk", CHUNKS)
def test_bits(chunk):
    a = rng.integers(0, 2, size=(5, 7)).astype(bool)
    ints = rng.integers(-300, 300, size=(5, 7))
    assert_eq(mt.bitwise_count(mt.tensor(ints, chunk_size=chunk)), np.bitwise_count(ints))
    assert_eq(np.bitwise_count(mt.tensor(ints.astype(np.uint16), chunk_size=chunk)),
              np.bitwise_count(ints.astype(np.uint16)))
    t = mt.tensor(a, chunk_size=chunk)
    for kw in [{}, {"axis": 1}, {"axis": 0, "bitorder": "little"}, {"axis": -1, "bitorder": "little"}]:
        packed = mt.packbits(t, **kw)
        assert_eq(packed, np.packbits(a, **kw))
        expected = np.packbits(a, **kw)
        unpack_kw = {k: v for k, v in kw.items()}
        for count in (None, 3, -2, 20, 0):
            assert_eq(mt.unpackbits(packed, count=count, **unpack_kw),
                      np.unpackbits(expected, count=count, **unpack_kw))
    long = rng.integers(0, 2, size=37).astype(np.uint8)
    assert_eq(mt.packbits(mt.tensor(long, chunk_size=5)), np.packbits(long))
    assert_eq(mt.packbits(mt.tensor(long, chunk_size=((4, 12, 1, 20),))), np.packbits(long))
    with pytest.raises(TypeError):
        mt.packbits(mt.tensor(A))
    with pytest.raises(TypeError):
        mt.unpackbits(mt.tensor(ints))


# ----------------------------------------------------------------- dates
@pytest.mark.parametrize("chunk", [None, 3, 1])
def test_dates(chunk):
    days = np.datetime64("2024-01-01") + rng.integers(0, 400, size=10).astype("m8[D]")
    t = mt.tensor(days, chunk_size=chunk)
    holidays = ["2024-01-01", "2024-12-25"]
    assert_eq(mt.is_busday(t), np.is_busday(days))
    assert_eq(mt.is_busday(t, weekmask="Mon Wed", holidays=holidays),
              np.is_busday(days, weekmask="Mon Wed", holidays=holidays))
    cal = np.busdaycalendar(weekmask="1111110", holidays=holidays)
    assert mt.busdaycalendar is np.busdaycalendar
    assert_eq(mt.is_busday(t, busdaycal=cal), np.is_busday(days, busdaycal=cal))
    offsets = np.arange(10) - 4
    assert_eq(mt.busday_offset(t, offsets, roll="forward"), np.busday_offset(days, offsets, roll="forward"))
    assert_eq(mt.busday_offset(t, 3, roll="modifiedpreceding", busdaycal=cal),
              np.busday_offset(days, 3, roll="modifiedpreceding", busdaycal=cal))
    assert_eq(mt.busday_count(t, "2024-06-01", holidays=holidays),
              np.busday_count(days, "2024-06-01", holidays=holidays))
    assert_eq(mt.busday_offset("2024-03-01", mt.tensor([1, 5])), np.busday_offset("2024-03-01", [1, 5]))
    stamps = np.datetime64("2024-03-01T10:30") + np.arange(10).astype("m8[h]")
    ts = mt.tensor(stamps, chunk_size=chunk)
    for kw in [{}, {"unit": "D"}, {"unit": "auto"}, {"timezone": "UTC"}]:
        assert_eq(mt.datetime_as_string(ts, **kw), np.datetime_as_string(stamps, **kw))
    with pytest.raises(ValueError, match="Cannot supply both"):
        mt.is_busday(t, weekmask="1111110", busdaycal=cal)
    with pytest.raises(ValueError, match="Non-business day date in busday_offset"):
        mt.busday_offset(t, 1).execute()  # roll="raise": some dates fall on weekends
    with pytest.raises(TypeError):
        mt.datetime_as_string(mt.tensor([1, 2]))


# ----------------------------------------------------------------- windows
@pytest.mark.parametrize("chunk", [None, 4, 1])
def test_windows(chunk):
    for name in ("bartlett", "blackman", "hamming", "hanning"):
        for m in (0, 1, 2, 5, 12, -3):
            assert_eq(getattr(mt, name)(m, chunk_size=chunk), getattr(np, name)(m), atol=1e-15)
    for m, beta in ((1, 5.0), (6, 0), (11, 8.6), (0, 2.0)):
        assert_eq(mt.kaiser(m, beta, chunk_size=chunk), np.kaiser(m, beta))
