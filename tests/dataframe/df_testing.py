"""Helpers for dataframe tests: compare with pandas across partitionings."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pandas.testing as pdt

import mars.dataframe as md
from mars.dataframe.core import DataFrame, Index, Series


def partitionings(n: int) -> list[Any]:
    """chunk_size values for ``n`` rows: one partition, many, uneven, some empty, size 1 when small."""
    out: list[Any] = [max(n, 1), max(1, (n + 2) // 3)]
    if n >= 4:
        out.append((1, n - 3, 2, 0))
        out.append((0, 2, 0, n - 2))
    if 0 < n <= 12:
        out.append(1)
    return out


def lazy(obj: Any, chunk_size: Any) -> Any:
    """The mars counterpart of a pandas DataFrame, Series or Index."""
    if isinstance(obj, pd.DataFrame):
        return md.DataFrame(obj, chunk_size=chunk_size)
    if isinstance(obj, pd.Series):
        return md.Series(obj, chunk_size=chunk_size)
    return md.Index(obj, chunk_size=chunk_size)


def assert_eq(result: Any, expected: Any, check_meta: bool = True, **kw: Any) -> None:
    """``result`` (lazy, executed here, or already a value) equals pandas' ``expected`` exactly.

    For lazy results, the metadata known before running (dtypes, columns,
    name) must also match the computed value's.
    """
    if isinstance(result, (DataFrame, Series, Index)):
        meta = result.meta
        value = result.execute().fetch()
        if check_meta:
            _check_meta(meta, value)
    elif hasattr(result, "execute") and hasattr(result, "fetch"):
        value = result.execute().fetch()
    else:
        value = result
    if isinstance(expected, pd.DataFrame):
        pdt.assert_frame_equal(value, expected, **kw)
    elif isinstance(expected, pd.Series):
        pdt.assert_series_equal(value, expected, **kw)
    elif isinstance(expected, pd.Index):
        pdt.assert_index_equal(value, expected, **kw)
    elif isinstance(expected, float) and np.isnan(expected):
        assert np.isnan(value), f"{value!r} != nan"
    else:
        if kw.get("check_exact") is False or kw.get("rtol"):
            np.testing.assert_allclose(value, expected, rtol=kw.get("rtol", 1e-7))
        else:
            assert value == expected, f"{value!r} != {expected!r}"
        if hasattr(expected, "dtype"):
            assert np.asarray(value).dtype == expected.dtype, f"dtype {np.asarray(value).dtype} != {expected.dtype}"


def _check_meta(meta: Any, value: Any) -> None:
    assert type(meta) is type(value), f"meta is a {type(meta).__name__}, value a {type(value).__name__}"
    if isinstance(meta, pd.DataFrame):
        pdt.assert_index_equal(meta.columns, value.columns)
        pdt.assert_series_equal(meta.dtypes, value.dtypes, obj="dtypes")
    else:
        assert meta.dtype == value.dtype, f"meta dtype {meta.dtype} != {value.dtype}"
        assert meta.name == value.name, f"meta name {meta.name!r} != {value.name!r}"


def same_error(build: Any, expected: Any, exc: type = Exception, run: bool = False) -> None:
    """``build()`` raises what pandas' ``expected()`` raises (type and message).

    By default it must raise while the expression is built, as pandas raises
    at once; with ``run=True`` the error may come when the result runs.
    """
    import pytest

    with pytest.raises(exc) as want:
        expected()
    with pytest.raises(type(want.value)) as got:
        value = build()
        if run and hasattr(value, "execute"):
            value.execute()
    assert str(got.value) == str(want.value)


def same_error_when_run(build: Any, expected: Any, exc: type = Exception) -> None:
    """:func:`same_error` where the error may come when the expression runs."""
    same_error(build, expected, exc, run=True)


def partials_answers(monkeypatch: Any, name: str) -> list[bool]:
    """Whether each call of ``mars.dataframe.groupby.tree.<name>`` (a fast path for a partition's grouped
    partials) answered (True) or declined with None (False), as they run; small frames go through the
    tree rather than one pandas call, so that partials are made."""
    from mars.dataframe.groupby import agg, tree

    answers: list[bool] = []
    original = getattr(tree, name)

    def spy(*args: Any, **kwargs: Any) -> Any:
        out = original(*args, **kwargs)
        answers.append(out is not None)
        return out

    monkeypatch.setattr(tree, name, spy)
    monkeypatch.setattr(agg, "SINGLE_ROWS", -1)
    return answers
