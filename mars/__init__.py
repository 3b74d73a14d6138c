"""pymars: a distributed, lazy, chunked NumPy/pandas engine.

``import mars`` stays cheap: the engine's heavy parts (numpy, pandas, the
actor framework) load only when something that needs them is first used.

>>> import mars, mars.tensor as mt
>>> mars.new_session().run(mt.ones(3) * 2)
array([2., 2., 2.])
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0.dev0"

_LAZY = {
    "options": ("mars.core.options", "options"),
    "option_context": ("mars.core.options", "option_context"),
    "new_session": ("mars.session", "new_session"),
    "get_default_session": ("mars.session", "get_default_session"),
    "execute": ("mars.session", "execute"),
    "fetch": ("mars.session", "fetch"),
    "Session": ("mars.session", "Session"),
    "performance_report": ("mars.report", "performance_report"),
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'mars' has no attribute {name!r}") from None
    import importlib

    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
