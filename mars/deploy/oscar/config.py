"""The configuration of a node: shipped YAML defaults, a user file over them, flags over both.

Every value is checked and normalized here (``"auto"``, ints, lists), so the
node code reads a dict whose shape it can trust. The check functions are also
the ``type=`` of the command-line flags, so a flag and a file key are held to
the same rule and fail with the same words.
"""

from __future__ import annotations

import copy
import difflib
import functools
import os
import pathlib
import re
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from ...services.cluster.resources import parse_memory_limit

DEFAULT_CONFIG_PATH = pathlib.Path(__file__).with_name("config.yml")

#: Sections holding one kind of node each; they share the address keys.
NODE_SECTIONS = ("supervisor", "worker", "web")


class ConfigError(ValueError):
    """A configuration file or value breaks a rule; the message names the key or flag."""


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """A new dict: ``base`` with ``override`` merged in, mappings key by key.

    Lists and other values in ``override`` replace those in ``base`` whole;
    neither argument is modified.

    Examples
    --------
    >>> deep_merge({"worker": {"n_cpu": "auto", "port": 0}}, {"worker": {"n_cpu": 4}})
    {'worker': {'n_cpu': 4, 'port': 0}}
    """
    merged = copy.deepcopy(dict(base))
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


@functools.lru_cache(maxsize=1)
def _default_text() -> str:
    return DEFAULT_CONFIG_PATH.read_text()


def default_config() -> dict[str, Any]:
    """The defaults shipped in the package (``mars/deploy/oscar/config.yml``), a fresh copy."""
    return yaml.safe_load(_default_text())


def read_config_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The mapping in a user's YAML file, its keys checked against the defaults.

    Raises
    ------
    ConfigError
        When the file is missing, is not YAML, is not a mapping, or holds a
        key the defaults do not have.
    """
    try:
        text = pathlib.Path(path).read_text()
    except OSError as e:
        raise ConfigError(f"cannot read config file {str(path)!r}: {e.strerror or e}") from e
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        where = getattr(e, "problem_mark", None)
        at = f" at line {where.line + 1}" if where is not None else ""
        raise ConfigError(f"config file {str(path)!r} is not valid YAML{at}") from e
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {str(path)!r} must hold a mapping of sections, got {type(data).__name__}")
    check_known_keys(data, default_config(), source=f"config file {str(path)!r}")
    return data


def check_known_keys(data: Mapping[str, Any], known: Mapping[str, Any], source: str, prefix: str = "") -> None:
    """Raise :class:`ConfigError` naming the first key of ``data`` that ``known`` lacks."""
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if key not in known:
            close = difflib.get_close_matches(str(key), [str(k) for k in known], n=1)
            hint = f" (did you mean {prefix}{close[0]!s}?)" if close else f" (known: {', '.join(map(str, known))})"
            raise ConfigError(f"{source}: unknown key {dotted!r}{hint}")
        if isinstance(known[key], Mapping):
            if not isinstance(value, Mapping):
                raise ConfigError(f"{source}: {dotted!r} must be a mapping of keys, got {value!r}")
            check_known_keys(value, known[key], source, prefix=f"{dotted}.")


def load_config(path: str | os.PathLike[str] | None = None, overrides: Mapping[str, Any] | None = None) -> dict:
    """The configuration of a node: package defaults, then ``path``, then ``overrides``.

    Parameters
    ----------
    path
        A YAML file overriding any default key; None for the defaults alone.
    overrides
        Values over the file (what the command-line flags set), same layout.

    Returns
    -------
    dict
        The merged configuration, every value checked and normalized.

    Raises
    ------
    ConfigError
        For an unknown key or a value that breaks its rule; the message names the key.

    Examples
    --------
    >>> cfg = load_config(overrides={"worker": {"n_cpu": "4", "spill_dirs": "/a:/b"}})
    >>> cfg["worker"]["n_cpu"], cfg["worker"]["spill_dirs"], cfg["worker"]["cache_mem"]
    (4, ['/a', '/b'], '40%')
    """
    cfg = default_config()
    if path is not None:
        cfg = deep_merge(cfg, read_config_file(path))
    if overrides:
        check_known_keys(overrides, cfg, source="config overrides")
        cfg = deep_merge(cfg, overrides)
    return validate_config(cfg)


def validate_config(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``cfg`` with each checked key normalized; :class:`ConfigError` names a bad one."""
    out = copy.deepcopy(dict(cfg))
    for dotted, check in _CHECKS.items():
        section, key = dotted.split(".")
        if key not in out.get(section, {}):
            continue
        try:
            out[section][key] = check(out[section][key])
        except ValueError as e:
            raise ConfigError(f"config key {dotted}: {e}") from None
    return out


# -- value rules: each returns the normalized value or raises ValueError saying what was wanted


def check_optional_port(value: Any) -> int | None:
    """A TCP port, 0 meaning a free one, None meaning none at all."""
    return None if value is None else check_port(value)


def check_port(value: Any) -> int:
    """A TCP port, 0 meaning a free one."""
    port = _as_int(value, "a port number (0 for a free port)")
    if not 0 <= port <= 65535:
        raise ValueError(f"must be a port number between 0 and 65535, got {value!r}")
    return port


def check_host(value: Any) -> str:
    """An address to bind: a host name or IP, without a port."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"must be a host name or IP address, got {value!r}")
    if value.count(":") == 1:  # one colon is host:port; IPv6 addresses have several
        raise ValueError(f"must be a host without a port (give the port with -p), got {value!r}")
    return value.strip()


def check_optional_host(value: Any) -> str | None:
    """An advertise address, or None for the bound host."""
    return None if value is None else check_host(value)


def check_addresses(value: Any) -> list[str]:
    """Node addresses: ``"h1:p1,h2:p2"`` or a list of ``"host:port"``."""
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)):
        raise ValueError(f"must be host:port addresses separated by commas, got {value!r}")
    addresses = []
    for item in items:
        item = str(item).strip()
        if not item:
            continue
        host, _, port = item.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) <= 65535:
            raise ValueError(f"must be host:port addresses separated by commas, got {item!r}")
        addresses.append(item)
    return addresses


def check_n_cpu(value: Any) -> int | str:
    """``"auto"`` (the cores available) or a positive number of cores."""
    if isinstance(value, str) and value.strip().lower() == "auto":
        return "auto"
    n = _as_int(value, "a positive integer or 'auto'")
    if n < 1:
        raise ValueError(f"must be a positive integer or 'auto', got {value!r}")
    return n


def check_non_negative_int(value: Any) -> int:
    """An integer of at least 0."""
    n = _as_int(value, "a non-negative integer")
    if n < 0:
        raise ValueError(f"must be a non-negative integer, got {value!r}")
    return n


def check_positive_float(value: Any) -> float:
    """A number of seconds above zero."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        x = -1.0
    if isinstance(value, bool) or not x > 0:
        raise ValueError(f"must be a positive number, got {value!r}")
    return x


def check_cuda_devices(value: Any) -> list[int] | str:
    """``"auto"`` (every visible device), ``""``/``[]`` (none) or device indices ``"0,1"``."""
    if isinstance(value, str) and value.strip().lower() in ("auto", "all"):
        return "auto"
    items = [s for s in value.split(",") if s.strip()] if isinstance(value, str) else value
    if isinstance(items, int) and not isinstance(items, bool):
        items = [items]
    if not isinstance(items, (list, tuple)):
        raise ValueError(f"must be device indices like 0,1 (empty for none, 'auto' for all), got {value!r}")
    devices = [_as_int(v, "device indices like 0,1 (empty for none, 'auto' for all)") for v in items]
    if any(d < 0 for d in devices) or len(set(devices)) != len(devices):
        raise ValueError(f"must be distinct non-negative device indices, got {value!r}")
    return devices


def check_mem(value: Any) -> int | float | str:
    """A memory limit as the worker reads it: ``"4g"``, ``"512m"``, bytes, ``"50%"`` or a fraction in (0, 1]."""
    # the worker's own parser is the rule, checked against a nominal total: only the form and range matter
    parse_memory_limit(value, total=1 << 40)
    return value.strip().lower() if isinstance(value, str) else value


def check_dirs(value: Any) -> list[str]:
    """Directories: ``"a:b"`` (``os.pathsep``) or a list; ``~`` expanded."""
    items = value.split(os.pathsep) if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(d, str) for d in items):
        raise ValueError(f"must be directories separated by {os.pathsep!r}, got {value!r}")
    return [os.path.expanduser(d.strip()) for d in items if d.strip()]


def check_use_uvloop(value: Any) -> str:
    """``"auto"``, ``"yes"`` or ``"no"`` (YAML booleans become yes/no)."""
    word = ("yes" if value else "no") if isinstance(value, bool) else str(value).strip().lower()
    word = {"true": "yes", "1": "yes", "false": "no", "0": "no"}.get(word, word)
    if word not in ("auto", "yes", "no"):
        raise ValueError(f"must be one of auto, yes, no, got {value!r}")
    return word


def check_start_method(value: Any) -> str:
    """How a worker starts its sub pool processes: ``spawn`` (fresh interpreters) or ``fork``."""
    word = str(value).strip().lower()
    if word not in ("spawn", "fork", "forkserver"):
        raise ValueError(f"must be one of spawn, fork, forkserver, got {value!r}")
    return word


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def check_log_level(value: Any) -> str:
    """A logging level name, any case."""
    name = str(value).strip().upper()
    name = "WARNING" if name == "WARN" else name
    if name not in LOG_LEVELS:
        raise ValueError(f"must be one of {', '.join(n.lower() for n in LOG_LEVELS)}, got {value!r}")
    return name


def check_bool(value: Any) -> bool:
    """A YAML boolean."""
    if not isinstance(value, bool):
        raise ValueError(f"must be true or false, got {value!r}")
    return value


def check_optional_str(value: Any) -> str | None:
    """None or a non-empty string."""
    if value is not None and (not isinstance(value, str) or not value):
        raise ValueError(f"must be a non-empty string or null, got {value!r}")
    return value


def check_optional_file(value: Any) -> str | None:
    """None, or the path of a file that exists."""
    path = check_optional_str(value)
    if path is not None and not os.path.isfile(path):
        raise ValueError(f"must name an existing file, got {value!r}")
    return path


def check_positive_int(value: Any) -> int:
    """A whole number above 0."""
    number = _as_int(value, "a positive whole number")
    if number <= 0:
        raise ValueError(f"must be a positive whole number, got {value!r}")
    return number


def check_str_list(value: Any) -> list[str]:
    """A list of non-empty strings (or one string of them separated by commas)."""
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"must be a list of non-empty strings, got {value!r}")
    return value


def check_str(value: Any) -> str:
    """A string."""
    if not isinstance(value, str):
        raise ValueError(f"must be a string, got {value!r}")
    return value


def _as_int(value: Any, wanted: str) -> int:
    if isinstance(value, bool):
        raise ValueError(f"must be {wanted}, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"\s*[-+]?\d+\s*", value):
        return int(value)
    raise ValueError(f"must be {wanted}, got {value!r}")


def _build_checks() -> dict[str, Callable[[Any], Any]]:
    checks: dict[str, Callable[[Any], Any]] = {
        "cluster.heartbeat_interval": check_positive_float,
        "cluster.worker_timeout": check_positive_float,
        "task.no_worker_timeout": check_positive_float,
        "task.no_worker_warning": check_positive_float,
        "task.max_retries": check_non_negative_int,
        "supervisor.web": check_bool,
        "supervisor.web_port": check_optional_port,  # null: no web service, as web: false
        "supervisor.session_history": check_non_negative_int,
        "worker.n_cpu": check_n_cpu,
        "worker.n_io_process": check_non_negative_int,
        "worker.metrics_port": check_optional_port,  # null: the supervisor's /metrics carries this worker  # 0: the main pool serves transfers itself
        "worker.slots_in_process": check_bool,
        "worker.cancel_grace": check_positive_float,
        "worker.cuda_devices": check_cuda_devices,
        "worker.cache_mem": check_mem,
        "worker.phy_mem": check_mem,
        "worker.spill_dirs": check_dirs,
        "security.token": check_optional_str,
        "security.metrics_token": check_optional_str,
        "security.token_file": check_optional_file,
        "security.insecure": check_bool,
        "security.tls_cert": check_optional_file,
        "security.tls_key": check_optional_file,
        "security.tls_ca": check_optional_file,
        "web.max_body": check_positive_int,
        "web.header_timeout": check_positive_float,
        "web.keepalive_timeout": check_positive_float,
        "web.allow_origins": check_str_list,
        "web.allow_hosts": check_str_list,
        "oscar.use_uvloop": check_use_uvloop,
        "oscar.start_method": check_start_method,
        "logging.level": check_log_level,
        "logging.format": check_str,
        "logging.conf": check_optional_str,
    }
    for section in NODE_SECTIONS:
        checks[f"{section}.host"] = check_host
        checks[f"{section}.port"] = check_port
        checks[f"{section}.supervisors"] = check_addresses
        checks[f"{section}.advertise_address"] = check_optional_host
    return checks


_CHECKS = _build_checks()
