"""Time-series methods: ``asfreq``, ``asof``, ``at_time``, ``between_time``, ``tz_convert``,
``tz_localize``, ``to_period``, ``to_timestamp``.

``asfreq`` and ``asof`` put rows on new labels: they run as ``reindex`` does
(see :mod:`.align`: only the index, and for ``asof`` one validity flag per
row, is fetched at tiling; each new partition gathers its own rows). The
others are one pandas call per partition: they filter rows by their own
label, or change labels one by one. (``resample`` lives with the windows.)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..basic import _local, _partitionwise, _relabelled
from ..core import DataFrame, Series
from .align import plan_asfreq, plan_asof, take_by_plan

__all__: list[str] = []

_NO_DEFAULT = pd.api.extensions.no_default


def _asfreq(self: Any, freq: Any, method: Any = None, how: Any = None, normalize: bool = False,
            fill_value: Any = None) -> Any:
    """The rows on a regular grid of ``freq`` from the first label to the last, as pandas' ``asfreq``.

    >>> import mars.dataframe as md, pandas as pd
    >>> s = md.Series([1.0, 2.0], index=pd.to_datetime(["2000-01-01", "2000-01-03"]), chunk_size=1)
    >>> s.asfreq("D", fill_value=0.0).to_pandas().tolist()
    [1.0, 0.0, 2.0]
    """
    if method not in (None, "backfill", "bfill", "pad", "ffill"):
        raise ValueError(f"Invalid fill method. Expecting pad (ffill) or backfill (bfill). Got {method}")
    kw = {"freq": freq, "method": method, "how": how, "normalize": normalize}
    labels_meta = self.meta.asfreq(**kw).index  # pandas' checks of freq and how, and the new index's type
    fill = np.nan if fill_value is None else fill_value
    return _relabelled(take_by_plan([self], plan_asfreq, kw, fill, labels_meta=labels_meta))


def _asof(self: Any, where: Any, subset: Any = None) -> Any:
    """The last row without missing values at or before each of ``where``, as pandas' ``asof``.

    A scalar ``where`` gives a scalar (a Series: one value; a DataFrame: one row as a Series).

    >>> import mars.dataframe as md
    >>> s = md.Series([1.0, None, 3.0], index=[10, 20, 30], chunk_size=1)
    >>> s.asof([5, 25, 35]).to_pandas().tolist()
    [nan, 1.0, 3.0]
    >>> float(s.asof(25).to_numpy())
    1.0
    """
    if isinstance(self, Series) and subset is not None:
        raise ValueError("subset is not valid for Series")
    if isinstance(subset, str) or (subset is not None and not pd.api.types.is_list_like(subset)):
        subset = [subset]
    if subset is not None:
        missing = [c for c in subset if c not in self.meta.columns]
        if missing:
            raise KeyError(f"{missing} not in columns")
    scalar = not pd.api.types.is_list_like(where)
    labels = pd.Index([where] if scalar else where)
    result = take_by_plan([self], plan_asof, {"where": labels}, np.nan, labels_meta=labels,
                          validity=(None if subset is None else list(subset),))
    if not scalar:
        return _relabelled(result)
    return result.iloc[0]


def _at_time(self: Any, time: Any, asof: bool = False, axis: Any = None) -> Any:
    """The rows (or columns, ``axis=1``) at time of day ``time``, per partition, as pandas' ``at_time``.

    >>> import mars.dataframe as md, pandas as pd
    >>> s = md.Series(range(4), index=pd.date_range("2000-01-01", periods=4, freq="12h"), chunk_size=3)
    >>> s.at_time("12:00").to_pandas().tolist()
    [1, 3]
    """
    self.meta.at_time(time, asof=asof, axis=axis)  # pandas' checks
    return _partitionwise(self, "at_time", time, asof=asof, axis=axis)


def _between_time(self: Any, start_time: Any, end_time: Any, inclusive: str = "both", axis: Any = None) -> Any:
    """The rows (or columns) whose time of day is between the two, per partition, as pandas' ``between_time``.

    >>> import mars.dataframe as md, pandas as pd
    >>> s = md.Series(range(4), index=pd.date_range("2000-01-01", periods=4, freq="6h"), chunk_size=3)
    >>> s.between_time("05:00", "13:00").to_pandas().tolist()
    [1, 2]
    """
    self.meta.between_time(start_time, end_time, inclusive=inclusive, axis=axis)
    return _partitionwise(self, "between_time", start_time, end_time, inclusive=inclusive, axis=axis)


def _labels_changed(self: Any, result: Any, axis: Any) -> Any:
    return _relabelled(result) if self.meta._get_axis_number(axis) == 0 else result


def _tz_convert(self: Any, tz: Any, axis: Any = 0, level: Any = None, copy: Any = _NO_DEFAULT) -> Any:
    """The labels converted to time zone ``tz``, per partition, as pandas' ``tz_convert``.

    >>> import mars.dataframe as md, pandas as pd
    >>> s = md.Series([1], index=pd.date_range("2000-01-01", periods=1, tz="UTC"))
    >>> str(s.tz_convert("Asia/Tokyo").to_pandas().index[0])
    '2000-01-01 09:00:00+09:00'
    """
    self.meta.tz_convert(tz, axis=axis, level=level)
    return _labels_changed(self, _local(self, "tz_convert", tz, axis=axis, level=level), axis)


def _tz_localize(self: Any, tz: Any, axis: Any = 0, level: Any = None, copy: Any = _NO_DEFAULT,
                 ambiguous: Any = "raise", nonexistent: Any = "raise") -> Any:
    """Time-zone-naive labels made aware of ``tz``, per partition, as pandas' ``tz_localize``.

    ``ambiguous`` must be a scalar choice: ``"infer"`` reads the labels' order
    across partitions, and an array must be cut as the rows are.

    >>> import mars.dataframe as md, pandas as pd
    >>> s = md.Series([1], index=pd.date_range("2000-01-01", periods=1))
    >>> str(s.tz_localize("UTC").to_pandas().index.tz)
    'UTC'
    """
    if isinstance(ambiguous, str) and ambiguous == "infer" or pd.api.types.is_list_like(ambiguous):
        raise NotImplementedError(f"tz_localize(ambiguous={ambiguous!r}) reads the labels of other partitions; "
                                  "pass 'NaT', 'raise', True or False")
    kw = {"axis": axis, "level": level, "ambiguous": ambiguous, "nonexistent": nonexistent}
    self.meta.tz_localize(tz, **kw)
    return _labels_changed(self, _local(self, "tz_localize", tz, **kw), axis)


def _to_period(self: Any, freq: Any = None, axis: Any = 0, copy: Any = _NO_DEFAULT) -> Any:
    """Datetime labels as periods of ``freq``, per partition, as pandas' ``to_period``.

    ``freq`` is needed when it would be inferred from the labels (from all of them, in pandas).

    >>> import mars.dataframe as md, pandas as pd
    >>> s = md.Series([1, 2], index=pd.to_datetime(["2000-01-05", "2000-02-05"]), chunk_size=1)
    >>> s.to_period("M").to_pandas().index.tolist()
    [Period('2000-01', 'M'), Period('2000-02', 'M')]
    """
    axis = self.meta._get_axis_number(axis)
    kw = {} if isinstance(self, Series) else {"axis": axis}
    if freq is None and axis == 0:
        raise NotImplementedError("to_period() infers the frequency from all the labels: pass freq=")
    self.meta.to_period(freq, **kw)
    return _labels_changed(self, _local(self, "to_period", freq, **kw), axis)


def _to_timestamp(self: Any, freq: Any = None, how: str = "start", axis: Any = 0, copy: Any = _NO_DEFAULT) -> Any:
    """Period labels as timestamps (at the ``how`` end of each period), per partition, as pandas' ``to_timestamp``.

    >>> import mars.dataframe as md, pandas as pd
    >>> s = md.Series([1, 2], index=pd.period_range("2000-01", periods=2, freq="M"), chunk_size=1)
    >>> s.to_timestamp().to_pandas().index.tolist()
    [Timestamp('2000-01-01 00:00:00'), Timestamp('2000-02-01 00:00:00')]
    """
    axis = self.meta._get_axis_number(axis)
    kw = {"how": how} if isinstance(self, Series) else {"how": how, "axis": axis}
    self.meta.to_timestamp(freq, **kw)
    return _labels_changed(self, _local(self, "to_timestamp", freq, **kw), axis)


for _cls in (DataFrame, Series):
    _cls.asfreq = _asfreq
    _cls.asof = _asof
    _cls.at_time = _at_time
    _cls.between_time = _between_time
    _cls.tz_convert = _tz_convert
    _cls.tz_localize = _tz_localize
    _cls.to_period = _to_period
    _cls.to_timestamp = _to_timestamp
