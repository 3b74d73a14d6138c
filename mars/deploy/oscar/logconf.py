"""Logging of a node process: a level and format, or a user's logging config file."""

from __future__ import annotations

import json
import logging
import logging.config
import os
import pathlib
from collections.abc import Mapping
from typing import Any

import yaml

from ...services.cluster.diagnostics import install_log_ring
from .config import ConfigError


def configure_logging(cfg: Mapping[str, Any], level_given: bool = False) -> None:
    """Set up the process's logging from a config's ``logging`` section.

    Parameters
    ----------
    cfg
        ``{"level": "INFO", "format": "...", "conf": path or None}``.
    level_given
        The user set the level explicitly (``--log-level``): it then also
        applies over a ``conf`` file's root level, because it was asked for last.

    Raises
    ------
    ConfigError
        When the ``conf`` file is missing or cannot be applied.

    Examples
    --------
    >>> configure_logging({"level": "ERROR", "format": "%(levelname)s %(message)s", "conf": None})
    >>> logging.getLogger().handlers[0].level == logging.ERROR   # the console; the dashboard's ring keeps INFO
    True
    """
    level = cfg.get("level") or "WARNING"
    if cfg.get("conf"):
        apply_logging_conf(cfg["conf"])
        if level_given:
            logging.getLogger().setLevel(level)
    else:
        # force: the process may have logged (and so configured a handler) before its flags were read
        logging.basicConfig(level=level, format=cfg.get("format") or logging.BASIC_FORMAT, force=True)
    # the dashboard shows a node's recent INFO records whatever the console shows
    install_log_ring(capture_info=True)


def apply_logging_conf(path: str | os.PathLike[str]) -> None:
    """Apply a logging config file: ``.yml``/``.yaml``/``.json`` by dictConfig, any other by fileConfig.

    Loggers that exist already (mars modules create theirs at import) stay
    enabled unless the file says otherwise.
    """
    path = pathlib.Path(path)
    if not path.is_file():
        raise ConfigError(f"logging config file {str(path)!r} does not exist")
    try:
        if path.suffix.lower() in (".yml", ".yaml", ".json"):
            text = path.read_text()
            conf = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
            if not isinstance(conf, dict):
                raise ValueError(f"it must hold a mapping, got {type(conf).__name__}")
            conf.setdefault("version", 1)
            conf.setdefault("disable_existing_loggers", False)
            logging.config.dictConfig(conf)
        else:  # .ini, .conf, .cfg: the format of the historic logging.conf
            logging.config.fileConfig(path, disable_existing_loggers=False)
    except Exception as e:  # noqa: BLE001 - a user's file can fail in any of logging's many ways
        raise ConfigError(f"logging config file {str(path)!r} cannot be applied: {type(e).__name__}: {e}") from e
