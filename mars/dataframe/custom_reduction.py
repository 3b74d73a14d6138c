"""``CustomReduction``: a user's reduction in three stages (``pre``, ``agg``, ``post``), run as a tree.

It lives in a leaf module because both whole-frame ``agg``
(:mod:`mars.dataframe.convert`) and grouped ``agg``
(:mod:`mars.dataframe.groupby`) run it.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["CustomReduction"]


def as_tuple(value: Any) -> tuple:
    """``value`` if it is a tuple, else ``(value,)`` (a stage of a reduction returns one value or several)."""
    return value if isinstance(value, tuple) else (value,)


class CustomReduction:
    """A reduction of one's own for ``agg``, in three stages (Mars' ``CustomReduction``).

    Subclass it and define ``agg(*values)``, and optionally ``pre(data)``
    and ``post(*values)``. For each column, each partition gives
    ``agg(*pre(column))``; the partitions' results (a Series per value)
    are reduced by ``agg`` again, as a tree; ``post`` makes the final value.
    Each stage may return one value or a tuple.

    >>> import mars.dataframe as md
    >>> class Mean(md.CustomReduction):
    ...     def pre(self, data):
    ...         return data.sum(), data.count()
    ...     def agg(self, total, count):
    ...         return total.sum(), count.sum()
    ...     def post(self, total, count):
    ...         return total / count
    >>> md.Series([1.0, 2.0, 6.0], chunk_size=2).agg(Mean()).fetch()
    np.float64(3.0)
    """

    name: str | None = None

    def __init__(self, name: str | None = None, is_gpu: bool | None = None):
        self.name = name or type(self).__name__
        self.is_gpu = is_gpu

    def pre(self, data: pd.Series) -> Any:
        return data

    def agg(self, *values: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define agg(self, *values)")

    def post(self, *values: Any) -> Any:
        return values[0] if len(values) == 1 else values

    def __call__(self, data: pd.Series) -> Any:
        """The reduction of a whole pandas Series in one go (what the tree computes)."""
        return self.post(*as_tuple(self.agg(*as_tuple(self.pre(data)))))

    def __eq__(self, other: object) -> bool:
        # equal after a round trip through pickle (a plan names it in several places)
        if type(self) is not type(other):
            return False
        try:
            return bool(vars(self) == vars(other))
        except ValueError:  # attributes that do not compare to one bool (arrays)
            return self is other

    def __hash__(self) -> int:
        return hash((type(self).__module__, type(self).__qualname__))

    def __mars_tokenize__(self) -> tuple:
        return type(self).__module__, type(self).__qualname__, sorted(vars(self).items())
