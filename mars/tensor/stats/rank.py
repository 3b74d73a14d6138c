"""``rankdata``: ranks over the whole tensor by counting, or per slice along an axis.

Over a 1-d tensor (``axis=None`` flattens), the rank of ``v`` comes from the
counts of values ``< v`` and ``<= v`` (see :mod:`.ks`): ``min``, ``max`` and
``average`` need no sort; ``ordinal`` is the inverse of a stable argsort, and
``dense`` counts the distinct values of the sorted tensor not above ``v``.
Along an axis of a tensor with more dimensions, the axis is gathered into one
chunk and scipy ranks each chunk's slices.

scipy returns float NaN ranks for a slice holding NaN whatever the method; a
mars dtype is fixed before running, so methods other than ``average`` raise
``ValueError`` when they meet a NaN.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from ...core.operator import Tiled
from ..arithmetic.core import apply_ufunc, where_
from ..base.join import concatenate
from ..base.reshape import rechunked
from ..base.shape import ravel
from ..base.sort import argsort, sort
from ..core import Tensor, TensorOperator, tensor_data
from ..datasource.core import astensor, ones
from ..reduction.basic import any as any_
from ..reduction.core import normalize_axis
from ..special.core import scipy_func, scipy_op
from .ks import count_not_above
from .ttest import check_nan_policy

__all__ = ["rankdata"]

_METHODS = ("average", "min", "max", "dense", "ordinal")


def _nan_message(method: str) -> str:
    return (f"rankdata(method={method!r}) met a NaN: scipy's ranks would then be float NaN, but this result's "
            "dtype is int64; use method='average' or drop the NaNs first")


class TensorRankAlong(TensorOperator):
    """scipy's ``rankdata`` of every slice along ``axis`` (the axis gathered into one chunk)."""

    params = ("method", "axis")

    @classmethod
    def tile(cls, op: TensorRankAlong) -> Generator[Any, Any, Tiled]:
        x, out = op.inputs[0], op.outputs[0]
        x = yield from rechunked(x, tuple((s,) if d == op.axis else n
                                          for d, (s, n) in enumerate(zip(x.shape, x.nsplits))))
        chunks = [op.copy().new_chunk([c], index=c.index, shape=c.shape, dtype=out.dtype, order="C")
                  for c in x.chunks]
        return Tiled(chunks, x.nsplits)

    def execute(self, x: np.ndarray) -> np.ndarray:
        ranks = scipy_func("stats.rankdata")(x, method=self.method, axis=self.axis)
        if self.method != "average" and ranks.dtype.kind == "f":
            raise ValueError(_nan_message(self.method))
        return ranks


def _no_nan(ranks: np.ndarray, has_nan: Any, method: str) -> np.ndarray:
    """Chunk function of the NaN check of the integer methods."""
    if bool(np.any(has_nan)) and np.size(ranks):
        raise ValueError(_nan_message(method))
    return ranks


def _ranks_1d(x: Tensor, method: str) -> Tensor:
    if method == "average":
        ranks = (count_not_above(x, x, "left") + count_not_above(x, x, "right") + 1) / 2.0
        has_nan = any_(apply_ufunc("isnan", x)) if x.dtype.kind in "fc" else None
        return ranks if has_nan is None else where_(has_nan, np.nan, ranks)
    if method == "min":
        ranks = count_not_above(x, x, "left") + 1
    elif method == "max":
        ranks = count_not_above(x, x, "right")
    elif method == "ordinal":
        ranks = argsort(argsort(x)).astype(np.int64) + 1
    else:
        s = sort(x)
        first = concatenate([ones(1, dtype=bool), s[1:] != s[:-1]])
        # the distinct values, the repeats hidden as NaN (never counted: NaN sorts last)
        ranks = count_not_above(x, where_(first, s, np.nan), "right")
    if x.dtype.kind in "fc":
        ranks = scipy_op(_no_nan, [ranks, any_(apply_ufunc("isnan", x)), method], {}, [np.int64])
    return ranks


def rankdata(a: Any, method: str = "average", *, axis: Any = None, nan_policy: str = "propagate") -> Tensor:
    """Ranks of the data (1 for the smallest), ties by ``method``, as ``scipy.stats.rankdata``.

    >>> import mars.tensor as mt
    >>> mt.stats.rankdata(mt.tensor([0, 2, 3, 2], chunk_size=3)).fetch()
    array([1. , 2.5, 4. , 2.5])
    """
    if method not in _METHODS:
        raise ValueError(f'unknown method "{method}"')
    check_nan_policy(nan_policy)
    t = astensor(a)
    if axis is None or t.ndim <= 1:
        if axis is not None:
            normalize_axis(axis, max(t.ndim, 1))
        return _ranks_1d(ravel(t), method)
    (axis,) = normalize_axis(axis, t.ndim)
    dtype = np.dtype(np.float64 if method == "average" else np.int64)
    data = tensor_data(t)
    return TensorRankAlong(method=method, axis=axis).new_tensor([data], data.shape, dtype)
