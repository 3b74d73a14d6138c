"""Small results made from several small lazy results (a DataFrame of per-column modes).

The inputs are computed and fetched at tiling (each is small: a reduction's
result), ``func`` builds the pandas result, and its dtypes become the
output's: they may depend on the values (a column padded with NaN turns
float), which a meta known before running could not tell.
"""

from __future__ import annotations

import math
from collections.abc import Generator
from typing import Any

from ...core.operator import Fetch, Tiled
from ...core.tiling import as_data
from ..core import PandasOperator, chunk_index_of, chunk_shape_of, nsplits_of
from ..meta import empty_meta
from ..rows import single_chunk


class HeldValue(PandasOperator):
    """A pandas value computed at tiling."""

    params = ("value",)

    def execute(self) -> Any:
        return self.value


class CombineWholes(PandasOperator):
    """``func(*inputs, **kwargs)`` of whole small inputs, computed at tiling."""

    params = ("func", "kwargs")

    @classmethod
    def tile(cls, op: CombineWholes) -> Generator[Any, Any, Tiled]:
        wholes = [single_chunk(d) for d in op.inputs]
        values = (yield Fetch(wholes)) if wholes else []
        value = op.func(*values, **op.kwargs)
        meta = empty_meta(value)
        out = op.outputs[0]
        out.meta, out.shape = meta, chunk_shape_of(meta, len(value))
        chunk = HeldValue(value=value).new_chunk([], index=chunk_index_of(meta, 0), shape=out.shape, meta=meta)
        return Tiled([chunk], nsplits_of(meta, (len(value),)))


def combine_wholes(func: Any, inputs: list, kwargs: dict, meta: Any) -> Any:
    """``func`` of the whole values of lazy ``inputs``; ``meta`` is a guess until it runs."""
    op = CombineWholes(func=func, kwargs=kwargs)
    return op.new_pandas([as_data(i) for i in inputs], meta, chunk_shape_of(meta, math.nan))
