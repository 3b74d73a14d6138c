"""The numbers behind exponentially weighted windows, with state carried between partitions.

pandas' EWM is a recurrence over the rows. Its value at a row is a weighted
mean (and weighted co-moment) of the observations so far, with weights that
depend only on where the observations are, never on their values:

- each row decays every existing weight by ``1 - alpha`` (by
  ``0.5 ** (dt / halflife)`` with ``times``), an observation always, a
  missing value too unless ``ignore_na``;
- a new observation weighs 1 (``adjust=True``), or ``alpha`` after which all
  weights are divided by their total (``adjust=False``).

So a partition is computed *as if it started the series* at its first
observation (:func:`local_rows`: weighted sums of the rows, one vectorized
pass), and the true values follow by rescaling: all the weights of the
partitions before it are scaled by one number and its own by another
(:func:`compose`). The state between partitions is a few numbers per column
(total weight, total squared weight, means, co-moment, observations) plus how
the decay ran inside the partition, so the states of all partitions are
computed in parallel and chained by a tiny scan, as for ``expanding``.

Weighted sums are evaluated in blocks whose weights stay within ``exp(±600)``,
so long partitions neither overflow nor lose the small weights.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

#: largest exponent a block's weights may span
_SPAN = 600.0


@dataclasses.dataclass
class Decay:
    """How weights decay: ``log_factor`` per row (or per ``steps`` of time), ``alpha`` for ``adjust=False``."""

    log_factor: float
    alpha: float
    adjust: bool
    ignore_na: bool
    #: pandas' mean with adjust=False and com == 1 gives a new value what the decayed weights leave of 1
    leftover: bool = False


def weighted_sums(g: np.ndarray, h: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``out[t] = sum(exp(g[t] - h[i]) * v[i] for i <= t)`` without overflow (``g``, ``h`` non-increasing)."""
    n = len(g)
    out = np.empty(n)
    if n == 0:
        return out
    floor = np.minimum.accumulate(h)
    start, carry, g_carry = 0, 0.0, 0.0
    while start < n:
        base = h[start]
        stop = int(np.searchsorted(-floor, -(base - _SPAN), side="right"))
        stop = max(stop, start + 1)
        with np.errstate(over="ignore", under="ignore"):
            partial = np.cumsum(np.exp(base - h[start:stop]) * v[start:stop])
            out[start:stop] = np.exp(g[start:stop] - base) * partial
            if start:
                out[start:stop] += carry * np.exp(g[start:stop] - g_carry)
        carry, g_carry = out[stop - 1], g[stop - 1]
        start = stop
    return out


@dataclasses.dataclass
class Local:
    """Per row, a partition's numbers as if the series began at its first observation ``first``.

    Sums are of the values less the first observation's (which so adds
    nothing to them); ``w``/``w2`` leave that first observation out: its
    weight is ``exp(rho)`` alone, or a share of it once rows come before.
    """

    first: int                # row of the first observation (len: none)
    pre_first: float          # log decay of a weight from before the partition, up to that observation
    pre: np.ndarray           # log decay of a weight from before the partition, up to each row (started)
    rho: np.ndarray           # log scale since the first observation of a weight existing then
    w: np.ndarray             # total weight of the later observations
    w2: np.ndarray            # total squared weight of the later observations
    sx: np.ndarray            # weighted sums of x - cx, y - cy and their product
    sy: np.ndarray
    sxy: np.ndarray
    cx: float
    cy: float
    nobs: np.ndarray          # observations so far


def _log_weights(obs: np.ndarray, lam: np.ndarray, decay: Decay) -> tuple[np.ndarray, np.ndarray]:
    """``g``, ``h``: an observation at ``i`` weighs ``exp(g[t] - h[i])`` at row ``t`` (as if ``first`` began)."""
    n = len(obs)
    where = np.flatnonzero(obs)
    log_q, log_c = np.zeros(n), np.zeros(n)
    if not decay.adjust and len(where) > 1:
        # a later observation weighs alpha against the decayed total, then all are divided by their sum
        old = np.exp(np.diff(lam[where]))
        new = 1.0 - old if decay.leftover else np.full(len(old), decay.alpha)
        norm = np.log(old + new)
        marks = np.zeros(n)
        marks[where[1:]] = norm
        log_q = np.cumsum(marks)
        with np.errstate(divide="ignore"):
            log_c[where[1:]] = np.log(new) - norm
    g = lam - log_q
    return g, np.where(obs, g - log_c, g)


def local_rows(x: np.ndarray, y: np.ndarray, steps: np.ndarray, decay: Decay) -> Local:
    """The numbers of rows ``x`` (and ``y``; the same array for a variance) as if they began the series."""
    n = len(x)
    obs = ~(np.isnan(x) | np.isnan(y))
    decays = steps * decay.log_factor
    if decay.ignore_na:
        decays = np.where(obs, decays, 0.0)
    pre = np.cumsum(decays)
    where = np.flatnonzero(obs)
    first = int(where[0]) if len(where) else n
    lam = np.where(np.arange(n) >= first, pre - (pre[first] if first < n else 0.0), 0.0)
    g, h = _log_weights(obs, lam, decay)
    later = obs.copy()
    later[first:first + 1] = False
    ones = later.astype(np.float64)
    cx = float(x[first]) if first < n else 0.0
    cy = float(y[first]) if first < n else 0.0
    dx = np.where(later, x - cx, 0.0)
    dy = np.where(later, y - cy, 0.0)
    sx = weighted_sums(g, h, dx)
    return Local(first, float(pre[first]) if first < n else 0.0, pre, g, weighted_sums(g, h, ones),
                 weighted_sums(2 * g, 2 * h, ones), sx, sx if y is x else weighted_sums(g, h, dy),
                 weighted_sums(g, h, dx * dy), cx, cy, np.cumsum(obs))


def last_row(local: Local) -> Local:
    """What the next partitions need of a partition: its last row, after the last row whose weights had not all
    decayed to nothing (whose mean the rows after it keep)."""
    n = len(local.w)
    if n == 0:
        return local
    alive = np.flatnonzero((np.arange(n) >= local.first) & (local.w + np.exp(local.rho) > 0))
    pick = [int(alive[-1]), n - 1] if len(alive) and alive[-1] < n - 1 else [n - 1]
    arrays = (local.pre, local.rho, local.w, local.w2, local.sx, local.sy, local.sxy)
    first = 0 if local.first < n else len(pick)
    return Local(first, local.pre_first, *(a[pick] for a in arrays), local.cx, local.cy, local.nobs[pick])


@dataclasses.dataclass
class State:
    """What the rows so far leave for the next ones (``nobs == 0``: nothing yet)."""

    w: float = 0.0
    w2: float = 0.0
    mx: float = 0.0
    my: float = 0.0
    c: float = 0.0
    nobs: int = 0


def _shares(prior: State, local: Local, decay: Decay) -> tuple[float, float]:
    """The first observation's share of its weight, and the prior's weight factor (before ``exp(rho)``)."""
    if prior.nobs == 0:
        return 1.0, 0.0
    d = math.exp(local.pre_first)
    if decay.adjust:
        return 1.0, d
    old = prior.w * d
    new = 1.0 - old if decay.leftover else decay.alpha
    return new / (old + new), d / (old + new)


def compose(prior: State, local: Local, decay: Decay) -> tuple:
    """``(w, w2, mx, my, c, nobs)`` at each row of a partition after the rows summarized in ``prior``."""
    n = len(local.w)
    after = np.arange(n) >= local.first
    q, f = _shares(prior, local, decay)
    scale = np.exp(local.rho)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        wl = np.where(after, local.w + q * scale, 0.0)
        w2l = np.where(after, local.w2 + q * q * scale * scale, 0.0)
        mx, my = local.cx + local.sx / wl, local.cy + local.sy / wl
        c = local.sxy - local.sx * local.sy / wl
        if prior.nobs == 0:
            return wl, w2l, _held(mx, np.nan), _held(my, np.nan), c, local.nobs.copy()
        d = np.where(after, f * scale, np.exp(local.pre))  # the prior's weights' factor at each row
        wp = d * prior.w
        total = wp + wl
        mx_all = np.where(after, (wp * prior.mx + wl * mx) / total, prior.mx)
        my_all = np.where(after, (wp * prior.my + wl * my) / total, prior.my)
        c_all = d * prior.c + np.where(after, c + wp * wl / total * (prior.mx - mx) * (prior.my - my), 0.0)
        w2 = d * d * prior.w2 + w2l
    return total, w2, _held(mx_all, prior.mx), _held(my_all, prior.my), c_all, local.nobs + prior.nobs


def _held(mean: np.ndarray, seed: float) -> np.ndarray:
    """Means where every weight has decayed to nothing (0 / 0) keep the last one, as pandas' recurrence does."""
    gone = np.isnan(mean)
    if not gone.any():
        return mean
    held = np.where(gone, np.nan, mean)
    if len(held) and np.isnan(held[0]):
        held[0] = seed
    return pd.Series(held).ffill().to_numpy()


def end_state(prior: State, local: Local, decay: Decay) -> State:
    """The state after the whole partition (``local`` may be :func:`last_row`'s)."""
    if len(local.w) == 0:
        return prior
    w, w2, mx, my, c, nobs = (float(a[-1]) for a in compose(prior, local, decay))
    return State(w, w2, mx, my, c, int(nobs))


def finish(how: str, numbers: tuple, min_periods: int, bias: bool = False) -> np.ndarray:
    """pandas' ``mean``/``sum``/``var``/``std``/``cov`` from the numbers of each row."""
    w, w2, mx, _my, c, nobs = numbers
    with np.errstate(invalid="ignore", divide="ignore"):
        if how == "mean":
            out = np.where(nobs > 0, mx, np.nan)
        elif how == "sum":
            out = np.where(nobs > 0, w * np.nan_to_num(mx), np.nan)
        else:
            cov = np.where(nobs > 1, c / w, 0.0)
            if not bias:
                denom = w * w - w2
                cov = np.where((denom > 0) & (nobs > 1), cov * (w * w) / denom, np.nan)
            out = np.where(w > 0, cov, np.nan)
            if how == "std":
                out = np.sqrt(np.maximum(out, 0.0))
    return np.where(nobs >= max(min_periods, 1), out, np.nan)
