"""``power_divergence`` and ``chisquare``: a sum of per-cell terms, the p-value from ``scipy.special.chdtrc``.

scipy checks that observed and expected frequencies have equal sums; here
that check is part of the graph: the statistic's chunks raise scipy's
``ValueError`` when they run if the sums differ.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..arithmetic.core import apply_ufunc
from ..base.shape import broadcast_arrays, ravel
from ..core import Tensor
from ..datasource.core import astensor
from ..reduction.basic import any as any_
from ..reduction.basic import mean
from ..reduction.basic import sum as sum_
from ..reduction.core import normalize_axis
from ..special.core import apply_scipy
from .results import Power_divergenceResult

__all__ = ["chisquare", "power_divergence"]

_LAMBDA_NAMES = {
    "pearson": 1,
    "log-likelihood": 0,
    "freeman-tukey": -0.5,
    "mod-log-likelihood": -1,
    "neyman": -2,
    "cressie-read": 2 / 3,
}


def _lambda(lambda_: Any) -> float:
    if isinstance(lambda_, str):
        if lambda_ not in _LAMBDA_NAMES:
            names = repr(list(_LAMBDA_NAMES.keys()))[1:-1]
            raise ValueError(f"invalid string for lambda_: {lambda_!r}. Valid strings are {names}")
        return _LAMBDA_NAMES[lambda_]
    return 1 if lambda_ is None else lambda_


def _sums_agree(stat: np.ndarray, relative_diff: np.ndarray, bad: Any, rtol: float) -> np.ndarray:
    """The chunk function of the sum check: ``stat`` itself, or scipy's error."""
    if bool(np.all(bad)) and np.size(stat):
        raise ValueError("For each axis slice, the sum of the observed frequencies must agree with the sum of the "
                         f"expected frequencies to a relative tolerance of {rtol}, but the percent differences are:\n"
                         f"{relative_diff}")
    return stat


def _floating(x: Any) -> Tensor:
    t = astensor(x)
    return t if t.dtype.kind in "fc" else t.astype(np.float64)


def _terms(f_obs: Tensor, f_exp: Any, lambda_: float) -> Tensor:
    if lambda_ == 1:
        return (f_obs - f_exp) ** 2 / f_exp
    if lambda_ == 0:
        return 2.0 * apply_scipy("special.xlogy", f_obs, f_obs / f_exp)
    if lambda_ == -1:
        return 2.0 * apply_scipy("special.xlogy", f_exp, f_exp / f_obs)
    return f_obs * ((f_obs / f_exp) ** lambda_ - 1) / (0.5 * lambda_ * (lambda_ + 1))


def power_divergence(f_obs: Any, f_exp: Any = None, ddof: int = 0, axis: Any = 0,
                     lambda_: Any = None) -> Power_divergenceResult:
    """Cressie-Read power divergence statistic and goodness-of-fit test, as ``scipy.stats.power_divergence``.

    >>> import mars.tensor as mt
    >>> res = mt.stats.power_divergence(mt.tensor([16, 18, 16, 14, 12, 12]), lambda_="log-likelihood").fetch()
    >>> round(float(res.statistic), 6)
    2.006573
    """
    return _power_divergence(f_obs, f_exp, ddof, axis, _lambda(lambda_), sum_check=True)


def _power_divergence(f_obs: Any, f_exp: Any, ddof: Any, axis: Any, lam: float,
                      sum_check: bool) -> Power_divergenceResult:
    obs = _floating(f_obs)
    exp_ = None if f_exp is None else _floating(f_exp)
    if axis is None:
        obs, exp_, axis = ravel(obs), (None if exp_ is None else ravel(exp_)), 0
    if exp_ is not None:
        dtype = np.result_type(obs.dtype, exp_.dtype)
        obs, exp_ = (x.astype(dtype) for x in broadcast_arrays(obs, exp_))
    (axis,) = normalize_axis(axis, obs.ndim)
    checked = None
    if exp_ is None:
        exp_ = mean(obs, axis=axis, keepdims=True)
    elif sum_check:
        checked = _sum_check(obs, exp_, axis)
    stat = sum_(_terms(obs, exp_, lam), axis=axis)
    if checked is not None:
        relative_diff, bad, rtol = checked
        stat = apply_scipy(_sums_agree, stat, relative_diff, bad, rtol)
    df = obs.shape[axis] - 1 - astensor(ddof)
    pvalue = apply_scipy("special.chdtrc", df, stat)
    return Power_divergenceResult(stat, pvalue)


def _sum_check(obs: Tensor, exp_: Tensor, axis: int) -> tuple[Tensor, Tensor, float]:
    rtol = float(np.finfo(exp_.dtype).eps ** 0.5)
    obs_sum, exp_sum = sum_(obs.astype(np.float64), axis=axis), sum_(exp_, axis=axis)
    relative_diff = apply_ufunc("absolute", obs_sum - exp_sum) / apply_ufunc("minimum", obs_sum, exp_sum)
    return relative_diff, any_(relative_diff > rtol), rtol


def chisquare(f_obs: Any, f_exp: Any = None, ddof: int = 0, axis: Any = 0, *,
              sum_check: bool = True) -> Power_divergenceResult:
    """Pearson's chi-squared goodness-of-fit test, as ``scipy.stats.chisquare``.

    >>> import mars.tensor as mt
    >>> res = mt.stats.chisquare(mt.tensor([16, 18, 16, 14, 12, 12], chunk_size=4)).fetch()
    >>> float(res.statistic), round(float(res.pvalue), 6)
    (2.0, 0.849145)
    """
    return _power_divergence(f_obs, f_exp, ddof, axis, 1, sum_check=sum_check)
