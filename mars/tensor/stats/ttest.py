"""t-tests: means and variances are tree reductions; the p-value is Student's t from ``scipy.special.stdtr``.

Every step is a lazy tensor expression, so a test over a big sample is a
handful of reductions and one elementwise p-value, as in scipy (same
formulas: pooled or Welch's variance, ``2 * stdtr(df, -|t|)`` two-sided).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..arithmetic.core import apply_ufunc, where_
from ..base.shape import broadcast_to, ravel, squeeze
from ..core import Tensor
from ..datasource.core import astensor
from ..reduction.basic import mean
from ..reduction.core import normalize_axis
from ..reduction.stats import var
from ..special.core import apply_scipy
from .results import Ttest_indResult, TtestResult

__all__ = ["ttest_1samp", "ttest_ind", "ttest_ind_from_stats", "ttest_rel"]

_ALTERNATIVES = ("less", "greater", "two-sided")


def check_alternative(alternative: str) -> None:
    if alternative not in _ALTERNATIVES:
        raise ValueError("`alternative` must be 'less', 'greater', or 'two-sided'.")


def check_nan_policy(nan_policy: str) -> None:
    if nan_policy not in ("propagate", "raise", "omit"):
        raise ValueError("nan_policy must be one of {'propagate', 'raise', 'omit'}")
    if nan_policy != "propagate":
        raise NotImplementedError(f"nan_policy={nan_policy!r}: mars computes with nan_policy='propagate'; "
                                  "drop NaNs first (x[~mt.isnan(x)]) to omit them")


def _t_pvalue(t: Tensor, df: Any, alternative: str) -> Tensor:
    """scipy's p-value of ``t`` under Student's t with ``df`` degrees of freedom."""
    if alternative == "less":
        return apply_scipy("special.stdtr", df, t)
    if alternative == "greater":
        return apply_scipy("special.stdtr", df, -t)
    return 2 * apply_scipy("special.stdtr", df, -apply_ufunc("absolute", t))


def _sample(a: Any, axis: Any) -> tuple[Tensor, int]:
    t = astensor(a)
    if axis is None:
        return ravel(t), 0
    (axis,) = normalize_axis(axis, t.ndim)
    return t, axis


def ttest_1samp(a: Any, popmean: Any, axis: Any = 0, nan_policy: str = "propagate",
                alternative: str = "two-sided") -> TtestResult:
    """t-test of the null hypothesis that the mean of ``a`` is ``popmean``, as ``scipy.stats.ttest_1samp``.

    >>> import mars.tensor as mt
    >>> res = mt.stats.ttest_1samp(mt.tensor([1.0, 2.0, 3.0, 4.0], chunk_size=3), 2.5).fetch()
    >>> float(res.statistic), float(res.pvalue), int(res.df)
    (0.0, 1.0, 3)
    """
    check_alternative(alternative)
    check_nan_policy(nan_policy)
    a, axis = _sample(a, axis)
    n = a.shape[axis]
    pop = astensor(popmean)
    if pop.ndim > 0:
        if pop.ndim != a.ndim or pop.shape[axis] != 1:
            raise ValueError("`popmean.shape[axis]` must equal 1.")
        pop = squeeze(pop, axis=axis)
    d = mean(a, axis=axis) - pop
    denom = apply_ufunc("sqrt", var(a, axis=axis, ddof=1) / n)
    t = d / denom
    df = broadcast_to(astensor(np.int64(n - 1)), t.shape)
    return TtestResult(t, _t_pvalue(t, np.asarray(n - 1, dtype=t.dtype)[()], alternative), df=df)


def ttest_rel(a: Any, b: Any, axis: Any = 0, nan_policy: str = "propagate",
              alternative: str = "two-sided") -> TtestResult:
    """t-test on two related samples (their differences have mean 0), as ``scipy.stats.ttest_rel``.

    >>> import mars.tensor as mt
    >>> float(mt.stats.ttest_rel(mt.tensor([1.0, 2.0, 4.0]), mt.tensor([1.0, 1.0, 1.0])).statistic.fetch())
    1.5118578920369088
    """
    a, b = astensor(a), astensor(b)
    if axis is not None:
        (ax,) = normalize_axis(axis, a.ndim)
        if b.ndim != a.ndim or a.shape[ax] != b.shape[ax]:
            raise ValueError("unequal length arrays")
    return ttest_1samp(a - b, 0.0, axis=axis, nan_policy=nan_policy, alternative=alternative)


def _equal_var_denom(v1: Any, n1: Any, v2: Any, n2: Any) -> tuple[Any, Tensor]:
    # one observation: its variance is undefined, but the pooled variance is not
    v1 = where_(apply_ufunc("equal", n1, 1), 0.0, v1)
    v2 = where_(apply_ufunc("equal", n2, 1), 0.0, v2)
    df = n1 + n2 - 2.0
    svar = ((n1 - 1) * v1 + (n2 - 1) * v2) / df
    denom = apply_ufunc("sqrt", svar * (1.0 / n1 + 1.0 / n2))
    return df, denom


def _unequal_var_denom(v1: Any, n1: Any, v2: Any, n2: Any) -> tuple[Any, Tensor]:
    vn1, vn2 = v1 / n1, v2 / n2
    df = (vn1 + vn2) ** 2 / (vn1 ** 2 / (n1 - 1) + vn2 ** 2 / (n2 - 1))
    df = where_(apply_ufunc("isnan", df), 1.0, df)  # zero variances: any df will do
    return df, apply_ufunc("sqrt", vn1 + vn2)


def _finish(m1: Any, m2: Any, denom: Tensor, df: Any, alternative: str) -> tuple[Tensor, Tensor, Tensor]:
    t = (m1 - m2) / denom
    df = apply_ufunc("asarray", df, dtype=t.dtype)
    return t, _t_pvalue(t, df, alternative), broadcast_to(df, t.shape)


def ttest_ind(a: Any, b: Any, *, axis: Any = 0, equal_var: bool = True, nan_policy: str = "propagate",
              permutations: Any = None, random_state: Any = None, alternative: str = "two-sided",
              trim: float = 0, method: Any = None) -> TtestResult:
    """t-test of two independent samples having equal means (Student's, or Welch's with
    ``equal_var=False``), as ``scipy.stats.ttest_ind``.

    >>> import mars.tensor as mt
    >>> res = mt.stats.ttest_ind(mt.tensor([1.0, 2.0, 3.0]), mt.tensor([1.0, 2.0, 3.0]), equal_var=False)
    >>> float(res.pvalue.fetch())
    1.0
    """
    check_alternative(alternative)
    check_nan_policy(nan_policy)
    if not 0 <= trim < 0.5:
        raise ValueError("Trimming percentage should be 0 <= `trim` < .5.")
    if trim or permutations or method is not None:
        raise NotImplementedError("ttest_ind with trim, permutations or method is not available in mars; "
                                  "use scipy.stats.ttest_ind on fetched data")
    a, b = astensor(a), astensor(b)
    if axis is None:
        a, b, axis = ravel(a), ravel(b), 0
    (ax_a,) = normalize_axis(axis, a.ndim)
    (ax_b,) = normalize_axis(axis, b.ndim)
    n1, n2 = a.shape[ax_a], b.shape[ax_b]
    v1, v2 = var(a, axis=ax_a, ddof=1), var(b, axis=ax_b, ddof=1)
    denom_of = _equal_var_denom if equal_var else _unequal_var_denom
    df, denom = denom_of(v1, n1, v2, n2)
    t, p, df = _finish(mean(a, axis=ax_a), mean(b, axis=ax_b), denom, df, alternative)
    return TtestResult(t, p, df=df)


def ttest_ind_from_stats(mean1: Any, std1: Any, nobs1: Any, mean2: Any, std2: Any, nobs2: Any,
                         equal_var: bool = True, alternative: str = "two-sided") -> Ttest_indResult:
    """t-test of two independent samples given their means, standard deviations (``ddof=1``) and sizes,
    as ``scipy.stats.ttest_ind_from_stats``.

    >>> import mars.tensor as mt
    >>> round(float(mt.stats.ttest_ind_from_stats(1.0, 1.0, 10, 0.0, 1.0, 10).statistic.fetch()), 6)
    2.236068
    """
    check_alternative(alternative)
    mean1, std1, mean2, std2 = (astensor(x) for x in (mean1, std1, mean2, std2))
    nobs1, nobs2 = astensor(nobs1), astensor(nobs2)
    denom_of = _equal_var_denom if equal_var else _unequal_var_denom
    df, denom = denom_of(std1 ** 2, nobs1, std2 ** 2, nobs2)
    t, p, _ = _finish(mean1, mean2, denom, df, alternative)
    return Ttest_indResult(t, p)
