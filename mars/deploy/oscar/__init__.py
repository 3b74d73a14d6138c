"""The distributed runtime's command lines and configuration.

``mars-supervisor``, ``mars-worker``, ``mars-scheduler`` and ``mars-web`` are
:mod:`.cmdline`; the shipped defaults are ``config.yml``, read through
:func:`load_config`. Nothing heavy is imported here: the node code loads
only when a node starts.
"""

from __future__ import annotations

from .config import ConfigError, deep_merge, load_config

__all__ = ["ConfigError", "deep_merge", "load_config"]
