"""Bin-count estimators of ``histogram(bins='auto' | 'fd' | ...)``, from whole-tensor statistics.

Each estimator gives a bin width from a few statistics of the data in the
range (size, span, variance, third moment, quartiles), computed here as mars
expressions; the number of equal bins then spans the outer edges (the
``range``, or the data's minimum and maximum).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..core import Tensor
from .basic import mean
from .quantile import percentile

#: estimator name → the statistics its width needs (beyond size and span)
ESTIMATORS: dict[str, tuple[str, ...]] = {
    "auto": ("iqr",), "fd": ("iqr",), "sturges": (), "rice": (), "sqrt": (), "scott": ("var",),
    "doane": ("var", "m3"), "stone": (),
}


def in_range(t: Tensor, span: Any) -> Tensor:
    """The values of ``t`` inside ``span`` (both ends kept), or ``t`` itself."""
    if span is None:
        return t
    lo, hi = span
    return t[(t >= lo) & (t <= hi)]


def estimator_stats(t: Tensor, name: str) -> dict[str, Tensor]:
    """Mars expressions of the statistics estimator ``name`` needs, of nonempty ``t``."""
    if name == "stone":
        raise NotImplementedError("histogram(bins='stone') is not supported; give another estimator or a bin count")
    stats = {}
    needs = ESTIMATORS[name]
    if "iqr" in needs:
        stats["iqr"] = percentile(t, [25, 75])
    if "var" in needs or "m3" in needs:
        dev = t - mean(t)
        stats["var"] = mean(dev * dev)
        if "m3" in needs:
            stats["m3"] = mean(dev * dev * dev)
    return stats


def _sturges(n: int, ptp: float, s: dict) -> float:
    return ptp / (np.log2(n) + 1.0)


def _fd(n: int, ptp: float, s: dict) -> float:
    return 2.0 * float(s["iqr"][1] - s["iqr"][0]) * n ** (-1.0 / 3.0)


def _auto(n: int, ptp: float, s: dict) -> float:
    fd = _fd(n, ptp, s)
    return min(fd, _sturges(n, ptp, s)) if fd else _sturges(n, ptp, s)


def _doane(n: int, ptp: float, s: dict) -> float:
    if n <= 2 or not s["var"] > 0:
        return 0.0
    sg1 = np.sqrt(6.0 * (n - 2) / ((n + 1.0) * (n + 3)))
    g1 = float(s["m3"]) / float(s["var"]) ** 1.5
    return ptp / (1.0 + np.log2(n) + np.log2(1.0 + np.absolute(g1) / sg1))


_WIDTH: dict[str, Callable[[int, float, dict], float]] = {
    "auto": _auto, "fd": _fd, "sturges": _sturges, "doane": _doane,
    "rice": lambda n, ptp, s: ptp / (2.0 * n ** (1.0 / 3)),
    "sqrt": lambda n, ptp, s: ptp / np.sqrt(n),
    "scott": lambda n, ptp, s: (24.0 * np.pi ** 0.5 / n) ** (1.0 / 3.0) * np.sqrt(float(s["var"])),
}


def bin_count(name: str, n: int, lo: Any, hi: Any, stats: dict, span: Any, is_int: bool) -> int:
    """The number of equal bins estimator ``name`` gives ``n`` values from ``lo`` to ``hi`` (in the range)."""
    if not n:
        return 1
    ptp = float(np.subtract(hi, lo, dtype=np.float64))
    w = _WIDTH[name](n, ptp, stats)
    if not w:
        return 1
    if is_int and w < 1:
        w = 1
    first, last = (float(span[0]), float(span[1])) if span is not None else (float(lo), float(hi))
    if first == last:
        first, last = first - 0.5, last + 0.5
    return int(math.ceil((last - first) / w))
