"""mars.tensor.special: scipy.special's functions over tensors.

Elementwise functions (``erf``, ``gammaln``, ``jv``, ``airy``, ...) are one op
family over a table of scipy names (see :mod:`.functions`); ``logsumexp``,
``softmax`` and ``log_softmax`` are tree reductions (see :mod:`.reductions`).
scipy is imported when one of them is first used, not with ``mars.tensor``.

>>> import mars.tensor as mt
>>> mt.special.gammaln(mt.tensor([1.0, 4.0])).execute().fetch().round(4)
array([0.    , 1.7918])
"""

from __future__ import annotations

from .functions import *  # noqa: F403 - re-exported through __all__
from .functions import __all__ as _functions_all
from .reductions import *  # noqa: F403 - re-exported through __all__
from .reductions import __all__ as _reductions_all

__all__ = [*_functions_all, *_reductions_all]
