"""Kolmogorov-Smirnov tests without a global sort: empirical CDFs by counting.

The empirical CDF of a sample at ``v`` is the count of its values ``<= v``
over its size. :class:`TensorCountNotAbove` counts, for every value of a
query tensor, the values of a data tensor not above it (or below it): each
data chunk is sorted where it is, each (query chunk, data chunk) pair is one
``searchsorted``, and the counts of a query chunk are summed over the data
chunks. Each op holds at most one chunk of each; every data chunk is read
once per query chunk. The statistics are reductions over these counts, and
the p-value comes from scipy on the reduced statistic (``ks_2samp``'s exact
p-value uses scipy's own routine, a private function of ``scipy.stats``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...core.operator import Tiled
from ..arithmetic.core import apply_ufunc, where_
from ..base.sort import TensorSortChunk
from ..core import Tensor, TensorOperator, tensor_data
from ..datasource.core import astensor
from ..reduction.basic import any as any_
from ..reduction.basic import max as max_
from ..reduction.basic import min as min_
from ..special.core import apply_scipy, scipy_op
from .results import KstestResult

__all__ = ["ks_1samp", "ks_2samp"]


class TensorCountPiece(TensorOperator):
    """For each query value, how many values of one sorted data chunk are ``<= it`` (side right) or ``< it``."""

    params = ("side",)

    def execute(self, query: np.ndarray, data: np.ndarray) -> np.ndarray:
        return np.searchsorted(data, query, side=self.side).astype(np.int64)


class TensorCountSum(TensorOperator):
    params = ()

    def execute(self, *pieces: np.ndarray) -> np.ndarray:
        return np.sum(pieces, axis=0, dtype=np.int64)


class TensorCountNotAbove(TensorOperator):
    """Per value of a 1-d query tensor, the count of a 1-d data tensor's values ``<=`` it
    (``side="right"``) or ``<`` it (``side="left"``)."""

    params = ("side",)

    @classmethod
    def tile(cls, op: TensorCountNotAbove) -> Tiled:
        query, data = op.inputs
        out = op.outputs[0]
        sorted_data = [TensorSortChunk(axis=0).new_chunk([c], index=c.index, shape=c.shape, dtype=c.dtype, order="C")
                       for c in data.chunks]
        chunks = []
        for q in query.chunks:
            meta = dict(shape=q.shape, dtype=out.dtype, order="C")
            pieces = [TensorCountPiece(side=op.side).new_chunk([q, d], index=(q.index[0], i), **meta)
                      for i, d in enumerate(sorted_data)]
            chunks.append(pieces[0] if len(pieces) == 1 else TensorCountSum().new_chunk(pieces, index=q.index, **meta))
        return Tiled(chunks, query.nsplits)


def count_not_above(query: Any, data: Any, side: str = "right") -> Tensor:
    """How many values of 1-d ``data`` are ``<=`` (``side="right"``) or ``<`` each value of 1-d ``query``."""
    q, d = tensor_data(astensor(query)), tensor_data(astensor(data))
    return TensorCountNotAbove(side=side).new_tensor([q, d], q.shape, np.dtype(np.int64))


def _check_alternative(alternative: str, message: Callable[[str], str]) -> str:
    alternative = {"t": "two-sided", "g": "greater", "l": "less"}.get(str(alternative).lower()[:1], alternative)
    if alternative not in ("two-sided", "less", "greater"):
        raise ValueError(message(alternative))
    return alternative


def _sample(x: Any, name: str) -> tuple[Tensor, int]:
    t = astensor(x)
    if t.ndim != 1:
        raise NotImplementedError(f"{name} of a {t.ndim}-d sample; mars tests a 1-d sample (ravel it, or test each slice)")
    n = t.shape[0]
    if isinstance(n, float) and math.isnan(n):
        raise ValueError(f"{name} needs the sample's size; it is known only after running: execute the sample first")
    return t, int(n)


def _first_at(values: Tensor, target: Tensor, x: Tensor) -> Tensor:
    """The smallest ``x`` where ``values`` equals ``target`` (its maximum): scipy's location of the statistic."""
    big = np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).max
    return min_(where_(values == target, x, big).astype(x.dtype))


def _ks_scalar(func: Callable, args: list, dtypes: list) -> tuple[Tensor, ...]:
    """The final step: ``func`` on 0-d tensors (and constants), several 0-d outputs."""
    result = scipy_op(func, args, {}, dtypes)
    assert isinstance(result, tuple)
    return result


def _has_nan(x: Tensor) -> Any:
    return any_(apply_ufunc("isnan", x)) if x.dtype.kind in "fc" else False


def _nan_if(has_nan: Any, d: Any, p: Any, loc: Any) -> tuple:
    if not has_nan:
        return d, p, loc
    return np.nan, np.nan, (np.nan if np.asarray(loc).dtype.kind in "fc" else loc)


def _ks1_finish(dplus: Any, dminus: Any, loc_plus: Any, loc_minus: Any, has_nan: Any, n: int,
                alternative: str, mode: str) -> tuple:
    """scipy's choice of statistic and its p-value, from D+ and D- (the statistics' chunk function)."""
    from scipy.stats import distributions

    if alternative == "greater":
        d, loc, sign, p = dplus, loc_plus, 1, distributions.ksone.sf(dplus, n)
    elif alternative == "less":
        d, loc, sign, p = dminus, loc_minus, -1, distributions.ksone.sf(dminus, n)
    else:
        d, loc, sign = (dplus, loc_plus, 1) if dplus > dminus else (dminus, loc_minus, -1)
        if mode in ("auto", "exact"):
            p = distributions.kstwo.sf(d, n)
        elif mode == "asymp":
            p = distributions.kstwobign.sf(d * np.sqrt(n))
        else:
            p = 2 * distributions.ksone.sf(d, n)
        p = np.clip(p, 0, 1)
    d, p, loc = _nan_if(has_nan, d, p, loc)
    return np.float64(d), np.float64(p), loc, np.int8(sign)


def ks_1samp(x: Any, cdf: Any, args: tuple = (), alternative: str = "two-sided", method: str = "auto") -> KstestResult:
    """One-sample Kolmogorov-Smirnov test of ``x`` against the continuous ``cdf``, as ``scipy.stats.ks_1samp``.

    ``cdf`` is a callable (applied to chunks of ``x`` with ``*args``) or the name
    of a scipy.stats distribution. A sample holding NaN gives NaN statistic,
    p-value and location (scipy also makes the sign NaN; here it stays int8).

    >>> import mars.tensor as mt
    >>> res = mt.stats.ks_1samp(mt.tensor([-1.0, 0.0, 1.0], chunk_size=2), "norm").fetch()
    >>> round(float(res.statistic), 6), int(res.statistic_sign)
    (0.174678, -1)
    """
    alternative = _check_alternative(alternative, lambda a: f"Unexpected value alternative={a!r}")
    if method not in ("auto", "exact", "asymp", "approx"):
        raise ValueError(f"Invalid value for mode: {method}")
    t, n = _sample(x, "ks_1samp")
    func = f"stats.{cdf}.cdf" if isinstance(cdf, str) else cdf
    values = apply_scipy(func, t, *args)
    dplus = count_not_above(t, t, "right") / n - values
    dminus = values - count_not_above(t, t, "left") / n
    top_plus, top_minus = max_(dplus), max_(dminus)
    parts = [top_plus, top_minus, _first_at(dplus, top_plus, t), _first_at(dminus, top_minus, t), _has_nan(t)]
    d, p, loc, sign = _ks_scalar(_ks1_finish, parts + [n, alternative, method],
                                 [np.float64, np.float64, t.dtype, np.int8])
    return KstestResult(d, p, statistic_location=loc, statistic_sign=sign)


def _ks2_pvalue(d: float, n1: int, n2: int, alternative: str, mode: str) -> tuple[float, float]:
    """scipy's p-value of the two-sample statistic ``d`` (and ``d`` rounded as scipy's exact method does)."""
    import warnings

    from scipy.stats import distributions
    from scipy.stats._stats_py import _attempt_exact_2kssamp

    g = math.gcd(n1, n2)
    if mode == "auto":
        mode = "exact" if max(n1, n2) <= 10000 else "asymp"
    elif mode == "exact" and n1 // g >= np.iinfo(np.int32).max / (n2 // g):
        mode = "asymp"
        warnings.warn(f"Exact ks_2samp calculation not possible with samples sizes {n1} and {n2}. "
                      "Switching to 'asymp'.", RuntimeWarning, stacklevel=2)
    prob = -np.inf
    if mode == "exact":
        success, d, prob = _attempt_exact_2kssamp(n1, n2, g, d, alternative)
        if not success:
            mode = "asymp"
            warnings.warn(f"ks_2samp: Exact calculation unsuccessful. Switching to method={mode}.",
                          RuntimeWarning, stacklevel=2)
    if mode == "asymp":
        m, n = sorted([float(n1), float(n2)], reverse=True)
        en = m * n / (m + n)
        if alternative == "two-sided":
            prob = distributions.kstwo.sf(d, np.round(en))
        else:
            z = np.sqrt(en) * d
            prob = np.exp(-2 * z ** 2 - 2 * z * (m + 2 * n) / np.sqrt(m * n * (m + n)) / 3.0)
    return d, np.clip(prob, 0, 1)


def _ks2_finish(min_s: Any, max_s: Any, loc_min: Any, loc_max: Any, has_nan: Any, n1: int, n2: int,
                alternative: str, mode: str) -> tuple:
    if alternative == "less" or (alternative == "two-sided" and min_s > max_s):
        d, loc, sign = min_s, loc_min, -1
    else:
        d, loc, sign = max_s, loc_max, 1
    d, p = _ks2_pvalue(float(d), n1, n2, alternative, mode)
    d, p, loc = _nan_if(has_nan, d, p, loc)
    return np.float64(d), np.float64(p), loc, np.int8(sign)


def ks_2samp(data1: Any, data2: Any, alternative: str = "two-sided", method: str = "auto") -> KstestResult:
    """Two-sample Kolmogorov-Smirnov test, as ``scipy.stats.ks_2samp``.

    The empirical CDFs are found by counting (each data chunk sorted where it
    is, one ``searchsorted`` per pair of chunks), never by gathering a sample.

    >>> import mars.tensor as mt
    >>> res = mt.stats.ks_2samp(mt.tensor([1.0, 2.0, 3.0], chunk_size=2), mt.tensor([2.5, 3.5])).fetch()
    >>> round(float(res.statistic), 6), round(float(res.pvalue), 6)
    (0.666667, 0.6)
    """
    if method not in ("auto", "exact", "asymp"):
        raise ValueError(f"Invalid value for mode: {method}")
    alternative = _check_alternative(alternative, lambda a: f"Invalid value for alternative: {a}")
    (t1, n1), (t2, n2) = _sample(data1, "ks_2samp"), _sample(data2, "ks_2samp")
    if min(n1, n2) == 0:
        raise ValueError("Data passed to ks_2samp must not be empty")
    dtype = np.result_type(t1.dtype, t2.dtype)
    t1, t2 = t1.astype(dtype), t2.astype(dtype)
    diff1 = count_not_above(t1, t1) / n1 - count_not_above(t1, t2) / n2
    diff2 = count_not_above(t2, t1) / n1 - count_not_above(t2, t2) / n2
    min1, min2, max1, max2 = min_(diff1), min_(diff2), max_(diff1), max_(diff2)
    low, high = apply_ufunc("minimum", min1, min2), apply_ufunc("maximum", max1, max2)
    # scipy's argmin/argmax run over sorted data1 then sorted data2: the first sample wins ties
    loc_min = where_(min1 == low, _first_at(diff1, low, t1), _first_at(diff2, low, t2))
    loc_max = where_(max1 == high, _first_at(diff1, high, t1), _first_at(diff2, high, t2))
    has_nan = apply_ufunc("logical_or", _has_nan(t1), _has_nan(t2))
    parts = [apply_ufunc("clip", -low, 0, 1), high, loc_min, loc_max, has_nan, n1, n2, alternative, method]
    d, p, loc, sign = _ks_scalar(_ks2_finish, parts, [np.float64, np.float64, dtype, np.int8])
    return KstestResult(d, p, statistic_location=loc, statistic_sign=sign)
