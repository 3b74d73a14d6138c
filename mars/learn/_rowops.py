"""Row-block operators shared by the estimators: a function over each row chunk, then a tree merge, or a map.

Learning algorithms make passes over the rows of ``X``: each row chunk gives
a small partial (a Gram matrix, cluster sums, a loss and its gradient) and the
partials are merged in a tree (:func:`row_reduce`), or each row chunk gives
its rows of an output (:func:`row_map`, e.g. labels). The functions are plain
module-level functions of numpy arrays, so they pickle by reference to the
workers of a cluster; their arguments (small arrays such as the current
cluster centres) are parameters of the op and part of its key.

Each function is called as ``fn(start, x, *aligned, *whole, *args)``:
``start`` is the chunk's first row in the whole, ``x`` its rows of ``X`` (all
features), ``aligned`` the same rows of the other row inputs (``y``, sample
weights), ``whole`` the values of whole inputs given to every chunk.

>>> import numpy as np
>>> import mars.tensor as mt
>>> x = mt.tensor(np.arange(12.).reshape(6, 2), chunk_size=4)
>>> row_reduce(_column_sums, x, shape=(2,)).fetch()
array([30., 36.])
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Sequence
from typing import Any

import numpy as np

from ..core.operator import Tiled
from ..core.options import options
from ..tensor.base.reshape import known_sizes, rechunked
from ..tensor.chunks import offsets
from ..tensor.core import Tensor, TensorData, TensorOperator, tensor_data
from ..tensor.datasource.core import astensor

__all__ = ["add_partials", "row_map", "row_map_reduce", "row_reduce"]


def add_partials(*partials: Any) -> Any:
    """The default merge: partials (arrays, or tuples of arrays) summed."""
    first = partials[0]
    if isinstance(first, tuple):
        return tuple(sum(p[i] for p in partials) for i in range(len(first)))
    return sum(partials[1:], first)


def _column_sums(start: int, x: np.ndarray) -> np.ndarray:
    return x.sum(axis=0)


def _rows_tiled(op: TensorOperator, n_aligned: int) -> Generator[Any, Any, tuple]:
    """The op's row inputs cut to the same row chunks (features whole) and its whole inputs in one chunk."""
    x = op.inputs[0]
    rows = op.inputs[: 1 + n_aligned]
    yield from known_sizes(list(op.inputs))
    x = yield from rechunked(x, (x.nsplits[0],) + tuple((int(s),) for s in x.shape[1:]))
    aligned = []
    for a in rows[1:]:
        if a.shape[0] != x.shape[0]:
            raise ValueError(f"inputs have {int(a.shape[0])} and {int(x.shape[0])} rows; they must have the same")
        aligned.append((yield from rechunked(a, (x.nsplits[0],) + tuple((int(s),) for s in a.shape[1:]))))
    whole = []
    for w in op.inputs[1 + n_aligned:]:
        w = yield from rechunked(w, tuple((int(s),) for s in w.shape))
        whole.append(w.chunks[0])
    return x, aligned, whole


class RowChunk(TensorOperator):
    """One row chunk → its partial (any value), ``fn(start, x, *aligned, *whole, *args)``."""

    params = ("fn", "args", "start")
    blas = True

    def execute(self, *inputs: Any) -> Any:
        return self.fn(self.start, *inputs, *self.args)


class RowMerge(TensorOperator):
    """Several partials → one, ``combine(*partials)``; the last stage also applies ``finish``."""

    params = ("combine", "finish")

    def execute(self, *partials: Any) -> Any:
        merged = self.combine(*partials) if len(partials) > 1 else partials[0]
        return merged if self.finish is None else np.asarray(self.finish(merged))


class RowReduce(TensorOperator):
    params = ("fn", "args", "n_aligned", "combine", "finish")

    @classmethod
    def tile(cls, op: RowReduce) -> Generator[Any, Any, Tiled]:
        out = op.outputs[0]
        x, aligned, whole = yield from _rows_tiled(op, op.n_aligned)
        starts = offsets(x.nsplits[0])
        zero = (0,) * out.ndim
        meta = {"index": zero, "shape": out.shape, "dtype": out.dtype, "order": "C"}
        parts = [RowChunk(fn=op.fn, args=op.args, start=int(starts[i]))
                 .new_chunk([c, *(a.chunks[i] for a in aligned), *whole], **meta)
                 for i, c in enumerate(x.chunks)]
        return _merged(parts, op.combine, op.finish, meta)


def _merged(parts: list, combine: Callable, finish: Callable | None, meta: dict) -> Tiled:
    """Partials merged in a tree of ``combine`` (``options.combine_size`` at a time), ``finish`` last."""
    size = options.combine_size
    while len(parts) > size:
        parts = [RowMerge(combine=combine, finish=None).new_chunk(parts[i:i + size], **meta)
                 for i in range(0, len(parts), size)]
    final = RowMerge(combine=combine, finish=finish).new_chunk(parts, **meta)
    return Tiled([final], tuple((s,) for s in meta["shape"]))


class RowMap(TensorOperator):
    """Each row chunk → its rows of the outputs (one array per output; a tuple when several)."""

    params = ("fn", "args", "n_aligned", "tails", "dtypes")

    @classmethod
    def tile(cls, op: RowMap) -> Generator[Any, Any, list[Tiled]]:
        x, aligned, whole = yield from _rows_tiled(op, op.n_aligned)
        starts = offsets(x.nsplits[0])
        per_out: list[list] = [[] for _ in op.tails]  # an output may be dead (weakly held): count by params
        for i, c in enumerate(x.chunks):
            kws = [{"index": (i,) + (0,) * len(tail), "shape": (c.shape[0], *tail), "dtype": dt, "order": "C"}
                   for dt, tail in zip(op.dtypes, op.tails)]
            chunk_op = RowChunk(fn=op.fn, args=op.args, start=int(starts[i]))
            for lst, chunk in zip(per_out, chunk_op.new_chunks([c, *(a.chunks[i] for a in aligned), *whole], kws)):
                lst.append(chunk)
        tiled = [Tiled(chunks, (x.nsplits[0], *((s,) for s in tail))) for chunks, tail in zip(per_out, op.tails)]
        # an op unpickled on a cluster lists only its outputs up to the last one still held
        return tiled[:len(op.outputs)]


class RowMapReduce(TensorOperator):
    """Each row chunk → ``(partial, its rows of each row output)``; the partials merged as by RowReduce."""

    params = ("fn", "args", "n_aligned", "tails", "dtypes", "combine", "finish")

    @classmethod
    def tile(cls, op: RowMapReduce) -> Generator[Any, Any, list[Tiled]]:
        x, aligned, whole = yield from _rows_tiled(op, op.n_aligned)
        out = op.outputs[0]
        meta = {"index": (0,) * out.ndim, "shape": out.shape, "dtype": out.dtype, "order": "C"}
        starts = offsets(x.nsplits[0])
        parts: list = []
        per_out: list[list] = [[] for _ in op.tails]
        for i, c in enumerate(x.chunks):
            kws = [meta] + [{"index": (i,) + (0,) * len(tail), "shape": (c.shape[0], *tail), "dtype": dt,
                             "order": "C"} for dt, tail in zip(op.dtypes, op.tails)]
            made = RowChunk(fn=op.fn, args=op.args, start=int(starts[i])).new_chunks(
                [c, *(a.chunks[i] for a in aligned), *whole], kws)
            parts.append(made[0])
            for lst, chunk in zip(per_out, made[1:]):
                lst.append(chunk)
        rows = [Tiled(chunks, (x.nsplits[0], *((s,) for s in tail))) for chunks, tail in zip(per_out, op.tails)]
        # as RowMap: an op unpickled on a cluster lists its outputs up to the last one still held
        return [_merged(parts, op.combine, op.finish, meta), *rows][:len(op.outputs)]


def _datas(values: Sequence[Any]) -> list[TensorData]:
    return [tensor_data(astensor(v)) for v in values]


def row_reduce(fn: Callable, x: Any, *, shape: tuple, dtype: Any = np.float64, aligned: Sequence[Any] = (),
               whole: Sequence[Any] = (), args: tuple = (), combine: Callable = add_partials,
               finish: Callable | None = None) -> Tensor:
    """A lazy tensor of ``shape``: ``fn`` on each row chunk, partials merged by ``combine``, then ``finish``.

    ``shape`` may hold NaN (a result whose size depends on the data).

    >>> import mars.tensor as mt
    >>> row_reduce(_column_sums, mt.ones((5, 3), chunk_size=2), shape=(3,)).fetch()
    array([5., 5., 5.])
    """
    inputs = _datas([x, *aligned, *whole])
    op = RowReduce(fn=fn, args=tuple(args), n_aligned=len(aligned), combine=combine, finish=finish)
    return op.new_tensor(inputs, tuple(shape), np.dtype(dtype))


def row_map(fn: Callable, x: Any, *, outs: Sequence[tuple[tuple, Any]], aligned: Sequence[Any] = (),
            whole: Sequence[Any] = (), args: tuple = ()) -> list[Tensor]:
    """Lazy tensors of ``x``'s rows: ``fn`` on each row chunk returns its rows of each output.

    ``outs`` lists each output's ``(shape after the rows, dtype)``.

    >>> import mars.tensor as mt
    >>> row_map(_row_sums, mt.ones((5, 3), chunk_size=2), outs=[((), float)])[0].fetch()
    array([3., 3., 3., 3., 3.])
    """
    inputs = _datas([x, *aligned, *whole])
    n = inputs[0].shape[0]
    tails = tuple(tuple(t) for t, _ in outs)
    dtypes = tuple(np.dtype(dt) for _, dt in outs)
    op = RowMap(fn=fn, args=tuple(args), n_aligned=len(aligned), tails=tails, dtypes=dtypes)
    kws = [{"shape": (n, *tail), "dtype": dt} for tail, dt in zip(tails, dtypes)]
    return op.new_tensors(inputs, kws)


def row_map_reduce(fn: Callable, x: Any, *, shape: tuple, outs: Sequence[tuple[tuple, Any]], dtype: Any = np.float64,
                   aligned: Sequence[Any] = (), whole: Sequence[Any] = (), args: tuple = (),
                   combine: Callable = add_partials, finish: Callable | None = None) -> list[Tensor]:
    """:func:`row_reduce` and :func:`row_map` in one pass: ``fn`` returns ``(partial, *rows of each output)``.

    Gives ``[reduced tensor of shape, *row outputs]``.

    >>> import mars.tensor as mt
    >>> total, doubled = row_map_reduce(_sums_and_doubles, mt.ones((5, 3), chunk_size=2), shape=(3,),
    ...                                 outs=[((3,), float)])
    >>> total.fetch(), doubled.fetch()[0]
    (array([5., 5., 5.]), array([2., 2., 2.]))
    """
    inputs = _datas([x, *aligned, *whole])
    n = inputs[0].shape[0]
    tails = tuple(tuple(t) for t, _ in outs)
    dtypes = tuple(np.dtype(dt) for _, dt in outs)
    op = RowMapReduce(fn=fn, args=tuple(args), n_aligned=len(aligned), tails=tails, dtypes=dtypes,
                      combine=combine, finish=finish)
    kws = [{"shape": tuple(shape), "dtype": np.dtype(dtype)}]
    kws += [{"shape": (n, *tail), "dtype": dt} for tail, dt in zip(tails, dtypes)]
    return op.new_tensors(inputs, kws)


def _sums_and_doubles(start: int, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return x.sum(axis=0), 2 * x


def _row_sums(start: int, x: np.ndarray) -> np.ndarray:
    return x.sum(axis=1)


def row_blocks(n: int, size: int = 8192) -> range:
    """Starts of cache-sized blocks of ``n`` rows (chunk functions loop over them)."""
    return range(0, n, size) if n else range(0)


def nan_rows(t: Any) -> bool:
    """Whether ``t``'s number of rows is unknown."""
    return math.isnan(t.shape[0])
