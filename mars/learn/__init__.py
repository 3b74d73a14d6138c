"""mars.learn: scikit-learn's API on mars tensors and DataFrames.

Import the estimators from their modules, as in scikit-learn:
``from mars.learn.cluster import KMeans``.

``preprocessing`` (scalers, encoders, ``PolynomialFeatures``),
``decomposition`` (``PCA``, ``TruncatedSVD``), ``cluster``, ``linear_model``,
``neighbors``, ``metrics``, ``utils`` (``shuffle``, ``check_array``),
``model_selection`` (``train_test_split``, ``KFold``, ``GridSearchCV``) and
``contrib.joblib`` are described in docs/learn.md; ``mars.learn.base``
holds what every estimator shares.

The estimators are scikit-learn's own estimator classes, so scikit-learn is
needed here, and only here: it is the ``[learn]`` extra. Without it,
importing ``mars.learn`` says so; the rest of mars never imports it.
"""

from __future__ import annotations

import importlib.util

if importlib.util.find_spec("sklearn") is None:
    raise ImportError("mars.learn builds on scikit-learn, which is not installed: pip install 'pymars[learn]' "
                      "(mars.tensor and mars.dataframe work without it)")
