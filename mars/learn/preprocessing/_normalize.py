"""``normalize`` and ``Normalizer``: rows (or columns) scaled to unit norm, chunk by chunk.

Along rows (``axis=1``) a row's norm is a reduction over its columns, so a
row chunk needs nothing from the others; along columns it is a tree
reduction over the row chunks.
"""

from __future__ import annotations

from typing import Any

from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin

from ... import tensor as mt
from ...tensor.core import Tensor
from ..base import as_float, as_tensor, validate_data

__all__ = ["Normalizer", "normalize"]

_NORMS = ("l1", "l2", "max")


def _norms(x: Tensor, norm: str, axis: int) -> Tensor:
    if norm == "l1":
        return mt.abs(x).sum(axis=axis)
    if norm == "l2":
        return mt.sqrt((x * x).sum(axis=axis))
    return mt.abs(x).max(axis=axis)


def normalize(X: Any, norm: str = "l2", *, axis: int = 1, copy: bool = True,
              return_norm: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """Scale each row (``axis=1``) or column (``axis=0``) to unit ``norm`` ('l1', 'l2' or 'max'), lazily.

    As ``sklearn.preprocessing.normalize``; rows of norm 0 are left as they
    are. With ``return_norm`` the norms come too (a lazy tensor; 1 for those of norm 0, as scikit-learn).

    >>> from mars.learn.preprocessing import normalize
    >>> normalize([[3., 4.], [0., 0.]]).execute().fetch()
    array([[0.6, 0.8],
           [0. , 0. ]])
    """
    if norm not in _NORMS:
        raise ValueError(f"'{norm}' is not a supported norm; expected one of {_NORMS}")
    if axis not in (0, 1):
        raise ValueError(f"'{axis}' is not a supported axis; expected 0 or 1")
    x = as_float(as_tensor(X, ensure_2d=True))
    norms = _norms(x, norm, axis)
    safe = mt.where(norms == 0, 1, norms).astype(x.dtype)
    out = x / (safe[:, None] if axis == 1 else safe[None, :])
    return (out, safe) if return_norm else out


class Normalizer(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Scale each sample to unit norm, as ``sklearn.preprocessing.Normalizer`` (stateless).

    >>> from mars.learn.preprocessing import Normalizer
    >>> Normalizer(norm="l1").fit_transform([[1., 3.]]).execute().fetch()
    array([[0.25, 0.75]])
    """

    def __init__(self, norm: str = "l2", *, copy: bool = True):
        self.norm = norm
        self.copy = copy

    def fit(self, X: Any, y: Any = None) -> Normalizer:
        """Check ``X`` and record its number of features; nothing is learned."""
        validate_data(self, X, reset=True)
        return self

    def transform(self, X: Any, copy: Any = None) -> Tensor:
        """Each row scaled to unit norm, a lazy tensor (no ``fit`` needed, as in scikit-learn)."""
        return normalize(validate_data(self, X, reset=False), norm=self.norm, axis=1)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        tags.input_tags.sparse = False
        return tags

