"""The Kubernetes objects of a Mars cluster, as plain dicts: what ``new_cluster`` creates and ``manifests`` prints.

One cluster in one namespace (docs/kubernetes.md):

- ``Secret/mars-token``: the cluster's token, given to every container as ``MARS_TOKEN``.
- ``ConfigMap/mars-config``: the supervisors' ``-f`` file (the Host names their web service answers to).
- ``StatefulSet/mars-supervisor`` and its headless ``Service/mars-supervisor``: supervisors with stable
  names (``mars-supervisor-<i>.mars-supervisor.<ns>.svc``), the same list on every node, as several
  supervisors need (docs/cluster.md, "Several supervisors").
- ``Service/mars-web``: the web port of the supervisors, for clients.
- ``Deployment/mars-worker``: the workers, sized by their container's limits (read through the
  downward API, so editing the limits in the YAML resizes them).

Every container runs ``python -m mars.deploy.kubernetes.<role>``, which reads the variables set here
(the table in :mod:`mars.deploy.kubernetes`). Nothing here needs the ``kubernetes`` package.
"""

from __future__ import annotations

import dataclasses
import re
import secrets
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

import yaml

from ... import __version__

#: the image the manifests name unless told otherwise: the Dockerfile at the repository root, tagged so by `make image`
DEFAULT_IMAGE = f"pymars:{__version__}"
SUPERVISOR_PORT = 7001
WORKER_PORT = 7003
DEFAULT_WEB_PORT = 7005
#: KubeDL's MarsJob: the container name and port its controller expects
KUBEDL_CONTAINER = "mars"
KUBEDL_PORT = 11111
KUBEDL_API_VERSION = "training.kubedl.io/v1alpha1"

SUPERVISOR = "mars-supervisor"
WORKER = "mars-worker"
WEB_SERVICE = "mars-web"
TOKEN_SECRET = "mars-token"
CONFIG_MAP = "mars-config"
CONFIG_DIR = "/etc/mars"
SHM_VOLUME = "dshm"
LABEL_NAME = "app.kubernetes.io/name"
LABEL_COMPONENT = "app.kubernetes.io/component"
LABEL_PART = "app.kubernetes.io/part-of"
SERVICE_TYPES = ("ClusterIP", "NodePort", "LoadBalancer")

_BINARY = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50, "Ei": 1 << 60}
_DECIMAL = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1), "k": Decimal(10**3),
            "M": Decimal(10**6), "G": Decimal(10**9), "T": Decimal(10**12), "P": Decimal(10**15),
            "E": Decimal(10**18)}
_QUANTITY = re.compile(r"^([+-]?[0-9.]+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$")


def parse_quantity(value: str | float, what: str = "quantity") -> Decimal:
    """A Kubernetes resource quantity (``"4Gi"``, ``"500m"``, ``2``) as a number.

    Examples
    --------
    >>> parse_quantity("4Gi"), parse_quantity("500m"), parse_quantity(2)
    (Decimal('4294967296'), Decimal('0.500'), Decimal('2'))
    >>> parse_quantity("4gb", "worker_mem")
    Traceback (most recent call last):
    ...
    ValueError: worker_mem must be a Kubernetes quantity like 4Gi, 512Mi or 2, got '4gb'
    """
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError(  # noqa: TRY004 - one error for every bad quantity, as the API server gives
            f"{what} must be a Kubernetes quantity like 4Gi, 512Mi or 2, got {value!r}")
    m = _QUANTITY.match(str(value).strip())
    try:
        number = Decimal(m.group(1)) if m else None
    except InvalidOperation:
        number = None
    if m is None or number is None or number < 0:
        raise ValueError(f"{what} must be a Kubernetes quantity like 4Gi, 512Mi or 2, got {value!r}")
    suffix = m.group(2) or ""
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix[:1] in ("e", "E") and len(suffix) > 1:
        return number * Decimal(10) ** int(suffix[1:])
    return number * _DECIMAL[suffix]


def _cache_mem(value: int | str | None) -> str | None:
    """``worker_cache_mem`` as ``--cache-mem`` takes it: bytes, or a share of the worker's memory like ``50%``."""
    if value is None:
        return None
    if isinstance(value, str) and re.fullmatch(r"\d+(\.\d+)?%", value.strip()):
        if not 0 < float(value.strip()[:-1]) <= 100:
            raise ValueError(f"worker_cache_mem must be a share between 0% and 100%, got {value!r}")
        return value.strip()
    return str(int(parse_quantity(value, "worker_cache_mem")))


@dataclasses.dataclass
class ClusterSpec:
    """The arguments of :func:`manifests` and ``new_cluster``, checked; each names itself when wrong."""

    namespace: str = "mars"
    image: str = DEFAULT_IMAGE
    supervisor_num: int = 1
    worker_num: int = 2
    worker_cpu: float | str = 2
    worker_mem: str = "4Gi"
    worker_cache_mem: int | str | None = None
    worker_spill_paths: Sequence[str] | None = None
    web_port: int = DEFAULT_WEB_PORT
    supervisor_cpu: float | str = 1
    supervisor_mem: str = "2Gi"
    web_service_type: str = "NodePort"
    web_allow_hosts: Sequence[str] = ()
    image_pull_policy: str = "IfNotPresent"
    token: str = dataclasses.field(default_factory=lambda: secrets.token_urlsafe(32), repr=False)

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", str(self.namespace)):
            raise ValueError(f"namespace must be a DNS label (lower-case letters, digits, '-'), got {self.namespace!r}")
        for name, least in (("supervisor_num", 1), ("worker_num", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{name} must be an int >= {least}, got {value!r}")
        if isinstance(self.web_port, bool) or not isinstance(self.web_port, int) or not 0 < self.web_port < 65536:
            raise ValueError(f"web_port must be a port number between 1 and 65535, got {self.web_port!r}")
        if self.web_port in (SUPERVISOR_PORT, WORKER_PORT):
            raise ValueError(f"web_port must differ from the actor ports {SUPERVISOR_PORT} and {WORKER_PORT}, "
                             f"got {self.web_port}")
        for name in ("worker_cpu", "supervisor_cpu", "worker_mem", "supervisor_mem"):
            if parse_quantity(getattr(self, name), name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)!r}")
        if self.web_service_type not in SERVICE_TYPES:
            raise ValueError(f"web_service_type must be one of {', '.join(SERVICE_TYPES)}, "
                             f"got {self.web_service_type!r}")
        self.cache_mem = _cache_mem(self.worker_cache_mem)
        paths = list(self.worker_spill_paths or [])
        if not all(isinstance(p, str) and p.startswith("/") for p in paths):
            raise ValueError(f"worker_spill_paths must be absolute paths in the container, got {paths!r}")
        self.spill_paths = paths
        if not self.token or not isinstance(self.token, str):
            raise ValueError("token must be a non-empty string")

    @property
    def supervisor_addresses(self) -> list[str]:
        """Every supervisor by its stable name, as all nodes list them."""
        return [f"{SUPERVISOR}-{i}.{SUPERVISOR}.{self.namespace}.svc:{SUPERVISOR_PORT}"
                for i in range(self.supervisor_num)]


def _labels(component: str) -> dict[str, str]:
    return {LABEL_NAME: "mars", LABEL_PART: "pymars", LABEL_COMPONENT: component}


def _meta(name: str, spec: ClusterSpec, component: str) -> dict[str, Any]:
    return {"name": name, "namespace": spec.namespace, "labels": _labels(component)}


def _resources(cpu: Any, mem: str) -> dict[str, Any]:
    amounts = {"cpu": str(cpu), "memory": str(mem)}
    return {"requests": dict(amounts), "limits": dict(amounts)}


def _field(name: str, path: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def _token_env() -> dict[str, Any]:
    return {"name": "MARS_TOKEN", "valueFrom": {"secretKeyRef": {"name": TOKEN_SECRET, "key": "token"}}}


def _pod_env(spec: ClusterSpec, port: int) -> list[dict[str, Any]]:
    return [{"name": "MARS_BIND_PORT", "value": str(port)}, _field("MARS_K8S_POD_NAME", "metadata.name"),
            _field("MARS_K8S_POD_NAMESPACE", "metadata.namespace"),
            {"name": "MARS_SUPERVISOR_ADDRESSES", "value": ",".join(spec.supervisor_addresses)}, _token_env()]


def token_secret(spec: ClusterSpec) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": _meta(TOKEN_SECRET, spec, "token"), "stringData": {"token": spec.token}}


def config_map(spec: ClusterSpec, hosts: Sequence[str] | None = None) -> dict[str, Any]:
    """The web service's config file: the Host names it answers to (the ``mars-web`` Service's by default),
    and ``web_allow_hosts``."""
    ns = spec.namespace
    if hosts is None:
        hosts = [WEB_SERVICE, f"{WEB_SERVICE}.{ns}", f"{WEB_SERVICE}.{ns}.svc", f"{WEB_SERVICE}.{ns}.svc.cluster.local"]
    hosts = [*hosts, *spec.web_allow_hosts]
    text = yaml.safe_dump({"web": {"allow_hosts": hosts}}, sort_keys=False, default_flow_style=False)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(CONFIG_MAP, spec, "config"),
            "data": {"config.yml": text}}


def _supervisor_container(spec: ClusterSpec) -> dict[str, Any]:
    health = {"httpGet": {"path": "/api/health", "port": spec.web_port}, "periodSeconds": 5, "timeoutSeconds": 5}
    return {
        "name": "supervisor", "image": spec.image, "imagePullPolicy": spec.image_pull_policy,
        "command": ["python", "-m", "mars.deploy.kubernetes.supervisor"],
        # advertised by its stable name, so that its own entry in MARS_SUPERVISOR_ADDRESSES names it
        "args": ["-a", f"$(MARS_K8S_POD_NAME).{SUPERVISOR}.$(MARS_K8S_POD_NAMESPACE).svc",
                 "-f", f"{CONFIG_DIR}/config.yml"],
        "env": [*_pod_env(spec, SUPERVISOR_PORT), {"name": "MARS_WEB_PORT", "value": str(spec.web_port)}],
        "ports": [{"name": "mars", "containerPort": SUPERVISOR_PORT},
                  {"name": "web", "containerPort": spec.web_port}],
        "readinessProbe": health,
        "livenessProbe": {**health, "initialDelaySeconds": 30, "failureThreshold": 6},
        "resources": _resources(spec.supervisor_cpu, spec.supervisor_mem),
        "volumeMounts": [{"name": "config", "mountPath": CONFIG_DIR, "readOnly": True}],
    }


def supervisor_statefulset(spec: ClusterSpec) -> dict[str, Any]:
    labels = _labels("supervisor")
    return {
        "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": _meta(SUPERVISOR, spec, "supervisor"),
        "spec": {
            "replicas": spec.supervisor_num, "serviceName": SUPERVISOR,
            "podManagementPolicy": "Parallel",  # supervisors find each other: none waits for another to be ready
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {
                "containers": [_supervisor_container(spec)],
                "volumes": [{"name": "config", "configMap": {"name": CONFIG_MAP}}]}},
        },
    }


def _worker_container(spec: ClusterSpec) -> dict[str, Any]:
    env = [*_pod_env(spec, WORKER_PORT), _field("MARS_CONTAINER_IP", "status.podIP")]
    # the limits of the container size the worker: --n-cpu (rounded up) and --phy-mem
    for name, resource in (("MARS_CPU_TOTAL", "limits.cpu"), ("MARS_MEMORY_TOTAL", "limits.memory")):
        env.append({"name": name, "valueFrom": {"resourceFieldRef": {"containerName": "worker", "resource": resource}}})
    if spec.cache_mem is not None:
        env.append({"name": "MARS_CACHE_MEM_SIZE", "value": spec.cache_mem})
    if spec.spill_paths:
        env.append({"name": "MARS_SPILL_DIRS", "value": ",".join(spec.spill_paths)})
    mounts = [{"name": SHM_VOLUME, "mountPath": "/dev/shm"}]
    mounts += [{"name": f"spill-{i}", "mountPath": p} for i, p in enumerate(spec.spill_paths)]
    return {
        "name": "worker", "image": spec.image, "imagePullPolicy": spec.image_pull_policy,
        "command": ["python", "-m", "mars.deploy.kubernetes.worker"], "env": env,
        "ports": [{"name": "mars", "containerPort": WORKER_PORT}],
        # ready once a supervisor lists it alive
        "readinessProbe": {"exec": {"command": ["python", "-m", "mars.deploy.kubernetes.probe"]},
                           "periodSeconds": 5, "timeoutSeconds": 10},
        "livenessProbe": {"tcpSocket": {"port": WORKER_PORT}, "initialDelaySeconds": 30, "periodSeconds": 10},
        "resources": _resources(spec.worker_cpu, spec.worker_mem),
        "volumeMounts": mounts,
    }


def worker_deployment(spec: ClusterSpec) -> dict[str, Any]:
    labels = _labels("worker")
    # chunks live in shared memory: /dev/shm as large as the worker's memory (a container's default is 64 MiB)
    volumes = [{"name": SHM_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": str(spec.worker_mem)}}]
    volumes += [{"name": f"spill-{i}", "emptyDir": {}} for i in range(len(spec.spill_paths))]
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(WORKER, spec, "worker"),
        "spec": {"replicas": spec.worker_num, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels}, "spec": {
                     "containers": [_worker_container(spec)], "volumes": volumes,
                     "terminationGracePeriodSeconds": 30}}},
    }


def supervisor_service(spec: ClusterSpec) -> dict[str, Any]:
    """Headless: it gives each supervisor pod its DNS name, published before the pod is ready."""
    return {"apiVersion": "v1", "kind": "Service", "metadata": _meta(SUPERVISOR, spec, "supervisor"),
            "spec": {"clusterIP": "None", "publishNotReadyAddresses": True, "selector": _labels("supervisor"),
                     "ports": [{"name": "mars", "port": SUPERVISOR_PORT, "targetPort": SUPERVISOR_PORT}]}}


def web_service(spec: ClusterSpec) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": _meta(WEB_SERVICE, spec, "web"),
            "spec": {"type": spec.web_service_type, "selector": _labels("supervisor"),
                     "ports": [{"name": "web", "port": spec.web_port, "targetPort": spec.web_port}]}}


def namespace_object(spec: ClusterSpec) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": spec.namespace, "labels": {LABEL_PART: "pymars"}}}


def cluster_objects(spec: ClusterSpec, with_namespace: bool = True) -> list[dict[str, Any]]:
    """Every object of the cluster, in the order to create them."""
    objects = [namespace_object(spec)] if with_namespace else []
    return objects + [token_secret(spec), config_map(spec), supervisor_service(spec), web_service(spec),
                      supervisor_statefulset(spec), worker_deployment(spec)]


# ---------------------------------------------------------------------- KubeDL's MarsJob
def _kubedl_replica(spec: ClusterSpec, role: str, replicas: int, restart: str, cpu: Any, mem: str,
                    probe: dict[str, Any]) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": KUBEDL_CONTAINER, "image": spec.image, "imagePullPolicy": spec.image_pull_policy,
        "command": ["python", "-m", f"mars.deploy.kubernetes.{role}"], "env": [_token_env()],
        "readinessProbe": probe, "resources": _resources(cpu, mem)}
    pod: dict[str, Any] = {"containers": [container]}
    if role == "web":  # the Host names of KubeDL's Service and ingress, which the web service must answer to
        container.update(args=["-f", f"{CONFIG_DIR}/config.yml"],
                         volumeMounts=[{"name": "config", "mountPath": CONFIG_DIR, "readOnly": True}])
        pod["volumes"] = [{"name": "config", "configMap": {"name": CONFIG_MAP}}]
    return {"replicas": replicas, "restartPolicy": restart,
            "template": {"metadata": {"labels": _labels(role)}, "spec": pod}}


def _memory_tuning(spec: ClusterSpec) -> dict[str, Any]:
    tuning: dict[str, Any] = {}
    if spec.spill_paths:
        tuning["spillDirs"] = list(spec.spill_paths)
    if spec.cache_mem is not None and spec.cache_mem.endswith("%"):
        tuning["workerCachePercentage"] = int(float(spec.cache_mem[:-1]))
    elif spec.cache_mem is not None:
        tuning["workerCacheSize"] = spec.cache_mem
    return tuning


def marsjob_manifest(spec: ClusterSpec, name: str = "mars", web_host: str | None = None) -> dict[str, Any]:
    """A KubeDL ``MarsJob``: a scheduler per supervisor, one web service, the workers, the memory tuning policy.

    KubeDL's CRD names the policy ``workerMemoryTuningPolicy`` (KubeDL's walk-through says
    ``memoryTuningPolicy``, a field the API server would drop); its controller sets the ports (11111) and
    ``MARS_CLUSTER_DETAIL``.
    """
    tcp = {"tcpSocket": {"port": KUBEDL_PORT}, "periodSeconds": 5}
    web = {"httpGet": {"path": "/api/health", "port": KUBEDL_PORT}, "periodSeconds": 5}
    worker = {"exec": {"command": ["python", "-m", "mars.deploy.kubernetes.probe"]}, "periodSeconds": 5,
              "timeoutSeconds": 10}
    body: dict[str, Any] = {"cleanPodPolicy": "None"}
    if web_host:
        body["webHost"] = web_host
    if _memory_tuning(spec):
        body["workerMemoryTuningPolicy"] = _memory_tuning(spec)
    body["marsReplicaSpecs"] = {
        "Scheduler": _kubedl_replica(spec, "scheduler", spec.supervisor_num, "Never", spec.supervisor_cpu,
                                     spec.supervisor_mem, tcp),
        "WebService": _kubedl_replica(spec, "web", 1, "Always", spec.supervisor_cpu, spec.supervisor_mem, web),
        "Worker": _kubedl_replica(spec, "worker", spec.worker_num, "ExitCode", spec.worker_cpu, spec.worker_mem,
                                  worker),
    }
    return {"apiVersion": KUBEDL_API_VERSION, "kind": "MarsJob",
            "metadata": {"name": name, "namespace": spec.namespace}, "spec": body}


def marsjob_objects(spec: ClusterSpec, name: str = "mars", web_host: str | None = None) -> list[dict[str, Any]]:
    """The ``MarsJob`` with the Secret of its token and the web service's config (the Host names it answers to)."""
    service = f"{name}-webservice-0"  # KubeDL's Service of the first web service
    hosts = [service, f"{service}.{spec.namespace}", f"{service}.{spec.namespace}.svc",
             f"{service}.{spec.namespace}.svc.cluster.local", *([web_host] if web_host else [])]
    return [token_secret(spec), config_map(spec, hosts), marsjob_manifest(spec, name, web_host)]


class _Dumper(yaml.SafeDumper):
    """YAML as people write it for kubectl: no anchors for repeated parts, files in ``|`` blocks."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(str, _str)


def manifests(image: str | None = None, namespace: str | None = None, supervisor_num: int = 1,
              worker_num: int = 2, worker_cpu: float | str = 2, worker_mem: str = "4Gi",
              worker_cache_mem: int | str | None = None, worker_spill_paths: Sequence[str] | None = None,
              web_port: int = DEFAULT_WEB_PORT, *, kind: str = "cluster", token: str | None = None,
              name: str = "mars", web_host: str | None = None, **options: Any) -> str:
    """The YAML (several documents) of a Mars cluster, for ``kubectl apply -f``; the arguments of ``new_cluster``.

    Parameters
    ----------
    kind
        ``"cluster"``: the objects ``new_cluster`` creates, with a ``Namespace`` (``namespace``, default
        ``mars``) and a ``Secret`` holding ``token`` (a new random one when None: the YAML then holds it).
        ``"marsjob"``: a KubeDL ``MarsJob`` named ``name`` (``spec.webHost``: ``web_host``), with the same
        Secret and a ConfigMap naming the Host names its web service answers to (KubeDL's Service, ``web_host``).
    options
        ``supervisor_cpu``, ``supervisor_mem``, ``web_service_type`` (``ClusterIP``, ``NodePort``,
        ``LoadBalancer``), ``web_allow_hosts``, ``image_pull_policy``.

    Examples
    --------
    >>> import yaml
    >>> docs = list(yaml.safe_load_all(manifests(namespace="demo", worker_num=3, token="t")))
    >>> [(d["kind"], d["metadata"]["name"]) for d in docs]  # doctest: +NORMALIZE_WHITESPACE
    [('Namespace', 'demo'), ('Secret', 'mars-token'), ('ConfigMap', 'mars-config'),
     ('Service', 'mars-supervisor'), ('Service', 'mars-web'), ('StatefulSet', 'mars-supervisor'),
     ('Deployment', 'mars-worker')]
    >>> job = list(yaml.safe_load_all(manifests(kind="marsjob")))[-1]
    >>> job["kind"], job["spec"]["marsReplicaSpecs"]["Worker"]["replicas"]
    ('MarsJob', 2)
    """
    if kind not in ("cluster", "marsjob"):
        raise ValueError(f"kind must be 'cluster' or 'marsjob', got {kind!r}")
    spec = ClusterSpec(namespace=namespace or "mars", image=image or DEFAULT_IMAGE, supervisor_num=supervisor_num,
                       worker_num=worker_num, worker_cpu=worker_cpu, worker_mem=worker_mem,
                       worker_cache_mem=worker_cache_mem, worker_spill_paths=worker_spill_paths, web_port=web_port,
                       **({"token": token} if token is not None else {}), **options)
    objects = marsjob_objects(spec, name, web_host) if kind == "marsjob" else cluster_objects(spec)
    return yaml.dump_all(objects, Dumper=_Dumper, sort_keys=False)
