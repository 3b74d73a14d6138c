"""Statistics by per-partition moments: ``skew``, ``kurt``, ``corr``, ``cov``, ``corrwith``, ``autocorr``.

Each partition reduces itself to a few numbers per column (``skew``/``kurt``:
count, mean and the sums of 2nd to 4th powers of deviations from the
partition's mean) or per pair of columns (``corr``/``cov``: for the rows
where both are valid, the count, both means, both sums of squared
deviations and the co-moment). Partials merge in a tree by the pairwise
formulas of Chan and Pébay, which stay accurate where raw sums of powers
cancel out; the last stage forms pandas' estimators (pairwise-complete
observations, ``min_periods``, ``ddof``). ``method="spearman"`` is pearson
on ranks (distributed ``rank``), for data without missing values.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...core.tiling import as_data
from ..core import DataFrame, Series
from ..map import map_partitions
from ..meta import fake
from ..reductions import Reducer, as_frame, run_reducer, sample_result

__all__: list[str] = []


def _numbers(frame: pd.DataFrame) -> np.ndarray:
    return frame.to_numpy(dtype=np.float64, na_value=np.nan)


def _zeroed(x: Any) -> Any:
    """Round-off near zero is zero (as pandas treats sums of deviations)."""
    return np.where(np.abs(x) < 1e-14, 0.0, x)


# ----------------------------------------------------------------- skew, kurt
def _merge_moments(a: tuple, b: tuple) -> tuple:
    """(n, mean, M2, M3, M4, nan_seen) of two groups of rows together (Pébay's formulas)."""
    na, ma, m2a, m3a, m4a, nan_a = a
    nb, mb, m2b, m3b, m4b, nan_b = b
    n = na + nb
    with np.errstate(invalid="ignore", divide="ignore"):
        d = np.where(n > 0, mb - ma, 0.0)
        f = np.where(n > 0, na * nb / n, 0.0)
        nn = np.where(n > 0, n, 1.0)
        mean = np.where(n > 0, ma + d * nb / nn, 0.0)
        m2 = m2a + m2b + d * d * f
        m3 = m3a + m3b + d ** 3 * f * (na - nb) / nn + 3 * d * (na * m2b - nb * m2a) / nn
        m4 = (m4a + m4b + d ** 4 * f * (na * na - na * nb + nb * nb) / (nn * nn)
              + 6 * d * d * (na * na * m2b + nb * nb * m2a) / (nn * nn) + 4 * d * (na * m3b - nb * m3a) / nn)
    return n, mean, m2, m3, m4, nan_a | nan_b


class HigherMoments(Reducer):
    """skew / kurt of numeric columns (``positions``) from per-partition central moments."""

    name: str
    skipna: bool
    positions: list | None
    columns: Any
    dtype: Any
    scalar: bool

    def chunk(self, part: Any) -> tuple:
        frame = as_frame(part)
        if self.positions is not None:
            frame = frame.iloc[:, self.positions]
        x = _numbers(frame)
        valid = ~np.isnan(x)
        n = valid.sum(axis=0).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(n > 0, np.where(valid, x, 0.0).sum(axis=0) / np.where(n > 0, n, 1.0), 0.0)
        d = np.where(valid, x - mean, 0.0)
        d2 = d * d
        return n, mean, d2.sum(axis=0), (d2 * d).sum(axis=0), (d2 * d2).sum(axis=0), n < len(frame)

    def combine(self, partials: list) -> tuple:
        out = partials[0]
        for p in partials[1:]:
            out = _merge_moments(out, p)
        return out

    def agg(self, partials: list) -> Any:
        n, _, m2, m3, m4, nan_seen = self.combine(partials)
        with np.errstate(invalid="ignore", divide="ignore"):
            if self.name == "skew":
                out = (n * np.sqrt(n - 1) / (n - 2)) * (_zeroed(m3) / _zeroed(m2) ** 1.5)
                out = np.where((n < 3) | (_zeroed(m2) == 0), np.nan, out)
            else:
                num = _zeroed(n * (n + 1) * (n - 1) * m4)
                den = _zeroed((n - 2) * (n - 3) * m2 * m2)
                out = num / den - 3 * (n - 1) ** 2 / ((n - 2) * (n - 3))
                out = np.where((n < 4) | (den == 0), np.nan, out)
        if not self.skipna:
            out = np.where(nan_seen, np.nan, out)
        if self.scalar:
            return np.dtype(self.dtype).type(out[0])
        return pd.Series(out, index=self.columns).astype(self.dtype)


def _higher(name: str) -> Any:
    def method(self: Any, *, axis: Any = 0, skipna: bool = True, numeric_only: bool = False, **kwargs: Any) -> Any:
        if axis is None or (isinstance(self, DataFrame) and self.meta._get_axis_number(axis) == 1):
            if axis is None:
                raise NotImplementedError(f"{name}(axis=None); reduce each column, then the result")
            return map_partitions(name, self, axis=1, skipna=skipna, numeric_only=numeric_only, sample=True, **kwargs)
        data = as_data(self)
        kw = {"skipna": skipna, **({"numeric_only": numeric_only} if isinstance(self, DataFrame) else {}), **kwargs}
        result = sample_result(data.meta, name, (), kw)  # pandas' errors (strings), and the result's dtype
        meta = data.meta
        positions = None
        if isinstance(meta, pd.DataFrame):
            used = set(result.index)
            positions = [i for i, c in enumerate(meta.columns) if c in used]
        scalar = not isinstance(meta, pd.DataFrame)
        reducer = HigherMoments(name=name, skipna=bool(skipna), positions=positions,
                                columns=None if scalar else result.index,
                                dtype=np.asarray(result).dtype, scalar=scalar)
        return run_reducer(data, reducer, result)

    method.__name__ = name
    method.__doc__ = f"""Unbiased {'skewness' if name == 'skew' else 'excess kurtosis'} (``skipna``, ``numeric_only``), as pandas.

    >>> import mars.dataframe as md, pandas as pd
    >>> v = [1.0, 2.0, 4.0, 8.0, 3.0]
    >>> bool(abs(md.Series(v, chunk_size=2).{name}().fetch() - pd.Series(v).{name}()) < 1e-12)
    True
    """
    return method


# ----------------------------------------------------------------- corr, cov
def _merge_pairs(a: tuple, b: tuple) -> tuple:
    """Pairwise (n, mean_i, mean_j, M2_i, M2_j, C_ij, rows) of two groups of rows together (Chan)."""
    na, mia, mja, m2ia, m2ja, ca, ra = a
    nb, mib, mjb, m2ib, m2jb, cb, rb = b
    n = na + nb
    with np.errstate(invalid="ignore", divide="ignore"):
        nn = np.where(n > 0, n, 1.0)
        di, dj = mib - mia, mjb - mja
        f = na * nb / nn
        return (n, mia + di * nb / nn, mja + dj * nb / nn, m2ia + m2ib + di * di * f, m2ja + m2jb + dj * dj * f,
                ca + cb + di * dj * f, ra + rb)


def _complete_pairs(x: np.ndarray) -> tuple:
    """``CoMoments.chunk`` of rows with no missing value: one centred copy and one product (the same numbers)."""
    rows, k = x.shape
    mean = x.mean(axis=0) if rows else np.zeros(k)
    d = x - mean
    s = d.sum(axis=0)
    q = np.einsum("ij,ij->j", d, d)
    p = d.T @ d
    n = np.full((k, k), float(rows))
    with np.errstate(invalid="ignore", divide="ignore"):
        nn = max(float(rows), 1.0)
        mi = np.broadcast_to((mean + s / nn)[:, None], (k, k))
        m2 = np.broadcast_to((q - s * s / nn)[:, None], (k, k))
        return n, mi, mi.T, m2, m2.T, p - np.outer(s, s) / nn, float(rows)


class CoMoments(Reducer):
    """Pairwise-complete co-moments of numeric columns; ``agg`` gives ``how``: corr or cov (a frame)."""

    how: str
    positions: list | None
    columns: Any
    min_periods: int
    ddof: int
    complete: bool
    pick: Any

    def chunk(self, part: Any) -> tuple:
        frame = as_frame(part)
        if self.positions is not None:
            frame = frame.iloc[:, self.positions]
        x = _numbers(frame)
        valid = ~np.isnan(x)
        if valid.all():
            return _complete_pairs(x)
        v = valid.astype(np.float64)
        count = v.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            shift = np.where(count > 0, np.where(valid, x, 0.0).sum(axis=0) / np.where(count > 0, count, 1.0), 0.0)
        d = np.where(valid, x - shift, 0.0)
        n = v.T @ v
        s = d.T @ v  # s[i, j]: deviations of i summed over rows where i and j are valid
        q = (d * d).T @ v
        p = d.T @ d
        with np.errstate(invalid="ignore", divide="ignore"):
            nn = np.where(n > 0, n, 1.0)
            return (n, shift[:, None] + s / nn, shift[None, :] + s.T / nn, q - s * s / nn, q.T - s.T * s.T / nn,
                    p - s * s.T / nn, float(len(frame)))

    def combine(self, partials: list) -> tuple:
        out = partials[0]
        for p in partials[1:]:
            out = _merge_pairs(out, p)
        return out

    def agg(self, partials: list) -> Any:
        n, _, _, m2i, m2j, c, rows = self.combine(partials)
        if self.complete and (n < rows).any():
            raise NotImplementedError("corr(method='spearman') of data with missing values; dropna() first")
        with np.errstate(invalid="ignore", divide="ignore"):
            if self.how == "corr":
                den = np.sqrt(m2i * m2j)
                out = np.where(den > 0, c / np.where(den > 0, den, 1.0), np.nan)
                out = np.clip(out, -1.0, 1.0)
            else:
                # pandas honours ddof only for data without missing values (np.cov); else its nancov uses 1
                ddof = self.ddof if self.pick is not None or not (np.diag(n) < rows).any() else 1
                out = np.where(n - ddof > 0, c / (n - ddof), np.nan)
        out = np.where(n < max(self.min_periods, 1), np.nan, out)
        if self.pick is not None:
            return self.pick(out)
        return pd.DataFrame(out, index=self.columns, columns=self.columns)


class PickScalar(Reducer):
    """Entry ``(i, j)`` of the pairwise matrix, as pandas' scalar."""

    i: int
    j: int

    def __call__(self, out: np.ndarray) -> np.float64:
        return np.float64(out[self.i, self.j])


class PickPairs(Reducer):
    """Entries ``(i, j)`` for ``pairs`` (None: NaN), as a Series over ``index``."""

    pairs: list
    index: Any

    def __call__(self, out: np.ndarray) -> pd.Series:
        return pd.Series([np.nan if p is None else out[p] for p in self.pairs], index=self.index, dtype=np.float64)


def _positions(meta: pd.DataFrame, result_columns: Any) -> list:
    used = set(result_columns)
    return [i for i, c in enumerate(meta.columns) if c in used]


def _pairwise(self: DataFrame, how: str, method: str, min_periods: Any, ddof: int, numeric_only: bool) -> Any:
    kw = {"numeric_only": numeric_only}
    if how == "corr":
        kw.update(method=method, min_periods=min_periods)
    else:
        kw.update(min_periods=min_periods, ddof=ddof)
    result = getattr(fake(self.meta), how)(**kw)  # pandas' errors and the columns used
    if how == "corr" and method not in ("pearson", "spearman"):
        raise NotImplementedError(f"corr(method={method!r}); supported are 'pearson' and 'spearman'")
    positions = _positions(self.meta, result.columns)
    obj = self
    if method == "spearman":
        obj = self.iloc[:, positions].rank()
        positions = None
    reducer = CoMoments(how=how, positions=positions, columns=result.columns, min_periods=min_periods or 1,
                        ddof=1 if ddof is None else ddof, complete=method == "spearman", pick=None)
    return run_reducer(as_data(obj), reducer, result)


def _df_corr(self: DataFrame, method: str = "pearson", min_periods: int = 1, numeric_only: bool = False) -> Any:
    """Pairwise correlation of columns (pairwise-complete rows), as ``pandas.DataFrame.corr``.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1.0, 2, 3], "b": [2.0, 4, 6]}, chunk_size=2).corr().to_pandas().round(6)
         a    b
    a  1.0  1.0
    b  1.0  1.0
    """
    return _pairwise(self, "corr", method, min_periods, 1, numeric_only)


def _df_cov(self: DataFrame, min_periods: Any = None, ddof: Any = 1, numeric_only: bool = False) -> Any:
    """Pairwise covariance of columns (pairwise-complete rows), as ``pandas.DataFrame.cov``.

    >>> import mars.dataframe as md
    >>> md.DataFrame({"a": [1.0, 2, 3], "b": [2.0, 4, 6]}, chunk_size=2).cov().to_pandas()
         a    b
    a  1.0  2.0
    b  2.0  4.0
    """
    return _pairwise(self, "cov", "pearson", min_periods, ddof, numeric_only)


def _pair_frame(a: pd.Series, b: pd.Series) -> pd.DataFrame:
    return pd.DataFrame({0: a, 1: b})


def _series_pair(self: Series, other: Any, how: str, method: str, min_periods: Any, ddof: int) -> Any:
    if not isinstance(other, Series):
        raise TypeError(f"other must be a mars Series, got {type(other).__name__}")
    if how == "corr" and method not in ("pearson", "spearman"):
        raise NotImplementedError(f"corr(method={method!r}); supported are 'pearson' and 'spearman'")
    pair = map_partitions(_pair_frame, self, other)
    if method == "spearman":
        pair = pair.dropna().rank()
    reducer = CoMoments(how=how, positions=None, columns=None, min_periods=min_periods or 1,
                        ddof=1 if ddof is None else ddof, complete=False, pick=PickScalar(i=0, j=1))
    return run_reducer(as_data(pair), reducer, np.float64(0.0))


def _series_corr(self: Series, other: Series, method: str = "pearson", min_periods: Any = None) -> Any:
    """Correlation with ``other`` (aligned on the index), as ``pandas.Series.corr``: a 0-d tensor.

    >>> import mars.dataframe as md
    >>> float(md.Series([1.0, 2, 3], chunk_size=2).corr(md.Series([1.0, 2, 4])).fetch().round(6))
    0.981981
    """
    return _series_pair(self, other, "corr", method, min_periods, 1)


def _series_cov(self: Series, other: Series, min_periods: Any = None, ddof: Any = 1) -> Any:
    """Covariance with ``other`` (aligned on the index), as ``pandas.Series.cov``.

    >>> import mars.dataframe as md
    >>> float(md.Series([1.0, 2, 3], chunk_size=2).cov(md.Series([2.0, 4, 6])).fetch())
    2.0
    """
    return _series_pair(self, other, "cov", "pearson", min_periods, ddof)


def _autocorr(self: Series, lag: int = 1) -> Any:
    """Correlation with itself ``lag`` rows before, as ``pandas.Series.autocorr``.

    >>> import mars.dataframe as md
    >>> float(md.Series([1.0, 2, 3, 5], chunk_size=2).autocorr().fetch().round(6))
    0.981981
    """
    return _series_corr(self, self.shift(lag))


def _corrwith(self: DataFrame, other: Any, axis: Any = 0, drop: bool = False, method: str = "pearson",
              numeric_only: bool = False, min_periods: Any = None) -> Any:
    """Correlation of each column with a Series, or with the same column of another DataFrame.

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"a": [1.0, 2, 3], "b": [3.0, 2, 1]}, chunk_size=2)
    >>> df.corrwith(md.Series([1.0, 2, 3])).to_pandas().round(6).tolist()
    [1.0, -1.0]
    """
    if self.meta._get_axis_number(axis) != 0:
        raise NotImplementedError("corrwith(axis=1); transpose is not lazy: use to_pandas()")
    if method != "pearson":
        raise NotImplementedError(f"corrwith(method={method!r}); only 'pearson'")
    other_meta = other.meta if isinstance(other, (Series, DataFrame)) else None
    if other_meta is None:
        raise TypeError(f"other must be a mars DataFrame or Series, got {type(other).__name__}")
    result = fake(self.meta).corrwith(fake(other_meta), drop=drop, numeric_only=numeric_only)
    this = self.meta._get_numeric_data() if numeric_only else self.meta
    left = list(this.columns)
    if isinstance(other, Series):
        pair = map_partitions(_with_column, self[left], other)
        pairs = [(i, len(left)) for i in range(len(left))]
    else:
        common = [c for c in result.index if c in set(left) and c in set(other_meta.columns)]
        pair = map_partitions(_side_by_side, self[common], other[common])
        pairs = [(common.index(c), len(common) + common.index(c)) if c in common else None for c in result.index]
    reducer = CoMoments(how="corr", positions=None, columns=None, min_periods=min_periods or 1, ddof=1, complete=False,
                        pick=PickPairs(pairs=pairs, index=result.index))
    return run_reducer(as_data(pair), reducer, result)


def _with_column(frame: pd.DataFrame, s: pd.Series) -> pd.DataFrame:
    out = frame.set_axis(range(frame.shape[1]), axis=1)
    out[frame.shape[1]] = s
    return out


def _side_by_side(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    k = a.shape[1]
    return pd.concat([a.set_axis(range(k), axis=1), b.set_axis(range(k, 2 * k), axis=1)], axis=1)


for _cls in (DataFrame, Series):
    _cls.skew = _higher("skew")
    _cls.kurt = _cls.kurtosis = _higher("kurt")
DataFrame.corr = _df_corr
DataFrame.cov = _df_cov
DataFrame.corrwith = _corrwith
Series.corr = _series_corr
Series.cov = _series_cov
Series.autocorr = _autocorr
