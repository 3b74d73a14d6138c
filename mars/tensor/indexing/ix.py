"""``ix_``: open-mesh index tensors from 1-D sequences (boolean ones become their nonzero positions)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base.shape import reshape
from ..core import Tensor, is_tensor
from ..datasource.core import astensor
from .nonzero import nonzero

__all__ = ["ix_"]


def ix_(*args: Any) -> tuple[Tensor, ...]:
    """Index tensors that pick the cross product of the given 1-D sequences, as ``np.ix_``:
    argument ``k`` is shaped to lie along axis ``k`` of ``len(args)`` axes.

    >>> import mars.tensor as mt
    >>> rows, cols = mt.ix_([0, 2], mt.tensor([True, False, True]))
    >>> rows.shape, cols.shape
    ((2, 1), (1, nan))
    >>> mt.arange(9).reshape(3, 3)[rows, cols].execute().fetch()
    array([[0, 2],
           [6, 8]])
    """
    out = []
    nd = len(args)
    for k, new in enumerate(args):
        if not is_tensor(new):  # numpy input: a boolean mask's positions are known at once
            new = np.asarray(new)
            if new.ndim == 1 and new.size and new.dtype == np.bool_:
                (new,) = np.nonzero(new)
        t = astensor(new)
        if t.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if t.size == 0:
            t = t.astype(np.intp)
        if t.dtype == np.bool_:
            (t,) = nonzero(t)  # a mars mask: its size is known after running
        out.append(reshape(t, (1,) * k + (-1,) + (1,) * (nd - k - 1)))
    return tuple(out)
