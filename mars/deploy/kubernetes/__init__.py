"""``python -m mars.deploy.kubernetes.<role>``: the command lines of a pod.

The same flags as ``mars-<role>``, with defaults taken from the environment
the pod spec sets: flags typed on the command line still win, because they
come after these in the argument list. Two sets of names are read: our own,
and those KubeDL's ``MarsJob`` controller injects (docs/kubernetes.md).

KubeDL describes the job in one JSON variable, ``MARS_CLUSTER_DETAIL`` (or
``MARS_TASK_DETAIL``): :func:`cluster_detail` reads it into the facts named
``<detail>.*`` below, which the table then treats like any variable.

==========================================  ============================  ===================
environment variable (first set wins)       flag                          roles
==========================================  ============================  ===================
MARS_BIND_PORT                              ``-H 0.0.0.0``                all
MARS_K8S_POD_IP, MARS_CONTAINER_IP          ``-a`` (and the host bound)   all
MARS_SUPERVISOR_ADDRESSES,                  ``-s``                        all
MARS_SCHEDULER_ADDRESSES,
<detail>.supervisors
MARS_K8S_SERVICE_PORT, MARS_BIND_PORT       ``-p``                        all
MARS_WEB_PORT, MARS_K8S_SUPERVISOR_WEB_PORT ``-w``                        supervisor
<detail>.cpu_procs, MARS_CPU_TOTAL          ``--n-cpu`` (rounded up)      worker
<detail>.phy_mem, MARS_MEMORY_TOTAL         ``--phy-mem``                 worker
MARS_CACHE_MEM_SIZE                         ``--cache-mem``               worker
MARS_SPILL_DIRS                             ``--spill-dirs`` (commas too) worker
MARS_TOKEN_FILE                             ``--token-file``              all
==========================================  ============================  ===================

``MARS_TOKEN`` needs no flag: the nodes read it themselves (docs/security.md).

From Python: :func:`new_cluster` starts a cluster on Kubernetes through the
official client (the ``[kubernetes]`` extra, imported only then), and
:func:`manifests` prints the same objects, or a KubeDL ``MarsJob``, as YAML.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..oscar.cmdline import main as _cmdline_main
from .client import KubernetesCluster, new_cluster  # noqa: F401 - the package's API
from .objects import manifests  # noqa: F401 - the package's API

_ALL = ("supervisor", "scheduler", "worker", "web")
_SUPERVISOR_ROLES = ("supervisor", "scheduler")


class PodEnvError(ValueError):
    """A variable of the pod's environment cannot stand for its flag; the message names it (exit code 2)."""


#: the JSON variables that describe a KubeDL job, first set wins, with the unit of their ``phy_mem``:
#: KubeDL's controller writes bytes in MARS_CLUSTER_DETAIL and MiB in MARS_TASK_DETAIL
DETAIL_VARIABLES: tuple[tuple[str, int], ...] = (("MARS_CLUSTER_DETAIL", 1), ("MARS_TASK_DETAIL", 1 << 20))
#: the keys of ``cluster`` that list the supervisors, by the name each Mars version gave them
SUPERVISOR_KEYS = ("supervisor", "scheduler")

#: variables that KubeDL's memory tuning policy sets and that mean nothing here: why, for the log
NOT_NEEDED: dict[str, str] = {
    "MARS_PLASMA_DIRS": "there is no plasma store: chunks live in the worker's shared memory, sized by --cache-mem",
    "MARS_LOCK_FREE_FILEIO": "spill files take no locks: each worker writes only under a directory of its own in "
    "each spill dir",
}


def _as_is(value: str, name: str) -> str:
    return value


def _any_interface(value: str, name: str) -> str:
    # a pod is reached at its IP, and its probes at that IP too: listen on every interface of the pod
    return "0.0.0.0"


def _cpu_count(value: str, name: str) -> str:
    """A pod's CPU limit may be fractional: rounded up, as ``--n-cpu auto`` reads a quota, and at least 1."""
    try:
        return str(max(1, math.ceil(float(value))))
    except ValueError:
        raise PodEnvError(f"{name} must be a number of CPUs, got {value!r}") from None


def _path_list(value: str, name: str) -> str:
    # KubeDL joins the spill dirs with commas, Mars's own deployers with os.pathsep
    return os.pathsep.join(d.strip() for d in value.replace(",", os.pathsep).split(os.pathsep) if d.strip())


#: (environment variables, first set wins; flag; roles taking it; how the value becomes the flag's)
ENV_FLAGS: tuple[tuple[tuple[str, ...], str, tuple[str, ...], Callable[[str, str], str]], ...] = (
    (("MARS_BIND_PORT",), "-H", _ALL, _any_interface),
    (("MARS_K8S_POD_IP", "MARS_CONTAINER_IP"), "-a", _ALL, _as_is),
    (("MARS_SUPERVISOR_ADDRESSES", "MARS_SCHEDULER_ADDRESSES", "<detail>.supervisors"), "-s", _ALL, _as_is),
    (("MARS_K8S_SERVICE_PORT", "MARS_BIND_PORT"), "-p", _ALL, _as_is),
    (("MARS_WEB_PORT", "MARS_K8S_SUPERVISOR_WEB_PORT"), "-w", ("supervisor",), _as_is),
    (("<detail>.cpu_procs", "MARS_CPU_TOTAL"), "--n-cpu", ("worker",), _cpu_count),
    (("<detail>.phy_mem", "MARS_MEMORY_TOTAL"), "--phy-mem", ("worker",), _as_is),
    (("MARS_CACHE_MEM_SIZE",), "--cache-mem", ("worker",), _as_is),
    (("MARS_SPILL_DIRS",), "--spill-dirs", ("worker",), _path_list),
    (("MARS_TOKEN_FILE",), "--token-file", _ALL, _as_is),
)


def _detail_json(environ: Mapping[str, str]) -> tuple[str, int, dict[str, Any]] | None:
    """(variable, unit of phy_mem, its parsed object) of the first detail variable set."""
    for name, unit in DETAIL_VARIABLES:
        text = environ.get(name)
        if not text:
            continue
        try:
            detail = json.loads(text)
        except ValueError as e:
            raise PodEnvError(f"{name} is not valid JSON: {e}") from None
        if not isinstance(detail, dict):
            raise PodEnvError(f"{name} must be a JSON object with 'cluster' and 'task', got {type(detail).__name__}")
        return name, unit, detail
    return None


def _part(name: str, detail: dict[str, Any], key: str) -> dict[str, Any]:
    part = detail.get(key, {})
    if not isinstance(part, dict):
        raise PodEnvError(f"{name}: '{key}' must be an object, got {json.dumps(part)}")
    return part


def _int_field(name: str, where: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value != int(value):
        raise PodEnvError(f"{name}: '{where}' must be a non-negative integer, got {json.dumps(value)}")
    return int(value)


def _supervisors(name: str, cluster: dict[str, Any], task: dict[str, Any], role: str,
                 environ: Mapping[str, str]) -> list[str]:
    key = next((k for k in SUPERVISOR_KEYS if k in cluster), None)
    if key is None:
        return []
    addresses = cluster[key]
    if not isinstance(addresses, list) or not all(isinstance(a, str) and a.rpartition(":")[2].isdigit()
                                                  for a in addresses):
        raise PodEnvError(f"{name}: 'cluster.{key}' must be a list of 'host:port', got {json.dumps(addresses)}")
    own_ip = environ.get("MARS_K8S_POD_IP") or environ.get("MARS_CONTAINER_IP")
    index = task.get("index", 0)
    if role in _SUPERVISOR_ROLES and own_ip and isinstance(index, int) and 0 <= index < len(addresses):
        # the list names this supervisor by its DNS name, which it does not know for its own: by the
        # address it advertises instead, so that it counts itself once
        addresses = list(addresses)
        addresses[index] = f"{own_ip}:{addresses[index].rpartition(':')[2]}"
    return addresses


def cluster_detail(role: str, environ: Mapping[str, str]) -> dict[str, str]:
    """The ``<detail>.*`` facts of KubeDL's ``MARS_CLUSTER_DETAIL`` (or ``MARS_TASK_DETAIL``), as strings.

    Raises
    ------
    PodEnvError
        The variable is not JSON of the expected shape; the message names the variable and the part.

    Examples
    --------
    >>> detail = ('{"cluster": {"scheduler": ["job-scheduler-0.ns.svc:11111"]}, '
    ...           '"task": {"type": "worker", "index": 0, "resources": {"cpu_procs": 2, "phy_mem": 2147483648}}}')
    >>> cluster_detail("worker", {"MARS_CLUSTER_DETAIL": detail})  # doctest: +NORMALIZE_WHITESPACE
    {'<detail>.supervisors': 'job-scheduler-0.ns.svc:11111', '<detail>.cpu_procs': '2',
     '<detail>.phy_mem': '2147483648'}
    >>> cluster_detail("web", {"MARS_CLUSTER_DETAIL": '{"cluster": {"scheduler": "a:1"}}'})
    Traceback (most recent call last):
    ...
    mars.deploy.kubernetes.PodEnvError: MARS_CLUSTER_DETAIL: 'cluster.scheduler' must be a list of 'host:port', got "a:1"
    """
    found = _detail_json(environ)
    if found is None:
        return {}
    name, unit, detail = found
    cluster, task = _part(name, detail, "cluster"), _part(name, detail, "task")
    resources = task.get("resources") or {}
    if not isinstance(resources, dict):
        raise PodEnvError(f"{name}: 'task.resources' must be an object, got {json.dumps(resources)}")
    facts: dict[str, str] = {}
    supervisors = _supervisors(name, cluster, task, role, environ)
    if supervisors:
        facts["<detail>.supervisors"] = ",".join(supervisors)
    if resources.get("cpu_procs"):
        facts["<detail>.cpu_procs"] = str(_int_field(name, "task.resources.cpu_procs", resources["cpu_procs"]))
    if resources.get("phy_mem"):
        facts["<detail>.phy_mem"] = str(_int_field(name, "task.resources.phy_mem", resources["phy_mem"]) * unit)
    return facts


def env_argv(role: str, environ: Mapping[str, str]) -> list[str]:
    """The flags the pod's environment stands for.

    Raises
    ------
    PodEnvError
        A variable's value cannot stand for its flag; the message names the variable.

    Examples
    --------
    >>> env_argv("worker", {"MARS_K8S_POD_IP": "10.1.2.3", "MARS_CPU_TOTAL": "2.5"})
    ['-a', '10.1.2.3', '--n-cpu', '3']
    >>> env_argv("worker", {"MARS_BIND_PORT": "11111", "MARS_CONTAINER_IP": "10.1.2.4",
    ...                     "MARS_SPILL_DIRS": "/spill/a,/spill/b", "MARS_CACHE_MEM_SIZE": "1073741824",
    ...                     "MARS_CLUSTER_DETAIL": '{"cluster": {"scheduler": ["s-0.ns.svc:11111"]}, '
    ...                                            '"task": {"type": "worker", "index": 0}}'})
    ... # doctest: +NORMALIZE_WHITESPACE
    ['-H', '0.0.0.0', '-a', '10.1.2.4', '-s', 's-0.ns.svc:11111', '-p', '11111',
     '--cache-mem', '1073741824', '--spill-dirs', '/spill/a:/spill/b']
    """
    view = {**environ, **cluster_detail(role, environ)}
    argv: list[str] = []
    for names, flag, roles, convert in ENV_FLAGS:
        name = next((n for n in names if view.get(n)), None)
        if name is None or role not in roles:
            continue
        argv += [flag, convert(view[name], name)]
    return argv


def not_needed(role: str, environ: Mapping[str, str]) -> list[str]:
    """The lines to log for the variables set that this Mars does without, and why.

    Examples
    --------
    >>> not_needed("worker", {"MARS_LOCK_FREE_FILEIO": "1"})  # doctest: +ELLIPSIS
    ['MARS_LOCK_FREE_FILEIO=1 is accepted and not needed: spill files take no locks: ...']
    """
    if role != "worker":
        return []
    return [f"{name}={environ[name]} is accepted and not needed: {why}"
            for name, why in NOT_NEEDED.items() if environ.get(name)]


def main(role: str, argv: Sequence[str] | None = None) -> int:
    """Run ``mars-<role>`` with the environment's flags before ``argv`` (``sys.argv[1:]`` when None)."""
    typed = list(sys.argv[1:] if argv is None else argv)
    try:
        from_env = env_argv(role, os.environ)
    except PodEnvError as e:
        print(f"mars-{role}: error: {e}", file=sys.stderr)
        return 2
    for line in not_needed(role, os.environ):
        # logging is configured only once the flags are read: the line goes to stderr as it stands
        print(f"mars-{role}: {line}", file=sys.stderr)
    return _cmdline_main(role, from_env + typed)
