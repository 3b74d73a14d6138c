"""mars.tensor.spatial: ``mt.spatial.distance`` (``cdist``, ``pdist``, ``squareform``) over tensors.

>>> import mars.tensor as mt
>>> mt.spatial.distance.cdist(mt.tensor([[0.0, 0.0]]), mt.tensor([[3.0, 4.0]])).fetch()
array([[5.]])
"""

from __future__ import annotations

from . import distance

__all__: list[str] = ["distance"]
