"""Grouped operations: ``df.groupby(...)`` / ``s.groupby(...)`` and their methods.

Importing this package installs ``DataFrame.groupby`` and ``Series.groupby``;
it exports no top-level functions.

- :mod:`.keys`: what ``by=`` / ``level=`` name, evaluated per partition;
- :mod:`.plan` and :mod:`.tree`: aggregations from per-partition partials;
- :mod:`.shuffle`: hash and range shuffles on the keys;
- :mod:`.agg`: aggregations (tree or shuffle, chosen at tile time);
- :mod:`.transform`: results row for row (broadcast lookups or round trips);
- :mod:`.scan`: cumulative functions and ``head`` over few groups, without a shuffle;
- :mod:`.groupby`: the user-facing DataFrameGroupBy and SeriesGroupBy;
- :mod:`.members`: ``ngroup``, ``get_group``, ``groups``/``indices``, iteration, ``sample``, ``corr``...;
- :mod:`.windows`: ``rolling``, ``expanding``, ``ewm`` and ``resample`` per group.
"""

from __future__ import annotations

from . import groupby as _groupby  # noqa: F401 - installs the methods
from .groupby import DataFrameGroupBy, SeriesGroupBy  # noqa: F401
from . import members as _members  # noqa: F401,E402 - ngroup, get_group, groups, iteration, sample, corr...
from . import windows as _windows  # noqa: F401,E402 - rolling, expanding, ewm and resample per group

__all__: list[str] = []
