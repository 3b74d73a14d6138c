"""Where ``Tileable.execute()`` finds its session.

The session implementation lives above this layer (``mars.session``); the
graph model only keeps which session is the default. When none is set, the
default factory named here makes one, the way an entry point would.
"""

from __future__ import annotations

import importlib
import threading
from typing import Any

_DEFAULT_FACTORY = "mars.session:new_session"
_lock = threading.Lock()
_default: Any = None


def get_default_session() -> Any:
    return _default


def set_default_session(session: Any) -> None:
    global _default
    _default = session


def resolve_session(session: Any = None) -> Any:
    """``session`` itself, else the default session, made on first use."""
    if session is not None:
        return session
    with _lock:
        if _default is None:
            module, name = _DEFAULT_FACTORY.split(":")
            getattr(importlib.import_module(module), name)(default=True)
        return _default
