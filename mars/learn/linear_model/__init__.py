"""mars.learn.linear_model: linear models fitted by distributed passes over the rows.

>>> from mars.learn.linear_model import Ridge
>>> Ridge(alpha=0.5).get_params()["alpha"]
0.5
"""

from __future__ import annotations

from ._lasso import Lasso
from ._linear import LinearRegression, Ridge
from ._logistic import LogisticRegression

__all__ = ["Lasso", "LinearRegression", "LogisticRegression", "Ridge"]
