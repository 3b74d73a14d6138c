"""mars.learn.neighbors: k nearest neighbours by blocked brute force over the chunks.

>>> from mars.learn.neighbors import NearestNeighbors
>>> NearestNeighbors(n_neighbors=3).get_params()["n_neighbors"]
3
"""

from __future__ import annotations

from ._knn import KNeighborsClassifier, KNeighborsRegressor, NearestNeighbors

__all__ = ["KNeighborsClassifier", "KNeighborsRegressor", "NearestNeighbors"]
