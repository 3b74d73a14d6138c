"""Window families beside ``rolling``/``expanding`` (:mod:`mars.dataframe.window`): ``ewm`` and ``resample``.

Importing this package installs ``DataFrame.ewm`` / ``Series.ewm`` (:mod:`.ewm`,
with the state arithmetic in :mod:`.ewm_state`) and ``DataFrame.resample`` /
``Series.resample`` (:mod:`.resample`).
"""

from __future__ import annotations

from . import ewm as _ewm  # noqa: F401 - installs the methods
from . import resample as _resample  # noqa: F401 - installs DataFrame.resample / Series.resample
from . import upsample as _upsample  # noqa: F401 - installs Resampler.asfreq/ffill/bfill/nearest/interpolate

__all__: list[str] = []
