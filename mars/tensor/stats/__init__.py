"""mars.tensor.stats: scipy.stats' tests and descriptive statistics over tensors.

Statistics are tree reductions (means, variances, sums of terms) and the
p-values come from scipy's distributions applied to the reduced statistic;
the tests return scipy's result types holding lazy tensors (``res.fetch()``
gives them with numpy values). scipy is imported on first use.

>>> import mars.tensor as mt
>>> res = mt.stats.ttest_1samp(mt.tensor([1.0, 2.0, 3.0]), 2.0)
>>> float(res.statistic.fetch())
0.0
"""

from __future__ import annotations

from .chisquare import *  # noqa: F403 - re-exported through __all__
from .chisquare import __all__ as _chisquare_all
from .ks import *  # noqa: F403 - re-exported through __all__
from .ks import __all__ as _ks_all
from .moments import *  # noqa: F403 - re-exported through __all__
from .moments import __all__ as _moments_all
from .rank import *  # noqa: F403 - re-exported through __all__
from .rank import __all__ as _rank_all
from .results import (
    DescribeResult,
    KstestResult,
    Power_divergenceResult,
    Ttest_indResult,
    TtestResult,
)
from .ttest import *  # noqa: F403 - re-exported through __all__
from .ttest import __all__ as _ttest_all

__all__ = [
    *_ttest_all, *_chisquare_all, *_moments_all, *_ks_all, *_rank_all,
    "TtestResult", "Ttest_indResult", "KstestResult", "Power_divergenceResult", "DescribeResult",
]
