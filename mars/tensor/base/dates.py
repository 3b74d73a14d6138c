"""Dates: ``datetime_as_string`` and the business-day functions ``is_busday``, ``busday_offset``,
``busday_count`` (with numpy's ``busdaycalendar``), elementwise over datetime64 tensors.

Each is numpy's own function applied chunk by chunk (broadcasting as numpy
does). A ``busdaycalendar`` cannot be pickled to the workers, so it travels as
the weekmask and holidays it holds, which numpy takes in its place.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy import busdaycalendar

from ..arithmetic.core import apply_ufunc
from ..core import Tensor, is_tensor

__all__ = ["busday_count", "busday_offset", "busdaycalendar", "datetime_as_string", "is_busday"]

_DAY = np.dtype("datetime64[D]")
_DEFAULT_WEEKMASK = "1111100"


def datetime_as_string(arr: Any, unit: str | None = None, timezone: Any = "naive",
                       casting: str = "same_kind") -> Tensor:
    """Each datetime64 of ``arr`` as an ISO 8601 string, as ``np.datetime_as_string`` (the string
    width follows ``unit`` and ``timezone``, as numpy's does).

    >>> import mars.tensor as mt
    >>> t = mt.tensor(["2020-01-01T10:30", "2021-06-15T00:00"], dtype="M8[m]", chunk_size=1)
    >>> mt.datetime_as_string(t, unit="D").execute().fetch()
    array(['2020-01-01', '2021-06-15'], dtype='<U28')
    """
    return apply_ufunc("datetime_as_string", arr, unit=unit, timezone=timezone, casting=casting)


def _dates(x: Any) -> Any:
    """Dates as numpy reads them: arrays and tensors as they are, anything else parsed to days."""
    return x if is_tensor(x) or isinstance(x, np.ndarray) else np.asarray(x, dtype=_DAY)


def _calendar(weekmask: Any, holidays: Any, busdaycal: Any) -> dict:
    """The calendar keywords for the chunks (numpy checks them first): a ``busdaycalendar`` as its
    weekmask and holidays, keywords not given left out (numpy takes no None for them)."""
    given = {"weekmask": weekmask, "holidays": holidays, "busdaycal": busdaycal}
    given = {k: v for k, v in given.items() if v is not None and not (k == "weekmask" and v == _DEFAULT_WEEKMASK)}
    np.is_busday(np.empty(0, dtype=_DAY), **given)
    if busdaycal is not None:
        return {"weekmask": busdaycal.weekmask, "holidays": busdaycal.holidays}
    if holidays is not None:
        given["holidays"] = np.asarray(holidays, dtype=_DAY)
    return given


def is_busday(dates: Any, weekmask: Any = _DEFAULT_WEEKMASK, holidays: Any = None, busdaycal: Any = None,
              out: Any = None) -> Tensor:
    """Whether each date is a business day (a day of ``weekmask`` and not a holiday), as
    ``np.is_busday``.

    >>> import mars.tensor as mt
    >>> mt.is_busday(["2011-07-01", "2011-07-02", "2011-07-04"], holidays=["2011-07-04"]).execute().fetch()
    array([ True, False, False])
    """
    calendar = _calendar(weekmask, holidays, busdaycal)
    return apply_ufunc("is_busday", _dates(dates), out=out, **calendar)


def busday_offset(dates: Any, offsets: Any, roll: str = "raise", weekmask: Any = _DEFAULT_WEEKMASK,
                  holidays: Any = None, busdaycal: Any = None, out: Any = None) -> Tensor:
    """Each date moved by ``offsets`` business days (a date that is not one first rolled as
    ``roll`` says; ``"raise"`` fails when computed), as ``np.busday_offset``.

    >>> import mars.tensor as mt
    >>> mt.busday_offset(["2011-10-31", "2011-11-04"], [1, 1]).execute().fetch()
    array(['2011-11-01', '2011-11-07'], dtype='datetime64[D]')
    """
    calendar = _calendar(weekmask, holidays, busdaycal)
    if not (is_tensor(offsets) or isinstance(offsets, np.ndarray)):
        offsets = np.asarray(offsets, dtype=np.int64)
    return apply_ufunc("busday_offset", _dates(dates), offsets, roll=roll, out=out, **calendar)


def busday_count(begindates: Any, enddates: Any, weekmask: Any = _DEFAULT_WEEKMASK, holidays: Any = None,
                 busdaycal: Any = None, out: Any = None) -> Tensor:
    """The number of business days from each begin date up to (not including) its end date
    (negative when the end comes first), as ``np.busday_count``.

    >>> import mars.tensor as mt
    >>> mt.busday_count(["2011-01-01", "2011-01-10"], "2011-02-01").execute().fetch()
    array([21, 16])
    """
    calendar = _calendar(weekmask, holidays, busdaycal)
    return apply_ufunc("busday_count", _dates(begindates), _dates(enddates), out=out, **calendar)
