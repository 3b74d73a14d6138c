"""Pairwise distances and similarities between the rows of two matrices, as lazy tensors.

Euclidean distances use ``|x|² - 2 x·y + |y|²``: a chunked product plus
row norms, so each output block needs only one row block of each input.
Cosine similarity is the product of the row-normalized inputs. Other
metrics go to ``mt.spatial.distance.cdist``, block by block.
"""

from __future__ import annotations

from typing import Any

from ... import tensor as mt
from ...tensor.core import Tensor
from ..base import as_float, as_tensor
from ..preprocessing import normalize

__all__ = ["cosine_distances", "cosine_similarity", "euclidean_distances", "manhattan_distances",
           "pairwise_distances"]

_CDIST = {"cityblock": "cityblock", "l1": "cityblock", "manhattan": "cityblock", "braycurtis": "braycurtis",
          "canberra": "canberra", "chebyshev": "chebyshev", "correlation": "correlation", "minkowski": "minkowski",
          "seuclidean": "seuclidean", "sqeuclidean": "sqeuclidean", "hamming": "hamming", "jaccard": "jaccard",
          "mahalanobis": "mahalanobis", "dice": "dice", "rogerstanimoto": "rogerstanimoto",
          "russellrao": "russellrao", "sokalsneath": "sokalsneath", "yule": "yule", "nan_euclidean": None}


def _pair(X: Any, Y: Any) -> tuple[Tensor, Tensor, bool]:
    x = as_float(as_tensor(X, ensure_2d=True))
    same = Y is None or Y is X
    y = x if same else as_float(as_tensor(Y, ensure_2d=True))
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"Incompatible dimension for X and Y matrices: X.shape[1] == {x.shape[1]} while "
                         f"Y.shape[1] == {y.shape[1]}")
    return x, y, same


def _zero_diagonal(d: Tensor) -> Tensor:
    return mt.where(mt.eye(d.shape[0], d.shape[1], dtype=bool), 0, d)


def euclidean_distances(X: Any, Y: Any = None, *, Y_norm_squared: Any = None, squared: bool = False,
                        X_norm_squared: Any = None) -> Tensor:
    """Euclidean distances between the rows of ``X`` and of ``Y`` (``X`` itself when None), a lazy tensor.

    >>> from mars.learn.metrics.pairwise import euclidean_distances
    >>> euclidean_distances([[0., 1.], [1., 1.]], [[0., 0.]]).execute().fetch()
    array([[1.        ],
           [1.41421356]])
    """
    x, y, same = _pair(X, Y)
    xx = (x * x).sum(axis=1) if X_norm_squared is None else as_tensor(X_norm_squared).ravel()
    yy = (y * y).sum(axis=1) if Y_norm_squared is None else as_tensor(Y_norm_squared).ravel()
    d2 = mt.maximum(xx[:, None] - 2 * (x @ y.T) + yy[None, :], 0)
    if same:
        d2 = _zero_diagonal(d2)
    return (d2 if squared else mt.sqrt(d2)).astype(x.dtype)


def cosine_similarity(X: Any, Y: Any = None, dense_output: bool = True) -> Tensor:
    """Cosine similarity between the rows of ``X`` and of ``Y``, a lazy tensor (rows of norm 0 give 0).

    >>> from mars.learn.metrics.pairwise import cosine_similarity
    >>> cosine_similarity([[1., 0.], [1., 1.]], [[2., 0.]]).execute().fetch().round(4)
    array([[1.    ],
           [0.7071]])
    """
    x, y, same = _pair(X, Y)
    xn = normalize(x)
    return xn @ (xn if same else normalize(y)).T


def cosine_distances(X: Any, Y: Any = None) -> Tensor:
    """``1 - cosine_similarity``, clipped to [0, 2] (0 on the diagonal of ``X`` against itself), lazily.

    >>> from mars.learn.metrics.pairwise import cosine_distances
    >>> cosine_distances([[1., 0.]], [[0., 3.]]).execute().fetch()
    array([[1.]])
    """
    x, y, same = _pair(X, Y)
    d = mt.clip(1 - cosine_similarity(x, None if same else y), 0, 2)
    return _zero_diagonal(d) if same else d


def manhattan_distances(X: Any, Y: Any = None) -> Tensor:
    """L1 distances between the rows of ``X`` and of ``Y``, lazily (``cdist``'s 'cityblock').

    >>> from mars.learn.metrics.pairwise import manhattan_distances
    >>> manhattan_distances([[1., 2.]], [[0., 0.]]).execute().fetch()
    array([[3.]])
    """
    x, y, _ = _pair(X, Y)
    return mt.spatial.distance.cdist(x, y, "cityblock")


def pairwise_distances(X: Any, Y: Any = None, metric: Any = "euclidean", *, n_jobs: Any = None,
                       force_all_finite: Any = True, ensure_all_finite: Any = None, **kwds: Any) -> Tensor:
    """Distances between the rows of ``X`` and of ``Y`` under ``metric``, a lazy tensor, as scikit-learn.

    'euclidean'/'l2', 'cosine', 'manhattan'/'cityblock'/'l1' and scipy's
    metrics (through ``mt.spatial.distance.cdist``) are offered; ``n_jobs``
    is ignored (the cluster runs the blocks in parallel); 'precomputed'
    returns ``X``.

    >>> from mars.learn.metrics import pairwise_distances
    >>> pairwise_distances([[0., 0.], [3., 4.]], metric="manhattan").execute().fetch()
    array([[0., 7.],
           [7., 0.]])
    """
    if metric == "precomputed":
        return as_float(as_tensor(X, ensure_2d=True))
    if metric in ("euclidean", "l2"):
        return euclidean_distances(X, Y)
    if metric == "cosine":
        return cosine_distances(X, Y)
    if callable(metric) or _CDIST.get(metric, None) is None:
        raise ValueError(f"Unknown or unsupported metric {metric!r}; mars.learn offers 'euclidean', 'l2', 'cosine', "
                         f"'precomputed' and {sorted(k for k, v in _CDIST.items() if v)}")
    x, y, _ = _pair(X, Y)
    if _CDIST[metric] in ("hamming", "jaccard", "dice", "rogerstanimoto", "russellrao", "sokalsneath", "yule"):
        x, y = x.astype(bool) if metric != "hamming" else x, y.astype(bool) if metric != "hamming" else y
    return mt.spatial.distance.cdist(x, y, _CDIST[metric], **kwds)
