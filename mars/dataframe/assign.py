"""Assignment: ``df.loc[...] = v``, ``df.iloc[...] = v``, ``s[...] = v``, ``s.loc[...] = v``, ``df[rows] = v``.

An assignment builds a new lazy object and points the one the user holds at
it (``obj.data = new``), as a tensor's ``t[i] = v`` does; expressions built
from the old value keep it, as pandas' copy-on-write keeps them.

One operator, :class:`SetValues`, writes partition by partition. Its row key
becomes, per partition, the local rows to write; its column key the
positions of the columns (new columns are added first, as pandas enlarges);
and the value reaches each partition as pandas would line it up:

- ``whole``: scalars, and whatever pandas lines up itself (a pandas object,
  a list along the columns of the rows written) go to every partition;
- ``aligned``: a lazy Series/DataFrame is aligned on the index (reindexed
  onto the target's rows: missing rows are NaN);
- ``rows``: an array or a tensor along the rows is matched with the written
  rows in order, cut by the number of rows each partition writes (counted
  first when the key is a lazy mask).

Row keys: every row; positions (``iloc`` ints, lists, slices, boolean
arrays), resolved against the row counts at tiling; labels (a list must
exist, pandas' KeyError otherwise; one missing label appends a row, as
pandas enlarges); label slices (positions from the partitions' index facts,
as ``loc`` reads them); lazy boolean Series (aligned on the index) and
boolean tensors (by position). The result's dtypes are pandas' for the same
assignment on a small sample, and every partition is cast to them (so an int
column given NaN anywhere is float everywhere, as in pandas).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import is_list_like

from ..core.entity import Tileable, has_unknown
from ..core.operator import Fetch, Tiled
from ..core.tiling import as_data, recursive_tile
from ..tensor.chunks import offsets
from ..tensor.core import TensorData, is_tensor, tensor_data
from .core import (
    DataFrame,
    PandasOperator,
    Series,
    chunk_index_of,
    chunk_shape_of,
    is_pandas_like,
    nsplits_of,
    wrap,
)
from .datasource import from_pandas, from_tensor
from .indexing import ILoc, Loc, _df_setitem, _is_positional_slice, _split_key
from .map import align_row_inputs
from .meta import empty_meta, fake
from .rows import known_rows
from .selection import (
    IndexFacts,
    _tensor_pieces,
    check_slice_ints,
    is_bool_list,
    is_bool_tensor,
    label_slice_positions,
    normalize_positions,
)

__all__: list[str] = []

_NOT_SET = "<not set>"


# ----------------------------------------------------------------- what one partition does
def _mask_array(mask: Any) -> np.ndarray:
    """A boolean Series aligned on a partition's index as a numpy mask (pandas' error where labels were missing)."""
    if isinstance(mask, np.ndarray):
        return mask.astype(bool, copy=False)
    m = mask.to_numpy()
    if m.dtype == object:
        if pd.isna(m).any():
            raise pd.errors.IndexingError(
                "Unalignable boolean Series provided as indexer (index of the boolean Series and of the indexed "
                "object do not match).")
        m = m.astype(bool)
    return np.asarray(m, dtype=bool) if m.dtype == bool else mask.fillna(False).to_numpy(dtype=bool)


def _label_rows(index: pd.Index, labels: list, level0: bool) -> np.ndarray:
    idx = index.get_level_values(0) if level0 else index
    return np.flatnonzero(idx.isin(labels))


def _conform(out: Any, dtypes: Any) -> Any:
    """``out`` cast to the whole result's dtypes (a partition may not have met the value that widened them)."""
    if isinstance(out, pd.Series):
        return out if out.dtype == dtypes else out.astype(dtypes)
    differ = [i for i, (a, b) in enumerate(zip(out.dtypes, dtypes)) if a != b]
    for i in differ:
        out.isetitem(i, out.iloc[:, i].astype(dtypes.iloc[i]))
    return out


def line_up(value: Any, out: Any, rows: Any, align: str | None, labels: Any) -> Any:
    """``value`` lined up with the rows (and columns) written, as pandas' ``loc`` aligns it; then it is positional.

    ``align``: ``"taken"`` (a value already aligned with the partition: its written rows are taken), ``"index"``
    (reindexed on the written rows' labels), ``"columns"`` (a Series reindexed on the target columns) or None.
    """
    if align is None or not isinstance(value, (pd.Series, pd.DataFrame)):
        return value
    if align == "columns":
        return value.reindex(labels if is_list_like(labels) else [labels]).array
    if align == "taken":
        value = value if rows is None else value.iloc[rows]
    else:
        value = value.reindex(out.index if rows is None else out.index[rows])
    if isinstance(out, pd.Series):
        return value.iloc[:, 0] if isinstance(value, pd.DataFrame) else value
    many = is_list_like(labels)
    if isinstance(value, pd.DataFrame):
        return value.reindex(columns=labels) if many else value.reindex(columns=[labels]).iloc[:, 0]
    if many and len(labels) > 1:  # pandas repeats a Series aligned on the rows in every column written
        return np.repeat(value.to_numpy()[:, None], len(labels), axis=1)
    return value


def _append_row(out: Any, label: Any, col_key: Any, value: Any) -> None:
    """pandas' ``loc`` enlargement: ``out.loc[label, col_key] = value`` for a label ``out`` lacks."""
    if isinstance(out, pd.Series) or (isinstance(col_key, slice) and col_key == slice(None)):
        out.loc[label] = value
    else:
        out.loc[label, col_key] = value


def _write(out: Any, rows: Any, cols: Any, value: Any) -> None:
    r = slice(None) if rows is None else rows
    if isinstance(out, pd.Series):
        out.iloc[r] = value
    else:
        out.iloc[r, slice(None) if cols is None else cols] = value


class SetChunk(PandasOperator):
    """One partition with values written (chunk level).

    ``rows``: None (all), an int, local positions, or ``("labels", labels, level0)``; a mask input (aligned
    Series or a boolean array piece) when ``has_mask``. ``value`` is the value or, when ``has_value``, the last
    input. ``full``: the value covers the partition's rows, the written ones are taken from it (``s[m] = v``
    with ``len(v) == len(s)``). ``enlarge``: ``(label, column key)`` to append as pandas' ``loc`` does.
    """

    params = ("rows", "cols", "labels", "new_cols", "value", "align", "has_mask", "has_value", "full", "enlarge",
              "dtypes")
    fusible = True

    def execute(self, part: Any, *extra: Any) -> Any:
        it = iter(extra)
        mask = next(it) if self.has_mask else None
        value = next(it) if self.has_value else self.value
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value[()]
        out = part.copy()
        for label in self.new_cols or ():
            out[label] = pd.Series(np.nan, index=out.index, dtype=object)
        rows = self._rows(out, mask)
        if self.full:
            value = value[rows] if rows is not None else value
        if not isinstance(rows, np.ndarray) or len(rows):
            _write(out, rows, self.cols, line_up(value, out, rows, self.align, self.labels))
        if self.enlarge is not None:
            label, col_key = self.enlarge
            out = out.copy()
            _append_row(out, label, col_key, value)
        return _conform(out, self.dtypes)

    def _rows(self, out: Any, mask: Any) -> Any:
        if mask is not None:
            return np.flatnonzero(_mask_array(mask))
        if isinstance(self.rows, tuple):
            return _label_rows(out.index, self.rows[1], self.rows[2])
        return self.rows


class CountTrue(PandasOperator):
    """How many rows a partition's mask selects (what tiling fetches to cut values along the rows)."""

    params = ()

    def execute(self, mask: Any) -> int:
        return int(np.count_nonzero(_mask_array(mask)))


class LabelsFound(PandasOperator):
    """Which of ``labels`` a partition's index holds."""

    params = ("labels", "level0")

    def execute(self, part: Any) -> np.ndarray:
        idx = part.index.get_level_values(0) if self.level0 else part.index
        return pd.Index(self.labels).isin(idx) if self.labels else np.zeros(0, dtype=bool)


# ----------------------------------------------------------------- the tileable operator
class SetValues(PandasOperator):
    """``obj`` with values written at a row key and column positions (see the module's docstring).

    ``row_kind``: ``all``, ``positions``, ``slice``, ``labels``, ``lslice``, ``mask`` (a lazy boolean Series,
    an input) or ``tmask`` (a boolean tensor, an input). ``value_kind``: ``whole``, ``whole_in`` (an input every
    partition gets whole), ``aligned`` (an input aligned on the index), ``rows`` (an array) or ``trows`` (a
    tensor) along the written rows.
    """

    params = ("row_kind", "row_key", "row_scalar", "level0", "cols", "labels", "new_cols", "col_key", "value",
              "value_kind", "align", "full_ok", "dtypes")

    @classmethod
    def tile(cls, op: SetValues) -> Generator[Any, Any, Tiled]:
        data, out = op.inputs[0], op.outputs[0]
        extra = list(op.inputs[1:])
        key_in = extra.pop(0) if op.row_kind in ("mask", "tmask") else None
        val_in = extra.pop(0) if extra else None
        lazy = [data] + ([key_in] if op.row_kind == "mask" else []) + ([val_in] if op.value_kind == "aligned" else [])
        aligned = yield from align_row_inputs(lazy, how="left")
        parts = {"mask": aligned[1][0]} if op.row_kind == "mask" else {}
        if op.value_kind == "aligned":
            parts["value"] = aligned[-1][0]
        plan = yield from _row_plan(op, data, key_in, parts)
        values = yield from _value_plan(op, plan, val_in, parts)
        enlarge = plan.get("enlarge")
        dtypes = op.dtypes
        if enlarge is not None:
            out.meta = _enlarged_meta(out.meta, enlarge, _sample_value(op, val_in))
            dtypes = _dtypes_of(out.meta)
        return _set_chunks(op, data, out, plan, values, parts, enlarge, dtypes)


def _dtypes_of(meta: Any) -> Any:
    return meta.dtypes if isinstance(meta, pd.DataFrame) else meta.dtype


def _set_chunks(op: SetValues, data: Any, out: Any, plan: dict, values: list, parts: dict, enlarge: Any,
                dtypes: Any) -> Tiled:
    chunks, sizes = [], []
    last = len(data.chunks) - 1
    for p, c in enumerate(data.chunks):
        inputs = [c]
        if "mask" in parts:
            inputs.append(parts["mask"][p])
        elif plan.get("mask_pieces") is not None and plan["mask_pieces"][p] is not None:
            inputs.append(plan["mask_pieces"][p])
        has_mask = len(inputs) > 1
        value, has_value = values[p]
        if has_value:
            inputs.append(value)
        grow = enlarge if enlarge is not None and p == last else None
        chunk_op = SetChunk(rows=plan["rows"][p], cols=op.cols, labels=op.labels, new_cols=op.new_cols,
                            value=None if has_value else value, align=op.align, has_mask=has_mask, has_value=has_value,
                            full=plan.get("full", False), enlarge=grow, dtypes=dtypes)
        n = c.shape[0] + (1 if grow is not None else 0)
        sizes.append(n)
        chunks.append(chunk_op.new_chunk(inputs, index=chunk_index_of(out.meta, p), shape=chunk_shape_of(out.meta, n),
                                         meta=out.meta))
    return Tiled(chunks, nsplits_of(out.meta, sizes))


def _row_plan(op: SetValues, data: Any, key_in: Any, parts: dict) -> Generator[Any, Any, dict]:
    """Per partition, the rows to write; ``counts`` of written rows where values are cut along them."""
    along = op.value_kind in ("rows", "trows")
    n_parts = len(data.chunks)
    kind = op.row_kind
    if kind in ("all", "labels", "mask") and not along:
        plan: dict = {"rows": [None] * n_parts}
        if kind == "labels":
            plan = yield from _labels_plan(op, data)
        return plan
    rows = [int(r) for r in (yield from known_rows(data))]
    if kind == "all":
        return {"rows": [None] * n_parts, "counts": rows, "total": sum(rows)}
    if kind == "mask":
        counts = yield Fetch([CountTrue().new_chunk([m], index=(i,), shape=(), meta=None)
                              for i, m in enumerate(parts["mask"])])
        return {"rows": [None] * n_parts, "counts": list(counts), "total": sum(rows), "row_counts": rows}
    if kind == "tmask":
        return (yield from _tmask_plan(op, key_in, rows, along))
    positions = yield from _global_positions(op, data, rows)
    return _positions_plan(op, rows, positions)


def _labels_plan(op: SetValues, data: Any) -> Generator[Any, Any, dict]:
    labels = list(op.row_key)
    found_chunks = [LabelsFound(labels=labels, level0=op.level0).new_chunk([c], index=(i,), shape=(), meta=None)
                    for i, c in enumerate(data.chunks)]
    found = np.logical_or.reduce((yield Fetch(found_chunks))) if labels else np.zeros(0, dtype=bool)
    missing = [lb for lb, f in zip(labels, np.atleast_1d(found)) if not f]
    rows = [("labels", labels, op.level0)] * len(data.chunks)
    if not missing:
        return {"rows": rows}
    if not op.row_scalar or op.level0:
        raise KeyError(f"{missing} not in index")
    return {"rows": [np.zeros(0, dtype=np.int64)] * len(data.chunks), "enlarge": (missing[0], op.col_key)}


def _tmask_plan(op: SetValues, tensor: TensorData, rows: list, along: bool) -> Generator[Any, Any, dict]:
    if has_unknown(tensor.shape) or any(has_unknown(s) for s in tensor.nsplits):
        yield tensor.chunks
        tensor.refresh_shape()
    if tensor.shape[0] != sum(rows):
        raise IndexError(f"Boolean index has wrong length: {int(tensor.shape[0])} instead of {sum(rows)}")
    pieces = yield from _tensor_pieces(tensor, rows)
    plan: dict = {"rows": [None if p is not None else np.zeros(0, dtype=np.int64) for p in pieces],
                  "mask_pieces": pieces, "total": sum(rows), "row_counts": rows}
    if along:
        live = [p for p in pieces if p is not None]
        counts = iter((yield Fetch([CountTrue().new_chunk([p], index=(i,), shape=(), meta=None)
                                    for i, p in enumerate(live)])))
        plan["counts"] = [next(counts) if p is not None else 0 for p in pieces]
    return plan


def _global_positions(op: SetValues, data: Any, rows: list) -> Generator[Any, Any, np.ndarray]:
    n = sum(rows)
    kind = op.row_kind
    if kind == "slice":
        return np.arange(n)[op.row_key]
    if kind == "lslice":
        start, stop, step = op.row_key
        facts_chunks = [IndexFacts(start=start, stop=stop).new_chunk([c], index=(i,), shape=(), meta=None)
                        for i, c in enumerate(data.chunks)]
        facts = yield Fetch(facts_chunks)
        a, b = label_slice_positions(facts, rows, start, stop)
        return np.arange(a, b)[::step or 1]
    if op.row_scalar:
        pos = int(op.row_key[0])
        if not -n <= pos < n:
            raise IndexError("iloc cannot enlarge its target object")
        return np.array([pos + n if pos < 0 else pos])
    return set_positions(op.row_key, n)


def set_positions(key: Any, n: int) -> np.ndarray:
    """Non-negative positions of ``key`` (ints or a boolean mask) over ``n`` rows, with pandas' setting errors."""
    arr = np.asarray(key)
    if arr.dtype != bool and arr.size:
        wrong = arr[(arr >= n) | (arr < -n)] if arr.dtype.kind in "iu" else arr
        if len(wrong):
            raise IndexError(f"index {wrong[0]} is out of bounds for axis 0 with size {n}")
    return normalize_positions(arr, n)


def _positions_plan(op: SetValues, rows: list, positions: np.ndarray) -> dict:
    """Positions sorted (values follow them), then split by partition into local positions."""
    perm = None
    if len(positions) > 1 and not bool(np.all(positions[1:] >= positions[:-1])):
        perm = np.argsort(positions, kind="stable")
        positions = positions[perm]
    starts = np.asarray(offsets(rows) + [sum(rows)], dtype=np.int64)
    cuts = np.searchsorted(positions, starts[1:-1], side="left")
    local = [p - s for p, s in zip(np.split(positions, cuts), starts[:-1])]
    if op.row_scalar:
        local = [int(lp[0]) if len(lp) else np.zeros(0, dtype=np.int64) for lp in local]
    return {"rows": local, "counts": [int(np.size(lp)) for lp in local], "perm": perm, "total": sum(rows),
            "row_counts": rows}


def _value_plan(op: SetValues, plan: dict, val_in: Any, parts: dict) -> Generator[Any, Any, list]:
    """Per partition, ``(value, True)`` for an input chunk or ``(value, False)`` for a literal."""
    n_parts = len(plan["rows"])
    kind = op.value_kind
    if kind == "whole":
        return [(op.value, False)] * n_parts
    if kind == "aligned":
        return [(c, True) for c in parts["value"]]
    if kind == "whole_in":
        one = yield from _one_chunk(val_in)
        return [(one, True)] * n_parts
    length = len(op.value) if kind == "rows" else int(val_in.shape[0])
    counts = plan["counts"]
    if op.full_ok and length == plan["total"]:
        plan["full"] = True
        counts = plan["row_counts"]
    elif length != sum(counts):
        raise ValueError("Must have equal len keys and value when setting with an iterable")
    perm = plan.get("perm")
    if kind == "rows":
        value = op.value if perm is None else op.value[perm]
        starts = offsets(list(counts))
        return [(value[s:s + k], False) for s, k in zip(starts, counts)]
    tensor = val_in
    if perm is not None:
        tensor = (yield from recursive_tile(wrap(tensor)[perm])).data
    pieces = yield from _tensor_pieces(tensor, counts)
    empty = np.empty((0,) + tuple(tensor.shape[1:]), dtype=tensor.dtype)
    return [(p, True) if p is not None else (empty, False) for p in pieces]


def _one_chunk(data: Any) -> Generator[Any, Any, Any]:
    if isinstance(data, TensorData):
        from ..tensor.rechunk import rechunk

        if has_unknown(data.shape):
            yield data.chunks
            data.refresh_shape()
        if len(data.chunks) == 1:
            return data.chunks[0]
        return (yield from recursive_tile(rechunk(data, tuple((int(s),) for s in data.shape)))).data.chunks[0]
    from .rows import single_chunk

    return single_chunk(data)


def _sample_value(op: SetValues, val_in: Any) -> Any:
    if op.value_kind in ("whole", "rows"):
        return op.value if op.value_kind == "whole" else op.value[:1]
    if isinstance(val_in, TensorData):
        return np.zeros(val_in.shape[1:] if op.value_kind == "trows" else val_in.shape, dtype=val_in.dtype)[()]
    return fake(val_in.meta, 1)


def _enlarged_meta(meta: Any, enlarge: tuple, value: Any) -> Any:
    """The metadata pandas' ``loc`` gives when it appends row ``label``, worked out on a small sample."""
    label, col_key = enlarge
    sample = fake(meta)
    sample.index = pd.Index([object(), object()])  # labels that cannot be ``label``
    _append_row(sample, label, col_key, value)
    index = meta.index.append(pd.Index([label]))
    return empty_meta(sample).set_axis(index[:0], axis=0)


# ----------------------------------------------------------------- reading the key and the value
class RowKey:
    """A row key read at build time: ``kind`` (see :class:`SetValues`), ``key``, one row or many, its input."""

    __slots__ = ("input", "key", "kind", "level0", "scalar")

    def __init__(self, kind: str, key: Any = None, scalar: bool = False, level0: bool = False, input: Any = None):
        self.kind, self.key, self.scalar, self.level0, self.input = kind, key, scalar, level0, input


def _lazy_mask(key: Any) -> RowKey:
    data = as_data(key)
    meta = data.meta
    if not isinstance(meta, pd.Series) or not (meta.dtype == bool or str(meta.dtype) == "boolean"):
        raise NotImplementedError(f"assigning through a lazy {type(wrap(data)).__name__} of dtype "
                                  f"{getattr(meta, 'dtype', None)}; a boolean Series works, or compute the labels")
    return RowKey("mask", input=data)


def _mask_key(key: Any) -> RowKey | None:
    """A boolean key (lazy, pandas, tensor or array) as a RowKey; None when ``key`` is not one."""
    if is_pandas_like(key):
        return _lazy_mask(key)
    if isinstance(key, pd.Series) and is_bool_list(key):
        return _lazy_mask(from_pandas(key, chunk_size=max(1, len(key))))
    if is_tensor(key):
        if not is_bool_tensor(key):
            raise NotImplementedError("assigning at a tensor of positions; a boolean tensor or a list works")
        return RowKey("tmask", input=tensor_data(key))
    if is_bool_list(key):
        return RowKey("positions", np.asarray(key, dtype=bool))
    return None


def _iloc_rows(data: Any, key: Any) -> RowKey:
    if isinstance(key, slice):
        if key == slice(None):
            return RowKey("all")
        check_slice_ints(key, "positional")
        return RowKey("slice", key)
    found = _mask_key(key)
    if found is not None:
        return found
    n = data.shape[0]
    if is_list_like(key):
        if not has_unknown((n,)):
            set_positions(key, int(n))  # pandas' IndexError, now
        return RowKey("positions", np.asarray(key))
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        if not has_unknown((n,)) and not -n <= key < n:
            raise IndexError("iloc cannot enlarge its target object")
        return RowKey("positions", np.array([int(key)]), scalar=True)
    raise TypeError(f"Cannot set values by location with a non-integer key {key!r}")


def _loc_rows(data: Any, key: Any) -> RowKey:
    if isinstance(key, slice):
        if key == slice(None):
            return RowKey("all")
        if key.step is not None and (not isinstance(key.step, (int, np.integer)) or key.step <= 0):
            raise NotImplementedError(f"a label slice with step {key.step!r}; only positive integer steps work")
        return RowKey("lslice", (key.start, key.stop, key.step))
    found = _mask_key(key)
    if found is not None:
        return found
    if is_list_like(key) and not isinstance(key, tuple):
        return RowKey("labels", list(key))
    multi = isinstance(data.meta.index, pd.MultiIndex)
    if multi and isinstance(key, tuple) and len(key) < data.meta.index.nlevels:
        raise NotImplementedError("assigning at a partial tuple key of a MultiIndex; use its first level or a full tuple")
    return RowKey("labels", [key], scalar=True, level0=multi and not isinstance(key, tuple))


def _getitem_rows(data: Any, key: Any) -> RowKey:
    """``obj[key] = v`` on rows: integer slices are positions, other slices labels (pandas 3)."""
    if isinstance(key, slice):
        return _iloc_rows(data, key) if _is_positional_slice(key) else _loc_rows(data, key)
    return _loc_rows(data, key)


class ColKey:
    """Target columns: ``positions`` (None: all; an int for one column), ``new`` labels, the loc key, one or many."""

    __slots__ = ("count", "key", "new", "positions", "scalar")

    def __init__(self, positions: Any, new: list, key: Any, scalar: bool, count: int):
        self.positions, self.new, self.key, self.scalar, self.count = positions, new, key, scalar, count


def _iloc_cols(meta: pd.DataFrame, key: Any) -> ColKey:
    n = meta.shape[1]
    if isinstance(key, slice) and key == slice(None):
        return ColKey(None, [], key, False, n)
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        if not -n <= key < n:
            raise IndexError("iloc cannot enlarge its target object")
        return ColKey(int(key) % n, [], meta.columns[key], True, 1)
    positions = np.arange(n)[key if not is_list_like(key) or isinstance(key, slice) else np.asarray(key)]
    return ColKey([int(p) for p in np.atleast_1d(positions)], [], list(meta.columns[positions]), False,
                  int(np.size(positions)))


def _loc_cols(meta: pd.DataFrame, key: Any) -> ColKey:
    columns = meta.columns
    n = len(columns)
    if isinstance(key, slice):
        if key == slice(None):
            return ColKey(None, [], key, False, n)
        positions = list(range(n))[columns.slice_indexer(key.start, key.stop, key.step)]
        return ColKey(positions, [], key, False, len(positions))
    if is_bool_list(key):
        positions = np.flatnonzero(np.asarray(key, dtype=bool))
        return ColKey([int(p) for p in positions], [], key, False, len(positions))
    many = is_list_like(key) and not isinstance(key, tuple)
    labels = list(key) if many else [key]
    positions: list = []
    new = [lb for lb in dict.fromkeys(labels) if lb not in columns]
    for lb in labels:
        positions.extend(_column_positions(columns, lb) if lb in columns else [n + new.index(lb)])
    if not many and len(positions) == 1:
        return ColKey(positions[0], new, key, True, 1)
    return ColKey(positions, new, key, False, len(positions))


def _column_positions(columns: pd.Index, label: Any) -> list:
    loc = columns.get_loc(label)
    if isinstance(loc, slice):
        return list(range(len(columns)))[loc]
    if isinstance(loc, np.ndarray):
        return [int(p) for p in np.flatnonzero(loc)]
    return [int(loc)]


class Value:
    """How the value reaches the partitions: ``kind`` (see :class:`SetValues`), a literal or an input, and how
    each partition lines it up (``align``, see :func:`line_up`)."""

    __slots__ = ("align", "input", "kind", "literal")

    def __init__(self, kind: str, literal: Any = None, input: Any = None, align: str | None = None):
        self.kind, self.literal, self.input, self.align = kind, literal, input, align


def _by_labels(values: Any, row: RowKey, columns: Any) -> Any:
    """Values along the rows of a label key, as pandas matches them: the i-th to the i-th label."""
    if len(values) != len(row.key):
        raise ValueError("Must have equal len keys and value when setting with an iterable")
    index = pd.MultiIndex.from_tuples(row.key) if row.key and all(isinstance(k, tuple) for k in row.key) \
        else pd.Index(row.key)
    if np.ndim(values) == 2:
        return pd.DataFrame(np.asarray(values), index=index, columns=columns)
    return pd.Series(values, index=index)


def _pandas_input(value: Any) -> Any:
    return as_data(from_pandas(value, chunk_size=max(1, len(value))))


def _lazy_value(data: Any, row: RowKey, one_col: bool, columns: Any, positional: bool) -> Value:
    if isinstance(data, TensorData):
        along = data.ndim == 2 or (data.ndim == 1 and one_col)
        if data.ndim == 0 or row.scalar or not along:
            return Value("whole_in", input=data)
        if row.kind == "labels":
            if not has_unknown(data.shape) and data.shape[0] != len(row.key):
                raise ValueError("Must have equal len keys and value when setting with an iterable")
            lazy = from_tensor(data, index=pd.Index(row.key), columns=columns,
                               kind="series" if data.ndim == 1 else "dataframe")
            return Value("whole_in", input=as_data(lazy), align="index")
        return Value("trows", input=data)
    if data.kind == "index" or positional:  # matched by position, as pandas' iloc matches
        return _lazy_value(as_data(wrap(data).to_tensor()), row, one_col, columns, positional)
    if row.scalar:
        return Value("whole_in", input=data, align="columns" if data.kind == "series" else None)
    return Value("aligned", input=data, align="taken")


def _read_value(value: Any, row: RowKey, one_col: bool, columns: Any, positional: bool) -> Value:
    if isinstance(value, (Tileable, TensorData)) or is_pandas_like(value):
        return _lazy_value(as_data(value), row, one_col, columns, positional)
    if isinstance(value, (pd.Series, pd.DataFrame)):
        if positional:
            value = value.array if isinstance(value, pd.Series) else value.to_numpy()
        elif row.scalar:
            return Value("whole", literal=value, align="columns" if isinstance(value, pd.Series) else None)
        else:
            return Value("whole_in", literal=value, input=_pandas_input(value), align="index")
    if not is_list_like(value) or isinstance(value, (dict, set, frozenset)) or row.scalar:
        return Value("whole", literal=value)
    ndim = np.ndim(value) if not isinstance(value, pd.api.extensions.ExtensionArray) else 1
    if not (ndim == 2 or (ndim == 1 and one_col)):
        return Value("whole", literal=value)
    if row.kind == "labels":
        literal = _by_labels(value, row, columns)
        return Value("whole_in", literal=literal, input=_pandas_input(literal), align="index")
    if ndim == 2:
        return Value("rows", literal=np.asarray(value))
    if isinstance(value, (np.ndarray, pd.Index, pd.api.extensions.ExtensionArray)):
        return Value("rows", literal=value)
    return Value("rows", literal=pd.Series(list(value)).array)


# ----------------------------------------------------------------- the result's metadata
def _first_rows(value: Any, k: int) -> Any:
    if isinstance(value, (pd.Series, pd.DataFrame)):
        return value.iloc[[0] * k]
    return value[np.zeros(k, dtype=np.int64)]


def _sample_of(val: Value, k: int, index: pd.Index, labels: Any) -> Any:
    """A value like ``val`` for a sample of ``k`` rows written whose labels are ``index``, ``None`` for no value."""
    if val.literal is not None and val.kind in ("whole", "whole_in"):
        if val.align != "index":
            return val.literal
        return _first_rows(val.literal, k).set_axis(index, axis=0) if len(val.literal) else None
    if val.kind == "rows":
        return _first_rows(val.literal, k) if len(val.literal) else None
    data = val.input
    if isinstance(data, TensorData):
        if val.kind == "trows":
            return np.zeros((k,) + tuple(data.shape[1:]), dtype=data.dtype)
        return np.zeros(tuple(1 if has_unknown((s,)) else int(s) for s in data.shape), dtype=data.dtype)[()]
    if val.align == "columns":
        many = labels if is_list_like(labels) else [labels]
        return fake(data.meta, len(many)).set_axis(many)
    return fake(data.meta, k).set_axis(index, axis=0)


def result_meta(meta: Any, row: RowKey, col: ColKey | None, val: Value, labels: Any) -> Any:
    """The metadata of the assignment: pandas' own on a two-row sample (its errors, now)."""
    sample = fake(meta).reset_index(drop=True)
    frame = isinstance(sample, pd.DataFrame)
    for label in col.new if col is not None else ():
        sample[label] = pd.Series(np.nan, index=sample.index, dtype=object)
    rows: Any = None if row.kind == "all" else (0 if row.scalar else np.array([0]))
    k = 2 if row.kind == "all" else 1
    value = _sample_of(val, k, sample.index[:k], labels)
    if value is not None:
        align = "index" if val.align == "taken" else val.align
        _write(sample, rows, col.positions if frame else None, line_up(value, sample, rows, align, labels))
    if frame and col.new:
        for i in range(len(meta.columns), sample.shape[1]):
            sample.isetitem(i, sample.iloc[:, i].infer_objects())
    return empty_meta(sample).set_axis(meta.index[:0], axis=0)


# ----------------------------------------------------------------- building it
_ROW_READERS = {"iloc": _iloc_rows, "loc": _loc_rows, "getitem": _getitem_rows}


def set_values(obj: Any, rows: Any, cols: Any, value: Any, by: str) -> Any:
    """``obj`` with ``value`` written at ``[rows, cols]``, keys read as ``by`` reads them (``iloc``, ``loc``, ``getitem``).

    >>> import mars.dataframe as md
    >>> s = md.Series([1, 2, 3], chunk_size=2)
    >>> set_values(s, [0, 2], None, 0, "iloc").to_pandas().tolist()
    [0, 2, 0]
    """
    data = as_data(obj)
    frame = isinstance(data.meta, pd.DataFrame)
    row = _ROW_READERS[by](data, rows)
    col = (_iloc_cols(data.meta, cols) if by == "iloc" else _loc_cols(data.meta, cols)) if frame else None
    one_col = not frame or col.scalar or col.count == 1
    labels = _target_labels(data.meta, col) if frame else None
    positional = by == "iloc" or (by == "getitem" and row.kind in ("slice", "labels"))
    val = _read_value(value, row, one_col, labels, positional)
    grows = row.kind == "labels" and row.scalar and not row.level0
    try:
        meta = result_meta(data.meta, row, col, val, labels)
    except (TypeError, ValueError):
        if not grows:
            raise
        # pandas' error only if the label exists; a new label appends a row, which any value fits
        meta = _enlarged_meta(_with_new_columns(data.meta, col), (row.key[0], col.key if frame else None),
                              _sample_of(val, 1, pd.Index([0]), labels))
    full_ok = by == "getitem" and not frame and row.kind in ("positions", "mask", "tmask")
    op = SetValues(row_kind=row.kind, row_key=row.key, row_scalar=row.scalar, level0=row.level0,
                   cols=col.positions if frame else None, labels=labels, new_cols=list(col.new) if frame else [],
                   col_key=col.key if frame else None, value=val.literal if val.kind in ("whole", "rows") else None,
                   value_kind=val.kind, align=val.align, full_ok=full_ok, dtypes=_dtypes_of(meta))
    inputs = [data] + ([row.input] if row.input is not None else []) + \
        ([val.input] if val.input is not None and val.kind != "whole" else [])
    shape = (np.nan if grows else data.shape[0],) + tuple(meta.shape[1:])
    return op.new_pandas(inputs, meta, shape, partitioning=None if grows else data.partitioning)


def _with_new_columns(meta: Any, col: ColKey | None) -> Any:
    out = meta.copy()
    for label in col.new if col is not None else ():
        out[label] = pd.Series([], dtype=object)
    return out


def _target_labels(meta: pd.DataFrame, col: ColKey) -> Any:
    labels = list(meta.columns) + list(col.new)
    if col.positions is None:
        return labels
    if isinstance(col.positions, int):
        return labels[col.positions]
    return [labels[p] for p in col.positions]


def _rebind(obj: Any, result: Any) -> None:
    """Point the object the user holds at its new value (pandas changes it in place)."""
    obj.data = as_data(result)


def _loc_setitem(self: Loc, key: Any, value: Any) -> None:
    rows, cols = _split_key(self.obj, key)
    _rebind(self.obj, set_values(self.obj, rows, cols, value, "loc"))


def _iloc_setitem(self: ILoc, key: Any, value: Any) -> None:
    rows, cols = _split_key(self.obj, key)
    _rebind(self.obj, set_values(self.obj, rows, cols, value, "iloc"))


def _series_setitem(self: Series, key: Any, value: Any) -> None:
    """``s[key] = value``: labels, boolean masks (lazy or not), integer slices as positions, as in pandas."""
    if callable(key) and not isinstance(key, Tileable):
        key = key(self)
    _rebind(self, set_values(self, key, None, value, "getitem"))


def _is_row_key(key: Any) -> bool:
    if isinstance(key, slice) or is_tensor(key):
        return True
    if isinstance(key, Series) or (isinstance(key, pd.Series) and is_bool_list(key)):
        return True
    return is_list_like(key) and not isinstance(key, (tuple, DataFrame, pd.DataFrame)) and is_bool_list(key)


def _frame_setitem(self: DataFrame, key: Any, value: Any) -> None:
    """``df[key] = value``: rows for a boolean mask or a slice, else columns (a boolean frame: ``mask``)."""
    if callable(key) and not isinstance(key, Tileable):
        key = key(self)
    if _is_row_key(key):
        _rebind(self, set_values(self, key, slice(None), value, "getitem"))
    else:
        _df_setitem(self, key, value)


Loc.__setitem__ = _loc_setitem
ILoc.__setitem__ = _iloc_setitem
Series.__setitem__ = _series_setitem
DataFrame.__setitem__ = _frame_setitem
