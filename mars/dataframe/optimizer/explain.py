"""A printable plan: the tileable graph as an indented tree, one line per node.

A node read by several others is printed once; later readers show
``-> see #n``. Leaves that are already computed are marked ``(computed)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from ...core.entity import TileableData
from ..core import PandasData


def _what(node: Any) -> str:
    if isinstance(node, PandasData):
        meta = node.meta
        if isinstance(meta, pd.DataFrame):
            cols = list(meta.columns)
            shown = ", ".join(map(str, cols[:6])) + (", ..." if len(cols) > 6 else "")
            return f"DataFrame[{shown}]"
        if isinstance(meta, pd.Series):
            return f"Series[{meta.name!r}, {meta.dtype}]"
        return "Index"
    return type(node).__name__.replace("Data", "")


def _value_text(value: Any) -> str:
    if isinstance(value, (pd.DataFrame, pd.Series, pd.Index)):
        return f"<{type(value).__name__} {'x'.join(map(str, value.shape))}>"
    if callable(value) and hasattr(value, "__name__") and type(value).__repr__ is object.__repr__ \
            or callable(value) and type(value).__name__ == "function":
        return value.__name__
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, (dict, tuple, list)) and not value)


def _op_text(node: TileableData) -> str:
    op = node.op
    values = [(p, getattr(op, p, None)) for p in type(op).params]
    args = ", ".join(f"{p}={_value_text(v)}" for p, v in values if not _blank(v))
    text = f"{type(op).__name__}({args})"
    return text if len(text) <= 160 else text[:157] + "..."


def format_plan(targets: Sequence[TileableData]) -> str:
    """The plan of ``targets`` as text.

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"a": [1, 2]}, chunk_size=1)
    >>> print(format_plan([(df["a"] + 1).data]).splitlines()[0][:38])
    #0 Series['a', int64] <- MapPartitions
    """
    lines: list[str] = []
    number: dict[int, int] = {}

    def show(node: Any, depth: int) -> None:
        pad = "  " * depth
        if id(node) in number:
            lines.append(f"{pad}-> see #{number[id(node)]}")
            return
        number[id(node)] = len(number)
        done = " (computed)" if isinstance(node, TileableData) and node.chunks is not None else ""
        head = f"{pad}#{number[id(node)]} {_what(node)} <- "
        if not isinstance(node, TileableData):
            lines.append(head + repr(node))
            return
        lines.append(head + _op_text(node) + done)
        if not done:
            for inp in node.op.inputs:
                show(inp, depth + 1)

    for t in targets:
        show(t, 0)
    return "\n".join(lines)


class Explanation:
    """The plan of an expression before and after the optimizer (``.before``, ``.after``: text)."""

    def __init__(self, before: str, after: str):
        self.before, self.after = before, after

    def __str__(self) -> str:
        return f"== plan as written ==\n{self.before}\n== optimized plan ==\n{self.after}"

    __repr__ = __str__

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))
