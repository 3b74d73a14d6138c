"""pymars: a distributed, lazy, chunked NumPy/pandas engine.

``import mars`` stays cheap: the engine's heavy parts (numpy, pandas, the
actor framework) load only when something that needs them is first used.
"""

from __future__ import annotations

__version__ = "0.1.0.dev0"

__all__ = ["__version__"]
