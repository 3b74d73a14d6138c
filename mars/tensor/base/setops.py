"""Set operations: ``unique`` (see :mod:`.unique`), ``isin`` and the ``*1d`` functions built on them.

``isin`` tests every chunk of ``element`` against all of ``test_elements``
(made unique first, by the distributed ``unique``, when it is a tensor of
several chunks). ``setdiff1d``, ``union1d``, ``intersect1d`` and
``setxor1d`` are expressions of ``unique``, ``isin`` and boolean masks, so
their sizes are known once they ran.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ...core.operator import Tiled
from ..core import Tensor, TensorData, TensorOperator, is_tensor, tensor_data
from ..datasource.core import astensor
from .join import concatenate
from .shape import ravel
from .sort import sort
from .unique import unique, unique_values

__all__ = [
    "unique", "unique_all", "unique_counts", "unique_inverse", "unique_values",
    "isin", "in1d", "setdiff1d", "union1d", "intersect1d", "setxor1d",
]


class UniqueAllResult(NamedTuple):
    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCountsResult(NamedTuple):
    values: Tensor
    counts: Tensor


class UniqueInverseResult(NamedTuple):
    values: Tensor
    inverse_indices: Tensor


def unique_all(x: Any) -> UniqueAllResult:
    """Values, first indices, inverse and counts (NaNs distinct), as ``np.unique_all``.

    Where ``x`` may hold NaNs (floats) its inverse is found in one chunk.

    >>> import mars.tensor as mt
    >>> mt.unique_all(mt.tensor([2, 1, 2], chunk_size=2)).counts.fetch()
    array([1, 2])
    """
    return UniqueAllResult(*unique(x, True, True, True, equal_nan=False))


def unique_counts(x: Any) -> UniqueCountsResult:
    """Values and counts (NaNs distinct), as ``np.unique_counts``.

    >>> import mars.tensor as mt
    >>> mt.unique_counts(mt.tensor([2, 1, 2], chunk_size=2)).counts.fetch()
    array([1, 2])
    """
    return UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False))


def unique_inverse(x: Any) -> UniqueInverseResult:
    """Values and the inverse (of ``x``'s shape; NaNs distinct), as ``np.unique_inverse``.

    >>> import mars.tensor as mt
    >>> mt.unique_inverse(mt.tensor([2, 1, 2], chunk_size=2)).inverse_indices.fetch()
    array([1, 0, 1])
    """
    return UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False))


# ----------------------------------------------------------------- isin
class TensorIsIn(TensorOperator):
    """``np.isin`` of each chunk of the first input against ``test`` (a numpy array) or all chunks of the second."""

    params = ("test", "assume_unique", "invert", "kind")
    fusible = True

    @classmethod
    def tile(cls, op: TensorIsIn) -> Tiled:
        x, out = op.inputs[0], op.outputs[0]
        tests = list(op.inputs[1].chunks) if len(op.inputs) > 1 else []
        chunks = [op.copy().new_chunk([c, *tests], index=c.index, shape=c.shape, dtype=out.dtype, order="C")
                  for c in x.chunks]
        return Tiled(chunks, x.nsplits)

    def execute(self, x: np.ndarray, *tests: np.ndarray) -> np.ndarray:
        if tests:
            test = np.concatenate([t.reshape(-1) for t in tests]) if len(tests) > 1 else tests[0]
        else:
            test = self.test
        return np.isin(x, test, assume_unique=self.assume_unique, invert=self.invert, kind=self.kind)


def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False, *,
         kind: str | None = None) -> Tensor:
    """Whether each element of ``element`` is in ``test_elements`` (``element``'s shape), as ``np.isin``.

    >>> import mars.tensor as mt
    >>> mt.isin(mt.tensor([1, 2, 3, 4], chunk_size=3), [2, 4]).fetch()
    array([False,  True, False,  True])
    """
    data = tensor_data(astensor(element))
    if is_tensor(test_elements):
        test = tensor_data(test_elements)
        test_dtype = test.dtype
    else:
        test = np.asarray(test_elements)
        test_dtype = test.dtype
    # numpy's own checks of kind and dtypes, on empty arrays of the same dtypes
    np.isin(np.empty(0, dtype=data.dtype), np.empty(0, dtype=test_dtype), kind=kind)
    op = TensorIsIn(test=None if isinstance(test, TensorData) else test, assume_unique=bool(assume_unique),
                    invert=bool(invert), kind=kind)
    if isinstance(test, TensorData):
        if test.ndim and not assume_unique:  # fewer values to send to every chunk
            test = tensor_data(unique(Tensor(test)))
        return op.new_tensor([data, test], data.shape, np.dtype(bool))
    return op.new_tensor([data], data.shape, np.dtype(bool))


def in1d(ar1: Any, ar2: Any, assume_unique: bool = False, invert: bool = False, *, kind: str | None = None) -> Tensor:
    """``isin`` of ``ar1`` flattened: numpy 2 deprecated (then removed) ``in1d`` for ``isin``.

    >>> import mars.tensor as mt
    >>> mt.in1d(mt.tensor([[1, 2], [3, 4]], chunk_size=1), [2, 3]).fetch()
    array([False,  True,  True, False])
    """
    return ravel(isin(ar1, ar2, assume_unique=assume_unique, invert=invert, kind=kind))


# ----------------------------------------------------------------- the 1-d set functions
def _uniq(ar: Any, assume_unique: bool) -> Tensor:
    return ravel(astensor(ar)) if assume_unique else unique(ar)


def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False) -> Tensor:
    """Values of ``ar1`` not in ``ar2`` (sorted and unique unless ``assume_unique``), as ``np.setdiff1d``.

    >>> import mars.tensor as mt
    >>> mt.setdiff1d(mt.tensor([5, 1, 3, 1], chunk_size=2), [3]).fetch()
    array([1, 5])
    """
    a1 = _uniq(ar1, assume_unique)
    return a1[isin(a1, _uniq(ar2, assume_unique), assume_unique=True, invert=True)]


def union1d(ar1: Any, ar2: Any) -> Tensor:
    """The sorted unique values in either input, as ``np.union1d``.

    >>> import mars.tensor as mt
    >>> mt.union1d(mt.tensor([3, 1], chunk_size=1), [2, 1]).fetch()
    array([1, 2, 3])
    """
    return unique(concatenate([ravel(astensor(ar1)), ravel(astensor(ar2))]))


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False, return_indices: bool = False) -> Any:
    """The sorted values in both inputs (and their first indices in each), as ``np.intersect1d``.

    >>> import mars.tensor as mt
    >>> mt.intersect1d(mt.tensor([1, 3, 4, 3], chunk_size=2), [3, 1, 2, 1]).fetch()
    array([1, 3])
    """
    t1, t2 = astensor(ar1), astensor(ar2)
    dtype = np.result_type(t1.dtype, t2.dtype)
    if not return_indices:
        u1, u2 = _uniq(t1, assume_unique), _uniq(t2, assume_unique)
        if assume_unique:  # values as given, in any order: sorted here, as numpy's result is
            u1 = sort(u1)
        return u1[isin(u1, u2, assume_unique=True)].astype(dtype, copy=False)
    u1, i1 = unique(t1, return_index=True)
    u2, i2 = unique(t2, return_index=True)
    in1, in2 = isin(u1, u2, assume_unique=True), isin(u2, u1, assume_unique=True)
    return u1[in1].astype(dtype, copy=False), i1[in1], i2[in2]


def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False) -> Tensor:
    """The sorted values in exactly one of the inputs, as ``np.setxor1d``.

    >>> import mars.tensor as mt
    >>> mt.setxor1d(mt.tensor([1, 2, 3], chunk_size=2), [2, 3, 4]).fetch()
    array([1, 4])
    """
    both = concatenate([_uniq(ar1, assume_unique), _uniq(ar2, assume_unique)])
    values, counts = unique(both, return_counts=True, equal_nan=False)
    return values[counts == 1]

