"""mars.learn: scikit-learn's API on mars tensors and DataFrames (issue 20).

Import the estimators from their modules, as in scikit-learn:
``from mars.learn.cluster import KMeans``.
"""

from __future__ import annotations
