"""More of pandas' GroupBy: group numbers, one group, the groups as a dict, iteration, sampling and more.

- ``ngroup``: each partition lists its distinct keys, one small op puts them
  in pandas' order (sorted, or by first appearance with ``sort=False``), and
  each partition looks its rows' keys up in that list; ``ngroups`` is its
  length.
- ``get_group(name)``: pandas' ``get_group`` on each partition (no shuffle);
  a name found in no partition raises pandas' ``KeyError`` when run.
- ``groups`` / ``indices``: computed from the key columns and the index
  only, by pandas itself (so the types and key forms are pandas'); iteration
  (``for key, group in gb``) fetches the data, as it hands every group to the
  client.
- ``corr``, ``cov``, ``skew``, ``kurt``, ``take``, ``nlargest``, ``value_counts``...:
  pandas' call on whole groups after a shuffle on the keys.
- ``sample``: pandas' ``sample`` on whole groups (a round trip); the rows come
  back in their original order (pandas gives them group by group).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any

import numpy as np
import pandas as pd

from ...core.operator import Tiled
from ..core import PandasOperator, chunk_index_of, chunk_shape_of, nsplits_of, wrap
from ..indexing import select_columns
from ..map import Slot
from ..meta import empty_meta
from .agg import aligned_partitions
from .groupby import DataFrameGroupBy, GroupBy, SeriesGroupBy
from .keys import key_codes, row_keys

__all__: list[str] = []


# ----------------------------------------------------------------- the groups' keys, in pandas' order
class PartitionKeys(PandasOperator):
    """A partition's distinct group keys, in order of first appearance."""

    params = ("spec",)

    def execute(self, part: Any, *keys: Any) -> pd.Index:
        return self.spec.groupby(part, keys, select=False, sort=False, as_index=True).size().index


class OrderKeys(PandasOperator):
    """All partitions' keys, once each, in pandas' group order."""

    params = ("spec",)

    def execute(self, *indexes: pd.Index) -> pd.Index:
        kept = [i for i in indexes if len(i)] or list(indexes[:1])
        keys = kept[0].append(kept[1:]) if len(kept) > 1 else kept[0]
        keys = keys.drop_duplicates()
        if not self.spec.sort or len(keys) == 0:
            return keys
        # pandas' own ordering of group keys (NaN last, categories in their order)
        levels = list(range(keys.nlevels))
        return pd.Series(0, index=keys).groupby(level=levels, sort=True, dropna=False, observed=True).size().index


class GroupNumbers(PandasOperator):
    """Each row's group number: the position of its key among all groups' keys (NaN: a dropped key)."""

    params = ("spec", "ascending")

    def execute(self, part: Any, *rest: Any) -> pd.Series:
        *keys, ordered = rest
        columns = row_keys(self.spec, part, keys)
        if columns is not None:
            rows = columns[0] if len(columns) == 1 else pd.MultiIndex.from_arrays(columns)
            codes = ordered.get_indexer(rows) if len(ordered) else np.full(len(part), -1)
        else:
            local, uniq = key_codes(self.spec.groupby(part, keys, select=False, sort=False, as_index=True))
            found = ordered.get_indexer(uniq) if len(uniq) else np.zeros(0, dtype=np.int64)
            codes = np.where(local >= 0, found[np.maximum(local, 0)] if len(found) else -1, -1)
        codes = np.asarray(codes, dtype=np.int64)
        if not self.ascending:
            codes = np.where(codes >= 0, len(ordered) - 1 - codes, -1)
        if (codes < 0).any():
            return pd.Series(np.where(codes >= 0, codes, np.nan), index=part.index)
        return pd.Series(codes, index=part.index)


class GroupKeyOrder(PandasOperator):
    """The tileable op of the groups' keys (a lazy Index): per-partition keys, merged in one chunk."""

    params = ("spec",)

    @classmethod
    def tile(cls, op: GroupKeyOrder) -> Generator[Any, Any, Tiled]:
        parts = yield from aligned_partitions(op.inputs, op.spec.modes)
        out = op.outputs[0]
        return Tiled([_ordered_keys(op.spec, parts, out.meta)], ((np.nan,),))


def _ordered_keys(spec: Any, parts: list, meta: Any) -> Any:
    local = [PartitionKeys(spec=spec).new_chunk(p, index=(i,), shape=(np.nan,), meta=meta)
             for i, p in enumerate(parts)]
    return OrderKeys(spec=spec).new_chunk(local, index=(0,), shape=(np.nan,), meta=meta)


class NGroup(PandasOperator):
    """The tileable op of ``ngroup``: the keys in order, then every partition's rows looked up."""

    params = ("spec", "ascending", "keys_meta")

    @classmethod
    def tile(cls, op: NGroup) -> Generator[Any, Any, Tiled]:
        parts = yield from aligned_partitions(op.inputs, op.spec.modes)
        out = op.outputs[0]
        ordered = _ordered_keys(op.spec, parts, op.keys_meta)
        rows = [p[0].shape[0] for p in parts]
        chunks = [GroupNumbers(spec=op.spec, ascending=op.ascending).new_chunk(
            p + [ordered], index=(i,), shape=(rows[i],), meta=out.meta) for i, p in enumerate(parts)]
        return Tiled(chunks, (tuple(rows),))


# ----------------------------------------------------------------- one group
class GroupRows(PandasOperator):
    """A partition's rows of the group ``name`` (none when it has no such group)."""

    params = ("spec", "name", "meta")

    def execute(self, part: Any, *keys: Any) -> Any:
        try:
            return self.spec.groupby(part, keys).get_group(self.name)
        except KeyError:
            return self.meta


class GetGroup(PandasOperator):
    """``get_group(name)``: each partition's rows of the group; pandas' KeyError when none has it."""

    params = ("spec", "name")

    @classmethod
    def tile(cls, op: GetGroup) -> Generator[Any, Any, Tiled]:
        parts = yield from aligned_partitions(op.inputs, op.spec.modes)
        out = op.outputs[0]
        chunks = [GroupRows(spec=op.spec, name=op.name, meta=out.meta).new_chunk(
            p, index=chunk_index_of(out.meta, i), shape=chunk_shape_of(out.meta, np.nan), meta=out.meta)
            for i, p in enumerate(parts)]
        yield chunks
        rows = [c.shape[0] for c in chunks]
        if not any(rows):
            raise KeyError(op.name)
        return Tiled(chunks, nsplits_of(out.meta, rows))


# ----------------------------------------------------------------- the methods
def ngroup(self: GroupBy, ascending: bool = True) -> Any:
    """Each row's group number, from 0, in the order of the groups (sorted keys, or first appearance).

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"k": ["b", "a", "b", "c"]}, chunk_size=3)
    >>> df.groupby("k").ngroup().to_pandas().tolist()
    [1, 0, 1, 2]
    """
    meta = self._infer(lambda g: g.ngroup(ascending))
    keys_meta = self._pandas(sample=False, select=False, as_index=True).size().index
    op = NGroup(spec=self._spec, ascending=bool(ascending), keys_meta=keys_meta)
    return op.new_pandas([self._data] + self._keys, meta, (self._data.shape[0],),
                         partitioning=self._data.partitioning)


def _group_keys(self: GroupBy) -> Any:
    """The groups' keys in pandas' order, as a lazy Index."""
    meta = self._pandas(sample=False, select=False, as_index=True).size().index
    op = GroupKeyOrder(spec=self._spec)
    return op.new_pandas([self._data] + self._keys, meta, (np.nan,))


def ngroups(self: GroupBy) -> int:
    """The number of groups (computed).

    >>> import mars.dataframe as md
    >>> md.DataFrame({"k": [1, 2, 1]}, chunk_size=1).groupby("k").ngroups
    2
    """
    return len(_group_keys(self).fetch())


def get_group(self: GroupBy, name: Any) -> Any:
    """The rows of the group ``name``, in their order (pandas' ``KeyError`` when run, if there is none).

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"k": [1, 2, 1], "v": [1.0, 2.0, 3.0]}, chunk_size=2)
    >>> df.groupby("k").get_group(1)["v"].to_pandas().tolist()
    [1.0, 3.0]
    """
    g = self._pandas(sample=True)
    first = next(iter(g))[0]
    meta = empty_meta(g.get_group(first))
    op = GetGroup(spec=self._spec, name=name)
    shape = (np.nan, meta.shape[1]) if isinstance(meta, pd.DataFrame) else (np.nan,)
    return op.new_pandas([self._data] + self._keys, meta, shape)


def _computed_groupby(self: GroupBy, whole: bool) -> Any:
    """pandas' groupby of the computed data (``whole``), or of its key columns and index only."""
    data = self._data
    if not whole and data.kind == "dataframe":
        items = self._spec.by if type(self._spec.by) is list else [self._spec.by]
        labels = [items[i] for i in self._key_labels()]
        columns = [c for c in data.meta.columns if c in set(labels)]
        data = select_columns(wrap(data), columns).data
    value = wrap(data).fetch()
    keys = [wrap(k).fetch() for k in self._keys]
    return self._spec.groupby(value, keys, select=whole)


def groups(self: GroupBy) -> dict:
    """``{key: index labels}`` of every group (computed from the keys and the index only).

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"k": [1, 2, 1]}, chunk_size=1)
    >>> {k: v.tolist() for k, v in df.groupby("k").groups.items()}
    {1: [0, 2], 2: [1]}
    """
    return _computed_groupby(self, whole=False).groups


def indices(self: GroupBy) -> dict:
    """``{key: positions}`` of every group (numpy int arrays; computed from the keys only).

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"k": [1, 2, 1]}, chunk_size=1)
    >>> {int(k): v.tolist() for k, v in df.groupby("k").indices.items()}
    {1: [0, 2], 2: [1]}
    """
    return _computed_groupby(self, whole=False).indices


def iterate(self: GroupBy) -> Iterator[tuple[Any, Any]]:
    """``for key, group in gb``: the groups as pandas objects (the data is fetched to the client).

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"k": [1, 2, 1], "v": [1.0, 2.0, 3.0]}, chunk_size=2)
    >>> [(k, g.v.tolist()) for k, g in df.groupby("k")]
    [(1, [1.0, 3.0]), (2, [2.0])]
    """
    return iter(_computed_groupby(self, whole=True))


def sample(self: GroupBy, n: int | None = None, frac: float | None = None, replace: bool = False,
           weights: Any = None, random_state: Any = None) -> Any:
    """A random sample of rows of each group, as pandas' ``sample`` per group.

    The rows drawn are not pandas' (each shuffled partition draws its own),
    the number per group and the distribution are; they come in the input's
    order.

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"k": [1, 1, 2, 2], "v": [1, 2, 3, 4]}, chunk_size=2)
    >>> len(df.groupby("k").sample(n=1, random_state=0).to_pandas())
    2
    """
    if weights is not None:
        raise NotImplementedError("groupby(...).sample(weights=...) is not supported; add the weights as a column "
                                  "and use groupby(...).apply(lambda g: g.sample(weights=g['w'], ...))")
    self._pandas(sample=True).sample(n=n, frac=frac, replace=replace, random_state=0)  # pandas' argument errors
    return self._rows("sample", (), {"n": n, "frac": frac, "replace": replace, "random_state": random_state},
                      same_rows=False)


def _aggregation(name: str, doc: str) -> Any:
    def method(self: GroupBy, *args: Any, **kwargs: Any) -> Any:
        return self._aggregate(name, args, kwargs)

    method.__name__ = name
    method.__doc__ = doc
    return method


_WHOLE_GROUPS = {
    "corr": "Pairwise correlation of the columns within each group (pandas' ``corr`` per group).",
    "cov": "Pairwise covariance of the columns within each group (pandas' ``cov`` per group).",
    "skew": "Skewness of each group (pandas' ``skew``; whole groups after a shuffle on the keys).",
    "kurt": "Kurtosis of each group (pandas' ``kurt``; whole groups after a shuffle on the keys).",
    "take": "The rows at positions ``indices`` within each group (pandas' ``take``).",
    "corrwith": "Correlation of each group's columns with ``other`` (pandas' ``corrwith``).",
}
_SERIES_ONLY = {
    "nlargest": "The ``n`` largest values of each group (pandas' ``nlargest``).",
    "nsmallest": "The ``n`` smallest values of each group (pandas' ``nsmallest``).",
}


def _series_property(name: str, doc: str) -> property:
    def get(self: GroupBy) -> Any:
        return self._aggregate("pipe", (_attribute, name), {})

    return property(get, doc=doc)


def _attribute(g: Any, name: str) -> Any:
    return getattr(g, name)


def _value_counts(self: DataFrameGroupBy, subset: Any = None, normalize: bool = False, sort: bool = True,
                  ascending: bool = False, dropna: bool = True) -> Any:
    """Counts of each distinct row within each group (proportions with ``normalize``), as pandas.

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"k": [1, 1, 2], "v": ["x", "x", "y"]}, chunk_size=2)
    >>> df.groupby("k").value_counts().to_pandas().tolist()
    [2, 1]
    """
    kwargs = {"subset": subset, "normalize": normalize, "sort": sort, "ascending": ascending, "dropna": dropna}
    return self._aggregate("value_counts", (), kwargs)


def _install() -> None:
    for cls in (DataFrameGroupBy, SeriesGroupBy):
        cls.ngroup = ngroup
        cls.ngroups = property(ngroups, doc=ngroups.__doc__)
        cls.get_group = get_group
        cls.groups = property(groups, doc=groups.__doc__)
        cls.indices = property(indices, doc=indices.__doc__)
        cls.__iter__ = iterate
        cls.sample = sample
        cls.keys = property(lambda self: _by_argument(self), doc="What ``by`` the groupby was called with.")
        cls.level = property(lambda self: self._spec.level, doc="What ``level`` the groupby was called with.")
        cls.ndim = property(lambda self: self._values_meta().ndim if self._spec.selection else self._data.meta.ndim,
                            doc="The dimensions of what is grouped (2 for a frame, 1 for a Series).")
        for name, doc in _WHOLE_GROUPS.items():
            if name == "corrwith" and cls is SeriesGroupBy:
                continue
            setattr(cls, name, _aggregation(name, doc))
    DataFrameGroupBy.value_counts = _value_counts
    for name, doc in _SERIES_ONLY.items():
        setattr(SeriesGroupBy, name, _aggregation(name, doc))
    SeriesGroupBy.dtype = _series_property("dtype", "The dtype of each group (a Series of dtypes).")
    SeriesGroupBy.is_monotonic_increasing = _series_property(
        "is_monotonic_increasing", "Whether each group's values increase (a bool Series).")
    SeriesGroupBy.is_monotonic_decreasing = _series_property(
        "is_monotonic_decreasing", "Whether each group's values decrease (a bool Series).")


def _by_argument(self: GroupBy) -> Any:
    """``by`` as the user gave it (lazy keys as the lazy objects)."""
    def back(item: Any) -> Any:
        return wrap(self._keys[item.i]) if isinstance(item, Slot) else item

    by = self._spec.by
    return [back(b) for b in by] if type(by) is list else back(by)


_install()
