"""``nonzero``: the coordinates of the true elements, one index tensor per axis.

The input's axes after the first are made whole, so each chunk's coordinates
(shifted by its row offset) come out in numpy's C order; the lengths are
known only after running.
"""

from __future__ import annotations

import math
from typing import Any, Generator

import numpy as np

from ...core.operator import Tiled
from ..base.reshape import known_sizes, rechunked
from ..chunks import offsets
from ..core import Tensor, TensorOperator, tensor_data
from ..datasource.core import astensor


class TensorNonzero(TensorOperator):
    """Coordinates of the non-zero elements, one output per axis, in C order."""

    params = ()

    @classmethod
    def tile(cls, op: TensorNonzero) -> Generator[Any, Any, list[Tiled]]:
        x = op.inputs[0]
        yield from known_sizes([x])
        x = yield from rechunked(x, (x.nsplits[0],) + tuple((int(s),) for s in x.shape[1:]))
        outs: list[list] = [[] for _ in range(x.ndim)]
        for i, (chunk, start) in enumerate(zip(x.chunks, offsets(x.nsplits[0]))):
            kws = [dict(index=(i,), shape=(math.nan,), dtype=np.intp, order="C") for _ in range(x.ndim)]
            for d, piece in enumerate(TensorNonzeroChunk(offset=int(start)).new_chunks([chunk], kws)):
                outs[d].append(piece)
        nsplits = ((math.nan,) * len(x.chunks),)
        return [Tiled(c, nsplits) for c in outs]


class TensorNonzeroChunk(TensorOperator):
    params = ("offset",)

    def execute(self, x: np.ndarray) -> Any:
        coords = np.nonzero(x)
        coords = (coords[0] + self.offset,) + tuple(coords[1:])
        return coords if len(coords) > 1 else coords[0]


def nonzero(a: Any) -> tuple[Tensor, ...]:
    """``np.nonzero``: a tuple of index tensors, one per axis (their length is known after running).

    >>> import mars.tensor as mt
    >>> [i.execute().fetch().tolist() for i in mt.nonzero(mt.tensor([[0, 3], [4, 0]]))]
    [[0, 1], [1, 0]]
    """
    data = tensor_data(astensor(a))
    if data.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() instead.")
    kws = [dict(shape=(math.nan,), dtype=np.intp) for _ in range(data.ndim)]
    return tuple(TensorNonzero().new_tensors([data], kws))
