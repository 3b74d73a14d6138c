"""Column projection: sources read, and partitions carry, only the columns that are used.

Going from the targets to the sources, each DataFrame node learns which of
its columns its readers use:

- a target uses all of them, and so does any op not listed here;
- a column selection (``df["a"]``, ``df[["a", "b"]]``) uses what it selects;
- a row filter (``df[mask]``), a slice of rows (``head``) and a sort
  (``sort_values``) use what their own readers use (a sort, its keys too);
- a merge uses its keys and the columns its readers use, mapped back
  through the suffixes (a column both sides have keeps its suffix: either
  side keeps it when one does);
- an assignment of one column (``df.assign(x=...)``, ``df["x"] = ...``)
  uses what its readers use but that column; one whose column nobody reads
  is dropped;
- a grouped aggregation that names its columns (named aggregations, a
  dict, a selection) uses its keys and those columns.

A source with unused columns is rebuilt to leave them out: an in-memory
frame (``from_pandas``) keeps views of the used columns only (no copy, and
a cluster receives only those), and a file source (``read_parquet``,
``read_csv``, ``read_sql``) reads only those through its ``with_columns``.
The filters and merges between it and the selections are rebuilt on the
narrower frames. A frame the session already holds (an executed table)
cannot be rebuilt: each of its readers reads a selection of the columns it
uses instead (views of its columns), so merges and shuffles move only those.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...core.entity import TileableData
from ..core import PandasData, wrap
from ..datasource import FromPandas
from ..groupby.agg import GroupByAgg
from ..indexing import SelectColumns, _set_column
from ..map import MapPartitions, Slot
from ..merge import Merge, merge
from ..selection import RowSlice, _filter_rows
from ..sort import SortRows
from .graph import Rebuilder, consumers, fresh_op, is_leaf, rewrite, topo_order
from .merge_columns import narrow_merge_columns, narrow_merge_meta

ALL = None  # every column


def _is_filter(op: Any) -> bool:
    return isinstance(op, MapPartitions) and op.func is _filter_rows and op.declared is None \
        and isinstance(op.args, tuple) and len(op.args) == 2 and isinstance(op.args[0], Slot) and op.args[0].i == 0


def _row_picker(op: Any, node: Any) -> set | None:
    """For ops whose output is some of ``node``'s rows with all its columns (filters, row slices, sorts): the
    columns they read themselves (empty for all but a sort's keys); None for other ops."""
    if _is_filter(op) and op.inputs[0] is node and not any(i is node for i in op.inputs[1:]):
        return set()
    if isinstance(op, RowSlice) and len(op.inputs) == 1:
        return set()
    if isinstance(op, SortRows) and op.spec.method == "sort_values" and op.spec.by is not None:
        by = set(op.spec.by)
        return by if by <= set(node.meta.columns) else None
    return None


def _assigned(op: Any) -> Any:
    """The column label an assignment of one column writes (``_NONE`` when ``op`` is no such assignment)."""
    if not (isinstance(op, MapPartitions) and op.func is _set_column and op.declared is None
            and isinstance(op.args, tuple) and len(op.args) == 3 and isinstance(op.args[0], Slot)
            and op.args[0].i == 0 and not op.kwargs):
        return _NONE
    key = op.args[1]
    try:
        hash(key)
    except TypeError:
        return _NONE
    return _NONE if isinstance(key, (list, tuple, Slot)) else key


_NONE = object()


def _frame(node: Any) -> bool:
    return isinstance(node, PandasData) and isinstance(node.meta, pd.DataFrame) \
        and not isinstance(node.meta.columns, pd.MultiIndex) and node.meta.columns.is_unique


def _key_list(value: Any) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def merge_needs(op: Merge, need: set | None) -> tuple[set, set] | None:
    """Columns each side of merge ``op`` must keep so its output still has ``need`` (None: all of both)."""
    if need is ALL:
        return None
    left, right = op.inputs
    lnames, rnames = left.meta.columns.tolist(), right.meta.columns.tolist()  # Arrow-backed labels iterate slowly
    lcols, rcols = set(lnames), set(rnames)
    kw = op.kwargs
    lkeep = {c for c in _key_list(kw.get("on")) + _key_list(kw.get("left_on")) if c in lcols}
    rkeep = {c for c in _key_list(kw.get("on")) + _key_list(kw.get("right_on")) if c in rcols}
    lsuf, rsuf = (tuple(kw.get("suffixes") or ("_x", "_y")) + (None, None))[:2]
    for c in lcols:
        if c in need or (isinstance(c, str) and isinstance(lsuf, str) and f"{c}{lsuf}" in need):
            lkeep.add(c)
    for c in rcols:
        if c in need or (isinstance(c, str) and isinstance(rsuf, str) and f"{c}{rsuf}" in need):
            rkeep.add(c)
    for c in lcols & rcols:  # suffixes depend on both sides having the column
        if c in lkeep or c in rkeep:
            lkeep.add(c)
            rkeep.add(c)
    lkept = [c for c in lnames if c in lkeep]
    rkept = [c for c in rnames if c in rkeep]
    wide = op.outputs[0].meta
    if not wide.columns.is_unique:
        return None
    dtypes = wide.dtypes.tolist()
    wide_dtypes = dict(zip(wide.columns.tolist(), dtypes))
    picked = narrow_merge_columns(list(wide_dtypes), lnames, rnames, lkept, rkept, kw)
    if picked is not None:  # the narrow merge's columns and dtypes, read off the whole one's
        names = [label for _, label in picked]
        narrow_dtypes = dict(zip(names, [dtypes[i] for i, _ in picked]))
    else:
        try:
            narrow = pd.merge(left.meta[lkept], right.meta[rkept], **kw)
        except Exception:  # noqa: BLE001 - a merge pandas refuses on the narrow sides is left whole
            return None
        names = narrow.columns.tolist()
        narrow_dtypes = dict(zip(names, narrow.dtypes.tolist())) if narrow.columns.is_unique else {}
    if len(narrow_dtypes) != len(names) or not set(names) <= wide_dtypes.keys() or \
            any(c not in narrow_dtypes or narrow_dtypes[c] != wide_dtypes[c] for c in need):
        return None
    return lkeep, rkeep


def _required(user: TileableData | None, node: TileableData, needs: dict) -> set | None:
    """The columns of ``node`` that ``user`` reads."""
    if user is None or not _frame(node):
        return ALL
    op = user.op
    if isinstance(op, SelectColumns) and not op.by_position:
        return set(op.columns) if isinstance(op.columns, list) else {op.columns}
    own = _row_picker(op, node)
    if own is not None:
        need = needs.get(id(user), ALL)
        return need if need is ALL else need | own
    key = _assigned(op)
    if key is not _NONE and op.inputs[0] is node and not any(i is node for i in op.inputs[1:]):
        need = needs.get(id(user), ALL)
        return need if need is ALL else need - {key}
    if isinstance(op, GroupByAgg) and op.columns is not None and len(op.inputs) == 1:
        return set(op.columns)
    if isinstance(op, Merge) and _frame(op.inputs[0]) and _frame(op.inputs[1]) and op.inputs[0] is not op.inputs[1]:
        memo = getattr(needs, "sides", {})  # pandas' merge of the metas is the slow part: once per merge
        if id(user) not in memo:
            memo[id(user)] = merge_needs(op, needs.get(id(user), ALL))
        sides = memo[id(user)]
        if sides is not None:
            return sides[0] if op.inputs[0] is node else sides[1]
    return ALL


class _Needs(dict):
    """Columns read per node (by id), and each merge's needs of its sides (``sides``, by the merge's id)."""

    def __init__(self) -> None:
        super().__init__()
        self.sides: dict[int, tuple | None] = {}


def column_needs(targets: list[TileableData]) -> dict[int, set | None]:
    """For each node (by id), the set of its columns that are read (None: all)."""
    users = consumers(targets)
    needs = _Needs()
    order = topo_order(targets)
    leaves = {id(i): i for n in order for i in n.op.inputs if is_leaf(i) and _frame(i)}
    for node in list(reversed(order)) + list(leaves.values()):  # a held frame's readers are all in ``order``
        need: set | None = set()
        for u in users.get(id(node), []):
            req = _required(u, node, needs)
            if req is ALL:
                need = ALL
                break
            need |= req
        needs[id(node)] = need
    return needs


def _kept(node: TileableData, need: set | None) -> list | None:
    """The used columns in their order, when fewer than all and at least one."""
    if need is ALL or not _frame(node):
        return None
    kept = [c for c in node.meta.columns.tolist() if c in need]
    return kept if 0 < len(kept) < node.meta.shape[1] else None


def _pruned_from_pandas(node: TileableData, kept: list, rb: Rebuilder) -> Any:
    op = node.op
    data = op.data
    if not isinstance(data, pd.DataFrame) or not {"data", "token", "rows"} <= set(type(op).params):
        return None
    meta = node.meta[kept]
    # views of the used columns, not a copy of them (pandas consolidates only when it must)
    narrow = pd.DataFrame({i: data[c] for i, c in enumerate(kept)}, copy=False)
    narrow.columns = meta.columns
    new_op = fresh_op(op, data=narrow, token=(op.token, "columns", tuple(kept)))
    return rb.with_op(node, new_op, [], meta=meta, shape=(node.shape[0], len(kept)))


def _pruned_source(node: TileableData, kept: list, rb: Rebuilder) -> Any:
    if isinstance(node.op, FromPandas):
        return _pruned_from_pandas(node, kept, rb)
    hook = getattr(node.op, "with_columns", None)
    if hook is None:
        return None
    pruned = hook(list(kept))
    pruned = getattr(pruned, "data", pruned)
    if pruned is None or list(pruned.meta.columns) != list(kept):
        return None
    rb.retoken(node.partitioning, pruned.partitioning)
    return pruned


def _held_selection(leaf: TileableData, kept: list) -> TileableData:
    """The used columns of a frame the session holds (views: its chunks are not copied)."""
    op = SelectColumns(columns=list(kept), by_position=False)
    meta = _selected_meta(leaf.meta, kept)
    return op.new_pandas([leaf], meta, (leaf.shape[0], len(kept)), partitioning=leaf.partitioning).data


#: ``(id(meta), kept): (meta, the meta of those columns)``: a held table is read by query after query, each
#: time through selections of the same columns (metas are not changed once a node has them, and are shared)
_SELECTED: dict[tuple, tuple[pd.DataFrame, pd.DataFrame]] = {}
_SELECTED_SIZE = 256


def _selected_meta(meta: pd.DataFrame, kept: list) -> pd.DataFrame:
    """``meta``'s columns ``kept`` (in its column order), worked out once per meta object and columns."""
    key = (id(meta), tuple(kept))
    known = _SELECTED.get(key)
    if known is None or known[0] is not meta:
        wanted = set(kept)  # ``kept`` is in the frame's column order (:func:`_kept`); take is the fast selection
        narrow = meta.take([i for i, c in enumerate(meta.columns.tolist()) if c in wanted], axis=1)
        if len(_SELECTED) >= _SELECTED_SIZE:
            _SELECTED.pop(next(iter(_SELECTED)), None)  # the oldest goes
        known = _SELECTED[key] = (meta, narrow)
    return known[1]


def _narrow_held(node: TileableData, inputs: list, needs: dict, selections: dict) -> list:
    """``inputs`` with each held frame that has columns ``node`` does not read replaced by a selection of the
    ones it reads (one node per frame and columns)."""
    if isinstance(node.op, SelectColumns):
        return inputs  # a selection already reads only what it selects
    out = []
    for inp in inputs:
        kept = _kept(inp, _required(node, inp, needs)) if is_leaf(inp) else None
        if kept is not None:
            key = (id(inp), tuple(kept))
            if key not in selections:
                selections[key] = _held_selection(inp, kept)
            inp = selections[key]
        out.append(inp)
    return out


def _rebuilt_assign(node: TileableData, inputs: list, need: set | None, rb: Rebuilder) -> Any:
    """An assignment on a narrower frame (or the frame itself when the column it writes is not read)."""
    key = _assigned(node.op)
    if need is not ALL and key not in need and _frame(inputs[0]):
        return inputs[0]
    if inputs[0] is node.op.inputs[0]:
        return rb.clone(node, inputs) if any(a is not b for a, b in zip(inputs, node.op.inputs)) else None
    have = inputs[0].meta.columns.tolist()
    meta = node.meta[have + ([key] if key not in have else [])]  # pandas appends a new column last
    return rb.clone(node, inputs, meta=meta, shape=(node.shape[0], meta.shape[1]))


def _rebuilt_merge(node: TileableData, inputs: list, rb: Rebuilder) -> Any:
    """A merge of narrower sides (its meta read off the whole merge's where it can: no pandas merge)."""
    op = node.op
    old, cols = op.inputs, [i.meta.columns.tolist() for i in inputs]
    meta = narrow_merge_meta(node.meta, old[0].meta.columns.tolist(), old[1].meta.columns.tolist(), cols[0], cols[1],
                             op.kwargs)
    if meta is None:
        new = merge(wrap(inputs[0]), wrap(inputs[1]), **op.kwargs).data
    else:
        new = rb.clone(node, inputs, meta=meta, shape=(node.shape[0], meta.shape[1]), partitioning=None)
        new.partitioning = new.key  # rows laid out anew, as a merge of its own
    rb.retoken(node.partitioning, new.partitioning)
    return new


def project_columns(targets: list[TileableData]) -> list[TileableData]:
    """Rule: unused columns are left out from the sources up (see the module's text)."""
    needs = column_needs(targets)
    selections: dict[tuple, TileableData] = {}

    def visit(node: TileableData, inputs: list, rb: Rebuilder) -> Any:
        op = node.op
        if not op.inputs:
            kept = _kept(node, needs.get(id(node)))
            return _pruned_source(node, kept, rb) if kept is not None else None
        inputs = _narrow_held(node, inputs, needs, selections)
        if _assigned(op) is not _NONE and _frame(node):
            return _rebuilt_assign(node, inputs, needs.get(id(node)), rb)
        changed = [a is not b and _frame(b) and not a.meta.columns.equals(b.meta.columns)
                   for a, b in zip(inputs, op.inputs)]
        if not any(changed):
            return None
        if _row_picker(op, op.inputs[0]) is not None:
            meta = inputs[0].meta
            return rb.clone(node, inputs, meta=meta, shape=(node.shape[0], meta.shape[1]))
        if isinstance(op, Merge):
            return _rebuilt_merge(node, inputs, rb)
        return rb.clone(node, inputs)  # a selection: its output is what it was

    return rewrite(targets, visit)
