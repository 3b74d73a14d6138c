"""The logical optimizer: dataframe expressions rewritten before they are tiled.

Rules are plain functions from a list of target tileables to a list of
stand-ins with the same metadata; they build new nodes and never change the
user's. :func:`optimize` runs them in order:

1. :func:`~.sources.combine_reads`, :func:`~.cse.select_of_select` and
   :func:`~.cse.dedupe`: one read per file source, one node per expression;
   :func:`~.distinct.distinct_into_groupby`: distinct rows that only a
   sorted groupby reads are deduplicated in its shuffle;
   :func:`~.distinct.unordered_distinct_for_merges`: distinct rows that only
   semi-joins read keep no order;
2. :func:`~.projection.project_columns`: sources read only the columns used;
3. :func:`~.predicates.push_predicates`: Parquet row groups that a filter
   cannot keep are not read (the filter still runs);
4. :func:`~.topn.sort_head_to_topn`: ``sort_values(...).head(n)`` keeps ``n``
   rows per partition;
5. :func:`~.order.unordered_merges`: joins whose row order no reader sees
   (a sorted grouped sum, say) are not put back in pandas' order;
6. :func:`~.fusion.fuse_partitions`: partition-wise ops run as one function.

Sessions call it through :func:`mars.core.tiling.planned` (embedded) or
before sending the graph (cluster); ``mars.options.optimize = False`` turns
it off. ``df.explain()`` shows the plan before and after.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from ...core.entity import TileableData, has_unknown
from ...core.tiling import PLANNERS, TILING, as_data
from ..core import DataFrame, Index, PandasData, Series
from .cse import dedupe, select_of_select
from .distinct import distinct_into_groupby, unordered_distinct_for_merges
from .explain import Explanation, format_plan
from .order import unordered_merges
from .fusion import fuse_partitions
from .graph import HOLDS, REPLACED, WALKS
from .predicates import push_predicates
from .projection import project_columns
from .sources import combine_reads
from .topn import sort_head_to_topn

__all__ = ["RULES", "explain", "format_plan", "optimize", "plan"]

Rule = Callable[[list], list]

#: the rules in the order they run
RULES: tuple[Rule, ...] = (combine_reads, select_of_select, dedupe, distinct_into_groupby,
                           unordered_distinct_for_merges, project_columns, push_predicates, sort_head_to_topn, dedupe,
                           unordered_merges, fuse_partitions)


def optimize(targets: Sequence[Any], holds: Callable[[Any], bool] | None = None,
             rules: Sequence[Rule] = RULES) -> list[TileableData]:
    """Stand-ins for ``targets`` (tileables or their data) after ``rules``; unchanged ones are themselves.

    ``holds(node)`` says whether a tiled node's results are kept by the
    session (it is then taken as given); by default every tiled node is.

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"a": [1, 2, 3], "b": [1.0, 2.0, 3.0]}, chunk_size=2)
    >>> [out] = optimize([(df["a"] * 2 + df["a"]).data])
    >>> type(out.op).__name__, repr(out.op.func)
    ('MapPartitions', "Fused[col['a'], multiply, add]")
    """
    return plan(targets, holds, rules)[0]


def plan(targets: Sequence[Any], holds: Callable[[Any], bool] | None = None,
         rules: Sequence[Rule] = RULES) -> tuple[list[TileableData], list[tuple]]:
    """The stand-ins of :func:`optimize`, and ``(node, stand-in)`` for the other nodes that keep their metadata.

    (Those take their stand-in's chunks once it is tiled, as they would
    have been tiled themselves: see :class:`mars.core.tiling.Plan`.)
    """
    out = [as_data(t) for t in targets]
    replaced: dict[int, tuple] = {}
    holds = _remembered(holds) if holds is not None else None
    token, held, rec = TILING.set(True), HOLDS.set(holds), REPLACED.set(replaced)  # nothing built here runs eagerly
    walks = WALKS.set({})
    try:
        for rule in rules:
            out = rule(out)
    finally:
        WALKS.reset(walks)
        REPLACED.reset(rec)
        HOLDS.reset(held)
        TILING.reset(token)
    pairs = []
    for node, new in replaced.values():
        while id(new) in replaced:
            new = replaced[id(new)][1]
        if same_metadata(node, new):
            pairs.append((node, new))
    return out, pairs


def _remembered(holds: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """``holds``, asked once per node: the rules ask it of every leaf on every walk of the graph, and a
    session answers by looking up each of the node's chunks."""
    answers: dict[int, tuple[Any, bool]] = {}  # the node is kept with its answer: its id stays its own

    def remembered(node: Any) -> bool:
        known = answers.get(id(node))
        if known is None:
            known = answers[id(node)] = (node, holds(node))
        return known[1]

    return remembered


def same_metadata(a: Any, b: Any) -> bool:
    """Whether ``b`` stands for ``a`` exactly: same kind, shape, dtypes, columns and names."""
    if type(a) is not type(b) or a.shape != b.shape and not (has_unknown(a.shape) or has_unknown(b.shape)):
        return False
    if not isinstance(a, PandasData):
        return getattr(a, "dtype", None) == getattr(b, "dtype", None)
    ma, mb = a.meta, b.meta
    if ma is mb:  # a clone on new inputs keeps its node's meta
        return True
    if type(ma) is not type(mb):
        return False
    if isinstance(ma, pd.Index):
        return ma.dtype == mb.dtype and ma.name == mb.name
    if ma.index.dtype != mb.index.dtype:
        return False
    if isinstance(ma, pd.DataFrame):
        return ma.columns.equals(mb.columns) and ma.dtypes.equals(mb.dtypes)
    return ma.dtype == mb.dtype and ma.name == mb.name


def _planner(targets: list, holds: Callable[[Any], bool]) -> tuple[list, list]:
    return plan(targets, holds)


def explain(obj: Any) -> Explanation:
    """The plan of ``obj`` as written and as the optimizer rewrites it.

    >>> import mars.dataframe as md
    >>> df = md.DataFrame({"a": [1, 2, 3], "b": [1.0, 2.0, 3.0], "c": ["x", "y", "z"]}, chunk_size=2)
    >>> plan = df[df["a"] > 1]["b"].explain()
    >>> plan.after.splitlines()[1].strip()[:44]
    '#1 DataFrame[a, b] <- FromPandas(data=<DataF'
    """
    data = as_data(obj)
    return Explanation(format_plan([data]), format_plan(optimize([data])))


def _explain_method(self: Any) -> Explanation:
    """The plan before and after the optimizer (see :func:`mars.dataframe.optimizer.explain`)."""
    return explain(self)


for _cls in (DataFrame, Series, Index):
    _cls.explain = _explain_method  # type: ignore[attr-defined]

PLANNERS.append(_planner)
