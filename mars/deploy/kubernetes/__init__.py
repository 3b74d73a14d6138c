"""``python -m mars.deploy.kubernetes.<role>``: the command lines of a pod.

The same flags as ``mars-<role>``, with defaults taken from the environment
the pod spec sets: flags typed on the command line still win, because they
come after these in the argument list.

====================================  ==============================  ===================
environment variable                  flag                            roles
====================================  ==============================  ===================
MARS_K8S_POD_IP, MARS_CONTAINER_IP    ``-a`` (and the host bound)     all
MARS_SUPERVISOR_ADDRESSES,            ``-s``                          all
MARS_SCHEDULER_ADDRESSES
MARS_K8S_SERVICE_PORT                 ``-p``                          all
MARS_WEB_PORT                         ``-w``                          supervisor
MARS_CPU_TOTAL                        ``--n-cpu`` (rounded up)        worker
MARS_CACHE_MEM_SIZE                   ``--cache-mem``                 worker
MARS_SPILL_DIRS                       ``--spill-dirs``                worker
====================================  ==============================  ===================
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Mapping, Sequence

from ..oscar.cmdline import main as _cmdline_main

_ALL = ("supervisor", "scheduler", "worker", "web")

#: (environment variables, first set wins; flag; roles taking it)
ENV_FLAGS: tuple[tuple[tuple[str, ...], str, tuple[str, ...]], ...] = (
    (("MARS_K8S_POD_IP", "MARS_CONTAINER_IP"), "-a", _ALL),
    (("MARS_SUPERVISOR_ADDRESSES", "MARS_SCHEDULER_ADDRESSES"), "-s", _ALL),
    (("MARS_K8S_SERVICE_PORT",), "-p", _ALL),
    (("MARS_WEB_PORT",), "-w", ("supervisor",)),
    (("MARS_CPU_TOTAL",), "--n-cpu", ("worker",)),
    (("MARS_CACHE_MEM_SIZE",), "--cache-mem", ("worker",)),
    (("MARS_SPILL_DIRS",), "--spill-dirs", ("worker",)),
)


def env_argv(role: str, environ: Mapping[str, str]) -> list[str]:
    """The flags the pod's environment stands for.

    Examples
    --------
    >>> env_argv("worker", {"MARS_K8S_POD_IP": "10.1.2.3", "MARS_CPU_TOTAL": "2.5"})
    ['-a', '10.1.2.3', '--n-cpu', '3']
    """
    argv: list[str] = []
    for names, flag, roles in ENV_FLAGS:
        value = next((environ[n] for n in names if environ.get(n)), None)
        if value is None or role not in roles:
            continue
        if flag == "--n-cpu":  # a pod's CPU limit may be fractional: rounded up, as --n-cpu auto reads a quota
            try:
                value = str(max(1, math.ceil(float(value))))
            except ValueError:
                pass  # left as is, so the flag check reports it
        argv += [flag, value]
    return argv


def main(role: str, argv: Sequence[str] | None = None) -> int:
    """Run ``mars-<role>`` with the environment's flags before ``argv`` (``sys.argv[1:]`` when None)."""
    typed = list(sys.argv[1:] if argv is None else argv)
    return _cmdline_main(role, env_argv(role, os.environ) + typed)
