"""Fusion: connected partition-wise ops become one function per partition.

An op is *partition-wise* when partition ``i`` of its output is made from
partition ``i`` of its row inputs alone and no alignment is needed: a
:class:`~mars.dataframe.map.MapPartitions` whose row inputs share one
partitioning token (elementwise arithmetic, comparisons, masks, filters,
``fillna``...) or a row-local op such as a column selection. A node joins
the region of its readers when all of them are in that one region, it is
read there by rows (not whole), it is not a target, and the region's row
inputs from outside still share one token (so its partitions line up with
no alignment step). A region of two or more nodes becomes one
``MapPartitions`` whose function is a :class:`~.kernels.Program`; the
array steps of :mod:`.kernels` run elementwise operators, column reads and
masks on numpy arrays where the metadata shows that numpy gives pandas' dtype.

A reduction of the region's output (``.sum()``) is fused with it at the chunk
level (one subtask per partition), so a filter followed by a reduction never
stores the filtered partition.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...core.entity import TileableData
from ..arithmetic import apply_op
from ..core import PandasData
from ..indexing import RowLocal, SelectColumns
from ..map import MapPartitions, Slot
from ..selection import _filter_rows
from .graph import Rebuilder, consumers, rewrite, topo_order
from .kernels import BinaryStep, ColumnStep, FilterStep, OpStep, Program, Ref, Step

_ARITH = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide}
_COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
            "ge": np.greater_equal}
_LOGIC = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}
_ARRAY_KINDS = "biufM"


# ----------------------------------------------------------------- which ops are partition-wise
def _row_inputs(node: TileableData) -> list:
    op = node.op
    if isinstance(op, MapPartitions):
        return [d for d, r in zip(op.inputs, op.roles) if r == "rows"]
    return list(op.inputs[:1])


def partition_wise(node: TileableData) -> bool:
    """Whether ``node``'s partition ``i`` comes from its row inputs' partitions ``i`` with no alignment."""
    op = node.op
    if not isinstance(node, PandasData) or len(op.output_keys) != 1:
        return False
    if isinstance(op, MapPartitions):
        rows = _row_inputs(node)
        return bool(rows) and all(isinstance(d, PandasData) and d.partitioning == rows[0].partitioning for d in rows)
    return isinstance(op, RowLocal) and len(op.inputs) == 1 and isinstance(op.inputs[0], PandasData)


def _read_by_rows(user: TileableData, node: TileableData) -> bool:
    op = user.op
    if isinstance(op, MapPartitions):
        return all(r == "rows" for d, r in zip(op.inputs, op.roles) if d is node)
    return True


def _outside_tokens(members: list) -> set:
    ids = {id(m) for m in members}
    return {d.partitioning for m in members for d in _row_inputs(m) if id(d) not in ids}


def find_regions(targets: list[TileableData]) -> list[list[TileableData]]:
    """Groups of partition-wise nodes to fuse, each listed inputs first (its output last); singletons left out."""
    order = topo_order(targets)
    users = consumers(targets)
    region: dict[int, int] = {}
    members: dict[int, list] = {}
    for node in reversed(order):
        if not partition_wise(node):
            continue
        readers = users.get(id(node), [])
        roots = {region.get(id(u)) if u is not None else None for u in readers}
        if len(roots) == 1 and None not in roots and all(_read_by_rows(u, node) for u in readers):
            root = roots.pop()
            if len(_outside_tokens(members[root] + [node])) <= 1:
                region[id(node)] = root
                members[root].append(node)
                continue
        region[id(node)] = id(node)
        members[id(node)] = [node]
    position = {id(n): i for i, n in enumerate(order)}
    return [sorted(m, key=lambda n: position[id(n)]) for m in members.values() if len(m) > 1]


# ----------------------------------------------------------------- compiling a region
def _numpy_kind(meta: Any) -> str | None:
    dtype = getattr(meta, "dtype", None)
    return dtype.kind if isinstance(dtype, np.dtype) and dtype.kind in _ARRAY_KINDS else None


def _literal(value: Any, kind: str) -> Any:
    """``value`` as numpy takes it beside an array of ``kind``, or None when it is not a plain scalar."""
    if kind == "M":
        if isinstance(value, pd.Timestamp) and value.tz is None and value is not pd.NaT:
            return value.to_datetime64()
        return value if isinstance(value, np.datetime64) and not np.isnat(value) else None
    if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
        return value
    return None


def _ufunc(name: str, kinds: list[str]) -> tuple[Any, bool] | None:
    """(ufunc, reflected) for pandas method ``name`` on operands of numpy ``kinds``, or None."""
    bare = name.strip("_")
    reflected = bare.startswith("r") and (bare[1:] in _ARITH or bare[1:] in _LOGIC)
    if reflected:
        bare = bare[1:]
    if bare in _ARITH and all(k in "iuf" for k in kinds):
        return _ARITH[bare], reflected
    if bare in _LOGIC and all(k == "b" for k in kinds):
        return _LOGIC[bare], reflected
    if bare in _COMPARE and (all(k in "iuf" for k in kinds) or all(k == kinds[0] for k in kinds)):
        return _COMPARE[bare], reflected
    return None


def _binary_step(node: PandasData, refs: list[Ref]) -> Step | None:
    op = node.op
    if op.func is not apply_op or op.declared is not None or not isinstance(node.meta, pd.Series):
        return None
    args = op.args
    if len(args) != 4 or not isinstance(args[0], Slot) or args[0].i != 0 or args[3] != {}:
        return None
    metas = [d.meta if isinstance(d, PandasData) else None for d in op.inputs]
    kinds = [_numpy_kind(m) if isinstance(m, pd.Series) else None for m in metas]
    if None in kinds or _numpy_kind(node.meta) is None:
        return None
    other = args[2]
    literal, at = None, None
    if isinstance(other, Slot):
        if other.i != 1 or len(op.inputs) != 2:
            return None
        chosen = _ufunc(args[1], kinds)
        if chosen is None or chosen[1]:
            return None
    else:
        literal = _literal(other, kinds[0])
        if literal is None or len(op.inputs) != 1:
            return None
        chosen = _ufunc(args[1], kinds + [np.asarray(literal).dtype.kind])
        if chosen is None:
            return None
        at = 0 if chosen[1] else 1
    ufunc = chosen[0]
    operands = [np.empty(0, m.dtype) for m in metas]
    if at is not None:
        operands.insert(at, literal)
    try:
        with np.errstate(all="ignore"):
            if ufunc(*operands).dtype != node.meta.dtype:
                return None
    except (TypeError, ValueError, OverflowError):
        return None
    return BinaryStep(op.bare(), refs, ufunc, literal, at, node.meta.dtype, node.meta.name)


def _step(node: PandasData, refs: list[Ref]) -> Step:
    op = node.op
    if isinstance(op, SelectColumns) and not op.by_position and isinstance(node.meta, pd.Series):
        frame = op.inputs[0].meta
        if isinstance(frame, pd.DataFrame) and frame.columns.is_unique and _numpy_kind(node.meta):
            return ColumnStep(op.bare(), refs, op.columns, node.meta.dtype)
    if isinstance(op, MapPartitions) and op.func is _filter_rows and op.declared is None and len(op.inputs) == 2 \
            and op.roles == ("rows", "rows") and op.args == (op.args[0], op.args[1]) \
            and all(isinstance(a, Slot) for a in op.args) and [a.i for a in op.args] == [0, 1] \
            and _numpy_kind(op.inputs[1].meta) == "b":
        return FilterStep(op.bare(), refs)
    if isinstance(op, MapPartitions):
        step = _binary_step(node, refs)
        if step is not None:
            return step
    return OpStep(op.bare(), refs)


def compile_region(members: list[PandasData]) -> tuple[Program, list[tuple[Any, str]]]:
    """The region's program and its outside inputs as ``(data, role)``."""
    position = {id(m): i for i, m in enumerate(members)}
    outside: list[tuple[Any, str]] = []
    steps: list[Step] = []
    for m in members:
        op = m.op
        roles = op.roles if isinstance(op, MapPartitions) else ("rows",) * len(op.inputs)
        refs = []
        for inp, role in zip(op.inputs, roles):
            if id(inp) in position:
                refs.append(Ref("step", position[id(inp)]))
                continue
            for k, (d, r) in enumerate(outside):
                if d is inp and r == role:
                    break
            else:
                outside.append((inp, role))
                k = len(outside) - 1
            refs.append(Ref("in", k))
        steps.append(_step(m, refs))
    return Program(steps, len(outside)), outside


def _same_rows(node: PandasData) -> bool:
    return bool(node.op.same_rows) if isinstance(node.op, MapPartitions) else True


def fuse_partitions(targets: list[TileableData]) -> list[TileableData]:
    """Rule: each region of partition-wise nodes runs as one ``MapPartitions`` (see the module's text)."""
    regions = find_regions(targets)
    if not regions:
        return list(targets)
    roots = {id(r[-1]): r for r in regions}
    inner = {id(n) for r in regions for n in r[:-1]}

    def visit(node: TileableData, inputs: list, rb: Rebuilder) -> Any:
        if id(node) in inner:
            return node  # read only inside its region: never used on its own
        members = roots.get(id(node))
        if members is None:
            return None
        program, outside = compile_region(members)
        op = MapPartitions(func=program, args=tuple(Slot(i) for i in range(len(outside))), kwargs={},
                           roles=tuple(r for _, r in outside), same_rows=all(_same_rows(m) for m in members),
                           how="left", declared=None)
        return rb.with_op(node, op, [rb.new(d) for d, _ in outside])

    return rewrite(targets, visit)
