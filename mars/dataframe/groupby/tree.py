"""Tree aggregation: per-partition partials, combined in a tree, finished once.

A partial of a partition is a frame indexed by its groups' keys (in order of
first appearance) with one column per partial (see :mod:`.plan`), column
``i`` being ``partials[i]``. Combining concatenates partials in partition
order and groups them by their index with ``sort=False``, so groups stay in
order of first appearance across the whole frame (pandas' ``sort=False``
order); the last combine sorts them when ``sort=True``. Finishing turns
partials into the outputs: a mean is sum / count, a variance is the merged
sum of squared deviations over count - ddof.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from ..core import PandasOperator
from ..custom_reduction import CustomReduction, as_tuple
from .keys import GroupSpec, combined_codes, row_keys
from .plan import Out

#: how partials of each kind merge
_MERGE = {"sum": "sum", "count": "sum", "size": "sum", "prod": "prod",
          "min": "min", "max": "max", "first": "first", "last": "last"}


def chunk_partials(g: Any, partials: Sequence[tuple[str, Any]]) -> pd.DataFrame:
    """One partition's partials from its (unselected, ``as_index=True``) groupby ``g``."""
    by_kind: dict[str, list[int]] = {}
    for pos, (kind, _) in enumerate(partials):
        by_kind.setdefault(kind, []).append(pos)
    series = dict.fromkeys(range(len(partials)))
    index = None
    for kind, positions in by_kind.items():
        if kind == "size":
            s = g.size()
            series[positions[0]], index = s.array, s.index
            continue
        if isinstance(kind, CustomReduction):
            for p in positions:
                s = _selected_column(g, partials[p][1]).agg(partial(_custom_chunk, kind))
                series[p], index = s.array, s.index
            continue
        if kind == "count":
            positions, index = _counts_as_sizes(g, partials, positions, series, index)
            if not positions:
                continue
        columns = [partials[p][1] for p in positions]
        method = "var" if kind == "m2" else kind
        kw = {"ddof": 0} if kind == "m2" else {}
        if isinstance(g, pd.api.typing.SeriesGroupBy):
            res = getattr(g, method)(**kw).to_frame()
        else:
            res = getattr(g[columns], method)(**kw)
        index = res.index
        for j, p in enumerate(positions):
            series[p] = res.iloc[:, j].array
    out = pd.DataFrame(series, index=index, copy=False)
    return _with_m2(out, partials)


def _counts_as_sizes(g: Any, partials: Sequence[tuple[str, Any]], positions: list[int], series: dict,
                     index: Any) -> tuple[list[int], Any]:
    """Fill in the counts of columns without missing values as the groups' sizes (a column's count
    walks its values for each group; a size is one pass over the group ids, shared); returns the
    positions left to count, and the partials' index."""
    full = [p for p in positions if not _selected_column(g, partials[p][1]).obj.hasnans]
    if full:
        sizes = g.size()
        for p in full:
            series[p] = sizes.array
        index = sizes.index
    return [p for p in positions if p not in full], index


class Stages:
    """A :class:`CustomReduction`'s values for one group (a tuple), as one cell of a partials frame."""

    __slots__ = ("values",)

    def __init__(self, values: tuple):
        self.values = values


def _selected_column(g: Any, column: Any) -> Any:
    return g if isinstance(g, pd.api.typing.SeriesGroupBy) else g[column]


def _custom_chunk(func: CustomReduction, values: pd.Series) -> Stages:
    return Stages(as_tuple(func.agg(*as_tuple(func.pre(values)))))


def _custom_merge(func: CustomReduction, cells: pd.Series) -> Stages:
    columns = zip(*(c.values for c in cells))
    return Stages(as_tuple(func.agg(*(pd.Series(list(v)) for v in columns))))


def _custom_finish(func: CustomReduction, cells: pd.Series) -> Any:
    values = [func.post(*c.values) for c in cells]
    return pd.Series(values, dtype=None if values else object).array  # dtypes inferred, as pandas' agg of a function


def _with_m2(frame: pd.DataFrame, partials: Sequence[tuple[str, Any]]) -> pd.DataFrame:
    """Turn the ``m2`` columns (variances with ddof=0 so far) into sums of squared deviations."""
    where = {p: i for i, p in enumerate(partials)}
    for i, (kind, column) in enumerate(partials):
        if kind == "m2":
            n = frame[where[("count", column)]].to_numpy(np.float64)
            var = np.nan_to_num(frame[i].to_numpy(np.float64))
            frame[i] = var * n
            mean = where[("mean", column)]
            frame[mean] = np.nan_to_num(frame[mean].to_numpy(np.float64))
    return frame


def merge_partials(frames: Sequence[pd.DataFrame], partials: Sequence[tuple[str, Any]],
                   sort: bool = False, observed: bool = True) -> pd.DataFrame:
    """Partials of several partitions (in partition order) as one; ``sort`` sorts the groups."""
    kept = [f for f in frames if len(f)] or list(frames[:1])
    whole = pd.concat(kept) if len(kept) > 1 else kept[0]
    levels = list(range(whole.index.nlevels)) if whole.index.nlevels > 1 else 0
    g = whole.groupby(level=levels, sort=sort, dropna=False, observed=observed)
    by_kind: dict[str, list[int]] = {}
    series: dict[int, Any] = {}
    index = None
    for pos, (kind, _) in enumerate(partials):
        if isinstance(kind, CustomReduction):
            res = g[pos].agg(partial(_custom_merge, kind))
            series[pos], index = res.array, res.index
        elif kind not in ("mean", "m2"):
            by_kind.setdefault(_MERGE[kind], []).append(pos)
    for method, positions in by_kind.items():
        res = getattr(g[positions], method)()
        index = res.index
        for p in positions:
            series[p] = res[p].array
    out = pd.DataFrame(series, index=index, copy=False)
    _merge_moments(whole, g, out, partials)
    return out[list(range(len(partials)))]


def _merge_moments(whole: pd.DataFrame, g: Any, out: pd.DataFrame, partials: Sequence[tuple[str, Any]]) -> None:
    """Merge (count, mean, m2) triples: M2 = sum(m2_i) + sum(n_i * (mean_i - mean)^2)."""
    where = {p: i for i, p in enumerate(partials)}
    codes = None
    for i, (kind, column) in enumerate(partials):
        if kind != "m2":
            continue
        if codes is None:
            codes = g.ngroup().to_numpy()
        ng = len(out)
        n = whole[where[("count", column)]].to_numpy(np.float64)
        mu = whole[where[("mean", column)]].to_numpy(np.float64)
        total = np.bincount(codes, weights=n, minlength=ng)
        mean = np.divide(np.bincount(codes, weights=n * mu, minlength=ng), total,
                         out=np.zeros(ng), where=total > 0)
        delta = mu - mean[codes]
        out[where[("mean", column)]] = mean
        out[i] = np.bincount(codes, weights=whole[i].to_numpy(np.float64) + n * delta * delta, minlength=ng)


def finish(frame: pd.DataFrame, outs: Sequence[Out], partials: Sequence[tuple[str, Any]], meta: Any) -> Any:
    """The result (``as_index=True`` layout of ``meta``) from merged partials."""
    where = {p: i for i, p in enumerate(partials)}
    values = [_output(frame, o, where) for o in outs]
    if isinstance(meta, pd.Series):
        return pd.Series(values[0], index=frame.index, name=meta.name, copy=False)
    out = pd.DataFrame(dict(enumerate(values)), index=frame.index, copy=False)
    out.columns = meta.columns
    return out


def _output(frame: pd.DataFrame, out: Out, where: dict) -> Any:
    f, c = out.func, out.column
    if isinstance(f, CustomReduction):
        return _custom_finish(f, frame[where[(f, c)]])
    if f == "size":
        return frame[where[("size", None)]].array
    if f == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):
            return frame[where[("sum", c)]].to_numpy(np.float64) / frame[where[("count", c)]].to_numpy(np.float64)
    if f in ("var", "std", "sem"):
        return _moment(frame, out, where)
    value = frame[where[(f, c)]]
    if f in ("sum", "prod") and out.min_count > 0:
        value = value.where(frame[where[("count", c)]] >= out.min_count)
    return value.array


def _moment(frame: pd.DataFrame, out: Out, where: dict) -> np.ndarray:
    c = out.column
    n = frame[where[("count", c)]].to_numpy(np.float64)
    m2 = frame[where[("m2", c)]].to_numpy(np.float64)
    dof = n - out.ddof
    var = np.divide(m2, dof, out=np.full(len(n), np.nan), where=dof > 0)
    if out.func == "var":
        return var
    std = np.sqrt(var)
    if out.func == "std":
        return std
    with np.errstate(invalid="ignore", divide="ignore"):
        return std / np.sqrt(n)


class GroupPartial(PandasOperator):
    """A partition's partials: inputs are the partition and its keys' partitions.

    ``block_rows`` (set when groups are few) lets sums, counts and sizes over
    one integer key be computed by numpy, block by block (:func:`numpy_partials`).
    ``dense`` (``(low, span)``, set when every key lies in a narrow known
    range and groups come out sorted) computes them with no hashing at all
    (:func:`dense_partials`); its groups come in key order.
    """

    params = ("spec", "partials", "block_rows", "dense")
    #: a partition made from held data is made in the partials' own subtask (see mars.core.fusion)
    fuses_inputs = True

    def execute(self, part: Any, *keys: Any) -> pd.DataFrame:
        if self.dense is not None:
            fast = dense_partials(part, self.spec, self.partials, *self.dense)
            if fast is not None:
                return fast
        if self.block_rows:
            fast = numpy_partials(part, keys, self.spec, self.partials, self.block_rows)
            if fast is not None:
                return fast
        g = self.spec.groupby(part, keys, select=False, sort=False, as_index=True)
        return chunk_partials(_selected(g, self.spec), self.partials)


def numpy_partials(part: Any, keys: Sequence[Any], spec: GroupSpec, partials: Sequence[tuple[str, Any]],
                   block: int) -> pd.DataFrame | None:
    """Float sums, counts and sizes over keys of integers, strings or objects, or None for anything else.

    Several keys, or strings, are coded as one integer per row first
    (:func:`.keys.combined_codes`: TPC-H Q1's two flags, grouped by pandas,
    cost 4 times its sums). Keys are factorized ``block`` rows at a time and
    summed with ``bincount``:
    pandas sizes its hash table by the rows it groups (35 bytes a row), so a
    partition's partials take a fraction of the memory, as fast, and the
    threads hold the GIL less.
    """
    columns = row_keys(spec, part, keys) if all(k in ("sum", "count", "size") for k, _ in partials) else None
    if not columns or len(part) == 0:
        return None
    values = [None if kind == "size" else _values_of(part, spec, column) for kind, column in partials]
    if not _summable(partials, values):
        return None
    coded = _coded_keys(columns, spec.dropna)
    if coded is None:
        return None
    key_values, index_of, rows, span = coded
    if rows is not None:  # rows with a missing key are in no group
        if not len(rows):
            return None
        values = [None if v is None else v[rows] for v in values]
    if span is not None and spec.sort and span <= block:
        # the tree sorts the groups at its root: codes index the partials directly, in code order
        present, totals = _dense_totals(key_values.astype(np.intp, copy=False), span, partials, values)
        return pd.DataFrame(dict(enumerate(totals)), index=index_of(present), copy=False)
    kinds = [kind for kind, _ in partials]
    blocks = [_block_partials(key_values[a:a + block], kinds, [None if v is None else v[a:a + block] for v in values])
              for a in range(0, len(key_values), block)]
    uniq = blocks[0][0] if len(blocks) == 1 else pd.unique(np.concatenate([b[0] for b in blocks]))
    coded_index = pd.Index(uniq) if len(blocks) > 1 else None
    totals = [np.zeros(len(uniq), dtype=np.float64 if kind == "sum" else np.int64) for kind in kinds]
    for block_uniq, sums in blocks:
        at = coded_index.get_indexer(block_uniq) if coded_index is not None else slice(None)
        for total, block_sum in zip(totals, sums):
            total[at] += block_sum
    return pd.DataFrame(dict(enumerate(totals)), index=index_of(uniq), copy=False)


def _coded_keys(columns: Sequence[Any], dropna: bool) -> tuple[np.ndarray, Any, np.ndarray | None, int | None] | None:
    """The rows' keys as integers, how to turn them into the group index, the rows in a group (None: all)
    and, for codes made here, their span; None when pandas must group them (see :func:`.keys.combined_codes`)."""
    key = columns[0]
    if len(columns) == 1 and isinstance(key.dtype, np.dtype) and key.dtype.kind in "iub":
        name = key.name if isinstance(key, (pd.Series, pd.Index)) else None
        return np.asarray(key), lambda uniq: pd.Index(uniq, name=name), None, None
    coded = combined_codes(columns)
    if coded is None:
        return None
    codes, index_of, span = coded
    if len(codes) and codes.min() < 0:
        if not dropna:
            return None  # a group of missing keys: pandas' to make
        rows = np.flatnonzero(codes >= 0)
        return codes[rows], index_of, rows, span
    return codes, index_of, None, span


def _summable(partials: Sequence[tuple[str, Any]], values: list) -> bool:
    """Whether numpy sums these columns as pandas does: float64 sums, counts of numbers."""
    return all(v is None or (v.dtype == np.float64 if kind == "sum" else v.dtype.kind in "fiub")
               for (kind, _), v in zip(partials, values))


def dense_partials(part: Any, spec: GroupSpec, partials: Sequence[tuple[str, Any]], low: int,
                   span: int) -> pd.DataFrame | None:
    """Float sums, counts and sizes over one integer column ``spec.by`` whose values all lie in
    ``[low, low + span)``, groups in key order; None for anything else.

    A row's group is its key less ``low``: one ``bincount`` per partial and
    no hash table (pandas' factorize of the keys costs more than the sums).

    >>> part = pd.DataFrame({"k": [12, 10, 12], "x": [1.0, 2.0, np.nan]})
    >>> dense_partials(part, GroupSpec(by="k"), [("sum", "x"), ("count", "x")], 10, 3).to_dict("index")
    {10: {0: 2.0, 1: 1}, 12: {0: 1.0, 1: 1}}
    """
    if not isinstance(part, pd.DataFrame) or not all(k in ("sum", "count", "size") for k, _ in partials):
        return None
    column = part[spec.by] if spec.by in part.columns else None
    if not isinstance(column, pd.Series) or not isinstance(column.dtype, np.dtype) or column.dtype.kind not in "iu":
        return None
    values = [None if kind == "size" else _values_of(part, spec, c) for kind, c in partials]
    if not _summable(partials, values):
        return None
    keys = column.to_numpy()
    codes = keys.astype(np.int64, copy=False) - np.int64(low)
    if len(codes) and (codes.min() < 0 or codes.max() >= span):
        return None  # not the range the tiling was told of
    present, totals = _dense_totals(codes.astype(np.intp, copy=False), span, partials, values)
    index = pd.Index((present + low).astype(column.dtype), name=column.name)
    return pd.DataFrame(dict(enumerate(totals)), index=index, copy=False)


def _dense_totals(codes: np.ndarray, span: int, partials: Sequence[tuple[str, Any]],
                  values: list) -> tuple[np.ndarray, list]:
    """The groups present among ``codes`` (in ``[0, span)``), in code order, and each partial of each."""
    sizes = np.bincount(codes, minlength=span)
    present = np.flatnonzero(sizes)
    totals = []
    for (kind, _), v in zip(partials, values):
        valid = ~np.isnan(v) if v is not None and v.dtype.kind == "f" else None
        if valid is not None and valid.all():
            valid = None
        if kind == "sum":
            total = np.bincount(codes, v if valid is None else np.where(valid, v, 0.0), span)
        elif kind == "size" or valid is None:
            total = sizes
        else:
            total = np.bincount(codes[valid], minlength=span)
        totals.append(total[present])
    return present, totals


def _values_of(part: Any, spec: GroupSpec, column: Any) -> np.ndarray:
    if column is None:
        selected = part[spec.selection[0]] if spec.selection and isinstance(part, pd.DataFrame) else part
    else:
        selected = part[column]
    return selected.to_numpy() if isinstance(selected, pd.Series) and isinstance(selected.dtype, np.dtype) \
        else np.empty(0, dtype=object)


def _block_partials(keys: np.ndarray, kinds: list, values: list) -> tuple[np.ndarray, list]:
    """One block's distinct keys (in order of appearance) and its partials, per group."""
    codes, uniq = pd.factorize(keys)
    m = len(uniq)
    sums = []
    for kind, v in zip(kinds, values):
        valid = ~np.isnan(v) if v is not None and v.dtype.kind == "f" else None
        if kind == "sum":
            sums.append(np.bincount(codes, v if valid is None or valid.all() else np.where(valid, v, 0.0), m))
        else:
            sums.append(np.bincount(codes if valid is None else codes[valid], minlength=m))
    return uniq, sums


def _selected(g: Any, spec: GroupSpec) -> Any:
    # a Series selection (g["x"]) aggregates that Series; the partials name its column None
    if spec.selection and not isinstance(spec.selection[0], list):
        return g[spec.selection[0]]
    return g


class MergePartials(PandasOperator):
    """Partials of several partitions merged into one (an inner node of the tree)."""

    params = ("partials", "observed")

    def execute(self, *frames: pd.DataFrame) -> pd.DataFrame:
        return merge_partials(frames, self.partials, sort=False, observed=self.observed)


class FinishPartials(PandasOperator):
    """The root of the tree: merge, sort the groups (``sort=True``), compute the outputs, lay them out."""

    params = ("partials", "outs", "meta", "spec", "layout")

    def execute(self, *frames: pd.DataFrame) -> Any:
        merged = merge_partials(frames, self.partials, sort=self.spec.sort, observed=self.spec.observed)
        result = finish(merged, self.outs, self.partials, self.meta)
        return self.layout(result) if self.layout is not None else result

