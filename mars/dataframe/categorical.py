"""``Series.cat``: pandas' categorical accessor on a lazy Series.

A categorical Series' ``meta`` carries its dtype, categories included (a
lazy ``astype("category")`` finds them when it is built), so ``categories``,
``ordered`` and the dtype of every result are known before anything runs.
Each method is pandas' own on every partition: the partitions share the
dtype, so their codes mean the same thing. ``remove_unused_categories``
needs the categories in use: a tree of each partition's codes in use, run
when it is called (as ``astype("category")`` does), keeps the result's
dtype known.

>>> import mars.dataframe as md
>>> s = md.Series(["b", "a", "b"], dtype="category", chunk_size=2)
>>> s.cat.categories.tolist(), s.cat.codes.to_pandas().tolist()
(['a', 'b'], [1, 0, 1])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .core import Series
from .map import map_partitions
from .reduction import tree_reduce

__all__: list[str] = []


def _cat_call(part: pd.Series, name: str, args: tuple, kwargs: dict) -> pd.Series:
    return getattr(part.cat, name)(*args, **kwargs)


def _codes(part: pd.Series) -> pd.Series:
    return part.cat.codes


def _used_codes(part: pd.Series) -> np.ndarray:
    codes = part.cat.codes.to_numpy()
    return np.unique(codes[codes >= 0])


def _merge_codes(parts: list) -> np.ndarray:
    return np.unique(np.concatenate(parts)) if parts else np.array([], dtype=np.int64)


class CategoricalAccessor:
    """``series.cat``: categories and codes of a lazy categorical Series, as ``pandas.Series.cat``.

    >>> import mars.dataframe as md
    >>> s = md.Series(["x", "y"], dtype="category", chunk_size=1)
    >>> s.cat.add_categories(["z"]).cat.categories.tolist()
    ['x', 'y', 'z']
    """

    def __init__(self, obj: Any):
        self._accessor = obj.meta.cat  # pandas' own check: AttributeError for other dtypes
        self._obj = obj

    @property
    def categories(self) -> pd.Index:
        """The categories (known from the dtype, before running)."""
        return self._accessor.categories

    @property
    def ordered(self) -> bool:
        """Whether the categories are ordered."""
        return self._accessor.ordered

    @property
    def codes(self) -> Series:
        """Each value's position among the categories (-1 where missing), as a lazy Series."""
        return map_partitions(_codes, self._obj, meta=self._accessor.codes)

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Series:
        meta = getattr(self._accessor, name)(*args, **kwargs)  # pandas' argument errors, raised now
        return map_partitions(_cat_call, self._obj, name, args, kwargs, meta=meta)

    def add_categories(self, new_categories: Any) -> Series:
        """The categories with ``new_categories`` appended, as ``pandas.Series.cat.add_categories``."""
        return self._call("add_categories", new_categories)

    def remove_categories(self, removals: Any) -> Series:
        """The categories without ``removals`` (their values become missing)."""
        return self._call("remove_categories", removals)

    def rename_categories(self, new_categories: Any) -> Series:
        """New names for the categories (a list, a dict or a function), as pandas."""
        return self._call("rename_categories", new_categories)

    def reorder_categories(self, new_categories: Any, ordered: Any = None) -> Series:
        """The same categories in a new order, as ``pandas.Series.cat.reorder_categories``."""
        return self._call("reorder_categories", new_categories, ordered=ordered)

    def set_categories(self, new_categories: Any, ordered: Any = None, rename: bool = False) -> Series:
        """New categories (values outside them become missing, or renamed in order with ``rename=True``)."""
        return self._call("set_categories", new_categories, ordered=ordered, rename=rename)

    def as_ordered(self) -> Series:
        """The categories marked ordered."""
        return self._call("as_ordered")

    def as_unordered(self) -> Series:
        """The categories marked unordered."""
        return self._call("as_unordered")

    def remove_unused_categories(self) -> Series:
        """Only the categories some value uses, in their order; they are found (a tree) when this is called.

        >>> import mars.dataframe as md
        >>> s = md.Series(["a", "c"], dtype=pd.CategoricalDtype(["a", "b", "c"]), chunk_size=1)
        >>> s.cat.remove_unused_categories().cat.categories.tolist()
        ['a', 'c']
        """
        used = tree_reduce(self._obj, _used_codes, _merge_codes, _merge_codes, np.dtype(object)).fetch()
        dtype = pd.CategoricalDtype(self._accessor.categories[np.asarray(used, dtype=np.intp)], self.ordered)
        meta = pd.Series([], dtype=dtype, name=self._obj.meta.name, index=self._obj.meta.index)
        return map_partitions(_cat_call, self._obj, "set_categories", (dtype.categories,), {}, meta=meta)

    def __dir__(self) -> list:
        return sorted(n for n in vars(type(self)) if not n.startswith("_"))


Series.cat = property(CategoricalAccessor, doc="Categorical properties and methods (``pandas.Series.cat``).")
