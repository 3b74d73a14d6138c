"""``Series.str``, ``Index.str`` and ``Series.dt`` against pandas across partitionings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from df_testing import assert_eq, partitionings

import mars.dataframe as md

N = 12
PARTS = partitionings(N)

WORDS = ["apple pie", "Banana", None, "cherry tart x", "  dates ", "Elder", "fig", None, "grape 12", "HONEY dew",
         "ice", "jam7"]


def strings(dtype: str = "str") -> pd.Series:
    return pd.Series(WORDS, dtype=dtype, name="w", index=[f"r{k}" for k in range(N)])


def times(tz: str | None = None) -> pd.Series:
    values = pd.Series(pd.date_range("2020-01-30 22:15:07", periods=N, freq="37h", tz=tz), name="t")
    return values.where(np.arange(N) % 5 != 3)


def ran(result):
    """``result`` run first: the metadata of data-dependent outputs is fixed when it runs."""
    return result.execute()


# ----------------------------------------------------------------- str
STR_CALLS = [
    ("lower", (), {}), ("upper", (), {}), ("title", (), {}), ("capitalize", (), {}), ("swapcase", (), {}),
    ("strip", (), {}), ("lstrip", (), {}), ("rstrip", (" x",), {}), ("len", (), {}),
    ("contains", ("an",), {}), ("contains", ("A",), {"case": False}), ("contains", ("e.$",), {"regex": True}),
    ("contains", ("a",), {"na": False}), ("startswith", ("B",), {}), ("endswith", ("e",), {}),
    ("replace", ("a", "@"), {}), ("replace", (r"(\w)(\w)", r"\2\1"), {"regex": True}),
    ("slice", (1, 4), {}), ("slice", (None, None, 2), {}), ("get", (0,), {}), ("get", (-1,), {}),
    ("find", ("a",), {}), ("rfind", ("e",), {}), ("count", ("a",), {}), ("zfill", (12,), {}),
    ("pad", (10,), {"side": "both", "fillchar": "*"}), ("center", (11,), {}), ("ljust", (10, "."), {}),
    ("isdigit", (), {}), ("isalpha", (), {}), ("isspace", (), {}), ("islower", (), {}), ("isupper", (), {}),
    ("isalnum", (), {}), ("isnumeric", (), {}), ("istitle", (), {}), ("match", ("[a-f]",), {}),
    ("fullmatch", (r"\w+",), {}), ("repeat", (2,), {}), ("removeprefix", ("Ba",), {}), ("findall", ("[aeiou]",), {}),
    ("split", (), {}), ("rsplit", (" ",), {"n": 1}), ("extract", (r"([a-z]+)(\d)?",), {"expand": False}),
]


@pytest.mark.parametrize("dtype", ["str", "object"])
@pytest.mark.parametrize("cs", PARTS)
def test_str_methods(cs, dtype):
    ps = strings(dtype)
    s = md.Series(ps, chunk_size=cs)
    for name, args, kwargs in STR_CALLS:
        expected = getattr(ps.str, name)(*args, **kwargs)
        assert_eq(ran(getattr(s.str, name)(*args, **kwargs)), expected)


@pytest.mark.parametrize("cs", PARTS)
def test_str_meta_known_before_running(cs):
    """Outputs whose dtypes do not depend on the values have the right metadata up front."""
    ps = strings()
    s = md.Series(ps, chunk_size=cs)
    assert_eq(s.str.upper(), ps.str.upper())
    assert_eq(s.str.contains("a"), ps.str.contains("a"))
    assert_eq(s.str.extract(r"(?P<letter>[a-z])(?P<digit>\d)?"), ps.str.extract(r"(?P<letter>[a-z])(?P<digit>\d)?"))
    # the length of strings with missing values is float: known once it ran
    length = s.str.len()
    assert length.meta.dtype == np.int64
    assert_eq(ran(length), ps.str.len())
    assert length.meta.dtype == np.float64


@pytest.mark.parametrize("dtype", ["str", "object"])
@pytest.mark.parametrize("cs", PARTS)
def test_str_split_expand(cs, dtype):
    """Partitions split into different numbers of columns; the result has the longest's, padded as pandas."""
    ps = strings(dtype)
    s = md.Series(ps, chunk_size=cs)
    assert_eq(ran(s.str.split(expand=True)), ps.str.split(expand=True))
    assert_eq(ran(s.str.split(" ", n=1, expand=True)), ps.str.split(" ", n=1, expand=True))
    assert_eq(ran(s.str.rsplit("a", expand=True)), ps.str.rsplit("a", expand=True))
    assert_eq(ran(s.str.partition(" ")), ps.str.partition(" "))


@pytest.mark.parametrize("cs", PARTS)
def test_str_getitem_extract_cat(cs):
    ps = strings()
    s = md.Series(ps, chunk_size=cs)
    assert_eq(s.str[0], ps.str[0])
    assert_eq(s.str[1:5:2], ps.str[1:5:2])
    assert_eq(s.str.extract(r"([a-z])([a-z])"), ps.str.extract(r"([a-z])([a-z])"))
    assert_eq(s.str.extractall(r"([aeiou])"), ps.str.extractall(r"([aeiou])"))
    assert s.str.cat(sep="|").execute().fetch() == ps.str.cat(sep="|")
    assert s.str.cat(sep="|", na_rep="?").execute().fetch() == ps.str.cat(sep="|", na_rep="?")
    assert_eq(s.str.cat(s.str.upper(), sep="-"), ps.str.cat(ps.str.upper(), sep="-"))
    other = ps.iloc[::-1].str.lower()
    assert_eq(s.str.cat(md.Series(other, chunk_size=5), na_rep="_"), ps.str.cat(other, na_rep="_"))


def test_str_empty_and_all_missing():
    ps = pd.Series([None, None, "a", None], dtype=object)
    for cs in [(2, 2), (1, 1, 1, 1), (0, 2, 0, 2)]:
        s = md.Series(ps, chunk_size=cs)
        assert_eq(ran(s.str.len()), ps.str.len())
        assert_eq(ran(s.str.contains("a")), ps.str.contains("a"))
        assert_eq(ran(s.str.split(expand=True)), ps.str.split(expand=True))
    empty = pd.Series([], dtype="str")
    assert_eq(md.Series(empty).str.upper(), empty.str.upper())


def test_index_str():
    pidx = pd.Index(["a-b", "Cc", "d-e-f", "g"], name="ix")
    for cs in [4, 1, (0, 3, 1)]:
        idx = md.Index(pidx, chunk_size=cs)
        assert_eq(idx.str.upper(), pidx.str.upper())
        assert_eq(ran(idx.str.len()), pidx.str.len())
        assert_eq(idx.str.split("-"), pidx.str.split("-"))
    with pytest.raises(NotImplementedError):
        md.Index(pidx).str.split("-", expand=True)


def test_str_errors():
    with pytest.raises(AttributeError, match="Can only use .str accessor with string values"):
        _ = md.Series([1, 2]).str
    s = md.Series(strings())
    with pytest.raises(TypeError) as want:
        strings().str.pad(5, fillchar="ab")
    with pytest.raises(TypeError) as got:
        s.str.pad(5, fillchar="ab")
    assert str(got.value) == str(want.value)
    with pytest.raises(TypeError, match="not iterable"):
        iter(s.str)


# ----------------------------------------------------------------- dt
DT_PROPERTIES = ["year", "month", "day", "hour", "minute", "second", "day_of_week", "day_of_year", "quarter", "is_month_start", "is_month_end", "is_leap_year", "days_in_month", "date",
                 "time"]
DT_CALLS = [("normalize", (), {}), ("strftime", ("%Y/%m/%d %H",), {}), ("floor", ("D",), {}), ("ceil", ("h",), {}),
            ("round", ("15min",), {}), ("day_name", (), {}), ("month_name", (), {}), ("isocalendar", (), {}),
            ("to_period", ("M",), {})]


@pytest.mark.parametrize("cs", PARTS)
def test_dt(cs):
    pt = times()
    t = md.Series(pt, chunk_size=cs)
    for name in DT_PROPERTIES:
        assert_eq(ran(getattr(t.dt, name)), getattr(pt.dt, name))
    for name, args, kwargs in DT_CALLS:
        assert_eq(ran(getattr(t.dt, name)(*args, **kwargs)), getattr(pt.dt, name)(*args, **kwargs))


@pytest.mark.parametrize("cs", PARTS)
def test_dt_time_zones(cs):
    pt = times()
    t = md.Series(pt, chunk_size=cs)
    local = t.dt.tz_localize("Europe/Paris")
    assert local.dt.tz == pt.dt.tz_localize("Europe/Paris").dt.tz
    assert_eq(local, pt.dt.tz_localize("Europe/Paris"))
    assert_eq(local.dt.tz_convert("UTC").dt.hour.execute(), pt.dt.tz_localize("Europe/Paris").dt.tz_convert("UTC").dt.hour)
    assert_eq(md.Series(times("UTC"), chunk_size=cs).dt.tz_convert(None), times("UTC").dt.tz_convert(None))


@pytest.mark.parametrize("cs", PARTS)
def test_dt_timedelta(cs):
    pt = times()
    pd_delta = pt - pd.Timestamp("2020-01-01")
    d = md.Series(pd_delta, chunk_size=cs)
    assert_eq(ran(d.dt.total_seconds()), pd_delta.dt.total_seconds())
    assert_eq(ran(d.dt.days), pd_delta.dt.days)
    assert_eq(ran(d.dt.seconds), pd_delta.dt.seconds)
    assert_eq(ran(d.dt.components), pd_delta.dt.components)
    assert_eq(d.dt.floor("h"), pd_delta.dt.floor("h"))


def test_dt_without_missing_values_has_meta_up_front():
    pt = pd.Series(pd.date_range("2021-05-01", periods=7, freq="13h"))
    t = md.Series(pt, chunk_size=3)
    assert_eq(t.dt.year, pt.dt.year)
    assert_eq(t.dt.hour, pt.dt.hour)
    assert t.dt.unit == pt.dt.unit


def test_dt_errors():
    with pytest.raises(AttributeError, match="Can only use .dt accessor with datetimelike values"):
        _ = md.Series(["a"]).dt
    t = md.Series(times())
    with pytest.raises(AttributeError):
        _ = t.dt.total_seconds
    with pytest.raises(AttributeError):
        _ = t.dt.no_such_thing
    with pytest.raises(ValueError) as want:
        times().dt.floor("not a freq")
    with pytest.raises(ValueError) as got:
        t.dt.floor("not a freq")
    assert str(got.value) == str(want.value)


def test_dt_deprecated_names_warn_once_and_work():
    pt = times()
    t = md.Series(pt, chunk_size=5)
    with pytest.warns(DeprecationWarning, match="dayofweek is deprecated"):
        result = t.dt.dayofweek
    with pytest.warns(DeprecationWarning):
        expected = pt.dt.dayofweek
    assert_eq(ran(result), expected)
