"""More DataFrame/Series methods (issue 18): each module adds its methods when imported.

``eval`` and ``pivot`` are also top-level functions of ``mars.dataframe``.
"""

from __future__ import annotations

from . import carry, extremes, frame, rank, reshaping, series, stats  # noqa: F401
from . import align, more, time  # noqa: F401,E402  (added by the time/align/more helper)
from .frame import eval
from .reshaping import pivot

__all__ = ["eval", "pivot"]
