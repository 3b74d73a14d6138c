"""Row selection: the operators behind ``iloc``, ``loc``, ``head``, masks and arrays cut along rows.

By position, the wanted rows are resolved against the partitions' row
counts at tiling (computed first when unknown; a prefix computes only the
leading partitions it needs), and each output partition takes its rows from
the partitions holding them (:class:`TakeRows`).

By label slice, each partition's index facts (ends, sortedness, where the
bounds fall) are fetched at tiling: on a sorted index only the partitions
overlapping the range are read; on an unsorted one the bounds must exist,
as in pandas. Either way the slice becomes a positional one.

By label or list of labels, each partition keeps its rows whose label is
wanted (``isin``) and one final partition applies pandas' ``loc`` to them,
so order, duplicates and errors are pandas' own.
"""

from __future__ import annotations

from typing import Any, Callable, Generator, Sequence

import numpy as np
import pandas as pd
from pandas.api.types import is_list_like

from ..core.entity import has_unknown
from ..core.operator import Fetch, Tiled
from ..core.tiling import as_data, recursive_tile
from ..tensor.chunks import offsets
from ..tensor.core import TensorData, is_tensor, tensor_data
from ..tensor.rechunk import rechunk
from .core import PandasData, PandasOperator, chunk_index_of, chunk_shape_of, is_pandas_like, nsplits_of, wrap
from .datasource import from_pandas
from .map import keeps_columns, map_partitions
from .meta import dtype_of_scalar, empty_meta, fake
from .rows import known_rows


def shape_like(meta: Any, rows: float) -> tuple:
    return (rows, meta.shape[1]) if isinstance(meta, pd.DataFrame) else (rows,)


# ----------------------------------------------------------------- rows by position
def _take(value: Any, key: Any) -> Any:
    return value[key] if isinstance(value, pd.Index) else value.iloc[key]


def _concat(pieces: list) -> Any:
    if len(pieces) == 1:
        return pieces[0]
    if isinstance(pieces[0], pd.Index):
        return pieces[0].append(pieces[1:])
    return pd.concat(pieces)


class TakeRows(PandasOperator):
    """A partition made of rows of input partitions (chunk level).

    ``takes[j]`` picks rows of input ``j`` (a slice or positions); the pieces
    go end to end, then are put in ``order`` (positions) when it is not None.
    """

    params = ("takes", "order")
    fusible = True

    def execute(self, *parts: Any) -> Any:
        out = _concat([_take(p, t) for p, t in zip(parts, self.takes)])
        return out if self.order is None else _take(out, self.order)


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


def _within(r: range, lo: int, hi: int) -> range:
    """The part of ``r`` whose values lie in ``[lo, hi)``."""
    if r.step > 0:
        a, b = _ceil_div(lo - r.start, r.step), _ceil_div(hi - r.start, r.step)
    else:
        a, b = _ceil_div(r.start - hi + 1, -r.step), _ceil_div(r.start - lo + 1, -r.step)
    return r[min(max(a, 0), len(r)):min(max(b, 0), len(r))]


def slice_plan(rows: Sequence[int], key: slice) -> list[tuple[int, slice, int]]:
    """``(partition, local slice, size)`` per output partition of a positional slice, in output order.

    >>> slice_plan([3, 3], slice(1, 5))
    [(0, slice(1, 3, 1), 2), (1, slice(0, 2, 1), 2)]
    """
    wanted = range(int(sum(rows)))[key]
    starts = offsets(list(rows))
    order = range(len(rows)) if wanted.step > 0 else range(len(rows) - 1, -1, -1)
    plan = []
    for i in order:
        sub = _within(wanted, starts[i], starts[i] + rows[i])
        if len(sub):
            stop = sub.stop - starts[i]
            plan.append((i, slice(sub.start - starts[i], stop if stop >= 0 else None, sub.step), len(sub)))
    return plan


def positions_plan(rows: Sequence[int], positions: np.ndarray) -> list[tuple[list[int], tuple, Any, int]]:
    """``(input partitions, takes, order, size)`` per output partition for rows at ``positions``.

    Sorted positions give one output partition per input partition that has
    some; others are cut into as many pieces as there are input partitions,
    each gathering from the partitions it needs.
    """
    if len(positions) == 0:
        return [([0], (slice(0, 0),), None, 0)]
    starts = np.asarray(offsets(list(rows)), dtype=np.int64)
    owners = np.searchsorted(starts, positions, side="right") - 1
    if len(positions) < 2 or bool(np.all(positions[1:] >= positions[:-1])):
        cuts = np.flatnonzero(np.diff(owners)) + 1
        return [([int(o[0])], (p - starts[o[0]],), None, len(p))
                for p, o in zip(np.split(positions, cuts), np.split(owners, cuts))]
    plan = []
    for part in np.array_split(np.arange(len(positions)), min(len(rows), len(positions))):
        pos, own = positions[part], owners[part]
        perm = np.argsort(own, kind="stable")
        used, counts = np.unique(own[perm], return_counts=True)
        local = np.split(pos[perm] - starts[own[perm]], np.cumsum(counts)[:-1])
        plan.append(([int(u) for u in used], tuple(local), np.argsort(perm, kind="stable"), len(pos)))
    return plan


def _take_chunks(data: PandasData, meta: Any, plan: list[tuple[list[int], tuple, Any, int]]) -> Tiled:
    chunks = []
    for k, (inputs, takes, order, size) in enumerate(plan):
        src = [data.chunks[i] for i in inputs]
        whole = len(src) == 1 and order is None and isinstance(takes[0], slice) and inputs[0] == k \
            and takes[0] == slice(0, src[0].shape[0], 1)
        if whole:
            chunks.append(src[0])
            continue
        op = TakeRows(takes=takes, order=order)
        chunks.append(op.new_chunk(src, index=chunk_index_of(meta, k), shape=chunk_shape_of(meta, size), meta=meta))
    return Tiled(chunks, nsplits_of(meta, [c.shape[0] for c in chunks]))


def _slice_tiled(data: PandasData, meta: Any, rows: Sequence[int], key: slice) -> Tiled:
    plan = slice_plan(rows, key) or [(0, slice(0, 0), 0)]
    return _take_chunks(data, meta, [([i], (sl,), None, n) for i, sl, n in plan])


def _prefix_rows(data: PandasData, stop: int) -> Generator[Any, Any, list[int]]:
    """Row counts of the fewest leading partitions holding ``stop`` rows (all when they hold fewer).

    Unknown sizes are computed in batches sized by the rows per partition
    seen so far, so a ``head`` after a filter computes about the partitions
    it needs.
    """
    chunks, rows, batch = data.chunks, [], 1
    while len(rows) < len(chunks) and sum(rows) < stop:
        todo = chunks[len(rows):len(rows) + batch]
        unknown = [c for c in todo if has_unknown(c.shape[:1])]
        if unknown:
            yield unknown
        for c in todo:
            if sum(rows) >= stop:
                break
            rows.append(int(c.shape[0]))
        seen = sum(rows)
        batch = _ceil_div(stop - seen, max(1, seen // len(rows))) if seen else 2 * batch
    return rows


def _is_prefix(key: slice) -> bool:
    return (key.start is None or key.start >= 0) and key.stop is not None and key.stop >= 0 \
        and (key.step is None or key.step > 0)


class RowSlice(PandasOperator):
    """Rows ``key`` (a slice) by position: ``iloc[a:b:c]``, ``head``, ``tail``."""

    params = ("rows",)

    @classmethod
    def tile(cls, op: RowSlice) -> Generator[Any, Any, Tiled]:
        data = op.inputs[0]
        if _is_prefix(op.rows):
            rows = yield from _prefix_rows(data, op.rows.stop)
        else:
            rows = yield from known_rows(data)
        return _slice_tiled(data, op.outputs[0].meta, rows, op.rows)


def _size_after(n: float, key: Any) -> float:
    return np.nan if has_unknown((n,)) else float(len(range(int(n))[key]))


def row_slice(obj: Any, key: slice) -> Any:
    """``obj``'s rows ``key`` by position (``iloc[key]``)."""
    data = as_data(obj)
    if key == slice(None):
        return wrap(data)
    key = slice(*(int(v) if v is not None else None for v in (key.start, key.stop, key.step)))
    if key.step == 0:
        raise ValueError("slice step cannot be zero")
    shape = (_size_after(data.shape[0], key),) + tuple(data.shape[1:])
    return RowSlice(rows=key).new_pandas([data], data.meta, shape)


def check_slice_ints(key: slice, where: str) -> None:
    for v in (key.start, key.stop, key.step):
        if v is not None and not isinstance(v, (int, np.integer)):
            raise TypeError(f"cannot do {where} indexing on Index with these indexers [{v}] of type {type(v).__name__}")


def normalize_positions(key: Any, n: int, bool_error: Callable[[int, int], Exception] | None = None) -> np.ndarray:
    """Non-negative int64 positions for a list of positions or a boolean mask over ``n`` rows."""
    arr = np.asarray(key)
    if arr.dtype == bool:
        if len(arr) != n:
            raise (bool_error or iloc_bool_error)(len(arr), n)
        return np.flatnonzero(arr)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype.kind not in "iu" or arr.ndim != 1:
        raise IndexError(f".iloc requires numeric indexers, got {arr}")
    arr = arr.astype(np.int64)
    if ((arr >= n) | (arr < -n)).any():
        raise IndexError("positional indexers are out-of-bounds")
    return np.where(arr < 0, arr + n, arr)


def iloc_bool_error(got: int, want: int) -> Exception:
    return IndexError(f"Boolean index has wrong length: {got} instead of {want}")


def getitem_bool_error(got: int, want: int) -> Exception:
    return ValueError(f"Item wrong length {got} instead of {want}.")


class TakePositions(PandasOperator):
    """Rows at positions, or where a boolean array is true (``iloc[[3, 0, 5]]``, ``df[mask_array]``)."""

    params = ("positions", "bool_error")

    @classmethod
    def tile(cls, op: TakePositions) -> Generator[Any, Any, Tiled]:
        data = op.inputs[0]
        rows = yield from known_rows(data)
        positions = normalize_positions(op.positions, int(sum(rows)), op.bool_error)
        return _take_chunks(data, op.outputs[0].meta, positions_plan(rows, positions))


def take_positions(obj: Any, key: Any, bool_error: Callable | None = None) -> Any:
    """``obj``'s rows at positions ``key`` (ints, or booleans as a mask)."""
    data = as_data(obj)
    n = data.shape[0]
    size = np.nan
    if not has_unknown((n,)):
        size = float(len(normalize_positions(key, int(n), bool_error)))  # pandas' errors, now
    key = np.asarray(key)
    shape = (size,) + tuple(data.shape[1:])
    return TakePositions(positions=key, bool_error=bool_error).new_pandas([data], data.meta, shape)


class PickRow(PandasOperator):
    """The row at one position: a scalar of a Series or Index, a row Series of a DataFrame."""

    params = ("position",)

    @classmethod
    def tile(cls, op: PickRow) -> Generator[Any, Any, Tiled]:
        data, out = op.inputs[0], op.outputs[0]
        rows = yield from known_rows(data)
        n = int(sum(rows))
        if not -n <= op.position < n:
            raise _position_error(data.meta, op.position, n)
        pos = op.position + n if op.position < 0 else op.position
        starts = offsets(list(rows))
        i = max(j for j in range(len(rows)) if starts[j] <= pos and rows[j])
        return _single(op.copy(position=pos - starts[i]), [data.chunks[i]], out)

    def execute(self, value: Any) -> Any:
        return _take(value, self.position)


def _position_error(meta: Any, position: int, n: int) -> IndexError:
    if isinstance(meta, pd.Index):  # numpy's words, or an extension array's
        return IndexError(f"index {position} is out of bounds for axis 0 with size {n}"
                          if isinstance(meta.dtype, np.dtype) else "index out of bounds")
    return IndexError("single positional indexer is out-of-bounds")


def _single(op: PandasOperator, inputs: list, out: Any) -> Tiled:
    """One chunk of ``out``: a 0-d tensor (a scalar), or a one-partition pandas object."""
    if isinstance(out, TensorData):
        return Tiled([op.new_scalar_chunk(inputs, out.dtype)], ())
    chunk = op.new_chunk(inputs, index=chunk_index_of(out.meta, 0), shape=out.shape, meta=out.meta)
    return Tiled([chunk], nsplits_of(out.meta, out.shape[:1]))


def _row_meta(meta: pd.DataFrame) -> pd.Series:
    """The meta of one row of a DataFrame (its name, the row's label, is known only when run)."""
    row = fake(meta).iloc[0]
    return pd.Series([], dtype=row.dtype, index=meta.columns[:0], name=None)


def _scalar_dtype(meta: Any) -> np.dtype:
    sample = fake(meta)
    value = sample[0] if isinstance(sample, pd.Index) else sample.iloc[0]
    dtype = getattr(value, "dtype", None)
    return dtype if isinstance(dtype, np.dtype) else dtype_of_scalar(value)


def pick_row(obj: Any, position: int) -> Any:
    """``obj.iloc[position]``: a scalar (0-d tensor) for a Series or Index, a row Series of a DataFrame."""
    data = as_data(obj)
    position = int(position)
    n = data.shape[0]
    if not has_unknown((n,)) and not -n <= position < n:
        raise _position_error(data.meta, position, n)
    op = PickRow(position=position)
    if isinstance(data.meta, pd.DataFrame):
        return op.new_pandas([data], _row_meta(data.meta), (data.shape[1],))
    return op.new_scalar([data], _scalar_dtype(data.meta))


# ----------------------------------------------------------------- arrays and tensors cut along rows
class RowsArgMap(PandasOperator):
    """``func(partition, *args, piece)``, ``piece`` being the partition's rows of an array or a tensor.

    The array is a param (cut per chunk at tiling); a tensor is the second
    input, rechunked to the partitions' row counts.
    """

    params = ("func", "args", "array", "same_rows", "length_error")
    fusible = True

    @classmethod
    def tile(cls, op: RowsArgMap) -> Generator[Any, Any, Tiled]:
        data, out = op.inputs[0], op.outputs[0]
        rows = yield from known_rows(data)
        tensor = op.inputs[1] if len(op.inputs) > 1 else None
        if tensor is not None and (has_unknown(tensor.shape) or any(has_unknown(s) for s in tensor.nsplits)):
            yield tensor.chunks
            tensor.refresh_shape()
        length = len(op.array) if tensor is None else tensor.shape[0]
        if length != sum(rows):
            raise op.length_error(int(length), int(sum(rows)))
        pieces = (yield from _tensor_pieces(tensor, rows)) if tensor is not None else [None] * len(rows)
        chunks, start = [], 0
        for i, (c, n) in enumerate(zip(data.chunks, rows)):
            piece = pieces[i]
            if tensor is None or piece is None:
                array = op.array[start:start + n] if tensor is None else np.empty((0,) + tensor.shape[1:], tensor.dtype)
                chunk_op, inputs = op.copy(array=array), [c]
            else:
                chunk_op, inputs = op.copy(array=None), [c, piece]
            shape = chunk_shape_of(out.meta, n if op.same_rows else np.nan)
            chunks.append(chunk_op.new_chunk(inputs, index=chunk_index_of(out.meta, i), shape=shape, meta=out.meta))
            start += n
        return Tiled(chunks, nsplits_of(out.meta, rows if op.same_rows else [np.nan] * len(rows)))

    def execute(self, value: Any, *piece: Any) -> Any:
        return self.func(value, *self.args, self.array if self.array is not None else piece[0])


def _tensor_pieces(tensor: TensorData, rows: Sequence[int]) -> Generator[Any, Any, list]:
    """Per partition, the tensor chunk holding its rows (None for an empty partition)."""
    sizes = tuple(int(n) for n in rows if n)
    if not sizes:
        return [None] * len(rows)
    other = tuple((int(s),) for s in tensor.shape[1:])
    cut = (yield from recursive_tile(rechunk(tensor, (sizes,) + other))).data
    out, k = [], 0
    for n in rows:
        out.append(cut.chunks[k] if n else None)
        k += 1 if n else 0
    return out


def rows_arg_map(obj: Any, func: Callable, args: tuple, value: Any, same_rows: bool = True,
                 length_error: Callable[[int, int], Exception] | None = None) -> Any:
    """``func(partition, *args, piece)`` with ``value`` (an array or tensor) cut along ``obj``'s rows."""
    data = as_data(obj)
    length_error = length_error or _values_length_error
    tensor = tensor_data(value) if is_tensor(value) else None
    n = data.shape[0]
    length = tensor.shape[0] if tensor is not None else len(value)
    if not has_unknown((n, length)) and length != n:
        raise length_error(int(length), int(n))
    sample = np.empty((0,) + tuple(tensor.shape[1:]), tensor.dtype) if tensor is not None else value[:0]
    meta = empty_meta(func(data.meta, *args, sample))
    op = RowsArgMap(func=func, args=args, array=None if tensor is not None else value, same_rows=same_rows,
                    length_error=length_error)
    shape = shape_like(meta, n if same_rows else np.nan)
    inputs = [data] if tensor is None else [data, tensor]
    return op.new_pandas(inputs, meta, shape, partitioning=data.partitioning if same_rows else None)


def _values_length_error(got: int, want: int) -> Exception:
    return ValueError(f"Length of values ({got}) does not match length of index ({want})")


def _filter_by_array(value: Any, mask: np.ndarray) -> Any:
    return value[np.asarray(mask, dtype=bool)] if isinstance(value, pd.Index) else value.iloc[np.asarray(mask, dtype=bool)]


# ----------------------------------------------------------------- rows by a lazy boolean mask
@keeps_columns(lambda args, kwargs, column: (args[0], column))
def _filter_rows(value: Any, mask: Any) -> Any:
    m = mask.to_numpy()
    if m.dtype == object:  # widened by an alignment that found rows missing in the mask
        if pd.isna(m).any():
            raise pd.errors.IndexingError(
                "Unalignable boolean Series provided as indexer (index of the boolean Series and of the indexed "
                "object do not match).")
        m = m.astype(bool)
    elif m.dtype != bool:
        m = mask.array
    return value[m] if isinstance(value, pd.Index) else value.loc[m]


def filter_rows(obj: Any, mask: Any) -> Any:
    """``obj[mask]`` for a lazy boolean Series, aligned on ``obj``'s index."""
    mmeta = as_data(mask).meta
    if not isinstance(mmeta, pd.Series) or not (mmeta.dtype == bool or str(mmeta.dtype) == "boolean"):
        raise TypeError(f"a lazy {type(mask).__name__} of dtype {getattr(mmeta, 'dtype', None)} cannot select rows; "
                        "a boolean Series can")
    return map_partitions(_filter_rows, obj, mask, meta=as_data(obj).meta, same_rows=False, how="left")


def is_bool_tensor(t: Any) -> bool:
    return tensor_data(t).ndim == 1 and tensor_data(t).dtype == bool


def mask_rows(obj: Any, key: Any, bool_error: Callable[[int, int], Exception]) -> Any:
    """Rows of ``obj`` where ``key`` (a lazy Series, a pandas Series, a tensor or an array) is true."""
    if is_pandas_like(key):
        return filter_rows(obj, key)
    if isinstance(key, pd.Series):
        return filter_rows(obj, from_pandas(key, chunk_size=max(1, len(key))))
    if is_tensor(key):
        return rows_arg_map(obj, _filter_by_array, (), key, same_rows=False, length_error=bool_error)
    return take_positions(obj, np.asarray(key, dtype=bool), bool_error)


def is_bool_list(key: Any) -> bool:
    if isinstance(key, (pd.Series, pd.Index, np.ndarray)):
        return key.dtype == bool
    if is_tensor(key):
        return is_bool_tensor(key)
    return is_list_like(key) and len(key) > 0 and all(isinstance(k, (bool, np.bool_)) for k in key)


# ----------------------------------------------------------------- rows by label
class FilterLabels(PandasOperator):
    """A partition's rows whose label is in ``labels`` (on the first level when ``level0``)."""

    params = ("labels", "level0")
    fusible = True

    def execute(self, value: Any) -> Any:
        idx = value.index
        if self.level0:
            idx = idx.get_level_values(0)
        return value.loc[idx.isin(self.labels)]


class PickLabels(PandasOperator):
    """``loc[key]`` for a label or list of labels: the matching rows of every partition, then pandas' loc."""

    params = ("labels", "level0")

    @classmethod
    def tile(cls, op: PickLabels) -> Tiled:
        data, out = op.inputs[0], op.outputs[0]
        many = is_list_like(op.labels) and not isinstance(op.labels, tuple)
        labels = list(op.labels) if many else [op.labels]
        parts = [FilterLabels(labels=labels, level0=op.level0).new_chunk(
            [c], index=c.index, shape=chunk_shape_of(data.meta, np.nan), meta=data.meta) for c in data.chunks]
        return _single(op.copy(), parts, out)

    def execute(self, *parts: Any) -> Any:
        return _concat([p for p in parts if len(p)] or [parts[0]]).loc[self.labels]


def pick_labels(obj: Any, key: Any) -> Any:
    """``obj.loc[key]`` for a label (a row, or a scalar of a Series) or a list of labels."""
    data = as_data(obj)
    meta, index = data.meta, data.meta.index
    many = is_list_like(key) and not isinstance(key, tuple)
    level0 = isinstance(index, pd.MultiIndex) and not many and not isinstance(key, tuple)
    if isinstance(index, pd.MultiIndex) and isinstance(key, tuple) and len(key) < index.nlevels:
        raise NotImplementedError("a partial tuple key on a MultiIndex; select by its first level or a full tuple")
    op = PickLabels(labels=list(key) if many else key, level0=level0)
    if many:
        return op.new_pandas([data], meta, shape_like(meta, np.nan))
    if level0:
        dropped = meta.droplevel(0)
        return op.new_pandas([data], dropped, shape_like(dropped, np.nan))
    if isinstance(meta, pd.DataFrame):
        return op.new_pandas([data], _row_meta(meta), (meta.shape[1],))
    return op.new_scalar([data], _scalar_dtype(meta))


class IndexFacts(PandasOperator):
    """A partition's index facts for a label slice: size, sortedness, ends, bounds' positions."""

    params = ("start", "stop")

    def execute(self, value: Any) -> dict:
        idx = value.index
        n, inc, dec = len(idx), idx.is_monotonic_increasing, idx.is_monotonic_decreasing
        facts = {"n": n, "inc": inc, "dec": dec, "ends": (idx[0], idx[-1]) if n else None,
                 "locs": idx.slice_locs(self.start, self.stop) if n and (inc or dec) else (0, 0)}
        if n and inc and dec:
            # all labels equal: pandas reads it as increasing, but in a decreasing index it is in or out whole
            inside = (self.start is None or idx[0] <= self.start) and (self.stop is None or idx[0] >= self.stop)
            facts["locs_dec"] = (0, n if inside else 0)
        facts["hits"] = [_occurrences(idx, b) for b in (self.start, self.stop)]
        return facts


def _occurrences(idx: pd.Index, label: Any) -> tuple[int, int, int] | None:
    if label is None:
        return None
    where = np.flatnonzero(idx == label)
    return (len(where), int(where[0]), int(where[-1])) if len(where) else (0, -1, -1)


def _sorted_across(facts: list[dict], key: str) -> bool:
    """Whether the whole index is monotonic (``key`` "inc" or "dec") given each partition's facts."""
    full = [f for f in facts if f["n"]]
    if not all(f[key] for f in full):
        return False
    try:
        pairs = zip(full, full[1:])
        return all((a["ends"][1] <= b["ends"][0]) if key == "inc" else (a["ends"][1] >= b["ends"][0]) for a, b in pairs)
    except TypeError:
        return False


def _bound(facts: list[dict], starts: list[int], which: int, label: Any) -> int:
    """A bound's global position on an unsorted index, with pandas' errors (the label must be there, once)."""
    side = "left" if which == 0 else "right"
    count, first, last = 0, None, None
    for f, s in zip(facts, starts):
        c, a, b = f["hits"][which]
        if c:
            first = s + a if first is None else first
            last, count = s + b, count + c
    if not count:
        raise KeyError(f"Cannot get {side} slice bound for non-monotonic index with a missing label {label!r}. "
                       "Either sort the index or specify an existing label.")
    if count > 1 and last - first + 1 != count:
        raise KeyError(f"Cannot get {side} slice bound for non-unique label: {label!r}")
    return first if which == 0 else last + 1


def label_slice_positions(facts: list[dict], rows: Sequence[int], start: Any, stop: Any) -> tuple[int, int]:
    """The global positions ``[a, b)`` that ``loc[start:stop]`` selects, from the partitions' facts."""
    starts = offsets(list(rows))
    inc = _sorted_across(facts, "inc")
    if inc or _sorted_across(facts, "dec"):
        locs = [f["locs"] if inc else f.get("locs_dec", f["locs"]) for f in facts]
        spans = [(s + a, s + b) for (a, b), s in zip(locs, starts) if a < b]
        return (min(a for a, _ in spans), max(b for _, b in spans)) if spans else (0, 0)
    a = _bound(facts, starts, 0, start) if start is not None else 0
    b = _bound(facts, starts, 1, stop) if stop is not None else int(sum(rows))
    return a, max(a, b)


class LocSlice(PandasOperator):
    """``loc[start:stop:step]`` by label: partitions' index facts are fetched, then the slice is positional."""

    params = ("start", "stop", "step")

    @classmethod
    def tile(cls, op: LocSlice) -> Generator[Any, Any, Tiled]:
        data = op.inputs[0]
        rows = yield from known_rows(data)
        facts_chunks = [IndexFacts(start=op.start, stop=op.stop).new_chunk([c], index=(i,), shape=(), meta=None)
                        for i, c in enumerate(data.chunks)]
        facts = yield Fetch(facts_chunks)
        a, b = label_slice_positions(facts, rows, op.start, op.stop)
        return _slice_tiled(data, op.outputs[0].meta, rows, slice(a, b, op.step))


def label_slice(obj: Any, key: slice) -> Any:
    """``obj.loc[key]`` for a slice of labels."""
    data = as_data(obj)
    if key == slice(None):
        return wrap(data)
    if key.step is not None and (not isinstance(key.step, (int, np.integer)) or key.step <= 0):
        raise NotImplementedError(f"a label slice with step {key.step!r}; only positive integer steps are supported")
    try:
        data.meta.loc[key]  # pandas' TypeError for bounds of the wrong type, now
    except KeyError:
        pass
    op = LocSlice(start=key.start, stop=key.stop, step=key.step)
    return op.new_pandas([data], data.meta, shape_like(data.meta, np.nan))
