"""Partition-wise operations: one pandas call per row partition.

``map_partitions(func, *args, **kwargs)`` is the workhorse behind most
methods (arithmetic, ``fillna``, ``astype``, ``str.upper``, a user's
``map_partitions``). ``func`` is a callable, or the name of a method of the
first argument. Lazy DataFrames/Series/Indexes among the arguments are
*row-aligned*: partition ``i`` of each is passed to call ``i``. Ones wrapped
in :class:`Whole` are passed whole to every call (``df - df.mean()``), as are
0-d tensors (a scalar computed lazily).

Row-aligned inputs with the same ``partitioning`` token are combined chunk by
chunk; others are first aligned on their index (see :mod:`mars.dataframe.align`).
The result's metadata is ``func`` applied to the inputs' metas.
"""

from __future__ import annotations

from typing import Any, Callable, Generator

import numpy as np
import pandas as pd

from ..core.entity import Tileable, TileableData
from ..core.operator import Tiled
from ..tensor.core import TensorData
from .core import PandasData, PandasOperator, chunk_index_of, chunk_shape_of, nsplits_of, row_splits
from .meta import check_declared, infer
from .metakey import cached_meta, meta_key


class Whole:
    """Marks an argument of :func:`map_partitions` that every partition gets whole."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


class Slot:
    """Placeholder in a map op's arguments for its ``i``-th input chunk's value."""

    __slots__ = ("i",)

    def __init__(self, i: int):
        self.i = i

    def __reduce__(self) -> tuple:
        return Slot, (self.i,)

    def __mars_tokenize__(self) -> str:
        return f"<slot {self.i}>"

    def __mars_meta_key__(self) -> int:
        return self.i

    def __repr__(self) -> str:
        return f"Slot({self.i})"


def keeps_columns(kept: Callable[[tuple, dict, Any], tuple[Any, Any] | None]) -> Callable[[Callable], Callable]:
    """Mark a partition function whose output's columns are (some of) its argument's: ``kept(args, kwargs,
    column)`` gives ``(argument, label)`` where the output's ``column`` takes its values from, or None.

    The session then knows bounds of a column it holds the ranges of through
    such calls (a filter keeps each column's values, an assignment the others'):
    see :func:`mars.dataframe.held.held_bound`.
    """
    def mark(func: Callable) -> Callable:
        func.__mars_kept_column__ = kept  # type: ignore[attr-defined]
        return func
    return mark


def _fill(value: Any, inputs: tuple) -> Any:
    if isinstance(value, Slot):
        return inputs[value.i]
    if type(value) is tuple:
        return tuple(_fill(v, inputs) for v in value)
    if type(value) is list:
        return [_fill(v, inputs) for v in value]
    if type(value) is dict:
        return {k: _fill(v, inputs) for k, v in value.items()}
    return value


def call(func: Any, args: tuple, kwargs: dict) -> Any:
    if isinstance(func, str):
        return getattr(args[0], func)(*args[1:], **kwargs)
    return func(*args, **kwargs)


class MapPartitions(PandasOperator):
    """``func(*args, **kwargs)`` per partition; ``roles[i]`` is ``"rows"`` or ``"whole"`` for input ``i``.

    ``declared``, when set, is ``(meta, what, source)``: the output a user declared, which each partition's
    output is held to (see :func:`~.meta.check_declared`).
    """

    params = ("func", "args", "kwargs", "roles", "same_rows", "how", "declared")
    fusible = True

    @classmethod
    def tile(cls, op: MapPartitions) -> Generator[Any, Any, Tiled | list[Tiled]]:
        rows_in = [i for i, r in enumerate(op.roles) if r == "rows"]
        aligned = yield from align_row_inputs([op.inputs[i] for i in rows_in], op.how or "outer")
        if any(a[2] is not None for a in aligned):
            _refresh_metas(op, rows_in, [a[2] for a in aligned])
        wholes = {i: whole_chunk(op.inputs[i]) for i, r in enumerate(op.roles) if r == "whole"}
        splits = aligned[0][1]
        outs = [o for o in op.outputs]
        results: list[list] = [[] for _ in outs]
        for p in range(len(splits)):
            inputs = []
            for i, role in enumerate(op.roles):
                inputs.append(aligned[rows_in.index(i)][0][p] if role == "rows" else wholes[i])
            kws = [dict(index=chunk_index_of(o.meta, p), shape=chunk_shape_of(o.meta, splits[p] if op.same_rows else np.nan),
                        meta=o.meta) for o in outs]
            for r, c in zip(results, op.copy().new_chunks(inputs, kws)):
                r.append(c)
        rows = splits if op.same_rows else (np.nan,) * len(splits)
        tiled = [Tiled(r, nsplits_of(o.meta, rows)) for r, o in zip(results, outs)]
        return tiled[0] if len(tiled) == 1 else tiled

    def kept_column(self, column: Any) -> tuple[int, Any] | None:
        """``(i, label)`` when each partition's ``column`` holds values of input ``i``'s column ``label`` from
        some of its rows (``func`` says which: :func:`keeps_columns`); None when it may hold others."""
        kept = getattr(self.func, "__mars_kept_column__", None)
        found = kept(self.args, self.kwargs, column) if kept is not None else None
        if found is None or not isinstance(found[0], Slot) or self.roles[found[0].i] != "rows":
            return None
        return found[0].i, found[1]

    def execute(self, *inputs: Any) -> Any:
        inputs = tuple(v[()] if isinstance(v, np.ndarray) and v.ndim == 0 else v for v in inputs)
        result = call(self.func, _fill(self.args, inputs), _fill(self.kwargs, inputs))
        return result if self.declared is None else check_declared(result, *self.declared)


def whole_chunk(data: Any) -> Any:
    if isinstance(data, TensorData):
        return data.chunks[0]
    from .rows import single_chunk

    return single_chunk(data)


def align_row_inputs(datas: list, how: str = "outer") -> Generator[Any, Any, list[tuple[list, tuple, Any]]]:
    """Per row-aligned input: its chunks, row splits and meta (None: unchanged), all cut the same way."""
    if all(d.partitioning == datas[0].partitioning for d in datas):
        return [(list(d.chunks), row_splits(d), None) for d in datas]
    from .align import align_chunks

    return (yield from align_chunks(datas, how))


def _refresh_metas(op: MapPartitions, rows_in: list, metas: list) -> None:
    """Alignment can change dtypes (missing rows make ints float): the outputs' metas follow."""
    inputs = [_meta_of(d) for d in op.inputs]
    for i, m in zip(rows_in, metas):
        if m is not None:
            inputs[i] = m
    meta = infer(lambda *a, **k: call(op.func, a, k), *_fill(op.args, tuple(inputs)), **_fill(op.kwargs, tuple(inputs)))
    for o in op.outputs:
        if o is not None:
            o.meta = meta


def _collect(value: Any, inputs: list, roles: list) -> Any:
    """``value`` with lazy objects replaced by slots (their data appended to ``inputs``)."""
    whole = isinstance(value, Whole)
    if whole:
        value = value.value
    if isinstance(value, (Tileable, TileableData)):
        data = value.data if isinstance(value, Tileable) else value
        if isinstance(data, TensorData):
            if data.ndim != 0:
                raise TypeError(f"a {data.ndim}-d tensor cannot be an argument here; make it a Series or DataFrame first")
            role = "whole"
        else:
            role = "whole" if whole else "rows"
        for i, existing in enumerate(inputs):
            if existing is data and roles[i] == role:
                return Slot(i)
        inputs.append(data)
        roles.append(role)
        return Slot(len(inputs) - 1)
    if type(value) is tuple:
        return tuple(_collect(v, inputs, roles) for v in value)
    if type(value) is list:
        return [_collect(v, inputs, roles) for v in value]
    if type(value) is dict:
        return {k: _collect(v, inputs, roles) for k, v in value.items()}
    return value


def _meta_of(data: Any) -> Any:
    if isinstance(data, TensorData):
        return np.empty((), dtype=data.dtype)[()] if data.dtype != object else None
    return data.meta


def map_partitions(func: Callable | str, *args: Any, meta: Any = None, same_rows: bool = True,
                   sample: bool = False, how: str = "outer", declared: tuple[str, str] | None = None,
                   **kwargs: Any) -> Any:
    """``func`` applied to each row partition; returns a lazy DataFrame, Series or Index.

    ``meta`` (an empty pandas object) gives the output's metadata; without it
    ``func`` is run on the inputs' metas (on a small fake sample when
    ``sample=True`` or when empty input fails). ``same_rows`` says the output
    partitions hold the same rows as the input partitions (elementwise work).
    ``how`` is the join of row-aligned inputs' indexes when they are
    partitioned differently: ``"outer"`` (arithmetic) or ``"left"`` (the first
    input's rows, as assignment does). ``declared`` (``(what, source)``: the
    call and ``"meta"`` or ``"dtypes"``, named in errors) says that ``meta``
    is a user's declaration, which each partition's output is checked against.
    """
    inputs: list = []
    roles: list = []
    slot_args = _collect(tuple(args), inputs, roles)
    slot_kwargs = _collect(dict(kwargs), inputs, roles)
    if "rows" not in roles:
        raise TypeError("map_partitions needs at least one lazy DataFrame, Series or Index argument")
    if meta is None:
        meta = _inferred(func, inputs, slot_args, slot_kwargs, sample)
    if not isinstance(meta, (pd.DataFrame, pd.Series, pd.Index)):
        raise TypeError(f"{_name(func)} does not give a pandas object per partition (got {type(meta).__name__}); "
                        "pass meta= or use a reduction")
    first = inputs[roles.index("rows")]
    check = None if declared is None else (meta, *declared)
    op = MapPartitions(func=func, args=slot_args, kwargs=slot_kwargs, roles=tuple(roles), same_rows=same_rows, how=how,
                       declared=check)
    rows_inputs = [d for d, r in zip(inputs, roles) if r == "rows"]
    same = all(d.partitioning == first.partitioning for d in rows_inputs)
    rows = first.shape[0] if same_rows and (same or how == "left") else np.nan
    shape = (rows, meta.shape[1]) if meta.ndim == 2 else (rows,)
    partitioning = first.partitioning if same_rows and (same or how == "left") else None
    return op.new_pandas(inputs, meta, shape, partitioning=partitioning)


def _inferred(func: Callable | str, inputs: list, slot_args: tuple, slot_kwargs: dict, sample: bool) -> Any:
    """The output's meta: ``func`` run on the inputs' metas (once per expression shape, see :mod:`.metakey`)."""
    metas = tuple(_meta_of(d) for d in inputs)
    described = tuple(("tensor", d.dtype) if isinstance(d, TensorData) else m for d, m in zip(inputs, metas))
    key = meta_key("map_partitions", described, func, slot_args, slot_kwargs, sample)
    return cached_meta(key, lambda: infer(lambda *a, **k: call(func, a, k), *_fill(slot_args, metas), sample=sample,
                                          **_fill(slot_kwargs, metas)))


def _name(func: Any) -> str:
    return func if isinstance(func, str) else getattr(func, "__name__", repr(func))


def method(name: str, *args: Any, **kwargs: Any) -> Any:
    """Partition-wise pandas method ``name`` on ``args[0]`` (rows kept): ``method("fillna", df, 0)``."""
    return map_partitions(name, *args, **kwargs)


def is_pandas_data(x: Any) -> bool:
    return isinstance(x, PandasData)
