"""Result types of the tests in ``mt.stats``: scipy's names and fields, holding lazy tensors.

Each unpacks like scipy's (``statistic, pvalue = res``); ``execute()`` runs all
the fields in one go, ``fetch()`` gives the same type holding numpy values.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from ...core.session import resolve_session
from ..core import Tensor


def _tensors(value: Any) -> list[Tensor]:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, tuple):
        return [t for v in value for t in _tensors(v)]
    return []


def _fetched(value: Any, values: dict[int, Any]) -> Any:
    if isinstance(value, Tensor):
        return values[id(value)]
    if isinstance(value, tuple):
        return tuple(_fetched(v, values) for v in value)
    return value


class LazyResult:
    """Mixin: run and fetch every tensor a result holds (its tuple fields and its extra attributes)."""

    _extra: tuple[str, ...] = ()

    def _all_fields(self) -> list[Any]:
        return list(self) + [getattr(self, name) for name in self._extra]  # type: ignore[call-overload]

    def execute(self, session: Any = None, **kw: Any) -> Any:
        """Run all the fields' tensors in one go; returns the result itself."""
        tensors = [t for v in self._all_fields() for t in _tensors(v)]
        if tensors:
            resolve_session(session).execute(*tensors, **kw)
        return self

    def fetch(self, session: Any = None) -> Any:
        """The same result type, holding the computed (numpy) values."""
        tensors = [t for v in self._all_fields() for t in _tensors(v)]
        fetched = resolve_session(session).fetch(*tensors) if tensors else []
        if len(tensors) == 1:
            fetched = [fetched]
        values = {id(t): v for t, v in zip(tensors, fetched)}
        main = [_fetched(v, values) for v in self]  # type: ignore[attr-defined]
        extra = {name: _fetched(getattr(self, name), values) for name in self._extra}
        return type(self)(*main, **extra)


class TtestResult(LazyResult, namedtuple("TtestResult", ["statistic", "pvalue"])):
    """``(statistic, pvalue)`` with the degrees of freedom as ``df``, as scipy's ``TtestResult``."""

    _extra = ("df",)

    def __new__(cls, statistic: Any, pvalue: Any, *, df: Any) -> TtestResult:
        self = super().__new__(cls, statistic, pvalue)
        self.df = df
        return self

    def __repr__(self) -> str:
        return f"TtestResult(statistic={self.statistic!r}, pvalue={self.pvalue!r}, df={self.df!r})"


class KstestResult(LazyResult, namedtuple("KstestResult", ["statistic", "pvalue"])):
    """``(statistic, pvalue)`` with ``statistic_location`` and ``statistic_sign``, as scipy's."""

    _extra = ("statistic_location", "statistic_sign")

    def __new__(cls, statistic: Any, pvalue: Any, *, statistic_location: Any, statistic_sign: Any) -> KstestResult:
        self = super().__new__(cls, statistic, pvalue)
        self.statistic_location = statistic_location
        self.statistic_sign = statistic_sign
        return self

    def __repr__(self) -> str:
        return (f"KstestResult(statistic={self.statistic!r}, pvalue={self.pvalue!r}, "
                f"statistic_location={self.statistic_location!r}, statistic_sign={self.statistic_sign!r})")


class Power_divergenceResult(LazyResult, namedtuple("Power_divergenceResult", ["statistic", "pvalue"])):
    """``(statistic, pvalue)`` of :func:`power_divergence` and :func:`chisquare`, as scipy's."""


class DescribeResult(
    LazyResult, namedtuple("DescribeResult", ["nobs", "minmax", "mean", "variance", "skewness", "kurtosis"])
):
    """What :func:`describe` returns, as scipy's (``minmax`` is a pair of tensors)."""


class Ttest_indResult(LazyResult, namedtuple("Ttest_indResult", ["statistic", "pvalue"])):
    """``(statistic, pvalue)`` of :func:`ttest_ind_from_stats`, as scipy's."""
