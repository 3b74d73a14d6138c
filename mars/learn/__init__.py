"""mars.learn: scikit-learn's API on mars tensors and DataFrames (issue 20).

Import the estimators from their modules, as in scikit-learn:
``from mars.learn.cluster import KMeans``.

``preprocessing`` (scalers, encoders, ``PolynomialFeatures``),
``decomposition`` (``PCA``, ``TruncatedSVD``), ``metrics``, ``utils``
(``shuffle``, ``check_array``) and ``model_selection``
(``train_test_split``, ``KFold``, ``GridSearchCV``) are described in
docs/learn.md; ``mars.learn.base`` holds what every estimator shares.
"""

from __future__ import annotations
