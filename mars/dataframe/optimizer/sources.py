"""One read per file source: reads of the same Parquet files that differ only in their columns are combined.

``df.a`` of a ``read_parquet`` frame is built as a read of column ``a``
alone, a source of its own. Beside ``df`` (or ``df.b``) it has another
partitioning token, so ``df[df.a > 3]`` would align the two on their index
before filtering, and each column would be read by a separate pass. This
rule makes every such group one read of the union of their columns; each
former read becomes a column selection from it. Later rules narrow the
read to what is used, fuse the selections with their readers, and prune
its row groups.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...core.entity import TileableData
from ...core.tokenize import tokenize
from ..indexing import SelectColumns
from ..io.parquet import ReadParquet
from .graph import Rebuilder, rewrite, topo_order

_VARYING = ("columns", "meta")


def _group_key(node: TileableData) -> str | None:
    op = node.op
    if not isinstance(op, ReadParquet) or op.inputs or not node.meta.columns.is_unique:
        return None
    return tokenize(type(op).__qualname__, [(p, getattr(op, p)) for p in type(op).params if p not in _VARYING])


def _wide(nodes: list[TileableData]) -> TileableData:
    columns: list = []
    parts = []
    for n in nodes:
        new = [c for c in n.meta.columns if c not in columns]
        columns += new
        parts.append(n.meta[new])
    meta = pd.concat(parts, axis=1) if len(parts) > 1 else parts[0]
    first = nodes[0]
    op = first.op.copy(columns=columns, meta=meta)
    return op.new_pandas([], meta, (first.shape[0], len(columns))).data


def combine_reads(targets: list[TileableData]) -> list[TileableData]:
    """Rule: reads of the same files differing only in columns become one read and column selections."""
    groups: dict[str, list] = {}
    for node in topo_order(targets):
        key = _group_key(node)
        if key is not None:
            groups.setdefault(key, []).append(node)
    groups = {k: g for k, g in groups.items() if len({n.key for n in g}) > 1}
    if not groups:
        return list(targets)
    wide = {k: _wide(g) for k, g in groups.items()}

    def visit(node: TileableData, inputs: list, rb: Rebuilder) -> Any:
        key = _group_key(node)
        if key not in wide:
            return None
        source = wide[key]
        rb.retoken(node.partitioning, source.partitioning)
        op = SelectColumns(columns=list(node.meta.columns), by_position=False)
        return rb.with_op(node, op, [source], partitioning=source.partitioning)

    return rewrite(targets, visit)
