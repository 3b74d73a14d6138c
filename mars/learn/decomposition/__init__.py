"""mars.learn.decomposition: ``PCA`` and ``TruncatedSVD`` by distributed SVDs.

>>> import numpy as np
>>> from mars.learn.decomposition import PCA
>>> PCA(1).fit(np.array([[0., 0.], [2., 2.]])).components_.round(4)
array([[0.7071, 0.7071]])
"""

from __future__ import annotations

from ._pca import PCA
from ._truncated_svd import TruncatedSVD

__all__ = ["PCA", "TruncatedSVD"]
