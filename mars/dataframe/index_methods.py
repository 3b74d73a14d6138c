"""``Index`` methods: pandas' Index API on a lazy, partitioned Index.

Most are one pandas call per partition (``map``, ``fillna``, ``rename``...).
Methods of values go through a Series of the labels (``argmax``,
``argsort``, ``sort_values``, ``factorize``, ``searchsorted``, ``diff``)
and reuse the Series' distributed algorithms. Positions (``delete``,
``insert``) use the partitions' row counts. ``get_indexer`` of a small
target is a tree of each partition's hits, offset by the rows before it;
``get_loc`` and ``equals`` run and return pandas' answer. Set operations
live in :mod:`mars.dataframe.index_setops`.

>>> import mars.dataframe as md
>>> idx = md.Index([3, 1, 2], chunk_size=2)
>>> idx.sort_values().to_pandas().tolist(), int(idx.argmax())
([1, 2, 3], 0)
"""

from __future__ import annotations

from collections.abc import Generator
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import is_list_like

from ..core.entity import Tileable
from ..core.operator import Tiled
from ..core.tiling import as_data
from ..tensor.core import is_tensor
from .apply import unify_meta
from .core import Index, PandasOperator, Series, wrap
from .datasource import from_pandas
from .map import map_partitions
from .meta import empty_meta, fake
from .reduction import tree_reduce
from .reshape import MapOne
from .rows import known_rows, renumbered
from .selection import rows_arg_map

__all__: list[str] = []


# ----------------------------------------------------------------- between labels and values
def _labels_series(part: pd.Index) -> pd.Series:
    return pd.Series(part, name=part.name)


def _labels_index(part: pd.Series, name: Any) -> pd.Index:
    return pd.Index(part, name=name)


def labels_series(idx: Index) -> Series:
    """The labels as a lazy Series (numbered within each partition), partitioned as ``idx``."""
    return map_partitions(_labels_series, idx)


def as_index(series: Series, name: Any) -> Index:
    """A lazy Series' values as an Index named ``name``."""
    return map_partitions(_labels_index, series, name)


def lazy_index(other: Any) -> Any:
    """``other`` as a lazy Index (pandas indexes and list-likes are one partition)."""
    if isinstance(other, Index):
        return other
    if isinstance(other, Tileable):
        raise TypeError(f"expected an Index, got a lazy {type(other).__name__}")
    value = other if isinstance(other, pd.Index) else pd.Index(other)
    return wrap(from_pandas(value, chunk_size=max(1, len(value))).data)


def _call(part: Any, name: str, args: tuple, kwargs: dict) -> Any:
    return getattr(part, name)(*args, **kwargs)


def _partitionwise(self: Index, name: str, args: tuple = (), kwargs: dict | None = None, same_rows: bool = True,
                   unify: bool = False) -> Any:
    """Pandas ``name`` on every partition; its metadata is pandas' on a sample (``unify``: settled when run)."""
    kwargs = kwargs or {}
    sample = getattr(fake(self.meta), name)(*args, **kwargs)  # pandas' argument errors, raised now
    meta = empty_meta(sample) if isinstance(sample, (pd.Index, pd.Series, pd.DataFrame)) else None
    out = map_partitions(_call, self, name, args, kwargs, meta=meta, same_rows=same_rows)
    return unify_meta(out) if unify else out


def _partition_method(name: str, same_rows: bool = True, unify: bool = False, doc: str = "") -> Any:
    def method(self: Index, *args: Any, **kwargs: Any) -> Any:
        return _partitionwise(self, name, args, kwargs, same_rows=same_rows, unify=unify)

    method.__name__ = name
    method.__doc__ = doc or f"``Index.{name}`` of each partition, as pandas."
    return method


# ----------------------------------------------------------------- simple ones
def _transpose(self: Index, *args: Any, **kwargs: Any) -> Index:
    """The Index itself (an Index has one axis), as pandas.

    >>> import mars.dataframe as md
    >>> md.Index([1, 2]).transpose().to_pandas().tolist()
    [1, 2]
    """
    return self


def _copy(self: Index, name: Any = None, deep: bool = False) -> Index:
    """A copy, renamed to ``name`` when given.

    >>> import mars.dataframe as md
    >>> md.Index([1, 2], name="a").copy(name="b").name
    'b'
    """
    return _partitionwise(self, "copy", (), {"name": name, "deep": deep})


def _set_names(self: Index, names: Any, *, level: Any = None, inplace: bool = False) -> Index | None:
    """New name(s), as ``pandas.Index.set_names`` (``inplace=True`` rebinds this object).

    >>> import mars.dataframe as md
    >>> md.Index([1, 2]).set_names("k").name
    'k'
    """
    result = _partitionwise(self, "set_names", (names,), {"level": level})
    if inplace:
        self.data = as_data(result)
        return None
    return result


def _to_series(self: Index, index: Any = None, name: Any = None) -> Series:
    """A Series of the labels indexed by themselves, as ``pandas.Index.to_series``.

    >>> import mars.dataframe as md
    >>> md.Index([1, 2], name="k").to_series().to_pandas().to_dict()
    {1: 1, 2: 2}
    """
    if index is not None:
        raise NotImplementedError("Index.to_series(index=...) is not supported; use to_series().set_axis(...)")
    return _partitionwise(self, "to_series", (), {"name": name})


def _to_frame(self: Index, index: bool = True, name: Any = pd.api.extensions.no_default) -> Any:
    """A one-column DataFrame of the labels, as ``pandas.Index.to_frame``.

    >>> import mars.dataframe as md
    >>> md.Index([1, 2], name="k").to_frame(index=False).to_pandas().columns.tolist()
    ['k']
    """
    frame = _partitionwise(self, "to_frame", (), {"index": index, "name": name})
    return frame if index else renumbered(frame)  # rows numbered across partitions, as one RangeIndex


def _map(self: Index, mapper: Any, na_action: Any = None) -> Index:
    """Each label mapped by a function, dict or Series (pandas or lazy-free), as ``pandas.Index.map``.

    The dtype is settled when it runs (a dict that misses labels gives floats or objects).

    >>> import mars.dataframe as md
    >>> md.Index([1, 2], chunk_size=1).map(lambda x: x * 10).to_pandas().tolist()
    [10, 20]
    """
    if isinstance(mapper, Tileable):
        raise NotImplementedError("Index.map with a lazy Series; fetch it first (mapper.to_pandas())")
    if na_action not in (None, "ignore"):
        raise ValueError(f"na_action must either be 'ignore' or None, {na_action!r} was passed")
    meta = empty_meta(fake(self.meta).map(mapper, na_action=na_action))
    return unify_meta(map_partitions(_call, self, "map", (mapper,), {"na_action": na_action}, meta=meta))


def _nlevels(self: Index) -> int:
    return self.meta.nlevels


def _size(self: Index) -> int:
    """The number of labels (computed first when unknown)."""
    if np.isnan(self.shape[0]):
        self.execute()
    return int(self.shape[0])


def _item(self: Index) -> Any:
    """The one label of a one-label Index (pandas' ValueError otherwise); runs it.

    >>> import mars.dataframe as md
    >>> md.Index([7]).item()
    7
    """
    return self.fetch().item()


def _has_duplicates(self: Index) -> Any:
    """Whether some label repeats (a lazy 0-d bool tensor).

    >>> import mars.dataframe as md
    >>> bool(md.Index([1, 2, 1], chunk_size=2).has_duplicates)
    True
    """
    return ~self.is_unique


def _isna_tensor(name: str) -> Any:
    def method(self: Index) -> Any:
        return map_partitions(_as_labels_of, self, name, meta=pd.Index([], dtype=bool)).to_tensor()

    method.__name__ = name
    method.__doc__ = f"""``Index.{name}()``: a lazy bool tensor (pandas gives an array).

    >>> import mars.dataframe as md
    >>> md.Index([1.0, None]).{name}().fetch().tolist()
    {[True, False] if name.startswith("not") else [False, True]}
    """
    return method


def _as_labels_of(part: pd.Index, name: str) -> pd.Index:
    return pd.Index(getattr(part, name)(), dtype=bool)


def _repeat(self: Index, repeats: Any, axis: Any = None) -> Index:
    """Each label repeated ``repeats`` (an int) times in place.

    >>> import mars.dataframe as md
    >>> md.Index([1, 2], chunk_size=1).repeat(2).to_pandas().tolist()
    [1, 1, 2, 2]
    """
    if not isinstance(repeats, (int, np.integer)):
        raise NotImplementedError("Index.repeat with per-label counts; repeat(n) with an int")
    return _partitionwise(self, "repeat", (int(repeats),), same_rows=False)


def _take(self: Index, indices: Any, axis: int = 0, allow_fill: bool = True, fill_value: Any = None,
          **kwargs: Any) -> Index:
    """The labels at positions ``indices``, as ``pandas.Index.take``.

    >>> import mars.dataframe as md
    >>> md.Index([5, 6, 7], chunk_size=2).take([2, 0]).to_pandas().tolist()
    [7, 5]
    """
    if fill_value is not None and allow_fill:
        raise NotImplementedError("Index.take(fill_value=...); take the positions, then where()")
    return self[np.asarray(indices, dtype=np.intp) if is_list_like(indices) else [int(indices)]]


def _mask_values(part: pd.Index, name: str, value: Any, piece: Any) -> pd.Index:
    return getattr(part, name)(np.asarray(piece, dtype=bool), value)


def _putmask(self: Index, mask: Any, value: Any) -> Index:
    """``value`` where ``mask`` (an array or lazy tensor as long as the Index) is true.

    >>> import mars.dataframe as md
    >>> md.Index([1, 2, 3], chunk_size=2).putmask([True, False, True], 0).to_pandas().tolist()
    [0, 2, 0]
    """
    return _masked(self, "putmask", mask, value)


def _where(self: Index, cond: Any, other: Any = None) -> Index:
    """The labels where ``cond`` (an array or lazy tensor) is true, ``other`` elsewhere.

    >>> import mars.dataframe as md
    >>> md.Index([1, 2, 3], chunk_size=2).where([True, False, True], 0).to_pandas().tolist()
    [1, 0, 3]
    """
    return _masked(self, "where", cond, other)


def _masked(self: Index, name: str, mask: Any, value: Any) -> Index:
    if isinstance(value, Tileable):
        raise NotImplementedError(f"Index.{name} with a lazy value; give a scalar")
    if isinstance(mask, (Series, Index)):
        mask = mask.to_tensor()
    elif not is_tensor(mask):
        mask = np.asarray(mask)
    out = rows_arg_map(self, _mask_values, (name, value), mask)
    return unify_meta(out)


# ----------------------------------------------------------------- through a Series of the labels
def _arg(largest: bool) -> Any:
    name = "argmax" if largest else "argmin"

    def method(self: Index, axis: Any = None, skipna: bool = True, *args: Any, **kwargs: Any) -> Any:
        return getattr(labels_series(self), name)(skipna=skipna)

    method.__name__ = name
    method.__doc__ = f"""The position of the {'largest' if largest else 'smallest'} label (a lazy 0-d tensor).

    >>> import mars.dataframe as md
    >>> int(md.Index([2, 9, 1], chunk_size=2).{name}())
    {1 if largest else 2}
    """
    return method


def _argsort(self: Index, *args: Any, **kwargs: Any) -> Any:
    """Positions that would sort the labels (a lazy tensor; ties keep their order).

    >>> import mars.dataframe as md
    >>> md.Index([3, 1, 2], chunk_size=2).argsort().fetch().tolist()
    [1, 2, 0]
    """
    return labels_series(self).argsort().to_tensor()


def _positions(part: pd.Series) -> pd.Series:
    return pd.Series(part.index.to_numpy(), index=part.index)


def _sort_values(self: Index, *, return_indexer: bool = False, ascending: bool = True, na_position: str = "last",
                 key: Any = None) -> Any:
    """The labels sorted (the distributed sort), and with ``return_indexer`` the positions (a lazy tensor).

    >>> import mars.dataframe as md
    >>> md.Index([3, 1, 2], chunk_size=2).sort_values(ascending=False).to_pandas().tolist()
    [3, 2, 1]
    """
    self.meta.sort_values(ascending=ascending, na_position=na_position, key=key)  # pandas' argument errors
    ordered = renumbered(labels_series(self)).sort_values(ascending=ascending, na_position=na_position, key=key,
                                                          kind="stable")
    result = as_index(ordered, self.meta.name)
    if not return_indexer:
        return result
    return result, map_partitions(_positions, ordered).to_tensor()


def _factorize(self: Index, sort: bool = False, use_na_sentinel: bool = True) -> tuple:
    """(codes, uniques): codes a lazy tensor, uniques a lazy Index (unnamed, as pandas).

    >>> import mars.dataframe as md
    >>> codes, uniques = md.Index(["b", "a", "b"], chunk_size=2).factorize()
    >>> codes.fetch().tolist(), uniques.to_pandas().tolist()
    ([0, 1, 0], ['b', 'a'])
    """
    codes, uniques = labels_series(self).factorize(sort=sort, use_na_sentinel=use_na_sentinel)
    return codes, uniques.rename(None)


def _searchsorted(self: Index, value: Any, side: str = "left", sorter: Any = None) -> Any:
    """Where ``value`` would go to keep this sorted Index sorted (a lazy tensor).

    >>> import mars.dataframe as md
    >>> int(md.Index([1, 3, 5], chunk_size=2).searchsorted(4))
    2
    """
    return labels_series(self).searchsorted(value, side=side, sorter=sorter)


def _diff(self: Index, periods: int = 1) -> Index:
    """Each label minus the one ``periods`` before it, as ``pandas.Index.diff``.

    >>> import mars.dataframe as md
    >>> md.Index([1, 4, 9], chunk_size=2).diff().to_pandas().tolist()[1:]
    [3.0, 5.0]
    """
    self.meta.diff(periods)
    return as_index(labels_series(self).diff(periods), self.meta.name)


# ----------------------------------------------------------------- by position
class AtPositions(PandasOperator):
    """``func(partition, local_positions, *args)`` with each partition's share of ``positions``.

    ``positions`` are non-negative; one equal to the length goes to the last partition (``insert`` at the end).
    """

    params = ("func", "positions", "args")

    @classmethod
    def tile(cls, op: AtPositions) -> Generator[Any, Any, Tiled]:
        data, out = op.inputs[0], op.outputs[0]
        rows = yield from known_rows(data)
        starts = np.concatenate([[0], np.cumsum(rows)]).astype(np.int64)
        positions = np.asarray(op.positions, dtype=np.int64)
        chunks = []
        for i, c in enumerate(data.chunks):
            last = i == len(data.chunks) - 1
            hit = (positions >= starts[i]) & ((positions < starts[i + 1]) | (last & (positions == starts[i + 1])))
            chunks.append(MapOne(func=op.func, args=(positions[hit] - starts[i], *op.args)).new_chunk(
                [c], index=(i,), shape=(np.nan,), meta=out.meta))
        return Tiled(chunks, ((np.nan,) * len(chunks),))


def _known_length(self: Index) -> int:
    if np.isnan(self.shape[0]):
        self.execute()
    return int(self.shape[0])


def _delete_local(part: pd.Index, local: np.ndarray) -> pd.Index:
    return part.delete(local)


def _delete(self: Index, loc: Any) -> Index:
    """The Index without the labels at position(s) ``loc``, as ``pandas.Index.delete``.

    >>> import mars.dataframe as md
    >>> md.Index([5, 6, 7], chunk_size=2).delete([0, -1]).to_pandas().tolist()
    [6]
    """
    n = _known_length(self)
    positions = np.atleast_1d(np.asarray(loc, dtype=np.int64))
    for p in positions:
        if not -n <= p < n:
            raise IndexError(f"index {p} is out of bounds for axis 0 with size {n}")
    positions = np.unique(np.where(positions < 0, positions + n, positions))
    op = AtPositions(func=_delete_local, positions=positions, args=())
    return op.new_pandas([as_data(self)], self.meta, (float(n - len(positions)),))


def _insert_local(part: pd.Index, local: np.ndarray, item: Any, meta: pd.Index) -> pd.Index:
    out = part.insert(int(local[0]), item) if len(local) else part
    return out if out.dtype == meta.dtype else out.astype(meta.dtype)


def _insert(self: Index, loc: int, item: Any) -> Index:
    """The Index with ``item`` inserted at position ``loc``, as ``pandas.Index.insert``.

    >>> import mars.dataframe as md
    >>> md.Index([5, 6, 7], chunk_size=2).insert(2, 0).to_pandas().tolist()
    [5, 6, 0, 7]
    """
    n = _known_length(self)
    meta = empty_meta(fake(self.meta).insert(0, item))
    loc = int(loc)
    if not -n <= loc <= n:
        raise IndexError(f"index {loc} is out of bounds for axis 0 with size {n}")
    position = loc + n if loc < 0 else loc
    op = AtPositions(func=_insert_local, positions=np.array([position]), args=(item, meta))
    return op.new_pandas([as_data(self)], meta, (float(n + 1),))


# ----------------------------------------------------------------- lookups
def _hits(part: pd.Index, target: pd.Index) -> tuple:
    """(rows, the target's positions in this partition (-1: absent), whether the partition repeats labels)."""
    if not part.is_unique:
        return len(part), np.full(len(target), -1, dtype=np.intp), True
    return len(part), part.get_indexer(target), False


def _merge_hits(parts: list) -> tuple:
    rows, found, repeats = 0, None, False
    for n, local, dup in parts:
        shifted = np.where(local >= 0, local + rows, -1)
        # a target found in two partitions is a repeated label too
        repeats = repeats or dup or (found is not None and bool(((found >= 0) & (shifted >= 0)).any()))
        found = shifted if found is None else np.where(found >= 0, found, shifted)
        rows += n
    return rows, found, repeats


def _indexer(parts: list) -> pd.Series:
    _, found, repeats = _merge_hits(parts)
    return pd.Series(np.full_like(found, -2) if repeats else found, dtype=np.intp)


def _unique_indexer(part: pd.Series, unique: Any) -> pd.Series:
    if not unique or (part == -2).any():
        raise pd.errors.InvalidIndexError("Reindexing only valid with uniquely valued Index objects")
    return part


def _get_indexer(self: Index, target: Any, method: Any = None, limit: Any = None, tolerance: Any = None) -> Any:
    """Each target label's position in this Index, -1 if absent (a lazy tensor); the target is small.

    The Index must be unique, as in pandas (``InvalidIndexError`` when it runs otherwise).

    >>> import mars.dataframe as md
    >>> md.Index([5, 6, 7], chunk_size=2).get_indexer([7, 1, 5]).fetch().tolist()
    [2, -1, 0]
    """
    if method is not None or limit is not None or tolerance is not None:
        raise NotImplementedError("get_indexer(method=/limit=/tolerance=); sort and use searchsorted instead")
    if isinstance(target, Tileable):
        target = target.fetch()
    target = pd.Index(target)
    self.meta.get_indexer(target[:0])
    found = tree_reduce(self, partial(_hits, target=target), _merge_partials, _indexer,
                        pd.Series([], dtype=np.intp), shape=(len(target),))
    return map_partitions(_unique_indexer, found, self.is_unique).to_tensor()


def _merge_partials(parts: list) -> tuple:
    return _merge_hits(parts)


def _non_unique_hits(part: pd.Index, target: pd.Index) -> tuple:
    """(rows, per target label the positions of its matches in this partition)."""
    positions = pd.Series(np.arange(len(part)), index=part)
    hits = [positions.loc[[t]].to_numpy() if t in positions.index else np.array([], dtype=np.intp) for t in target]
    return len(part), hits


def _merge_non_unique(parts: list) -> tuple:
    rows, merged = 0, None
    for n, hits in parts:
        shifted = [h + rows for h in hits]
        merged = shifted if merged is None else [np.concatenate([a, b]) for a, b in zip(merged, shifted)]
        rows += n
    return rows, merged


def _final_non_unique(parts: list) -> dict:
    # a dict, not a tuple: a 0-d object tensor holds it as one value
    return {"hits": _merge_non_unique(parts)[1]}


def _get_indexer_non_unique(self: Index, target: Any) -> tuple:
    """(indexer, missing) as pandas, for a small target: runs it.

    >>> import mars.dataframe as md
    >>> md.Index([1, 2, 1], chunk_size=2).get_indexer_non_unique([1, 9])
    (array([ 0,  2, -1]), array([1]))
    """
    if isinstance(target, Tileable):
        target = target.fetch()
    target = pd.Index(target)
    hits = tree_reduce(self, partial(_non_unique_hits, target=target), _merge_non_unique, _final_non_unique,
                       np.dtype(object)).fetch()["hits"]
    indexer = [h if len(h) else np.array([-1]) for h in hits]
    missing = [i for i, h in enumerate(hits) if not len(h)]
    return (np.concatenate(indexer).astype(np.intp) if indexer else np.array([], dtype=np.intp),
            np.asarray(missing, dtype=np.intp))


def _get_indexer_for(self: Index, target: Any) -> Any:
    """``get_indexer`` for a unique Index, else the first of ``get_indexer_non_unique`` (runs then).

    >>> import mars.dataframe as md
    >>> md.Index([1, 2, 1], chunk_size=2).get_indexer_for([1])
    array([0, 2])
    """
    if bool(self.is_unique):
        return _get_indexer(self, target).fetch()
    return _get_indexer_non_unique(self, target)[0]


def _loc_hits(part: pd.Index, key: Any) -> tuple:
    try:
        loc = part.get_loc(key)
    except KeyError:
        return len(part), np.array([], dtype=np.intp)
    return len(part), np.arange(len(part))[loc].reshape(-1)


def _merge_loc(parts: list) -> tuple:
    rows, found = 0, []
    for n, hits in parts:
        found.append(hits + rows)
        rows += n
    return rows, np.concatenate(found) if found else np.array([], dtype=np.intp)


def _final_loc(parts: list) -> dict:
    rows, hits = _merge_loc(parts)
    return {"rows": rows, "hits": hits}


def _get_loc(self: Index, key: Any) -> Any:
    """``key``'s position: an int (unique labels), a slice (sorted repeats) or a bool mask, as pandas; runs it.

    >>> import mars.dataframe as md
    >>> md.Index(["a", "b", "c"], chunk_size=2).get_loc("c")
    2
    """
    found = tree_reduce(self, partial(_loc_hits, key=key), _merge_loc, _final_loc, np.dtype(object)).fetch()
    rows, hits = found["rows"], found["hits"]
    if not len(hits):
        raise KeyError(key)
    if len(hits) == 1:
        return int(hits[0])
    if bool(self.is_monotonic_increasing) or bool(self.is_monotonic_decreasing):
        return slice(int(hits[0]), int(hits[-1]) + 1)
    mask = np.zeros(rows, dtype=bool)
    mask[hits] = True
    return mask


# ----------------------------------------------------------------- comparing, dropping
def _part_equals(a: pd.Index, b: pd.Index) -> pd.Series:
    return pd.Series([a.equals(b)])


def _equals(self: Index, other: Any) -> bool:
    """Whether ``other`` is an Index with the same labels (runs both), as ``pandas.Index.equals``.

    >>> import mars.dataframe as md
    >>> md.Index([1, 2], chunk_size=1).equals(md.Index([1.0, 2.0]))
    True
    """
    from .rows import rechunk_rows

    if isinstance(other, pd.Index):
        other = lazy_index(other)
    if not isinstance(other, Index):
        return False
    if isinstance(self.meta, pd.MultiIndex) != isinstance(other.meta, pd.MultiIndex):
        return False
    n, m = _known_length(self), _known_length(other)
    if n != m:
        return False
    if as_data(self).nsplits is None or np.isnan(as_data(self).nsplits[0]).any():
        self.execute()
    cut = rechunk_rows(other, [int(r) for r in as_data(self).nsplits[0]])
    as_data(cut).partitioning = as_data(self).partitioning  # the same positions, chunk by chunk
    return bool(map_partitions(_part_equals, self, cut, same_rows=False).all().fetch())


def _identical(self: Index, other: Any) -> bool:
    """``equals``, and the same type, dtype and names, as ``pandas.Index.identical``.

    >>> import mars.dataframe as md
    >>> md.Index([1, 2]).identical(md.Index([1, 2], name="a"))
    False
    """
    if not isinstance(other, (Index, pd.Index)):
        return False
    meta = other.meta if isinstance(other, Index) else other
    same = type(meta) is type(self.meta) and meta.dtype == self.meta.dtype and list(meta.names) == self.names
    return same and _equals(self, other)


def _found(part: pd.Index, labels: pd.Index) -> np.ndarray:
    return labels.isin(part)


def _all_found(found: list, labels: pd.Index) -> bool:
    hit = np.logical_or.reduce(found)
    if not hit.all():
        raise KeyError(f"{list(labels[~hit])} not found in axis")
    return True


def _drop_part(part: pd.Index, labels: pd.Index, check: Any) -> pd.Index:
    return part[~part.isin(labels)]


def _drop(self: Index, labels: Any, errors: str = "raise") -> Index:
    """The Index without ``labels``; ``errors="raise"``: pandas' KeyError when it runs if some are absent.

    >>> import mars.dataframe as md
    >>> md.Index([1, 2, 3], chunk_size=2).drop([2]).to_pandas().tolist()
    [1, 3]
    """
    if errors not in ("raise", "ignore"):
        raise ValueError("errors must be either 'ignore' or 'raise'")
    labels = pd.Index(labels if is_list_like(labels) else [labels])
    check = True
    if errors == "raise" and len(labels):
        check = tree_reduce(self, partial(_found, labels=labels), _any,
                            partial(_all_found, labels=labels), np.dtype(bool))
    return map_partitions(_drop_part, self, labels, check, same_rows=False, meta=self.meta)


def _any(found: list) -> np.ndarray:
    return np.logical_or.reduce(found)


def _install() -> None:
    Index.T = property(_transpose, doc="The Index itself.")
    Index.transpose = _transpose
    Index.copy = _copy
    Index.set_names = _set_names
    Index.to_series = _to_series
    Index.to_frame = _to_frame
    Index.map = _map
    Index.nlevels = property(_nlevels, doc="The number of levels (known before running).")
    Index.size = property(_size, doc=_size.__doc__)
    Index.item = _item
    Index.has_duplicates = property(_has_duplicates, doc=_has_duplicates.__doc__)
    for name in ("isna", "isnull", "notna", "notnull"):
        setattr(Index, name, _isna_tensor(name))
    Index.repeat = _repeat
    Index.take = _take
    Index.putmask = _putmask
    Index.where = _where
    Index.argmax, Index.argmin = _arg(True), _arg(False)
    Index.argsort = _argsort
    Index.sort_values = _sort_values
    Index.factorize = _factorize
    Index.searchsorted = _searchsorted
    Index.diff = _diff
    Index.delete = _delete
    Index.insert = _insert
    Index.get_indexer = _get_indexer
    Index.get_indexer_non_unique = _get_indexer_non_unique
    Index.get_indexer_for = _get_indexer_for
    Index.get_loc = _get_loc
    Index.equals = _equals
    Index.identical = _identical
    Index.drop = _drop
    for name in ("fillna", "round", "to_flat_index", "droplevel", "get_level_values", "shift"):
        setattr(Index, name, _partition_method(name))
    Index.dropna = _partition_method("dropna", same_rows=False)
    Index.replace = _partition_method("replace", unify=True)
    Index.infer_objects = _partition_method("infer_objects", unify=True)


_install()
