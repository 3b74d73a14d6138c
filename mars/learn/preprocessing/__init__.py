"""mars.learn.preprocessing: scikit-learn's scalers, encoders and feature maps on mars tensors.

>>> import numpy as np
>>> from mars.learn.preprocessing import StandardScaler
>>> StandardScaler().fit(np.array([[1.], [3.]])).mean_
array([2.])
"""

from __future__ import annotations

from ._encoders import OneHotEncoder
from ._label import LabelEncoder
from ._normalize import Normalizer, normalize
from ._polynomial import PolynomialFeatures
from ._scalers import MaxAbsScaler, MinMaxScaler, RobustScaler, StandardScaler

__all__ = ["LabelEncoder", "MaxAbsScaler", "MinMaxScaler", "Normalizer", "OneHotEncoder", "PolynomialFeatures",
           "RobustScaler", "StandardScaler", "normalize"]
