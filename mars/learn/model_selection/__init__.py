"""mars.learn.model_selection: splits drawn as scikit-learn draws them, rows taken lazily; ``GridSearchCV``.

>>> import numpy as np
>>> from mars.learn.model_selection import KFold
>>> KFold(2).get_n_splits()
2
"""

from __future__ import annotations

from ._search import GridSearchCV
from ._split import KFold, train_test_split

__all__ = ["GridSearchCV", "KFold", "train_test_split"]
