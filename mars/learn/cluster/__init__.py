"""mars.learn.cluster: ``KMeans`` and ``MiniBatchKMeans`` on mars tensors.

>>> from mars.learn.cluster import KMeans
>>> KMeans(3).get_params()["n_clusters"]
3
"""

from __future__ import annotations

from ._kmeans import KMeans
from ._minibatch import MiniBatchKMeans

__all__ = ["KMeans", "MiniBatchKMeans"]
