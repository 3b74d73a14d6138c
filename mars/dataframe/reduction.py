"""Tree reductions over row partitions: chunk → combine → aggregate.

``tree_reduce(obj, chunk, combine, agg, meta)`` reduces a lazy DataFrame or
Series with three plain functions:

- ``chunk(partition)`` → a partial (any picklable value: a Series of sums, a
  ``(sum, count)`` pair, a partially aggregated groupby frame);
- ``combine(partials)`` → one partial, for groups of ``options.combine_size``;
- ``agg(partials)`` → the result.

The result is one chunk: a DataFrame/Series when ``meta`` is a pandas
object, or a 0-d tensor (a scalar) when ``meta`` is a numpy dtype.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pandas as pd

from ..core.operator import Tiled
from ..core.options import options
from ..core.tiling import as_data
from .core import PandasOperator, chunk_index_of, nsplits_of


class ReduceChunk(PandasOperator):
    params = ("func",)
    fusible = True

    def execute(self, value: Any) -> Any:
        return self.func(value)


class ReduceCombine(PandasOperator):
    params = ("func",)

    def execute(self, *partials: Any) -> Any:
        return self.func(list(partials))


class TreeReduce(PandasOperator):
    """The tileable op; its chunk graph is ReduceChunk per partition, then combines, then one agg."""

    params = ("chunk", "combine", "agg", "scalar")

    @classmethod
    def tile(cls, op: TreeReduce) -> Tiled:
        data = op.inputs[0]
        partials = [ReduceChunk(func=op.chunk).new_chunk([c], index=(i,), shape=(np.nan,), meta=None)
                    for i, c in enumerate(data.chunks)]
        size = options.combine_size
        while op.combine is not None and len(partials) > size:
            partials = [ReduceCombine(func=op.combine).new_chunk(partials[i:i + size], index=(i // size,),
                                                              shape=(np.nan,), meta=None)
                        for i in range(0, len(partials), size)]
        out = op.outputs[0]
        agg = ReduceCombine(func=op.agg)
        if op.scalar:
            chunk = agg.new_scalar_chunk(partials, out.dtype)
            return Tiled([chunk], ())
        chunk = agg.new_chunk(partials, index=chunk_index_of(out.meta, 0), shape=out.shape, meta=out.meta)
        return Tiled([chunk], nsplits_of(out.meta, out.shape[:1]))


def tree_reduce(obj: Any, chunk: Callable, combine: Callable | None, agg: Callable, meta: Any,
                shape: tuple | None = None) -> Any:
    """Reduce ``obj`` partition by partition; ``meta`` is the result's meta (pandas) or dtype (a scalar).

    ``combine=None`` means the partials are small enough to aggregate all at
    once (no tree).
    """
    data = as_data(obj)
    scalar = not isinstance(meta, (pd.DataFrame, pd.Series, pd.Index))
    op = TreeReduce(chunk=chunk, combine=combine, agg=agg, scalar=scalar)
    if scalar:
        return op.new_scalar([data], np.dtype(meta) if not isinstance(meta, np.ndarray) else meta.dtype)
    if shape is None:
        shape = (len(meta), meta.shape[1]) if isinstance(meta, pd.DataFrame) and len(meta) else \
            ((np.nan, meta.shape[1]) if isinstance(meta, pd.DataFrame) else (np.nan,))
    return op.new_pandas([data], meta.iloc[:0] if not isinstance(meta, pd.Index) else meta[:0], shape)
